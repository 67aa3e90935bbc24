"""Run records on disk: `.trainspec/runs/<run-id>/` (state.json + one log per replica).

state.json never holds env values, so no secret reaches a saved file. It is written
and read through ownfs.py: never through a link, signed with this user's record key, so a
record a repository committed (or a malformed one) is refused, never trusted or crashed on.
Also how a run's supervising process is identified, so `gc` can tell a live
run from what a killed CLI left behind.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

from .ownfs import Untrusted, own_dir, read_own_file, run_folders, sign, verify, write_own_file


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


def make_run_dir(state: Path, run_id: str) -> Path:
    """The run's folder, made now under the state folder, never through a link."""
    return own_dir(state, "runs", run_id)


def write_state(path: Path, data: dict) -> None:
    """`path` is a run folder (run_dir): state.json there, signed, never through a link."""
    write_own_file(path.parent.parent, ("runs", path.name), "state.json", sign(data))


def load_state(path: Path) -> dict | None:
    """A run folder's record: None when there is none; Untrusted when trainspec did not write it
    (a link on the way, no or a wrong signature, not a record's shape)."""
    try:
        raw = read_own_file(path.parent.parent, ("runs", path.name), "state.json")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Untrusted(f"{path / 'state.json'} cannot be read ({exc.strerror})") from None
    data = verify(raw, str(path / "state.json"))
    return _checked(data, path)


def _checked(data: dict, path: Path) -> dict:
    """The fields ps/logs/down/gc read, of the types they expect (a record of ours has them)."""
    kinds = {"run_id": str, "job": str, "started": (int, float), "supervisor": str, "replicas": list}
    for key, kind in kinds.items():
        if not isinstance(data.get(key), kind):  # type: ignore[arg-type]
            raise Untrusted(f"{path / 'state.json'}: {key} is missing or not a {getattr(kind, '__name__', 'number')}")
    if data["run_id"] != path.name:
        raise Untrusted(f"{path / 'state.json'} names run {data['run_id']!r}, not its folder's {path.name!r}")
    for r in data["replicas"]:
        if not isinstance(r, dict) or not isinstance(r.get("display"), str) or not isinstance(r.get("phase"), str):
            raise Untrusted(f"{path / 'state.json'}: a replica entry is not a record's shape")
    return data


def read_state(path: Path) -> dict | None:
    """A run folder's record, or None when there is none or it is not trainspec's (load_state says why)."""
    try:
        return load_state(path)
    except Untrusted:
        return None


def find_runs(state: Path, refused: dict[str, str] | None = None) -> list[dict]:
    """All recorded runs trainspec made, newest first; the others go to `refused` (folder name -> why;
    FOLDER: the state folder or its `runs` itself)."""
    out: list[dict] = []
    for d in run_folders(state, refused):
        try:
            st = load_state(d)
        except Untrusted as exc:
            if refused is not None:
                refused[d.name] = str(exc)
            continue
        if st:
            st["_dir"] = str(d)
            out.append(st)
    out.sort(key=lambda s: s.get("started", 0), reverse=True)
    return out


def now() -> float:
    return time.time()
