"""A spec's JobPlan read straight into the run model (issue 10 item 4).

No target is compiled and parsed back: the user's restart policy, backoff,
success rule, start order, cleanup and deadline come from the plan's typed
fields. Each replica runs the way the `k8s` target's pod for it would (the
same env, command, mounts and restart behaviour; tests/emulator compare the
two), with the per-replica Service scheme's host names.

Text from the plan is final: command, args, probes and init containers run as
written (the k8s target escapes `$` so the kubelet's expansion gives this back);
only generated env values (`EnvVar.expand`) are expanded, against earlier ones.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from ...compiler.errors import UsageError
from ...compiler.frameworks import HOSTFILE_KEY, MPI_HOSTFILE_PATH
from ...compiler.kube import parse_quantity
from ...compiler.model import FieldRef, Handler, InitContainer, ResourceFieldRef, Resources, Volume
from ...compiler.model import Probe as SpecProbe
from ...compiler.plan import EnvVar, JobPlan, RolePlan, user_var
from ...compiler.plan import Replica as PlanReplica
from ...targets.k8s.scheme import shape
from ..host.paths import safe_name
from ..model.job import (
    Container,
    EnvSource,
    FailureRule,
    FileEntry,
    JobModel,
    Mount,
    Probe,
    Replica,
    listing_order,
    role_start_after,
)
from ..model.ports import Port
from ..model.security import Security, k8s_security
from .secrets import env_text

DEFAULT_BACKOFF = 6  # batch/v1 Job's default backoffLimit
MAX_INT32 = 2**31 - 1  # batch/v1's backoffLimit when backoffLimitPerIndex is set
JOB_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"  # an Indexed Job's pod (PodIndexLabel)
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"  # a StatefulSet's pod
DEFAULT_GRACE = 30.0  # terminationGracePeriodSeconds' default
SHM = "dshm"


def from_plan(plan: JobPlan, *, state_dir: str = ".trainspec", secrets: dict[str, dict[str, bytes]] | None = None,
              configmaps: dict[str, dict[str, bytes]] | None = None, start_order: bool = False,
              source: str = "") -> JobModel:
    """The run model of `plan`. `start_order`: wait as the plan's start order says (as the compose
    and jobset targets do); without it, every replica starts at once, as on plain Kubernetes and
    under the Kubeflow operators (a note says when a launcher started before its workers)."""
    reader = _PlanReader(plan, state_dir, dict(secrets or {}), dict(configmaps or {}))
    replicas = [reader.replica(role, rep) for role in plan.roles for rep in role.replicas]
    deadline = plan.active_deadline_seconds
    return JobModel(
        name=plan.name, namespace=plan.namespace, framework=plan.framework, success=plan.success,
        clean_pod_policy=plan.cleanup.pods or "Running", backoff_limit=plan.backoff_limit,
        active_deadline=None if deadline is None else float(deadline),
        replicas=listing_order(replicas), configmaps=reader.configmaps, secrets=reader.secrets,
        secret_missing=reader.secret_missing, configmap_missing=reader.configmap_missing,
        source=source or plan.source, start_order=plan.start_order,
        start_after=role_start_after(plan.start_order, replicas) if start_order else {},
        start_after_ready=frozenset(), controller=True)


class _PlanReader:
    def __init__(self, plan: JobPlan, state_dir: str, secrets: dict[str, dict[str, bytes]],
                 configmaps: dict[str, dict[str, bytes]]):
        self.plan = plan
        self.state_dir = state_dir
        self.secrets = secrets
        self.configmaps = configmaps
        self.secret_missing: dict[str, str] = {}
        self.configmap_missing: dict[str, str] = {}

    def replica(self, role: RolePlan, rep: PlanReplica) -> Replica:
        plan = self.plan
        policy = role.restart.policy
        # The k8s target's workload for this policy (targets/k8s/render.py), which the kubelet and the Job
        # controller then run: Always -> a StatefulSet; ExitCode -> pod Never + FailJob rules.  A role that
        # is one Indexed Job (targets/k8s/scheme.py `shape`) counts Never's and ExitCode's failures per index
        # and OnFailure's restarts over all of its pods; a role of one Job per replica, per replica.
        pod_policy = {"Always": "Always", "OnFailure": "OnFailure"}.get(policy, "Never")
        limit = DEFAULT_BACKOFF if role.restart.backoff_limit is None else role.restart.backoff_limit
        per_role = not shape(plan, role).per_replica
        per_index: int | None = None
        owner = ""
        if policy == "Always":
            backoff = 0
        elif policy in ("Never", "ExitCode") and per_role:
            backoff, per_index = MAX_INT32, (0 if policy == "Never" else limit)
        elif policy == "Never":
            backoff = 0
        else:
            backoff = limit
            owner = f"{plan.name}-{role.task}" if per_role and policy == "OnFailure" else ""
        rules = [FailureRule("FailJob", "In", list(role.restart.permanent_exit_codes))] if policy == "ExitCode" \
            else []
        where = f"roles.{role.name}"  # a spec path: errors add the file
        sidecars = [init.name for init in role.init_containers if init.restart_policy == "Always"]
        if sidecars:  # as emulator/readers/pod_rules.py refuses them in manifests
            raise UsageError(f"{plan.source}: {where}: native sidecar(s) {', '.join(sidecars)} (initContainers "
                             "with restartPolicy Always): the emulator runs init containers to completion only")
        ns = plan.namespace
        labels = {**plan.labels, "app.kubernetes.io/name": plan.name, "app.kubernetes.io/instance": plan.name,
                  "app.kubernetes.io/component": role.name, "app.kubernetes.io/part-of": plan.name,
                  "app.kubernetes.io/managed-by": "trainspec", "trainspec.dev/job": plan.name,
                  "trainspec.dev/role": role.name, "trainspec.dev/index": str(rep.index)}
        aliases = [rep.name, rep.host, f"{rep.host}.{ns}", f"{rep.host}.{ns}.svc", f"{rep.host}.{ns}.svc.cluster.local"]
        # and as the k8s target's pod `<job>-<task>-<i>` under the job's Service `<job>` (spec v1.3), with the
        # index label its controller gives the pod
        pod_host = f"{plan.name}-{role.task}-{rep.index}"
        if per_role:
            labels[POD_INDEX_LABEL if policy == "Always" else JOB_INDEX_LABEL] = str(rep.index)
        if plan.total_replicas == 1:  # the job's headless Service selects this one pod: its name resolves to it
            aliases += [plan.name, f"{plan.name}.{ns}", f"{plan.name}.{ns}.svc", f"{plan.name}.{ns}.svc.cluster.local"]
        aliases += [pod_host, f"{pod_host}.{ns}.svc", f"{pod_host}.{ns}.svc.cluster.local",
                    f"{pod_host}.{plan.name}", f"{pod_host}.{plan.name}.{ns}.svc",
                    f"{pod_host}.{plan.name}.{ns}.svc.cluster.local"]
        return Replica(
            name=pod_host, role=role.name, index=rep.index,
            workload="Deployment" if policy == "Always" else "Job", restart_policy=pod_policy,
            backoff_limit=backoff, active_deadline=None, failure_rules=rules, hostname=pod_host,
            job_owner=owner, backoff_per_index=per_index,
            aliases=list(dict.fromkeys(aliases)), labels=labels,
            init_containers=[self.init_container(role, init, f"{where}.initContainers.{init.name}")
                             for init in role.init_containers],
            main=self.main_container(role, rep, where), grace=DEFAULT_GRACE, spec_policy=policy)

    # -- containers ------------------------------------------------------
    def main_container(self, role: RolePlan, rep: PlanReplica, where: str) -> Container:
        plan = self.plan
        cpu, memory, accel = self.resources(role.resources, where)
        mounts = self.mounts(role, where) + self.mpi_mounts(role, where)
        lifecycle = role.lifecycle
        hooks = f"{plan.source}: {where}.lifecycle"
        return Container(
            name=role.container(plan), image=role.image,
            command=_words(rep.command), args=_words(rep.args), working_dir=role.working_dir,
            env=self.env(rep.env, where), ports=[Port(role.port)],
            cpu=cpu, memory=memory, accelerators=accel, mounts=mounts,
            post_start=_hook(lifecycle.post_start if lifecycle else None, f"{hooks}.postStart"),
            pre_stop=_hook(lifecycle.pre_stop if lifecycle else None, f"{hooks}.preStop"),
            liveness=_probe(role.probes.liveness), readiness=_probe(role.probes.readiness),
            startup=_probe(role.probes.startup), expand=False,
            security=self.security(role, role.pod.security_context, where))

    def security(self, role: RolePlan, container_context: dict | None, where: str) -> Security:
        """The pod's and the container's securityContext as the k8s target writes them: honoured
        or refused by the rules manifests get (security.py), never dropped."""
        pod = {"securityContext": role.pod.pod_security_context or {}}
        return k8s_security(pod, {"securityContext": container_context or {}}, f"{self.plan.source}: {where}")

    def init_container(self, role: RolePlan, init: InitContainer, where: str) -> Container:
        cpu, memory, accel = self.resources(init.resources, where)
        return Container(
            name=init.name, image=init.image or role.image, command=_words(init.command), args=_words(init.args),
            working_dir=init.working_dir, env=self.env(tuple(user_var(n, v) for n, v in init.env), where),
            ports=[], cpu=cpu, memory=memory, accelerators=accel, mounts=self.mounts(role, where), expand=False,
            security=self.security(role, None, where))

    def resources(self, res: Resources, where: str) -> tuple[Decimal | None, int | None, dict[str, int]]:
        # The limits the kubelet enforces: the shorthand (requests = limits), else resources.limits.
        limits = dict(res.limits)
        cpu_text = res.cpu if res.cpu is not None else limits.get("cpu")
        memory_text = res.memory if res.memory is not None else limits.get("memory")
        try:
            cpu = parse_quantity(cpu_text) if cpu_text is not None else None
            memory = int(parse_quantity(memory_text)) if memory_text is not None else None
            gpus = res.gpu or int(parse_quantity(limits.get(self.plan.accelerator, "0")))
        except ValueError as exc:  # validated by the compiler; kept as a clear error all the same
            raise UsageError(f"{self.plan.source}: {where}.resources: {exc}") from None
        return cpu, memory, ({self.plan.accelerator: gpus} if gpus else {})

    def env(self, env: tuple[EnvVar, ...], where: str) -> list[EnvSource]:
        out: list[EnvSource] = []
        for var in env:
            if var.value is not None:
                out.append(EnvSource(var.name, var.value, literal=False))  # exactly what the program sees
            elif var.expand is not None:
                out.append(EnvSource(var.name, var.expand, literal=True))
            elif var.topology is not None:
                out.append(EnvSource(var.name, self.plan.topology[var.topology], literal=False))
            elif isinstance(var.field, FieldRef):  # the downward API (e.g. Paddle's status.podIP), known late
                out.append(EnvSource(var.name, literal=False, field_path=var.field.field_path))
            elif isinstance(var.field, ResourceFieldRef):  # as from_k8s reads a resourceFieldRef
                out.append(EnvSource(var.name, literal=False, field_path="resource:" + var.field.resource))
            elif var.config_map is not None:
                data = self.configmap(var.config_map.name, f"{where}.env.{var.name}")
                if var.config_map.key in data:
                    text = env_text(data[var.config_map.key], var.name, f"{self.plan.source}: {where}", "ConfigMap")
                    out.append(EnvSource(var.name, text, literal=False))
                elif var.config_map.name not in self.configmap_missing:
                    raise UsageError(f"{self.plan.source}: {where}.env.{var.name}: ConfigMap key "
                                     f"{var.config_map.name}/{var.config_map.key} is not in the input")
            elif var.secret is not None:
                data = self.secret(var.secret.name, f"{where}.env.{var.name}")
                if var.secret.key in data:
                    text = env_text(data[var.secret.key], var.name, f"{self.plan.source}: {where}", "Secret")
                    out.append(EnvSource(var.name, text, literal=False, secret=True))
                elif var.secret.name not in self.secret_missing:
                    raise UsageError(f"{self.plan.source}: {where}.env.{var.name}: Secret "
                                     f"{var.secret.name!r} has no key {var.secret.key!r}")
        return out

    def secret(self, name: str, where: str) -> dict[str, bytes]:
        if name not in self.secrets:
            self.secret_missing.setdefault(name, where)  # inputs.py says how to give it
        return self.secrets.get(name, {})

    def configmap(self, name: str, where: str) -> dict[str, bytes]:
        if name == self.plan.topology_name:
            return {k: v.encode() for k, v in self.plan.topology.items()}
        if name not in self.configmaps:
            self.configmap_missing.setdefault(name, where)
        return self.configmaps.get(name, {})

    # -- volumes ---------------------------------------------------------
    def mounts(self, role: RolePlan, where: str) -> list[Mount]:
        out = [self.mount(v, where) for v in role.volumes]
        if role.resources.shm:
            out.append(Mount("/dev/shm", "tmpfs", SHM, size=int(parse_quantity(role.resources.shm))))
        return out

    def mount(self, v: Volume, where: str) -> Mount:
        here = f"{where}.volumes.{v.name}"
        if v.kind == "persistentVolumeClaim":
            claim = safe_name(v.source, "claimName", f"{self.plan.source}: {here}")
            root = f"{self.state_dir}/volumes/{claim}"
            return Mount(v.mount_path, "bind", root, v.read_only, root=root)
        if v.kind == "hostPath":
            if not v.source.startswith("/") or "\0" in v.source:
                raise UsageError(f"{self.plan.source}: {here}: hostPath {v.source!r} is not an absolute path")
            return Mount(v.mount_path, "bind", v.source, v.read_only, host_path=True)
        if v.kind == "emptyDir":
            if v.medium == "Memory":
                size = int(parse_quantity(v.size_limit)) if v.size_limit else None
                return Mount(v.mount_path, "tmpfs", v.name, v.read_only, size=size)
            return Mount(v.mount_path, "emptydir", v.name, v.read_only)
        is_secret = v.kind == "secret"
        data = self.secret(v.source, here) if is_secret else self.configmap(v.source, here)
        files = [FileEntry(k, value, 0o644) for k, value in data.items()]
        return Mount(v.mount_path, "files", v.source, True, files, is_secret)

    def mpi_mounts(self, role: RolePlan, where: str) -> list[Mount]:
        """The ssh keys on every MPI replica, the hostfile on the launcher (the k8s target's volumes)."""
        plan = self.plan
        if plan.framework != "mpi":
            return []
        name = f"{plan.name}-ssh"
        key = self.secret(name, f"{where} (MPI ssh keys)")
        files = [FileEntry(path, key[k], 0o600) for k, path in (("ssh-privatekey", "id_rsa"),
                                                                ("ssh-publickey", "id_rsa.pub"),
                                                                ("ssh-publickey", "authorized_keys")) if k in key]
        out = [Mount(self.plan.mpi_ssh_path, "files", name, True, files, secret=True)]
        if role.name == "launcher":
            hostfile = FileEntry("hostfile", plan.topology[HOSTFILE_KEY].encode(), 0o644)
            out.append(Mount(MPI_HOSTFILE_PATH.rsplit("/", 1)[0], "files", plan.topology_name, True, [hostfile]))
        return out


def _words(words: tuple[str, ...] | None) -> list[str] | None:
    return None if words is None else list(words)


def _hook(h: Handler | None, where: str) -> list[str] | None:
    if h is None:
        return None
    if h.exec is None:
        raise UsageError(f"{where}: only exec hooks are run by the emulator")
    return list(h.exec) or None


def _probe(p: SpecProbe | None) -> Probe | None:
    if p is None:
        return None
    timing = Probe("exec", initial_delay=float(p.initial_delay_seconds or 0), period=float(p.period_seconds or 10),
                   timeout=float(p.timeout_seconds or 1), success_threshold=int(p.success_threshold or 1),
                   failure_threshold=int(p.failure_threshold or 3))
    h = p.handler
    if h.exec is not None:
        return replace(timing, command=list(h.exec))
    if h.tcp_socket is not None:
        return replace(timing, kind="tcp", port=h.tcp_socket.get("port"), host=h.tcp_socket.get("host"))
    g = h.http_get or {}
    return replace(timing, kind="http", port=g.get("port"), host=g.get("host"), path=g.get("path", "/"),
                   scheme=g.get("scheme", "HTTP"))
