"""The k8s target's host names: pod hostname `<job>-<role>-<i>` + subdomain `<job>` (spec v1.3).

One Indexed Job per role named `<job>-<role>` (the role's taskName when set): the Job controller names
pod i's host `<job>-<role>-<i>`; the pods' `subdomain` is the job's one headless Service, `<job>`, so
replica i is `<job>-<role>-<i>.<job>` (a StatefulSet per role, for restartPolicy Always, names its pods
the same).  The same names as the volcano target's svc plugin: the planner renders them once.
"""

from typing import NamedTuple

from trainspec.compiler.plan import JobPlan, RolePlan
from trainspec.compiler.schemes import NamingScheme

from ..volcano.scheme import SUBDOMAIN

INDEXED = SUBDOMAIN


def scheme_for(framework: str) -> NamingScheme:
    return INDEXED


# Roles whose RANK is index + 1 (the master is rank 0): one pod template cannot give it
RANKED_ROLES = {"pytorch": ("worker",), "xgboost": ("worker",)}


class Shape(NamedTuple):
    """How a role's replicas become objects: one for the role (index from the pod) or one per replica.

    Here, not in render.py, because the emulator runs a spec as this target's objects would
    (emulator/readers/plan.py: the backoff each shape gives) and may not import a renderer."""

    per_replica: bool
    always: bool  # restartPolicy Always: a StatefulSet (or per replica a Deployment), not a Job


def ranked(plan: JobPlan, role: RolePlan) -> bool:
    """A PyTorch / XGBoost worker beside its master: RANK is index + 1."""
    return role.name in RANKED_ROLES.get(plan.framework, ()) and plan.elastic is None


def shape(plan: JobPlan, role: RolePlan) -> Shape:
    rendered = role.renders[INDEXED.name]
    one_template = rendered.uniform or rendered.shared is not None
    return Shape(role.count > 1 and (ranked(plan, role) or not one_template), role.restart_policy == "Always")
