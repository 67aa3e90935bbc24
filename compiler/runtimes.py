"""Kubeflow Trainer v2 runtimes (TrainingRuntime, ClusterTrainingRuntime): read, found by a TrainJob's
runtimeRef, and expanded with a TrainJob into the JobSet the Trainer controller creates.

One place for this rule, used by the compile path (`--runtime` on a spec v1.3 job on a runtime, the
jobset target), the emulator (a TrainJob, or such a spec, run on its runtime) and the importer.  Plain
data in and out (no Kubernetes client): the compile path imports it.

Sources (kubeflow/trainer, tree of 2026-08-21; shared/reference/CONVENTIONS-V2.md §3):
  * the JobSet `<tj>` is the runtime's `spec.template` (labels and annotations merged with
    runtimePatches' template metadata) [pkg/runtime/framework/plugins/jobset/{jobset.go,builder.go},
    pkg/runtime/core/trainingruntime.go]; the replicatedJob whose Job template is labelled
    `trainer.kubeflow.org/trainjob-ancestor-step: trainer` gets `replicas: 1`, and in its container `node`
    the TrainJob's `trainer.image`, `command`, `args` replace the runtime's, `resourcesPerNode` is merged
    in, `trainer.env` upserted (a name already there replaced in place, new names appended:
    pkg/apply.UpsertEnvVars);
  * the node count (`trainer.numNodes`, else `mlPolicy.numNodes`, else 1) is that Job's parallelism =
    completions [plugins/torch/torch.go EnforceMLPolicy: trainerPS.Count]; with `mlPolicy.mpi` it is the
    `node` Job's (minus one with runLauncherAsNode) [plugins/mpi/mpi.go];
  * runtimePatches (Trainer >= v2.2.0) and podTemplateOverrides (v2.0/v2.1) are laid over the template
    before the ML policy runs: mappings merge, lists of named items (replicatedJobs, containers, env,
    volumes, volumeMounts) merge by name, other values replace [plugins/jobset/builder.go
    RuntimePatches/PodTemplateOverrides, as server-side apply merges them];
  * torch: PET_NNODES, PET_NPROC_PER_NODE (trainer.numProcPerNode, else "auto", which with no GPU in
    resourcesPerNode is max(1, CPUs per node: requests, else limits)), PET_NODE_RANK (the Job completion
    index), PET_MASTER_ADDR `<tj>-node-0-0.<tj>`, PET_MASTER_PORT 29500, after the TrainJob env; container
    port 29500 [plugins/torch/torch.go EnforceMLPolicy, getNumCPUPerNode];
  * mpi: Secret `<tj>-mpi-ssh-auth` at sshAuthMountPath in the `node` containers of the node and launcher
    Jobs; ConfigMap `<tj>-mpi-hostfile` at /etc/mpi/hostfile on the launcher, one
    `<tj>-node-0-<i>.<tj> slots=<numProcPerNode>` line per node; the launcher's OMPI_MCA_* before the
    TrainJob env [plugins/mpi/mpi.go];
  * jax: JAX_NUM_PROCESSES, JAX_PROCESS_ID (completion index), JAX_COORDINATOR_ADDRESS
    `<tj>-node-0-0.<tj>:29500`, before the TrainJob env [plugins/jax/jax.go];
  * xgboost: DMLC_TRACKER_URI, DMLC_TRACKER_PORT 29500, DMLC_TASK_ID, DMLC_NUM_WORKER (nodes x GPUs per
    node, or nodes) [plugins/xgboost/xgboost.go];
  * DeepSpeed runtimes are MPI runtimes (`mlPolicy.mpi`, mpiImplementation DeepSpeed) and expand as such.
Not reproduced: the Flux plugin, podGroupPolicy (a scheduler's PodGroup), torchtune's command rewriting.

Where a runtime's definition comes from (`lookup`, the one order every command follows): the `--runtime`
files first; then, for a ClusterTrainingRuntime only, the one of that name Kubeflow Trainer ships
(SHIPPED_VERSION's manifests/base/runtimes/, bundled in shipped_runtimes/, see its README), which the
command says it used (`shipped_note`): the cluster's own copy may differ.  A namespaced TrainingRuntime
is the user's own and is never taken from there.
"""

