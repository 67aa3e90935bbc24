"""The console: prefixes, colours, the live table on a terminal, transitions elsewhere."""

from __future__ import annotations

import io
import time

from trainspec.emulator.console.table import Console
from trainspec.emulator.model.status import Row


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def rows(phase: str) -> list[Row]:
    return [Row("ps-0", "Running", True, 0, None, "", time.time()),
            Row("worker-0", phase, False, 1, 3 if phase == "Failed" else None, "exit code 3", time.time())]


def test_terminal_gets_colours_and_a_live_table_below_the_logs(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = Tty()
    c = Console(["ps-0", "worker-0"], out)
    c.update(rows("Running"))
    c.log("worker-0", "hello")
    c.update(rows("Failed"))
    text = out.getvalue()
    assert "\x1b[33mworker-0 |\x1b[0m hello" in text  # the second replica's colour
    assert "\x1b[3F\x1b[J" in text                       # the table (3 lines) is erased and redrawn
    last = text.rsplit("\x1b[J", 1)[1]
    assert last.splitlines()[0].startswith("REPLICA") and "Failed" in last and "exit code 3" in last
    c.transition("worker-0", "Running -> Failed")      # the live table says it: no extra line
    assert "Running -> Failed" not in out.getvalue()


def test_plain_output_prints_transitions_and_no_escapes():
    out = io.StringIO()
    c = Console(["ps-0", "worker-10"], out)
    c.update(rows("Running"))
    c.log("ps-0", "hi")
    c.transition("ps-0", "Pending -> Running")
    assert out.getvalue() == "ps-0      | hi\ntrainspec: ps-0      Pending -> Running\n"


def test_summary_table_without_age():
    c = Console(["ps-0"], io.StringIO())
    table = c.table(rows("Succeeded"), age=False)
    assert table.splitlines()[0].split() == ["REPLICA", "STATUS", "READY", "RESTARTS", "EXIT", "DETAIL"]
    assert table.splitlines()[2].split()[:4] == ["worker-0", "Succeeded", "-", "1"]
