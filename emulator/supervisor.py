"""One run of a job: what the kubelet and the training operator would do, on Docker.

`Run.execute()` checks everything that can be checked before touching
Docker (daemon, images, GPUs, secrets, ports), then creates the run's network,
starts one PodRunner thread per replica (servers first), decides the job's
outcome by the framework's rule, and always removes what it created — on
success, failure, Ctrl-C and SIGTERM — unless --keep.
"""

from __future__ import annotations

import io
import secrets
import signal
import tarfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

import docker.errors
import requests.exceptions

from ..compiler.errors import UsageError
from . import docker_backend as db
from . import gpus as gpu_mod
from .model import Container, JobModel, Mount, Replica
from .podenv import command_and_args, container_env
from .policy import FAILED, SUCCEEDED, Decision, decide
from .probes import ProbeLoop, check_once
from .state import run_dir, state_dir, supervisor_id, write_state
from .ui import Console, Row, masker

PENDING, INIT, RUNNING, TERMINATED = "Pending", "Init", "Running", "Terminated"
SERVER_ROLES = ("scheduler", "ps", "server", "master", "chief")


@dataclass
class RunOptions:
    gpus: str | None = None             # --gpus all|none|0,1,2
    cpu_only: bool = False
    offline: bool = False               # internal network, DNS never leaves the machine
    keep: bool = False
    state_dir: str | None = None
    images: list[str] = field(default_factory=list)   # --image NEW | OLD=NEW
    backoff: float = 1.0                # first restart delay; doubles up to max_backoff
    max_backoff: float = 10.0
    max_grace: float = 10.0             # cap on terminationGracePeriodSeconds
    colour: str | None = None
    quiet: bool = False
    run_id: str | None = None
    assume_gpu_runtime: bool = False    # trust that the daemon can pass GPUs through
    allow_host_path: bool = False       # --allow-host-path: mount even /, /etc, the Docker socket...
    daemon_wait: float = 15.0           # after losing the daemon, wait this long for it to clean up
                                        # ($TRAINSPEC_DAEMON_WAIT)


@dataclass
class Status:
    phase: str = PENDING
    ready: bool = False
    restarts: int = 0
    failures: int = 0
    exit_code: int | None = None
    reason: str = ""
    since: float = field(default_factory=time.time)
    container: str = ""


