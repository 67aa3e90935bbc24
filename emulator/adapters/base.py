"""What the emulator asks of a container engine, whichever it is: the one seam between the modules
above (engine/, console/, commands.py) and the engines' adapters.

- `ContainerSpec`: everything one container create needs, as data; each adapter turns it into its
  engine's request (docker_api.py: Docker's create API, which Docker and Podman serve; podman_engine.py:
  libpod's own, for CDI devices and an init path).
- `ContainerEngine`: every call the emulator makes — containers (create, start, stop, kill, remove,
  state, logs, exec), the run's event stream, networks, volumes, images, and the by-label cleanup and
  listing. Docker (docker_engine.py) and Podman (podman_engine.py) are sibling adapters over the shared
  Docker-API implementation (docker_api.py).
- `EngineError` / `EngineNotFound`: an engine's failures in the emulator's own words; the adapters
  translate their client's exceptions, so nothing above imports an engine client (a contract in
  pyproject.toml). A refusal the user can act on is a UsageError, as everywhere else.

This module imports no engine client: the modules above import it (and choice.py) freely, and connect
through engines.py only when a run needs the engine. A new engine is a class in this folder
implementing `ContainerEngine`, plus its name in choice.py and engines.py.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from .choice import EngineChoice

# Every object the emulator creates (containers, networks, volumes) carries these labels, so a run —
# even one whose CLI was killed with SIGKILL — can be found and removed by label alone (down, gc).
MANAGED = "trainspec.dev/managed-by"
RUN_ID = "trainspec.dev/run-id"
JOB = "trainspec.dev/job"
REPLICA = "trainspec.dev/replica"
CONTAINER = "trainspec.dev/container"
SUPERVISOR = "trainspec.dev/supervisor"
STATE_DIR = "trainspec.dev/state-dir"


def labels(run_id: str, job: str, supervisor: str, state_dir: str, **extra: str) -> dict[str, str]:
    out = {MANAGED: "trainspec", RUN_ID: run_id, JOB: job, SUPERVISOR: supervisor, STATE_DIR: state_dir}
    out.update(extra)
    return out


class EngineError(Exception):
    """The engine failed a call, or did not answer (`unreachable`): its first line in `text`."""

    def __init__(self, text: str, *, status: int | None = None, unreachable: bool = False):
        super().__init__(text)
        self.text = text
        self.status = status
        self.unreachable = unreachable


class EngineNotFound(EngineError):
    """The container, network, volume or image named is not there (gone already)."""


def short(exc: BaseException | None) -> str:
    """The first line of a failure, for messages."""
    if isinstance(exc, EngineError):
        return exc.text
    text = str(exc).strip() if exc is not None else ""
    return text.splitlines()[0] if text else type(exc).__name__


@dataclass(frozen=True)
class Mount:
    """A bind (a host path) or a named volume, at `target` in the container."""

    target: str
    source: str
    type: Literal["bind", "volume"]
    read_only: bool


@dataclass(frozen=True)
class ContainerSpec:
    """One container to create (not start), in the emulator's words; the adapter speaks the engine's."""

    name: str
    image: str
    network: str                                    # the run's network, and the container's address on it
    ip: str
    hostname: str
    entrypoint: Sequence[str] | None = None         # the image's when None
    command: Sequence[str] | None = None            # the image's CMD when None
    env: Mapping[str, str] = field(default_factory=dict)
    working_dir: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    aliases: Sequence[str] = ()                     # DNS names on the network
    extra_hosts: Mapping[str, str] = field(default_factory=dict)   # hosts-file entries: name -> address
    dns: Sequence[str] | None = None
    dns_options: Sequence[str] | None = None
    mounts: Sequence[Mount] = ()
    tmpfs: Mapping[str, str] = field(default_factory=dict)         # target -> mount options ("size=...")
    nano_cpus: int | None = None                    # 1e9 = one CPU
    memory: int | None = None                       # bytes
    pids: int | None = None
    gpu_ids: Sequence[str] = ()                     # the engine decides how they are passed
    ports: Mapping[str, tuple[str, int] | int] = field(default_factory=dict)  # "80/tcp" -> (host ip, port) | port
    user: str | None = None
    read_only: bool = False                         # the root filesystem
    security_opt: Sequence[str] = ()                # "no-new-privileges" only
    cap_drop: Sequence[str] = ()
    group_add: Sequence[str] = ()
    init: bool = True                               # a Python PID 1 ignores SIGTERM: stop would wait the grace


class EventStream(Protocol):
    """The engine's events for one run's containers (die, oom), until closed; EngineError if it breaks."""

    def __iter__(self) -> Iterator[dict]: ...
    def close(self) -> None: ...


class ContainerEngine(Protocol):
    name: str    # "docker" | "podman": recorded with each run, so ps/logs/down reach it again
    title: str   # as messages name it: "Docker", "Podman"
    daemon: str  # what answers on its socket, in messages: "the Docker daemon", "the Podman service"
    url: str     # where it answers

    # -- the engine ---------------------------------------------------------
    def ping(self) -> bool: ...
    def info(self) -> dict: ...  # NCPU, MemTotal, Runtimes, ... as the engine's info reports them
    def close(self) -> None: ...
    def choice(self) -> EngineChoice: ...
    def reconnect(self, replicas: int = 8) -> ContainerEngine: ...  # a fresh pool (a forked supervisor)
    def gpu_problem(self, info: dict, wanted: int) -> str | None: ...
    def init_problem(self) -> str | None: ...  # why containers cannot get their init (before any is made)

    # -- images ---------------------------------------------------------------
    def local_image(self, image: str) -> str | None: ...  # the name the engine knows it by, or None
    def image_help(self, images: list[str]) -> str: ...
    def pull_image(self, image: str) -> None: ...
    def image_user(self, image: str) -> str: ...  # the image's USER ("" for root by default)

    # -- networks and volumes ---------------------------------------------------
    def create_network(self, name: str, labels: Mapping[str, str], internal: bool,
                       hosts: int) -> ipaddress.IPv4Network: ...
    def create_volume(self, name: str, labels: Mapping[str, str]) -> None: ...

    # -- containers -------------------------------------------------------------
    def create_container(self, spec: ContainerSpec) -> str: ...  # its id; UsageError when refused
    def start(self, cid: str, what: str) -> None: ...  # UsageError saying why it cannot start `what`
    def stop(self, cid: str, timeout: int) -> None: ...
    def kill(self, cid: str) -> None: ...
    def remove_container(self, cid: str, volumes: bool = False) -> None: ...  # forced
    def container_state(self, cid: str) -> dict | None: ...  # State (Status, ExitCode, ...); None when gone
    def logs(self, cid: str) -> Iterator[bytes]: ...  # stdout and stderr, followed until it exits
    def log_tail(self, cid: str, lines: int) -> bytes: ...  # the last `lines` lines, read at once (not followed)
    def exec(self, cid: str, command: Sequence[str], timeout: float) -> tuple[int | None, str]: ...
    def events(self, run_id: str) -> EventStream: ...

    # -- by label ---------------------------------------------------------------
    def remove_replica(self, run_id: str, replica: str) -> None: ...  # one pod's containers and volumes
    def remove_containers(self, run_id: str) -> int: ...
    def remove_run(self, run_id: str) -> tuple[int, int, int]: ...  # containers, networks, volumes removed
    def list_runs(self) -> dict[str, dict]: ...


def missing_images(client: ContainerEngine, images: Iterable[str]) -> list[str]:
    return [image for image in images if client.local_image(image) is None]
