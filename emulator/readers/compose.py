"""A compiled `compose.yaml` read into the same run model as the k8s output.

Covered: services as replicas (roles and indexes from the trainspec labels or
the `x-trainspec` block), image, entrypoint/command, environment, working_dir,
hostname and network aliases, cpu/memory limits, GPU device reservations,
named volumes (host folders under .trainspec/volumes/, like claims), binds,
tmpfs and shm_size, restart policies, init services (`depends_on:
service_completed_successfully`), healthchecks (as readiness probes) and the
`x-trainspec` lifecycle hooks and job policy. Not covered: Compose's own
`ports` publishing beyond host:container pairs, secrets/configs top-level
objects, profiles, extends, build.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from decimal import Decimal
from pathlib import Path
from typing import Any

from ...compiler import runpolicy
from ...compiler.plan import Restart
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
)
from ..model.policy import fallback_rule
from ..model.ports import compose_port
from ..model.security import compose_security
from . import positions
from .interpolation import InterpolationError, compose_env, interpolate_tree
from .secrets import ssh_keypair

_UNITS = {"b": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2, "g": 1024**3, "gb": 1024**3}


def interpolated(doc: dict, path: str, env_files: list[str] | None = None,
                 env_options: list[str] | None = None) -> tuple[dict, dict[str, str]]:
    """The compose file with its variables substituted, and the variables. Compose interpolates the
    whole file before it reads or checks anything: a `${VAR:?msg}` with VAR unset fails here, and a
    value a variable gives is checked as given. Only the variables the user passed (compose_env)."""
    try:
        variables = compose_env(path, env_files, env_options)
        result = interpolate_tree(doc, variables)
    except InterpolationError as exc:
        raise positions.field_error(path, doc, exc.field, exc.message, exc.expected, exc.hint) from None
    positions.same_as(result, doc)  # errors about the interpolated file point at the text written
    return result, variables


def from_compose(doc: dict, path: str, state_dir: str, env_files: list[str] | None = None,
                 env_options: list[str] | None = None, variables: dict[str, str] | None = None) -> JobModel:
    """`variables`: `doc` is already interpolated with them (dispatch.py interpolates before its checks)."""
    if variables is None:
        doc, variables = interpolated(doc, path, env_files, env_options)
    return _Compose(doc, path, state_dir, variables).read()


def _list(svc: dict, key: str, name: str, reader: _Compose) -> list:
    value = svc.get(key) or []
    if not isinstance(value, list):
        raise reader.fail(("services", name, key), f"is {type(value).__name__}", expected="a list")
    return value


def _mem(value: Any) -> int:
    m = re.fullmatch(r"\s*([0-9.]+)\s*([a-zA-Z]*)\s*", str(value))
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(value)
    return int(Decimal(m.group(1)) * _UNITS[m.group(2).lower()])


class _Compose:
    def __init__(self, doc: dict, path: str, state_dir: str, variables: dict[str, str] | None = None):
        self.variables = variables or {}   # what the user passed (-e, --env-file, .env): never os.environ
        self.doc = doc
        self.path = path
        self.base = Path(path).resolve().parent
        self.state_dir = state_dir
        self.meta = doc.get("x-trainspec") or {}
        self.services: dict[str, dict] = doc.get("services") or {}
        self.generated_keys: dict[str, bytes] | None = None
        self.written: runpolicy.RunPolicy | None = None  # x-trainspec.runPolicy, read by read()

    def fail(self, path: tuple, message: str, *, expected: str = "", hint: str = "") -> Exception:
        """At the line and column of `path` in the compose file (positions.py)."""
        return positions.field_error(self.path, self.doc, path, message, expected, hint)

    def read(self) -> JobModel:
        if not isinstance(self.services, dict) or not self.services:
            raise self.fail(("services",), "no services to run")
        role_of: dict[str, tuple[str, int]] = {}
        policy_of: dict[str, str] = {}
        policy = self.written = self._run_policy()
        written_restart = policy.restart if policy else {}
        for role, info in (self.meta.get("roles") or {}).items():
            for i, svc in enumerate(info.get("services") or []):
                role_of[svc] = (role, i)
                policy_of[svc] = info.get("restartPolicy", "")
                if role in written_restart:
                    policy_of[svc] = written_restart[role].policy
        init_steps = {d for svc in self.services.values() for d, cond in _deps(svc).items()
                      if (cond or {}).get("condition") == "service_completed_successfully"}
        self._refuse_sidecars(init_steps)
        for name, svc in self.services.items():
            labels = svc.get("labels") or {}
            if (isinstance(labels, dict) and "trainspec.dev/role" in labels and name not in role_of
                    and name not in init_steps):
                role_of[name] = (str(labels["trainspec.dev/role"]), int(labels.get("trainspec.dev/index", 0)))
        if not role_of:
            # A plain compose file: every service that is not an init step is a replica.
            for name in self.services:
                if name not in init_steps:
                    role, _, idx = name.rpartition("-")
                    role_of[name] = (role, int(idx)) if role and idx.isdigit() else (name, 0)
        inits = self._init_services(set(role_of))
        job = str(self.meta.get("job") or Path(self.path).resolve().parent.name)
        namespace = str(self.meta.get("namespace") or "default")
        replicas = []
        for name, (role, index) in role_of.items():
            if name not in self.services:
                raise self.fail(("x-trainspec", "roles"), f"service {name!r} is not defined")
            replicas.append(self._replica(name, role, index, policy_of.get(name, ""), inits, job))
        replica_of = {svc: r for svc, r in zip(role_of, replicas)}
        if policy is not None:
            success = policy.success
            clean = policy.cleanup.pods or "Running"
            backoff, deadline = policy.backoff_limit, policy.deadline
        else:  # a compose file without trainspec's run policy
            success = fallback_rule(self.meta.get("framework"), replicas, self.meta.get("successPolicy"))
            clean = self.meta.get("cleanPodPolicy") or "Running"
            backoff, deadline = self.meta.get("backoffLimit"), self.meta.get("activeDeadlineSeconds")
        after, ready = self._start_after(replica_of)
        return JobModel(
            name=job, namespace=namespace, framework=self.meta.get("framework"),
            success=success, clean_pod_policy=clean, backoff_limit=backoff,
            active_deadline=None if deadline is None else float(deadline),
            replicas=listing_order(replicas), configmaps={}, secrets={}, source=self.path,
            start_order=policy.start_order if policy else (), start_after=after, start_after_ready=ready,
            kubelet_files=False)

    def _refuse_sidecars(self, init_steps: set[str]) -> None:
        """An init container the compose target wrote as a service that runs beside its replica
        (a native sidecar: `restart: always`, not waited for to complete) is refused, as every other
        input refuses it (pod_rules.py, from_plan.py); read as a replica it took its pod's name."""
        sidecars = [name for name, svc in self.services.items() if name not in init_steps
                    and isinstance(svc.get("labels"), dict) and "trainspec.dev/init-container" in svc["labels"]]
        if sidecars:
            names = sorted({str(self.services[s]["labels"]["trainspec.dev/init-container"]) for s in sidecars})
            raise self.fail(("services", sidecars[0]), f"native sidecar(s) {', '.join(names)} (initContainers with "
                            "restartPolicy Always): the emulator runs init containers to completion only")

    def _run_policy(self) -> runpolicy.RunPolicy | None:
        data = self.meta.get(runpolicy.COMPOSE_KEY)
        if data is None:
            return None
        try:
            return runpolicy.decode(data)
        except runpolicy.RunPolicyError as exc:
            raise self.fail(("x-trainspec", runpolicy.COMPOSE_KEY), str(exc)) from None

    def _start_after(self, replica_of: dict[str, Replica]) -> tuple[dict[str, tuple[str, ...]], frozenset[str]]:
        """Compose's start order between replicas, as written: `depends_on` service_started or
        service_healthy (service_completed_successfully on an init service is the init chain)."""
        after: dict[str, tuple[str, ...]] = {}
        ready: set[str] = set()
        for name, r in replica_of.items():
            names = []
            for dep, cond in _deps(self.services.get(name) or {}).items():
                condition = (cond or {}).get("condition", "service_started")
                if dep in replica_of and condition in ("service_started", "service_healthy"):
                    names.append(replica_of[dep].name)
                    if condition == "service_healthy":
                        ready.add(replica_of[dep].name)
            if names:
                after[r.name] = tuple(names)
        return after, frozenset(ready)

    def _init_services(self, replicas: set[str]) -> dict[str, list[str]]:
        """replica service → its init services, in dependency order."""
        out: dict[str, list[str]] = {}
        for name in replicas:
            done = [d for d, cond in _deps(self.services.get(name) or {}).items()
                    if (cond or {}).get("condition") == "service_completed_successfully"]
            ordered: list[str] = []
            for d in done:
                self._chain(d, ordered)
            out[name] = ordered
        return out

    def _chain(self, name: str, ordered: list[str]) -> None:
        for d, cond in _deps(self.services.get(name) or {}).items():
            if (cond or {}).get("condition") == "service_completed_successfully" and d not in ordered:
                self._chain(d, ordered)
        if name not in ordered:
            ordered.append(name)

    def _replica(self, name: str, role: str, index: int, role_policy: str, inits: dict, job: str) -> Replica:
        svc = self.services[name]
        restart = str(svc.get("restart", "no"))
        backoff = 6
        if restart.startswith("on-failure"):
            pod_policy = "OnFailure"
            if ":" in restart:
                backoff = int(restart.split(":", 1)[1])
        elif restart in ("always", "unless-stopped"):
            pod_policy = "Always"
        else:
            pod_policy, backoff = "Never", 0
        rules: list[FailureRule] = []
        if role_policy == "ExitCode":
            pod_policy = "Never"
            written = self.written.restart.get(role) if self.written else None
            role_backoff = written.backoff_limit if written else None
            backoff = role_backoff if role_backoff is not None else int(self.meta.get("backoffLimit") or 6)
            rules = [FailureRule("FailJob", "In", list(Restart("ExitCode").permanent_exit_codes))]
        aliases = [svc.get("hostname") or name]
        for net in (svc.get("networks") or {}).values() if isinstance(svc.get("networks"), dict) else []:
            aliases += list((net or {}).get("aliases") or [])
        labels = {str(k): str(v) for k, v in (svc.get("labels") or {}).items()} if isinstance(
            svc.get("labels"), dict) else {}
        grace = _seconds(svc.get("stop_grace_period", "10s"))
        return Replica(
            name=str(svc.get("hostname") or f"{job}-{role}-{index}"), role=role, index=index,
            workload="Deployment" if pod_policy == "Always" else "Job",
            restart_policy=pod_policy, backoff_limit=backoff, active_deadline=None, failure_rules=rules,
            hostname=str(svc.get("hostname") or name), aliases=list(dict.fromkeys(aliases)), labels=labels,
            init_containers=[self._container(i, self.services[i]) for i in inits.get(name, [])],
            main=self._container(name, svc, main=True), grace=grace, spec_policy=role_policy)

    def _environment_entry(self, entry: str) -> tuple[str, str]:
        name, sep, value = entry.partition("=")
        return (name, value) if sep else (entry, self.variables.get(entry, ""))

    def _container(self, name: str, svc: dict, main: bool = False) -> Container:
        where = f"services.{name}"
        if not svc.get("image"):
            raise self.fail(("services", name), "has no image (build: is not supported by the emulator)")
        env = svc.get("environment") or {}
        if isinstance(env, list):
            # `- NAME` takes the variable from the user's -e/--env-file/.env, never the whole environment
            env = dict(self._environment_entry(str(e)) for e in env)
        if not isinstance(env, dict):
            raise self.fail(("services", name, "environment"), f"is {type(env).__name__}",
                            expected="a mapping or a list")
        limits = ((svc.get("deploy") or {}).get("resources") or {}).get("limits") or {}
        reservations = ((svc.get("deploy") or {}).get("resources") or {}).get("reservations") or {}
        accel = 0
        for dev in reservations.get("devices") or []:
            caps = [c for group in (dev.get("capabilities") or [])
                    for c in ([group] if isinstance(group, str) else group)]
            if "gpu" in caps or dev.get("driver") == "nvidia":
                count = int(dev.get("count", 1) if dev.get("count") != "all" else 1)
                accel += len(dev.get("device_ids") or []) or count
        try:
            cpu = Decimal(str(limits["cpus"])) if "cpus" in limits else None
            memory = _mem(limits["memory"]) if "memory" in limits else None
        except (ValueError, ArithmeticError):
            raise self.fail(("services", name, "deploy", "resources", "limits"), f"cannot read {limits}") from None
        pids = self._pids(svc, limits, name)
        published = _list(svc, "ports", name, self)
        ports = [compose_port(p, f"{self.path}: {where}.ports", published, i) for i, p in enumerate(published)]
        exposed = _list(svc, "expose", name, self)
        for i, p in enumerate(exposed):
            ports.append(compose_port(str(p).split("/")[0], f"{self.path}: {where}.expose", exposed, i))
        mounts = [self._mount(v, name, i) for i, v in enumerate(svc.get("volumes") or [])]
        tmpfs = svc.get("tmpfs") or []
        for t in [tmpfs] if isinstance(tmpfs, str) else tmpfs:
            mounts.append(Mount(str(t).split(":")[0], "tmpfs", name))
        if svc.get("shm_size"):
            mounts.append(Mount("/dev/shm", "tmpfs", "shm", size=_mem(svc["shm_size"])))
        x = svc.get("x-trainspec") or {}
        lifecycle = x.get("lifecycle") or {}
        return Container(
            name=name, image=str(svc["image"]),
            command=self._words(svc.get("entrypoint")), args=self._words(svc.get("command")),
            working_dir=svc.get("working_dir"),
            env=[EnvSource(str(k), str(v if v is not None else ""), literal=False) for k, v in env.items()],
            ports=ports, cpu=cpu, memory=memory, accelerators={"nvidia.com/gpu": accel} if accel else {},
            mounts=mounts,
            post_start=self._hook(lifecycle.get("postStart")), pre_stop=self._hook(lifecycle.get("preStop")),
            readiness=self._healthcheck(svc.get("healthcheck")) if main else None,
            expand=False, security=compose_security(svc, f"{self.path}: {where}"), pids=pids)

    def _pids(self, svc: dict, limits: dict, name: str) -> int | None:
        """pids_limit / deploy.resources.limits.pids (docker compose refuses the two when they differ);
        -1 or 0 (Docker's "unlimited") is not honoured: the run's default applies (model/limits.py),
        said in a note (unhonoured.py) — only the user lifts it, with --pids-limit none."""
        given = {key: value for key, value in (("pids_limit", svc.get("pids_limit")),
                                               ("deploy.resources.limits.pids", limits.get("pids")))
                 if value is not None}
        at = ("services", name, "pids_limit") if "pids_limit" in given else \
            ("services", name, "deploy", "resources", "limits", "pids")
        values = set()
        for value in given.values():
            if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).lstrip("-").isdigit():
                raise self.fail(at, f"is {value!r}", expected="a whole number of processes (-1: unlimited)")
            values.add(int(value))
        if len(values) > 1:
            raise self.fail(at, f"pids_limit {given.get('pids_limit')} and deploy.resources.limits.pids "
                            f"{given.get('deploy.resources.limits.pids')} differ",
                            expected="one value (docker compose refuses distinct ones too)")
        if not values:
            return None
        n = values.pop()
        return n if n > 0 else None  # "unlimited": the run's default applies (unhonoured.py says so)

    @staticmethod
    def _words(value: Any) -> list[str] | None:
        if value is None:
            return None
        if isinstance(value, str):
            return shlex.split(value)
        return [str(w) for w in value]

    @staticmethod
    def _hook(h: dict | None) -> list[str] | None:
        if not h:
            return None
        cmd = (h.get("exec") or {}).get("command")
        return [str(c) for c in cmd] if cmd else None

    @staticmethod
    def _healthcheck(h: dict | None) -> Probe | None:
        if not h or h.get("disable"):
            return None
        test = h.get("test")
        if isinstance(test, str):
            cmd = ["/bin/sh", "-c", test]
        elif test and test[0] == "CMD-SHELL":
            cmd = ["/bin/sh", "-c", " ".join(test[1:])]
        elif test and test[0] == "CMD":
            cmd = [str(t) for t in test[1:]]
        else:
            return None
        period = _health_duration(h.get("interval"))
        # Docker does not count failures during start_period towards `retries` (unhealthy): as many more
        grace = math.ceil(_seconds(h.get("start_period", "0s")) / period) if period else 0
        return Probe("exec", command=cmd, initial_delay=0, period=period,
                     timeout=_health_duration(h.get("timeout")), failure_threshold=int(h.get("retries", 3)) + grace)

    def _mount(self, v: Any, service: str, i: int) -> Mount:
        where, at = f"services.{service}", ("services", service, "volumes", i)
        if isinstance(v, str):
            parts = v.split(":")
            src, target = (parts[0], parts[1]) if len(parts) > 1 else ("", parts[0])
            ro = len(parts) > 2 and "ro" in parts[2].split(",")
            kind = "bind" if src.startswith((".", "/", "~")) else "volume"
            v = {"type": kind, "source": src, "target": target, "read_only": ro}
        kind, src, target = v.get("type", "volume"), str(v.get("source", "")), str(v.get("target"))
        ro = bool(v.get("read_only", False))
        if kind == "volume":
            if not src:
                return Mount(target, "emptydir", target.strip("/").replace("/", "-") or "anon", ro)
            vol = ((self.doc.get("volumes") or {}).get(src) or {})
            claim = vol.get("name", src) if isinstance(vol, dict) else src
            claim = safe_name(claim, "volume name", f"{self.path}: {where}.volumes")
            root = f"{self.state_dir}/volumes/{claim}"
            return Mount(target, "bind", root, ro, root=root)
        if kind == "bind":
            if "\0" in src:
                raise self.fail(at, f"bind source {src!r} holds a NUL byte")
            host = Path(os.path.expanduser(src))
            host = host if host.is_absolute() else (self.base / host)
            try:
                exists, real = host.exists(), host.resolve()
            except OSError as exc:
                raise self.fail(at, f"bind source {host} cannot be looked at ({exc.strerror}); the emulator mounts "
                                "only host paths it can check") from None
            if not exists:
                if host.name.endswith("-ssh"):
                    # MPI keys: made for this run, like the k8s path does.
                    self.generated_keys = self.generated_keys or ssh_keypair()
                    k = self.generated_keys
                    files = [FileEntry("id_rsa", k["ssh-privatekey"], 0o600),
                             FileEntry("id_rsa.pub", k["ssh-publickey"], 0o600),
                             FileEntry("authorized_keys", k["ssh-publickey"], 0o600)]
                    return Mount(target, "files", host.name, True, files, secret=True)
                notes = "; ".join(self.meta.get("notes") or [])
                raise self.fail(at, f"bind source {host} does not exist"
                                + (f" (x-trainspec notes: {notes})" if notes else ""))
            return Mount(target, "bind", str(real), ro, host_path=True)
        if kind == "tmpfs":
            size = (v.get("tmpfs") or {}).get("size")
            return Mount(target, "tmpfs", target, ro, size=_mem(size) if size else None)
        raise self.fail(at, f"volume type {kind!r} is not supported by the emulator")


