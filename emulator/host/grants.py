"""Host paths the user named on the command line: the only ones a container may see.

A spec, a compiled file, a compose file or a chart is often someone else's (a pull
request, a colleague's chart): whatever host path it asks for (a hostPath volume, a
compose bind) reaches a container only when the user named that path, or a folder
above it, on the command line — `--mount-host PATH[:rw]`, or `--claim NAME=PATH[:rw]`
for a persistentVolumeClaim — and it is read-only unless the user wrote `:rw` (a file
cannot make a grant read-write by leaving out `readOnly`). The denylist of system and
credential folders (hostpaths.py) still applies on top, and every mounted folder is
searched (a bounded walk) for unix sockets and device nodes, which would hand a
container a host service (ssh-agent, X11, the Docker daemon) or a device.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from ...compiler.errors import UsageError

OPTION = "--mount-host"
# How many entries a mounted folder's walk looks at before giving up (a refusal, never a guess):
# a data folder of a few thousand files is walked in well under a second.
WALK_LIMIT = 100_000


@dataclass(frozen=True)
class Grant:
    path: str          # as the user wrote it (for messages)
    real: str          # its real path (symlinks resolved) when the grant was read
    rw: bool


def split_mode(value: str, option: str) -> tuple[str, bool]:
    """`PATH`, `PATH:ro` or `PATH:rw` → (PATH, read-write?)."""
    if "\0" in value:
        raise UsageError(f"{option}: the path holds a NUL byte")
    path, rw = value, False
    for suffix, mode in ((":rw", True), (":ro", False)):
        if value.endswith(suffix):
            path, rw = value[: -len(suffix)], mode
            break
    if not path:
        raise UsageError(f"{option} {value!r}: expected PATH, PATH:ro or PATH:rw")
    return path, rw


def parse_grants(values: list[str]) -> list[Grant]:
    out = []
    for value in values:
        path, rw = split_mode(value, OPTION)
        full = os.path.abspath(os.path.expanduser(path))
        out.append(Grant(path, os.path.realpath(full), rw))
    return out


def _inside(path: str, tree: str) -> bool:
    return path == tree or path.startswith(tree.rstrip("/") + "/")


def grant_for(source: str, grants: list[Grant]) -> Grant | None:
    """The grant covering `source` (judged by where it really leads), read-write ones first."""
    real = os.path.realpath(source)
    covering = [g for g in grants if _inside(real, g.real)]
    if not covering:
        return None
    return next((g for g in covering if g.rw), covering[0])


def not_granted(source: str, target: str, who: str) -> str:
    return (f"{who} mounts host path {source} at {target}, which you did not name on the command line: a file "
            f"never reaches the host by itself. Pass {OPTION} {source} (read-only) or {OPTION} {source}:rw "
            "to allow it")


_WALKED: dict[str, str | None] = {}


def special_files(real: str, limit: int = WALK_LIMIT) -> str | None:
    """Why the folder `real` may not be mounted: a unix socket or device node inside it (or
    too many entries to tell); None when there is none. Symlinks inside are not followed (a
    container resolves them in its own filesystem). Each folder is walked once per process."""
    if real in _WALKED:
        return _WALKED[real]
    why: str | None = None
    try:
        top = os.lstat(real)
    except OSError:
        return None
    if not stat.S_ISDIR(top.st_mode):
        why = _special(real, top.st_mode)
        _WALKED[real] = why
        return why
    seen = 0
    stack = [real]
    while stack and why is None:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            seen += 1
            if seen > limit:
                why = (f"it holds more than {limit} entries, too many to check for sockets and devices; name a "
                       "smaller folder (or pass --allow-host-path to skip this check)")
                break
            try:
                mode = e.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                stack.append(e.path)
                continue
            why = _special(e.path, mode)
            if why:
                break
    _WALKED[real] = why
    return why


def _special(path: str, mode: int) -> str | None:
    if stat.S_ISSOCK(mode):
        return f"{path} is a unix socket (a host service's control interface, e.g. ssh-agent or X11)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return f"{path} is a device node"
    return None
