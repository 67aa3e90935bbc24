"""`apply`: the Kubeflow Trainer runtimes the job's TrainJobs name must be on the cluster.

A TrainJob whose runtime is missing is refused by Trainer's validating webhook (kubeflow/trainer
pkg/webhooks/trainjob_webhook.go: the runtime is looked up to validate the job) and, without the
webhook, never starts (the controller cannot build its JobSet).  A bare API server has neither, and a
`--dry-run=server` would pass; so the runtime is read (GET) first, and a missing one is named with
what to do.  A runtime applied in the same run (a TrainingRuntime in the file) counts as present.  The copies of
Kubeflow's shipped runtimes trainspec expands offline (compiler/runtimes.py) do not: they are not on the
cluster; a JobSet or k8s output expanded from one carries no runtimeRef and needs none.
"""

from __future__ import annotations

from trainspec.compiler.kinds.trainjob import RUNTIMES, TRAINING_RUNTIME, TRAINJOB
from trainspec.compiler.runtimes import API_GROUP, KINDS, SHIPPED_VERSION, ref_of, shipped_names

from . import kinds
from .errors import ApiFailure, ClusterError, describe

PLURALS = {k.kind: k.plural for k in RUNTIMES}


def missing_runtimes(cluster, objects: list[dict]) -> list[str]:
    """One line per TrainJob of `objects` whose runtime the cluster does not have."""
    applied = {(o.get("kind"), (o.get("metadata") or {}).get("namespace") if o.get("kind") == TRAINING_RUNTIME.kind
                else None, (o.get("metadata") or {}).get("name")) for o in objects if o.get("kind") in KINDS}
    out = []
    for obj in objects:
        if obj.get("kind") != TRAINJOB.kind:
            continue
        ref = (obj.get("spec") or {}).get("runtimeRef") or {}
        kind, name = ref_of(ref)
        if kind not in PLURALS or not ref.get("name"):
            continue  # the server's schema refuses it
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or cluster.namespace if kind == TRAINING_RUNTIME.kind else None
        if (kind, namespace, name) in applied:
            continue
        api_version = f"{ref.get('apiGroup') or API_GROUP}/{kinds.group_version(obj)}"
        where = f" in namespace {namespace}" if namespace else ""
        try:
            cluster.request("GET", kinds.resource_path(api_version, PLURALS[kind], namespace, name))
        except ApiFailure as exc:
            if exc.status.code == 404:
                out.append(f"{TRAINJOB.kind} {meta.get('name')} runs on {kind} {name!r}, which the cluster does not "
                           f"have{where}: install the runtime ({_install(kind, name)}), or name one it has "
                           "(spec.trainjob.runtime)")
            elif exc.status.code != 403:  # may not read runtimes: the admission will tell
                raise ClusterError(describe(exc.status, f"{kind} {name}")) from None
    return out


def _install(kind: str, name: str) -> str:
    """How to install the runtime: Kubeflow Trainer's own (the definition trainspec expands offline is no
    install), else the user's file."""
    if kind != TRAINING_RUNTIME.kind and name in shipped_names():
        return ("Kubeflow Trainer's runtimes: `kubectl apply --server-side -k "
                f"\"https://github.com/kubeflow/trainer.git/manifests/overlays/runtimes?ref={SHIPPED_VERSION}\"`")
    return "`kubectl apply -f runtime.yaml`; Kubeflow ships its own in kubeflow/trainer manifests/base/runtimes/"
