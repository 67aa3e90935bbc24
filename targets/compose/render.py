"""`compose`: one Compose service per replica, on one network per job.

Each replica's service has the hostname and network aliases of its Kubernetes
DNS name (`<job>-<role>-<i>`, `.<ns>`, `.<ns>.svc`, `.<ns>.svc.cluster.local`),
so TF_CONFIG, MASTER_ADDR, DMLC_PS_ROOT_URI and the MPI hostfile work unchanged;
its environment is fully resolved (`resolved_env`: no Kubernetes `$(VAR)` left).

Compose interpolates `$` in every value, so every `$` we write is `$$`; the only
interpolations are the host variables that stand for a user's Secret or
ConfigMap keys (`${NAME:?...}`): a compose file cannot read a cluster, and
secret values are never written.  The mapping of every pod feature (GPUs,
volumes, probes, init containers, restart policies...) is in
docs/targets-helm-compose.md.
"""

from __future__ import annotations

import re
import shlex

from trainspec.compiler import runpolicy
from trainspec.compiler.frameworks import HOSTFILE_KEY, MPI_HOSTFILE_PATH
from trainspec.compiler.model import ConfigMapRef, FieldRef, Probe, ResourceFieldRef, SecretRef
from trainspec.compiler.plan import JobPlan, Replica, RolePlan, resolved_env

from .. import common
from ..yamlout import dump
from . import service_fields
from .service_fields import byte_size, cpus, quantity

FILE = "compose.yaml"
RESTART = {"Never": "no", "OnFailure": "on-failure", "Always": "always", "ExitCode": "on-failure"}
MAX_DURATION_SECONDS = (2 ** 63 - 1) // 10 ** 9
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class Interpolation(str):
    """A value Compose must interpolate (written without `$` escaping)."""


def render(plan: JobPlan) -> dict[str, str]:
    dropped: set[str] = set()
    doc = common.patched(plan, "compose", escape(compose_document(plan, dropped)))  # patches: Compose text as is
    common.warn_dropped(plan, "compose", dropped)
    return {FILE: dump(doc, common.header(plan, NOTE))}


NOTE = ("Compose file: one service per replica. `$$` is a literal `$` (Compose interpolation); "
        "see x-trainspec.notes for what to provide before `docker compose up`.")


# --- the document -------------------------------------------------------------------------------

def service_name(role: str, index: int) -> str:
    return f"{role}-{index}"


def _not_extension(key: str, prefix: str) -> str:
    """Compose reads a key starting with `x-` in networks/volumes as an extension, not an entry."""
    return prefix + key if key.startswith("x-") else key


def network_key(plan: JobPlan) -> str:
    return _not_extension(plan.name, "net-")


def aliases(plan: JobPlan, replica: Replica) -> list[str]:
    host = replica.host
    return [host, f"{host}.{plan.namespace}", f"{host}.{plan.namespace}.svc",
            f"{host}.{plan.namespace}.svc.cluster.local"]


class _Context:
    def __init__(self, plan: JobPlan, dropped: set[str] | None = None):
        self.plan = plan
        self.dropped: set[str] = set() if dropped is None else dropped  # v1.1 fields with no Compose equivalent
        self.next_gpu = 0
        self.named_volumes: dict[str, dict] = {}
        self.notes: list[str] = []
        self.host_vars = self._host_vars()

    def _host_vars(self) -> dict[tuple, str]:
        """Host variable names for the user's Secret/ConfigMap env refs: the env name, unless ambiguous."""
        refs: dict[str, set] = {}
        for role in self.plan.roles:
            for name, value in _all_user_refs(role):
                refs.setdefault(name, set()).add(value)
        out = {}
        taken: set[str] = set()
        for name, values in refs.items():
            for value in sorted(values, key=lambda v: (type(v).__name__, v.name, v.key)):
                if len(values) == 1 and _VARIABLE.match(name):
                    host = name
                else:
                    # Compose reads only [A-Za-z_][A-Za-z0-9_]* in ${...}: `${A-B}` would be A with default B.
                    host = re.sub(r"[^A-Za-z0-9_]", "_", name if len(values) == 1 else
                                  f"{name}__{value.name}_{value.key}").upper()
                candidate, n = host, 1
                while candidate in taken:
                    n += 1
                    candidate = f"{host}_{n}"
                taken.add(candidate)
                out[(name, value)] = candidate
        return out

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def _all_user_refs(role: RolePlan):
    for replica in role.replicas[:1]:
        for var in replica.env:
            if var.secret is not None or var.config_map is not None:
                yield var.name, var.secret or var.config_map
    for init in role.init_containers:
        for name, value in init.env:
            if isinstance(value, (SecretRef, ConfigMapRef)):
                yield name, value


