"""JobSpec -> JobPlan: names, addresses, the environment and templated commands per replica."""

from __future__ import annotations

from .errors import ErrorSink, SpecError, SpecErrors
from .frameworks import (
    CONTAINER_NAME,
    DEFAULT_RESTART,
    FRAMEWORK_DEFAULT_RESTART,
    HOSTFILE_KEY,
    MPI_WORKER_COMMAND,
    TF_CLUSTER_KEY,
    env_role,
    framework_env,
    generic_success,
    hosts_key,
    mpi_hostfile,
    start_order,
    success_rule,
    tf_cluster,
)
from .model import DEFAULT_PORT, GENERIC, ConfigMapRef, JobSpec, PodSettings, RoleSpec, SecretRef
from .plan import Cleanup, EnvVar, JobPlan, Replica, Restart, RolePlan, RoleSources, Text
from .rendering import JobContext, describe, render_role
from .runtimes import Runtime, how_to_give, lookup, ref_of, shipped, shipped_note
from .schemes import BASE, SERVICE, NamingScheme
from .target_rules import Problem, TargetRules
from .templating import Templates

__all__ = ["JobContext", "build_plan", "role_sources", "schemes_of"]


def build_plan(spec: JobSpec, sink: ErrorSink, rules: tuple[TargetRules, ...],
               named: bool = True, runtimes: tuple[Runtime, ...] = (), runtime_given: bool = False) -> JobPlan | None:
    """The plan, or None with the problems in `sink`.

    `rules`: the targets to plan for (their naming schemes, checks, warnings and limits), handed in by
    the caller (trainspec.targets: the compiler imports no target).  `named`: the user named them
    (`plan.targets` records them, and `plan.check` refuses any other); else they are every target.
    `runtimes`: the Trainer runtimes given with --runtime (`runtime_given`: the option was used): a
    v1.3 job on a runtime gets its definition (`plan.runtime`) from them, else from the runtimes Kubeflow
    Trainer ships (a note in `plan.notes` when a target of `rules` expands it); with --runtime, an error
    when it is in neither.
    """
    framework = spec.framework
    job = spec.name
    counts = {role.name: role.replicas for role in spec.roles}
    ports = {role.name: role.port or spec.port or DEFAULT_PORT[framework] for role in spec.roles}
    schemes = schemes_of(framework, rules)
    hosts = {}
    for scheme in schemes.values():
        port = scheme.port
        hosts[scheme.name] = {role.name: [f"{scheme.address_host(job, role.name, role.task_name or role.name, i)}:"
                                          f"{port or ports[role.name]}" for i in range(role.replicas)]
                              for role in spec.roles}

    topology: dict[str, str] = {hosts_key(role): ",".join(addresses) for role, addresses in hosts[BASE].items()}
    slots = None
    if framework == "tensorflow":
        topology[TF_CLUSTER_KEY] = tf_cluster(hosts[BASE])
    if framework == "mpi":
        worker = spec.role("worker")
        slots = spec.slots_per_worker or (worker.resources.gpu if worker and worker.resources.gpu else 1)
        worker_hosts = [f"{job}-worker-{i}" for i in range(counts.get("worker", 0))]
        topology[HOSTFILE_KEY] = mpi_hostfile(worker_hosts, slots, spec.mpi_implementation)

    templates = Templates()
    job_ctx = JobContext(job, spec.namespace, sum(counts.values()))
    scheme_sinks = {scheme: _sink_like(sink) for scheme in schemes if scheme != BASE}
    role_plans = []
    for role in spec.roles:
        role_plans.append(_role_plan(spec, role, counts, ports, hosts, slots, templates, job_ctx, sink, scheme_sinks))
    if sink.errors:
        return None
    runtime = _runtime_of(spec, sink, runtimes, runtime_given, rules)
    notes = _sink_like(sink)
    if runtime is not None and runtime.shipped and any(r.expands_runtime for r in rules):
        notes.add(("spec", "trainjob", "runtime"), shipped_note(runtime))
    plan = JobPlan(
        source=spec.source, name=job, namespace=spec.namespace, framework=framework,
        container_name=spec.container_name or CONTAINER_NAME[framework], topology_name=f"{job}-topology",
        topology=topology, roles=tuple(role_plans),
        success=generic_success(spec.success) if framework == GENERIC else
        success_rule(framework, counts, spec.success_policy),
        labels=dict(spec.labels), annotations=dict(spec.annotations), image=spec.image,
        accelerator=spec.accelerator, volumes=spec.volumes, scheduling=spec.scheduling,
        backoff_limit=spec.backoff_limit, active_deadline_seconds=spec.active_deadline_seconds,
        cleanup=Cleanup(spec.clean_pod_policy, spec.ttl_seconds_after_finished),
        start_order=start_order(framework, counts), success_policy=spec.success_policy,
        nproc_per_node=spec.nproc_per_node, mpi_implementation=spec.mpi_implementation,
        slots_per_worker=spec.slots_per_worker, mpi_slots=slots,
        targets=tuple(r.name for r in rules) if named else None,
        image_pull_secrets=spec.image_pull_secrets, pod=spec.pod, elastic=spec.elastic,
        mpi_ssh_path=spec.ssh_auth_mount_path,
        patches=spec.patches, trainjob=spec.trainjob, generate_name=spec.generate_name,
        runtime=runtime.data if runtime is not None else None, notes=tuple(notes.errors))
    return _with_target_problems(plan, sink, scheme_sinks, rules)


