"""Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1): a TrainJob on its TrainingRuntime becomes a JobSet.

Sources (shared/reference/CONVENTIONS-V2.md §3; kubeflow/trainer v2.3.0,
plugins/jobset/{jobset.go,builder.go}, pkg/runtime/core/trainingruntime.go, plugins/torch/torch.go,
plugins/mpi/mpi.go, plugins/jax/jax.go, plugins/xgboost/xgboost.go):
  * the JobSet `<tj>` is the runtime's template (labels merged); the replicatedJob whose template
    has the label `trainer.kubeflow.org/trainjob-ancestor-step: trainer` gets `replicas: 1`, and in
    its container `node` the TrainJob's `trainer.image`, `command`, `args` replace the runtime's,
    `trainer.env` is upserted (same name replaced in place, new names appended) and
    `resourcesPerNode` merged;
  * the node count (`trainer.numNodes`, else `mlPolicy.numNodes`) is the Job's
    parallelism = completions: of the trainer Job (torch, plain), of the `node` Job with
    `mlPolicy.mpi` (minus one with runLauncherAsNode);
  * torch: PET_NNODES, PET_NPROC_PER_NODE (numProcPerNode, else auto), PET_NODE_RANK (the completion
    index), PET_MASTER_ADDR `<tj>-node-0-0.<tj>`, PET_MASTER_PORT 29500, and container port 29500;
  * mpi: Secret `<tj>-mpi-ssh-auth` at sshAuthMountPath in the `node` containers of the node and
    launcher Jobs (id_rsa 0640, id_rsa.pub, authorized_keys 0644); ConfigMap `<tj>-mpi-hostfile` at
    /etc/mpi/hostfile (0444) on the launcher, one `<tj>-node-0-<i>.<tj> slots=<numProcPerNode>` line
    per node pod; the launcher's OMPI_MCA_* before the TrainJob env;
  * jax: JAX_NUM_PROCESSES (node count), JAX_PROCESS_ID (the completion index), JAX_COORDINATOR_ADDRESS
    `<tj>-node-0-0.<tj>:29500`, before the TrainJob env; container port 29500;
  * xgboost: DMLC_TRACKER_URI `<tj>-node-0-0.<tj>`, DMLC_TRACKER_PORT 29500, DMLC_TASK_ID (the completion
    index), DMLC_NUM_WORKER (nodes x GPUs per node, or nodes); container port 29500.  Trainer runs its
    PlainML and XGBoost plugins in Go-map order, so DMLC_* may come before or after the TrainJob env
    (CONVENTIONS-V2 §3.3); the names are reserved, so only `$(DMLC_...)` in the TrainJob env could tell:
    here they come after it, as torch's PET_*.
The JobSet then runs as jobset.py says. Not reproduced: other runtime plugins (Flux),
podGroupPolicy, ClusterTrainingRuntime (only a TrainingRuntime in the same file), runtimePatches.
"""

from __future__ import annotations

import copy

from ....compiler.kinds.jobset import JOBSET
from .. import positions
from . import Created, fail, meta
from . import jobset as jobset_controller

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
PORT = 29500
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
GPU = "nvidia.com/gpu"


def upsert(container: dict, pairs: list[dict]) -> None:
    env = container.setdefault("env", [])
    for entry in pairs:
        for i, old in enumerate(env):
            if old.get("name") == entry.get("name"):
                env[i] = positions.copy(entry)
                break
        else:
            env.append(positions.copy(entry))


def _node_container(rjob: dict) -> dict | None:
    pod = rjob["template"]["spec"]["template"]["spec"]
    return next((c for c in pod.get("containers") or [] if c.get("name") == "node"), None)


def _mount(rjob: dict, volume: dict, path: str, sub: str | None = None) -> None:
    pod = rjob["template"]["spec"]["template"]["spec"]
    c = _node_container(rjob)
    if c is None:
        return
    pod.setdefault("volumes", []).append(volume)
    mount = {"name": volume["name"], "mountPath": path}
    if sub:
        mount["subPath"] = sub
    c.setdefault("volumeMounts", []).append(mount)


def _gpus(container: dict) -> int:
    """GPUs per node as Trainer counts them for DMLC_NUM_WORKER (limits, else requests)."""
    resources = container.get("resources") or {}
    for key in ("limits", "requests"):
        value = (resources.get(key) or {}).get(GPU)
        if value is not None:
            return int(str(value))
    return 0


def _set_nodes(rjob: dict, n: int) -> None:
    spec = rjob["template"]["spec"]
    spec["parallelism"] = spec["completions"] = max(n, 1)


