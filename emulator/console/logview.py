"""Saved logs with the time of every line, and `trainspec logs`: replicas interleaved by
time, `--tail`, `--since`, `-t`.

A replica's saved log stays plain text (`<replica>.log`, for people and `grep`); the
time each line arrived is kept beside it, one line per log line, in `<replica>.log.ts`
(seconds since the epoch). Logs saved without it (older runs) are shown in file order.
"""

from __future__ import annotations

import heapq
import re
import threading
import time
from collections import deque
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from ...compiler.errors import UsageError

TS_SUFFIX = ".ts"


class TimedLog:
    """The writer a replica's log pumps share: each line to `<replica>.log`, its time to
    `<replica>.log.ts`; one lock, so the two files stay line for line."""

    def __init__(self, path: Path):
        self.lock = threading.Lock()
        self.text: TextIO = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()
        try:
            self.times: TextIO | None = open(str(path) + TS_SUFFIX, "a", encoding="ascii")  # noqa: SIM115
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
        self.text = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115 - closed by close()
        ts = Path(str(path) + TS_SUFFIX)
        self.times = open(ts, encoding="ascii", errors="replace") if ts.exists() else None  # noqa: SIM115

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


def parse_since(value: str | None, now: float | None = None) -> float | None:
    """`--since 10m` / `90s` / `1h30m` / `2026-11-23T14:00:00Z` -> seconds since the epoch."""
    if value is None:
        return None
    now = time.time() if now is None else now
    parts = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?", value.strip())
    if parts and any(parts.groups()):
        h, m, s = (float(g or 0) for g in parts.groups())
        return now - (h * 3600 + m * 60 + s)
    try:
        stamp = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--since {value!r}: expected a duration like 30s, 10m, 1h30m or a time like "
                         "2026-11-23T14:00:00Z") from None
    if stamp.tzinfo is None:
        stamp = stamp.astimezone()  # local time, as `docker logs --since` takes it
    return stamp.timestamp()


def stamp_text(t: float | None) -> str:
    if t is None:
        return "-" * 27
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def select(batches: dict[str, list[tuple[float | None, str]]], tail: int | None,
           since: float | None) -> list[tuple[float | None, str, str]]:
    """Every replica's lines from `since` on, the last `tail` of each, merged by time
    (a replica's own order is kept; lines without a time keep their place in their file)."""
    streams = []
    for name, lines in batches.items():
        kept = [(t, line) for t, line in lines if since is None or (t is not None and t >= since)]
        if tail is not None:
            kept = list(deque(kept, maxlen=tail)) if tail > 0 else []
        last = 0.0
        keyed = []
        for t, line in kept:
            last = t if t is not None else last  # a line without a time sorts with the one before it
            keyed.append((last, name, t, line))
        streams.append(keyed)
    return [(t, name, line) for _key, name, t, line in heapq.merge(*streams, key=lambda x: x[0])]
