"""Issue 23 on a real Docker engine: a read-only grant cannot be written, ports are published only
on the address and protocol asked for, a SIGKILLed run's secret folder is found by `gc` from its
record, and no secret byte lands in the state folder. The Docker-free half:
tests/cli/test_untrusted_files_never_reach_the_host.py."""

from __future__ import annotations

import base64
import glob
import os
import signal
import subprocess
from pathlib import Path

import pytest
import yaml

from emuhelpers import run_containers, start, trainspec, wait_for

pytestmark = pytest.mark.docker

CANARY = "S3CRET-canary-7f1d"


def _job(tmp: Path, image: str, command: str, *, name: str = "hostile", pod: dict | None = None,
         container: dict | None = None, extra: list[dict] | None = None) -> Path:
    labels = {"trainspec.dev/job": name, "trainspec.dev/role": "worker", "trainspec.dev/index": "0"}
    doc = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"{name}-worker-0", "labels": labels},
           "spec": {"backoffLimit": 0, "template": {"metadata": {"labels": labels}, "spec": {
               "restartPolicy": "Never", **(pod or {}),
               "containers": [{"name": "main", "image": image, "command": ["sh", "-c", command],
                               **(container or {})}]}}}}
    path = tmp / "job.yaml"
    path.write_text(yaml.safe_dump_all([*(extra or []), doc], sort_keys=False))
    return path


def _with_host(host: Path) -> dict:
    return {"pod": {"volumes": [{"name": "h", "hostPath": {"path": str(host)}}]},
            "container": {"volumeMounts": [{"name": "h", "mountPath": "/h"}]}}


def test_a_grant_without_rw_is_read_only_in_the_container(tmp_path, test_image, leak_check):
    data = tmp_path / "data"
    data.mkdir()
    path = _job(tmp_path, test_image, "echo planted > /h/hooks-post-checkout && echo wrote", **_with_host(data))
    r = trainspec("run", path, "--offline", "--mount-host", str(data), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "mounted read-only" in r.stdout and f"--mount-host {data}:rw" in r.stdout
    assert "Read-only file system" in r.stdout and not (data / "hooks-post-checkout").exists()
    r = trainspec("run", path, "--offline", "--mount-host", f"{data}:rw", cwd=tmp_path)
    assert r.returncode == 0 and "wrote" in r.stdout, r.stdout + r.stderr
    assert (data / "hooks-post-checkout").read_text() == "planted\n"


def test_ports_keep_the_host_address_and_protocol(tmp_path, test_image, docker_client, leak_check):
    port = 20000 + os.getpid() % 20000
    ports = [{"containerPort": 5353, "hostPort": port, "hostIP": "127.0.0.1", "protocol": "UDP"},
             {"containerPort": 22}]   # declared without a host port: never published
    path = _job(tmp_path, test_image, "sleep 60", name="ports", container={"ports": ports})
    r = trainspec("run", path, "--offline", "--detach", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    try:
        [c] = run_containers(docker_client, "ports", tmp_path)
        bindings = c.attrs["HostConfig"]["PortBindings"]
        assert bindings == {"5353/udp": [{"HostIp": "127.0.0.1", "HostPort": str(port)}]}, bindings
        assert not c.attrs["HostConfig"].get("PublishAllPorts")
    finally:
        trainspec("down", "ports", "-t", "0", cwd=tmp_path)


def test_gc_finds_a_killed_runs_secret_folder_from_its_record(tmp_path, test_image, docker_client, leak_check):
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"},
              "data": {"token": base64.b64encode(CANARY.encode()).decode()}}
    path = _job(tmp_path, test_image, "sleep 120", name="killed", extra=[secret],
                pod={"volumes": [{"name": "s", "secret": {"secretName": "creds"}}]},
                container={"volumeMounts": [{"name": "s", "mountPath": "/s", "readOnly": True}]})
    proc = start("run", path, "--offline", cwd=tmp_path)
    try:
        records = wait_for(lambda: glob.glob(str(tmp_path / ".trainspec/runs/*/files-dir")), 60, "the record")
        wait_for(lambda: run_containers(docker_client, "killed", tmp_path), 60, "the container")
        folder = yaml.safe_load(Path(records[0]).read_text())["path"]
        assert folder.startswith("/dev/shm/") or os.environ.get("TRAINSPEC_FILES_DIR")
        wait_for(lambda: os.path.isdir(folder), 30, "the files folder")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    # As if the kill came before any container carried the folder's label: only the record is left.
    for c in run_containers(docker_client, "killed", tmp_path):
        c.remove(force=True)
    gc = trainspec("gc", cwd=tmp_path)
    assert gc.returncode == 0 and "secret files folder" in gc.stdout, gc.stdout + gc.stderr
    assert not os.path.exists(folder)
    for leftover in docker_client.networks.list(filters={"label": f"trainspec.dev/state-dir={tmp_path / '.trainspec'}"}):
        leftover.remove()
    _no_canary(tmp_path)


def test_no_secret_byte_in_the_state_folder_after_a_run(tmp_path, test_image, leak_check):
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"},
              "stringData": {"token": CANARY}}
    env = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}}]
    path = _job(tmp_path, test_image, 'echo "token is $TOKEN"; cat /s/token; exit 3', name="leak", extra=[secret],
                pod={"volumes": [{"name": "s", "secret": {"secretName": "creds"}}]},
                container={"env": env, "volumeMounts": [{"name": "s", "mountPath": "/s", "readOnly": True}]})
    r = trainspec("run", path, "--offline", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert CANARY not in r.stdout + r.stderr and "token is ******" in r.stdout
    _no_canary(tmp_path)
    assert not glob.glob("/dev/shm/trainspec-files-leak-*")


def _no_canary(tmp_path: Path) -> None:
    found = subprocess.run(["grep", "-rl", "-a", CANARY, str(tmp_path)], capture_output=True, text=True)
    hits = [h for h in found.stdout.split() if not h.endswith("job.yaml")]
    assert not hits, hits


def test_terminal_escapes_from_a_container_are_shown_escaped(tmp_path, test_image, leak_check):
    path = _job(tmp_path, test_image, r"printf 'a\033]0;pwned\007b\033]52;c;Zm9v\007c\rjob hostile SUCCEEDED\n'",
                name="esc")
    r = trainspec("run", path, "--offline", "--color", "never", cwd=tmp_path)
    assert "\x1b]" not in r.stdout and "\r" not in r.stdout and "\\x1b]0;pwned\\x07" in r.stdout, r.stdout
    logs = trainspec("logs", "esc", cwd=tmp_path)
    assert "\x1b]" not in logs.stdout and "\\x1b]0;pwned" in logs.stdout, logs.stdout
