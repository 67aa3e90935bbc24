"""`trainspec ps | logs --cluster`: a job's objects and pods on the cluster, as a table or as logs."""

from __future__ import annotations

import sys
import time
from typing import Any

from trainspec.compiler.errors import UsageError
from trainspec.compiler.kinds import trainjob

from .. import kinds
from ..errors import ApiFailure, ClusterError, describe
from .live import POLL_SECONDS, Served, connect, job_pods


def _job_objects(cluster, served: Served, job: str | None, missed: list[str] | None = None) -> list[dict]:
    """The job objects (every job's with no `job`). A kind whose list fails (still, after the retries) is an
    error, or with `missed` a line there while the other kinds are shown."""
    from ..plan import JOB_LABEL, MANAGED_BY, MANAGER

    selector = f"{JOB_LABEL}={job},{MANAGED_BY}={MANAGER}" if job else f"{MANAGED_BY}={MANAGER},{JOB_LABEL}"
    out = []
    forbidden: list[tuple[str, Any]] = []  # kinds RBAC hides: fine while the job is found in another kind
    for kind in kinds.JOB_KINDS:
        found = served.plural(kind.api_version, kind.kind)
        if found is None:
            continue
        path = kinds.resource_path(kind.api_version, found[0], cluster.namespace)
        try:
            listing = cluster.request("GET", path, {"labelSelector": selector})
        except ApiFailure as exc:
            if exc.status.code != 403:
                what = describe(exc.status, f"listing {kind.kind}.{kinds.group_of(kind.api_version) or 'core'} "
                                            f"in {cluster.namespace}")
                if missed is None:
                    raise ClusterError(what) from None
                missed.append(what)
                continue
            forbidden.append((kind.kind, exc.status))
            continue
        for item in (listing or {}).get("items") or ():
            item.setdefault("apiVersion", kind.api_version)
            item.setdefault("kind", kind.kind)
            if not (item.get("metadata") or {}).get("ownerReferences"):  # JobSet's child Jobs are its own
                out.append(item)
    if not out and forbidden:
        names = ", ".join(dict.fromkeys(k for k, _ in forbidden))
        raise ClusterError(describe(forbidden[0][1], f"listing {names} in {cluster.namespace}"))
    if job:
        out += _runtimes(cluster, served, out)
    return out


def _runtimes(cluster, served: Served, objects: list[dict]) -> list[dict]:
    """The runtimes the job's TrainJobs name: a TrainJob's replicas (its nodes) are written there."""
    found = []
    for obj in objects:
        if obj.get("kind") != trainjob.TRAINJOB.kind:
            continue
        ref = (obj.get("spec") or {}).get("runtimeRef") or {}
        kind = str(ref.get("kind") or trainjob.CLUSTER_TRAINING_RUNTIME.kind)  # Trainer v2's default
        api_version = f"{ref.get('apiGroup') or trainjob.GROUP}/{kinds.group_version(obj)}"
        plural = served.plural(api_version, kind)
        if plural is None or not ref.get("name"):
            continue
        namespace = (obj.get("metadata") or {}).get("namespace") or cluster.namespace
        try:
            runtime = cluster.request("GET", kinds.resource_path(api_version, plural[0],
                                                                 namespace if plural[1] else None, ref["name"]))
        except ApiFailure:
            continue  # gone or hidden: the table shows what the TrainJob and its pods say
        if isinstance(runtime, dict):
            runtime.setdefault("apiVersion", api_version)
            runtime.setdefault("kind", kind)
            found.append(runtime)
    return found


def _no_job(cluster, job: str) -> ClusterError:
    return ClusterError(f"no job {job!r} in namespace {cluster.namespace} "
                        f"({cluster.where or cluster.host}); `trainspec ps --cluster` lists them")


