"""`trainjob`: a Kubeflow Trainer v2 `TrainJob` plus the namespaced `TrainingRuntime` it runs on.

For Trainer v2.3.0 (`trainer.kubeflow.org/v1alpha1`, embedded JobSet v0.12.0);
facts from shared/reference/CONVENTIONS-V2.md §3.  The runtime is generated from
the spec, so the file is self-contained: `<job>-topology` ConfigMap, the
TrainingRuntime `<job>`, and the TrainJob `<job>` referencing it.

Trainer v2 has runtimes (ML policies) for torch, mpi, jax and xgboost only
(`TRAINER_RUNTIMES` in runtimes.py, as data); other frameworks are an error naming the targets
that fit.

* torch: Trainer runs N identical nodes from ONE pod template, the replicatedJob
  `node` (container `node`): our master is node 0 and worker i is node i + 1, so
  the two roles must be configured alike.  Node k is `<job>-node-0-k.<job>`;
  Trainer injects PET_* (master `<job>-node-0-0.<job>`, port 29500, node rank =
  the completion index) after the TrainJob's env; we write MASTER_ADDR / PORT,
  WORLD_SIZE and RANK (= the completion index) in the runtime.  TRAINSPEC_ROLE
  and TRAINSPEC_INDEX are not written: node 0 (the master) and node 1 (worker 0)
  would need values the downward API cannot give; read RANK or PET_NODE_RANK.
* xgboost: as torch (master = node 0, the tracker; worker i = node i + 1); Trainer injects DMLC_*
  (reserved); we write the XGBoostJob controller's MASTER_PORT / ADDR, WORLD_SIZE, RANK (= the completion
  index), PYTHONUNBUFFERED, WORKER_PORT / ADDRS, all at port 29500.
* jax: the workers are the `node` Job's pods (worker i = node i); Trainer injects JAX_* before the
  TrainJob's env; we write the JAXJob controller's COORDINATOR_ADDRESS / PORT, NUM_PROCESSES, PROCESS_ID,
  and TRAINSPEC_ROLE / TRAINSPEC_INDEX (one role: exact for every node).
* mpi: replicatedJobs `node` (our workers, sshd) and `launcher` (the trainer
  step, `dependsOn` node Ready); Trainer makes the SSH Secret and the hostfile
  (`<job>-node-0-<i>.<job> slots=N`) and the launcher's OMPI_* variables itself.
  OpenMPI only (Trainer implements no other).
"""

from __future__ import annotations

from trainspec.compiler.kinds.trainjob import ANCESTOR_LABEL, FRAMEWORK_LABEL, GROUP, TRAINING_RUNTIME, TRAINJOB
from trainspec.compiler.plan import JobPlan, RolePlan

from .. import common
from ..job_settings import Settings, settings_of
from ..role_template import (
    INDEX_ANNOTATION,
    base_env,
    field_ref,
    role_container,
    role_labels,
    role_texts,
    topology_data,
    user_env_names,
)
from ..yamlout import dump_all
from .runtimes import TRAINER_RUNTIMES, TrainerRuntime
from .scheme import TRAINER_PORT, scheme_for

FILE = "trainjob.yaml"
API_VERSION = TRAINJOB.api_version
CONTAINER = "node"
# framework -> Trainer v2 ML policy (checks.py reports the frameworks it has none for)
RUNTIMES: dict[str, TrainerRuntime] = TRAINER_RUNTIMES


def render(plan: JobPlan) -> dict[str, str]:
    plan.check("trainjob")
    return {FILE: dump_all(common.patched(plan, "trainjob", objects(plan)), common.header(plan))}


# --- hosts -----------------------------------------------------------------------------------------

def trainjob_hosts(plan: JobPlan) -> dict[str, list[str]]:
    """role -> [host:port] as Trainer's JobSet names the pods (scheme.py)."""
    return plan.hosts(scheme_for(plan.framework))


# --- pieces ----------------------------------------------------------------------------------------

def _texts(plan: JobPlan, role: RolePlan):
    return role_texts(plan, role, scheme_for(plan.framework))


def _completion_index() -> dict:
    return field_ref(f"metadata.annotations['{INDEX_ANNOTATION}']")


