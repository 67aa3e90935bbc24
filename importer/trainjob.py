"""Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org/v1alpha1) -> a spec v1.3 job on its runtime.

The spec names the runtime as the TrainJob does (spec.trainjob.runtime) and carries everything else
of the TrainJob: `trainer`'s image, command, args and env as the spec's own, numNodes as the one
role `node`'s replicas (or `numNodesFromRuntime` when the TrainJob leaves it to the runtime),
resourcesPerNode as that role's requests and limits as written, numProcPerNode, and initializer,
runtimePatches, suspend, managedBy (and Trainer v2.0/v2.1's labels, annotations,
podTemplateOverrides) as written; activeDeadlineSeconds and the Kueue queue label as the spec's.
`compile --target trainjob` writes the same TrainJob back (plus trainspec's own labels), whether or
not the runtime's definition is at hand.  The framework is `generic`: what the runtime's ML policy
injects is the runtime's, not the spec's.

With `--runtime FILE|DIR` the TrainJob's runtime must be among them (or in MANIFEST, or one Kubeflow
Trainer ships): what the spec then compiles to (jobset) and runs on is that runtime (compiler/runtimes.py).
"""

from __future__ import annotations

import copy

from trainspec.compiler.errors import SpecError, SpecErrors
from trainspec.compiler.kinds.trainjob import RUNTIMES, TRAINJOB

from .assemble import metadata
from .context import Context
from .pod import PodImporter, RoleDraft

API = TRAINJOB.api_version
RUNTIME_KINDS = tuple(k.kind for k in RUNTIMES)
FRAMEWORKS = {"torch": "pytorch", "xgboost": "xgboost", "jax": "jax"}
TRAINER_KEYS = ("image", "command", "args", "env", "numNodes", "resourcesPerNode", "numProcPerNode")
# TrainJob spec keys the spec carries as written (spec.trainjob), Trainer v2.0/v2.1's included
CARRIED = ("initializer", "runtimePatches", "suspend", "managedBy", "labels", "annotations", "podTemplateOverrides")
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
ROLE = "node"  # Trainer's name for the trainer Job and its container
NO_ACCELERATOR = "-"  # resources come as written (requests and limits apart), never as resources.gpu


def check_runtime_given(ctx: Context, ref: dict, docs: list, runtime_paths: list[str]) -> None:
    """With --runtime, the TrainJob's runtime is among the files given, in MANIFEST or one Trainer ships: the
    spec then compiles to jobset and runs with the same --runtime.  Bad runtime files fail at their line:column."""
    from trainspec.compiler.runtimes import how_to_give, load_runtimes, lookup, ref_of

    if not runtime_paths:
        return
    given = load_runtimes(runtime_paths)
    kind, name = ref_of(ref)
    here = [d.data for d in docs if d is not None and isinstance(d.data, dict) and d.data.get("kind") == kind
            and (d.data.get("metadata") or {}).get("name") == name]
    if lookup(given, ref) is None and not here:
        have = ", ".join(f"{r.kind} {r.name}" for r in given) or "none"
        raise ctx.fail(("spec", "runtimeRef"), f"runtime {kind} {name!r} is not in MANIFEST, the --runtime "
                       f"files ({have}) nor the ones Kubeflow Trainer ships", f"a {kind} named {name!r}",
                       how_to_give(kind, name))


