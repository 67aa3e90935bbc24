"""The kubelet for one replica, plus the Job controller's retry decision.

A PodRunner thread creates and starts the replica's init and main containers
(servers first), runs its hooks and probes, streams its logs, waits for its
exit and decides, by the pod's restartPolicy, backoffLimit and
podFailurePolicy, whether to restart in place, start a new pod, or fail.
backoffLimit is the Job's: it counts the failures of every pod of the Job
(jobcount.py), and a pod that exhausts it fails the Job, whose other active
pods are then deleted as the Job controller deletes them.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
import traceback

from ...compiler.errors import UsageError
from ...compiler.kube import is_permanent_exit
from ..adapters.base import EngineError, short
from ..host.savedlogs import TimedLog
from ..model.job import Container, Replica
from ..model.policy import FAILED, SUCCEEDED
from ..model.status import INIT, PENDING, RUNNING, TERMINATED
from . import jobcount
from .containers import recheck_binds
from .context import RunContext
from .events import Events
from .logpump import IDLE_LIMIT, LogPump
from .probes import ProbeLoop, check_once


class PodRunner(threading.Thread):
    """The kubelet for one replica, plus the Job controller's retry decision."""

    def __init__(self, run: RunContext, replica: Replica):
        super().__init__(name=f"pod-{replica.display}", daemon=True)
        self.run_ = run
        self.r = replica
        self.stop_ev = threading.Event()
        self.started = threading.Event()
        self.wait_for: list[threading.Event] = []
        self.said_waiting = False
        self.cid: str | None = None
        self.kill_reason: str | None = None
        self.abandoned = False
        self.pod_exists = False  # past the controller's start gates: on a cluster the pod object exists
        self.main_started = False
        self.t0 = time.time()
        self.lock = threading.Lock()
        self.log_path = run.dir / f"{replica.display}.log"
        self.log_file: TimedLog | None = None
        self.pumps: list[LogPump] = []          # this replica's log streams (one per container started)

    @property
    def events(self) -> Events:
        """The run's container events: the run starts watching them before it starts any pod runner."""
        events = self.run_.events
        if events is None:
            raise RuntimeError("a pod runner ran before the run watched its containers' events")
        return events

    # -- control from the supervisor ------------------------------------
    def terminate(self, reason: str = "stopped by the run") -> None:
        self.stop_ev.set()
        self.started.set()
        threading.Thread(target=self._kill, args=(reason,), daemon=True).start()

    def abandon(self) -> None:
        """cleanPodPolicy None with --keep: leave the container running, stop supervising.

        A pod that exists but has not started yet starts all the same (the operator created it with
        the others; the kubelet starts it whatever the job's outcome), and is left running then; one
        the controller had not created yet never is."""
        self.abandoned = True  # first: a runner that starts after this check sees it (_run_container)
        if self.main_started or not self.pod_exists:
            self.stop_ev.set()

    def fail(self, reason: str, cause: str = "DeadlineExceeded") -> None:
        self.run_.set_status(self.r, phase=FAILED, reason=reason, cause=cause)
        self.stop_ev.set()
        threading.Thread(target=self._kill, args=(reason,), daemon=True).start()

    def job_failed(self, reason: str) -> None:
        """Another pod failed this pod's Job: the Job controller deletes the Job's active pods."""
        with self.run_.cond:
            if self.run_.status[self.r.name].phase in (SUCCEEDED, FAILED, TERMINATED):
                return
            self.run_.set_status(self.r, phase=TERMINATED, ready=False, reason=reason)
        self.terminate(reason)

    def _kill(self, reason: str) -> None:
        with self.lock:
            cid = self.cid
            if cid is None or self.events.exit_code(cid) is not None:
                return  # nothing to stop: it exited on its own, which is not the run's doing
            self.kill_reason = self.kill_reason or reason
        client = self.run_.client
        grace = min(self.r.grace, self.run_.opts.max_grace)
        if self.r.main.pre_stop and self.events.exit_code(cid) is None and grace > 0 \
                and not self.run_.daemon_lost:
            client.exec(cid, self.r.main.pre_stop, grace)
            grace = min(self.r.grace, self.run_.opts.max_grace)  # `down -t 0` while the hook ran
        with contextlib.suppress(Exception):  # gone already, or the daemon went away: nothing to stop
            if grace <= 0:
                client.kill(cid)  # no grace period: what `docker stop -t 0` does, without its wait
            else:
                client.stop(cid, int(grace))

    # -- the pod's life -------------------------------------------------
    def run(self) -> None:
        try:
            self.log_file = TimedLog(self.log_path)  # closed below; each line's time beside it (savedlogs.py)
        except OSError:
            self.log_file = None
        try:
            self._pods()
        except UsageError as exc:
            # fatal first: a run that fails to start must not be reported as started (--detach)
            self.run_.set_fatal(exc)
            self.started.set()
            self.run_.set_status(self.r, phase=FAILED, reason=str(exc))
        except EngineError as exc:
            # The daemon went away or refused something mid-run: say so, without a traceback.
            if exc.unreachable or not self.run_.daemon_answers():
                self.run_.lose_daemon(short(exc))
            else:
                err = UsageError(f"{self.r.display}: {self.run_.client.title} error: {short(exc)[:300]}")
                err.docker_error = True
                self.run_.set_fatal(err)
            self.started.set()
            self.run_.set_status(self.r, phase=FAILED, reason=f"{self.run_.client.title} error: {short(exc)}")
        except Exception as exc:  # noqa: BLE001 - report, never hang the run
            self.run_.set_fatal(RuntimeError(f"{self.r.display}: {traceback.format_exc()}"))
            self.started.set()
            self.run_.set_status(self.r, phase=FAILED, reason=f"emulator error: {exc}")
        finally:
            self.started.set()
            if self.log_file:
                self.log_file.close()

    def waiting(self, detail: str) -> None:
        """Held back by a start gate (startorder.py): the status says why; a line says it once (as
        each of 30 workers gets ready, the table's DETAIL changes, not 30 more lines)."""
        self.run_.waiting(self.r, detail, say=not self.said_waiting)
        self.said_waiting = True

    def _wait_gates(self, creates: bool) -> bool:
        """Wait for this replica's start gates (startorder.py) as long as the target would: the
        controller's before anything is created (`creates`: no pod until then, and its Job's
        activeDeadlineSeconds counts from then), the others between creating the first container
        and starting it (Compose creates every container, then starts them in order). False when
        the run stopped, or a gate can never open (Compose's dependency failed: the replica fails)."""
        waits = [ev for ev in self.wait_for if getattr(ev, "creates", False) == creates]
        if not waits:
            return True
        self.wait_for = [ev for ev in self.wait_for if ev not in waits]
        if creates:
            self.t0 = math.inf  # no Job yet: its deadline has not started
        for ev in waits:
            if not ev.wait():
                why = getattr(ev, "failed", None)
                if why and not self.stop_ev.is_set():
                    self.run_.set_status(self.r, phase=FAILED, reason=why)
                return False
        if creates:
            self.t0 = time.time()
        if self.said_waiting:
            self.run_.set_status(self.r, reason="")  # no longer waiting; creating and starting
        return True

    def _pods(self) -> None:
        r = self.r
        attempt = 0
        self.pod_exists = self._wait_gates(creates=True)  # False only when the run stopped: no loop
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
        if code == 0 or is_permanent_exit(code) or self.run_.daemon_answers():  # 128+: a signal
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
                if st.phase == TERMINATED:  # deleted with its failed Job (job_failed): that is why it ended
                    self.run_.set_status(self.r, exit_code=code, ready=False)
                elif st.phase not in (SUCCEEDED, FAILED):
                    # Stopped by the run only if the run sent the stop; an exit of its own is the pod's.
                    self.run_.set_status(self.r, phase=SUCCEEDED if code == 0 else TERMINATED if self.kill_reason
                                         else FAILED, exit_code=code, ready=False,
                                         reason="" if code == 0 else self.kill_reason or f"exit code {code}")
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
        return bool(self.cid and self.cid in self.events.oom)

    def _on_failure(self, code: int, why: str) -> str:
        """restart (in place) | newpod | failed | stopped — the kubelet's and the Job controller's rules.

        The Job's backoffLimit counts the failures of every pod of the Job (jobcount.py), under the
        run's lock: two pods of one Job that fail together are counted one after the other."""
        r, run = self.r, self.run_
        # Pod restartPolicy Never: the pod failed and the Job controller decides, podFailurePolicy first.
        rule = next((x for x in r.failure_rules if x.matches(code)), None) if r.restart_policy == "Never" else None
        with run.cond:
            if jobcount.job_failed(run.job.replicas, run.status, r):
                return "stopped"  # another pod failed the Job: the controller deletes this one
            if rule is not None and rule.action == "FailJob":
                return self._failed(code, f"{why}; not retryable (podFailurePolicy FailJob)", "PodFailurePolicy")
            if rule is not None and rule.action == "FailIndex":
                v = jobcount.index_failed(run.job.replicas, run.status, r, "not retryable (podFailurePolicy FailIndex)")
                return self._failed(code, f"{why}; {v.said}", v.cause)
            if rule is None or rule.action != "Ignore":  # Ignore: a new pod, not counted
                verdict = jobcount.count(run.job.replicas, run.status, r, code)
                if verdict is not None:
                    return self._failed(code, f"{why}; {verdict.said}", verdict.cause)
        return self._retry(code, why, "newpod" if r.restart_policy == "Never" else "restart")

    def _failed(self, code: int, why: str, cause: str) -> str:
        """r failed for good (its index, or its Job: then the Job's other active pods are deleted)."""
        run = self.run_
        with run.cond:
            run.set_status(self.r, phase=FAILED, exit_code=code, ready=False, reason=why, cause=cause)
            others = jobcount.others_to_stop(run.job.replicas, run.status, self.r, cause)
            runners = [run.runners[p.name] for p in others if p.name in run.runners]
        for rn in runners:
            rn.job_failed(f"Job {self.r.owner} failed ({cause}): deleted by the Job controller")
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
        run, client = self.run_, self.run_.client
        with self.lock:
            old, self.cid = self.cid, None
        if old:  # the kubelet starts a fresh container; the name and address are reused
            try:
                client.remove_container(old)
            except EngineError:
                pass
        if self.stop_ev.is_set():
            return None
        cid = run.create_container(self.r, c, kind, emptydirs)
        waiter = self.events.waiter(cid)
        with self.lock:
            self.cid = cid
            self.kill_reason = None
        if self.stop_ev.is_set():  # stopped while creating: never start it
            return None
        if not self._wait_gates(creates=False) or self.stop_ev.is_set():
            return None
        label = self.r.display if kind == "main" else f"{self.r.display}:{c.name}"
        recheck_binds(run, cid)
        client.start(cid, f"{label} ({c.image})")  # a UsageError saying why it cannot
        self.started.set()
        if kind == "main":
            self.main_started = True
            if self.abandoned:  # abandoned while it started: it runs on, unsupervised (abandon)
                self.stop_ev.set()
        logs = LogPump(run.client, cid, label, run.reporter, self.log_file, run.mask)
        with self.lock:
            self.pumps.append(logs)
        logs.start()
        probe_stop = threading.Event()
        if self.stop_ev.is_set() and not self.abandoned:  # the run began to stop while this one was starting
            self._kill("stopped by the run")
        elif kind == "main":
            run.set_status(self.r, phase=RUNNING, reason="", exit_code=None,
                           ready=c.readiness is None, unhealthy=False, container=cid[:12])
            if c.post_start:
                code, out = client.exec(cid, c.post_start, max(self.r.grace, 30))
                if code != 0 and not self.stop_ev.is_set() and self.events.exit_code(cid) is None:
                    self.kill_reason = f"postStart hook failed ({out.strip()[:200] or code})"
                    client.kill(cid) if self.events.exit_code(cid) is None else None
            self._start_probes(c, cid, probe_stop)
        code = self._wait_exit(cid, waiter)
        probe_stop.set()
        if not self.abandoned:
            # The exit can be seen before the last lines: let the stream finish.
            logs.drain(1 if self.run_.daemon_lost else IDLE_LIMIT)
        return code

    def _wait_exit(self, cid: str, waiter: threading.Event) -> int | None:
        client = self.run_.client
        polls = 0
        while not waiter.wait(1.0):
            if self.abandoned and self.stop_ev.is_set():
                return -1  # left running on purpose (cleanPodPolicy None with --keep)
            if self.run_.daemon_lost:
                return None  # the run ends with the daemon error; exits can no longer be trusted
            polls += 1
            if polls % 5 == 0:  # in case the event stream broke: ask directly
                state = client.container_state(cid)
                if state is None:
                    return 137
                if state.get("Status") in ("exited", "dead"):
                    return int(state.get("ExitCode", -1))
        code = self.events.exit_code(cid)
        return code if code is not None else -1

    def _start_probes(self, c: Container, cid: str, stop: threading.Event) -> None:
        run = self.run_
        ip = run.ips[self.r.name]
        ports: dict[str, int] = {}

        def check(probe):
            return lambda: check_once(probe, ip, ports, lambda cmd, t: run.client.exec(cid, cmd, t))

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
                    run.set_status(self.r, ready=ok, unhealthy=not ok)  # past its failureThreshold

            ProbeLoop(f"{self.r.display}-readiness", c.readiness, check(c.readiness), on_ready, stop,
                      started).start()

    def _probe_kill(self, cid: str, reason: str, stop: threading.Event) -> None:
        stop.set()
        with self.lock:
            if self.cid != cid:
                return
            self.kill_reason = reason
        self.run_.reporter.note(f"{self.r.display}: {reason}; killing the container")
        grace = min(self.r.grace, self.run_.opts.max_grace)
        if self.r.main.pre_stop:
            self.run_.client.exec(cid, self.r.main.pre_stop, max(grace, 1))
        try:
            self.run_.client.stop(cid, int(grace))
        except EngineError:
            pass

    def logs_moving(self) -> bool:
        """A log stream of this replica is still delivering lines (the run waits for it)."""
        with self.lock:
            return any(p.moving() for p in self.pumps)
