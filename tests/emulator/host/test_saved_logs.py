"""A replica's saved log (host/savedlogs.py): plain text, with the time of every line beside it."""

from __future__ import annotations

import time

from trainspec.emulator.host.savedlogs import LogReader, TimedLog


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
