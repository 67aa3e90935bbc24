"""Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org/v1alpha1) + the runtime it references -> spec.

The runtime is found, in order: a TrainingRuntime / ClusterTrainingRuntime of that name in the
same file, in `--runtime FILE`, or among Kubeflow's shipped runtimes (`crds/trainer/runtimes/`
of the reference data: $TRAINSPEC_REFERENCE, else ../shared/reference beside the repository).
Trainer builds one JobSet from the two: the runtime's `node` pod template with the TrainJob's
`trainer` (image, command, args, env, resourcesPerNode, numNodes, numProcPerNode) laid over it.
That merged pod is what import reads, as one role set per `mlPolicy`:

- torch:   rank 0 -> role master, the other numNodes-1 -> worker (framework pytorch);
- xgboost: the same, framework xgboost;  jax: numNodes workers (framework jax).
- mpi (a `launcher` + `node` runtime) and flux are refused: their launcher/node split has no
  lossless spec form yet.

The `trainjob` target compiles to a TrainJob with its own TrainingRuntime, so nothing is carried
as a patch here: every field import does not map is a loss (a --strict error).
"""

from __future__ import annotations

import copy
import os

from trainspec.compiler.errors import SpecError, SpecErrors
from trainspec.compiler.kinds.trainjob import TRAINJOB

from .assemble import assemble, metadata
from .context import Context
from .pod import PodImporter, RoleDraft

API = TRAINJOB.api_version
RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")
FRAMEWORKS = {"torch": "pytorch", "xgboost": "xgboost", "jax": "jax"}
TRAINER_KEYS = ("image", "command", "args", "env", "numNodes", "resourcesPerNode", "numProcPerNode")


def reference_runtimes() -> str | None:
    base = os.environ.get("TRAINSPEC_REFERENCE") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "..", "shared", "reference")
    path = os.path.join(base, "crds", "trainer", "runtimes")
    return path if os.path.isdir(path) else None


def find_runtime(ctx: Context, ref: dict, docs: list, runtime_file: str | None) -> dict:
    from trainspec.compiler.loader import from_yaml_text

    name, kind = ref.get("name"), ref.get("kind") or "ClusterTrainingRuntime"
    where = [("this file", [d for d in docs if d is not None])]
    if runtime_file:
        from .reading import read_manifest

        text, source = read_manifest(runtime_file)
        where.append((source, from_yaml_text(source, text)))
    shipped = reference_runtimes()
    if shipped and kind == "ClusterTrainingRuntime" and not runtime_file:
        for file in sorted(os.listdir(shipped)):
            if file.endswith(".yaml"):
                path = os.path.join(shipped, file)
                with open(path, encoding="utf-8") as handle:
                    where.append((path, from_yaml_text(path, handle.read())))
    for _, found in where:
        for doc in found:
            d = doc.data
            if isinstance(d, dict) and d.get("kind") == kind and (d.get("metadata") or {}).get("name") == name:
                return d
    looked = ", ".join(w for w, _ in where)
    raise ctx.fail(("spec", "runtimeRef"), f"runtime {kind} {name!r} not found (looked in {looked})",
                   f"a {kind} named {name!r}",
                   "give it with --runtime FILE (Kubeflow ships its runtimes in kubeflow/trainer "
                   "manifests/base/runtimes/)" if not runtime_file else "check the runtime's name and kind")


