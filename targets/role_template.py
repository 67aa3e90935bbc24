"""Shared by the targets that write one pod template per role (kubeflow, volcano, jobset, trainjob, and k8s
for its Indexed Jobs): one pod template per role.

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

from trainspec.compiler.frameworks import HOSTFILE_KEY, MPI_HOSTFILE_PATH, env_role
from trainspec.compiler.plan import JobPlan, Rendered, Replica, RolePlan, RoleRender
from trainspec.compiler.schemes import NamingScheme

from . import common

INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"  # an Indexed Job's pod: its index (TRAINSPEC_INDEX)


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


# --- a role's text on one pod template (jobset, trainjob, k8s) --------------------------------------

def user_env_names(role: RolePlan) -> set[str]:
    return {name for name, _ in role.sources.env}


def role_texts(plan: JobPlan, role: RolePlan, scheme: NamingScheme):
    """(values, command, args, user env entries) for the role's one pod template.

    `values` is replica 0's rendering with `scheme`'s host names (the target's scheme.py), for
    common.main_container;
    command / args are None when `values` already holds the right text, else kubelet text with
    `$(TRAINSPEC_INDEX)`.  A per-replica text with no such form was reported by
    the target's checks.py (`plan.check` raised it before rendering).
    """
    rendered = role.renders[scheme.name]
    values = rendered.of(0)
    if rendered.uniform:
        return values, None, None, common.env_list(values.env, plan.topology_name)
    shared = rendered.shared
    assert shared is not None, "the target's checks.py reports roles without a shared form"
    return (values, None if shared.command is None else list(shared.command),
            None if shared.args is None else list(shared.args), common.env_list(shared.env, plan.topology_name))


# --- MPI: the ssh keys and the launcher's hostfile (k8s, jobset) -----------------------------------

def ssh_secret_name(plan: JobPlan) -> str:
    return f"{plan.name}-ssh"


def mpi_mounts(plan: JobPlan, role: RolePlan) -> tuple[list[dict], list[dict]]:
    """(volumes, mounts) for the ssh keys and, on the launcher, the hostfile."""
    if plan.framework != "mpi":
        return [], []
    volumes = [{"name": "ssh-auth", "secret": {
        "secretName": ssh_secret_name(plan), "defaultMode": 0o600,
        "items": [{"key": "ssh-privatekey", "path": "id_rsa"}, {"key": "ssh-publickey", "path": "id_rsa.pub"},
                  {"key": "ssh-publickey", "path": "authorized_keys"}]}}]
    mounts = [{"name": "ssh-auth", "mountPath": plan.mpi_ssh_path}]
    if role.name == "launcher":
        volumes.append({"name": "mpi-job-config", "configMap": {
            "name": plan.topology_name, "items": [{"key": HOSTFILE_KEY, "path": "hostfile"}]}})
        mounts.append({"name": "mpi-job-config", "mountPath": MPI_HOSTFILE_PATH.rsplit("/", 1)[0]})
    return volumes, mounts
