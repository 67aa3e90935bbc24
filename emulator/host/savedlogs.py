"""A replica's saved log under .trainspec/runs/<run-id>/: the text and the time of every line.

The log stays plain text (`<replica>.log`, for people and `grep`); the time each line
arrived is kept beside it, one line per log line, in `<replica>.log.ts` (seconds since
the epoch). Logs saved without it (older runs) read with no times. The writer (the
engine's log pumps) and the reader (`trainspec logs`) are both here: one file format.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TextIO

TS_SUFFIX = ".ts"


def _nofollow(path: str, flags: int) -> int:
    """open()'s opener: a saved log is never reached through a link (ownfs.py)."""
    return os.open(path, flags | os.O_NOFOLLOW, 0o600)


class TimedLog:
    """The writer a replica's log pumps share: each line to `<replica>.log`, its time to
    `<replica>.log.ts`; one lock, so the two files stay line for line."""

    def __init__(self, path: Path):
        self.lock = threading.Lock()
        self.text: TextIO = open(path, "a", encoding="utf-8", opener=_nofollow)  # noqa: SIM115 - closed by close()
        try:
            self.times: TextIO | None = open(str(path) + TS_SUFFIX, "a", encoding="ascii", opener=_nofollow)  # noqa: SIM115
        except OSError:
            self.times = None

    def write(self, text: str) -> None:
        with self.lock:
            self.text.write(text)
            if self.times is not None:
                self.times.write(f"{time.time():.6f}\n" * text.count("\n"))

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

    def read(self) -> list[tuple[float | None, str]]:
        """The complete lines written since the last call."""
        out = []
        for line in self.text:
            if not line.endswith("\n"):  # a line being written: read it next time
                self.text.seek(self.text.tell() - len(line.encode("utf-8", errors="replace")))
                break
            stamp = self.times.readline() if self.times else ""
            try:
                t: float | None = float(stamp)
            except ValueError:
                t = None
            out.append((t, line[:-1]))
        return out

    def close(self) -> None:
        self.text.close()
        if self.times:
            self.times.close()
