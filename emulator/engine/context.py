"""What a pod runner, the container builder and the restart logic see of the run.

`Run` (run.py) owns these; pods.py, containers.py and restarts.py are handed the run and
type it by this protocol, so they import nothing above them and run.py stays the only
module that imports them all (no import cycle, not even under TYPE_CHECKING).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ..adapters.base import ContainerEngine
from ..host.filesvol import FilesDir
from ..model.job import Container, JobModel, Mount, Replica
from ..model.status import RunOptions, Status
from .events import Events
from .reporter import Reporter


class RunContext(Protocol):
    job: JobModel
    opts: RunOptions
    run_id: str
    state: Path
    dir: Path
    cond: threading.Condition
    status: dict[str, Status]
    interrupted: str | None
    fatal: Exception | None
    client: ContainerEngine  # the engine's adapter (adapters/base.py): every engine call goes through it
    events: Events | None
    runners: dict[str, Any]  # replica name -> pods.PodRunner (pods.py imports this module)
    gpu_ids: dict[str, list[str]]
    ips: dict[str, str]
    gateway: str
    ncpu: int
    memory_default: int | None
    job_restarts: int
    restarts_counted: int
    restarted: list[str]
    dirty: bool
    daemon_lost: str | None
    extra_hosts: dict[str, str]
    bind_sources: dict[str, list[tuple[Mount, str]]]
    files: FilesDir
    reporter: Reporter
    mask: Callable[[str], str]

    def labels(self, **extra: str) -> dict[str, str]: ...
    def refresh(self) -> None: ...
    def start_runners(self) -> None: ...
    def daemon_answers(self) -> bool: ...
    def lose_daemon(self, detail: str) -> None: ...
    def set_fatal(self, exc: Exception) -> None: ...
    def set_status(self, r: Replica, **changes: Any) -> None: ...
    def waiting(self, r: Replica, detail: str, say: bool) -> None: ...
    def create_container(self, r: Replica, c: Container, kind: str, emptydirs: dict[str, str]) -> str: ...
    def emptydir_volumes(self, r: Replica, attempt: int) -> dict[str, str]: ...
