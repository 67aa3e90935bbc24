"""Secret and ConfigMap volumes with the kubelet's layout and modes, so the emulator
fails where a cluster fails: an MPI image whose sshd keeps `StrictModes yes` is refused
the keys (the Secret's folder is world-writable), one with `StrictModes no` runs."""

from __future__ import annotations

import os
import stat

import pytest

from trainspec.emulator.host.filesvol import FilesDir
from trainspec.emulator.model.job import FileEntry, Mount

from emuhelpers import ROOT, norm, sshd_image, trainspec


def _mount(secret: bool, files: list[FileEntry]) -> Mount:
    return Mount("/root/.ssh", "files", "job-ssh", True, files, secret)


def test_secret_volume_is_laid_out_like_the_kubelets_atomic_writer():
    fd = FilesDir("modes-test")
    try:
        dest = fd.write("worker-0-main", _mount(True, [FileEntry("id_rsa", b"k", 0o600),
                                                       FileEntry("authorized_keys", b"p", 0o644),
                                                       FileEntry("sub/dir/file", b"x", 0o400)]))
        st = os.lstat(dest)
        assert stat.S_IMODE(st.st_mode) == 0o1777          # drwxrwxrwt: a Secret's tmpfs
        assert os.readlink(os.path.join(dest, "..data")).startswith("..20")
        assert os.readlink(os.path.join(dest, "id_rsa")) == "..data/id_rsa"
        assert os.readlink(os.path.join(dest, "sub")) == "..data/sub"
        ts = os.path.join(dest, os.readlink(os.path.join(dest, "..data")))
        assert stat.S_IMODE(os.stat(ts).st_mode) == 0o755
        assert stat.S_IMODE(os.stat(os.path.join(dest, "id_rsa")).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(os.path.join(dest, "authorized_keys")).st_mode) == 0o644
        assert stat.S_IMODE(os.stat(os.path.join(dest, "sub/dir/file")).st_mode) == 0o400
        assert open(os.path.join(dest, "sub/dir/file"), "rb").read() == b"x"
        cm = fd.write("worker-0-main", Mount("/etc/cfg", "files", "cfg", True, [FileEntry("a", b"1", 0o644)]))
        assert stat.S_IMODE(os.lstat(cm).st_mode) == 0o777  # a ConfigMap's emptyDir: drwxrwxrwx
    finally:
        fd.remove()
    assert fd.path is not None and not os.path.exists(fd.path)


def test_compose_input_keeps_a_plain_private_ssh_folder():
    fd = FilesDir("modes-test", kubelet=False)
    try:
        dest = fd.write("w", _mount(True, [FileEntry("id_rsa", b"k", 0o600)]))
        assert stat.S_IMODE(os.lstat(dest).st_mode) == 0o700
        assert not os.path.islink(os.path.join(dest, "id_rsa"))
    finally:
        fd.remove()


def test_items_mode_and_default_mode_from_a_manifest(tmp_path):
    from trainspec.emulator.readers.k8s import from_k8s

    r = trainspec("compile", ROOT / "specs" / "mpi-horovod.yaml", "--target", "k8s", "-o", "k8s.yaml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    import yaml

    objects = [d for d in yaml.safe_load_all((tmp_path / "k8s.yaml").read_text()) if d]
    for o in objects:
        for vol in (o.get("spec", {}).get("template", {}).get("spec", {}).get("volumes") or []):
            if "secret" in vol:
                vol["secret"]["defaultMode"] = 0o640
                vol["secret"]["items"][0]["mode"] = 0o400
    from trainspec.emulator.readers.secrets import add_ssh_secrets

    secrets: dict = {}
    add_ssh_secrets(objects, secrets)
    job = from_k8s(objects, source="k8s.yaml", state_dir=str(tmp_path), secrets=secrets)
    worker = next(r for r in job.replicas if r.role == "worker")
    ssh = next(m for m in worker.main.mounts if m.target == "/root/.ssh")
    assert {f.path: f.mode for f in ssh.files} == {"id_rsa": 0o400, "id_rsa.pub": 0o640, "authorized_keys": 0o640}


@pytest.mark.docker
def test_mpi_image_with_strictmodes_yes_fails_as_on_a_cluster_with_a_hint(tmp_path, docker_client, test_image,
                                                                           leak_check):
    image = sshd_image(docker_client, test_image, strict=True)
    r = trainspec("run", ROOT / "specs" / "mpi-horovod.yaml", "--image", image, "--cpu-only", "--offline",
                  cwd=tmp_path, timeout=300)
    out = norm(r.stdout)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "bad ownership or modes for directory /root/.ssh" in out
    assert "StrictModes no" in out and "sshAuthMountPath" in out
    assert "FAILED" in out


@pytest.mark.docker
def test_mpi_image_with_strictmodes_no_runs(tmp_path, docker_client, test_image, leak_check):
    image = sshd_image(docker_client, test_image, strict=False)
    r = trainspec("run", ROOT / "specs" / "mpi-horovod.yaml", "--image", image, "--cpu-only", "--offline",
                  cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "launcher-0 | rank on mpi-horovod-worker-1" in norm(r.stdout)