def _ref_value(ctx: _Context, name: str, ref) -> Interpolation:
    host = ctx.host_vars[(name, ref)]
    kind = "Secret" if isinstance(ref, SecretRef) else "ConfigMap"
    ctx.note(f"{name}: from Kubernetes {kind} {ref.name} key {ref.key}; export {host} (or put it in .env) "
             f"before `docker compose up`")
    return Interpolation(f"${{{host}:?{host} must be set: the value of {kind} {ref.name} key {ref.key}}}")


def compose_document(plan: JobPlan, dropped: set[str] | None = None) -> dict:
    ctx = _Context(plan, dropped)
    services: dict[str, dict] = {}
    for role in plan.roles:
        for replica in role.replicas:
            name = service_name(role.name, replica.index)
            init_names: list[str] = []
            sidecars: list[str] = []
            for init in role.init_containers:
                init_name = f"{name}-init-{init.name}"
                services[init_name] = init_service(ctx, role, replica, init,
                                                   init_names[-1] if init_names else None)
                # a native sidecar runs beside the replica: started, not waited for to complete
                (sidecars if init.restart_policy == "Always" else init_names).append(init_name)
            service = replica_service(ctx, role, replica, init_names[-1] if init_names else None)
            for sidecar in sidecars:
                services[sidecar]["restart"] = "always"
                service.setdefault("depends_on", {})[sidecar] = {"condition": "service_started"}
            services[name] = service
    for rule in plan.start_order:  # e.g. mpirun reaches every worker over ssh: the launcher starts after them
        first = [service_name(r.name, rep.index) for r in plan.roles if r.name in rule.after for rep in r.replicas]
        healthy = bool(first) and all("healthcheck" in services[name] for name in first)
        condition = "service_healthy" if healthy else "service_started"
        for service in services.values():  # the role's replicas and their init services
            if service.get("labels", {}).get("trainspec.dev/role") == rule.role:
                depends = service.setdefault("depends_on", {})
                for name in first:
                    depends[name] = {"condition": condition}
    for service in services.values():
        service["init"] = True  # Docker's init as PID 1 forwards SIGTERM: a stop reaches servers that ignore it
    doc: dict = {"services": services, "networks": {network_key(plan): {"driver": "bridge"}}}
    if ctx.named_volumes:
        doc["volumes"] = ctx.named_volumes
    doc["x-trainspec"] = job_metadata(ctx)
    return doc


def job_metadata(ctx: _Context) -> dict:
    plan = ctx.plan
    meta: dict = {"job": plan.name, "namespace": plan.namespace, "framework": plan.framework,
                  "successRole": plan.success.role, "successRule": plan.success.text,
                  "roles": {role.name: {"replicas": role.count, "restartPolicy": role.restart_policy,
                                        "services": [service_name(role.name, r.index) for r in role.replicas]}
                            for role in plan.roles}}
    for key, value in (("backoffLimit", plan.backoff_limit), ("activeDeadlineSeconds", plan.active_deadline_seconds),
                       ("ttlSecondsAfterFinished", plan.cleanup.ttl_seconds_after_finished),
                       ("cleanPodPolicy", plan.cleanup.pods)):
        if value is not None:
            meta[key] = value
    if plan.active_deadline_seconds is not None:
        ctx.note(f"activeDeadlineSeconds ({plan.active_deadline_seconds}) has no Compose equivalent: "
                 "`trainspec run` enforces it")
    if any(r.restart_policy == "ExitCode" for r in plan.roles):
        ctx.note("restartPolicy ExitCode is `on-failure` here: Docker cannot restart on signals (>= 128) only")
    meta[runpolicy.COMPOSE_KEY] = runpolicy.encode(plan)  # what `trainspec run` reads back
    if ctx.notes:
        meta["notes"] = list(ctx.notes)
    return meta