def import_job(ctx: Context, data: dict, docs: list, runtime_file: str | None) -> dict:
    if data.get("apiVersion") != API:
        raise ctx.fail(("apiVersion",), f"TrainJob {data.get('apiVersion')!r} is not supported", API)
    spec: dict = data["spec"] if isinstance(data.get("spec"), dict) else {}
    ref = spec.get("runtimeRef")
    if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
        raise ctx.fail(("spec", "runtimeRef"), "a TrainJob without runtimeRef.name", "runtimeRef: {name: ...}")
    runtime = find_runtime(ctx, ref, docs, runtime_file)
    rspec: dict = runtime["spec"] if isinstance(runtime.get("spec"), dict) else {}
    ml: dict = rspec["mlPolicy"] if isinstance(rspec.get("mlPolicy"), dict) else {}
    policy: str = next((k for k in ml if k != "numNodes"), "")
    if policy not in FRAMEWORKS:
        raise ctx.fail(("spec", "runtimeRef"), f"runtime {ref['name']!r} has mlPolicy {policy or 'none'}, which "
                       "import does not read", "a torch, xgboost or jax runtime",
                       "an mpi runtime's launcher + node split has no lossless spec form yet; write the spec by hand")
    framework = FRAMEWORKS[policy]
    # The trainjob target compiles a spec to a TrainJob and a TrainingRuntime of its own (named after the job,
    # its pods carrying trainspec's env): the TrainJob that comes back does not reference this runtime.
    ctx.lose(("spec", "runtimeRef"), f"the trainjob target writes its own TrainingRuntime {data['metadata']['name']!r} "
             f"instead of referencing {runtime.get('kind')} {ref['name']!r}; `trainspec migrate --to jobset` or "
             "another target runs the same pods")
    jobs = ((rspec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []
    node = next((j for j in jobs if isinstance(j, dict) and j.get("name") == "node"), None)
    if node is None or len(jobs) != 1:
        raise ctx.fail(("spec", "runtimeRef"), f"runtime {ref['name']!r} is not one `node` replicatedJob",
                       "replicatedJobs: [node]")
    trainer: dict = spec["trainer"] if isinstance(spec.get("trainer"), dict) else {}
    for key in spec:
        if key not in ("runtimeRef", "trainer"):
            ctx.lose(("spec", key), f"TrainJob {key} has no spec field")
    for key in trainer:
        if key not in TRAINER_KEYS:
            ctx.lose(("spec", "trainer", key), f"trainer.{key} has no spec field")
    pod = copy.deepcopy(((node.get("template") or {}).get("spec") or {}).get("template") or {})
    containers = (pod.get("spec") or {}).get("containers") or []
    main: dict | None = next((c for c in containers if isinstance(c, dict) and c.get("name") == "node"), None)
    if main is None:
        raise ctx.fail(("spec", "runtimeRef"), f"runtime {ref['name']!r} has no container named node",
                       "the trainer container `node`")
    for key in ("image", "command", "args"):
        if key in trainer:
            main[key] = trainer[key]
    if trainer.get("env"):
        main["env"] = list(main.get("env") or []) + list(trainer["env"])
    if trainer.get("resourcesPerNode"):
        main["resources"] = trainer["resourcesPerNode"]
    main["name"] = framework  # the trainjob target names it `node` itself
    nodes = trainer.get("numNodes", ml.get("numNodes", 1))
    if not isinstance(nodes, int) or nodes < 1:
        raise ctx.fail(("spec", "trainer", "numNodes"), "is not a positive integer", "numNodes >= 1")
    block: dict = {}
    nproc = trainer.get("numProcPerNode", (ml.get(policy) or {}).get("numProcPerNode"))
    if nproc is not None and framework == "pytorch":
        block["nprocPerNode"] = str(nproc)
    elif nproc is not None:
        ctx.lose(("spec", "trainer", "numProcPerNode"), f"numProcPerNode has no {framework} spec field")
    for key in (ml.get(policy) or {}):
        if key != "numProcPerNode":
            ctx.lose(("spec", "runtimeRef"), f"runtime mlPolicy.{policy}.{key} has no spec field")
    for key in rspec:
        if key not in ("mlPolicy", "template"):
            ctx.lose(("spec", "runtimeRef"), f"runtime spec.{key} has no spec field")

    roles = ["worker"] if framework == "jax" else (["master", "worker"] if nodes > 1 else ["master"])
    counts = {"worker": nodes} if framework == "jax" else {"master": 1, "worker": nodes - 1}
    drafts: dict[str, RoleDraft] = {}
    for role in roles:
        importer = PodImporter(ctx, framework, role, None)
        drafts[role] = importer.template(copy.deepcopy(pod), ("spec", "trainer"), "/spec/trainer")
    job: dict = {framework: block} if block else {}
    out_meta = metadata(data.get("metadata"), ctx)
    return {"apiVersion": "trainspec/v1", "kind": "TrainingJob", "metadata": out_meta,
            "spec": assemble(ctx, framework, data.get("metadata"), drafts, {r: "/spec/trainer" for r in roles}, job,
                             {r: None for r in roles}, {r: counts[r] for r in roles})}


__all__ = ["import_job", "find_runtime", "SpecError", "SpecErrors"]
