"""The Docker daemon stopping or restarting under a live run (issue 7, item 6): a clear
error and exit code 2, never a hang, and nothing of the run left once the daemon is back.

These tests kill a daemon, so they do it to a private one: a second dockerd of their own
(own socket, data root, exec root and default bridge, no iptables), started here and stopped
at the end. The shared daemon that other tests — and other jobs on the machine — use is
never touched. Needs root and `ip` (iproute2), like scripts/start-dockerd.sh; under CI=true
their absence fails the tests instead of skipping them. Marked `docker_daemon` too, to deselect
(`-m "not docker_daemon"`) where starting a second daemon is unwelcome.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from emuhelpers import spec, start, trainspec, wait_for

pytestmark = [pytest.mark.docker, pytest.mark.docker_daemon]


def _unavailable(reason: str):
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


class PrivateDaemon:
    def __init__(self, root: Path, bridge: str):
        self.root = root
        self.bridge = bridge
        self.sock = root / "docker.sock"
        self.host = f"unix://{self.sock}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        log = open(self.root / "dockerd.log", "ab")
        self.proc = subprocess.Popen(
            ["dockerd", "--host", self.host, "--data-root", str(self.root / "data"),
             "--exec-root", str(self.root / "exec"), "--pidfile", str(self.root / "docker.pid"),
             # Its own default bridge: `-b none` would delete the host's docker0 (dockerd does that).
             "--bridge", self.bridge, "--iptables=false", "--ip-masq=false", "--shutdown-timeout", "3"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(self._started, timeout=60, what="the private dockerd to answer")

    def _started(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            tail = (self.root / "dockerd.log").read_text(errors="replace")[-800:]
            raise AssertionError(f"private dockerd exited: {tail}")
        return self.answers()

    def answers(self) -> bool:
        return (self.proc is not None and self.proc.poll() is None
                and subprocess.run(["docker", "-H", self.host, "info"], capture_output=True).returncode == 0)

    def kill(self) -> None:
        """Stop it the way `systemctl stop/restart docker` does (SIGTERM): it stops the containers
        and closes every connection. (A SIGKILL leaves containerd shims behind that a new
        dockerd may fail to adopt — a different test, of Docker rather than of trainspec.)"""
        assert self.proc is not None
        self.proc.terminate()
        self.proc.wait(60)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def client(self):
        import docker

        return docker.DockerClient(base_url=self.host)


def _free_subnet() -> ipaddress.IPv4Network:
    from trainspec.emulator.adapters.docker_api import host_networks

    taken = host_networks()
    for third in range(0, 256):
        net = ipaddress.IPv4Network(f"10.197.{(os.getpid() + third) % 256}.0/24")
        if not any(net.overlaps(t) for t in taken):
            return net
    raise AssertionError("no free /24 for the private daemon's bridge")


@pytest.fixture(scope="module")
def private_daemon(docker_client, test_image):
    if os.geteuid() != 0 or not shutil.which("ip") or not shutil.which("dockerd"):
        _unavailable("a private Docker daemon needs root, dockerd and ip (iproute2)")
    root = Path(tempfile.mkdtemp(prefix="tsd-", dir="/tmp"))  # short: a unix socket path is <108 bytes
    bridge = f"tsbr{os.getpid() % 100000}"
    net = _free_subnet()
    subprocess.run(["ip", "link", "add", "name", bridge, "type", "bridge"], check=True)
    daemon = PrivateDaemon(root, bridge)
    try:
        subprocess.run(["ip", "addr", "add", f"{net.network_address + 1}/{net.prefixlen}", "dev", bridge],
                       check=True)
        subprocess.run(["ip", "link", "set", bridge, "up"], check=True)
        daemon.start()
        save = subprocess.Popen(["docker", "save", test_image], stdout=subprocess.PIPE)
        subprocess.run(["docker", "-H", daemon.host, "load", "-q"], stdin=save.stdout, check=True,
                       capture_output=True, timeout=300)
        save.wait(60)
        yield daemon
    finally:
        daemon.stop()
        subprocess.run(["ip", "link", "del", bridge], capture_output=True)
        subprocess.run(["umount", "-R", str(root / "exec")], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def _leftovers(daemon: PrivateDaemon, tmp_path: Path) -> list[str]:
    label = {"label": f"trainspec.dev/state-dir={tmp_path / '.trainspec'}"}
    client = daemon.client()
    try:
        return ([c.name for c in client.containers.list(all=True, filters=label)]
                + [n.name for n in client.networks.list(filters=label)]
                + [v.name for v in client.volumes.list(filters=label)])
    finally:
        client.close()


def _job(tmp_path):
    def edit(doc):
        doc["spec"]["env"]["MODE"] = "hang"
        doc["spec"]["volumes"].append({"name": "scratch", "mountPath": "/scratch", "source": {"emptyDir": {}}})
        doc["spec"]["roles"] = {"ps": {"replicas": 1}, "worker": {"replicas": 2}}
    return spec("flaky.yaml", tmp_path, edit)


def _running(daemon: PrivateDaemon, tmp_path: Path) -> int:
    client = daemon.client()
    try:
        return len(client.containers.list(filters={"label": f"trainspec.dev/state-dir={tmp_path / '.trainspec'}"}))
    finally:
        client.close()


def test_daemon_restarting_mid_run_is_a_clear_error_and_the_run_is_removed(tmp_path, private_daemon):
    env = {"DOCKER_HOST": private_daemon.host}
    proc = start("run", _job(tmp_path), "--offline", cwd=tmp_path, env=env)
    try:
        wait_for(lambda: _running(private_daemon, tmp_path) == 3, what="3 replicas running")
        assert _leftovers(private_daemon, tmp_path)  # containers, network and emptyDir volumes
        t0 = time.monotonic()
        private_daemon.kill()
        time.sleep(1)
        private_daemon.start()  # back within seconds, as a restart would be
        out, _ = proc.communicate(timeout=90)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 2, out
    assert "lost the connection to the Docker daemon mid-run" in out, out
    assert "Traceback" not in out and "Exception in thread" not in out, out
    assert took < 45, took
    assert _leftovers(private_daemon, tmp_path) == []  # removed once the daemon answered again


def test_daemon_gone_for_good_ends_the_run_and_gc_cleans_up_later(tmp_path, private_daemon):
    env = {"DOCKER_HOST": private_daemon.host, "TRAINSPEC_DAEMON_WAIT": "2"}
    proc = start("run", _job(tmp_path), "--offline", cwd=tmp_path, env=env)
    try:
        wait_for(lambda: _running(private_daemon, tmp_path) == 3, what="3 replicas running")
        t0 = time.monotonic()
        private_daemon.kill()  # and it stays down (until the test starts it again for gc)
        out, _ = proc.communicate(timeout=60)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        if not private_daemon.answers():
            private_daemon.start()
    assert proc.returncode == 2, out
    assert "lost the connection to the Docker daemon mid-run" in out, out
    assert "run `trainspec gc` once the Docker daemon answers again" in out, out
    assert "Traceback" not in out and took < 30, (took, out)
    gc = trainspec("gc", cwd=tmp_path, env=env)
    assert gc.returncode == 0 and "removed 3 container(s), 1 network(s)" in gc.stdout, gc.stdout + gc.stderr
    assert _leftovers(private_daemon, tmp_path) == []


def test_detached_run_records_the_daemon_error(tmp_path, private_daemon):
    env = {"DOCKER_HOST": private_daemon.host}
    r = trainspec("run", _job(tmp_path), "--offline", "--detach", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    run_id = r.stdout.strip()
    private_daemon.kill()
    time.sleep(1)
    private_daemon.start()

    def finished():
        import json

        st = json.loads((tmp_path / ".trainspec/runs" / run_id / "state.json").read_text())
        return st if st.get("finished") else None

    st = wait_for(finished, timeout=60, what="the supervisor to record the end")
    assert st["status"] == "Error" and "lost the connection to the Docker daemon" in st["reason"], (
        st, (tmp_path / ".trainspec/runs" / run_id / "supervisor.log").read_text())
    ps = trainspec("ps", "-a", cwd=tmp_path, env=env)
    assert run_id in ps.stdout and "Error" in ps.stdout, ps.stdout
    assert _leftovers(private_daemon, tmp_path) == []
