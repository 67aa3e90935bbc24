"""hostPath mounts of the host's system folders, the Docker socket and the like are refused
before anything is created, unless --allow-host-path (issue 7, item 4); and a mistyped
--secret is not echoed in the error. No Docker needed except for one test."""

from __future__ import annotations

import os

import pytest
from emuhelpers import spec, trainspec

from trainspec.emulator.hostpaths import denied_host_path


@pytest.mark.parametrize("path", ["/", "/etc", "/etc/", "/etc/ssl/private", "/proc", "/proc/1/root", "/sys",
                                  "/dev", "/dev/mem", "/boot", "/var/run/docker.sock", "/run/docker.sock",
                                  "/var/lib/docker", "/var/lib/docker/volumes", "/var", "/var/lib", "/run",
                                  "/home", "/root", "/root/.ssh", "/root/.docker/config.json", "/usr", "/tmp",
                                  "/srv/../etc", "/data/./../etc/shadow", "//etc", "/x/docker.sock"])
def test_denied(path):
    assert denied_host_path(path), path


@pytest.mark.parametrize("path", ["/data", "/mnt/datasets", "/home/alice/data", "/root/data", "/tmp/run-1",
                                  "/var/log/train", "/srv/models", "/etc-like/x", "/usr/share/dict"])
def test_allowed(path):
    assert denied_host_path(path) is None, path


def test_symlinks_are_resolved_before_checking(tmp_path):
    (tmp_path / "innocent").symlink_to("/etc")
    (tmp_path / "sock").symlink_to("/var/run/docker.sock")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "up").symlink_to("../../../../../../..")
    assert "/etc" in denied_host_path(str(tmp_path / "innocent"))
    assert "/etc" in denied_host_path(str(tmp_path / "innocent" / "passwd"))
    assert denied_host_path(str(tmp_path / "sock"))
    assert denied_host_path(str(tmp_path / "data" / "up")) == "it is the host's whole filesystem"
    assert denied_host_path(str(tmp_path / "data")) is None


def _with_host_path(tmp_path, host: str, out: str = "hp.yaml"):
    def edit(doc):
        doc["spec"]["env"]["MODE"] = "ok"
        doc["spec"]["volumes"].append({"name": "host", "mountPath": "/host", "readOnly": True,
                                       "source": {"hostPath": host}})
    return spec("flaky.yaml", tmp_path, edit, out=out)


NO_DAEMON = {"DOCKER_HOST": "unix:///nonexistent/trainspec-test.sock"}


@pytest.mark.parametrize("host", ["/etc", "/var/run/docker.sock", "/", "/srv/../proc"])
def test_run_refuses_before_touching_docker(tmp_path, host):
    # No daemon at DOCKER_HOST: the refusal comes first, so nothing can have been created.
    r = trainspec("run", _with_host_path(tmp_path, host), "--offline", cwd=tmp_path, env=NO_DAEMON)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "refusing to mount host system paths" in r.stderr and f"host path {host}" in r.stderr
    assert "--allow-host-path" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / ".trainspec" / "runs").exists()


def test_symlinked_host_path_is_refused(tmp_path):
    (tmp_path / "looks-fine").symlink_to("/etc")
    r = trainspec("run", _with_host_path(tmp_path, str(tmp_path / "looks-fine")), "--offline", cwd=tmp_path,
                  env=NO_DAEMON)
    assert r.returncode == 2 and "it is /etc" in r.stderr, r.stderr


def test_compose_binds_are_checked_too(tmp_path):
    r = trainspec("compile", _with_host_path(tmp_path, "/tmp/ok-data"), "--target", "compose", "-o",
                  "compose.yaml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "compose.yaml").read_text()
    assert "/tmp/ok-data" in text
    (tmp_path / "compose.yaml").write_text(text.replace("/tmp/ok-data", "/var/run/docker.sock"))
    r = trainspec("run", "compose.yaml", "--offline", cwd=tmp_path, env=NO_DAEMON)
    assert r.returncode == 2 and "docker.sock" in r.stderr and "refusing" in r.stderr, r.stderr


def test_the_check_is_skipped_with_allow_host_path(tmp_path):
    # Past the host-path check, the next thing is the daemon (absent here).
    r = trainspec("run", _with_host_path(tmp_path, "/etc"), "--offline", "--allow-host-path", cwd=tmp_path,
                  env=NO_DAEMON)
    assert r.returncode == 2 and "cannot reach the Docker daemon" in r.stderr, r.stderr


@pytest.mark.docker
def test_allow_host_path_really_mounts(tmp_path, test_image, leak_check):
    def edit(doc):
        doc["spec"]["command"] = ["sh", "-c", "test -s /host/hostname && echo host etc visible"]
        doc["spec"]["volumes"].append({"name": "host", "mountPath": "/host", "readOnly": True,
                                       "source": {"hostPath": "/etc"}})
    path = spec("flaky.yaml", tmp_path, edit)
    r = trainspec("run", path, "--offline", "--allow-host-path", cwd=tmp_path)
    assert r.returncode == 0 and "host etc visible" in r.stdout, r.stdout + r.stderr
    assert os.path.exists("/etc/hostname")


@pytest.mark.parametrize("option", ["creds=s3cr3t-typo-value", "s3cr3t-typo-value"])
def test_a_mistyped_secret_option_is_not_echoed(tmp_path, option):
    # `--secret creds=VALUE` (meant NAME:KEY=VALUE) or a bare value: the error names the
    # secret at most, never the text that may be the secret itself.
    r = trainspec("run", _with_host_path(tmp_path, "/tmp/ok-data"), "--secret", option, cwd=tmp_path, env=NO_DAEMON)
    assert r.returncode == 2 and "--secret" in r.stderr, r.stderr
    assert "s3cr3t-typo-value" not in r.stdout + r.stderr