def _framework_env(plan: JobPlan, settings: Settings) -> list[dict]:
    """The Kubeflow-v1-style variables the spec promises, for node k = the completion index (the Trainer
    plugin adds its own PET_* / JAX_* / DMLC_* names beside them)."""
    hosts = {role: [h.rsplit(":", 1)[0] for h in names] for role, names in trainjob_hosts(plan).items()}
    port = str(TRAINER_PORT)
    total = plan.total_replicas
    if plan.framework == "jax":  # the JAXJob controller's names; worker i is node i
        return [{"name": "PYTHONUNBUFFERED", "value": "1"},
                {"name": "COORDINATOR_PORT", "value": port},
                {"name": "COORDINATOR_ADDRESS", "value": hosts["worker"][0]},
                {"name": "NUM_PROCESSES", "value": str(total)},
                {"name": "PROCESS_ID", "value": "$(TRAINSPEC_INDEX)"}]
    if plan.framework == "xgboost":  # the XGBoostJob controller's, in its order: master = node 0 = RANK 0
        env = [{"name": "MASTER_PORT", "value": port},
               {"name": "MASTER_ADDR", "value": hosts["master"][0]},
               {"name": "WORLD_SIZE", "value": str(total)},
               {"name": "RANK", **_completion_index()},
               {"name": "PYTHONUNBUFFERED", "value": "1"}]
        if total > 1:
            env += [{"name": "WORKER_PORT", "value": port},
                    {"name": "WORKER_ADDRS", "value": ",".join(hosts.get("worker", []))}]
        return env
    nproc = settings.nproc_per_node or "auto"
    per_node = int(nproc) if nproc.isdigit() else 1
    return [{"name": "PYTHONUNBUFFERED", "value": "1"},
            {"name": "MASTER_ADDR", "value": hosts["master"][0]},
            {"name": "MASTER_PORT", "value": port},
            {"name": "WORLD_SIZE", "value": str(total * per_node)},
            {"name": "RANK", **_completion_index()}]


def _node_env(plan: JobPlan, role: RolePlan, settings: Settings, taken: set[str]) -> list[dict]:
    if plan.framework == "jax":  # one role: TRAINSPEC_ROLE and TRAINSPEC_INDEX are exact for every node
        env = base_env(plan, role, _completion_index(), plan.topology_name)
    else:  # node 0 (the master) and node 1 (worker 0) would need values the downward API cannot give
        env = [{"name": "TRAINSPEC_JOB", "value": plan.name}]
        env += [e for e in base_env(plan, role, {"value": "0"}, plan.topology_name)
                if e["name"].startswith(("TRAINSPEC_NUM_", "TRAINSPEC_HOSTS_"))]
    env += _framework_env(plan, settings)
    return [e for e in env if e["name"] not in taken or e["name"].startswith("TRAINSPEC_")]


def _pod(plan: JobPlan, role: RolePlan, container: dict, pod_policy: str) -> dict:
    pod: dict = {"restartPolicy": pod_policy}
    pod.update(common.scheduling_fields(plan, role))
    pod.update(common.pod_spec_tail(plan, role, container))
    return pod


def _job_spec(plan: JobPlan, role: RolePlan, settings: Settings, pods: int, pod: dict, decide_at_0: bool) -> dict:
    spec: dict = {"completionMode": "Indexed", "completions": pods, "parallelism": pods}
    if role.restart_policy == "Never":
        spec["backoffLimit"] = 0
    elif settings.backoff_limit is not None:
        spec["backoffLimit"] = settings.backoff_limit
    if decide_at_0:
        spec["successPolicy"] = {"rules": [{"succeededIndexes": "0"}]}  # the master (node 0) decides
    if role.restart_policy == "ExitCode":
        spec["podFailurePolicy"] = {"rules": [common.exit_code_rule(CONTAINER, role.restart)]}
    pod["restartPolicy"] = "OnFailure" if role.restart_policy == "OnFailure" else "Never"
    spec["template"] = {"metadata": common.template_metadata(role, role_labels(plan, role)), "spec": pod}
    return spec


def _replicated_job(plan: JobPlan, name: str, spec: dict, trainer: bool, depends_on: str | None = None) -> dict:
    labels = common.job_labels(plan, name)
    if trainer:
        labels[ANCESTOR_LABEL] = "trainer"
    out: dict = {"name": name}
    if depends_on:
        out["dependsOn"] = [{"name": depends_on, "status": "Ready"}]
    out["template"] = {"metadata": {"labels": labels}, "spec": spec}
    return out


def _strip(container: dict, *keys: str) -> dict:
    return {k: v for k, v in container.items() if k not in keys}


def _nodes(plan: JobPlan, settings: Settings):
    """(runtime JobSet spec, trainer fields, mlPolicy, nodes) for torch, xgboost and jax: one `node` Job of
    every replica (master + workers, or the JAX workers)."""
    runtime = RUNTIMES[plan.framework]
    first = plan.role(runtime.trainer_role)
    # checks.py made sure the workers' settings and text are the master's
    values, command, args, user_env = _texts(plan, first)
    env = _node_env(plan, first, settings, user_env_names(first))
    container = _strip(role_container(plan, first, env, values, name=CONTAINER), "command", "args", "ports")
    nodes = plan.total_replicas
    # the master (node 0) decides; JAX workers all must succeed, as in a JAXJob
    decide_at_0 = nodes > 1 and plan.framework != "jax"
    job = _job_spec(plan, first, settings, nodes, _pod(plan, first, container, ""), decide_at_0=decide_at_0)
    template = {"replicatedJobs": [_replicated_job(plan, "node", job, trainer=True)]}
    trainer = _trainer_fields(plan, first, values, command, args, user_env)
    trainer["numNodes"] = nodes
    nproc = settings.nproc_per_node
    if plan.framework == "pytorch" and nproc and nproc.isdigit():
        trainer["numProcPerNode"] = int(nproc)
    return template, trainer, {runtime.policy: {}}, nodes


