"""One run of a job: what the training operator would do, on Docker.

`Run.execute()` runs the preflight checks (preflight.py), then creates the run's
network, starts one PodRunner thread per replica (servers first; pods.py),
waits and decides the job's outcome by the framework's rule (policy.py), and
always removes what it created — on success, failure, Ctrl-C and SIGTERM —
unless --keep.
"""

from __future__ import annotations

import secrets
import signal
import threading
import time
from pathlib import Path
from typing import Any

from ...compiler.errors import UsageError
from ..adapters.base import ContainerEngine, EngineError, labels, short
from ..host.filesvol import RECORD as FILES_RECORD
from ..host.filesvol import FilesDir
from ..host.state import make_run_dir, run_dir, state_dir, supervisor_id, write_state
from ..model.job import Container, JobModel, Mount, Replica
from ..model.limits import default_memory
from ..model.masking import secret_mask
from ..model.policy import FAILED, SUCCEEDED, Decision, decide, left_running
from ..model.status import PENDING, RUNNING, Row, RunOptions, Status, read_stop_grace
from . import restarts, startorder
from .containers import create_container, emptydir_volumes
from .events import Events
from .pods import PodRunner
from .preflight import preflight
from .reporter import Reporter

__all__ = ["Run", "RunOptions"]


class Run:
    def __init__(self, job: JobModel, opts: RunOptions, reporter: Reporter, input_checked: bool = False):
        self.job = job
        self.opts = opts
        self.run_id = opts.run_id or f"{job.name}-{secrets.token_hex(3)}"
        self.state = state_dir(opts.state_dir)
        self.dir = run_dir(self.state, self.run_id)
        self.cond = threading.Condition()
        self.status = {r.name: Status() for r in job.replicas}
        self.interrupted: str | None = None
        self.fatal: Exception | None = None
        # The engine's adapter, set by prepare() (preflight connects) before anything calls it.
        self.client: ContainerEngine = None  # type: ignore[assignment]
        self.events: Events | None = None
        self.runners: dict[str, PodRunner] = {}
        self.gpu_ids: dict[str, list[str]] = {}
        self.ips: dict[str, str] = {}
        self.gateway = ""
        self.ncpu = 0
        self.memory_default: int | None = None   # a container's memory limit when its file sets none (limits.py)
        self.supervisor = supervisor_id()
        self.started = time.time()
        self.decision: Decision | None = None
        self.job_restarts = 0       # restarts the controller made (restarts.py): the restart-attempt number
        self.restarts_counted = 0   # ... of which count against the controller's limit
        self.restarted: list[str] = []  # what each restart covered ("the whole job", "the worker pods")
        self.dirty = True
        self.prepared = False
        # Set once every replica has left Pending (its first container started, or it ended):
        # what `run --detach` waits for before it returns.
        self.all_started = threading.Event()
        self._left_pending: set[str] = set()
        self.daemon_lost: str | None = None
        self.hurry = False
        self.mask = secret_mask(job)
        self.reporter = reporter  # the console, made by the CLI (commands.py)
        self.input_checked = input_checked  # preflight's checks of the input already passed (commands.py)
        self.network: Any = None
        self.extra_hosts: dict[str, str] = {}   # every replica's names, in every hosts file
        self._drawn_at = 0.0                    # when the live table was last drawn
        # container id -> its bind mounts and the real paths checked at create (checked again at start)
        self.bind_sources: dict[str, list[tuple[Mount, str]]] = {}
        # configMap/secret volumes, on a tmpfs; laid out as the kubelet does for manifests
        self.files = FilesDir(self.run_id, kubelet=job.kubelet_files, record=str(self.dir / FILES_RECORD),
                              supervisor=lambda: self.supervisor)

    # ------------------------------------------------------------------
    # before anything is created
    def prepare(self) -> None:
        checked = preflight(self.job, self.opts, self.state, self.reporter, input_checked=self.input_checked)
        self.client, self.ncpu, self.gpu_ids = checked.client, checked.ncpu, checked.gpu_ids
        self.memory_default = default_memory(self.opts.memory_limit, checked.mem_total)
        self.prepared = True

    # ------------------------------------------------------------------
    def execute(self) -> int:
        if not self.prepared:
            self.prepare()
        restore = self._install_signals()
        try:
            try:
                self._setup()
                self.start_runners()
                self._wait()
            except KeyboardInterrupt:
                self.interrupted = self.interrupted or "SIGINT"
            except EngineError as exc:
                # e.g. the network cannot be created because the daemon just went away
                self.set_fatal(UsageError(f"{self._engine('title')} error: {short(exc)}"))
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
        make_run_dir(self.state, self.run_id)  # never through a link a repository planted (ownfs.py)
        self._save_state()
        job = self.job
        n = len(job.replicas)
        net_labels = self.labels()
        subnet = self.client.create_network(self.run_id, net_labels, self.opts.offline, n)
        self.network = self.run_id
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
        self.reporter.note(f"run {self.run_id}: {n} replica{'s' if n != 1 else ''} of job {job.name} "
                           f"({job.framework or 'plain'}) on network {self.run_id}"
                           f"{' (offline)' if self.opts.offline else ''}; logs in {self._rel(self.dir)}")
        for text in job.notes:
            self.reporter.note(text)
        for name, ids in self.gpu_ids.items():
            disp = next(r.display for r in job.replicas if r.name == name)
            self.reporter.note(f"{disp}: GPUs {','.join(ids)}")

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
            self.client.remove_run(self.run_id)
        self.files.remove()

    def labels(self, **extra: str) -> dict[str, str]:
        return labels(self.run_id, self.job.name, self.supervisor, str(self.state), **extra)

    def start_runners(self) -> None:
        for r in self.job.replicas:
            self.runners[r.name] = PodRunner(self, r)
        startorder.wire(self.job, self.runners, self.status, self.reporter.note)  # as the target orders starts
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
            attempt = self.job_restarts
            decision = restarts.check(self) if job.restart is not None else None  # may restart every replica
            if self.job_restarts != attempt:
                continue  # replicas were created afresh: look again
            decision = decision or decide(job, phases, reasons)
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
            self.refresh()
            with self.cond:
                self.cond.wait(0.25)

    def refresh(self) -> None:
        with self.cond:
            # On a terminal the table is redrawn every second anyway: AGE moves.
            tick = self.reporter.live and time.time() - self._drawn_at >= 1
            if not self.dirty and not tick:
                return
            self.dirty = False
            self._drawn_at = time.time()
        self.reporter.update(self.rows())
        self._save_state()

    def rows(self) -> list[Row]:
        with self.cond:
            return [Row(r.display, s.phase, s.ready, s.restarts, s.exit_code, s.reason, s.since)
                    for r, s in ((r, self.status[r.name]) for r in self.job.replicas)]

    def _shutdown(self) -> None:
        policy = self.job.clean_pod_policy
        abandon = self.opts.keep and policy == "None" and self.decision is not None
        if self.interrupted:
            self.reporter.note(f"{self.interrupted}: stopping the run")
        elif self.fatal is None and self.decision is not None:
            msg = f"job {self.job.name} {self.decision.outcome.lower()}: {self.decision.reason}"
            self.reporter.note(msg)
            outliving = left_running(self.job, {n: s.phase for n, s in self.status.items()}) \
                if self.decision.outcome == SUCCEEDED else None
            if outliving:
                self.reporter.note(outliving)
        for rn in self.runners.values():
            if abandon:
                rn.abandon()
            else:
                rn.terminate()
        deadline = time.time() + (5 if self.daemon_lost else self.opts.max_grace + 15)
        # Past the deadline only while a replica's logs are still streaming: its last lines matter.
        while any(rn.is_alive() for rn in self.runners.values()) and (
                time.time() < deadline or (not self.daemon_lost and any(rn.logs_moving()
                                                                          for rn in self.runners.values()))):
            if self.hurry:
                break  # a second Ctrl-C: no more waiting, force-remove below
            for rn in self.runners.values():
                rn.join(0.05)
        self.reporter.finish()
        if self.events is not None:
            self.events.close()
        if not self.opts.keep and self.client is not None:
            self._remove_everything()
            self.files.remove()  # also when no container was created to carry its label
        elif self.opts.keep:
            self.reporter.note(f"--keep: containers and network of {self.run_id} left in place; "
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
                self.client.remove_run(self.run_id)
                return
            except EngineError as exc:
                unreachable = exc.unreachable or not self.daemon_answers()
                if unreachable and not self.daemon_lost and not self.interrupted:
                    # It went away as the run ended — a daemon that shuts down stops every container
                    # first, so the exits that decided the job were probably its doing.
                    self.lose_daemon(f"it stopped answering as the run ended: {short(exc)}")
                if time.time() >= deadline or not unreachable or self.hurry:  # a second Ctrl-C: no waiting
                    self.reporter.note(f"could not remove the run's containers ({short(exc)}); "
                                       f"run `trainspec gc` once {self._engine('daemon')} answers again")
                    return
                if not said:
                    self.reporter.note(f"waiting up to {self.opts.daemon_wait:g}s for {self._engine('daemon')} "
                                       "to answer again, to remove the run's containers and network")
                    said = True
                time.sleep(0.5)

    def _engine(self, word: str) -> str:
        """How messages name the engine ("Docker", "the Podman service"): the adapter's words."""
        return str(getattr(self.client, word, None) or {"title": "Docker", "daemon": "the Docker daemon"}[word])

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
            f"lost the connection to {self._engine('daemon')} mid-run ({detail}): it stopped or restarted, "
            "so the run cannot be followed any more; its containers are removed when the daemon answers "
            "again (else run `trainspec gc` later)"))

    def _summary(self) -> None:
        elapsed = time.time() - self.started
        if self.daemon_lost:
            head = (f"job {self.job.name} LOST after {elapsed:.1f}s: {self._engine('daemon')} stopped or restarted "
                    "mid-run")
        elif self.decision is not None and not self.interrupted:
            head = (f"job {self.job.name} {self.decision.outcome.upper()} in {elapsed:.1f}s{restarts.summary(self)} "
                    f"({self.decision.reason})")
        else:
            head = f"job {self.job.name} INTERRUPTED ({self.interrupted}) after {elapsed:.1f}s"
        self.reporter.summary(head, self.rows(), self._rel(self.dir))

    def _save_state(self, final: bool = False) -> None:
        rows = self.rows()
        data = {
            "run_id": self.run_id, "job": self.job.name, "namespace": self.job.namespace,
            "framework": self.job.framework, "source": self.job.source, "started": self.started,
            "supervisor": self.supervisor, "kept": self.opts.keep, "job_restarts": self.job_restarts,
            # which engine ran it, so ps/logs/down/gc of this run reach that engine again
            "engine": getattr(self.client, "name", None), "engine_url": getattr(self.client, "url", None),
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
        except (OSError, UsageError):  # UsageError: the run's folder became a link (ownfs.py): never written through
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
            self.reporter.transition(r.display, f"{old_phase} -> {st.phase}{detail}")
        elif "ready" in changes and st.ready != old_ready and st.phase == RUNNING:
            self.reporter.transition(r.display, "ready" if st.ready else "not ready")

    def waiting(self, r: Replica, detail: str, say: bool) -> None:
        """`r` waits for a start gate (startorder.py), saying why (`say`: as a line too). For
        `run --detach` it has left Pending: the controller holds it, maybe as long as the job runs."""
        with self.cond:
            self._left_pending.add(r.name)
            if len(self._left_pending) == len(self.status):
                self.all_started.set()
        self.set_status(r, reason=detail)
        if say:
            self.reporter.transition(r.display, f"{self.status[r.name].phase} ({detail})")

    def set_fatal(self, exc: Exception) -> None:
        with self.cond:
            if self.fatal is None:
                self.fatal = exc
            self.cond.notify_all()
        self.all_started.set()

    def create_container(self, r: Replica, c: Container, kind: str, emptydirs: dict[str, str]) -> str:
        return create_container(self, r, c, kind, emptydirs)

    def emptydir_volumes(self, r: Replica, attempt: int) -> dict[str, str]:
        return emptydir_volumes(self, r, attempt)
