"""A chart folder as the Helm engine may see it: a private copy of its own regular files.

A chart is often someone else's. Read in place, a symlink inside it (`files/token ->
~/.ssh/id_ed25519`, `templates/x.yaml -> /proc/self/environ`) would hand `.Files.Get`
or the template engine any file the user can read. So the folder is walked without
following links, and copied: regular files and folders as they are; a symlink only
when where it leads stays inside the chart folder (its content is copied); anything
else — a link out of the folder, a FIFO (which would hang the read), a socket, a
device — is refused, naming the entry (never its content). Sizes are bounded like a
spec's input.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from ...compiler.errors import UsageError

MAX_FILES = 10_000
MAX_BYTES = 50 * 1024 * 1024


def _inside(path: str, tree: str) -> bool:
    return path == tree or path.startswith(tree.rstrip("/") + "/")


@contextmanager
def confined_copy(chart: str) -> Iterator[str]:
    root = os.path.realpath(chart)
    tmp = tempfile.mkdtemp(prefix="trainspec-chart-")
    dest = os.path.join(tmp, os.path.basename(root) or "chart")
    try:
        _copy(root, dest, chart)
        yield dest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _copy(root: str, dest: str, shown: str) -> None:
    files = total = 0
    stack = [("", dest)]
    os.mkdir(dest, 0o700)
    while stack:
        rel, out = stack.pop()
        src_dir = os.path.join(root, rel) if rel else root
        try:
            entries = sorted(os.scandir(src_dir), key=lambda e: e.name)
        except OSError as exc:
            raise UsageError(f"{shown}: cannot read {rel or '.'}: {exc.strerror}") from None
        for e in entries:
            here = f"{rel}/{e.name}" if rel else e.name
            files += 1
            if files > MAX_FILES:
                raise UsageError(f"{shown}: the chart folder holds more than {MAX_FILES} entries")
            st = e.stat(follow_symlinks=False)
            path = e.path
            if stat.S_ISLNK(st.st_mode):
                real = os.path.realpath(path)
                if not _inside(real, root):
                    raise UsageError(f"{shown}: {here} is a symlink that leads out of the chart folder; the "
                                     "emulator reads a chart's own files only (copy the file into the chart)")
                st = os.stat(real)
                path = real
            target = os.path.join(out, e.name)
            if stat.S_ISDIR(st.st_mode):
                if path != e.path:
                    raise UsageError(f"{shown}: {here} is a symlink to a folder; the emulator reads a chart's own "
                                     "files only, without links to folders")
                os.mkdir(target, 0o700)
                stack.append((here, target))
            elif stat.S_ISREG(st.st_mode):
                total += st.st_size
                if total > MAX_BYTES:
                    raise UsageError(f"{shown}: the chart's files are larger than {MAX_BYTES // (1024 * 1024)} MB")
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                with os.fdopen(fd, "rb") as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            else:
                raise UsageError(f"{shown}: {here} is not a regular file (a FIFO, socket or device); the emulator "
                                 "reads a chart's regular files only")