def _sink_like(sink: ErrorSink) -> ErrorSink:
    return ErrorSink(sink.file, sink.positions, sink.key_positions, prefix=sink.prefix)


def schemes_of(framework: str, rules: tuple[TargetRules, ...]) -> dict[str, NamingScheme]:
    """name -> scheme: the base scheme first, then each distinct scheme `rules` use for `framework`."""
    out = {BASE: SERVICE}
    for target in rules:
        scheme = target.scheme(framework)
        out.setdefault(scheme.name, scheme)
    return out


def _with_target_problems(plan: JobPlan, sink: ErrorSink, scheme_sinks: dict[str, ErrorSink],
                          rules: tuple[TargetRules, ...]) -> JobPlan:
    """The plan with target_errors (templates that fail with a target's host names, its checks and
    limits), target_warnings and unsupported filled in."""
    targets: dict[str, ErrorSink] = {}
    unsupported: dict[str, str] = {}
    warnings: dict[str, tuple[SpecError, ...]] = {}
    for target in rules:
        scheme_sink = scheme_sinks.get(target.scheme(plan.framework).name)
        if scheme_sink is not None:
            targets.setdefault(target.name, _sink_like(sink)).errors.extend(scheme_sink.errors)
    for target in rules:
        target_sink = targets.setdefault(target.name, _sink_like(sink))
        for problem in runtime_needed(plan, target) + list(target.checks(plan)):
            target_sink.add(problem.path, problem.message, problem.expected, problem.hint)
            if problem.unsupported:
                unsupported.setdefault(target.name, problem.message)
        for limit in target.limits(plan):
            path = next((p for p in limit.paths if sink.prefix + p in sink.positions), limit.paths[0])
            target_sink.add(path, f"target {target.name}: {limit.message}", limit.expected, limit.hint)
        warn_sink = _sink_like(sink)
        for problem in target.warnings(plan):
            warn_sink.add(problem.path, f"target {target.name}: {problem.message}", problem.expected, problem.hint)
        if warn_sink.errors:
            warnings[target.name] = tuple(warn_sink.errors)
    # SpecErrors sorts and drops duplicates (one template can fail once per role)
    errors = {target: tuple(SpecErrors(target_sink.errors).errors)
              for target, target_sink in targets.items() if target_sink.errors}
    return plan._replace(target_errors=errors, target_warnings=warnings, unsupported=unsupported)