from __future__ import annotations

import copy as _copy
import functools
import os
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from .errors import SpecError, SpecErrors, UsageError, dotted
from .kinds.jobset import JOBSET
from .kinds.trainjob import ANCESTOR_LABEL, CLUSTER_TRAINING_RUNTIME, GROUP, TRAINING_RUNTIME
from .loader import Document

API_GROUP = GROUP
KINDS = (CLUSTER_TRAINING_RUNTIME.kind, TRAINING_RUNTIME.kind)
ANCESTOR = ANCESTOR_LABEL
NODE = "node"  # Trainer's name for the trainer's Job and container
PORT = 29500  # constants.ContainerTrainerPort
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
GPU = "nvidia.com/gpu"
# what runtimePatches / podTemplateOverrides merge by `name` (server-side apply's list-map keys)
NAMED_LISTS = frozenset({"replicatedJobs", "containers", "initContainers", "env", "volumes", "volumeMounts",
                         "ports", "targetJobs", "imagePullSecrets"})
SHIPPED_VERSION = "v2.3.0"  # the Kubeflow Trainer release shipped_runtimes/ was taken from
SHIPPED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shipped_runtimes")


class Runtime(NamedTuple):
    kind: str
    name: str
    data: dict
    document: Document  # where it was written: errors about it are at its line:column
    shipped: str = ""  # the Trainer release whose shipped definition this is ("": given with --runtime)


class RuntimeProblem(Exception):
    """The runtime (or TrainJob) cannot be expanded: `path` under the value `node`."""

    def __init__(self, node: Any, path: tuple, message: str, expected: str = ""):
        self.node, self.path, self.message, self.expected = node, path, message, expected
        super().__init__(message)


class Expanded(NamedTuple):
    jobset: dict
    objects: list[dict]  # what the controller creates beside it (MPI's hostfile ConfigMap)
    mpi: bool
    ssh_secret: str | None  # the Secret the MPI plugin creates (its keys are made at run time)


def how_to_give(kind: str, name: str) -> str:
    """How a user gives a runtime's definition: one wording for every command."""
    return (f"give it with --runtime FILE|DIR (`kubectl get {kind.lower()} {name} -o yaml > runtime.yaml`); "
            f"without one, a ClusterTrainingRuntime Kubeflow Trainer {SHIPPED_VERSION} ships is known by name: "
            f"{', '.join(shipped_names())}")


def shipped_names() -> tuple[str, ...]:
    """The names of the ClusterTrainingRuntimes in shipped_runtimes/ (`torch_distributed.yaml` holds
    `torch-distributed`; tests/compiler/test_shipped_runtimes.py checks every file says so)."""
    return tuple(sorted(f[:-len(".yaml")].replace("_", "-") for f in os.listdir(SHIPPED_DIR) if f.endswith(".yaml")))


@functools.cache
def shipped(kind: str, name: str) -> Runtime | None:
    """The ClusterTrainingRuntime `name` as Kubeflow Trainer SHIPPED_VERSION ships it, or None (another
    name, or a namespaced TrainingRuntime: a cluster's own)."""
    if kind != CLUSTER_TRAINING_RUNTIME.kind or name not in shipped_names():
        return None
    from .loader import load_file

    (doc,) = load_file(os.path.join(SHIPPED_DIR, name.replace("-", "_") + ".yaml"))
    assert isinstance(doc.data, dict)
    return Runtime(kind, name, doc.data, doc, SHIPPED_VERSION)


def lookup(runtimes: Iterable[Runtime], runtime_ref: dict) -> Runtime | None:
    """The runtime a runtimeRef names: among `runtimes` (given with --runtime), else the one Trainer ships
    by that name (`Runtime.shipped` says so: the caller notes it with `shipped_note`), else None."""
    return find(runtimes, runtime_ref) or shipped(*ref_of(runtime_ref))