class Run:
    def __init__(self, job: JobModel, opts: RunOptions, stream: TextIO | None = None):
        self.job = job
        self.opts = opts
        self.run_id = opts.run_id or f"{job.name}-{secrets.token_hex(3)}"
        self.state = state_dir(opts.state_dir)
        self.dir = run_dir(self.state, self.run_id)
        self.stream = stream
        self.cond = threading.Condition()
        self.status = {r.name: Status() for r in job.replicas}
        self.interrupted: str | None = None
        self.fatal: Exception | None = None
        self.client: Any = None
        self.events: Events | None = None
        self.runners: dict[str, PodRunner] = {}
        self.gpu_ids: dict[str, list[str]] = {}
        self.ips: dict[str, str] = {}
        self.gateway = ""
        self.ncpu = 0
        self.supervisor = supervisor_id()
        self.started = time.time()
        self.decision: Decision | None = None
        self.dirty = True
        self.prepared = False
        # Set once every replica has left Pending (its first container started, or it ended):
        # what `run --detach` waits for before it returns.
        self.all_started = threading.Event()
        self._left_pending: set[str] = set()
        self.daemon_lost: str | None = None
        self.hurry = False
        self.mask = masker(v for data in (job.secrets or {}).values() for v in data.values())
        self.console = self.make_console(stream, opts.colour, opts.quiet)

    def make_console(self, stream: TextIO | None, colour: str | None, quiet: bool) -> Console:
        console = Console([r.display for r in self.job.replicas] + self._init_names(), stream, colour, quiet=quiet)
        console.mask = self.mask
        return console

    def _init_names(self) -> list[str]:
        return [f"{r.display}:{c.name}" for r in self.job.replicas for c in r.init_containers]

    # ------------------------------------------------------------------
    # before anything is created
    def prepare(self) -> None:
        job = self.job
        if not self.opts.allow_host_path:
            check_host_paths(job)
        self._map_images()
        from .loader import missing_objects_error

        missing_objects_error(job)
        if self.opts.cpu_only:
            dropped = gpu_mod.drop_gpus(job)
            if dropped:
                self.console.note(f"--cpu-only: GPU requests dropped ({dropped}); this is a CPU dry-run")
        else:
            gpu_mod.check_accelerator_names(job)
        wanted = gpu_mod.requested(job)
        self.client = db.connect(len(job.replicas))
        info = self.client.info()
        self.ncpu = int(info.get("NCPU") or 0)
        if wanted:
            allowed = gpu_mod.parse_gpus_option(self.opts.gpus)
            if allowed == []:
                raise UsageError(f"the job asks for {sum(wanted.values())} GPUs but --gpus none allows none; "
                                 "use --cpu-only for a CPU dry-run")
            if not (db.has_nvidia_runtime(info) or self.opts.assume_gpu_runtime):
                raise UsageError(
                    f"the job asks for {sum(wanted.values())} GPUs but this Docker daemon has no NVIDIA runtime "
                    f"(runtimes: {', '.join(sorted(info.get('Runtimes') or {})) or 'none'}); install the NVIDIA "
                    "Container Toolkit and restart dockerd, or run with --cpu-only for a CPU dry-run")
            available = allowed if allowed is not None else gpu_mod.detect_host_gpus()
            if allowed is None and not available:
                raise UsageError("cannot list this machine's GPUs (nvidia-smi found none); "
                                 "pass the ids to use with --gpus 0,1,... or run with --cpu-only")
            self.gpu_ids = gpu_mod.assign(job, available)
        biggest = max((c.cpu for r in job.replicas for c in [*r.init_containers, r.main] if c.cpu), default=None)
        if biggest is not None and self.ncpu and biggest > self.ncpu:
            self.console.note(f"CPU limits above this machine's {self.ncpu} CPUs (up to {biggest:g}) are capped "
                              f"at {self.ncpu}")
        missing = db.missing_images(self.client, job.images())
        if missing:
            raise UsageError(
                f"image{'s' if len(missing) > 1 else ''} not present locally: {', '.join(missing)}; the emulator "
                "never pulls (that could hang or fetch the wrong thing): `docker pull`/`docker build`/`docker load` "
                "it first, or map it to a local image with --image OLD=NEW (or --image NEW for every role)")
        self._check_host_ports()
        for r in job.replicas:
            for c in [*r.init_containers, r.main]:
                for m in c.mounts:
                    if m.kind == "bind" and m.source.startswith(str(self.state / "volumes")):
                        Path(m.source).mkdir(parents=True, exist_ok=True)
        self.prepared = True

    def _map_images(self) -> None:
        mapping: dict[str, str] = {}
        every: str | None = None
        for spec in self.opts.images:
            if "=" in spec:
                old, new = spec.split("=", 1)
                mapping[old] = new
            else:
                every = spec
        for r in self.job.replicas:
            for c in [*r.init_containers, r.main]:
                if c.image in mapping:
                    c.image = mapping[c.image]
                elif every and c is r.main:
                    c.image = every

    def _check_host_ports(self) -> None:
        seen: dict[int, str] = {}
        for r in self.job.replicas:
            for port, _proto, host_port in r.main.ports:
                if not host_port:
                    continue
                if host_port in seen:
                    raise UsageError(f"{r.display} and {seen[host_port]} both publish host port {host_port}")
                seen[host_port] = r.display
                if not db.host_port_free(int(host_port)):
                    raise UsageError(f"{r.display} publishes host port {host_port}, which is already in use")

    # ------------------------------------------------------------------
    def execute(self) -> int:
        if not self.prepared:
            self.prepare()
        restore = self._install_signals()
        try:
            try:
                self._setup()
                self._start_runners()
                self._wait()
            except KeyboardInterrupt:
                self.interrupted = self.interrupted or "SIGINT"
            except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
                # e.g. the network cannot be created because the daemon just went away
                self.set_fatal(UsageError(f"Docker error: {db.short(exc)}"))
            finally:
                self._shutdown()
        finally:
            restore()
            self.all_started.set()
        if isinstance(self.fatal, UsageError):
            raise UsageError(self.mask(str(self.fatal)))
        if self.fatal is not None:
            raise self.fatal
        if self.interrupted:
            return {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}.get(self.interrupted, 130)
        return 0 if self.decision and self.decision.outcome == SUCCEEDED else 1

    def _install_signals(self):
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        old: dict[int, Any] = {}

        def handler(signum, _frame):
            name = signal.Signals(signum).name
            if self.interrupted:  # a second signal: stop waiting for grace periods
                self.opts.max_grace = 0
                self.hurry = True
            self.opts.max_grace = min(self.opts.max_grace, read_stop_grace(self.dir))  # `trainspec down -t N`
            self.interrupted = self.interrupted or name
            with_cond = self.cond
            try:
                if with_cond.acquire(blocking=False):
                    with_cond.notify_all()
                    with_cond.release()
            except RuntimeError:
                pass

        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            old[sig] = signal.signal(sig, handler)

        def restore():
            for sig, h in old.items():
                signal.signal(sig, h)

        return restore

    def _setup(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self._save_state()
        job = self.job
        n = len(job.replicas)
        net_labels = self._labels()
        self.network, subnet = db.create_network(self.client, self.run_id, net_labels, self.opts.offline, n)
        hosts = list(subnet.hosts())
        self.gateway = str(hosts[0])
        for r, ip in zip(job.replicas, hosts[1:]):
            self.ips[r.name] = str(ip)
        # Every replica's names in every hosts file: no DNS timing dependence.
        counts: dict[str, int] = {}
        for r in job.replicas:
            for a in r.aliases:
                counts[a] = counts.get(a, 0) + 1
        self.extra_hosts = {a: self.ips[r.name] for r in job.replicas for a in r.aliases if counts[a] == 1}
        self.events = Events(self.client, self.run_id, self.lose_daemon)
        self.events.start()
        self.events.ready.wait(5)
        self.console.note(f"run {self.run_id}: {n} replica{'s' if n != 1 else ''} of job {job.name} "
                          f"({job.framework or 'plain'}) on network {self.run_id}"
                          f"{' (offline)' if self.opts.offline else ''}; logs in {self._rel(self.dir)}")
        for name, ids in self.gpu_ids.items():
            disp = next(r.display for r in job.replicas if r.name == name)
            self.console.note(f"{disp}: GPUs {','.join(ids)}")

    def create_all(self) -> dict[str, str]:
        """Set the run up and create every main container without starting any.

        For inspecting exactly what would be sent to Docker (GPU device
        requests, env, mounts); remove with `teardown()`.
        """
        self.prepare()
        self._setup()
        out = {}
        for r in self.job.replicas:
            out[r.display] = self.create_container(r, r.main, "main", self.emptydir_volumes(r, 0))
        return out

    def teardown(self) -> None:
        if self.events is not None:
            self.events.close()
        if self.client is not None:
            db.remove_run(self.client, self.run_id)

    def _labels(self, **extra: str) -> dict[str, str]:
        return db.labels(self.run_id, self.job.name, self.supervisor, str(self.state), **extra)

    def _start_runners(self) -> None:
        servers_started: list[threading.Event] = []
        for r in self.job.replicas:
            runner = PodRunner(self, r)
            self.runners[r.name] = runner
            if r.role.lower() in SERVER_ROLES or (self.job.framework == "mpi" and r.role == "worker"):
                servers_started.append(runner.started)
            else:
                runner.wait_for = servers_started
        for runner in self.runners.values():
            runner.start()

    def _wait(self) -> None:
        job = self.job
        while True:
            if self.interrupted or self.fatal:
                return
            with self.cond:
                phases = {n: s.phase for n, s in self.status.items()}
                reasons = {n: s.reason for n, s in self.status.items()}
                # The operators count restarts of OnFailure/Always replicas against the job's backoffLimit.
                total_restarts = sum(self.status[r.name].restarts for r in job.replicas
                                     if r.restart_policy in ("OnFailure", "Always"))
            decision = decide(job, phases, reasons)
            now = time.time()
            if (decision is None and job.backoff_limit is not None and total_restarts
                    and total_restarts >= max(job.backoff_limit, 1)):
                decision = Decision(FAILED, f"BackoffLimitExceeded: {total_restarts} restarts, backoffLimit "
                                            f"{job.backoff_limit}")
            if decision is None and job.active_deadline is not None and now - self.started > job.active_deadline:
                decision = Decision(FAILED, f"DeadlineExceeded: activeDeadlineSeconds {job.active_deadline:g}")
            if decision is None and all(not rn.is_alive() for rn in self.runners.values()):
                decision = Decision(FAILED, "every replica stopped without the job's success rule being met")
            if decision is not None:
                self.decision = decision
                return
            for r in job.replicas:
                rn = self.runners[r.name]
                if r.active_deadline is not None and rn.is_alive() and now - rn.t0 > r.active_deadline:
                    rn.fail(f"DeadlineExceeded: activeDeadlineSeconds {r.active_deadline:g}")
            self._refresh()
            with self.cond:
                self.cond.wait(0.25)

    def _refresh(self) -> None:
        with self.cond:
            # On a terminal the table is redrawn every second anyway: AGE moves.
            tick = self.console.live and time.time() - getattr(self, "_drawn_at", 0) >= 1
            if not self.dirty and not tick:
                return
            self.dirty = False
            self._drawn_at = time.time()
        self.console.update(self.rows())
        self._save_state()

    def rows(self) -> list[Row]:
        with self.cond:
            return [Row(r.display, s.phase, s.ready, s.restarts, s.exit_code, s.reason, s.since)
                    for r, s in ((r, self.status[r.name]) for r in self.job.replicas)]

    def _shutdown(self) -> None:
        policy = self.job.clean_pod_policy
        abandon = self.opts.keep and policy == "None" and self.decision is not None
        if self.interrupted:
            self.console.note(f"{self.interrupted}: stopping the run")
        elif self.fatal is None and self.decision is not None:
            msg = f"job {self.job.name} {self.decision.outcome.lower()}: {self.decision.reason}"
            self.console.note(msg)
        for rn in self.runners.values():
            if abandon:
                rn.abandon()
            else:
                rn.terminate()
        deadline = time.time() + (5 if self.daemon_lost else self.opts.max_grace + 15)
        while time.time() < deadline and any(rn.is_alive() for rn in self.runners.values()):
            if self.hurry:
                break  # a second Ctrl-C: no more waiting, force-remove below
            for rn in self.runners.values():
                rn.join(0.05)
        self.console.finish()
        if self.events is not None:
            self.events.close()
        if not self.opts.keep and self.client is not None:
            self._remove_everything()
        elif self.opts.keep:
            self.console.note(f"--keep: containers and network of {self.run_id} left in place; "
                              f"remove them with `trainspec down {self.run_id}`")
        self.dirty = True
        self._save_state(final=True)
        if self.decision is not None or self.interrupted or self.daemon_lost:
            self._summary()

    def _remove_everything(self) -> None:
        """Remove the run by label. When the daemon went away mid-run, wait a little for
        it to come back (a restart takes seconds) so nothing is left behind; if it does not,
        say what to run later."""
        deadline = time.time() + self.opts.daemon_wait
        said = False
        while True:
            try:
                db.remove_run(self.client, self.run_id)
                return
            except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
                unreachable = isinstance(exc, requests.exceptions.ConnectionError) or not self.daemon_answers()
                if unreachable and not self.daemon_lost and not self.interrupted:
                    # It went away as the run ended — a daemon that shuts down stops every container
                    # first, so the exits that decided the job were probably its doing.
                    self.lose_daemon(f"it stopped answering as the run ended: {db.short(exc)}")
                if time.time() >= deadline or not unreachable or self.hurry:  # a second Ctrl-C: no waiting
                    self.console.note(f"could not remove the run's containers ({db.short(exc)}); "
                                      "run `trainspec gc` once the Docker daemon answers again")
                    return
                if not said:
                    self.console.note(f"waiting up to {self.opts.daemon_wait:g}s for the Docker daemon to answer "
                                      "again, to remove the run's containers and network")
                    said = True
                time.sleep(0.5)

    def daemon_answers(self) -> bool:
        try:
            self.client.ping()
            return True
        except Exception:  # noqa: BLE001
            return False

    def lose_daemon(self, detail: str) -> None:
        """The event stream ended while the run was live: the daemon stopped or restarted.
        Containers may have been killed behind our back and exits may be missed: the run
        cannot be trusted any more, so it ends with a clear error (exit code 2), not a hang."""
        with self.cond:
            if self.daemon_lost:
                return
            self.daemon_lost = detail
            if getattr(self.fatal, "docker_error", False):
                self.fatal = None  # a replica's Docker error was this: say what happened instead
        self.set_fatal(UsageError(
            f"lost the connection to the Docker daemon mid-run ({detail}): it stopped or restarted, "
            "so the run cannot be followed any more; its containers are removed when the daemon answers "
            "again (else run `trainspec gc` later)"))

    def _summary(self) -> None:
        out = self.console
        elapsed = time.time() - self.started
        table = out.table(self.rows(), age=False)
        if self.daemon_lost:
            head = f"job {self.job.name} LOST after {elapsed:.1f}s: the Docker daemon stopped or restarted mid-run"
        elif self.decision is not None and not self.interrupted:
            head = f"job {self.job.name} {self.decision.outcome.upper()} in {elapsed:.1f}s ({self.decision.reason})"
        else:
            head = f"job {self.job.name} INTERRUPTED ({self.interrupted}) after {elapsed:.1f}s"
        text = self.mask(f"{head}\n{table}\nlogs: {self._rel(self.dir)}/")
        with out.lock:
            out.out.write(text + "\n")
            out.out.flush()

    def _save_state(self, final: bool = False) -> None:
        rows = self.rows()
        data = {
            "run_id": self.run_id, "job": self.job.name, "namespace": self.job.namespace,
            "framework": self.job.framework, "source": self.job.source, "started": self.started,
            "supervisor": self.supervisor, "kept": self.opts.keep,
            "status": ("Interrupted" if self.interrupted else "Error" if self.daemon_lost and final
                       else self.decision.outcome if self.decision
                       else "Error" if (final and self.fatal) else "Running" if not final else "Stopped"),
            "reason": self.mask(str(self.fatal) if self.daemon_lost and self.fatal else self.decision.reason
                                if self.decision else (str(self.fatal) if self.fatal else "")),
            "finished": time.time() if final else None,
            "replicas": [{"name": r.name, "display": row.name, "phase": row.phase, "restarts": row.restarts,
                          "exit_code": row.exit_code, "reason": self.mask(row.reason), "ready": row.ready}
                         for r, row in zip(self.job.replicas, rows)],
        }
        try:
            write_state(self.dir, data)
        except OSError:
            pass

    @staticmethod
    def _rel(p: Path) -> str:
        try:
            return str(p.relative_to(Path.cwd()))
        except ValueError:
            return str(p)

    # ------------------------------------------------------------------
    # called from runner threads
    def set_status(self, r: Replica, **changes: Any) -> None:
        with self.cond:
            st = self.status[r.name]
            old_phase, old_ready = st.phase, st.ready
            for k, v in changes.items():
                setattr(st, k, v)
            if "phase" in changes and changes["phase"] != old_phase:
                st.since = time.time()
                if old_phase == PENDING and r.name not in self._left_pending:
                    self._left_pending.add(r.name)
                    if len(self._left_pending) == len(self.status):
                        self.all_started.set()
            self.dirty = True
            self.cond.notify_all()
        if "phase" in changes and changes["phase"] != old_phase:
            detail = f" ({st.reason})" if st.reason else ""
            self.console.transition(r.display, f"{old_phase} -> {st.phase}{detail}")
        elif "ready" in changes and st.ready != old_ready and st.phase == RUNNING:
            self.console.transition(r.display, "ready" if st.ready else "not ready")

    def set_fatal(self, exc: Exception) -> None:
        with self.cond:
            if self.fatal is None:
                self.fatal = exc
            self.cond.notify_all()
        self.all_started.set()

    def create_container(self, r: Replica, c: Container, kind: str, emptydirs: dict[str, str]) -> str:
        ip = self.ips[r.name]
        env = container_env(c, r, self.job.namespace, ip, self.gateway)
        # Only containers that ask for the accelerator see the pod's GPUs (not e.g. a busybox init step).
        ids = self.gpu_ids.get(r.name) if c.accelerators else None
        if ids:
            env["NVIDIA_VISIBLE_DEVICES"] = ",".join(ids)
            env.setdefault("NVIDIA_DRIVER_CAPABILITIES", "compute,utility")
        else:
            # A replica without GPUs sees none, even where nvidia is the default runtime.
            env.setdefault("NVIDIA_VISIBLE_DEVICES", "void")
        command, args = command_and_args(c, env)
        binds: list[str] = []
        tmpfs: dict[str, str] = {}
        for m in c.mounts:
            if m.kind == "bind":
                binds.append(f"{m.source}:{m.target}:{'ro' if m.read_only else 'rw'}")
            elif m.kind == "emptydir":
                binds.append(f"{emptydirs[m.source]}:{m.target}:{'ro' if m.read_only else 'rw'}")
            elif m.kind == "tmpfs":
                tmpfs[m.target] = f"size={m.size}" if m.size else ""
        cpu = c.cpu
        if cpu is not None and self.ncpu and cpu > self.ncpu:
            cpu = Decimal(self.ncpu)  # Docker refuses a quota above the machine's CPUs
        suffix = "" if kind == "main" else f"-init-{c.name}"
        name = f"{self.run_id}-{r.role}-{r.index}{suffix}"
        ports = {p: hp for p, _proto, hp in c.ports if hp} if kind == "main" else {}
        dns, dns_opt = (["127.0.0.1"], ["timeout:1", "attempts:1"]) if self.opts.offline else (None, None)
        cid = db.create_container(
            self.client, name=name, image=c.image, entrypoint=command, cmd=args, env=env,
            working_dir=c.working_dir, hostname=r.hostname,
            label_map=self._labels(**{db.REPLICA: r.display, db.CONTAINER: c.name}),
            network=self.run_id, ip=ip, aliases=r.aliases, extra_hosts=self.extra_hosts, binds=binds,
            mounts=[], tmpfs=tmpfs,
            nano_cpus=int(cpu * 10**9) if cpu else None, mem_limit=c.memory,
            gpu_ids=ids, port_bindings=ports, dns=dns, dns_opt=dns_opt)
        files = [m for m in c.mounts if m.kind == "files"]
        if files:
            self.client.api.put_archive(cid, "/", _tar(files))
        return cid

    def emptydir_volumes(self, r: Replica, attempt: int) -> dict[str, str]:
        """A fresh emptyDir per pod (a restarted container keeps its pod's)."""
        out: dict[str, str] = {}
        for c in [*r.init_containers, r.main]:
            for m in c.mounts:
                if m.kind == "emptydir" and m.source not in out:
                    name = f"{self.run_id}-{r.role}-{r.index}-{m.source}-{attempt}"
                    self.client.api.create_volume(name, labels=self._labels(**{db.REPLICA: r.display}))
                    out[m.source] = name
        return out


# -- host paths ---------------------------------------------------------------

# Mounting any of these (or anything inside them) hands a container the host: its
# configuration and credentials, kernel interfaces, devices, or the Docker daemon itself
# (the socket, or its state). Anything that *contains* one of them (/, /var, /run...) too.
DENIED_TREES = ("/etc", "/proc", "/sys", "/dev", "/boot", "/var/lib/docker", "/var/lib/containerd",
                "/var/lib/kubelet", "/run/docker", "/run/docker.sock", "/run/containerd", "/var/run/docker.sock")
# These are refused as a whole; a folder inside them (e.g. /home/me/data) is fine.
DENIED_EXACT = ("/home", "/root", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/tmp", "/var/tmp")
# Credentials under a home folder (the user's own and root's): refused with all inside them.
HOME_SECRETS = (".ssh", ".docker", ".kube", ".aws", ".gnupg", ".config/gcloud", ".netrc")
SOCKETS = ("docker.sock", "containerd.sock", "podman.sock", "dockershim.sock", "crio.sock")


def denied_host_path(path: str) -> str | None:
    """Why mounting `path` from the host is refused (None: it is fine). The path is
    resolved first — symlinks and `..` — so `/data/../etc` or a link to the Docker
    socket are caught too."""
    import os

    plain = os.path.normpath("/" + (path or "/")).replace("//", "/")
    try:
        real = os.path.realpath(plain)
    except OSError:  # e.g. a /proc link we may not follow: judge the path as written
        real = plain
    if real != plain:
        why = denied_host_path(real)  # both the path as written and where it leads
        if why:
            return why
        real = plain
    if real == "/":
        return "it is the host's whole filesystem"
    homes = {"/root", os.path.realpath(os.path.expanduser("~"))} - {"/"}
    trees = [os.path.realpath(t) for t in DENIED_TREES] + list(DENIED_TREES)
    trees += [os.path.join(h, s) for h in homes for s in HOME_SECRETS]
    host = os.environ.get("DOCKER_HOST", "")
    if host.startswith("unix://"):
        trees.append(os.path.realpath(host[len("unix://"):]))
    for tree in trees:
        if real == tree or real.startswith(tree.rstrip("/") + "/"):
            return f"it is {tree}" if real == tree else f"it is inside {tree}"
        if tree.startswith(real.rstrip("/") + "/"):
            return f"it contains {tree}"
    if real in {os.path.realpath(e) for e in DENIED_EXACT} | set(DENIED_EXACT) | homes:
        return f"it is all of {real}"
    if os.path.basename(real) in SOCKETS:
        return "it is a container runtime's socket"
    return None


def check_host_paths(job: JobModel) -> None:
    """Refuse hostPath mounts (and compose binds) of the host's system folders, the Docker
    socket and the like, before anything is created; --allow-host-path lifts this."""
    bad = []
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            for m in c.mounts:
                if m.kind == "bind" and m.host_path:
                    why = denied_host_path(m.source)
                    if why:
                        name = r.display if c is r.main else f"{r.display}:{c.name}"
                        bad.append(f"{name} mounts host path {m.source} at {m.target} ({why})")
    if bad:
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise UsageError("refusing to mount host system paths into the job's containers: "
                         + "; ".join(bad[:5]) + more + ". A container that sees them can read the host's "
                         "secrets or take over the Docker daemon. Mount a data folder instead, or pass "
                         "--allow-host-path if you really mean it")


def read_stop_grace(run_dir_: Path) -> float:
    """The grace period `trainspec down -t N` asks for (a file it writes before signalling)."""
    try:
        return max(float((run_dir_ / "stop-grace").read_text().strip()), 0.0)
    except (OSError, ValueError):
        return float("inf")


def _tar(mounts: list[Mount]) -> bytes:
    """configMap/secret volumes as files, sent straight into the container:
    secret values never touch this machine's disk."""
    buf = io.BytesIO()
    now = time.time()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        dirs: set[str] = set()

        def add_dir(path: str) -> None:
            parts = path.strip("/").split("/")
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                if d and d not in dirs:
                    dirs.add(d)
                    info = tarfile.TarInfo(d)
                    info.type = tarfile.DIRTYPE
                    info.mode = 0o700 if d.endswith(".ssh") else 0o755
                    info.mtime = now
                    tar.addfile(info)

        for m in mounts:
            for f in m.files:
                path = m.target.strip("/") if m.single_file else f"{m.target.strip('/')}/{f.path}"
                add_dir(path.rsplit("/", 1)[0] if "/" in path else "")
                info = tarfile.TarInfo(path)
                info.size = len(f.data)
                info.mode = f.mode
                info.mtime = now
                tar.addfile(info, io.BytesIO(f.data))
    return buf.getvalue()


class Events(threading.Thread):
    """The daemon's event stream for this run's containers: how exits are seen."""

    def __init__(self, client: Any, run_id: str, on_lost=None):
        super().__init__(name="events", daemon=True)
        self.client = client
        self.run_id = run_id
        self.on_lost = on_lost
        self.closing = False
        self.lock = threading.Lock()
        self.exits: dict[str, int] = {}
        self.oom: set[str] = set()
        self.waiters: dict[str, threading.Event] = {}
        self.ready = threading.Event()
        self.stream: Any = None

    def run(self) -> None:
        try:
            self.stream = self.client.api.events(decode=True, filters={
                "type": "container", "label": f"{db.RUN_ID}={self.run_id}", "event": ["die", "oom"]})
            self.ready.set()
            for ev in self.stream:
                cid = ev.get("id") or (ev.get("Actor") or {}).get("ID")
                action = ev.get("Action") or ev.get("status")
                with self.lock:
                    if action == "oom":
                        self.oom.add(cid)
                    elif action == "die":
                        attrs = (ev.get("Actor") or {}).get("Attributes") or {}
                        self.exits[cid] = int(attrs.get("exitCode", -1))
                        w = self.waiters.get(cid)
                        if w:
                            w.set()
            lost = "the daemon closed its event stream"
        except Exception as exc:  # noqa: BLE001 - closed at shutdown; waiters also poll
            lost = db.short(exc)
        finally:
            self.ready.set()
        # The stream only ends when we close it, or when the daemon stops or restarts.
        if not self.closing and self.on_lost is not None:
            self.on_lost(lost)

    def waiter(self, cid: str) -> threading.Event:
        with self.lock:
            ev = self.waiters.setdefault(cid, threading.Event())
            if cid in self.exits:
                ev.set()
            return ev

    def exit_code(self, cid: str) -> int | None:
        with self.lock:
            return self.exits.get(cid)

    def close(self) -> None:
        self.closing = True
        try:
            if self.stream is not None:
                self.stream.close()
        except Exception:  # noqa: BLE001
            pass


class PodRunner(threading.Thread):
    """The kubelet for one replica, plus the Job controller's retry decision."""

    def __init__(self, run: Run, replica: Replica):
        super().__init__(name=f"pod-{replica.display}", daemon=True)
        self.run_ = run
        self.r = replica
        self.stop_ev = threading.Event()
        self.started = threading.Event()
        self.wait_for: list[threading.Event] = []
        self.cid: str | None = None
        self.kill_reason: str | None = None
        self.abandoned = False
        self.t0 = time.time()
        self.lock = threading.Lock()
        self.log_path = run.dir / f"{replica.display}.log"

    # -- control from the supervisor ------------------------------------
    def terminate(self) -> None:
        self.stop_ev.set()
        self.started.set()
        threading.Thread(target=self._kill, args=("stopped by the run",), daemon=True).start()

    def abandon(self) -> None:
        """cleanPodPolicy None with --keep: leave the container running, stop supervising."""
        self.abandoned = True
        self.stop_ev.set()

    def fail(self, reason: str) -> None:
        self.run_.set_status(self.r, phase=FAILED, reason=reason)
        self.stop_ev.set()
        threading.Thread(target=self._kill, args=(reason,), daemon=True).start()

    def _kill(self, reason: str) -> None:
        with self.lock:
            cid = self.cid
            if cid is None:
                return
            self.kill_reason = self.kill_reason or reason
        api = self.run_.client.api
        grace = min(self.r.grace, self.run_.opts.max_grace)
        if self.r.main.pre_stop and self.run_.events.exit_code(cid) is None and grace > 0 \
                and not self.run_.daemon_lost:
            db.exec_in(self.run_.client, cid, self.r.main.pre_stop, grace)
            grace = min(self.r.grace, self.run_.opts.max_grace)  # `down -t 0` while the hook ran
        try:
            if grace <= 0:
                api.kill(cid)  # no grace period: what `docker stop -t 0` does, without its wait
            else:
                api.stop(cid, timeout=int(grace))
        except Exception:  # noqa: BLE001 - gone already, or the daemon went away: nothing to stop
            pass

    # -- the pod's life -------------------------------------------------
    def run(self) -> None:
        try:
            self.log_file = open(self.log_path, "a", encoding="utf-8")
        except OSError:
            self.log_file = None
        try:
            self._pods()
        except UsageError as exc:
            # fatal first: a run that fails to start must not be reported as started (--detach)
            self.run_.set_fatal(exc)
            self.started.set()
            self.run_.set_status(self.r, phase=FAILED, reason=str(exc))
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            # The daemon went away or refused something mid-run: say so, without a traceback.
            if isinstance(exc, requests.exceptions.ConnectionError) or not self.run_.daemon_answers():
                self.run_.lose_daemon(db.short(exc))
            else:
                err = UsageError(f"{self.r.display}: Docker error: {db.short(exc)[:300]}")
                err.docker_error = True
                self.run_.set_fatal(err)
            self.started.set()
            self.run_.set_status(self.r, phase=FAILED, reason=f"Docker error: {db.short(exc)}")
        except Exception as exc:  # noqa: BLE001 - report, never hang the run
            self.run_.set_fatal(RuntimeError(f"{self.r.display}: {traceback.format_exc()}"))
            self.started.set()
            self.run_.set_status(self.r, phase=FAILED, reason=f"emulator error: {exc}")
        finally:
            self.started.set()
            if self.log_file:
                self.log_file.close()

    def _wait_for_servers(self) -> None:
        """Servers first (DOCKER-NOTES: fewer start races). Called between creating a pod's
        first container and starting it: creating is cheap and runs in parallel with the
        servers' start; only the start waits."""
        waits, self.wait_for = self.wait_for, []
        for ev in waits:
            ev.wait(15)

    def _pods(self) -> None:
        r = self.r
        attempt = 0
        while not self.stop_ev.is_set():
            emptydirs = self.run_.emptydir_volumes(r, attempt)
            outcome = self._init_containers(emptydirs)
            if outcome == "ok":
                outcome = self._main(emptydirs)
            if outcome != "newpod":
                break
            attempt += 1
        if self.stop_ev.is_set() and not self.abandoned and self.run_.status[r.name].phase in (PENDING, INIT):
            self.run_.set_status(r, phase=TERMINATED, reason="the run stopped before it started")

    def _init_containers(self, emptydirs: dict[str, str]) -> str:
        for c in self.r.init_containers:
            while True:
                if self.stop_ev.is_set():
                    return "stopped"
                self.run_.set_status(self.r, phase=INIT, reason=f"init container {c.name}")
                code = self._run_container(c, "init", emptydirs)
                if code is None or self._daemon_went_away(code):
                    return "stopped"
                if code == 0:
                    break
                action = self._on_failure(code, f"init container {c.name} exited {code}")
                if action != "restart":
                    return action
        return "ok"

    def _daemon_went_away(self, code: int) -> bool:
        """A container killed by a signal just as the daemon stops (it stops every container when
        it shuts down) is not the job's failure: check the daemon before counting it as one."""
        if code < 128 or self.run_.daemon_answers():
            return False
        self.run_.lose_daemon(f"{self.r.display} exited {code} and the daemon does not answer")
        return True

    def _main(self, emptydirs: dict[str, str]) -> str:
        while True:
            if self.stop_ev.is_set():
                return "stopped"
            code = self._run_container(self.r.main, "main", emptydirs)
            if code is None or self.abandoned or self._daemon_went_away(code):
                return "stopped"
            if self.stop_ev.is_set():
                st = self.run_.status[self.r.name]
                if st.phase not in (SUCCEEDED, FAILED):
                    self.run_.set_status(self.r, phase=SUCCEEDED if code == 0 else TERMINATED,
                                         exit_code=code, ready=False,
                                         reason="" if code == 0 else self.kill_reason or "")
                return "stopped"
            if code == 0 and self.r.restart_policy != "Always":
                self.run_.set_status(self.r, phase=SUCCEEDED, exit_code=0, ready=False, reason="")
                return "done"
            why = self.kill_reason or (f"exit code {code}" + (" (OOMKilled)" if self._oom() else ""))
            self.kill_reason = None
            action = self._on_failure(code, why)
            if action != "restart":
                return action

    def _oom(self) -> bool:
        return bool(self.cid and self.cid in self.run_.events.oom)

    def _on_failure(self, code: int, why: str) -> str:
        """restart (in place) | newpod | failed — the kubelet's and the Job controller's rules."""
        r, st = self.r, self.run_.status[self.r.name]
        if r.restart_policy in ("Always", "OnFailure"):
            if code != 0:
                st.failures += 1
            # The Job controller fails an OnFailure Job once its pods' restarts reach
            # backoffLimit (any restart when it is 0): no restart past that.
            if r.restart_policy == "OnFailure" and st.failures >= max(r.backoff_limit, 1):
                return self._failed(code, f"{why}; BackoffLimitExceeded ({r.backoff_limit})")
            return self._retry(code, why, "restart")
        # Pod restartPolicy Never: the pod failed; the Job controller decides.
        for rule in r.failure_rules:
            if rule.matches(code):
                if rule.action in ("FailJob", "FailIndex"):
                    return self._failed(code, f"{why}; not retryable (podFailurePolicy {rule.action})")
                if rule.action == "Ignore":
                    return self._retry(code, why, "newpod")
                break
        st.failures += 1
        if st.failures > r.backoff_limit:
            limit = f"BackoffLimitExceeded ({r.backoff_limit})" if r.backoff_limit else "restartPolicy Never"
            return self._failed(code, f"{why}; {limit}")
        return self._retry(code, why, "newpod")

    def _failed(self, code: int, why: str) -> str:
        self.run_.set_status(self.r, phase=FAILED, exit_code=code, ready=False, reason=why)
        return "failed"

    def _retry(self, code: int, why: str, action: str) -> str:
        st = self.run_.status[self.r.name]
        n = st.restarts + 1
        delay = min(self.run_.opts.backoff * 2 ** (n - 1), self.run_.opts.max_backoff)
        self.run_.set_status(self.r, phase=PENDING, exit_code=code, ready=False, restarts=n,
                             reason=f"{why}; restarting in {delay:g}s")
        if self.stop_ev.wait(delay):
            return "stopped"
        return action

    def _run_container(self, c: Container, kind: str, emptydirs: dict[str, str]) -> int | None:
        run, api = self.run_, self.run_.client.api
        with self.lock:
            old, self.cid = self.cid, None
        if old:  # the kubelet starts a fresh container; the name and address are reused
            try:
                api.remove_container(old, force=True)
            except docker.errors.APIError:
                pass
        if self.stop_ev.is_set():
            return None
        cid = run.create_container(self.r, c, kind, emptydirs)
        waiter = run.events.waiter(cid)
        with self.lock:
            self.cid = cid
            self.kill_reason = None
        if self.stop_ev.is_set():  # stopped while creating: never start it
            return None
        self._wait_for_servers()
        if self.stop_ev.is_set():
            return None
        label = self.r.display if kind == "main" else f"{self.r.display}:{c.name}"
        try:
            api.start(cid)
        except docker.errors.APIError as exc:
            raise UsageError(db.start_error_message(f"{label} ({c.image})", exc)) from None
        self.started.set()
        logs = threading.Thread(target=self._stream_logs, args=(cid, label), daemon=True)
        logs.start()
        probe_stop = threading.Event()
        if self.stop_ev.is_set():  # the run began to stop while this one was starting
            self._kill("stopped by the run")
        elif kind == "main":
            run.set_status(self.r, phase=RUNNING, reason="", exit_code=None,
                           ready=c.readiness is None, container=cid[:12])
            if c.post_start:
                code, out = db.exec_in(run.client, cid, c.post_start, max(self.r.grace, 30))
                if code != 0 and not self.stop_ev.is_set() and run.events.exit_code(cid) is None:
                    self.kill_reason = f"postStart hook failed ({out.strip()[:200] or code})"
                    api.kill(cid) if run.events.exit_code(cid) is None else None
            self._start_probes(c, cid, probe_stop)
        code = self._wait_exit(cid, waiter)
        probe_stop.set()
        if not self.abandoned:
            # The exit can be seen before the last lines: let the stream finish.
            logs.join(1 if self.run_.daemon_lost else 10)
        return code

    def _wait_exit(self, cid: str, waiter: threading.Event) -> int | None:
        api = self.run_.client.api
        polls = 0
        while not waiter.wait(1.0):
            if self.abandoned:
                return -1  # left running on purpose (cleanPodPolicy None with --keep)
            if self.run_.daemon_lost:
                return None  # the run ends with the daemon error; exits can no longer be trusted
            polls += 1
            if polls % 5 == 0:  # in case the event stream broke: ask directly
                try:
                    state = api.inspect_container(cid)["State"]
                except docker.errors.NotFound:
                    return 137
                if state.get("Status") in ("exited", "dead"):
                    return int(state.get("ExitCode", -1))
        code = self.run_.events.exit_code(cid)
        return code if code is not None else -1

    def _start_probes(self, c: Container, cid: str, stop: threading.Event) -> None:
        run = self.run_
        ip = run.ips[self.r.name]
        ports: dict[str, int] = {}

        def check(probe):
            return lambda: check_once(probe, ip, ports, lambda cmd, t: db.exec_in(run.client, cid, cmd, t))

        started = threading.Event()
        if c.startup is None:
            started.set()
        else:
            def on_startup(ok: bool, detail: str) -> None:
                if ok:
                    started.set()
                else:
                    self._probe_kill(cid, f"startup probe failed: {detail}", stop)

            ProbeLoop(f"{self.r.display}-startup", c.startup, check(c.startup), on_startup, stop).start()
        if c.liveness is not None:
            def on_live(ok: bool, detail: str) -> None:
                if not ok:
                    self._probe_kill(cid, f"liveness probe failed: {detail}", stop)

            ProbeLoop(f"{self.r.display}-liveness", c.liveness, check(c.liveness), on_live, stop, started).start()
        if c.readiness is not None:
            def on_ready(ok: bool, detail: str) -> None:
                if not stop.is_set():
                    run.set_status(self.r, ready=ok)

            ProbeLoop(f"{self.r.display}-readiness", c.readiness, check(c.readiness), on_ready, stop,
                      started).start()

    def _probe_kill(self, cid: str, reason: str, stop: threading.Event) -> None:
        stop.set()
        with self.lock:
            if self.cid != cid:
                return
            self.kill_reason = reason
        self.run_.console.note(f"{self.r.display}: {reason}; killing the container")
        grace = min(self.r.grace, self.run_.opts.max_grace)
        if self.r.main.pre_stop:
            db.exec_in(self.run_.client, cid, self.r.main.pre_stop, max(grace, 1))
        try:
            self.run_.client.api.stop(cid, timeout=int(grace))
        except docker.errors.APIError:
            pass

    def _stream_logs(self, cid: str, label: str) -> None:
        console = self.run_.console
        prefix = "" if ":" not in label else f"[{label.split(':', 1)[1]}] "
        try:
            stream = self.run_.client.api.logs(cid, stream=True, follow=True, stdout=True, stderr=True)
            buf = b""
            for chunk in stream:
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    self._emit(console, label, prefix, line)
            if buf:
                self._emit(console, label, prefix, buf)
        except Exception:  # noqa: BLE001 - a removed container ends its stream
            pass

    def _emit(self, console: Console, label: str, prefix: str, raw: bytes) -> None:
        text = self.run_.mask(raw.decode("utf-8", errors="replace").rstrip("\r"))
        console.log(label, text)
        if self.log_file:
            self.log_file.write(prefix + text + "\n")
            self.log_file.flush()