def _runtime_of(spec: JobSpec, sink: ErrorSink, runtimes: tuple[Runtime, ...], given: bool,
                rules: tuple[TargetRules, ...]) -> Runtime | None:
    """The runtime's definition (compiler/runtimes.py `lookup`: --runtime's, else Trainer's shipped one), when
    --runtime was given or a target of `rules` expands it; an error when --runtime was given and neither has it."""
    if spec.trainjob is None or not (given or any(r.expands_runtime for r in rules)):
        return None
    found = lookup(runtimes, spec.trainjob.runtime_ref)
    if found is None and given:
        kind, name = ref_of(spec.trainjob.runtime_ref)
        have = ", ".join(f"{r.kind} {r.name}" for r in runtimes) or "none"
        sink.add(("spec", "trainjob", "runtime"), f"{kind} {name!r} is not among the --runtime files' runtimes "
                 f"({have}) nor the ones Kubeflow Trainer ships", f"a {kind} named {name!r}", how_to_give(kind, name))
    return found


def runtime_needed(plan: JobPlan, target: TargetRules) -> list[Problem]:
    """A spec on a cluster's Trainer runtime (spec.trainjob, v1.3) has its pods in that runtime: a target
    that cannot name the runtime (every one but trainjob) needs the runtime's definition (--runtime, or one
    Kubeflow Trainer ships),
    and expands it as the Trainer controller does (jobset) or cannot write the job at all."""
    if plan.trainjob is None or target.cluster_runtime or (target.expands_runtime and plan.runtime is not None):
        return []
    kind, name = ref_of(plan.trainjob.runtime_ref)
    if target.expands_runtime:
        return [Problem(("spec", "trainjob", "runtime"),
                        f"the job runs on the cluster's {kind} {name!r}, whose definition target {target.name} "
                        "needs to write what the Trainer controller makes of it", f"the {kind} {name!r}",
                        f"{how_to_give(kind, name)}; or compile with --target trainjob (a TrainJob naming the "
                        "runtime)", unsupported=True)]
    if plan.runtime is not None or shipped(kind, name) is not None:  # the expanding targets have it
        return [Problem(("spec", "trainjob", "runtime"),
                        f"the job runs on the cluster's {kind} {name!r}, whose pod template target {target.name} "
                        "cannot hold", "target trainjob, jobset or k8s",
                        "compile with --target trainjob (a TrainJob naming the runtime), or --target jobset or k8s "
                        "(the runtime's JobSet, as the Trainer controller makes it)", unsupported=True)]
    return [Problem(("spec", "trainjob", "runtime"),
                    f"the job runs on the cluster's {kind} {name!r}, whose pod template target {target.name} "
                    "cannot hold", "target trainjob, or jobset or k8s with the runtime's definition",
                    f"compile with --target trainjob (a TrainJob naming the runtime), or --target jobset or k8s and "
                    f"{how_to_give(kind, name)}", unsupported=True)]


def _restart(spec: JobSpec, role: RoleSpec) -> tuple[Restart, tuple]:
    policy = (role.restart_policy or spec.restart_policy
              or DEFAULT_RESTART[spec.framework].get(role.name) or FRAMEWORK_DEFAULT_RESTART[spec.framework])
    path = ("spec", "roles", role.name, "restartPolicy") if role.restart_policy else ("spec", "restartPolicy")
    return Restart(policy, spec.backoff_limit), path


def role_sources(spec: JobSpec, role: RoleSpec, templates: Templates | None = None) -> RoleSources:
    """Which command, args and env a role runs, as written, with where each is."""
    templates = templates or Templates()
    names = tuple(r.name for r in spec.roles)
    role_path: tuple = ("spec", "roles", role.name)
    command: tuple[str, ...] | None
    command_path: tuple
    args_path: tuple
    if spec.framework == "mpi" and role.name == "worker":
        # mpi-operator: workers run sshd when the role sets neither command nor args (its default applies
        # only then); the job's command is the launcher's.
        default = role.command is None and role.args is None
        command, command_path = MPI_WORKER_COMMAND if default else role.command, role_path + ("command",)
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

    def texts(items, path):
        return None if items is None else tuple(describe(templates, s, path + (i,), role.name, names)
                                                for i, s in enumerate(items))

    env: tuple[tuple[str, Text | SecretRef | ConfigMapRef], ...] = tuple(
        (name, describe(templates, value, path, role.name, names) if isinstance(value, str) else value)  # type: ignore[misc]
        for name, (value, path) in merged.items())
    return RoleSources(texts(command, command_path), texts(args, args_path), env)


