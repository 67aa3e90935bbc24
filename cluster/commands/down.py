"""`trainspec down --cluster`: delete a job's objects, pods first (foreground propagation)."""

from __future__ import annotations

import sys
import time

from ..errors import ClusterError
from .live import POLL_SECONDS, Served, connect, delete_object, job_pods, live_objects, object_name


def cmd_down(args) -> int:
    from .. import plan as P

    cluster = connect(args)
    served = Served(cluster)
    live = P.delete_order(live_objects(cluster, served, args.job, [cluster.namespace]), args.job)
    if not live:
        print(f"nothing to remove for {args.job} in namespace {cluster.namespace}")
        return 0
    # Foreground while the job has pods: they stop before the objects they run under and mount go. With no
    # pod nothing depends on the objects, and a foreground deletion would only wait for the garbage
    # collector to drop its finalizer (forever on a server without kube-controller-manager).
    try:
        policy = "Foreground" if job_pods(cluster, args.job) else "Background"
    except ClusterError:  # may not list pods (RBAC): what the issue asks, pods first
        policy = "Foreground"
    for obj in live:
        delete_object(cluster, served, obj, False, policy)
        print(f"{object_name(obj)}: deleted ({policy.lower()})")
    if not args.wait:
        return 0
    deadline = time.monotonic() + args.timeout
    while True:
        left = [o for o in live_objects(cluster, served, args.job, [cluster.namespace])] + job_pods(cluster, args.job)
        if not left:
            print(f"{args.job}: gone")
            return 0
        if time.monotonic() > deadline:
            print(f"trainspec: error: {args.job}: {len(left)} object(s) and pod(s) still there after "
                  f"{args.timeout:g} s (finalizers? `kubectl get all -l trainspec.dev/job={args.job}`)",
                  file=sys.stderr)
            return 1
        time.sleep(POLL_SECONDS)
