"""The kubelet of one replica (engine/pods.py) and its log pumps (engine/logpump.py), without Docker."""

from __future__ import annotations

import threading
from types import SimpleNamespace

from trainspec.emulator.engine.logpump import CONTINUED, LogPump
from trainspec.emulator.engine.pods import PodRunner
from trainspec.emulator.host.savedlogs import LogReader, TimedLog
from trainspec.emulator.model.status import Row


def test_a_replica_that_exited_on_its_own_is_not_stopped_by_the_run():
    exited: dict[str, int] = {"c1": 1}
    stops: list[str] = []
    client = SimpleNamespace(stop=lambda cid, timeout: stops.append(cid), kill=lambda cid: stops.append(cid))
    run = SimpleNamespace(events=SimpleNamespace(exit_code=exited.get), client=client,
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


class Recorder:
    """A Reporter that keeps what it is told (the engine reports through any, not only the console)."""

    live = False

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def note(self, text: str) -> None: ...
    def transition(self, name: str, text: str) -> None: ...
    def update(self, rows: list[Row]) -> None: ...
    def finish(self) -> None: ...
    def summary(self, head: str, rows: list[Row], logs: str) -> None: ...

    def log(self, name: str, line: str) -> None:
        self.lines.append((name, line))


def test_the_log_pump_reports_every_line_and_saves_it_with_its_time(tmp_path, monkeypatch):
    """Lines split across chunks, a line longer than MAX_LINE in marked pieces, a last line without
    a newline: each reaches the reporter (masked) and the saved log, in order."""
    monkeypatch.setattr("trainspec.emulator.engine.logpump.MAX_LINE", 8)
    chunks = [b"one\ntw", b"o s3cr3t\n", b"0123456789ab", b"cd\nlast"]
    client = SimpleNamespace(logs=lambda cid: iter(chunks))  # ContainerEngine.logs: the followed stream
    reporter = Recorder()
    saved = TimedLog(tmp_path / "worker-0.log")
    pump = LogPump(client, "c1", "worker-0:setup", reporter, saved, lambda t: t.replace("s3cr3t", "******"))
    pump.start()
    pump.drain(idle_limit=5)
    saved.close()
    assert reporter.lines == [("worker-0:setup", "one"), ("worker-0:setup", "two ******"),
                              ("worker-0:setup", "01234567" + CONTINUED), ("worker-0:setup", "89abcd"),
                              ("worker-0:setup", "last")]
    reader = LogReader(tmp_path / "worker-0.log")
    got = reader.read()
    reader.close()
    assert [line for _t, line in got] == [f"[setup] {text}" for _n, text in reporter.lines]
    assert all(t is not None for t, _line in got) and not pump.cut

