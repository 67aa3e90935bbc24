"""What each target cannot express, checked where the spec's positions are known.

The planner runs every target's check on the finished plan and keeps the
problems per target (`JobPlan.target_errors`), each with its file:line:column;
`load_plans(..., targets=...)` raises those of the targets asked for, and a
target's `render` raises them too (`JobPlan.check`), so no target needs the spec
or its positions.  A new target adds a function to CHECKS.
"""

from collections.abc import Callable
from typing import NamedTuple

from .frameworks import CONTAINER_NAME
from .plan import JobPlan, Rendered, RolePlan, Text
from .schemes import jobset_shape, scheme_for

TOPOLOGY_HINT = ("read the index at runtime instead: $TRAINSPEC_INDEX (every target sets it), "
                 "TF_CONFIG's task.index, or RANK / DMLC_WORKER_ID")
MPI_OPERATOR_RESTART_POLICIES = ("Never", "OnFailure")  # mpi-operator's validation accepts no others


class Problem(NamedTuple):
    path: tuple
    message: str
    expected: str = ""
    hint: str = ""
    unsupported: bool = False  # the target cannot run this job at all: `build` over all targets leaves it out


def per_replica_problem(role: str, path: tuple, target: str, why: str) -> Problem:
    """A template that renders differently per replica where the target shares one pod template."""
    message = (f"target {target}: renders differently for each {role} replica (it uses {{{{ index }}}}), "
               f"but {why}")
    return Problem(path, message, "the same text for every replica of a role", TOPOLOGY_HINT)


def shared_template_problems(plan: JobPlan, target: str, why: str) -> list[Problem]:
    """For a target that gives all replicas of a role one pod template: each role whose text differs
    per replica and cannot be rebuilt from $(TRAINSPEC_INDEX) (RoleRender.shared is None)."""
    scheme = scheme_for(target, plan.framework)
    out = []
    for role in plan.roles:
        render = role.renders.get(scheme)
        if render is not None and not render.uniform and render.shared is None:
            out.append(per_replica_problem(role.name, render.unshared or ("spec",), target,
                                           f"{why}, and this text cannot be rebuilt at runtime from "
                                           "$(TRAINSPEC_INDEX)"))
    return out


GENERIC_TARGETS = "k8s, jobset, volcano, compose or helm"  # the targets framework: generic compiles to


def generic_refused(plan: JobPlan, target: str, why: str) -> list[Problem]:
    """kubeflow and trainjob have no kind for a job of freely named roles (spec v1.2)."""
    return [Problem(("spec", "framework"), f"target {target}: {why}", "tensorflow, pytorch, mxnet, mpi, xgboost, "
                    "paddle or jax", f"framework: generic compiles to the {GENERIC_TARGETS} target", True)]


def _container_path(role: RolePlan) -> tuple:
    return ("spec", "roles", role.name, "containerName") if role.container_name else ("spec", "containerName")


def operator_container_names(plan: JobPlan) -> list[Problem]:
    """The training operator's webhooks require its default container (it injects the env and finds the
    port there, CONVENTIONS.md §1.0); mpi-operator takes the first container, whatever its name."""
    from .frameworks import OPERATOR_CONTAINER_FRAMEWORKS

    if plan.framework not in OPERATOR_CONTAINER_FRAMEWORKS:
        return []
    want = CONTAINER_NAME[plan.framework]
    for role in plan.roles:
        if role.container(plan) != want:
            return [Problem(_container_path(role), f"target kubeflow: the training operator requires the main "
                            f"container to be named {want!r} (it injects the {plan.framework} variables and finds "
                            f"the port there), not {role.container(plan)!r}", repr(want),
                            "remove containerName, or use the jobset, volcano or k8s target, which keep any name")]
    return []


def kubeflow(plan: JobPlan) -> list[Problem]:
    if plan.framework == "generic":
        return generic_refused(plan, "kubeflow", "the Kubeflow training operator has no kind for framework: generic "
                               "(its kinds fix the roles and inject their framework's variables)")
    out = operator_container_names(plan)
    for role in plan.roles:
        if plan.framework == "mpi" and role.restart_policy not in MPI_OPERATOR_RESTART_POLICIES:
            out.append(Problem(role.restart_path, f"target kubeflow: mpi-operator does not accept restartPolicy "
                                                  f"{role.restart_policy!r} for the {role.name}", "Never or OnFailure",
                               "use OnFailure with backoffLimit, or the k8s / volcano target"))
    return out + shared_template_problems(plan, "kubeflow",
                                          "a Kubeflow replica spec has one pod template for all of its replicas")


