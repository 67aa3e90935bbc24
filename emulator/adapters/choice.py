"""Which container engine a command talks to, and where: decided from options, the environment and the
sockets present, before any client is made (so it imports neither docker nor requests).

The rule, in order:
  1. `--engine docker|podman`, else `$TRAINSPEC_ENGINE` (`auto` = no choice);
  2. `$DOCKER_HOST` set: Docker's client at that address (an engine that answers as Podman there is
     driven as Podman: see engines.py);
  3. `$CONTAINER_HOST` set (Podman's own variable): Podman at that address;
  4. Docker present — its socket (/var/run/docker.sock, rootless $XDG_RUNTIME_DIR/docker.sock) or a
     docker context other than the default: Docker, also when a Podman socket is present too;
  5. only a Podman socket present (rootful /run/podman/podman.sock, rootless
     $XDG_RUNTIME_DIR/podman/podman.sock): Podman;
  6. nothing found: Docker at its default socket (whose error then says how to start either).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NamedTuple

from ...compiler.errors import UsageError

ENGINES = ("docker", "podman")
ENV_VAR = "TRAINSPEC_ENGINE"
DOCKER_SOCKET = "unix:///var/run/docker.sock"
PODMAN_ROOTFUL = "/run/podman/podman.sock"


class EngineChoice(NamedTuple):
    name: str        # "docker" | "podman": which adapter drives it
    url: str         # the API's address, e.g. unix:///run/podman/podman.sock
    explicit: bool   # named by --engine / $TRAINSPEC_ENGINE (else chosen here)
    probe: bool = False  # chosen Docker by address alone: ask the engine what it is (Podman can serve there)


def podman_sockets(env: Mapping[str, str], rootful: str = PODMAN_ROOTFUL) -> list[str]:
    """Where Podman's API socket usually is, most likely first: rootless for a user, rootful for root."""
    rootless = f"{env['XDG_RUNTIME_DIR']}/podman/podman.sock" if env.get("XDG_RUNTIME_DIR") else ""
    paths = [rootful, rootless] if os.geteuid() == 0 else [rootless, rootful]
    return [p for p in paths if p]


def _socket_present(path: str) -> bool:
    import stat

    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def podman_url(env: Mapping[str, str], rootful: str = PODMAN_ROOTFUL) -> str:
    """Podman's address: CONTAINER_HOST, else the first of its usual sockets present (else the likeliest)."""
    if env.get("CONTAINER_HOST"):
        return env["CONTAINER_HOST"]
    sockets = podman_sockets(env, rootful)
    found = next((p for p in sockets if _socket_present(p)), sockets[0])
    return f"unix://{found}"


def _docker_context(env: Mapping[str, str]) -> bool:
    """A docker context other than the default is in use ($DOCKER_CONTEXT, or ~/.docker/config.json)."""
    import json

    if env.get("DOCKER_CONTEXT"):
        return env["DOCKER_CONTEXT"] != "default"
    config = os.path.join(env.get("DOCKER_CONFIG") or os.path.join(env.get("HOME") or "~", ".docker"), "config.json")
    try:
        with open(os.path.expanduser(config)) as f:
            current = json.load(f).get("currentContext")
    except (OSError, ValueError, AttributeError):
        return False
    return bool(current) and current != "default"


def choose(requested: str | None = None, env: Mapping[str, str] | None = None, *,
           docker_socket: str = DOCKER_SOCKET, podman_rootful: str = PODMAN_ROOTFUL) -> EngineChoice:
    """The engine for a command (the rule in this module's docstring). The socket paths are
    parameters for the tests only."""
    env = os.environ if env is None else env
    named = requested or env.get(ENV_VAR) or "auto"
    if named not in (*ENGINES, "auto"):
        source = "--engine" if requested else f"${ENV_VAR}"
        raise UsageError(f"{source} {named!r}: expected docker, podman or auto")
    if named == "docker":
        return EngineChoice("docker", env.get("DOCKER_HOST") or DOCKER_SOCKET, True)
    if named == "podman":
        return EngineChoice("podman", podman_url(env, podman_rootful), True)
    if env.get("DOCKER_HOST"):
        return EngineChoice("docker", env["DOCKER_HOST"], False, probe=True)
    if env.get("CONTAINER_HOST"):
        return EngineChoice("podman", env["CONTAINER_HOST"], False)
    if _socket_present(docker_socket[len("unix://"):]):
        return EngineChoice("docker", docker_socket, False, probe=True)
    rootless_docker = f"{env['XDG_RUNTIME_DIR']}/docker.sock" if env.get("XDG_RUNTIME_DIR") else ""
    if rootless_docker and _socket_present(rootless_docker):
        return EngineChoice("docker", f"unix://{rootless_docker}", False, probe=True)
    if _docker_context(env):  # the Docker client's own choice (`docker context use`): its address is there
        return EngineChoice("docker", docker_socket, False, probe=True)
    found = [p for p in podman_sockets(env, podman_rootful) if _socket_present(p)]
    if found:
        return EngineChoice("podman", f"unix://{found[0]}", False)
    return EngineChoice("docker", docker_socket, False)


def recorded(name: str | None, url: str | None) -> EngineChoice | None:
    """The engine a run's record names (state.json), to reach that run again."""
    if name in ENGINES and url:
        return EngineChoice(str(name), str(url), True)
    return None
