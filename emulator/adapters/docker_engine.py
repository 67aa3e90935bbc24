"""The Docker adapter: Docker's own ways (its socket and client settings, its NVIDIA runtime and
DeviceRequests, its image names) over the shared Docker-API implementation (docker_api.py)."""

from __future__ import annotations

import os

import docker

from .choice import DOCKER_SOCKET, EngineChoice
from .docker_api import DockerAPIEngine, short


class DockerEngine(DockerAPIEngine):
    name = "docker"
    title = "Docker"
    daemon = "the Docker daemon"

    @classmethod
    def connect(cls, choice: EngineChoice, replicas: int) -> docker.DockerClient:
        # The Docker client's own settings (DOCKER_HOST with its TLS variables, else the docker context)
        # apply when they lead to the address chosen; any other address is used as it is.
        if choice.url == (os.environ.get("DOCKER_HOST") or DOCKER_SOCKET):
            return docker.DockerClient.from_env(timeout=60, max_pool_size=max(10, 3 * replicas + 10))
        return super().connect(choice, replicas)

    @classmethod
    def unreachable_message(cls, choice: EngineChoice, exc: BaseException) -> str:
        text = (
            f"cannot reach the Docker daemon at {choice.url} ({short(exc)}); start it (`sudo systemctl start docker`, "
            "or `sudo service docker start`, or run `sudo dockerd` in another terminal; rootless Docker: "
            "`systemctl --user start docker`), or point DOCKER_HOST at a running daemon "
            "(e.g. unix:///run/user/$UID/docker.sock)")
        if not choice.explicit and not choice.probe:  # nothing found at all: Podman would do too
            text += ("; or use Podman: start its socket (`sudo podman system service --time=0 "
                     "unix:///run/podman/podman.sock &`, rootless `systemctl --user start podman.socket`) "
                     "and it is chosen, or pass --engine podman")
        return text

    def gpu_problem(self, info: dict, wanted: int) -> str | None:
        """Why this engine cannot hand GPUs to containers, or None."""
        if has_nvidia_runtime(info):
            return None
        return (f"the job asks for {wanted} GPUs but this Docker daemon has no NVIDIA runtime "
                f"(runtimes: {', '.join(sorted(info.get('Runtimes') or {})) or 'none'}); install the NVIDIA "
                "Container Toolkit and restart dockerd, or run with --cpu-only for a CPU dry-run")

    def image_help(self, images: list[str]) -> str:
        """How to get missing images into this engine (for the missing-images error)."""
        return "`docker pull`/`docker build`/`docker load` it first"


def has_nvidia_runtime(info: dict) -> bool:
    return "nvidia" in (info.get("Runtimes") or {})
