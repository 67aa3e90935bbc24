"""The k8s target's host names: pod hostname `<job>-<role>-<i>` + subdomain `<job>` (spec v1.3).

One Indexed Job per role named `<job>-<role>` (the role's taskName when set): the Job controller names
pod i's host `<job>-<role>-<i>`; the pods' `subdomain` is the job's one headless Service, `<job>`, so
replica i is `<job>-<role>-<i>.<job>` (a StatefulSet per role, for restartPolicy Always, names its pods
the same).  The same names as the volcano target's svc plugin: the planner renders them once.

PyTorch / XGBoost workers beside a master have RANK = index + 1 (the master is rank 0), which the downward
API cannot add.  When the role's command is known, its one pod template starts with the rank prelude
(`rank_prelude`): `/bin/sh -c SCRIPT <command...>`, where SCRIPT exports RANK (and PyTorch's PET_NODE_RANK)
as TRAINSPEC_INDEX + 1 and `exec`s the role's own command with its args, unchanged; the image needs a
POSIX `/bin/sh`.  With no command (the image's entry point) the prelude has nothing to `exec`: the role
stays one object per replica (`Shape.per_replica`), and checks.py warns.  Here, not in render.py, because
the chart (targets/helm/chart_rules.py) and the importer (recognising the prelude) read the same script.
"""

from typing import NamedTuple

from trainspec.compiler.kube import escape_references
from trainspec.compiler.plan import JobPlan, RolePlan
from trainspec.compiler.schemes import NamingScheme

from ..volcano.scheme import SUBDOMAIN

INDEXED = SUBDOMAIN


def scheme_for(framework: str) -> NamingScheme:
    return INDEXED


# Roles whose RANK is index + 1 (the master is rank 0): the downward API cannot give it
RANKED_ROLES = {"pytorch": ("worker",), "xgboost": ("worker",)}
# The variables each framework sets to that rank (CONVENTIONS.md: the training operator's RANK, PET_NODE_RANK)
RANK_VARIABLES = {"pytorch": ("RANK", "PET_NODE_RANK"), "xgboost": ("RANK",)}
# The rank prelude's script as the shell reads it: `{exports}` is `NAME=$((TRAINSPEC_INDEX + 1))` per variable.
# `sh -c SCRIPT ARG0 ARGS...` runs SCRIPT with $0 = ARG0 and "$@" = ARGS (POSIX sh -c), so `exec "$0" "$@"`
# runs the container's command and args exactly as the kubelet would have without the prelude.
RANK_SCRIPT = 'export {exports}; exec "$0" "$@"'
RANK_VALUE = "$((TRAINSPEC_INDEX + 1))"
SHELL = ("/bin/sh", "-c")


class Shape(NamedTuple):
    """How a role's replicas become objects: one for the role (index from the pod) or one per replica.

    Here, not in render.py, because the emulator runs a spec as this target's objects would
    (emulator/readers/plan.py: the backoff each shape gives) and may not import a renderer."""

    per_replica: bool
    always: bool  # restartPolicy Always: a StatefulSet (or per replica a Deployment), not a Job


def ranked(plan: JobPlan, role: RolePlan) -> bool:
    """A PyTorch / XGBoost worker beside its master: RANK is index + 1."""
    return role.name in RANKED_ROLES.get(plan.framework, ()) and plan.elastic is None


def rank_names(plan: JobPlan, role: RolePlan) -> tuple[str, ...]:
    """The variables a role of several replicas must get as index + 1 at start: its framework's rank variables
    the spec does not set itself (the user's value wins, as on every target); () for any other role."""
    if role.count <= 1 or not ranked(plan, role):
        return ()
    taken = {name for name, _ in role.sources.env}
    return tuple(name for name in RANK_VARIABLES[plan.framework] if name not in taken)


def command_known(role: RolePlan) -> bool:
    """The spec sets the role's command (an empty one is the image's entry point, as in Kubernetes)."""
    return bool(role.sources.command)


def rank_script(names: tuple[str, ...]) -> str:
    """The prelude's script in kubelet text (`$$` escapes `$`: expanded, it is RANK_SCRIPT's text exactly)."""
    return escape_references(RANK_SCRIPT.format(exports=" ".join(f"{name}={RANK_VALUE}" for name in names)))


def rank_prelude(plan: JobPlan, role: RolePlan) -> list[str]:
    """What goes before the role's command: [] for a role that needs none (or cannot have one: no command)."""
    names = rank_names(plan, role)
    if not names or not command_known(role):
        return []
    return [*SHELL, rank_script(names)]


def strip_rank_prelude(command: object, framework: str) -> list[str] | None:
    """The command under a rank prelude this target wrote (`command` as written in a k8s.yaml), else None."""
    if not isinstance(command, list) or len(command) < 4 or tuple(command[:2]) != SHELL:
        return None
    every = RANK_VARIABLES.get(framework, ())
    subsets = [tuple(n for i, n in enumerate(every) if mask >> i & 1) for mask in range(1, 1 << len(every))]
    if command[2] not in {rank_script(names) for names in subsets}:
        return None
    return list(command[3:])


def shape(plan: JobPlan, role: RolePlan) -> Shape:
    rendered = role.renders[INDEXED.name]
    one_template = rendered.uniform or rendered.shared is not None
    ranks_alone = bool(rank_names(plan, role)) and not command_known(role)  # no command for a prelude to exec
    return Shape(role.count > 1 and (ranks_alone or not one_template), role.restart_policy == "Always")