def import_job(ctx: Context, data: dict, docs: list, runtime_paths: list[str] | None = None) -> dict:
    """The TrainJob as a spec v1.3 job on its runtime (spec.trainjob): lossless whether or not the runtime's
    definition is at hand, since the spec names the runtime as the TrainJob does."""
    ctx.patchable = False
    if data.get("apiVersion") != API:
        raise ctx.fail(("apiVersion",), f"{TRAINJOB.kind} {data.get('apiVersion')!r} is not supported", API)
    spec: dict = data["spec"] if isinstance(data.get("spec"), dict) else {}
    ref = spec.get("runtimeRef")
    if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
        raise ctx.fail(("spec", "runtimeRef"), f"a {TRAINJOB.kind} without runtimeRef.name", "runtimeRef: {name: ...}")
    check_runtime_given(ctx, ref, docs, list(runtime_paths or ()))
    for key in ref:
        if key not in ("name", "kind", "apiGroup"):
            ctx.lose(("spec", "runtimeRef", key), f"runtimeRef.{key} has no spec field")
    trainer: dict = spec["trainer"] if isinstance(spec.get("trainer"), dict) else {}
    role: dict = {}
    body: dict = {}
    on_runtime: dict = {"runtime": {k: v for k, v in ref.items() if k in ("name", "kind", "apiGroup")}}
    importer = PodImporter(ctx, "generic", ROLE, NO_ACCELERATOR)
    draft = RoleDraft(body={})
    container = {k: trainer[k] for k in ("image", "command", "args", "env") if k in trainer}
    importer.container(container, ("spec", "trainer"), "/spec/trainer", draft)
    body.update(draft.body)
    if "resourcesPerNode" in trainer:
        res = trainer["resourcesPerNode"]
        if not isinstance(res, dict) or set(res) - {"requests", "limits"}:
            ctx.lose(("spec", "trainer", "resourcesPerNode"), "resourcesPerNode has fields other than requests "
                     "and limits (claims), which the spec's resources do not have")
        else:  # as written (requests and limits apart): trainer.resourcesPerNode comes back the same
            role["resources"] = {k: dict(res[k]) for k in ("requests", "limits")
                                 if isinstance(res.get(k), dict) and res[k]}
    nodes = trainer.get("numNodes")
    if nodes is None:
        on_runtime["numNodesFromRuntime"] = True  # the runtime's mlPolicy.numNodes decides, as in the TrainJob
        nodes = 1
    if not isinstance(nodes, int) or nodes < 1:
        raise ctx.fail(("spec", "trainer", "numNodes"), "is not a positive integer", "numNodes >= 1")
    if trainer.get("numProcPerNode") is not None:
        nproc = trainer["numProcPerNode"]
        if isinstance(nproc, int):
            on_runtime["numProcPerNode"] = nproc
        else:  # "auto" and friends (IntOrString before Trainer v2.2.0)
            ctx.lose(("spec", "trainer", "numProcPerNode"), f"numProcPerNode {nproc!r} is not an integer "
                     "(Trainer v2.2.0 and later take only one)")
    for key in trainer:
        if key not in TRAINER_KEYS:
            ctx.lose(("spec", "trainer", key), f"trainer.{key} has no spec field")
    for key in CARRIED:
        if key in spec:
            on_runtime[key] = copy.deepcopy(spec[key])
    for key in spec:
        if key not in ("runtimeRef", "trainer", "activeDeadlineSeconds", *CARRIED):
            ctx.lose(("spec", key), f"{TRAINJOB.kind} {key} has no spec field")
    if "activeDeadlineSeconds" in spec:
        body["activeDeadlineSeconds"] = spec["activeDeadlineSeconds"]
    meta = dict(data.get("metadata") or {})
    labels = dict(meta.get("labels") or {})
    queue = labels.pop(QUEUE_LABEL, None)
    if isinstance(queue, str):
        body["scheduling"] = {"queue": queue}
        meta["labels"] = labels
    for doc in docs:
        d = doc.data if doc is not None else None
        if isinstance(d, dict) and d.get("kind") in RUNTIME_KINDS and (d.get("metadata") or {}).get("name") == \
                ref["name"]:
            ctx.comment(("spec", "trainjob", "runtime"), f"the {d['kind']} in the same file is not part of the "
                        "spec: apply it as it is, or give it with --runtime")
    out_spec: dict = {"framework": "generic", **body, "trainjob": on_runtime,
                      "roles": {ROLE: {"replicas": nodes, **role}}}
    return {"apiVersion": "trainspec/v1.3", "kind": "TrainingJob", "metadata": metadata(meta, ctx),
            "spec": out_spec}


__all__ = ["import_job", "SpecError", "SpecErrors"]
