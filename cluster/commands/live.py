"""The cluster verbs' shared ground: connecting, what the server serves, a job's live objects and pods, deleting."""

from __future__ import annotations

import time

from .. import kinds
from ..errors import ApiFailure, ClusterError, describe

POLL_SECONDS = 2.0

def connect(args):
    from ..client import Cluster

    return Cluster(args.kubeconfig, args.context, args.namespace)


def object_name(obj: dict) -> str:
    from ..plan import key

    return key(obj).show()


class Served:
    """Discovery, asked once per group/version: kind -> (plural, namespaced), or None when not served."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.cache: dict[str, dict[str, tuple[str, bool]] | None] = {}

    def kinds(self, api_version: str) -> dict[str, tuple[str, bool]] | None:
        if api_version not in self.cache:
            from ..discovery import served_kinds

            try:
                self.cache[api_version] = served_kinds(self.cluster.request("GET", kinds.base_path(api_version)))
            except ApiFailure as exc:
                if exc.status.code != 404:
                    raise ClusterError(describe(exc.status, f"discovery of {api_version}")) from None
                self.cache[api_version] = None
        return self.cache[api_version]

    def plural(self, api_version: str, kind: str) -> tuple[str, bool] | None:
        return (self.kinds(api_version) or {}).get(kind)


def propagation(cluster, job: str) -> str:
    """Foreground while the job has pods (they stop before what they run under goes); with none, Background: a
    foreground deletion would wait for the garbage collector's finalizer, forever on a server without
    kube-controller-manager."""
    try:
        return "Foreground" if job_pods(cluster, job) else "Background"
    except ClusterError:  # may not list pods (RBAC): pods first
        return "Foreground"


def wait_gone(cluster, served, objects: list[dict], timeout: float) -> None:
    """Until every object is gone (as kubectl apply --force waits before it creates again)."""
    deadline = time.monotonic() + timeout
    left = list(objects)
    while left:
        still = []
        for obj in left:
            meta = obj["metadata"]
            plural, is_namespaced = served.plural(str(obj["apiVersion"]), str(obj["kind"])) or ("", True)
            try:
                cluster.request("GET", kinds.resource_path(str(obj["apiVersion"]), plural,
                                                           meta.get("namespace") if is_namespaced else None,
                                                           meta["name"]))
                still.append(obj)
            except ApiFailure as exc:
                if exc.status.code != 404:
                    raise ClusterError(describe(exc.status, object_name(obj))) from None
        left = still
        if left and time.monotonic() > deadline:
            raise ClusterError(f"{', '.join(object_name(o) for o in left)}: still there {timeout:g} s after its "
                               "deletion (finalizers?); nothing was re-created: run apply --force again when it "
                               "is gone")
        if left:
            time.sleep(0.5)


def live_objects(cluster, served: Served, job: str, namespaces: list[str]) -> list[dict]:
    """Everything on the cluster labelled with the job, in the kinds trainspec writes that are served."""
    from ..plan import job_selector

    out = []
    for kind in kinds.OWNED_KINDS:
        found = served.plural(kind.api_version, kind.kind)
        if found is None:
            continue
        for ns in (namespaces or [""]) if found[1] else [""]:  # a cluster-scoped kind is listed once
            path = kinds.resource_path(kind.api_version, found[0], ns if found[1] else None)
            try:
                listing = cluster.request("GET", path, {"labelSelector": job_selector(job)})
            except ApiFailure as exc:
                raise ClusterError(describe(exc.status, f"listing {kind.kind} in {ns}")) from None
            for item in (listing or {}).get("items") or ():
                item.setdefault("apiVersion", kind.api_version)
                item.setdefault("kind", kind.kind)
                out.append(item)
    return out


def delete_object(cluster, served: Served, obj: dict, dry: bool, policy: str) -> None:
    """DELETE with a propagation policy: Foreground keeps the object (finalizer foregroundDeletion) until the
    garbage collector has removed its dependents; Background removes it now and its dependents after."""
    meta = obj["metadata"]
    plural, is_namespaced = served.plural(str(obj["apiVersion"]), str(obj["kind"])) or ("", True)
    path = kinds.resource_path(str(obj["apiVersion"]), plural, meta.get("namespace") if is_namespaced else None,
                               meta["name"])
    body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": policy}
    try:
        cluster.request("DELETE", path, {"dryRun": "All" if dry else None}, body)
    except ApiFailure as exc:
        if exc.status.code != 404:  # gone already: what deleting wanted
            raise ClusterError(describe(exc.status, f"deleting {object_name(obj)}")) from None


def job_pods(cluster, job: str) -> list[dict]:
    from ..plan import JOB_LABEL

    try:
        listing = cluster.request("GET", f"/api/v1/namespaces/{cluster.namespace}/pods",
                                  {"labelSelector": f"{JOB_LABEL}={job}"})
    except ApiFailure as exc:
        raise ClusterError(describe(exc.status, f"listing pods in {cluster.namespace}")) from None
    return list((listing or {}).get("items") or ())
