"""Which engine a command talks to (adapters/choice.py): --engine, $TRAINSPEC_ENGINE, DOCKER_HOST and
CONTAINER_HOST honoured, else the sockets found — Docker when both engines' are, Podman when only its
own is. Real unix sockets in a temporary folder stand in for the engines' (nothing answers on them:
the choice only looks for them)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from trainspec.compiler.errors import UsageError
from trainspec.emulator.adapters.choice import choose, recorded

from emuhelpers import SPECS, trainspec


@pytest.fixture
def sockets(tmp_path):
    """Makes a unix socket at a path under tmp_path; the paths of those made are kept open until the end."""
    made: list[socket.socket] = []

    def make(relative: str) -> str:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        made.append(s)
        return str(path)

    yield make
    for s in made:
        s.close()


def _choose(tmp_path: Path, env: dict, requested: str | None = None):
    env = {"HOME": str(tmp_path), **env}  # no docker context but the test's own
    return choose(requested, env, docker_socket=f"unix://{tmp_path}/docker.sock",
                  podman_rootful=str(tmp_path / "run/podman/podman.sock"))


def test_only_a_podman_socket_chooses_podman(tmp_path, sockets):
    rootless = sockets("xdg/podman/podman.sock")
    got = _choose(tmp_path, {"XDG_RUNTIME_DIR": str(tmp_path / "xdg")})
    assert (got.name, got.url, got.explicit) == ("podman", f"unix://{rootless}", False)
    rootful = sockets("run/podman/podman.sock")
    assert _choose(tmp_path, {}).url == f"unix://{rootful}"


def test_both_sockets_choose_docker(tmp_path, sockets):
    sockets("run/podman/podman.sock")
    docker = sockets("docker.sock")
    got = _choose(tmp_path, {})
    assert (got.name, got.url) == ("docker", f"unix://{docker}")
    assert got.probe  # podman-docker serves Podman at Docker's path: the engine is asked what it is


def test_rootless_docker_or_a_docker_context_counts_as_docker(tmp_path, sockets):
    sockets("xdg/podman/podman.sock")
    assert _choose(tmp_path, {"XDG_RUNTIME_DIR": str(tmp_path / "xdg")}).name == "podman"
    assert _choose(tmp_path, {"XDG_RUNTIME_DIR": str(tmp_path / "xdg"), "DOCKER_CONTEXT": "rootless"}).name == "docker"
    (tmp_path / ".docker").mkdir()
    (tmp_path / ".docker/config.json").write_text('{"currentContext": "rootless"}')
    assert _choose(tmp_path, {"XDG_RUNTIME_DIR": str(tmp_path / "xdg")}).name == "docker"
    (tmp_path / ".docker/config.json").write_text('{"currentContext": "default"}')
    docker = sockets("xdg/docker.sock")
    assert _choose(tmp_path, {"XDG_RUNTIME_DIR": str(tmp_path / "xdg")})[:2] == ("docker", f"unix://{docker}")


def test_no_socket_at_all_is_docker_at_its_default(tmp_path):
    got = _choose(tmp_path, {})
    assert (got.name, got.url, got.explicit) == ("docker", f"unix://{tmp_path}/docker.sock", False)


def test_docker_host_and_container_host_are_honoured(tmp_path, sockets):
    sockets("run/podman/podman.sock")
    assert _choose(tmp_path, {"DOCKER_HOST": "tcp://127.0.0.1:2375"})[:2] == ("docker", "tcp://127.0.0.1:2375")
    assert _choose(tmp_path, {"CONTAINER_HOST": "unix:///x.sock"})[:2] == ("podman", "unix:///x.sock")
    both = {"DOCKER_HOST": "unix:///d.sock", "CONTAINER_HOST": "unix:///p.sock"}
    assert _choose(tmp_path, both)[:2] == ("docker", "unix:///d.sock")
    assert _choose(tmp_path, both, "podman")[:2] == ("podman", "unix:///p.sock")


def test_the_option_wins_over_the_variable_and_the_sockets(tmp_path, sockets):
    sockets("docker.sock")
    rootful = sockets("run/podman/podman.sock")
    assert _choose(tmp_path, {"TRAINSPEC_ENGINE": "podman"})[:3] == ("podman", f"unix://{rootful}", True)
    assert _choose(tmp_path, {"TRAINSPEC_ENGINE": "podman"}, "docker").name == "docker"
    assert _choose(tmp_path, {"TRAINSPEC_ENGINE": "auto"}).name == "docker"


def test_an_unknown_engine_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match=r"\$TRAINSPEC_ENGINE 'containerd': expected docker, podman or auto"):
        _choose(tmp_path, {"TRAINSPEC_ENGINE": "containerd"})
    r = trainspec("run", SPECS / "flaky.yaml", cwd=tmp_path, env={"TRAINSPEC_ENGINE": "lxc"})
    assert r.returncode == 2 and "expected docker, podman or auto" in r.stderr and "Traceback" not in r.stderr
    r = trainspec("run", SPECS / "flaky.yaml", "--engine", "lxc", cwd=tmp_path)
    assert r.returncode == 2 and "invalid choice: 'lxc'" in r.stderr


def test_a_runs_record_names_its_engine_again():
    assert recorded("podman", "unix:///run/podman/podman.sock")[:2] == ("podman", "unix:///run/podman/podman.sock")
    assert recorded(None, None) is None and recorded("lxc", "unix:///x") is None  # older records: no engine


def test_help_says_how_the_engine_is_chosen(tmp_path):
    for command in ("run", "ps", "logs", "down", "gc"):
        text = " ".join(trainspec(command, "--help", cwd=tmp_path).stdout.split())
        assert "--engine {docker,podman}" in text and "also when Podman's is too" in text, command
