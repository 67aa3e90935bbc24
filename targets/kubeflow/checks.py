"""What the kubeflow target cannot express: the operators' own rules on names, restarts and pod templates."""

from trainspec.compiler.frameworks import CONTAINER_NAME
from trainspec.compiler.limits import HOST_LISTS, LimitProblem
from trainspec.compiler.plan import JobPlan
from trainspec.compiler.plan_limits import annotations_size, config_map_size, output_size
from trainspec.compiler.target_rules import Problem

from ..shared_checks import container_path, generic_refused, shared_template_problems
from .scheme import scheme_for

MPI_OPERATOR_RESTART_POLICIES = ("Never", "OnFailure")  # mpi-operator's validation accepts no others


def operator_container_names(plan: JobPlan) -> list[Problem]:
    """The training operator's webhooks require its default container (it injects the env and finds the
    port there, CONVENTIONS.md §1.0); mpi-operator takes the first container, whatever its name."""
    from trainspec.compiler.frameworks import OPERATOR_CONTAINER_FRAMEWORKS

    if plan.framework not in OPERATOR_CONTAINER_FRAMEWORKS:
        return []
    want = CONTAINER_NAME[plan.framework]
    for role in plan.roles:
        if role.container(plan) != want:
            return [Problem(container_path(role), f"target kubeflow: the training operator requires the main "
                            f"container to be named {want!r} (it injects the {plan.framework} variables and finds "
                            f"the port there), not {role.container(plan)!r}", repr(want),
                            "remove containerName, or use the jobset, volcano or k8s target, which keep any name")]
    return []


def check(plan: JobPlan) -> list[Problem]:
    if plan.framework == "generic":
        return generic_refused(plan, "kubeflow", "the Kubeflow training operator has no kind for framework: generic "
                               "(its kinds fix the roles and inject their framework's variables)")
    out = operator_container_names(plan)
    for role in plan.roles:
        if plan.framework == "mpi" and role.restart_policy not in MPI_OPERATOR_RESTART_POLICIES:
            out.append(Problem(role.restart_path, f"target kubeflow: mpi-operator does not accept restartPolicy "
                                                  f"{role.restart_policy!r} for the {role.name}", "Never or OnFailure",
                               "use OnFailure with backoffLimit, or the k8s / volcano target"))
    return out + shared_template_problems(plan, "kubeflow", scheme_for(plan.framework),
                                          "a Kubeflow replica spec has one pod template for all of its replicas")


def limits(plan: JobPlan) -> list[LimitProblem]:
    """The operators create the pods: the topology ConfigMap holds the host lists only, and the queue is a field."""
    return config_map_size(plan, HOST_LISTS) + annotations_size(plan) + output_size(plan, "kubeflow", per_replica=False)