def _deps(svc: dict) -> dict:
    deps = svc.get("depends_on") or {}
    return deps if isinstance(deps, dict) else {d: {} for d in deps}


# Docker's defaults for a healthcheck's interval and timeout (daemon/health.go defaultProbeInterval,
# defaultProbeTimeout); 0 means "inherit" in the Engine API's HealthConfig, so Compose's 0 is these too.
HEALTH_DEFAULT = 30.0
HEALTH_MINIMUM = 0.001   # the daemon refuses an interval or timeout under 1 ms ("cannot be less than 1ms")


def _health_duration(value: Any) -> float:
    """A healthcheck interval or timeout: unset or 0 (or negative) is Docker's default, 30 s — never a
    loop of `exec`s with no delay; under 1 ms is raised to 1 ms, as the daemon would refuse it."""
    seconds = _seconds(value) if value is not None else 0.0
    if seconds <= 0:
        return HEALTH_DEFAULT
    return max(seconds, HEALTH_MINIMUM)


def _seconds(value: Any) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    total = 0.0
    for num, unit in re.findall(r"([0-9.]+)(ms|us|h|m|s)", str(value)):
        total += float(num) * {"h": 3600, "m": 60, "s": 1, "ms": 0.001, "us": 1e-6}[unit]
    return total
