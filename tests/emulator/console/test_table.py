"""The console: prefixes, colours, the live table on a terminal, transitions elsewhere."""

from __future__ import annotations

import io
import re
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


def test_summary_says_the_outcome_the_final_table_and_where_the_logs_are():
    out = io.StringIO()
    c = Console(["ps-0", "worker-0"], out)
    c.mask = lambda text: text.replace("s3cr3t-value", "******")
    c.summary("job demo SUCCEEDED in 1.0s (s3cr3t-value)", rows("Succeeded"), ".trainspec/runs/demo-1")
    lines = out.getvalue().splitlines()
    assert lines[0] == "job demo SUCCEEDED in 1.0s (******)"
    assert lines[1].split() == ["REPLICA", "STATUS", "READY", "RESTARTS", "EXIT", "DETAIL"]
    assert lines[-1] == "logs: .trainspec/runs/demo-1/" and len(lines) == 5  # head, 3 table lines, logs