def volcano_split(plan: JobPlan) -> bool:
    """Whether the volcano target writes one task per replica instead of one per role.

    Only when some role's text differs per replica and cannot be rebuilt from the task
    index at runtime ($(TRAINSPEC_INDEX) from the pod's task-index label): one task per
    replica gives up the framework plugins, so it is the last resort.
    """
    scheme = scheme_for("volcano", plan.framework)
    return any(not render.uniform and render.shared is None
               for render in (r.renders.get(scheme) for r in plan.roles) if render is not None)


def volcano_node_rank_split(framework: str, elastic: bool, counts: dict[str, int]) -> bool:
    """Whether the volcano target writes one task per replica for torchrun's node rank.

    torchrun takes its node rank from PET_NODE_RANK (as the Kubeflow operator sets it); Volcano's pytorch
    plugin sets RANK only, and a worker's node rank (index + 1) cannot come from the task index: with
    several workers every worker's torchrun would be node 0.  The importer lays its patches out by this too.
    """
    return framework == "pytorch" and not elastic and counts.get("master", 0) > 0 and counts.get("worker", 0) > 1


XGBOOST_PLUGIN_ENV = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")


def volcano_xgboost_plugin(plan: JobPlan) -> bool:
    """Whether Volcano's pytorch plugin gives an XGBoost job's replicas MASTER_ADDR, MASTER_PORT, WORLD_SIZE and
    RANK: its values are the XGBoostJob controller's (the master is rank 0, worker i is i + 1; the master's
    `<job>-master-0.<job>`; every master and worker counted), so the workers need not be one task each for
    their RANK.  Not when the user's env sets one of those names: the plugin appends its own after the
    template's, and the later one would win over the user's."""
    if plan.framework != "xgboost" or plan.role("master") is None:
        return False
    return not any(name in XGBOOST_PLUGIN_ENV for role in plan.roles for name, _ in role.sources.env)


def volcano(plan: JobPlan) -> list[Problem]:
    decider = plan.role(plan.success.role) if plan.success.role else None
    if plan.success.scope == "any" and decider is not None and decider.count > 1:
        return [Problem(("spec", "success", "policy"), f"target volcano: a Volcano Job completes when a whole task "
                        f"completes (TaskCompleted) or minSuccess pods of the job succeed; it cannot complete when "
                        f"any one of the {decider.count} {decider.name} replicas does", "AllReplicas, or a role with "
                        "one replica", "use AllReplicas, or the jobset, k8s or compose target (they keep AnyReplica)")]
    if plan.framework == "tensorflow" and not volcano_split(plan):
        ports = {role.port for role in plan.roles}
        if len(ports) > 1:
            return [Problem(("spec", "roles"), "target volcano: Volcano's tensorflow plugin gives every task the "
                            f"same port (roles use {sorted(ports)})", "one port for every role",
                            "remove the per-role ports")]
    return []


def lingering_roles(plan: JobPlan) -> list[str]:
    """Roles of this job that nothing stops on a plain cluster when the decider succeeds."""
    from .frameworks import LINGERING_ROLES

    if plan.framework == "generic":
        # generic: whoever is still running when spec.success's role decides (unset: nobody, all must finish)
        rule = plan.success
        return [role.name for role in plan.roles if rule.role and role.count and
                (role.name != rule.role or (rule.scope == "any" and role.count > 1))]
    return [role.name for role in plan.roles if role.count and role.name in LINGERING_ROLES.get(plan.framework, ())]


def plain_kubernetes_caveat(plan: JobPlan) -> list[Problem]:
    """k8s / helm: no controller ends the job, so servers outlive it (a warning, not an error)."""
    roles = lingering_roles(plan)
    if not roles or plan.active_deadline_seconds is not None:
        return []
    if plan.framework == "generic":
        return [Problem(("spec", "success"), f"on a plain cluster nothing stops the {' and '.join(roles)} replicas "
                        f"still running when {plan.success.text}: they would keep running, and holding their "
                        "resources", "spec.activeDeadlineSeconds, or a target whose controller ends the job",
                        "compile for jobset or volcano, set activeDeadlineSeconds, or let them exit on their own")]
    return [Problem(("spec", "roles", roles[0]),
                    f"on a plain cluster nothing stops the {' and '.join(roles)} replicas when "
                    f"{plan.success.text}: they keep running, and holding their resources, forever",
                    "spec.activeDeadlineSeconds, or a target whose controller ends the job",
                    "compile for jobset, kubeflow or volcano, or set activeDeadlineSeconds")]


