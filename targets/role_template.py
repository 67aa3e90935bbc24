"""Shared by the targets whose controllers create the pods (kubeflow, volcano, jobset, trainjob): one pod
template per role.

Operators take one pod template per replica type (Kubeflow) or task (Volcano)
and create the pods themselves, so the template must serve every replica of a
role.  Per-replica values reach the program at runtime instead: `TRAINSPEC_INDEX`
through the downward API, and the operator's own variables.  The planner has
rendered the spec's templates with each target's host names
(`RolePlan.renders[scheme]`, the target's scheme.py) and found the shared form
where there is one; what a target cannot express was reported by its checks
(targets/<name>/checks.py, run by the planner), with positions.
"""

from __future__ import annotations

from trainspec.compiler.frameworks import env_role
from trainspec.compiler.plan import JobPlan, Rendered, Replica, RolePlan, RoleRender
from trainspec.compiler.schemes import NamingScheme

from . import common


def role_render(role: RolePlan, scheme: NamingScheme) -> RoleRender:
    """The role's templates rendered with the host names of `scheme`."""
    return role.renders[scheme.name]


def topology_data(plan: JobPlan, hosts: dict[str, list[str]]) -> dict[str, str]:
    """TRAINSPEC_HOSTS_<ROLE> for each role, comma-separated host:port."""
    return {f"TRAINSPEC_HOSTS_{env_role(role.name)}": ",".join(hosts[role.name]) for role in plan.roles}


def base_env(plan: JobPlan, role: RolePlan, index_entry: dict, topology_name: str) -> list[dict]:
    """TRAINSPEC_JOB / ROLE / INDEX / NUM_<ROLE> / HOSTS_<ROLE>, in the plan's order."""
    env = [{"name": "TRAINSPEC_JOB", "value": plan.name},
           {"name": "TRAINSPEC_ROLE", "value": role.name},
           {"name": "TRAINSPEC_INDEX", **index_entry}]
    for other in plan.roles:
        key = f"TRAINSPEC_HOSTS_{env_role(other.name)}"
        env.append({"name": f"TRAINSPEC_NUM_{env_role(other.name)}", "value": str(other.count)})
        env.append({"name": key, "valueFrom": {"configMapKeyRef": {"name": topology_name, "key": key}}})
    return env


def field_ref(path: str) -> dict:
    return {"valueFrom": {"fieldRef": {"fieldPath": path}}}


def role_labels(plan: JobPlan, role: RolePlan) -> dict[str, str]:
    """Pod-template labels: one template serves every replica, so no trainspec.dev/index."""
    labels = common.job_labels(plan, role.name)
    labels["trainspec.dev/role"] = role.name
    return labels


def role_container(plan: JobPlan, role: RolePlan, env: list[dict], values: Rendered, name: str | None = None) -> dict:
    """The role's training container (common.main_container) with the target's rendering.

    A variable the spec sets replaces the one the target injects under the same name (the user's value
    wins, as on every target): a container's env holds each name once, and an operator's CRD refuses
    a name twice (its env is a list-map keyed by name)."""
    env = user_wins(env, {name for name, _ in role.sources.env})
    stub = Replica(role=role.name, index=0, name="", host="", port=role.port,
                   command=values.command, args=values.args, env=())
    return common.main_container(plan, role, stub, env, name=name)


def user_wins(env: list[dict], user: set[str]) -> list[dict]:
    """`env` with only the last entry of each name the user set (the user's entries come after the target's)."""
    if not user:
        return env
    last = {entry["name"]: i for i, entry in enumerate(env) if entry["name"] in user}
    return [entry for i, entry in enumerate(env) if entry["name"] not in user or last[entry["name"]] == i]
