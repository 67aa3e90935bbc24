"""When a replica may start: only as strongly as the input's target orders it (issue 13 item 2).

- compiled `k8s.yaml`: no order. Plain Kubernetes starts every pod at once.
- compiled `compose.yaml`: `depends_on` as written (service_started / service_healthy).
- spec: like its k8s output (no order) unless `trainspec run --start-order`, which waits as
  the plan's start order says (what the compose and jobset targets write).

A dry-run should fail where the cluster would: a launcher whose first `mpirun` finds no
sshd fails its first attempt there too. When the job asks for an order the input does not
enforce (JobModel.start_order) and a replica starts before the ones it should follow are
running, a note says so.

The podrunner calls `wait(timeout)` on each of its `wait_for` entries right before its
first container starts; the gates here are Events whose `wait` does the above.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from .policy import FAILED, SUCCEEDED
from .runmodel import JobModel, Replica
from .runtypes import RUNNING, TERMINATED

STARTED = (RUNNING, SUCCEEDED, FAILED, TERMINATED)


class _Runner(Protocol):
    started: threading.Event
    stop_ev: threading.Event
    wait_for: list[threading.Event]


class _WaitFor(threading.Event):
    """Block until each of `names` is up (`up(name)`), or the timeout passes, or the run stops."""

    def __init__(self, names: tuple[str, ...], me: _Runner, up: Callable[[str], bool]):
        super().__init__()
        self.names, self.me, self.up = names, me, up

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        for name in self.names:
            while not self.me.stop_ev.is_set():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                if self.up(name):
                    break
                self.me.stop_ev.wait(0.1 if left is None else min(0.1, left))
        return True


class _Observe(threading.Event):
    """Never blocks; notes when `replica` starts before `names` are running."""

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


def wire(job: JobModel, runners: Mapping[str, _Runner], status: Mapping[str, Any],
         note: Callable[[str], None]) -> None:
    """Set each runner's `wait_for` from the job's enforced start order, and observers for the rest."""
    def running(name: str) -> bool:
        return status[name].phase == RUNNING

    def started(name: str) -> bool:
        # compose's service_started: the main container has started (init containers are services
        # of their own there, finished before it); it may have ended since
        return status[name].phase in STARTED

    def ready(name: str) -> bool:
        return status[name].phase == RUNNING and bool(status[name].ready)

    for r in job.replicas:
        runner = runners[r.name]
        gates: list[threading.Event] = []
        enforced = job.start_after.get(r.name, ())
        if enforced:
            waits_ready = tuple(n for n in enforced if n in job.start_after_ready)
            started_only = tuple(n for n in enforced if n not in job.start_after_ready)
            if started_only:
                gates.append(_WaitFor(started_only, runner, started))
            if waits_ready:
                gates.append(_WaitFor(waits_ready, runner, ready))
        for rule in job.start_order:
            if rule.role != r.role:
                continue
            names = {p.name: p.display for p in job.replicas if p.role in rule.after and p.name not in enforced}
            if names:
                gates.append(_Observe(r, names, running, note, f"{rule.role} after {', '.join(rule.after)}"))
        runner.wait_for = gates