def cmd_ps(args) -> int:
    import json

    from ..status import age_text, as_json, job_phase, job_state, table

    cluster = connect(args)
    served = Served(cluster)
    while True:
        missed: list[str] = []  # kinds that could not be listed: the table shows the others, and names these
        if args.job:
            objects = _job_objects(cluster, served, args.job, missed)
            if not objects and missed:
                raise ClusterError("; ".join(missed))
            if not objects:
                raise _no_job(cluster, args.job)
            state = job_state(args.job, objects, job_pods(cluster, args.job), time.time())
            text = json.dumps(as_json(state), indent=2) + "\n" if args.format == "json" else table(state)
        else:
            rows = []
            for obj in _job_objects(cluster, served, None, missed):
                meta = obj.get("metadata") or {}
                from ..status import parse_time

                created = parse_time(meta.get("creationTimestamp"))
                rows.append({"job": (meta.get("labels") or {}).get("trainspec.dev/job", ""),
                             "kind": obj.get("kind"), "name": meta.get("name"), "phase": job_phase(obj)[0],
                             "age_seconds": None if created is None else max(0.0, time.time() - created)})
            rows.sort(key=lambda r: (r["job"], r["kind"], r["name"]))
            if args.format == "json":
                text = json.dumps(rows, indent=2) + "\n"
            else:
                text = f"{'JOB':<24} {'KIND':<16} {'NAME':<32} {'PHASE':<12} AGE\n" + "".join(
                    f"{r['job']:<24} {r['kind']:<16} {r['name']:<32} {r['phase']:<12} {age_text(r['age_seconds'])}\n"
                    for r in rows)
                if not rows:
                    text = f"no trainspec jobs in namespace {cluster.namespace}\n"
        if args.watch and sys.stdout.isatty():
            sys.stdout.write("\x1b[H\x1b[2J")
        sys.stdout.write(text)
        sys.stdout.flush()
        for line in missed:
            print(f"trainspec: error: {line} (not in the table above)", file=sys.stderr)
        if not args.watch:
            return 2 if missed else 0
        try:
            time.sleep(POLL_SECONDS)
        except KeyboardInterrupt:
            return 0


def cmd_logs(args) -> int:
    import threading

    from trainspec.emulator.console.table import Console

    from ..status import main_container, pod_identity

    if args.tail is not None and args.tail < 0:
        raise UsageError("--tail must be 0 or more lines")
    cluster = connect(args)
    served = Served(cluster)
    workloads = _job_objects(cluster, served, args.job)
    pods = job_pods(cluster, args.job)
    if not workloads and not pods:
        raise _no_job(cluster, args.job)
    chosen: dict[str, dict] = {}
    for pod in sorted(pods, key=lambda p: (p.get("metadata") or {}).get("creationTimestamp") or ""):
        who = pod_identity(pod, workloads)
        if who is not None:
            chosen[f"{who[0]}-{who[1]}"] = pod  # the newest pod of each replica
    names = sorted(chosen, key=lambda n: (n.rsplit("-", 1)[0], int(n.rsplit("-", 1)[1])))
    if args.replica:
        names = [n for n in names if n == args.replica or n.rsplit("-", 1)[0] == args.replica]
        if not names:
            raise UsageError(f"job {args.job} has no replica {args.replica!r} with a pod "
                             f"(replicas: {', '.join(sorted(chosen)) or 'none yet'})")
    if not names:  # the job is there, its pods are not (yet: pending admission, or no controller runs)
        print(f"trainspec: {args.job}: no pods yet, so no logs (`trainspec ps --cluster {args.job}` shows why)",
              file=sys.stderr)
        return 0
    console = Console(names, sys.stdout, None if args.colour == "auto" else args.colour, live=False)
    single = len(names) == 1 and bool(args.replica)

    def show(name: str) -> None:
        pod = chosen[name]
        container = main_container(pod)
        path = f"/api/v1/namespaces/{cluster.namespace}/pods/{pod['metadata']['name']}/log"
        query = {"container": container, "tailLines": args.tail, "follow": "true" if args.follow else None}
        try:
            for raw in cluster.stream(path, query):
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if single:
                    print(line, flush=True)
                else:
                    console.log(name, line)
        except ApiFailure as exc:
            print(f"trainspec: {name}: {exc.status.message or describe(exc.status, 'logs')}", file=sys.stderr)

    if not args.follow:
        for name in names:
            show(name)
        return 0
    threads = [threading.Thread(target=show, args=(n,), daemon=True) for n in names]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    except KeyboardInterrupt:
        return 0
    return 0