def _mpi(plan: JobPlan, settings: Settings):
    launcher, worker = plan.role("launcher"), plan.role("worker")
    # workers: their own text (sshd unless the spec says otherwise), in the runtime
    w_values, w_command, w_args, w_env = _texts(plan, worker)
    env = base_env(plan, worker, field_ref(f"metadata.annotations['{INDEX_ANNOTATION}']"), plan.topology_name)
    env += [{"name": "K_MPI_JOB_ROLE", "value": "worker"}] + w_env
    w_container = role_container(plan, worker, env, w_values, name=CONTAINER)
    for key, items in (("command", w_command), ("args", w_args)):
        if items is not None:
            w_container[key] = items
    node = _job_spec(plan, worker, settings, worker.count, _pod(plan, worker, w_container, ""), False)
    # launcher: the trainer step; its command, args and env come from the TrainJob
    l_values, l_command, l_args, l_env = _texts(plan, launcher)
    env = base_env(plan, launcher, {"value": "0"}, plan.topology_name) + [{"name": "K_MPI_JOB_ROLE",
                                                                           "value": "launcher"}]
    l_container = _strip(role_container(plan, launcher, env, l_values, name=CONTAINER), "command", "args")
    launch = _job_spec(plan, launcher, settings, 1, _pod(plan, launcher, l_container, ""), False)
    template = {"network": {"publishNotReadyAddresses": True},
                "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
                "replicatedJobs": [_replicated_job(plan, "node", node, trainer=False),
                                   _replicated_job(plan, "launcher", launch, trainer=True, depends_on="node")]}
    trainer = _trainer_fields(plan, launcher, l_values, l_command, l_args, l_env)
    trainer["numNodes"] = worker.count
    slots = plan.mpi_slots or 1
    policy = {"mpi": {"numProcPerNode": slots, "mpiImplementation": "OpenMPI", "sshAuthMountPath": "/root/.ssh",
                      "runLauncherAsNode": False}}
    return template, trainer, policy, worker.count


def _trainer_fields(plan: JobPlan, role: RolePlan, values, command, args, env) -> dict:
    """spec.trainer: what the TrainJob overrides in the trainer step's `node` container."""
    out: dict = {"image": role.image}
    cmd = [common.escape_k8s(s) for s in values.command] if command is None and values.command is not None \
        else command
    arg = [common.escape_k8s(s) for s in values.args] if args is None and values.args is not None else args
    if cmd is not None:
        out["command"] = cmd
    if arg is not None:
        out["args"] = arg
    if env:
        out["env"] = env
    return out


def topology_config_map(plan: JobPlan) -> dict:
    return common.topology_config_map(plan, topology_data(plan, trainjob_hosts(plan)))


def objects(plan: JobPlan) -> list[dict]:
    if plan.trainjob is not None:  # v1.3: the cluster's runtime holds the pods; the TrainJob names it
        from . import on_runtime

        return [on_runtime.train_job(plan)]
    settings = settings_of(plan)
    runtime = RUNTIMES[plan.framework]
    build = _mpi if plan.framework == "mpi" else _nodes
    template, trainer, policy, nodes = build(plan, settings)
    labels = common.job_labels(plan)
    runtime_labels = dict(labels)
    runtime_labels[FRAMEWORK_LABEL] = runtime.policy
    training_runtime = {
        "apiVersion": API_VERSION, "kind": TRAINING_RUNTIME.kind,
        "metadata": common.metadata(plan, plan.name, runtime_labels),
        "spec": {"mlPolicy": {"numNodes": nodes, **policy},
                 "template": {"metadata": {"labels": labels}, "spec": template}},
    }
    spec: dict = {"runtimeRef": {"name": plan.name, "apiGroup": GROUP, "kind": TRAINING_RUNTIME.kind},
                  "trainer": trainer}
    if settings.active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = settings.active_deadline_seconds
    job_labels = dict(labels)
    job_labels.update(common.kueue_labels(settings.queue))
    train_job = {"apiVersion": API_VERSION, "kind": TRAINJOB.kind,
                 "metadata": common.metadata(plan, plan.name, job_labels), "spec": spec}
    return [topology_config_map(plan), training_runtime, train_job]