def shipped_note(runtime: Runtime) -> str:
    """What a command says when it used a shipped definition: the cluster's own may differ."""
    return (f"{runtime.kind} {runtime.name!r}: Kubeflow Trainer {runtime.shipped}'s shipped definition (no "
            "--runtime names it); give your cluster's with --runtime FILE|DIR if it differs")


def ref_of(runtime_ref: dict) -> tuple[str, str]:
    """(kind, name) of a runtimeRef; Trainer's default kind is ClusterTrainingRuntime."""
    return str(runtime_ref.get("kind") or CLUSTER_TRAINING_RUNTIME.kind), str(runtime_ref.get("name"))


def _at(doc: Document, path: tuple, message: str, expected: str = "", hint: str = "") -> SpecError:
    line, column = doc.positions.get(path) or doc.key_positions.get(path) or (1, 1)
    return SpecError(doc.file, line, column, dotted(path), message, expected, hint)


def load_runtimes(paths: Iterable[str]) -> tuple[Runtime, ...]:
    """The runtimes in each FILE (every document a TrainingRuntime or ClusterTrainingRuntime; other
    kinds are skipped) or DIR (its .yaml/.yml/.json files, sorted), checked for what expansion reads."""
    out: list[Runtime] = []
    errors: list[SpecError] = []
    for path in paths:
        if os.path.isdir(path):
            files = [os.path.join(path, f) for f in sorted(os.listdir(path))
                     if f.endswith((".yaml", ".yml", ".json"))]
            if not files:
                raise UsageError("no .yaml/.yml/.json file in this folder", where=path, path="--runtime",
                                 hint="name a runtime's file, or a folder of them")
        elif os.path.isfile(path):
            files = [path]
        else:
            raise UsageError("no such file or folder", where=path, path="--runtime", hint="check the path")
        from .loader import load_file

        found = 0
        for file in files:
            for doc in load_file(file):
                d = doc.data
                if not isinstance(d, dict) or d.get("kind") not in KINDS:
                    continue
                found += 1
                errors += check_runtime(doc)
                out.append(Runtime(str(d["kind"]), str((d.get("metadata") or {}).get("name")), d, doc))
        if not found and os.path.isfile(path):
            errors.append(SpecError(path, 1, 1, "kind", "holds no TrainingRuntime or ClusterTrainingRuntime",
                                    f"kind: {CLUSTER_TRAINING_RUNTIME.kind} or {TRAINING_RUNTIME.kind} "
                                    f"({TRAINING_RUNTIME.api_version})",
                                    "`kubectl get clustertrainingruntime NAME -o yaml > runtime.yaml`"))
    if errors:
        raise SpecErrors(errors)
    return tuple(out)


