"""Docker and Podman fixtures shared by the emulator's tests, and which worker runs them under pytest-xdist.

Under CI=true a test that needs Docker (or Podman) FAILS when it is missing; on a
laptop it is skipped with a one-line reason. The fixtures start dockerd when
none answers and build the local test image (no registry: from Debian
packages, cached by tag), so `pytest` alone works on a fresh machine with
docker.io installed. `engine` runs a test once on Docker and once on Podman (its
rootful socket started by scripts/start-podman.sh, the test image moved over with
`docker save | podman load`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import unavailable

ROOT = Path(__file__).resolve().parents[1]


def _bytecode_outside_the_checkout() -> None:
    """Under PYTHONDONTWRITEBYTECODE=1 (some shells and CI images set it) every `trainspec` a test starts
    compiled trainspec's sources again: 0.1-0.5 s a command, thousands of commands, most of the fast
    set's time. The setting's intent stays (no __pycache__ in the checkout) and the bytecode is kept in
    a cache folder of this user's own instead, for the test processes and everything they start."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "trainspec-tests" / "pycache"
    try:
        cache.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return  # no writable cache: slower, not wrong
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = str(cache)
    sys.pycache_prefix = str(cache)
    sys.dont_write_bytecode = False


_bytecode_outside_the_checkout()
TEST_IMAGE = os.environ.get("TRAINSPEC_TEST_IMAGE", "trainspec-test:py3")
TORCH_IMAGE = os.environ.get("TRAINSPEC_TORCH_IMAGE", "trainspec-test:torch")


_unavailable = unavailable


def _script(*args: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def docker_client():
    if not shutil.which("docker") or not shutil.which("dockerd"):
        _unavailable("Docker is not installed (apt-get install docker.io)")
    r = _script("scripts/start-dockerd.sh", timeout=60)
    if r.returncode != 0:
        _unavailable(f"no Docker daemon: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
    import docker

    client = docker.from_env()
    yield client
    client.close()


@pytest.fixture(scope="session")
def test_image(docker_client) -> str:
    r = _script("scripts/build-test-image.sh", TEST_IMAGE, timeout=900)
    if r.returncode != 0:
        _unavailable(f"cannot build {TEST_IMAGE}: {(r.stderr or r.stdout).strip()[-300:]}")
    return TEST_IMAGE


@pytest.fixture(scope="session")
def torch_image(test_image) -> str:
    r = _script("scripts/build-test-image.sh", "--torch", test_image, timeout=900)
    if r.returncode != 0:
        _unavailable(f"cannot build {TORCH_IMAGE}: {(r.stderr or r.stdout).strip()[-300:]}")
    return TORCH_IMAGE


@pytest.fixture(scope="session")
def podman_client():
    """A Docker-API client of Podman's socket, the one `trainspec --engine podman` finds."""
    if not shutil.which("podman"):
        _unavailable("Podman is not installed (apt-get install podman)")
    from trainspec.emulator.adapters.choice import podman_url

    url = podman_url(os.environ)
    if os.geteuid() == 0 and url == "unix:///run/podman/podman.sock":
        r = _script("scripts/start-podman.sh", timeout=60)
        if r.returncode != 0:
            _unavailable(f"no Podman socket: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")
    import docker

    client = docker.DockerClient(base_url=url, timeout=60)
    try:
        client.ping()
    except docker.errors.DockerException as exc:
        _unavailable(f"no Podman socket answers at {url} ({str(exc)[:120]}); "
                     "`systemctl --user start podman.socket`, or as root `bash scripts/start-podman.sh`")
    yield client
    client.close()


@pytest.fixture(scope="session")
def podman_test_image(podman_client, docker_client, test_image) -> str:
    """The test image in Podman's store (as localhost/<name>): loaded from Docker's unless the same is there."""
    import docker

    wanted = docker_client.images.get(test_image).id
    try:
        if podman_client.images.get(f"localhost/{test_image}").id.split(":")[-1] == wanted.split(":")[-1]:
            return test_image
    except docker.errors.ImageNotFound:
        pass
    r = subprocess.run(f"docker save {test_image} | podman load", shell=True, capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0:
        _unavailable(f"cannot load {test_image} into Podman: {(r.stderr or r.stdout).strip()[-300:]}")
    return test_image


class Engine:
    """The engine a test runs on: its name (set as $TRAINSPEC_ENGINE for the CLI the test runs) and a
    Docker-API client of it, to look at what the run left."""

    def __init__(self, name: str, client):
        self.name, self.client = name, client


@pytest.fixture(params=["docker", pytest.param("podman", marks=pytest.mark.podman)])
def engine(request, monkeypatch) -> Engine:
    """Docker, then Podman: the same test, the same assertions, on both engines (with the test image)."""
    if request.param == "podman":
        client = request.getfixturevalue("podman_client")
        request.getfixturevalue("podman_test_image")
    else:
        client = request.getfixturevalue("docker_client")
        request.getfixturevalue("test_image")
    monkeypatch.setenv("TRAINSPEC_ENGINE", request.param)
    return Engine(request.param, client)


@pytest.fixture
def leak_check(request, tmp_path):
    """Fails a test that leaves containers, networks or volumes of its runs behind (on the engine
    the test ran on: `engine`'s, else Docker).

    A test's runs are those recorded in its own state folder (tmp_path/.trainspec,
    a label on everything a run creates), so tests may run in parallel.
    """
    on = "engine" if "engine" in request.fixturenames else "docker_client"
    found = request.getfixturevalue(on)
    docker_client = found.client if on == "engine" else found
    yield
    label = {"label": f"trainspec.dev/state-dir={tmp_path / '.trainspec'}"}
    left = ([c.name for c in docker_client.containers.list(all=True, filters=label)]
            + [n.name for n in docker_client.networks.list(filters=label)]
            + [v.name for v in docker_client.volumes.list(filters=label)])
    assert not left, f"left behind: {left}"


# Which container engine a marker's tests drive: each engine's tests run one after another on one worker.
ENGINE_GROUPS = {"docker": "docker", "docker_daemon": "docker", "podman": "podman"}


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (the README's `-n auto --dist loadgroup`) the tests that drive one container
    engine run one after another on one worker, as in a single process: they share the engine, its
    images and the machine's cores with their own containers, and their timings (probes, grace
    periods, restarts) are a container's, not a test process's. Everything else spreads over the rest."""
    for item in items:
        names = {mark.name for mark in item.iter_markers()}
        # a test of the `engine` fixture's Podman half is marked docker (its module) and podman (its param)
        group = "podman" if "podman" in names else next((ENGINE_GROUPS[n] for n in sorted(names & ENGINE_GROUPS.keys())),
                                                       None)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
