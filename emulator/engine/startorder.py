"""When a replica may start: only as strongly as the input's target orders it (issue 13 item 2),
and for as long as that target waits.

- compiled `k8s.yaml`: no order. Plain Kubernetes starts every pod at once.
- compiled `compose.yaml`: `depends_on` as written. `service_started`: Compose starts services in
  dependency order; `service_healthy`: `docker compose up` polls the dependency with no time limit
  while its health is "starting", and gives up with "dependency failed to start" once it is
  unhealthy or has exited (docker/compose pkg/compose/convergence.go waitDependencies,
  isServiceHealthy): the dependent never starts and the run fails.
- spec: like its k8s output (no order) unless `trainspec run --start-order`, which waits as
  the plan's start order says (what the compose and jobset targets write), until it holds.
- a controller's gates (JobModel.gates, made in controllers/): the controller creates the pod only
  once the gate holds and polls for it without a limit: JobSet InOrder and dependsOn Ready/Complete,
  MPIJob launcherCreationPolicy WaitForWorkersReady, Volcano task dependsOn. The wait ends when
  the gate opens or the run stops (the job decided — a gated-on replica failed for good, the
  job's activeDeadlineSeconds — or Ctrl-C); meanwhile the replica is Pending with the reason.

A dry-run should fail where the cluster would: a launcher whose first `mpirun` finds no
sshd fails its first attempt there too. When the job asks for an order the input does not
enforce (JobModel.start_order) and a replica starts before the ones it should follow are
running, a note says so.

The podrunner calls `wait()` on each of its `wait_for` entries: the gates that create the pod
before it creates anything, the others right before its first container starts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..model.job import Gate, JobModel, Replica
from ..model.policy import FAILED, SUCCEEDED
from ..model.status import RUNNING, TERMINATED

STARTED = (RUNNING, SUCCEEDED, FAILED, TERMINATED)
ENDED = (SUCCEEDED, FAILED, TERMINATED)
POLL = 0.1
# what a gate waits for, as the replica's status says it: "waiting for worker-0 (InOrder: not ready)"
NOT = {"started": "not started", "ready": "not ready", "ready_or_done": "not ready",
       "complete": "not complete", "healthy": "not healthy"}


class _Runner(Protocol):
    started: threading.Event
    stop_ev: threading.Event
    wait_for: list[threading.Event]


def tests(status: Mapping[str, Any]) -> dict[str, Callable[[str], bool]]:
    """Each Gate test on the live status of one replica."""
    def phase(name: str) -> str:
        return status[name].phase

    def ready(name: str) -> bool:
        return phase(name) == RUNNING and bool(status[name].ready)

    return {
        # compose's service_started: the main container has started (init containers are services
        # of their own there, finished before it); it may have ended since
        "started": lambda n: phase(n) in STARTED,
        "ready": ready,
        "ready_or_done": lambda n: ready(n) or phase(n) == SUCCEEDED,
        "complete": lambda n: phase(n) == SUCCEEDED,
        "healthy": ready,
    }


def never(gate: Gate, status: Mapping[str, Any]) -> str | None:
    """Why `gate` can no longer open, for Compose's service_healthy (a controller keeps waiting:
    a failed dependency fails the job, or its failure policy restarts it)."""
    if gate.test != "healthy":
        return None
    for name in gate.pods:
        st = status[name]
        # ended for good ("restarting" between attempts is not "exited" to Compose: it waits on)
        if st.phase in ENDED:
            return "exited" + (f" ({st.exit_code})" if st.exit_code is not None else "")
        if st.phase == RUNNING and getattr(st, "unhealthy", False):
            return "is unhealthy"
    return None


class _Gate(threading.Event):
    """Block until `gate` holds, or the run stops, or (Compose) it never can; `wait(timeout)`
    returns False on a timeout, a stop or a gate that cannot open (then `failed` says why)."""

    def __init__(self, gate: Gate, me: _Runner, status: Mapping[str, Any], display: Mapping[str, str]):
        super().__init__()
        self.gate, self.me, self.status, self.display = gate, me, status, display
        self.creates = gate.creates
        self.failed: str | None = None
        self._tests = tests(status)

    def holds(self, gate: Gate | None = None) -> bool:
        gate = gate or self.gate
        if gate.any_of:
            return any(self.holds(g) for g in gate.any_of)
        ok = sum(1 for n in gate.pods if self._tests[gate.test](n))
        return ok >= (len(gate.pods) if gate.need is None else gate.need)

    def detail(self) -> str:
        gates = self.gate.any_of or (self.gate,)
        parts = []
        for g in gates:
            test = self._tests[g.test]
            late = [self.display.get(n, n) for n in g.pods if not test(n)]
            shown = ", ".join(late[:3]) + (f" and {len(late) - 3} more" if len(late) > 3 else "")
            need = f"{g.need} of " if g.need is not None and g.need < len(g.pods) else ""
            parts.append(f"{need}{shown} ({g.why}: {NOT[g.test]})")
        return "waiting for " + " or ".join(parts)

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        said = ""
        while not self.me.stop_ev.is_set():
            if self.holds():
                return True
            for g in self.gate.any_of or (self.gate,):
                why = never(g, self.status)
                if why:
                    late = next(n for n in g.pods if never(Gate((n,), g.test, g.why), self.status))
                    self.failed = f"dependency failed to start: {self.display.get(late, late)} {why} ({g.why})"
                    return False
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            detail = self.detail()
            if detail != said and hasattr(self.me, "waiting"):
                self.me.waiting(detail)  # the replica's status says why nothing happens
                said = detail
            self.me.stop_ev.wait(POLL if left is None else min(POLL, left))
        return False


class _Observe(threading.Event):
    """Never blocks; notes when `replica` starts before `names` are running."""

    creates = False

    def __init__(self, replica: Replica, names: dict[str, str], running: Callable[[str], bool],
                 note: Callable[[str], None], rule: str):
        super().__init__()
        self.replica, self.names, self.running, self.note, self.rule = replica, names, running, note, rule

    def wait(self, timeout: float | None = None) -> bool:
        early = [display for name, display in self.names.items() if not self.running(name)]
        if early:
            self.note(f"{self.replica.display} started before {', '.join(early)} {'was' if len(early) == 1 else 'were'}"
                      f" running: nothing orders their start here, as on a cluster without a start order "
                      f"(the job asks for {self.rule}; its restart policy must cover a first attempt that "
                      f"finds no peer, or use the compose/jobset output or `trainspec run --start-order`)")
        return True


def enforced_gates(job: JobModel, name: str) -> tuple[Gate, ...]:
    """The gates on replica `name`: the controller's, then compose `depends_on` / `--start-order`."""
    gates = list(job.gates.get(name, ()))
    after = job.start_after.get(name, ())
    started = tuple(n for n in after if n not in job.start_after_ready)
    healthy = tuple(n for n in after if n in job.start_after_ready)
    why = "--start-order" if job.kubelet_files else "depends_on"  # a spec's plan, or compose.yaml
    if started:
        gates.append(Gate(started, "started", why, creates=False))
    if healthy:
        gates.append(Gate(healthy, "healthy", "depends_on service_healthy", creates=False))
    return tuple(gates)


def gate_pods(gate: Gate) -> set[str]:
    return set(gate.pods).union(*(gate_pods(g) for g in gate.any_of)) if gate.any_of else set(gate.pods)


def wire(job: JobModel, runners: Mapping[str, _Runner], status: Mapping[str, Any],
         note: Callable[[str], None]) -> None:
    """Set each runner's `wait_for` from the job's enforced start order, and observers for the rest."""
    display = {r.name: r.display for r in job.replicas}

    def running(name: str) -> bool:
        return status[name].phase == RUNNING

    for r in job.replicas:
        runner = runners[r.name]
        gates = enforced_gates(job, r.name)
        waits: list[threading.Event] = [_Gate(g, runner, status, display) for g in gates]
        enforced = set().union(*(gate_pods(g) for g in gates)) if gates else set()
        for rule in job.start_order:
            if rule.role != r.role:
                continue
            names = {p.name: p.display for p in job.replicas if p.role in rule.after and p.name not in enforced}
            if names:
                waits.append(_Observe(r, names, running, note, f"{rule.role} after {', '.join(rule.after)}"))
        runner.wait_for = waits