def _reporter(sink: ErrorSink):
    def report(path: tuple, message: str, hint: str, where: tuple) -> None:
        sink.add(path, message, "", hint, where=where)
    return report


def _role_plan(spec, role, counts, ports, hosts, slots, templates, job_ctx, sink, scheme_sinks) -> RolePlan:
    framework = spec.framework
    job = spec.name
    sources = role_sources(spec, role, templates)
    user_names = {name for name, _ in sources.env}
    renders = {}
    for scheme, role_hosts in hosts.items():
        scheme_sink = sink if scheme == BASE else scheme_sinks[scheme]
        render = render_role(sources, role.name, role.replicas, ports[role.name], job_ctx, role_hosts, templates,
                             _reporter(scheme_sink))
        if render is not None:
            renders[scheme] = render

    base_env = [EnvVar("TRAINSPEC_JOB", job), EnvVar("TRAINSPEC_ROLE", role.name)]
    counts_env = []
    for other in spec.roles:
        counts_env.append(EnvVar(f"TRAINSPEC_NUM_{env_role(other.name)}", str(counts[other.name])))
        counts_env.append(EnvVar(hosts_key(other.name), topology=hosts_key(other.name)))

    base = renders.get(BASE)
    replicas = []
    lists: dict[tuple[str, int], str] = {}  # host lists every replica of the role shares: built once
    for index in range(role.replicas):
        name = f"{job}-{role.name}-{index}"
        values = base.of(index) if base is not None else None
        fw_env = [v for v in framework_env(framework, job, role.name, index, counts, ports, spec.nproc_per_node,
                                           spec.mpi_implementation, slots, spec.elastic, lists)
                  if v.name not in user_names]
        env = tuple(base_env + [EnvVar("TRAINSPEC_INDEX", str(index))] + counts_env + fw_env
                    + list(values.env if values else ()))
        replicas.append(Replica(role=role.name, index=index, name=name, host=name, port=ports[role.name],
                                command=values.command if values else None, args=values.args if values else None,
                                env=env))

    restart, restart_path = _restart(spec, role)
    return RolePlan(
        name=role.name, image=role.image or spec.image or "", working_dir=role.working_dir or spec.working_dir,
        port=ports[role.name], restart=restart, resources=role.resources,
        volumes=spec.volumes + role.volumes, init_containers=role.init_containers, lifecycle=role.lifecycle,
        probes=role.probes, replicas=tuple(replicas), sources=sources, restart_path=restart_path, renders=renders,
        pod=pod_settings(spec, role), task_name=role.task_name or "", container_name=role.container_name or "")


def _merge(job, role):
    """A role's value over the job's: mappings merge per key (recursively), anything else replaces."""
    if isinstance(job, dict) and isinstance(role, dict):
        out = dict(job)
        for key, value in role.items():
            out[key] = _merge(job.get(key), value)
        return out
    return job if role is None else role


def pod_settings(spec: JobSpec, role: RoleSpec) -> PodSettings:
    """The role's pod settings in effect: the job's defaults with the role's over them."""
    job, own = spec.pod, role.pod
    return PodSettings(
        image_pull_policy=own.image_pull_policy or job.image_pull_policy,
        service_account_name=own.service_account_name or job.service_account_name,
        node_selector=_merge(job.node_selector, own.node_selector),
        tolerations=own.tolerations if own.tolerations is not None else job.tolerations,
        affinity=_merge(job.affinity, own.affinity),
        security_context=_merge(job.security_context, own.security_context),
        pod_security_context=_merge(job.pod_security_context, own.pod_security_context),
        pod_labels=_merge(job.pod_labels, own.pod_labels),
        pod_annotations=_merge(job.pod_annotations, own.pod_annotations),
        priority_class_name=own.priority_class_name or spec.scheduling.priority_class_name)