def trainer_mpi_root_key(plan: JobPlan) -> list[Problem]:
    """Trainer's MPI plugin mounts the SSH private key `id_rsa` with mode 0640 (CONVENTIONS-V2 §3.4), owned by
    root; OpenSSH refuses a key its own user owns that the group can read ("UNPROTECTED PRIVATE KEY FILE"), so
    mpirun's ssh to the workers fails when the pods run as root (a non-root user in the fsGroup reads it).
    The spec has no pod securityContext yet, so every MPI job is warned (once it has one, warn only when
    runAsUser is unset or 0)."""
    if plan.framework != "mpi":
        return []
    return [Problem(("spec", "framework"),
                    "Trainer's MPI plugin mounts the SSH private key id_rsa with mode 0640, "
                    "which OpenSSH refuses when the pods run as root (the image's default user, unless it sets "
                    "another): mpirun cannot reach the workers",
                    "pods that run as a non-root user",
                    "build the image with a non-root user (e.g. mpiuser) that runs sshd and mpirun, give the pods "
                    "runAsUser / fsGroup for it, and point mlPolicy.mpi.sshAuthMountPath at its ~/.ssh, as "
                    "Trainer's deepspeed-distributed runtime does with /home/mpiuser/.ssh; or use the kubeflow "
                    "(mpi-operator) or jobset target")]


# Warnings per target: the output is valid, but the user should know (printed once per job).
WARNINGS: dict[str, Callable[[JobPlan], list[Problem]]] = {
    "k8s": plain_kubernetes_caveat,
    "helm": plain_kubernetes_caveat,
    "trainjob": trainer_mpi_root_key,
}


# --- JobSet and Kubeflow Trainer v2 (both run a role's pods from one Job template) ----------------

MAX_DNS_LABEL = 63
POD_SUFFIX = len("-abcde")  # the random suffix the Job controller adds to a pod's name


def _job_pods_always(role: RolePlan, target: str, what: str, hint: str, unsupported: bool = False) -> list[Problem]:
    if role.restart_policy != "Always":
        return []
    return [Problem(role.restart_path, f"target {target}: {what} cannot use restartPolicy Always",
                    "Never, OnFailure or ExitCode", hint, unsupported)]


# Frameworks the jobset target writes the operator's variables for (the others are refused).
JOBSET_FRAMEWORKS = ("tensorflow", "pytorch", "mxnet", "mpi", "xgboost", "jax", "paddle", "generic")


def _elastic(plan: JobPlan, target: str) -> list[Problem]:
    """Elastic PyTorch (spec v1.1): Trainer v2 has no elastic policy (CONVENTIONS-V2.md: `torch.elasticPolicy`
    was removed in v2.2.0; its torch runtime fixes numNodes)."""
    if plan.framework != "pytorch" or plan.elastic is None:
        return []
    return [Problem(("spec", "pytorch", "elastic"), f"target {target}: Kubeflow Trainer v2 has no elastic "
                    "PyTorch (torch.elasticPolicy was removed in v2.2.0; the runtime fixes numNodes)",
                    "no pytorch.elastic", "use the kubeflow, jobset, volcano, k8s, helm or compose target", True)]


def jobset(plan: JobPlan) -> list[Problem]:
    if plan.framework not in JOBSET_FRAMEWORKS:
        return [Problem(("spec", "framework"),
                        f"target jobset: trainspec does not yet write the {plan.framework} controller's variables "
                        "for JobSet host names", "one of " + ", ".join(JOBSET_FRAMEWORKS),
                        "use the kubeflow, volcano, k8s, helm or compose target", True)]
    out: list[Problem] = []
    for role in plan.roles:
        out += _job_pods_always(role, "jobset", f"the {role.name} pods are Job pods, which",
                                "use OnFailure (restarts after a failure), or the k8s target (a one-pod Deployment)",
                                unsupported=True)
    for role in plan.roles:
        if not role.count:
            continue
        # JobSet's webhook: the longest pod name `<js>-<rj>-<j>-<i>-abcde` must be a DNS label
        jobs, pods = jobset_shape(plan.framework, role.name, role.count)
        longest = f"{plan.name}-{role.task}-{jobs - 1}-{pods - 1}"
        if len(longest) + POD_SUFFIX > MAX_DNS_LABEL:
            out.append(Problem(("metadata", "name"),
                               f"target jobset: pod names such as {longest}-abcde are longer than 63 characters",
                               f"a job name of at most {MAX_DNS_LABEL - POD_SUFFIX - len(longest) + len(plan.name)} "
                               "characters", "shorten metadata.name"))
            break
    return out + _paddle_node_name(plan) + shared_template_problems(
        plan, "jobset", "a JobSet replicatedJob has one pod template for all of its replicas")


