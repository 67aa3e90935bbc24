"""Spec v1.3 `spec.trainjob`: a job on a Trainer runtime the cluster already has -> a TrainJob only.

The runtime holds the pod template; the TrainJob names it (`runtimeRef`) and overrides what Trainer's
`trainer` field can carry [TR pkg/apis/trainer/v1alpha1/trainjob_types.go, CONVENTIONS-V2 §3.1]:
image, command, args, env (the spec's, as written), numNodes (the replicas), numProcPerNode and
resourcesPerNode.  What `trainer` cannot carry (scheduling, volumes, sidecars...) the spec says in
`trainjob.runtimePatches`, which goes in as written, as do `initializer`, `suspend` and `managedBy`;
any other pod setting of the spec is an error here (checks), never dropped.

Which role is the trainer and how many nodes it has, per framework (runtimes.py `TRAINER_RUNTIMES`):
torch / xgboost: master + workers are the nodes (alike, as for the own runtime); jax: the workers;
mpi: the launcher is the trainer, the workers are the nodes; generic: its one role.
"""

from __future__ import annotations

from trainspec.compiler.frameworks import MPI_WORKER_COMMAND
from trainspec.compiler.kinds.trainjob import TRAINJOB
from trainspec.compiler.plan import JobPlan, RolePlan, Text
from trainspec.compiler.target_rules import Problem

from ..shared_checks import env_path
from .runtimes import TRAINER_RUNTIMES
from .scheme import scheme_for

TRAINER_KEYS = ("image", "command", "args", "env", "numNodes", "resourcesPerNode", "numProcPerNode")
PATCH_HINT = "say it in spec.trainjob.runtimePatches (Trainer's own form), or in the runtime"


def trainer_role(plan: JobPlan) -> RolePlan:
    """The role whose container the TrainJob's `trainer` overrides."""
    runtime = TRAINER_RUNTIMES.get(plan.framework)
    role = plan.role(runtime.trainer_role) if runtime else None
    return role if role is not None else plan.roles[0]


def num_nodes(plan: JobPlan) -> int:
    if plan.framework == "mpi":
        worker = plan.role("worker")
        return worker.count if worker is not None else 1
    return plan.total_replicas


def checks(plan: JobPlan) -> list[Problem]:
    """What a TrainJob on the cluster's runtime cannot carry: each set field, at its place."""
    out: list[Problem] = []
    if plan.framework == "generic" and len(plan.roles) != 1:
        out.append(Problem(("spec", "roles"), "target trainjob: a generic job on a Trainer runtime has one role "
                           "(the runtime's trainer `node` Job)", "one role", "name it node", True))
    if plan.framework in ("tensorflow", "mxnet", "paddle"):
        out.append(Problem(("spec", "framework"), f"target trainjob: Kubeflow Trainer v2 has no ML policy for "
                           f"{plan.framework}", "pytorch, jax, xgboost, mpi or generic", "", True))
    if plan.elastic is not None:
        out.append(Problem(("spec", "pytorch", "elastic"), "target trainjob: Trainer v2 has no elastic PyTorch",
                           "no pytorch.elastic", "", True))
    trainer = trainer_role(plan)
    nodes = {r.name for r in plan.roles} - {"launcher"} if plan.framework == "mpi" else set()
    job_level = (("volumes", bool(plan.volumes)), ("backoffLimit", plan.backoff_limit is not None),
                 ("cleanPodPolicy", plan.cleanup.pods is not None),
                 ("ttlSecondsAfterFinished", plan.cleanup.ttl_seconds_after_finished is not None),
                 ("imagePullSecrets", bool(plan.image_pull_secrets)))
    for key, written in job_level:
        if written:
            out.append(_cannot(("spec", key), key))
    sched = plan.scheduling
    for key, value in (("gang", sched.gang), ("minAvailable", sched.min_available),
                       ("priorityClassName", sched.priority_class_name), ("schedulerName", sched.scheduler_name)):
        if value:
            out.append(_cannot(("spec", "scheduling", key), f"scheduling.{key}",
                               "the runtime's podGroupPolicy and pod template decide it"))
    for role in plan.roles:
        base = ("spec", "roles", role.name)
        own = [("workingDir", role.working_dir), ("initContainers", role.init_containers),
               ("lifecycle", role.lifecycle), ("shm", role.resources.shm),
               ("probes", any(role.probes) if role.probes else None)]
        own += [(key, getattr(role.pod, attr)) for key, attr in (
            ("imagePullPolicy", "image_pull_policy"), ("serviceAccountName", "service_account_name"),
            ("nodeSelector", "node_selector"), ("tolerations", "tolerations"), ("affinity", "affinity"),
            ("securityContext", "security_context"), ("podSecurityContext", "pod_security_context"),
            ("podLabels", "pod_labels"), ("podAnnotations", "pod_annotations"),
            ("priorityClassName", "priority_class_name"))]
        own += [("volumes", role.volumes if role.volumes != plan.volumes else ())]
        for key, value in own:
            if value:
                out.append(_cannot(base + (key,), key))
        if role.name in nodes and _own_texts(role, base, trainer):
            out.append(_cannot(base, f"the {role.name}'s own command, args or env",
                               "the runtime's node Job runs them (sshd); the TrainJob overrides the launcher"))
    if plan.framework in ("pytorch", "xgboost"):
        from .nodes import shared_nodes

        out += [p._replace(unsupported=False) for p in shared_nodes(plan)]
    runtime = TRAINER_RUNTIMES.get(plan.framework)
    if runtime is not None:
        for name, _ in trainer.sources.env:
            if name in runtime.reserved_env:
                out.append(Problem(env_path(trainer, name), f"target trainjob: Trainer v2 sets {name} itself and "
                                   "rejects it in the TrainJob's env", "another variable name"))
    return out


