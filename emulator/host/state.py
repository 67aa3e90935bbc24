"""Run records on disk: `.trainspec/runs/<run-id>/` (state.json + one log per replica).

state.json never holds env values, so no secret reaches a saved file.
Also how a run's supervising process is identified, so `gc` can tell a live
run from what a killed CLI left behind.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path


def state_dir(explicit: str | None = None) -> Path:
    return Path(explicit or os.environ.get("TRAINSPEC_STATE_DIR") or ".trainspec").absolute()


def run_dir(state: Path, run_id: str) -> Path:
    return state / "runs" / run_id


def _start_time(pid: int) -> str | None:
    """The process's start time, or None when it is gone — or a zombie: a supervisor
    that exited but whose parent has not reaped it yet (a detached supervisor's parent
    is whatever adopted it, which may reap late or never) is not alive."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] in ("Z", "X"):  # field 3: state
            return None
        return fields[19]  # field 22: start time in clock ticks
    except (OSError, IndexError):
        return None


def supervisor_id(pid: int | None = None) -> str:
    """host:pid:start-time, unique even when pids are reused."""
    pid = pid or os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_time(pid) or 0}"


def supervisor_alive(ident: str) -> bool | None:
    """True/False when it can be told from here; None for another host."""
    try:
        host, pid, start = ident.rsplit(":", 2)
    except ValueError:
        return False
    if host != socket.gethostname():
        return None
    return _start_time(int(pid)) == start


def supervisor_pid(ident: str) -> int | None:
    try:
        return int(ident.rsplit(":", 2)[1])
    except (ValueError, IndexError):
        return None


def write_state(path: Path, data: dict) -> None:
    path.mkdir(parents=True, exist_ok=True)
    tmp = path / "state.json.tmp"
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True))
    os.replace(tmp, path / "state.json")


def read_state(path: Path) -> dict | None:
    try:
        return json.loads((path / "state.json").read_text())
    except (OSError, ValueError):
        return None


def find_runs(state: Path) -> list[dict]:
    """All recorded runs, newest first."""
    out = []
    runs = state / "runs"
    if runs.is_dir():
        for d in runs.iterdir():
            st = read_state(d)
            if st:
                st["_dir"] = str(d)
                out.append(st)
    out.sort(key=lambda s: s.get("started", 0), reverse=True)
    return out


def now() -> float:
    return time.time()
