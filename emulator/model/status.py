"""The run's options, a replica's status and the phases it moves through."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from .job import SERVER_ROLES

PENDING, INIT, RUNNING, TERMINATED = "Pending", "Init", "Running", "Terminated"
__all__ = ["INIT", "PENDING", "RUNNING", "SERVER_ROLES", "TERMINATED", "Row", "RunOptions", "Status",
           "read_stop_grace"]


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
    claims: list[str] = field(default_factory=list)   # --claim NAME=HOSTPATH[:rw]
    mount_host: list[str] = field(default_factory=list)   # --mount-host PATH[:rw]: host paths a file may mount
    pull: bool = False                  # --pull: pull images not present locally (else never)
    gpus_per_replica: int | None = None  # --gpus-per-replica N: cap each replica's GPU request
    share_gpus: bool = False            # --share-gpus: replicas may share GPUs when there are too few
    engine: str | None = None           # --engine docker|podman (None: $TRAINSPEC_ENGINE, else found)
    # Limits every container gets unless its file sets its own (limits.py): --pids-limit, --memory-limit;
    # 0 means none (the user's explicit choice), None the documented default.
    pids_limit: int | None = None
    memory_limit: int | None = None
    # Where a published port binds when the file names no host IP: loopback unless --publish-all-interfaces.
    publish_address: str = "127.0.0.1"


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
    cause: str = ""     # why the pod's Job failed, as the Job controller says: BackoffLimitExceeded, ...
    unhealthy: bool = False             # the readiness probe crossed its failure threshold (Compose: unhealthy)


@dataclass(frozen=True)
class Row:
    """A replica's line in the status table (live, in the summary, in `trainspec ps RUN`)."""
    name: str           # as displayed: worker-0
    phase: str
    ready: bool
    restarts: int
    exit_code: int | None
    reason: str
    since: float        # when it entered this phase (AGE)


def read_stop_grace(run_dir_: Path) -> float:
    """The grace period `trainspec down -t N` asks for (a file it writes before signalling)."""
    try:
        return max(float((run_dir_ / "stop-grace").read_text().strip()), 0.0)
    except (OSError, ValueError):
        return float("inf")

