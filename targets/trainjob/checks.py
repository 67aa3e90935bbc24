"""What the trainjob target cannot express: frameworks, settings and text Kubeflow Trainer v2's runtimes
cannot carry, and the warning for MPI's SSH key under root."""

from trainspec.compiler.frameworks import CONTAINER_NAME
from trainspec.compiler.limits import LimitProblem
from trainspec.compiler.plan import JobPlan
from trainspec.compiler.plan_limits import kubernetes_limits, output_size
from trainspec.compiler.target_rules import Problem

from ..shared_checks import container_path, env_path, generic_refused, job_pods_always, shared_template_problems
from .nodes import shared_nodes
from .runtimes import NODE_FRAMEWORKS, TRAINER_OTHER_TARGETS, TRAINER_RUNTIMES
from .scheme import scheme_for

TRAINJOB_MAX_ITEMS = 128  # trainer CRD spec.trainer.{command,args,env} maxItems
TRAINJOB_IMAGE_MAX = 500  # trainer CRD spec.trainer.image maxLength


def check(plan: JobPlan) -> list[Problem]:
    if plan.trainjob is not None:  # v1.3: on the cluster's runtime, a TrainJob only
        from .on_runtime import checks

        return checks(plan)
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
        out += job_pods_always(role, "trainjob", "Trainer's Job pods", "use OnFailure", True)
        if role.container_name or plan.container_name != CONTAINER_NAME[plan.framework]:
            out.append(Problem(container_path(role), f"target trainjob: Trainer v2 runs the container named "
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
        out += shared_nodes(plan)
    else:
        # every role but the trainer shares one template per role (the trainer step is one pod)
        out += shared_template_problems(plan, "trainjob", scheme_for(plan.framework),
                                        "a Trainer replicatedJob has one pod template for all of its replicas")
    trainer = plan.role(runtime.trainer_role)
    if trainer is not None:
        for name, _ in trainer.sources.env:
            if name in runtime.reserved_env:
                out.append(Problem(env_path(trainer, name), f"target trainjob: Trainer v2 sets {name} itself and "
                                   "rejects it in the TrainJob's env", "another variable name"))
    return out



def _elastic(plan: JobPlan, target: str) -> list[Problem]:
    """Elastic PyTorch (spec v1.1): Trainer v2 has no elastic policy (CONVENTIONS-V2.md: `torch.elasticPolicy`
    was removed in v2.2.0; its torch runtime fixes numNodes)."""
    if plan.framework != "pytorch" or plan.elastic is None:
        return []
    return [Problem(("spec", "pytorch", "elastic"), f"target {target}: Kubeflow Trainer v2 has no elastic "
                    "PyTorch (torch.elasticPolicy was removed in v2.2.0; the runtime fixes numNodes)",
                    "no pytorch.elastic", "use the kubeflow, jobset, volcano, k8s, helm or compose target", True)]


def trainer_mpi_root_key(plan: JobPlan) -> list[Problem]:
    """Trainer's MPI plugin mounts the SSH private key `id_rsa` with mode 0640 (CONVENTIONS-V2 §3.4), owned by
    root; OpenSSH refuses a key its own user owns that the group can read ("UNPROTECTED PRIVATE KEY FILE"), so
    mpirun's ssh to the workers fails when the pods run as root (a non-root user in the fsGroup reads it).
    The spec has no pod securityContext yet, so every MPI job is warned (once it has one, warn only when
    runAsUser is unset or 0)."""
    if plan.framework != "mpi" or plan.trainjob is not None:  # the cluster's runtime decides its user
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


def crd_limits(plan: JobPlan) -> list[LimitProblem]:
    """kube_rules trainjob-crd: the TrainJob CRD's maxLength and maxItems on spec.trainer."""
    out: list[LimitProblem] = []
    for role in plan.roles:
        base = ("spec", "roles", role.name)
        image = role.image or ""
        if len(image) > TRAINJOB_IMAGE_MAX:
            out.append(LimitProblem(
                (base + ("image",), ("spec", "image")),
                f"the image of the {role.name} is {len(image)} characters; the TrainJob CRD allows at most "
                f"{TRAINJOB_IMAGE_MAX} (spec.trainer.image maxLength)", f"at most {TRAINJOB_IMAGE_MAX} characters",
                "the other targets take longer image references (up to the API server's own limits)"))
        for key, items in (("command", role.sources.command), ("args", role.sources.args), ("env", role.sources.env)):
            if items is not None and len(items) > TRAINJOB_MAX_ITEMS:
                out.append(LimitProblem(
                    (base + (key,), ("spec", key)),
                    f"the {role.name}'s {key} has {len(items)} items; the TrainJob CRD allows at most "
                    f"{TRAINJOB_MAX_ITEMS} (spec.trainer.{key} maxItems)", f"at most {TRAINJOB_MAX_ITEMS} items",
                    "put them in a file or a script in the image; the other targets take more"))
    return out


def limits(plan: JobPlan) -> list[LimitProblem]:
    return kubernetes_limits(plan) + crd_limits(plan) + output_size(plan, "trainjob", per_replica=False)