def _volumes(ctx: _Context, role: RolePlan, replica_service: str, shared: bool) -> list[dict]:
    """The volume entries of a replica's containers (a Memory emptyDir is a tmpfs entry);
    `shared`: emptyDirs shared with init services."""
    out = []
    for v in role.volumes:
        if v.kind == "persistentVolumeClaim":
            key = _not_extension(v.source, "pvc-")
            ctx.named_volumes.setdefault(key, {"name": v.source})
            entry = {"type": "volume", "source": key, "target": v.mount_path}
        elif v.kind == "hostPath":
            entry = {"type": "bind", "source": v.source, "target": v.mount_path}
        elif v.kind == "emptyDir":
            if v.medium == "Memory":
                entry = {"type": "tmpfs", "target": v.mount_path}
                if v.size_limit:
                    entry["tmpfs"] = {"size": int(quantity(v.size_limit))}
                if shared:
                    ctx.note(f"volume {v.name}: a Memory emptyDir is a tmpfs per container; init containers "
                             "do not share it")
            elif shared:
                volume_name = f"{replica_service}-{v.name}"
                ctx.named_volumes.setdefault(volume_name, {})
                entry = {"type": "volume", "source": volume_name, "target": v.mount_path}
            else:
                entry = {"type": "volume", "target": v.mount_path}
        else:
            folder = "configmaps" if v.kind == "configMap" else "secrets"
            kind = "ConfigMap" if v.kind == "configMap" else "Secret"
            entry = {"type": "bind", "source": f"./{folder}/{v.source}", "target": v.mount_path}
            ctx.note(f"volume {v.name}: put the files of {kind} {v.source} in ./{folder}/{v.source}/")
        if v.read_only and entry["type"] != "tmpfs":
            entry["read_only"] = True
        out.append(entry)
    return out


def _environment(ctx: _Context, pairs, replica_name: str = "", shell: bool = False) -> dict:
    """`shell`: pod fields a shell can read at start (POD_FIELDS) stay `FieldRef`s for `_pod_fields`."""
    env = {}
    for name, value in pairs:
        if shell and isinstance(value, FieldRef) and value.field_path == "status.podIP":
            env[name] = value
            continue
        if isinstance(value, (FieldRef, ResourceFieldRef)):
            known = service_fields.downward(ctx.plan, replica_name, value, ctx.dropped)
            if known is not None:
                env[name] = known
            continue
        env[name] = _ref_value(ctx, name, value) if isinstance(value, (SecretRef, ConfigMapRef)) else value
    return env


def _limits(res) -> dict:
    limits = {}
    if res.cpu is not None:
        limits["cpus"] = cpus(res.cpu)
    if res.memory is not None:
        limits["memory"] = byte_size(res.memory)
    return limits


def init_service(ctx: _Context, role: RolePlan, replica: Replica, init, previous: str | None) -> dict:
    plan = ctx.plan
    service: dict = {"image": init.image or role.image}
    if role.pod.image_pull_policy:
        service["pull_policy"] = service_fields.PULL_POLICY[role.pod.image_pull_policy]
    if init.command is not None:
        service["entrypoint"] = list(init.command)
    if init.args is not None:
        service["command"] = list(init.args)
    if init.working_dir:
        service["working_dir"] = init.working_dir
    if init.env:
        service["environment"] = _environment(ctx, init.env, replica.name)
    service["labels"] = {**service_fields.labels(role, common.replica_labels(plan, replica)),
                         "trainspec.dev/init-container": init.name}
    limits = _limits(init.resources)
    if limits:
        service["deploy"] = {"resources": {"limits": limits}}
    volumes = _volumes(ctx, role, service_name(role.name, replica.index), bool(role.init_containers))
    if volumes:
        service["volumes"] = volumes
    if role.resources.shm:
        service["shm_size"] = byte_size(role.resources.shm)
    service["networks"] = [network_key(plan)]
    service["restart"] = "no"
    if previous:
        service["depends_on"] = {previous: {"condition": "service_completed_successfully"}}
    return service


