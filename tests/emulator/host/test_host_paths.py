"""hostPath mounts of the host's system folders, the Docker socket and the like are refused
before anything is created, unless --allow-host-path (issue 7, item 4); and a mistyped
--secret is not echoed in the error. No Docker needed except for one test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from trainspec.compiler.errors import UsageError
from trainspec.emulator.host.paths import (
    denied_host_path,
    host_path_problem,
    make_dir_inside,
    resolve_bind,
    safe_name,
    safe_subpath,
)
from trainspec.emulator.model.job import Mount

from emuhelpers import spec, trainspec


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
    if ".." in host:  # the API server refuses it first, and so does validation (issue 24)
        assert "must not contain '..'" in r.stderr and "Traceback" not in r.stderr
    else:
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
    r = trainspec("run", _with_host_path(tmp_path, "/etc"), "--offline", "--allow-host-path", "--mount-host", "/etc",
                  cwd=tmp_path,
                  env=NO_DAEMON)
    assert r.returncode == 2 and "cannot reach the Docker daemon" in r.stderr, r.stderr


@pytest.mark.docker
def test_allow_host_path_really_mounts(tmp_path, test_image, leak_check):
    def edit(doc):
        doc["spec"]["command"] = ["sh", "-c", "test -s /host/hostname && echo host etc visible"]
        doc["spec"]["volumes"].append({"name": "host", "mountPath": "/host", "readOnly": True,
                                       "source": {"hostPath": "/etc"}})
    path = spec("flaky.yaml", tmp_path, edit)
    r = trainspec("run", path, "--offline", "--allow-host-path", "--mount-host", "/etc", cwd=tmp_path)
    assert r.returncode == 0 and "host etc visible" in r.stdout, r.stdout + r.stderr
    assert os.path.exists("/etc/hostname")


@pytest.mark.parametrize("option", ["creds=s3cr3t-typo-value", "s3cr3t-typo-value"])
def test_a_mistyped_secret_option_is_not_echoed(tmp_path, option):
    # `--secret creds=VALUE` (meant NAME:KEY=VALUE) or a bare value: the error names the
    # secret at most, never the text that may be the secret itself.
    r = trainspec("run", _with_host_path(tmp_path, "/tmp/ok-data"), "--secret", option, cwd=tmp_path, env=NO_DAEMON)
    assert r.returncode == 2 and "--secret" in r.stderr, r.stderr
    assert "s3cr3t-typo-value" not in r.stdout + r.stderr


# -- issue 15: host escapes --------------------------------------------------------------

@pytest.mark.parametrize("path", ["/usr/local/bin", "/usr/bin/python3", "/root/.bashrc", "/root/.profile",
                                  "/root/.git-credentials", "/root/.config/gh", "/root/.local/bin",
                                  "/home/alice/.ssh", "/home/nobody-here/.aws/credentials", "/run/systemd",
                                  "/run/dbus/system_bus_socket", "/run/podman/podman.sock", "/run/user/1000",
                                  "/var/spool/cron", "/var/run/secrets/kubernetes.io/serviceaccount",
                                  "/var/lib/kubelet", "/lib/modules", "/sbin"])
def test_denied_round_two(path):
    assert denied_host_path(path), path


def test_read_write_is_the_grants_business_not_a_data_root_list(tmp_path, monkeypatch):
    """Issue 23: read-write used to be allowed under /tmp, /work, the current folder...; now a host
    path is read-only unless the user wrote `:rw` on the command line (hostgrants.py, tested in
    tests/cli/test_untrusted_files_never_reach_the_host.py); the denylist is the same for both."""
    monkeypatch.chdir(tmp_path)
    assert host_path_problem("/usr/share/dict", read_only=True) is None
    assert host_path_problem("/usr/share/dict", read_only=False) is None
    assert host_path_problem("/etc", read_only=True)


@pytest.mark.parametrize("name", ["../../../etc", "a/b", "..", ".", "", "/abs", "-x", None, "a\0b"])
def test_names_that_become_paths(name):
    with pytest.raises(UsageError, match="not a valid name"):
        safe_name(name, "claimName", "x")


@pytest.mark.parametrize("sub", ["../x", "a/../../b", "/etc", ".."])
def test_sub_paths(sub):
    with pytest.raises(UsageError, match="subPath"):
        safe_subpath(sub, "x")
    assert safe_subpath("a/b/", "x") == "a/b"


def _k8s(tmp_path, edit_pod) -> Path:
    """The flaky spec compiled to k8s.yaml, with its pod spec edited."""
    r = trainspec("compile", spec("flaky.yaml", tmp_path), "--target", "k8s", "-o", "k8s.yaml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    docs = list(yaml.safe_load_all((tmp_path / "k8s.yaml").read_text()))
    for d in docs:
        if d and d.get("kind") == "Job":
            edit_pod(d["spec"]["template"]["spec"])
    out = tmp_path / "edited.yaml"
    out.write_text(yaml.safe_dump_all(docs))
    return out


@pytest.mark.parametrize("field,value", [("claimName", "../../../../../../etc"), ("subPath", "../../../../etc")])
def test_claim_names_and_sub_paths_cannot_leave_the_state_folder(tmp_path, field, value):
    def edit(pod):
        for v in pod["volumes"]:
            if "persistentVolumeClaim" in v and field == "claimName":
                v["persistentVolumeClaim"]["claimName"] = value
        if field == "subPath":
            pod["containers"][0]["volumeMounts"][0]["subPath"] = value
    r = trainspec("run", _k8s(tmp_path, edit), "--offline", cwd=tmp_path, env=NO_DAEMON)
    assert r.returncode == 2 and field in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not list(tmp_path.glob(".trainspec/volumes/*"))  # nothing made, anywhere


def test_compose_volume_names_cannot_leave_the_state_folder(tmp_path):
    f = tmp_path / "compose.yaml"
    f.write_text("services:\n  worker-0:\n    image: trainspec-test:py3\n    volumes: ['data:/data']\n"
                 "volumes:\n  data: {name: ../../../../tmp/outside}\n")
    r = trainspec("run", f, "--offline", cwd=tmp_path, env=NO_DAEMON)
    assert r.returncode == 2 and "volume name" in r.stderr and "not a valid name" in r.stderr, r.stderr


def test_host_path_into_the_state_folder_is_refused(tmp_path):
    state = tmp_path / ".trainspec"
    (state / "volumes" / "flaky-out").mkdir(parents=True)
    (tmp_path / "benign").mkdir()
    (state / "volumes" / "flaky-out" / "escape").symlink_to(tmp_path / "benign")
    r = trainspec("run", _with_host_path(tmp_path, str(state / "volumes" / "flaky-out" / "escape")), "--offline",
                  cwd=tmp_path, env=NO_DAEMON)
    assert r.returncode == 2 and "state folder" in r.stderr, r.stderr


def test_volume_folders_are_made_without_following_links(tmp_path):
    root = tmp_path / "volumes"
    (root / "claim").mkdir(parents=True)
    (root / "claim" / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UsageError, match="symlink"):
        make_dir_inside(str(root), str(root / "claim" / "link" / "deeper"))
    assert not (tmp_path / "elsewhere").exists()
    make_dir_inside(str(root), str(root / "claim" / "a" / "b"))
    assert (root / "claim" / "a" / "b").is_dir()


def test_a_claim_folder_that_leads_outside_is_refused_at_mount(tmp_path):
    (tmp_path / "st" / "volumes" / "c").mkdir(parents=True)
    (tmp_path / "st" / "volumes" / "c" / "sub").symlink_to("/etc")
    m = Mount("/x", "bind", str(tmp_path / "st" / "volumes" / "c" / "sub"), root=str(tmp_path / "st" / "volumes" / "c"))
    with pytest.raises(UsageError, match="outside"):
        resolve_bind(m, str(tmp_path / "st"), allow_host_path=True)  # --allow-host-path does not lift it


@pytest.mark.docker
def test_a_symlink_planted_by_a_container_is_not_followed(tmp_path, test_image, leak_check):
    """The issue's escape: a replica plants `escape -> /etc` in its claim folder; the next run
    mounts that claim with subPath `escape` (or a hostPath to it). Refused, nothing started."""
    def plant(doc):
        doc["spec"]["command"] = ["sh", "-c", "ln -s /etc /data/output/escape && echo planted"]
        doc["spec"]["restartPolicy"] = "Never"
    r = trainspec("run", spec("flaky.yaml", tmp_path, plant, out="plant.yaml"), "--offline", cwd=tmp_path)
    assert r.returncode == 0 and "planted" in r.stdout, r.stdout + r.stderr
    link = tmp_path / ".trainspec" / "volumes" / "flaky-out" / "escape"
    assert link.is_symlink()

    def use(pod):
        pod["containers"][0]["volumeMounts"][0]["subPath"] = "escape"
        pod["containers"][0]["command"] = ["sh", "-c", "cat /data/output/shadow; echo mounted"]
    r = trainspec("run", _k8s(tmp_path, use), "--offline", cwd=tmp_path)
    assert r.returncode == 2 and "symlink" in r.stderr and "mounted" not in r.stdout, r.stdout + r.stderr
    r = trainspec("run", _with_host_path(tmp_path, str(link), out="hp2.yaml"), "--offline", cwd=tmp_path)
    assert r.returncode == 2 and "refusing" in r.stderr, r.stderr


# -- second adversarial pass (docs/reliability.md) ------------------------------------------

@pytest.mark.parametrize("case", ["relative", "nul", "uid-text", "uid-bool", "sc-text", "item-path"])
def test_hostile_compiled_fields_are_clear_errors(tmp_path, case):
    def edit(pod):
        c = pod["containers"][0]
        if case in ("relative", "nul"):
            pod["volumes"].append({"name": "h", "hostPath": {"path": "data" if case == "relative" else "/tmp/a\0b"}})
            c["volumeMounts"].append({"name": "h", "mountPath": "/h"})
        elif case == "uid-text":
            pod["securityContext"] = {"runAsUser": "0; rm -rf /"}
        elif case == "uid-bool":
            c["securityContext"] = {"runAsUser": True}
        elif case == "sc-text":
            pod["securityContext"] = "privileged"
        else:
            pod["volumes"].append({"name": "c", "configMap": {"name": "cm", "items": [{"key": "k", "path": "../x"}]}})
            c["volumeMounts"].append({"name": "c", "mountPath": "/c"})
    r = trainspec("run", _k8s(tmp_path, edit), "--offline", "--configmap", "cm:k=v", cwd=tmp_path, env=NO_DAEMON)
    assert r.returncode == 2 and "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert "cannot reach the Docker daemon" not in r.stderr  # refused while reading, before Docker


def test_a_missing_host_path_is_refused_not_created(tmp_path):
    missing = tmp_path / "not-there" / "deeper"
    for extra in ([], ["--allow-host-path"]):
        r = trainspec("run", _with_host_path(tmp_path, str(missing)), "--offline", "--mount-host", str(tmp_path),
                      *extra, cwd=tmp_path, env=NO_DAEMON)
        assert r.returncode == 2 and "host path not found" in r.stderr and "create them first" in r.stderr, r.stderr
    assert not (tmp_path / "not-there").exists()
