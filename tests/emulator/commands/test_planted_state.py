"""A repository that commits `.trainspec/` (issue 32, item 1) through the CLI: a planted link or
record is refused with exit 2 and a clear message, never followed, never a traceback; `gc`
removes nothing a planted record names."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pytest
import yaml

from trainspec.emulator.host.filesvol import PREFIX, tmpfs_root
from trainspec.emulator.host.state import write_state

from emuhelpers import trainspec

NO_DAEMON = {"DOCKER_HOST": "unix:///nonexistent/trainspec-test.sock"}


def _refused(r) -> str:
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    return r.stderr


def _compose(tmp: Path, image: str, volume: str = "data", command: str = "touch /v/planted-was-here") -> Path:
    doc = {"services": {"job": {"image": image, "command": ["sh", "-c", command], "volumes": [f"{volume}:/v"]}},
           "volumes": {volume: {}}}
    path = tmp / "compose.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("planted", [".trainspec", ".trainspec/volumes", ".trainspec/runs"])
def test_run_refuses_a_planted_state_link_before_anything(tmp_path, planted):
    host = tmp_path / "host-folder"
    host.mkdir()
    (tmp_path / planted).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / planted).symlink_to(host)
    r = trainspec("run", str(_compose(tmp_path, "busybox")), cwd=tmp_path, env=NO_DAEMON)
    err = _refused(r)
    assert f"{planted.rsplit('/', 1)[-1]} is a symlink (to {host})" in err and "hint: remove" in err
    assert list(host.iterdir()) == []


def test_logs_and_ps_refuse_a_planted_runs_link(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "x-1").mkdir(parents=True)
    (tmp_path / ".trainspec").mkdir()
    (tmp_path / ".trainspec" / "runs").symlink_to(elsewhere)
    err = _refused(trainspec("logs", "x-1", cwd=tmp_path, env=NO_DAEMON))
    assert "runs is a symlink" in err


def test_logs_refuses_a_planted_record_and_its_log_link(tmp_path):
    d = tmp_path / ".trainspec" / "runs" / "demo-abcdef"
    d.mkdir(parents=True)
    (d / "state.json").write_text(json.dumps({"run_id": "demo-abcdef", "job": "demo", "started": 1, "replicas": []}))
    (d / "worker-0.log").symlink_to("/etc/passwd")
    err = _refused(trainspec("logs", "demo-abcdef", cwd=tmp_path, env=NO_DAEMON))
    assert "not a record trainspec wrote" in err and "root:" not in err
    # A genuine record whose folder later gained a log that is a link: skipped, not followed.
    good = tmp_path / ".trainspec" / "runs" / "demo-123456"
    good.mkdir()
    write_state(good, {"run_id": good.name, "job": "demo", "started": 2, "supervisor": "", "replicas": [],
                       "finished": 3})
    (good / "worker-0.log").symlink_to("/etc/passwd")
    r = trainspec("logs", good.name, cwd=tmp_path, env=NO_DAEMON)
    assert r.returncode == 0 and "root:" not in r.stdout and "skipping" in r.stderr, r.stdout + r.stderr


@pytest.mark.docker
def test_ps_down_and_gc_survive_malformed_planted_records(tmp_path, docker_client):
    runs = tmp_path / ".trainspec" / "runs"
    for name, content in (("a-1", b"[" * 100_000), ("b-2", b'{"run_id": "b-2", "started": "yesterday"}'),
                          ("c-3", b"\x00\x01"), ("d-4", json.dumps({"run_id": "d-4", "replicas": [7]}).encode())):
        (runs / name).mkdir(parents=True)
        (runs / name / "state.json").write_bytes(content)
    r = trainspec("ps", "-a", cwd=tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr and "ignoring" in r.stderr, r.stderr
    for name in ("a-1", "b-2", "c-3", "d-4"):
        assert name not in r.stdout
    err = _refused(trainspec("ps", "b-2", cwd=tmp_path))
    assert "run b-2" in err and "not a record trainspec wrote" in err
    _refused(trainspec("down", "d-4", cwd=tmp_path))
    r = trainspec("gc", cwd=tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


@pytest.mark.docker
def test_gc_leaves_folders_it_did_not_make(tmp_path, docker_client):
    """The finding: planted records made gc remove /dev/shm/trainspec-files-* folders of other runs.
    Fresh cases: a record naming another run's folder, a folder outside the tmpfs, and a record
    whose run folder is a link to a genuine record of yours elsewhere."""
    try:
        root = tmpfs_root()
    except Exception:  # noqa: BLE001
        pytest.skip("no tmpfs here")
    victim = os.path.join(root, f"{PREFIX}someone-abcdef-{secrets.token_hex(8)}")
    os.mkdir(victim)
    (tmp_path / "data").mkdir()
    runs = tmp_path / ".trainspec" / "runs"
    try:
        for rid, path in (("someone-abcdef", victim), ("x-1", str(tmp_path / "data")), ("y-2", victim)):
            (runs / rid).mkdir(parents=True)
            (runs / rid / "files-dir").write_text(json.dumps({"path": path, "supervisor": "gone:1:1"}))
        r = trainspec("gc", cwd=tmp_path)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        assert "gc leaves alone" in r.stderr and os.path.isdir(victim) and (tmp_path / "data").is_dir()
    finally:
        os.rmdir(victim)


@pytest.mark.docker
def test_a_link_deeper_in_volumes_is_refused_and_the_host_untouched(tmp_path, test_image, docker_client, leak_check):
    """Fresh case of the finding, one level down: `.trainspec/volumes/data -> <host folder>` for a
    compose named volume; and the same through a PVC claimName in a k8s file."""
    host = tmp_path / "host-folder"
    host.mkdir()
    (tmp_path / ".trainspec" / "volumes").mkdir(parents=True)
    (tmp_path / ".trainspec" / "volumes" / "data").symlink_to(host)
    err = _refused(trainspec("run", str(_compose(tmp_path, test_image)), "--offline", cwd=tmp_path))
    assert "data is a symlink" in err
    labels = {"trainspec.dev/job": "pvc", "trainspec.dev/role": "worker", "trainspec.dev/index": "0"}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pvc-worker-0", "labels": labels},
           "spec": {"backoffLimit": 0, "template": {"metadata": {"labels": labels}, "spec": {
               "restartPolicy": "Never",
               "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
               "containers": [{"name": "main", "image": test_image, "command": ["touch", "/v/planted-was-here"],
                               "volumeMounts": [{"name": "d", "mountPath": "/v"}]}]}}}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    err = _refused(trainspec("run", "job.yaml", "--offline", cwd=tmp_path))
    assert "data is a symlink" in err
    assert list(host.iterdir()) == []
    assert not docker_client.containers.list(all=True, filters={"label": "trainspec.dev/job=pvc"})


@pytest.mark.docker
def test_a_named_volume_is_made_under_the_state_folder(tmp_path, test_image, leak_check):
    r = trainspec("run", str(_compose(tmp_path, test_image)), "--offline", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    made = tmp_path / ".trainspec" / "volumes" / "data"
    assert (made / "planted-was-here").is_file() and not made.is_symlink()
