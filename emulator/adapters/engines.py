"""Connecting to the chosen engine (choice.py) with its adapter."""

from __future__ import annotations

from .base import ContainerEngine, EngineError
from .choice import EngineChoice, choose
from .docker_api import DockerAPIEngine
from .docker_engine import DockerEngine
from .podman_engine import PodmanEngine

ADAPTERS: dict[str, type[DockerAPIEngine]] = {"docker": DockerEngine, "podman": PodmanEngine}


def connect(replicas: int = 8, choice: EngineChoice | None = None) -> ContainerEngine:
    """An adapter of the chosen engine that answers, or a UsageError saying how to start it."""
    choice = choice or choose()
    client = ADAPTERS[choice.name].open(choice, replicas)
    if choice.probe and is_podman(client):
        # Chosen as Docker by its address alone (DOCKER_HOST, or podman-docker's /var/run/docker.sock),
        # but Podman answers there: drive it as Podman (GPUs through CDI, its image names).
        client.close()
        client = PodmanEngine.open(EngineChoice("podman", choice.url, False), replicas)
    return client


def is_podman(client: DockerAPIEngine) -> bool:
    try:
        components = client.version().get("Components") or []
    except EngineError:  # an engine that cannot say is taken for what was chosen
        return False
    return any("podman" in str(c.get("Name", "")).lower() for c in components)