def check_runtime(doc: Document) -> list[SpecError]:
    """What expansion reads, of the right shape, at its line:column."""
    d = doc.data
    assert isinstance(d, dict)
    if not str(d.get("apiVersion") or "").startswith(API_GROUP + "/"):
        return [_at(doc, ("apiVersion",), f"{d.get('apiVersion')!r} is not Kubeflow Trainer's",
                    TRAINING_RUNTIME.api_version)]
    meta = d.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        return [_at(doc, ("metadata",), "a runtime without metadata.name", "metadata: {name: ...}")]
    spec = d.get("spec")
    if not isinstance(spec, dict):
        return [_at(doc, ("spec",), "is not a mapping", "spec: {mlPolicy, template}")]
    if not isinstance(spec.get("mlPolicy", {}), dict):
        return [_at(doc, ("spec", "mlPolicy"), "is not a mapping", "mlPolicy: {numNodes, torch|mpi|jax|xgboost}")]
    rjobs = ((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") \
        if isinstance(spec.get("template"), dict) and isinstance(spec["template"].get("spec"), dict) else None
    base = ("spec", "template", "spec", "replicatedJobs")
    if not isinstance(rjobs, list) or not rjobs:
        return [_at(doc, base if rjobs is not None else ("spec",), "no JobSet template with replicatedJobs",
                    "spec.template.spec.replicatedJobs: a list of the JobSet's replicatedJobs")]
    errors = []
    trainers = 0
    for i, rjob in enumerate(rjobs):
        pod = _pod_spec(rjob)
        if pod is None:
            errors.append(_at(doc, base + (i,), "a replicatedJob without template.spec.template.spec",
                              "name and a Job template with a pod template"))
            continue
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if isinstance(labels, dict) and labels.get(ANCESTOR) == "trainer":
            trainers += 1
            if not any(isinstance(c, dict) and c.get("name") == NODE for c in pod.get("containers") or []):
                errors.append(_at(doc, base + (i, "template", "spec", "template", "spec", "containers"),
                                  "the trainer's Job has no container named node",
                                  "a container `node` (Trainer overrides it with the TrainJob's trainer)"))
    if not trainers and not errors:
        errors.append(_at(doc, base, f"no replicatedJob's Job template is labelled {ANCESTOR}: trainer",
                          f"metadata.labels[{ANCESTOR}]: trainer on the trainer's Job template"))
    return errors


def find(runtimes: Iterable[Runtime], runtime_ref: dict) -> Runtime | None:
    kind, name = ref_of(runtime_ref)
    return next((r for r in runtimes if r.kind == kind and r.name == name), None)


def _pod_spec(rjob: Any) -> dict | None:
    try:
        pod = rjob["template"]["spec"]["template"]["spec"]
    except (KeyError, TypeError):
        return None
    return pod if isinstance(pod, dict) else None


def merge(base: Any, patch: Any) -> Any:
    """`patch` laid over `base` as server-side apply merges a runtime patch: mappings key by key, lists
    of named items (NAMED_LISTS) item by item by name, anything else replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for key, value in patch.items():
            if key in NAMED_LISTS and isinstance(out.get(key), list) and isinstance(value, list):
                out[key] = _merge_named(out[key], value)
            else:
                out[key] = merge(out.get(key), value) if key in out else _copy.deepcopy(value)
        return out
    return _copy.deepcopy(patch)


def _merge_named(base: list, patch: list) -> list:
    out = list(base)
    for item in patch:
        name = item.get("name") if isinstance(item, dict) else None
        at = next((i for i, old in enumerate(out) if isinstance(old, dict) and name is not None
                   and old.get("name") == name), None)
        if at is None:
            out.append(_copy.deepcopy(item))
        else:
            out[at] = merge(out[at], item)
    return out


def _patched(template: dict, tj_spec: dict) -> dict:
    """The runtime's JobSet template with the TrainJob's runtimePatches (v2.2+), in order, and
    podTemplateOverrides (v2.0/v2.1: `targetJobs` name the replicatedJobs whose pods they change)."""
    for patch in tj_spec.get("runtimePatches") or []:
        over = ((patch or {}).get("trainingRuntimeSpec") or {}).get("template")
        if isinstance(over, dict):
            template = merge(template, over)
    for override in tj_spec.get("podTemplateOverrides") or []:
        targets = {t.get("name") for t in override.get("targetJobs") or [] if isinstance(t, dict)}
        for rjob in (template.get("spec") or {}).get("replicatedJobs") or []:
            if rjob.get("name") in targets:
                pod_template = rjob["template"]["spec"]["template"]
                if override.get("metadata"):
                    pod_template["metadata"] = merge(pod_template.get("metadata") or {}, override["metadata"])
                if override.get("spec"):
                    pod_template["spec"] = merge(pod_template.get("spec") or {}, override["spec"])
    return template


def upsert(container: dict, pairs: Iterable[dict], copy: Callable[[Any], Any] = _copy.deepcopy) -> None:
    """pkg/apply.UpsertEnvVars: a name already there is replaced in place, a new one appended."""
    env = container.setdefault("env", [])
    for entry in pairs:
        for i, old in enumerate(env):
            if old.get("name") == entry.get("name"):
                env[i] = copy(entry)
                break
        else:
            env.append(copy(entry))


def _node_container(rjob: dict) -> dict | None:
    pod = _pod_spec(rjob) or {}
    return next((c for c in pod.get("containers") or [] if c.get("name") == NODE), None)


def _mount(rjob: dict, volume: dict, path: str) -> None:
    pod, c = _pod_spec(rjob), _node_container(rjob)
    if pod is None or c is None:
        return
    pod.setdefault("volumes", []).append(volume)
    c.setdefault("volumeMounts", []).append({"name": volume["name"], "mountPath": path})


def _quantity_int(value: Any) -> int:
    """A CPU or GPU count as Kubernetes' Quantity.Value() gives it (rounded up): "500m" -> 1, "2" -> 2."""
    text = str(value)
    if text.endswith("m"):
        return -(-int(text[:-1]) // 1000)
    return int(float(text) + 0.999999)


def _per_node(resources: dict, name: str) -> int:
    """runtime.GetNumGPUPerNode / torch getNumCPUPerNode: limits for GPUs, requests (else limits) for CPUs."""
    order = ("limits", "requests") if name == GPU else ("requests", "limits")
    for key in order:
        value = (resources.get(key) or {}).get(name)
        if value is not None and _quantity_int(value) != 0:
            return _quantity_int(value)
    return 0


def _set_nodes(rjob: dict, n: int) -> None:
    spec = rjob["template"]["spec"]
    spec["parallelism"] = spec["completions"] = max(n, 1)


def expand(tj: dict, runtime: dict, copy: Callable[[Any], Any] = _copy.deepcopy) -> Expanded:
    """The JobSet (and objects beside it) the Trainer controller creates for TrainJob `tj` on `runtime`.
    `copy` copies the runtime's values (the emulator's keeps their line:column)."""
    meta = tj.get("metadata") or {}
    name, ns = str(meta.get("name")), meta.get("namespace")
    spec = tj.get("spec") or {}
    trainer = spec.get("trainer") or {}
    rspec = runtime.get("spec") or {}
    ml = rspec.get("mlPolicy") or {}
    template = _patched(copy(rspec.get("template") or {}), spec)
    js_spec = template.get("spec") or {}
    rjobs = js_spec.get("replicatedJobs") or []
    ancestor = next((r for r in rjobs if ((r.get("template") or {}).get("metadata") or {}).get("labels", {})
                     .get(ANCESTOR) == "trainer"), None)
    if ancestor is None:
        raise RuntimeProblem(runtime, ("spec", "template", "spec", "replicatedJobs"),
                             f"no replicatedJob is labelled {ANCESTOR}: trainer")
    nodes = int(trainer.get("numNodes") or ml.get("numNodes") or 1)
    ancestor["replicas"] = 1
    main = _node_container(ancestor)
    if main is None:
        raise RuntimeProblem(ancestor, ("template", "spec", "template", "spec", "containers"),
                             "has no container named node")
    for key in ("image", "command", "args"):
        if key in trainer:
            main[key] = copy(trainer[key])
    for key, value in (trainer.get("resourcesPerNode") or {}).items():
        main.setdefault("resources", {}).setdefault(key, {}).update(value or {})
    per_node = trainer.get("resourcesPerNode") or main.get("resources") or {}
    mpi = ml.get("mpi")
    extra: list[dict] = []
    ssh_secret = None
    if mpi is not None:
        slots = int(trainer.get("numProcPerNode") or mpi.get("numProcPerNode") or 1)
        as_node = bool(mpi.get("runLauncherAsNode"))
        node_job = next((r for r in rjobs if r.get("name") == NODE), None)
        if node_job is None:
            raise RuntimeProblem(runtime, ("spec", "mlPolicy", "mpi"), "needs a replicatedJob named node")
        _set_nodes(node_job, nodes - 1 if as_node else nodes)
        count = node_job["template"]["spec"]["completions"]
        hosts = [f"{name}-node-0-{i}.{name}" for i in range(count)]
        if as_node:
            hosts.insert(0, f"{name}-{ancestor.get('name')}-0-0.{name}")
        ssh_path = str(mpi.get("sshAuthMountPath") or "/root/.ssh")
        ssh_secret = f"{name}-mpi-ssh-auth"
        secret = {"name": "mpi-ssh-auth", "secret": {"secretName": ssh_secret, "items": [
            {"key": "ssh-privatekey", "path": "id_rsa", "mode": 0o640},
            {"key": "ssh-publickey", "path": "id_rsa.pub", "mode": 0o644},
            {"key": "ssh-publickey", "path": "authorized_keys", "mode": 0o644}]}}
        for r in {id(node_job): node_job, id(ancestor): ancestor}.values():
            _mount(r, _copy.deepcopy(secret), ssh_path)
        _mount(ancestor, {"name": "mpi-hostfile", "configMap": {"name": f"{name}-mpi-hostfile", "items": [
            {"key": "hostfile", "path": "hostfile", "mode": 0o444}]}}, "/etc/mpi")
        upsert(main, [{"name": "OMPI_MCA_orte_default_hostfile", "value": "/etc/mpi/hostfile"},
                      {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
                      {"name": "OMPI_MCA_orte_set_default_slots", "value": str(slots)},
                      {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"}], copy)
        upsert(main, trainer.get("env") or [], copy)
        cm_meta: dict = {"name": f"{name}-mpi-hostfile"}
        if ns:
            cm_meta["namespace"] = ns
        extra.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": cm_meta,
                      "data": {"hostfile": "".join(f"{h} slots={slots}\n" for h in hosts)}})
    else:
        _set_nodes(ancestor, nodes)
        if ml.get("jax") is not None:  # JAX_* go before the TrainJob env
            upsert(main, [{"name": "JAX_NUM_PROCESSES", "value": str(nodes)},
                          {"name": "JAX_PROCESS_ID", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}},
                          {"name": "JAX_COORDINATOR_ADDRESS", "value": f"{name}-node-0-0.{name}:{PORT}"}], copy)
        upsert(main, trainer.get("env") or [], copy)
        if ml.get("torch") is not None:
            nproc = trainer.get("numProcPerNode")
            if nproc is None or str(nproc) == "auto":
                nproc = "auto" if _per_node(per_node, GPU) else max(1, _per_node(per_node, "cpu"))
            upsert(main, [{"name": "PET_NNODES", "value": str(nodes)},
                          {"name": "PET_NPROC_PER_NODE", "value": str(nproc)},
                          {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}},
                          {"name": "PET_MASTER_ADDR", "value": f"{name}-node-0-0.{name}"},
                          {"name": "PET_MASTER_PORT", "value": str(PORT)}], copy)
        if ml.get("xgboost") is not None:
            upsert(main, [{"name": "DMLC_TRACKER_URI", "value": f"{name}-node-0-0.{name}"},
                          {"name": "DMLC_TRACKER_PORT", "value": str(PORT)},
                          {"name": "DMLC_TASK_ID", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}},
                          {"name": "DMLC_NUM_WORKER", "value": str(nodes * max(_per_node(per_node, GPU), 1))}],
                   copy)
        if any(ml.get(key) is not None for key in ("torch", "jax", "xgboost")):
            ports = main.setdefault("ports", [])
            if not any(p.get("containerPort") == PORT for p in ports):
                ports.append({"containerPort": PORT, "protocol": "TCP"})
    tmeta = template.get("metadata") or {}
    js_meta: dict = {"name": name}
    if ns:
        js_meta["namespace"] = ns
    if tmeta.get("labels"):
        js_meta["labels"] = dict(tmeta["labels"])
    if tmeta.get("annotations"):
        js_meta["annotations"] = dict(tmeta["annotations"])
    js = {"apiVersion": JOBSET.api_version, "kind": JOBSET.kind, "metadata": js_meta, "spec": js_spec}
    if spec.get("suspend") is not None:
        js_spec["suspend"] = spec["suspend"]
    return Expanded(js, extra, mpi is not None, ssh_secret)
