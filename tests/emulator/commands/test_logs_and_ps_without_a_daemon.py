"""`trainspec logs` and `ps` with no engine answering: saved logs still show (interleaved, tailed,
stamped); `ps` says how to start the daemon without pointing at a repository script."""

from __future__ import annotations

import re
import time

from trainspec.emulator.host.savedlogs import TimedLog
from trainspec.emulator.host.state import write_state

from emuhelpers import trainspec


def _fake_run(tmp_path, job="demo", rid="demo-abc123"):
    d = tmp_path / ".trainspec" / "runs" / rid
    d.mkdir(parents=True)
    for name, lines in (("worker-0", ["w0 first", "w0 second", "w0 third"]), ("ps-0", ["ps first", "ps second"])):
        log = TimedLog(d / f"{name}.log")
        for line in lines:
            log.write(line + "\n")
            time.sleep(0.03)  # distinct times (a record per line: more than TIME_RESOLUTION apart)
        log.close()
    # interleave: rewrite ps-0's times between worker-0's (records `LINE TIME`, savedlogs.py)
    w0 = dict(line.split() for line in (d / "worker-0.log.ts").read_text().splitlines())
    (d / "ps-0.log.ts").write_text(f"0 {float(w0['0']) + 0.001}\n1 {float(w0['1']) + 0.001}\n")
    write_state(d, {"run_id": rid, "job": job, "started": time.time(), "finished": time.time(),
                    "status": "Succeeded", "supervisor": "", "replicas": []})  # signed, as a run writes it
    return d


def test_logs_command_interleaves_tails_and_stamps(tmp_path):
    _fake_run(tmp_path)
    nodaemon = {"DOCKER_HOST": f"unix://{tmp_path}/none.sock"}  # saved logs show without a daemon
    r = trainspec("logs", "demo", "--color", "never", cwd=tmp_path, env=nodaemon)
    assert r.returncode == 0, r.stderr
    assert [line.split("| ", 1)[1] for line in r.stdout.splitlines()] == [
        "w0 first", "ps first", "w0 second", "ps second", "w0 third"]
    r = trainspec("logs", "demo", "--tail", "1", "-t", "--color", "never", cwd=tmp_path, env=nodaemon)
    out = r.stdout.splitlines()
    assert len(out) == 2 and out[0].startswith("ps-0") and out[1].startswith("worker-0")
    assert re.search(r"\| \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z w0 third$", out[1]), out
    r = trainspec("logs", "demo", "worker-0", "--since", "1h", cwd=tmp_path, env=nodaemon)
    assert r.stdout.splitlines() == ["w0 first", "w0 second", "w0 third"]
    r = trainspec("logs", "nothing-like-it", cwd=tmp_path, env=nodaemon)
    assert r.returncode == 2 and "no run or job named 'nothing-like-it'" in r.stderr


def test_no_daemon_hint_needs_no_repository_script(tmp_path):
    r = trainspec("ps", cwd=tmp_path, env={"DOCKER_HOST": f"unix://{tmp_path}/none.sock"})
    assert r.returncode == 2
    assert "systemctl start docker" in r.stderr and "scripts/" not in r.stderr
