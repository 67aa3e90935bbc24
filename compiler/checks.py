"""What each target cannot express, checked where the spec's positions are known.

The planner runs every target's check on the finished plan and keeps the
problems per target (`JobPlan.target_errors`), each with its file:line:column;
`load_plans(..., targets=...)` raises those of the targets asked for, and a
target's `render` raises them too (`JobPlan.check`), so no target needs the spec
or its positions.  A new target adds a function to CHECKS.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .plan import JobPlan
from .schemes import scheme_for

TOPOLOGY_HINT = ("read the index at runtime instead: $TRAINSPEC_INDEX (every target sets it), "
                 "TF_CONFIG's task.index, or RANK / DMLC_WORKER_ID")
MPI_OPERATOR_RESTART_POLICIES = ("Never", "OnFailure")  # mpi-operator's validation accepts no others


class Problem(NamedTuple):
    path: tuple
    message: str
    expected: str = ""
    hint: str = ""


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


def kubeflow(plan: JobPlan) -> list[Problem]:
    out = []
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


def volcano(plan: JobPlan) -> list[Problem]:
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

    return [role.name for role in plan.roles if role.count and role.name in LINGERING_ROLES.get(plan.framework, ())]


def plain_kubernetes_caveat(plan: JobPlan) -> list[Problem]:
    """k8s / helm: no controller ends the job, so servers outlive it (a warning, not an error)."""
    roles = lingering_roles(plan)
    if not roles or plan.active_deadline_seconds is not None:
        return []
    return [Problem(("spec", "roles", roles[0]),
                    f"on a plain cluster nothing stops the {' and '.join(roles)} replicas when "
                    f"{plan.success.text}: they keep running, and holding their resources, forever",
                    "spec.activeDeadlineSeconds, or a target whose controller ends the job",
                    "compile for jobset, kubeflow or volcano, or set activeDeadlineSeconds")]


# Warnings per target: the output is valid, but the user should know (printed once per job).
WARNINGS: dict[str, Callable[[JobPlan], list[Problem]]] = {
    "k8s": plain_kubernetes_caveat,
    "helm": plain_kubernetes_caveat,
}


CHECKS: dict[str, Callable[[JobPlan], list[Problem]]] = {
    "kubeflow": kubeflow,
    "volcano": volcano,
}
