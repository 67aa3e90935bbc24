"""Issue 15's emulator cases on real Docker: security fields, probes in the replica's network,
complete logs, secret volumes on a tmpfs. (Host escapes: host/test_host_paths.py.)"""

from __future__ import annotations

import glob
from pathlib import Path

import pytest
import yaml

from emuhelpers import spec, start, trainspec, wait_for

NO_DAEMON = {"DOCKER_HOST": "unix:///nonexistent/trainspec-test.sock"}


def norm(text: str) -> str:
    return " ".join(text.split())


def _k8s(tmp_path: Path, edit_pod, edit_spec=None, out: str = "edited.yaml") -> Path:
    """The flaky spec compiled to k8s.yaml, with its worker's pod spec edited."""
    src = spec("flaky.yaml", tmp_path, edit_spec, out=f"src-{out}")
    r = trainspec("compile", src, "--target", "k8s", "-o", f"k8s-{out}", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    docs = list(yaml.safe_load_all((tmp_path / f"k8s-{out}").read_text()))
    for d in docs:
        if d and d.get("kind") == "Job":
            edit_pod(d["spec"]["template"]["spec"])
    path = tmp_path / out
    path.write_text(yaml.safe_dump_all(docs))
    return path


def _command(pod: dict, script: str) -> None:
    pod["containers"][0]["command"] = ["python3", "-c", script]
    pod["containers"][0].pop("args", None)
    pod["restartPolicy"] = "Never"


# -- 3. security fields: honoured or refused, never dropped ------------------------------

@pytest.mark.docker
def test_run_as_user_and_read_only_root_are_honoured(tmp_path, test_image, leak_check):
    def edit(pod):
        pod["securityContext"] = {"runAsUser": 1234, "runAsGroup": 2345, "supplementalGroups": [3456]}
        pod["containers"][0]["securityContext"] = {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                                                   "capabilities": {"drop": ["ALL"]}}
        _command(pod, "import os\n"
                      "print('ids', os.getuid(), os.getgid(), 3456 in os.getgroups())\n"
                      "try:\n    open('/rootfs-write', 'w')\nexcept OSError as e:\n    print('rootfs', e.errno)\n"
                      "print('nnp', [l for l in open('/proc/self/status') if l.startswith('NoNewPrivs')][0].split()[1])\n"
                      "print('capeff', [l for l in open('/proc/self/status') if l.startswith('CapEff')][0].split()[1])\n")
    r = trainspec("run", _k8s(tmp_path, edit), "--offline", cwd=tmp_path)
    out = norm(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ids 1234 2345 True" in out and "rootfs 30" in out  # EROFS
    assert "nnp 1" in out and "capeff 0000000000000000" in out


@pytest.mark.docker
def test_compose_user_and_read_only_are_honoured(tmp_path, test_image, leak_check):
    f = tmp_path / "compose.yaml"
    f.write_text(yaml.safe_dump({"services": {"worker-0": {
        "image": test_image, "user": "4321:4321", "read_only": True,
        "command": ["python3", "-c", ("import os\ntry:\n    open('/x', 'w')\nexcept OSError as e:\n"
                                      "    print('ro', e.errno)\nprint('uid', os.getuid())")]}}}))
    r = trainspec("run", f, "--offline", cwd=tmp_path)
    assert r.returncode == 0 and "uid 4321" in r.stdout and "ro 30" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("where,field,value", [
    ("pod", "hostNetwork", True), ("pod", "hostPID", True), ("pod", "hostIPC", True),
    ("container", "privileged", True), ("container", "capabilities", {"add": ["SYS_ADMIN"]}),
    ("container", "seccompProfile", {"type": "Unconfined"}), ("pod", "securityContext", {"sysctls": [{"name": "x"}]}),
    ("container", "procMount", "Unmasked")])
def test_host_access_fields_are_refused(tmp_path, where, field, value):
    def edit(pod):
        if where == "pod":
            pod[field] = value
        else:
            pod["containers"][0].setdefault("securityContext", {})[field] = value
    r = trainspec("run", _k8s(tmp_path, edit), "--offline", cwd=tmp_path, env=NO_DAEMON)
    assert r.returncode == 2 and "not supported by the emulator" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("key,value", [("privileged", True), ("cap_add", ["NET_ADMIN"]), ("devices", ["/dev/sda"]),
                                       ("network_mode", "host"), ("pid", "host"), ("ipc", "host"),
                                       ("security_opt", ["seccomp:unconfined"])])
def test_compose_host_access_keys_are_refused(tmp_path, key, value):
    f = tmp_path / "compose.yaml"
    f.write_text(yaml.safe_dump({"services": {"worker-0": {"image": "trainspec-test:py3", key: value}}}))
    r = trainspec("run", f, "--offline", cwd=tmp_path, env=NO_DAEMON)
    assert r.returncode == 2 and key in r.stderr and "not supported by the emulator" in r.stderr, r.stderr


# -- 4. probes run in the replica's network namespace ------------------------------------

@pytest.mark.docker
def test_an_offline_probe_cannot_reach_the_internet(tmp_path, test_image, leak_check):
    def edit(doc):
        doc["spec"]["env"]["MODE"] = "serve"  # up for 4 s, then succeeds
        doc["spec"]["restartPolicy"] = "Never"
        doc["spec"]["roles"]["worker"]["probes"] = {"readiness": {"tcpSocket": {"host": "1.1.1.1", "port": 53},
                                                                  "periodSeconds": 1, "timeoutSeconds": 1}}
    r = trainspec("run", spec("flaky.yaml", tmp_path, edit), "--offline", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "worker-0 ready" not in norm(r.stdout)


@pytest.mark.docker
def test_a_loopback_probe_means_the_replicas_loopback(tmp_path, test_image, leak_check):
    """`host: 127.0.0.1` is the replica's own loopback (where its server listens), not this machine's."""
    def edit(doc):
        doc["spec"]["env"]["MODE"] = "serve"
        doc["spec"]["restartPolicy"] = "Never"
        doc["spec"]["roles"]["worker"]["probes"] = {"readiness": {"httpGet": {"host": "127.0.0.1", "port": 8080,
                                                                              "path": "/"}, "periodSeconds": 1}}
    r = trainspec("run", spec("flaky.yaml", tmp_path, edit), "--offline", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "worker-0 ready" in norm(r.stdout)


# -- 6. logs drained completely ------------------------------------------------------------

@pytest.mark.docker
@pytest.mark.slow  # ~2 minutes on 2 cores: a million lines through the console and the saved log
def test_the_last_line_after_a_million_survives(tmp_path, test_image, leak_check):
    def edit(pod):
        _command(pod, "import sys\nw = sys.stdout.write\nfor i in range(1_000_000):\n    w('line %d\\n' % i)\n"
                      "sys.stdout.write('x' * 3_000_000)\nsys.stdout.write(' end-of-long-line\\n')\n"
                      "print('FINAL ERROR LINE', flush=True)\nsys.exit(3)")
    def one_pod(doc):
        doc["spec"]["backoffLimit"] = 0  # one pod: its output once in the saved log
    path = _k8s(tmp_path, edit, one_pod)
    r = trainspec("run", path, "--offline", "--run-id", "million", cwd=tmp_path, timeout=900)
    assert r.returncode == 1, r.stderr
    tail = r.stdout[-20000:]
    assert "FINAL ERROR LINE" in tail, tail[-2000:]
    saved = (tmp_path / ".trainspec" / "runs" / "million" / "worker-0.log").read_text()
    lines = saved.splitlines()
    assert lines[-1] == "FINAL ERROR LINE" and "line 999999" in lines
    long = [ln for ln in lines if ln.startswith("xxxx")]
    assert len(long) == 3  # 1 MiB, 1 MiB, the rest: split and marked, nothing dropped
    assert "".join(ln.replace(" [trainspec: line continues]", "") for ln in long).count("x") == 3_000_000
    assert long[-1].endswith(" end-of-long-line")
    r = trainspec("logs", "million", cwd=tmp_path, timeout=300)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("FINAL ERROR LINE"), r.stdout[-500:]


# -- 7. secret volumes on a tmpfs -----------------------------------------------------------

@pytest.mark.docker
def test_secret_volumes_are_on_a_tmpfs_and_gone_after(tmp_path, test_image, leak_check, monkeypatch):
    (tmp_path / "token").write_text("s3cr3t-on-tmpfs")
    monkeypatch.setenv("MY_KEY", "k3y-from-env")

    def edit(pod):
        pod["volumes"].append({"name": "creds", "secret": {"secretName": "creds"}})
        pod["containers"][0]["volumeMounts"].append({"name": "creds", "mountPath": "/etc/creds", "readOnly": True})
        pod["containers"][0]["securityContext"] = {"readOnlyRootFilesystem": True}
        _command(pod, "m = [l.split() for l in open('/proc/mounts')]\n"
                      "print('fs', [x[2] for x in m if x[1].startswith('/etc/creds')])\n"
                      "print('values', open('/etc/creds/token').read() == 's3cr3t-on-tmpfs',\n"
                      "      open('/etc/creds/key').read() == 'k3y-from-env')")
    before = set(glob.glob("/dev/shm/trainspec-files-*"))
    r = trainspec("run", _k8s(tmp_path, edit), "--offline", "--secret", f"creds:token=@{tmp_path / 'token'}",
                  "--secret", "creds:key=@env:MY_KEY", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = norm(r.stdout)
    assert "fs ['tmpfs']" in out or "fs ['tmpfs', 'tmpfs']" in out, out
    assert "values True True" in out, out
    # removed with the run (other runs on the machine may end meanwhile: only new folders count)
    assert not set(glob.glob("/dev/shm/trainspec-files-*")) - before


@pytest.mark.docker
def test_run_as_non_root_checks_the_images_user(tmp_path, test_image, leak_check):
    def edit(pod):
        pod["securityContext"] = {"runAsNonRoot": True}
    r = trainspec("run", _k8s(tmp_path, edit), "--offline", cwd=tmp_path)
    assert r.returncode == 2 and "runAsNonRoot is true but image" in r.stderr, r.stderr


@pytest.mark.docker
def test_an_inline_secret_leaves_the_process_list_once_the_run_starts(tmp_path, test_image, leak_check):
    value = "inl1ne-s3cr3t-9d2"

    def edit(doc):
        doc["spec"]["env"]["MODE"] = "sleep"
        doc["spec"]["env"]["TOKEN"] = {"secretKeyRef": {"name": "creds", "key": "token"}}
    proc = start("run", spec("flaky.yaml", tmp_path, edit), "--offline", "--grace", "1",
                 "--secret", f"creds:token={value}", cwd=tmp_path)
    try:
        wait_for(lambda: (tmp_path / ".trainspec/volumes/flaky-out/running").exists(), what="the worker to run")
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().decode(errors="replace")
        assert value not in cmdline and cmdline.startswith("trainspec run "), cmdline
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
