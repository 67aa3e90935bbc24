"""JobSpec -> JobPlan: names, addresses, the environment and templated commands per replica."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ErrorSink
from .frameworks import (CONTAINER_NAME, DEFAULT_RESTART, FRAMEWORK_DEFAULT_RESTART, HOSTFILE_KEY, MPI_WORKER_COMMAND,
                         TF_CLUSTER_KEY, env_role, framework_env, hosts_key, mpi_hostfile, success_rule, tf_cluster)
from .model import DEFAULT_PORT, JobSpec, RoleSpec
from .plan import EnvVar, JobPlan, Replica, RolePlan, user_var
from .templating import TemplateError, Templates, has_template


class JobContext:
    """The `job` object templates see (`job.name`, `job.namespace`)."""

    def __init__(self, name: str, namespace: str):
        self.name = name
        self.namespace = namespace


def build_plan(spec: JobSpec, sink: ErrorSink) -> JobPlan | None:
    framework = spec.framework
    job = spec.name
    counts = {role.name: role.replicas for role in spec.roles}
    ports = {role.name: role.port or spec.port or DEFAULT_PORT[framework] for role in spec.roles}
    hosts = {role.name: [f"{job}-{role.name}-{i}:{ports[role.name]}" for i in range(role.replicas)]
             for role in spec.roles}

    topology: dict[str, str] = {hosts_key(role): ",".join(addresses) for role, addresses in hosts.items()}
    slots = None
    if framework == "tensorflow":
        topology[TF_CLUSTER_KEY] = tf_cluster(hosts)
    if framework == "mpi":
        worker = spec.role("worker")
        slots = spec.slots_per_worker or (worker.resources.gpu if worker and worker.resources.gpu else 1)
        worker_hosts = [f"{job}-worker-{i}" for i in range(counts.get("worker", 0))]
        topology[HOSTFILE_KEY] = mpi_hostfile(worker_hosts, slots, spec.mpi_implementation)

    templates = Templates()
    job_ctx = JobContext(job, spec.namespace)
    role_plans = []
    for role in spec.roles:
        role_plans.append(_role_plan(spec, role, counts, ports, hosts, slots, templates, job_ctx, sink))
    if sink.errors:
        return None
    decider, rule = success_rule(framework, counts, spec.success_policy)
    return JobPlan(
        spec=spec, name=job, namespace=spec.namespace, framework=framework,
        container_name=CONTAINER_NAME[framework], topology_name=f"{job}-topology", topology=topology,
        roles=tuple(role_plans), success_role=decider, success_rule=rule, mpi_slots=slots)


def _restart_policy(spec: JobSpec, role: RoleSpec) -> str:
    return (role.restart_policy or spec.restart_policy
            or DEFAULT_RESTART[spec.framework].get(role.name) or FRAMEWORK_DEFAULT_RESTART[spec.framework])


@dataclass(frozen=True)
class RoleSources:
    """A role's command, args and env as written in the spec (before templating), and where each is."""

    command: tuple[str, ...] | None
    command_path: tuple
    args: tuple[str, ...] | None
    args_path: tuple
    env: list[tuple[str, object, tuple]]  # (name, value, path): the job's env, then the role's over it


def role_sources(spec: JobSpec, role: RoleSpec) -> RoleSources:
    """Which command, args and env a role runs; every target that re-renders templates uses this."""
    role_path = ("spec", "roles", role.name)
    if spec.framework == "mpi" and role.name == "worker":
        # mpi-operator: workers run sshd unless the role says otherwise; the job's command is the launcher's.
        command, command_path = role.command or MPI_WORKER_COMMAND, role_path + ("command",)
        args, args_path = role.args, role_path + ("args",)
    else:
        command, command_path = (role.command, role_path + ("command",)) if role.command is not None else \
            (spec.command, ("spec", "command"))
        args, args_path = (role.args, role_path + ("args",)) if role.args is not None else (spec.args, ("spec", "args"))
    merged: dict[str, tuple[object, tuple]] = {}
    for name, value in spec.env:
        merged[name] = (value, ("spec", "env", name))
    for name, value in role.env:
        merged[name] = (value, role_path + ("env", name))
    env = [(name, value, path) for name, (value, path) in merged.items()]
    return RoleSources(command, command_path, args, args_path, env)


def _role_plan(spec, role, counts, ports, hosts, slots, templates, job_ctx, sink) -> RolePlan:
    framework = spec.framework
    job = spec.name
    sources = role_sources(spec, role)
    command, command_path, args, args_path = sources.command, sources.command_path, sources.args, sources.args_path
    user_env = sources.env
    user_names = {name for name, _, _ in user_env}
    templated = (any(has_template(s) for s in command or ()) or any(has_template(s) for s in args or ())
                 or any(isinstance(v, str) and has_template(v) for _, v, _ in user_env))

    base_env = [EnvVar("TRAINSPEC_JOB", job), EnvVar("TRAINSPEC_ROLE", role.name)]
    counts_env = []
    for other in spec.roles:
        counts_env.append(EnvVar(f"TRAINSPEC_NUM_{env_role(other.name)}", str(counts[other.name])))
        counts_env.append(EnvVar(hosts_key(other.name), topology=hosts_key(other.name)))

    static_user_env = None if templated else [user_var(name, value) for name, value, _ in user_env]
    replicas = []
    failed = False
    for index in range(role.replicas):
        name = f"{job}-{role.name}-{index}"
        if templated and not failed:
            context = {"job": job_ctx, "role": role.name, "index": index, "replicas": role.replicas,
                       "hosts": hosts, "port": ports[role.name]}
            try:
                r_command = _render_list(templates, command, context, command_path)
                r_args = _render_list(templates, args, context, args_path)
                r_env = _render_env(templates, user_env, context)
            except _PathedError as exc:
                sink.add(exc.path, exc.error.message, "", exc.error.hint)
                failed = True
                r_command, r_args, r_env = command, args, []
        else:
            r_command, r_args, r_env = command, args, static_user_env or []
        fw_env = [v for v in framework_env(framework, job, role.name, index, counts, ports, spec.nproc_per_node,
                                           spec.mpi_implementation, slots) if v.name not in user_names]
        env = tuple(base_env + [EnvVar("TRAINSPEC_INDEX", str(index))] + counts_env + fw_env + r_env)
        replicas.append(Replica(role=role.name, index=index, name=name, host=name, port=ports[role.name],
                                command=r_command, args=r_args, env=env))

    return RolePlan(
        name=role.name, image=role.image or spec.image or "", working_dir=role.working_dir or spec.working_dir,
        port=ports[role.name], restart_policy=_restart_policy(spec, role), resources=role.resources,
        volumes=spec.volumes, init_containers=role.init_containers, lifecycle=role.lifecycle, probes=role.probes,
        replicas=tuple(replicas))


class _PathedError(Exception):
    def __init__(self, path: tuple, error: TemplateError):
        self.path = path
        self.error = error


def _render_list(templates: Templates, items, context: dict, path: tuple):
    if items is None:
        return None
    out = []
    for i, item in enumerate(items):
        try:
            out.append(templates.render(item, context))
        except TemplateError as exc:
            raise _PathedError(path + (i,), exc) from None
    return tuple(out)


def _render_env(templates: Templates, user_env, context: dict) -> list[EnvVar]:
    out = []
    for name, value, path in user_env:
        if isinstance(value, str):
            try:
                value = templates.render(value, context)
            except TemplateError as exc:
                raise _PathedError(path, exc) from None
        out.append(user_var(name, value))
    return out