def _paddle_node_name(plan: JobPlan) -> list[Problem]:
    """Paddle under jobset: a rendezvous role of several replicas names each pod by its JobSet host in POD_IP
    (targets/jobset.py paddle_env); a user's POD_IP would replace it and replica 0 would not serve the rendezvous."""
    if plan.framework != "paddle":
        return []
    master = plan.role("master")
    role = master if master is not None and master.count else plan.role("worker")
    if role is None or role.count < 2 or "POD_IP" not in {name for name, _ in role.sources.env}:
        return []
    return [Problem(_env_path(role, "POD_IP"), f"target jobset: POD_IP is paddle.distributed.launch's node address, "
                    f"which the jobset target sets to each {role.name} replica's JobSet host name so that "
                    f"{role.name} 0 finds itself in PADDLE_MASTER (one pod template serves all {role.count})",
                    "no POD_IP in the rendezvous role's env",
                    "leave POD_IP out, or use the kubeflow or volcano target (there PADDLE_MASTER carries the pod IP)")]


class TrainerRuntime(NamedTuple):
    """How one trainspec framework maps onto a Kubeflow Trainer v2 ML policy (read by targets/trainjob.py)."""

    policy: str  # mlPolicy key and trainer.kubeflow.org/framework label
    node_roles: tuple[str, ...]  # spec roles whose replicas are the `node` Job's pods, in rank order
    trainer_role: str  # the spec role whose container spec.trainer overrides (ancestor `trainer`)
    reserved_env: tuple[str, ...] = ()  # names Trainer's webhook rejects in trainer.env
    implementations: tuple[str, ...] = ()  # MPI implementations Trainer implements


# framework -> runtime.  Frameworks whose node_roles are all on one `node` Job (torch, jax, xgboost) run
# every node from one pod template: the first role's replica 0 is node 0 (master, coordinator, tracker).
TRAINER_RUNTIMES: dict[str, TrainerRuntime] = {
    "pytorch": TrainerRuntime("torch", ("master", "worker"), "master",
                              ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR",
                               "PET_MASTER_PORT")),
    "mpi": TrainerRuntime("mpi", ("worker",), "launcher",
                          ("OMPI_MCA_orte_default_hostfile", "OMPI_MCA_orte_keep_fqdn_hostnames",
                           "OMPI_MCA_orte_set_default_slots", "OMPI_MCA_plm_rsh_args"), ("OpenMPI",)),
    "jax": TrainerRuntime("jax", ("worker",), "worker"),  # JAX_*: no reserved-name check in Trainer
    "xgboost": TrainerRuntime("xgboost", ("master", "worker"), "master",
                              ("DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER")),
}
TRAINER_OTHER_TARGETS = "jobset, kubeflow, volcano, k8s, helm or compose"
NODE_FRAMEWORKS = {"pytorch": "PyTorch", "xgboost": "XGBoost"}  # master + workers as one `node` Job


JOB_LEVEL = ("image", "workingDir", "restartPolicy", "volumes")  # node settings the spec also has job-wide
JOB_LEVEL_HINT = "set it at the job level"
SAME_HINT = "give the master and workers the same {}"


def one_node_template(plan: JobPlan) -> str:
    return (f"Trainer v2 runs the {NODE_FRAMEWORKS.get(plan.framework, plan.framework)} master and workers from "
            "one pod template (its `node` Job)")


def _node_settings(role: RolePlan) -> dict:
    """The role's pod settings one shared `node` template must agree on (torch), by spec key."""
    return {"image": role.image, "workingDir": role.working_dir, "restartPolicy": role.restart_policy,
            "resources": role.resources, "volumes": role.volumes, "initContainers": role.init_containers,
            "lifecycle": role.lifecycle, "probes": role.probes,
            # spec v1.1's pod settings (the job's with the role's over them)
            "imagePullPolicy": role.pod.image_pull_policy, "serviceAccountName": role.pod.service_account_name,
            "nodeSelector": role.pod.node_selector, "tolerations": role.pod.tolerations,
            "affinity": role.pod.affinity, "securityContext": role.pod.security_context,
            "podSecurityContext": role.pod.pod_security_context, "podLabels": role.pod.pod_labels,
            "podAnnotations": role.pod.pod_annotations, "priorityClassName": role.pod.priority_class_name}


def _env_path(role: RolePlan, name: str) -> tuple:
    value = next((v for n, v in role.sources.env if n == name), None)
    return value.path if isinstance(value, Text) else ("spec", "roles", role.name, "env")


