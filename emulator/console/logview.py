"""`trainspec logs`: replicas interleaved by time, `--tail`, `--since`, `-t`, over the saved
logs (host/savedlogs.py reads them, with the time of every line)."""

from __future__ import annotations

import heapq
import re
import time
from collections import deque
from datetime import datetime, timezone

from ...compiler.errors import UsageError


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
