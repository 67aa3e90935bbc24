"""What the emulator asks of a container engine, whichever it is: the seam between the engine layer
and docker_engine.py (Docker) / podman_engine.py (Podman, through its Docker-compatible socket).

The modules above hold one of these as `run.client` and call the operations in docker_engine.py
(networks, containers, exec, cleanup, listing), which both engines serve; what the engines do
differently is a method here, so nothing above branches on the engine's name. A new engine is a
class in this folder implementing this protocol, plus its name in choice.py and engines.py.
"""

from __future__ import annotations

from typing import Any, Protocol

from .choice import EngineChoice


class ContainerEngine(Protocol):
    name: str    # "docker" | "podman": recorded with each run, so ps/logs/down reach it again
    title: str   # as messages name it: "Docker", "Podman"
    daemon: str  # what answers on its socket, in messages: "the Docker daemon", "the Podman service"
    url: str     # where it answers

    @property
    def api(self) -> Any: ...  # the Docker-API client (docker.APIClient) the shared operations use
    def ping(self) -> bool: ...
    def info(self) -> dict: ...
    def close(self) -> None: ...

    def choice(self) -> EngineChoice: ...
    def reconnect(self, replicas: int = 8) -> ContainerEngine: ...
    def gpu_problem(self, info: dict, wanted: int) -> str | None: ...
    def init_problem(self) -> str | None: ...  # why containers cannot get their init (before any is made)
    def gpu_options(self, gpu_ids: list[str]) -> dict[str, Any]: ...
    def local_image(self, image: str) -> str | None: ...
    def image_help(self, images: list[str]) -> str: ...
    def create_container(self, **kw: Any) -> str: ...