def _text_difference(role: RolePlan, a: Rendered, b: Rendered) -> tuple[str, tuple] | None:
    """(field, spec path in `role`) of the first command / args item or env var where `a` and `b` differ."""
    for key in ("command", "args"):
        items_a, items_b, sources = getattr(a, key), getattr(b, key), getattr(role.sources, key)
        if items_a != items_b:
            i = next((i for i, (x, y) in enumerate(zip(items_a or (), items_b or ())) if x != y), 0)
            return key, sources[i].path if sources and i < len(sources) else ("spec", "roles", role.name, key)
    if a.env != b.env:
        differing = [y for x, y in zip(a.env, b.env) if x != y] + list(b.env[len(a.env):]) + list(a.env[len(b.env):])
        return "env", _env_path(role, differing[0].name)
    return None


def _shared_nodes(plan: JobPlan) -> list[Problem]:
    master, worker = plan.role("master"), plan.role("worker")
    if master is None or worker is None or not worker.count:
        return []
    out = []
    ours, theirs = _node_settings(master), _node_settings(worker)
    for key in ours:
        if ours[key] != theirs[key]:
            path = worker.restart_path if key == "restartPolicy" else ("spec", "roles", "worker", key)
            out.append(Problem(path, f"target trainjob: {one_node_template(plan)}, but their {key} differ",
                               "the same settings for master and worker",
                               f"{JOB_LEVEL_HINT if key in JOB_LEVEL else SAME_HINT.format(key)}, or use the jobset "
                               "or kubeflow target", True))
    scheme = scheme_for("trainjob", plan.framework)
    m, w = master.renders.get(scheme), worker.renders.get(scheme)
    if m is not None and w is not None:
        found = _text_difference(worker, m.of(0), w.of(0))
        if found is None and not w.uniform:
            found = _text_difference(worker, w.of(0), w.of(1))
        if found is not None:
            key, path = found
            out.append(Problem(path, f"target trainjob: {one_node_template(plan)}, but their {key} render differently "
                                     "(a {{ role }} or {{ index }} template, or a per-role value)",
                               "the same text for master and worker", "use the jobset or kubeflow target", True))
    return out


def trainjob(plan: JobPlan) -> list[Problem]:
    if plan.framework == "generic":
        return generic_refused(plan, "trainjob", "Kubeflow Trainer v2 has no runtime for framework: generic")
    if plan.elastic is not None:
        return _elastic(plan, "trainjob")
    runtime = TRAINER_RUNTIMES.get(plan.framework)
    if runtime is None:
        known = ", ".join(sorted(r.policy for r in TRAINER_RUNTIMES.values()))
        return [Problem(("spec", "framework"),
                        f"target trainjob: Kubeflow Trainer v2 has no runtime for {plan.framework} (trainspec maps: "
                        f"{known})",
                        "a framework with a Trainer v2 runtime", f"use the {TRAINER_OTHER_TARGETS} target", True)]
    out: list[Problem] = []
    for role in plan.roles:
        out += _job_pods_always(role, "trainjob", "Trainer's Job pods", "use OnFailure", True)
        if role.container_name or plan.container_name != CONTAINER_NAME[plan.framework]:
            out.append(Problem(_container_path(role), f"target trainjob: Trainer v2 runs the container named "
                               f"'node' (its runtime's; the TrainJob overrides that one), not {role.container(plan)!r}",
                               "no containerName", "remove containerName, or use the jobset, kubeflow or volcano "
                               "target"))
            break
    if runtime.implementations and plan.mpi_implementation not in runtime.implementations:
        out.append(Problem(("spec", "mpi", "implementation"),
                           f"target trainjob: Trainer v2 implements only {', '.join(runtime.implementations)}, "
                           f"not {plan.mpi_implementation}", " or ".join(runtime.implementations),
                           "use the kubeflow (mpi-operator) or jobset target", True))
    if plan.framework in NODE_FRAMEWORKS:
        out += _shared_nodes(plan)
    else:
        # every role but the trainer shares one template per role (the trainer step is one pod)
        out += shared_template_problems(plan, "trainjob", "a Trainer replicatedJob has one pod template for all "
                                                          "of its replicas")
    trainer = plan.role(runtime.trainer_role)
    if trainer is not None:
        for name, _ in trainer.sources.env:
            if name in runtime.reserved_env:
                out.append(Problem(_env_path(trainer, name), f"target trainjob: Trainer v2 sets {name} itself and "
                                   "rejects it in the TrainJob's env", "another variable name"))
    return out


CHECKS: dict[str, Callable[[JobPlan], list[Problem]]] = {
    "kubeflow": kubeflow,
    "volcano": volcano,
    "jobset": jobset,
    "trainjob": trainjob,
}
