"""A replica's saved log under .trainspec/runs/<run-id>/: the text and the time of its lines.

The log stays plain text (`<replica>.log`, for people and `grep`); when lines arrived is kept
beside it in `<replica>.log.ts`: one record `LINE TIME` (the 0-based number of the first line that
arrived at TIME, seconds since the epoch) whenever the time moved by more than TIME_RESOLUTION
since the last record, so the times cost at most one short record per 10 ms, whatever the lines
(one per line made a file of empty lines 19 times its size).  Logs with one time per line (runs
before issue 32) and logs without times (older still) read too.  The writer (the engine's log pumps)
and the reader (`trainspec logs`) are both here: one file format.

A replica's saved log (text and times) stops at MAX_SAVED_LOG_BYTES (compiler/limits.py): past it
one line says so — `trainspec logs` shows it — and later output is shown live but not saved.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TextIO

from ...compiler.limits import MAX_SAVED_LOG_BYTES

TS_SUFFIX = ".ts"
TIME_RESOLUTION = 0.01  # seconds: lines closer together than this share their record
CAPPED = ("[trainspec: this replica's saved log reached {limit} bytes (MAX_SAVED_LOG_BYTES); later output "
          "was shown live but not saved]")


def _nofollow(path: str, flags: int) -> int:
    """open()'s opener: a saved log is never reached through a link (ownfs.py)."""
    return os.open(path, flags | os.O_NOFOLLOW, 0o600)


class TimedLog:
    """The writer a replica's log pumps share: lines to `<replica>.log`, their times to
    `<replica>.log.ts`; one lock, so the two files stay in step."""

    def __init__(self, path: Path, limit: int = MAX_SAVED_LOG_BYTES):
        self.lock = threading.Lock()
        self.text: TextIO = open(path, "a", encoding="utf-8", opener=_nofollow)  # noqa: SIM115 - closed by close()
        try:
            self.times: TextIO | None = open(str(path) + TS_SUFFIX, "a", encoding="ascii", opener=_nofollow)  # noqa: SIM115
        except OSError:
            self.times = None
        self.limit = limit
        self.saved = 0  # bytes of both files
        self.lines = 0  # lines written so far (the next record's LINE)
        self.last: float | None = None  # the time of the last record
        self.capped = False

    def write(self, text: str) -> None:
        with self.lock:
            if self.capped or not text:
                return
            size = len(text.encode("utf-8", errors="replace"))
            now = time.time()
            record = f"{self.lines} {now:.6f}\n" if self.times is not None and (
                self.last is None or now - self.last > TIME_RESOLUTION) else ""
            if self.saved + size + len(record) > self.limit:
                self._cap(now)
                return
            if record and self.times is not None:
                self.times.write(record)
                self.last = now
            self.text.write(text)
            self.saved += size + len(record)
            self.lines += text.count("\n")

    def _cap(self, now: float) -> None:
        """The last line saved: the cap, said where `trainspec logs` shows it."""
        self.capped = True
        if self.times is not None:
            self.times.write(f"{self.lines} {now:.6f}\n")
        self.text.write(CAPPED.format(limit=self.limit) + "\n")

    def flush(self) -> None:
        with self.lock:
            self.text.flush()
            if self.times is not None:
                self.times.flush()

    def close(self) -> None:
        with self.lock:
            self.text.close()
            if self.times is not None:
                self.times.close()


class LogReader:
    """One replica's saved log, read incrementally with the time of each line (None when unknown)."""

    def __init__(self, path: Path):
        self.name = path.stem
        self.text = open(path, encoding="utf-8", errors="replace", opener=_nofollow)  # noqa: SIM115 - closed by close()
        ts = Path(str(path) + TS_SUFFIX)
        self.times = open(ts, encoding="ascii", errors="replace", opener=_nofollow) if ts.exists() else None  # noqa: SIM115
        self.line = 0  # the number of the next line read
        self.time: float | None = None  # the time of the record in force
        self.next: tuple[int, float | None] | None = None  # the next record, read ahead
        self.per_line: bool | None = None  # a log from before issue 32: one time per line

    def _record(self) -> tuple[int, float | None] | None:
        assert self.times is not None
        where = self.times.tell()
        stamp = self.times.readline()
        if not stamp.endswith("\n"):  # not written yet (or a half-written record): read it next time
            self.times.seek(where)
            return None
        first, _, when = stamp.partition(" ")
        if self.per_line is None:
            self.per_line = not when
        try:
            return (int(first), float(when)) if when else (self.line, float(first))
        except ValueError:
            return (self.line, None)

    def _time(self) -> float | None:
        if self.times is None:
            return None
        if self.per_line is not False:  # one record per line (or not known yet)
            record = self._record()
            if self.per_line:
                return record[1] if record else None
            if record is None:
                return self.time
            self.next = record
        while True:
            if self.next is None:
                self.next = self._record()
            if self.next is None or self.next[0] > self.line:
                return self.time
            self.time = self.next[1]
            self.next = None

    def read(self) -> list[tuple[float | None, str]]:
        """The complete lines written since the last call."""
        out = []
        for line in self.text:
            if not line.endswith("\n"):  # a line being written: read it next time
                self.text.seek(self.text.tell() - len(line.encode("utf-8", errors="replace")))
                break
            out.append((self._time(), line[:-1]))
            self.line += 1
        return out

    def close(self) -> None:
        self.text.close()
        if self.times:
            self.times.close()