def replica_service(ctx: _Context, role: RolePlan, replica: Replica, last_init: str | None) -> dict:
    plan = ctx.plan
    service: dict = {"image": role.image, "hostname": replica.host}
    env = dict(_environment(ctx, resolved_env(plan, replica), replica.name, shell=True))
    command, args = replica.command, replica.args
    if plan.framework == "mpi" and role.name == "launcher":
        # No file can be shipped inside a compose file portably: the launcher writes its hostfile from env.
        env["TRAINSPEC_HOSTFILE"] = plan.topology[HOSTFILE_KEY]
        if command is not None:
            directory = MPI_HOSTFILE_PATH.rsplit("/", 1)[0]
            script = (f'mkdir -p {directory} && printf "%s" "$TRAINSPEC_HOSTFILE" > {MPI_HOSTFILE_PATH} '
                      f'&& exec "$0" "$@"')
            command, args = ("sh", "-c", script), tuple(command) + tuple(args or ())
        else:
            ctx.note(f"{replica.name}: the launcher has no command, so write $TRAINSPEC_HOSTFILE to "
                     f"{MPI_HOSTFILE_PATH} in the image's entry point")
    if any(isinstance(v, FieldRef) for v in env.values()):
        command, args = _pod_fields(ctx, replica, env, command, args)
    if command is not None:
        service["entrypoint"] = list(command)
    if args is not None:
        service["command"] = list(args)
    if role.working_dir:
        service["working_dir"] = role.working_dir
    service["environment"] = env
    service["labels"] = service_fields.labels(role, common.replica_labels(plan, replica))
    service.update(service_fields.service_fields(plan, role, ctx.dropped))
    deploy: dict = {}
    limits, reservations = service_fields.resources(role, _limits(role.resources), ctx.dropped)
    if limits:
        deploy["limits"] = limits
    if role.resources.gpu:
        ids = [str(i) for i in range(ctx.next_gpu, ctx.next_gpu + role.resources.gpu)]
        ctx.next_gpu += role.resources.gpu
        device: dict = {"capabilities": ["gpu"], "device_ids": ids}
        accelerator = plan.accelerator
        if accelerator.startswith("nvidia.com/"):
            device = {"driver": "nvidia", **device}
        else:
            ctx.note(f"accelerator {accelerator}: Docker device requests know NVIDIA GPUs; check your runtime "
                     "maps device_ids for this vendor")
        reservations["devices"] = [device]
    if reservations:
        deploy["reservations"] = reservations
    if deploy:
        service["deploy"] = {"resources": deploy}
    if role.resources.shm:
        service["shm_size"] = byte_size(role.resources.shm)
    volumes = _volumes(ctx, role, service_name(role.name, replica.index), bool(role.init_containers))
    if plan.framework == "mpi":
        volumes.append({"type": "bind", "source": f"./secrets/{plan.name}-ssh", "target": plan.mpi_ssh_path,
                        "read_only": True})
        ctx.note(f"MPI ssh keys: put id_rsa, id_rsa.pub and authorized_keys (mode 0600) in ./secrets/{plan.name}-ssh/")
    if volumes:
        service["volumes"] = volumes
    service["expose"] = [str(role.port)]
    service["networks"] = {network_key(plan): {"aliases": aliases(plan, replica)}}
    check = healthcheck(ctx, role, replica)
    if check:
        service["healthcheck"] = check
    restart = RESTART[role.restart_policy]
    backoff = role.restart.backoff_limit
    if restart == "on-failure" and backoff is not None:
        restart = f"on-failure:{backoff}" if backoff else "no"
    service["restart"] = restart
    if last_init:
        service["depends_on"] = {last_init: {"condition": "service_completed_successfully"}}
    extra = {}
    if role.lifecycle is not None:
        hooks = {}
        if role.lifecycle.post_start:
            hooks["postStart"] = common.handler(role.lifecycle.post_start)
        if role.lifecycle.pre_stop:
            hooks["preStop"] = common.handler(role.lifecycle.pre_stop)
        extra["lifecycle"] = hooks
        ctx.note("lifecycle hooks are in each service's x-trainspec.lifecycle (`trainspec run` runs them); "
                 "Compose >= 2.30 post_start/pre_stop are not used so that older Compose accepts the file")
    if extra:
        service["x-trainspec"] = extra
    return service


# Downward-API fields a container can read about itself at start (Docker writes its IP to /etc/hosts).
POD_FIELDS = {"status.podIP": "$(hostname -i | cut -d' ' -f1)", "metadata.name": "$(hostname)"}


