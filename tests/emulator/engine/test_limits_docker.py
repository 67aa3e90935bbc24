"""Every container gets a pids limit and a memory limit (issue 32, item 3 of the issue / 2 of this
round), on the real Docker engine: the file's own when it sets one (compose pids_limit, a k8s
memory limit), the documented default otherwise, the command line's when given; and a fork
beyond the limit fails inside the container. Ports a file publishes without an address stay on
127.0.0.1 unless the user asks."""

from __future__ import annotations

import socket
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from trainspec.emulator.model.limits import DEFAULT_MEMORY_SHARE, DEFAULT_PIDS

from emuhelpers import run_containers, trainspec

pytestmark = pytest.mark.docker

FORK = ("import os, sys, time\n"
        "for i in range(400):\n"
        "    try:\n"
        "        pid = os.fork()\n"
        "    except OSError as exc:\n"
        "        print('fork failed after', i, exc.strerror, flush=True); sys.exit(0)\n"
        "    if pid == 0:\n"
        "        time.sleep(30); os._exit(0)\n"
        "print('forked 400 processes', flush=True); sys.exit(1)\n")


def _compose(tmp: Path, image: str, command: list[str], **service) -> Path:
    doc = {"x-trainspec": {"job": "limits"}, "services": {"job": {"image": image, "command": command, **service}}}
    path = tmp / "compose.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _host_config(docker_client, tmp: Path, job: str = "limits") -> dict:
    [c] = run_containers(docker_client, job, tmp)
    return c.attrs["HostConfig"]


def test_a_file_without_limits_gets_the_defaults(tmp_path, test_image, docker_client, leak_check):
    r = trainspec("run", _compose(tmp_path, test_image, ["true"]), "--offline", "--keep", cwd=tmp_path)
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        hc = _host_config(docker_client, tmp_path)
        total = docker_client.info()["MemTotal"]
        assert hc["PidsLimit"] == DEFAULT_PIDS
        assert hc["Memory"] == int(Decimal(total) * DEFAULT_MEMORY_SHARE)
    finally:
        trainspec("down", "limits", "-t", "0", cwd=tmp_path)


def test_the_command_line_overrides_the_defaults(tmp_path, test_image, docker_client, leak_check):
    r = trainspec("run", _compose(tmp_path, test_image, ["true"]), "--offline", "--keep", "--pids-limit", "77",
                  "--memory-limit", "300Mi", cwd=tmp_path)
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        hc = _host_config(docker_client, tmp_path)
        assert hc["PidsLimit"] == 77 and hc["Memory"] == 300 * 2**20
    finally:
        trainspec("down", "limits", "-t", "0", cwd=tmp_path)


def test_compose_pids_limit_is_honoured_and_a_fork_beyond_it_fails(tmp_path, test_image, docker_client, leak_check):
    path = _compose(tmp_path, test_image, ["python", "-c", FORK], pids_limit=40,
                    deploy={"resources": {"limits": {"memory": "256M"}}})
    r = trainspec("run", path, "--offline", "--keep", cwd=tmp_path)
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        assert "fork failed after" in r.stdout and "pids_limit" not in r.stderr, r.stdout + r.stderr
        n = int(r.stdout.split("fork failed after", 1)[1].split()[0])
        assert 30 <= n < 40  # the init, python and n children: the limit counts every task
        hc = _host_config(docker_client, tmp_path)
        assert hc["PidsLimit"] == 40 and hc["Memory"] == 256 * 2**20  # compose units are binary, as Docker's
    finally:
        trainspec("down", "limits", "-t", "0", cwd=tmp_path)


def test_an_unlimited_pids_limit_in_a_file_is_said_and_not_applied(tmp_path, test_image, docker_client, leak_check):
    path = _compose(tmp_path, test_image, ["true"], deploy={"resources": {"limits": {"pids": -1}}})
    r = trainspec("run", path, "--offline", "--keep", cwd=tmp_path)
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        assert "deploy.resources.limits.pids -1 (unlimited) is not applied" in r.stdout + r.stderr
        assert _host_config(docker_client, tmp_path)["PidsLimit"] == DEFAULT_PIDS
    finally:
        trainspec("down", "limits", "-t", "0", cwd=tmp_path)


def test_a_spec_memory_limit_is_kept_and_init_containers_are_limited_too(tmp_path, test_image, docker_client,
                                                                        leak_check):
    labels = {"trainspec.dev/job": "lim", "trainspec.dev/role": "worker", "trainspec.dev/index": "0"}
    doc = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "lim-worker-0", "labels": labels},
           "spec": {"backoffLimit": 0, "template": {"metadata": {"labels": labels}, "spec": {
               "restartPolicy": "Never",
               "initContainers": [{"name": "first", "image": test_image, "command": [
                   "sh", "-c", "echo init-limits $(cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max)"
                   " $(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"]}],
               "containers": [{"name": "main", "image": test_image, "command": ["true"],
                               "resources": {"limits": {"memory": "200Mi"}}}]}}}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(doc))
    r = trainspec("run", "job.yaml", "--offline", "--keep", cwd=tmp_path)
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        by_name = {c.labels["trainspec.dev/container"]: c.attrs["HostConfig"]
                   for c in run_containers(docker_client, "lim", tmp_path)}
        assert by_name["main"]["Memory"] == 200 * 2**20 and by_name["main"]["PidsLimit"] == DEFAULT_PIDS
        # the init container is gone by now: it said its own limits (cgroup v1 or v2)
        said = r.stdout.split("init-limits ", 1)[1].split()[:2]
        assert said[0] == str(DEFAULT_PIDS) and said[1] != "max" and int(said[1]) < 2**62, r.stdout
    finally:
        trainspec("down", "lim", "-t", "0", cwd=tmp_path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_published_port_without_an_address_stays_on_loopback(tmp_path, test_image, docker_client, leak_check):
    port = _free_port()
    path = _compose(tmp_path, test_image, ["sleep", "30"], ports=[f"{port}:80"])
    r = trainspec("run", path, "--offline", "--detach", cwd=tmp_path)
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        assert _host_config(docker_client, tmp_path)["PortBindings"] == {
            "80/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(port)}]}
    finally:
        trainspec("down", "limits", "-t", "0", cwd=tmp_path)
    r = trainspec("run", path, "--offline", "--detach", "--publish-all-interfaces", cwd=tmp_path)
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        [binding] = _host_config(docker_client, tmp_path)["PortBindings"]["80/tcp"]
        assert binding["HostIp"] in ("", "0.0.0.0") and binding["HostPort"] == str(port)
    finally:
        trainspec("down", "limits", "-t", "0", cwd=tmp_path)
