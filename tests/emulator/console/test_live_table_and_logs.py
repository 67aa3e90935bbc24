"""Everyday use without Docker: the live table clipped to the terminal, saved logs with
times (`logs --tail/--since/-t`, replicas interleaved), the no-daemon hint, and a replica
that exited on its own never reported as stopped by the run."""

from __future__ import annotations

import io
import json
import re
import threading
import time
from types import SimpleNamespace

import pytest

from trainspec.compiler.errors import UsageError
from trainspec.emulator.console.logview import parse_since, select
from trainspec.emulator.console.table import Console
from trainspec.emulator.host.savedlogs import LogReader, TimedLog
from trainspec.emulator.model.status import Row

from emuhelpers import trainspec


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_live_table_is_clipped_to_the_terminal(monkeypatch):
    """31 replicas in a 20-row terminal: the table takes at most half of it, every redraw
    erases exactly what the last one drew, lines never wrap, and failures stay visible."""
    monkeypatch.setenv("LINES", "20")
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.delenv("NO_COLOR", raising=False)
    names = [f"worker-{i}" for i in range(31)]
    out = Tty()
    c = Console(names, out)
    rows = [Row(n, "Running", True, 0, None, "", time.time()) for n in names]
    rows[27] = Row("worker-27", "Failed", False, 0, 3, "exit code 3 " + "x" * 80, time.time())
    for _ in range(50):
        c.update(rows)
        c.log("worker-1", "a line")
    text = out.getvalue()
    drawn = [int(n) for n in re.findall(r"\x1b\[(\d+)F", text)]
    assert drawn and max(drawn) <= 10
    last = text.rsplit("\x1b[J", 1)[1]  # the last log line, then the table
    lines = [line for line in last.splitlines() if line][1:]
    assert lines[0].startswith("REPLICA") and len(lines) == drawn[-1] <= 10
    assert all(len(line) <= 59 for line in lines)
    assert any(line.startswith("worker-27") and "Failed" in line for line in lines)
    assert lines[-1].startswith("... 23 more: 23 Running")


def test_saved_logs_keep_each_lines_time(tmp_path):
    log = TimedLog(tmp_path / "worker-0.log")
    log.write("one\n")
    log.write("two\n")
    log.flush()
    reader = LogReader(tmp_path / "worker-0.log")
    got = reader.read()
    assert [line for _t, line in got] == ["one", "two"]
    assert all(t is not None and abs(t - time.time()) < 60 for t, _line in got)
    log.write("three\n")
    log.close()
    assert [line for _t, line in reader.read()] == ["three"]
    reader.close()
    assert (tmp_path / "worker-0.log").read_text() == "one\ntwo\nthree\n"  # the saved log stays plain


def test_select_interleaves_by_time_with_tail_and_since():
    batches = {"worker-0": [(1.0, "w0 a"), (3.0, "w0 b"), (5.0, "w0 c")],
               "ps-0": [(2.0, "ps a"), (4.0, "ps b"), (None, "ps cut short")]}
    assert [line for _t, _n, line in select(batches, None, None)] == [
        "w0 a", "ps a", "w0 b", "ps b", "ps cut short", "w0 c"]
    assert [line for _t, _n, line in select(batches, 1, None)] == ["ps cut short", "w0 c"]
    assert [line for _t, _n, line in select(batches, None, 3.5)] == ["ps b", "w0 c"]
    assert select(batches, 0, None) == []


def test_since_takes_durations_and_times():
    assert parse_since("90s", now=1000.0) == 910.0
    assert parse_since("1h30m", now=10000.0) == 10000.0 - 5400
    assert parse_since("2026-11-23T14:00:00Z") == 1795442400.0
    with pytest.raises(UsageError, match="--since 'yesterday'"):
        parse_since("yesterday")


def _fake_run(tmp_path, job="demo", rid="demo-abc123"):
    d = tmp_path / ".trainspec" / "runs" / rid
    d.mkdir(parents=True)
    for name, lines in (("worker-0", ["w0 first", "w0 second", "w0 third"]), ("ps-0", ["ps first", "ps second"])):
        log = TimedLog(d / f"{name}.log")
        for line in lines:
            log.write(line + "\n")
            time.sleep(0.01)  # distinct times; the order is what is checked, not the time
        log.close()
    # interleave: rewrite ps-0's times between worker-0's
    w0 = (d / "worker-0.log.ts").read_text().split()
    (d / "ps-0.log.ts").write_text(f"{float(w0[0]) + 0.001}\n{float(w0[1]) + 0.001}\n")
    (d / "state.json").write_text(json.dumps({"run_id": rid, "job": job, "started": time.time(),
                                              "finished": time.time(), "status": "Succeeded"}))
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


def test_a_replica_that_exited_on_its_own_is_not_stopped_by_the_run():
    from trainspec.emulator.engine.pods import PodRunner

    exited: dict[str, int] = {"c1": 1}
    stops: list[str] = []
    api = SimpleNamespace(stop=lambda cid, timeout: stops.append(cid), kill=lambda cid: stops.append(cid))
    run = SimpleNamespace(events=SimpleNamespace(exit_code=exited.get), client=SimpleNamespace(api=api),
                          opts=SimpleNamespace(max_grace=5), daemon_lost=None)
    replica = SimpleNamespace(display="worker-1", grace=5, main=SimpleNamespace(pre_stop=None))
    pr = PodRunner.__new__(PodRunner)
    pr.run_, pr.r, pr.lock, pr.kill_reason = run, replica, threading.Lock(), None
    pr.cid = "c1"
    pr._kill("stopped by the run")
    assert pr.kill_reason is None and stops == []   # it had exited: nothing sent, nothing claimed
    pr.cid = "c2"                                    # still running: the run stops it
    pr._kill("stopped by the run")
    assert pr.kill_reason == "stopped by the run" and stops == ["c2"]
