"""Faults and secrets on a real Docker engine (issue 7, items 5 and 6): secrets masked in
everything trainspec prints or saves; `down -t 0`; signals while the run is still starting;
a SIGKILLed background supervisor; `run --detach` returns with every replica started.
Every test ends with `leak_check`: no container, network or volume of its runs remains."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from trainspec.emulator.host.state import supervisor_alive, supervisor_id, supervisor_pid

from emuhelpers import norm, run_containers, spec, start, trainspec, wait_for

pytestmark = pytest.mark.docker
SECRET = "s3cr3t-Value-91c2e"


def _secret_job(tmp_path, command, **spec_fields):
    def edit(doc):
        doc["spec"]["env"]["TOKEN"] = {"secretKeyRef": {"name": "creds", "key": "token"}}
        doc["spec"]["command"] = command
        doc["spec"].update(spec_fields)
    return spec("flaky.yaml", tmp_path, edit)


def _saved_files_without(tmp_path, value: str) -> int:
    n = 0
    for f in (tmp_path / ".trainspec").rglob("*"):
        if f.is_file():
            n += 1
            assert value not in f.read_text(errors="replace"), f
    return n


def test_a_secret_the_job_prints_is_masked_on_the_console_and_in_saved_logs(tmp_path, test_image, leak_check):
    path = _secret_job(tmp_path, ["sh", "-c", 'echo "token is $TOKEN"; test "$TOKEN" = ' + SECRET])
    r = trainspec("run", path, "--offline", "--secret", f"creds:token={SECRET}", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr  # the container got the real value
    assert SECRET not in r.stdout + r.stderr
    assert "worker-0 | token is ******" in norm(r.stdout)
    log = next((tmp_path / ".trainspec" / "runs").glob("*/worker-0.log"))
    assert log.read_text() == "token is ******\n"
    assert _saved_files_without(tmp_path, SECRET) >= 2  # state.json and the log at least


def test_a_secret_in_trainspec_own_messages_is_masked(tmp_path, test_image, leak_check):
    # A failing postStart hook's output is quoted in trainspec's own status line, state.json
    # and summary: here that output is the secret.
    def edit(doc):
        doc["spec"]["env"]["TOKEN"] = {"secretKeyRef": {"name": "creds", "key": "token"}}
        doc["spec"]["restartPolicy"] = "Never"
        doc["spec"]["command"] = ["sleep", "30"]
        doc["spec"]["roles"]["worker"]["lifecycle"] = {"postStart": {"exec": ["sh", "-c", "echo $TOKEN; exit 1"]}}
    r = trainspec("run", spec("flaky.yaml", tmp_path, edit), "--offline", "--grace", "1", "--secret",
                  f"creds:token={SECRET}", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "postStart hook failed (******)" in r.stdout, r.stdout
    assert SECRET not in r.stdout + r.stderr
    _saved_files_without(tmp_path, SECRET)


def test_detached_run_keeps_secrets_out_of_its_files_and_ps(tmp_path, docker_client, test_image, leak_check):
    path = _secret_job(tmp_path, ["sh", "-c", 'echo "token is $TOKEN"; sleep 600'])
    r = trainspec("run", path, "--offline", "--detach", "--secret", f"creds:token={SECRET}", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    run_id = r.stdout.strip()
    try:
        st = json.loads((tmp_path / ".trainspec/runs" / run_id / "state.json").read_text())
        pid = supervisor_pid(st["supervisor"])
        cmdline = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
        # the supervisor is the CLI forked: it must not keep showing the CLI's --secret in `ps`
        assert SECRET not in cmdline and cmdline.startswith("trainspec run supervisor"), cmdline
        logs = wait_for(lambda: (lambda o: o if "token is" in o else None)(
            trainspec("logs", run_id, "worker-0", cwd=tmp_path).stdout), what="the log line")
        assert logs == "token is ******\n"
        for args in (("ps",), ("ps", run_id), ("ps", "-a")):
            assert SECRET not in trainspec(*args, cwd=tmp_path).stdout
    finally:
        down = trainspec("down", run_id, "-t", "0", cwd=tmp_path)
    assert down.returncode == 0 and SECRET not in down.stdout + down.stderr
    assert _saved_files_without(tmp_path, SECRET) >= 3  # state.json, worker-0.log, supervisor.log


def test_detach_returns_with_every_replica_running(tmp_path, docker_client, test_image, leak_check):
    def edit(doc):
        doc["spec"]["env"]["MODE"] = "hang"
        doc["spec"]["roles"] = {"ps": {"replicas": 2}, "worker": {"replicas": 3}}
    r = trainspec("run", spec("flaky.yaml", tmp_path, edit), "--offline", "--detach", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    try:
        states = [c.status for c in run_containers(docker_client, "flaky", tmp_path)]
        assert states == ["running"] * 5, states  # no waiting here: they already run
    finally:
        down = trainspec("down", "flaky", "-t", "0", cwd=tmp_path)
    assert "removed 5 container(s), 1 network(s)" in down.stdout, down.stdout
    assert run_containers(docker_client, "flaky", tmp_path) == []


def test_down_t0_kills_at_once_and_records_the_end(tmp_path, docker_client, test_image, leak_check):
    def edit(doc):
        # ignores SIGTERM (as PID 1 behind tini it would still get it): only a kill stops it at once
        doc["spec"]["command"] = ["python3", "-c", "import signal, time; signal.signal(signal.SIGTERM, "
                                  "signal.SIG_IGN); print('up', flush=True); time.sleep(600)"]
        doc["spec"]["roles"]["worker"]["replicas"] = 3
    r = trainspec("run", spec("flaky.yaml", tmp_path, edit), "--offline", "--detach", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    run_id = r.stdout.strip()
    wait_for(lambda: "up" in trainspec("logs", run_id, "worker-2", cwd=tmp_path).stdout, what="worker-2 up")
    t0 = time.monotonic()
    down = trainspec("down", run_id, "-t", "0", cwd=tmp_path)
    took = time.monotonic() - t0
    assert down.returncode == 0 and "removed 3 container(s), 1 network(s)" in down.stdout, down.stdout
    assert took < 8, took  # the default grace would be 10 s (capped terminationGracePeriodSeconds)
    st = json.loads((tmp_path / ".trainspec/runs" / run_id / "state.json").read_text())
    assert st["status"] == "Interrupted" and st["finished"]
    assert not supervisor_alive(st["supervisor"])


@pytest.mark.parametrize("sig,rc", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_while_replicas_are_still_being_created(tmp_path, docker_client, test_image, leak_check, sig, rc):
    def edit(doc):
        doc["spec"]["env"]["MODE"] = "hang"
        doc["spec"]["roles"] = {"ps": {"replicas": 2}, "worker": {"replicas": 6}}
    proc = start("run", spec("flaky.yaml", tmp_path, edit), "--offline", cwd=tmp_path)
    try:
        first = proc.stdout.readline()  # "trainspec: run flaky-...: 8 replicas ..." comes before any create
        assert "8 replicas" in first, first
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == rc, first + out
    assert "INTERRUPTED" in out
    assert run_containers(docker_client, "flaky", tmp_path) == []


def test_sigkilled_background_supervisor_is_orphaned_then_gc(tmp_path, docker_client, test_image, leak_check):
    r = trainspec("run", spec("flaky.yaml", tmp_path, lambda d: d["spec"]["env"].update(MODE="hang")),
                  "--offline", "--detach", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    run_id = r.stdout.strip()
    st = json.loads((tmp_path / ".trainspec/runs" / run_id / "state.json").read_text())
    try:
        os.kill(supervisor_pid(st["supervisor"]), signal.SIGKILL)
        wait_for(lambda: not supervisor_alive(st["supervisor"]), timeout=10, what="the supervisor to die")
        assert run_containers(docker_client, "flaky", tmp_path)  # SIGKILL: no chance to clean up
        ps = trainspec("ps", cwd=tmp_path)
        assert run_id in ps.stdout and "orphaned" in ps.stdout, ps.stdout
    finally:
        gc = trainspec("gc", cwd=tmp_path)
    assert f"{run_id}: removed 1 container(s), 1 network(s)" in gc.stdout, gc.stdout + gc.stderr
    assert run_containers(docker_client, "flaky", tmp_path) == []


def test_a_zombie_supervisor_is_not_alive():
    # A detached supervisor's parent is whoever adopted it, which may reap late: `down` must
    # not wait for a process that has exited but is not reaped yet.
    proc = subprocess.Popen(["sleep", "0.2"])
    ident = supervisor_id(proc.pid)
    assert supervisor_alive(ident) is True
    wait_for(lambda: open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z", timeout=10,
             what="a zombie")
    assert supervisor_alive(ident) is False
    proc.wait()


def test_detached_run_that_fails_to_start_reports_it_and_leaves_nothing(tmp_path, docker_client, test_image,
                                                                        leak_check):
    # A GPU request where Docker has no NVIDIA runtime, trusted anyway: create succeeds, start
    # fails. The background supervisor cleans up, then the foreground says why (exit 2).
    def edit(doc):
        doc["spec"]["env"]["MODE"] = "hang"
        doc["spec"]["roles"]["worker"]["resources"] = {"gpu": 1}
    if shutil.which("nvidia-smi"):
        pytest.skip("a GPU runtime may work here")
    r = trainspec("run", spec("flaky.yaml", tmp_path, edit), "--offline", "--detach", "--gpus", "0", cwd=tmp_path,
                  env={"TRAINSPEC_ASSUME_GPU_RUNTIME": "1"})
    assert r.returncode == 2, r.stdout + r.stderr
    assert "no NVIDIA GPU runtime" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.stdout == ""  # no run id: nothing runs in the background
    assert run_containers(docker_client, "flaky", tmp_path) == []