def _own_texts(role: RolePlan, base: tuple, trainer: RolePlan) -> bool:
    """Whether the role itself sets command, args or env: the job's command is the launcher's (the node
    runs the runtime's sshd, planner's MPI default) and the job's env reaches every role alike."""
    src = role.sources
    command = src.command if src.command is None or tuple(t.source for t in src.command) != MPI_WORKER_COMMAND \
        else None
    inherited = set(trainer.sources.env)
    own_env = [(name, value) for name, value in src.env
               if (value.path[:len(base)] == base if isinstance(value, Text) else (name, value) not in inherited)]
    return bool(command or src.args or own_env)


def expanded_checks(plan: JobPlan, target: str) -> list[Problem]:
    """A target that writes what the Trainer controller makes of the TrainJob (jobset, k8s with --runtime)
    can carry no more than that TrainJob: the same problems, named for that target."""
    return [p._replace(message=p.message.replace("target trainjob:", f"target {target} (the TrainJob on its "
                                                                      "runtime):", 1)) for p in checks(plan)]


def _cannot(path: tuple, what: str, why: str = "") -> Problem:
    return Problem(path, f"target trainjob: a TrainJob on the cluster's runtime cannot carry {what} "
                   f"(Trainer's `trainer` has image, command, args, env, numNodes, numProcPerNode, "
                   f"resourcesPerNode{'; ' + why if why else ''})", "no such field here", PATCH_HINT)


def trainer_fields(plan: JobPlan) -> dict:
    """spec.trainer, in the CRD's field order, with only what the spec says."""
    from .. import common
    from ..role_template import role_texts  # a renderer's: only when rendering

    role = trainer_role(plan)
    values, command, args, env = role_texts(plan, role, scheme_for(plan.framework))
    out: dict = {}
    if role.image:
        out["image"] = role.image
    cmd = [common.escape_k8s(s) for s in values.command] if command is None and values.command is not None \
        else command
    arg = [common.escape_k8s(s) for s in values.args] if args is None and values.args is not None else args
    if cmd is not None:
        out["command"] = cmd
    if arg is not None:
        out["args"] = arg
    if env:
        out["env"] = env
    if plan.trainjob is None or not plan.trainjob.nodes_from_runtime:
        out["numNodes"] = num_nodes(plan)
    resources = common.resources(role.resources, plan.accelerator)
    if resources:
        out["resourcesPerNode"] = resources
    nproc = plan.trainjob.num_proc_per_node if plan.trainjob else None
    if nproc is None and plan.nproc_per_node and plan.nproc_per_node.isdigit():
        nproc = int(plan.nproc_per_node)
    if nproc is not None:
        out["numProcPerNode"] = nproc
    return out


def train_job(plan: JobPlan) -> dict:
    from .. import common

    assert plan.trainjob is not None
    spec: dict = {"runtimeRef": dict(plan.trainjob.runtime_ref)}
    trainer = trainer_fields(plan)
    if trainer:  # none: the runtime's pods as they are
        spec["trainer"] = trainer
    carried = plan.trainjob.fields
    for key in ("labels", "annotations", "podTemplateOverrides", "initializer", "runtimePatches"):
        if key in carried:
            spec[key] = carried[key]
    if plan.active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = plan.active_deadline_seconds
    for key in ("suspend", "managedBy"):
        if key in carried:
            spec[key] = carried[key]
    labels = common.job_labels(plan)
    labels.update(common.kueue_labels(plan.scheduling.queue))
    return {"apiVersion": TRAINJOB.api_version, "kind": TRAINJOB.kind,
            "metadata": common.metadata(plan, plan.name, labels), "spec": spec}