def create(tj: dict, runtime: dict, source: str) -> Created:
    name, ns = meta(tj)
    spec = tj.get("spec") or {}
    trainer = spec.get("trainer") or {}
    rspec = runtime.get("spec") or {}
    ml = rspec.get("mlPolicy") or {}
    template = positions.copy(rspec.get("template") or {})
    js_spec = template.get("spec") or {}
    rjobs = js_spec.get("replicatedJobs") or []
    ancestor = next((r for r in rjobs if ((r.get("template") or {}).get("metadata") or {}).get("labels", {})
                     .get(ANCESTOR) == "trainer"), None)
    if ancestor is None:
        raise fail(source, runtime, ("spec", "template", "spec", "replicatedJobs"),
                   f"no replicatedJob is labelled {ANCESTOR}: trainer", label=f"TrainingRuntime {meta(runtime)[0]}")
    nodes = int(trainer.get("numNodes") or ml.get("numNodes") or 1)
    ancestor["replicas"] = 1
    main = _node_container(ancestor)
    if main is None:
        raise fail(source, ancestor, ("template", "spec", "template", "spec", "containers"),
                   "has no container named node",
                   label=f"TrainingRuntime {meta(runtime)[0]} replicatedJob {ancestor.get('name')}")
    for key in ("image", "command", "args"):
        if key in trainer:
            main[key] = positions.copy(trainer[key])
    for key, value in (trainer.get("resourcesPerNode") or {}).items():
        main.setdefault("resources", {}).setdefault(key, {}).update(value or {})
    mpi = ml.get("mpi")
    if mpi is not None:
        slots = int(trainer.get("numProcPerNode") or mpi.get("numProcPerNode") or 1)
        as_node = bool(mpi.get("runLauncherAsNode"))
        node_job = next((r for r in rjobs if r.get("name") == "node"), None)
        if node_job is None:
            raise fail(source, runtime, ("spec", "mlPolicy", "mpi"), "needs a replicatedJob named node",
                       label=f"TrainingRuntime {meta(runtime)[0]}")
        _set_nodes(node_job, nodes - 1 if as_node else nodes)
        count = node_job["template"]["spec"]["completions"]
        hosts = [f"{name}-node-0-{i}.{name}" for i in range(count)]
        if as_node:
            hosts.insert(0, f"{name}-{ancestor.get('name')}-0-0.{name}")
        ssh_path = str(mpi.get("sshAuthMountPath") or "/root/.ssh")
        secret = {"name": "mpi-ssh-auth", "secret": {"secretName": f"{name}-mpi-ssh-auth", "items": [
            {"key": "ssh-privatekey", "path": "id_rsa", "mode": 0o640},
            {"key": "ssh-publickey", "path": "id_rsa.pub", "mode": 0o644},
            {"key": "ssh-publickey", "path": "authorized_keys", "mode": 0o644}]}}
        for r in {id(node_job): node_job, id(ancestor): ancestor}.values():
            _mount(r, copy.deepcopy(secret), ssh_path)
        _mount(ancestor, {"name": "mpi-hostfile", "configMap": {"name": f"{name}-mpi-hostfile", "items": [
            {"key": "hostfile", "path": "hostfile", "mode": 0o444}]}}, "/etc/mpi")
        upsert(main, [{"name": "OMPI_MCA_orte_default_hostfile", "value": "/etc/mpi/hostfile"},
                      {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
                      {"name": "OMPI_MCA_orte_set_default_slots", "value": str(slots)},
                      {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"}])
        upsert(main, trainer.get("env") or [])
        extra = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-mpi-hostfile",
                                                                         "namespace": ns},
                  "data": {"hostfile": "".join(f"{h} slots={slots}\n" for h in hosts)}}]
    else:
        _set_nodes(ancestor, nodes)
        extra = []
        if ml.get("jax") is not None:  # JAX_* go before the TrainJob env
            upsert(main, [{"name": "JAX_NUM_PROCESSES", "value": str(nodes)},
                          {"name": "JAX_PROCESS_ID", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}},
                          {"name": "JAX_COORDINATOR_ADDRESS", "value": f"{name}-node-0-0.{name}:{PORT}"}])
        upsert(main, trainer.get("env") or [])
        if ml.get("torch") is not None:
            nproc = str(trainer.get("numProcPerNode") or (ml.get("torch") or {}).get("numProcPerNode") or "auto")
            upsert(main, [{"name": "PET_NNODES", "value": str(nodes)}, {"name": "PET_NPROC_PER_NODE", "value": nproc},
                          {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}},
                          {"name": "PET_MASTER_ADDR", "value": f"{name}-node-0-0.{name}"},
                          {"name": "PET_MASTER_PORT", "value": str(PORT)}])
        if ml.get("xgboost") is not None:
            upsert(main, [{"name": "DMLC_TRACKER_URI", "value": f"{name}-node-0-0.{name}"},
                          {"name": "DMLC_TRACKER_PORT", "value": str(PORT)},
                          {"name": "DMLC_TASK_ID", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}},
                          {"name": "DMLC_NUM_WORKER", "value": str(nodes * max(_gpus(main), 1))}])
        if any(ml.get(key) is not None for key in ("torch", "jax", "xgboost")):
            ports = main.setdefault("ports", [])
            if not any(p.get("containerPort") == PORT for p in ports):
                ports.append({"containerPort": PORT, "protocol": "TCP"})
    js = {"apiVersion": JOBSET.api_version, "kind": JOBSET.kind,
          "metadata": {"name": name, "namespace": ns, "labels": (template.get("metadata") or {}).get("labels") or {}},
          "spec": js_spec}
    made = jobset_controller.create(js, source, framework="mpi" if mpi is not None else None)
    made.objects += extra
    if mpi is not None:
        made.ssh_secrets.append(f"{name}-mpi-ssh-auth")
    return made