def _pod_fields(ctx: _Context, replica: Replica, env: dict, command, args):
    """Variables from the pod's own fields (Paddle's POD_IP_DUMMY), and those built on them
    ($(POD_IP_DUMMY):port), are set by a shell in front of the command: Compose has no downward API."""
    fields = [name for name, v in env.items() if isinstance(v, FieldRef)]
    lines = []
    for name in list(env):
        value = env[name]
        if isinstance(value, FieldRef):
            if value.field_path not in POD_FIELDS:
                raise ValueError(f"{replica.name}: env {name}: compose cannot give the pod field {value.field_path}")
            lines.append(f'export {name}="{POD_FIELDS[value.field_path]}"')
            del env[name]
        elif isinstance(value, str) and any(f"$({f})" in value for f in fields):
            pieces = re.split(r"(\$\((?:" + "|".join(map(re.escape, fields)) + r")\))", value)
            text = "".join(f'"${{{p[2:-1]}}}"' if i % 2 else (shlex.quote(p) if p else "")
                           for i, p in enumerate(pieces))
            lines.append(f"export {name}={text}")
            del env[name]
    if command is None:
        ctx.note(f"{replica.name}: set {', '.join(fields)} in the image's entry point (the container has no "
                 "command to run behind a shell)")
        return command, args
    return ("sh", "-c", "; ".join(lines + ['exec "$0" "$@"'])), tuple(command) + tuple(args or ())


# --- probes -> healthcheck ----------------------------------------------------------------------

def healthcheck(ctx: _Context, role: RolePlan, replica: Replica) -> dict | None:
    """The readiness probe (else liveness) as a Compose healthcheck; startup delays the start period."""
    probes = role.probes
    probe = probes.readiness or probes.liveness
    if probe is None:
        return None
    test = _probe_test(ctx, role, probe)
    if test is None:
        return None
    check = {"test": test, "interval": f"{probe.period_seconds or 10}s", "timeout": f"{probe.timeout_seconds or 1}s",
             "retries": probe.failure_threshold or 3}
    start = probe.initial_delay_seconds or 0
    if probes.startup is not None:
        s = probes.startup
        start += (s.initial_delay_seconds or 0) + (s.period_seconds or 10) * (s.failure_threshold or 3)
    if start:
        # Compose reads durations as Go time.Duration (int64 nanoseconds): at most ~292 years.
        check["start_period"] = f"{min(start, MAX_DURATION_SECONDS)}s"
    return check


def _port(role: RolePlan, port) -> int | None:
    if isinstance(port, int):
        return port
    if str(port).isdigit():
        return int(port)
    return None  # a named port: only the container's own port has a name, and that is common.PORT_NAMES


def _probe_test(ctx: _Context, role: RolePlan, probe: Probe) -> list | None:
    """The probe as a CMD-SHELL test.  Host, port and URL reach the shell only as quoted words
    (never inside code or another shell's script), and the URL is built so the path cannot
    change its authority."""
    h = probe.handler
    if h.exec is not None:
        return ["CMD", *h.exec]
    ctx.note("tcpSocket/httpGet probes run `python3`, else `bash`, else `wget` inside the image")
    if h.tcp_socket is not None:
        port = _port(role, h.tcp_socket.get("port"))
        if port is None:
            port = role.port
        host = h.tcp_socket.get("host") or "localhost"
        code = "import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 2).close()"
        # bash's script is quoted twice: the host is one word inside it, the script one word outside.
        # (No `$1`: the emulator and old Compose would have to interpolate `$$` in healthchecks.)
        script = f"exec 3<>/dev/tcp/{shlex.quote(host)}/{port}"
        return ["CMD-SHELL", (f"python3 -c {shlex.quote(code)} {shlex.quote(host)} {port} 2>/dev/null"
                              f" || bash -c {shlex.quote(script)}")]
    get = h.http_get or {}
    port = _port(role, get.get("port"))
    if port is None:
        port = role.port
    url = probe_url(str(get.get("scheme") or "HTTP"), get.get("host") or "localhost", port, get.get("path") or "/")
    code = "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)"
    return ["CMD-SHELL", (f"python3 -c {shlex.quote(code)} {shlex.quote(url)} 2>/dev/null"
                          f" || wget -q -O /dev/null {shlex.quote(url)}")]


def probe_url(scheme: str, host: str, port: int, path: str) -> str:
    """scheme://host:port/path with the authority fixed: the path always starts at a `/` and
    characters that could end it (`@`, `\\`, spaces, controls) are percent-encoded."""
    from urllib.parse import quote

    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address
    path = path if path.startswith("/") else "/" + path
    return f"{scheme.lower()}://{host}:{port}{quote(path, safe='/?=&%:!$()*+,;~-._')}"


# --- escaping -----------------------------------------------------------------------------------

def escape(value):
    """Every `$` -> `$$` (Compose interpolation), except in our own Interpolation values."""
    if isinstance(value, Interpolation):
        return str(value)
    if isinstance(value, str):
        return value.replace("$", "$$")
    if isinstance(value, dict):
        return {key: escape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [escape(item) for item in value]
    return value
