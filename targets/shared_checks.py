"""Checks several targets share: one pod template per role, Job pods, roles the operators fix.

Each target's own checks are in its folder (targets/<name>/checks.py); they return
`Problem`s (compiler/target_rules.py) the planner puts at the spec's positions.
"""

from trainspec.compiler.plan import JobPlan, RolePlan, Text
from trainspec.compiler.schemes import NamingScheme
from trainspec.compiler.target_rules import Problem

TOPOLOGY_HINT = ("read the index at runtime instead: $TRAINSPEC_INDEX (every target sets it), "
                 "TF_CONFIG's task.index, or RANK / DMLC_WORKER_ID")


def per_replica_problem(role: str, path: tuple, target: str, why: str) -> Problem:
    """A template that renders differently per replica where the target shares one pod template."""
    message = (f"target {target}: renders differently for each {role} replica (it uses {{{{ index }}}}), "
               f"but {why}")
    return Problem(path, message, "the same text for every replica of a role", TOPOLOGY_HINT)


def shared_template_problems(plan: JobPlan, target: str, scheme: NamingScheme, why: str) -> list[Problem]:
    """For a target that gives all replicas of a role one pod template: each role whose text differs
    per replica and cannot be rebuilt from $(TRAINSPEC_INDEX) (RoleRender.shared is None)."""
    out = []
    for role in plan.roles:
        render = role.renders.get(scheme.name)
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


def container_path(role: RolePlan) -> tuple:
    return ("spec", "roles", role.name, "containerName") if role.container_name else ("spec", "containerName")


def env_path(role: RolePlan, name: str) -> tuple:
    value = next((v for n, v in role.sources.env if n == name), None)
    return value.path if isinstance(value, Text) else ("spec", "roles", role.name, "env")


def job_pods_always(role: RolePlan, target: str, what: str, hint: str, unsupported: bool = False) -> list[Problem]:
    """JobSet and Trainer v2 run a role's pods from one Job template, and a Job's pods cannot restart Always."""
    if role.restart_policy != "Always":
        return []
    return [Problem(role.restart_path, f"target {target}: {what} cannot use restartPolicy Always",
                    "Never, OnFailure or ExitCode", hint, unsupported)]
