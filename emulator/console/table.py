"""What the user sees: log lines prefixed `worker-1 |` in a colour per replica,
a status table (kept live at the bottom of a terminal, printed as transitions
otherwise) and the summary at the end.

`Console` is how a run reports (engine/reporter.py's Reporter); the CLI (commands.py)
makes one with `job_console()` and hands it to the run."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from ...termsafe import neutralise
from ..model.job import JobModel
from ..model.masking import no_mask, secret_mask
from ..model.status import Row

_COLOURS = (36, 33, 35, 32, 34, 91, 96, 93, 95, 92, 94, 31)


def want_colour(stream: TextIO, choice: str | None) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def job_console(job: JobModel, stream: TextIO | None, colour: str | None, quiet: bool) -> Console:
    """The console of one run of `job`: a column and a colour for every replica (and init container,
    as `worker-0:setup`), and the job's secret values masked."""
    names = [r.display for r in job.replicas] + [f"{r.display}:{c.name}" for r in job.replicas
                                                 for c in r.init_containers]
    console = Console(names, stream, colour, quiet=quiet)
    console.mask = secret_mask(job)
    return console


class Console:
    def __init__(self, names: list[str], stream: TextIO | None = None, colour: str | None = None,
                 live: bool | None = None, quiet: bool = False):
        self.out = stream or sys.stdout
        self.colour = want_colour(self.out, colour)
        self.live = self.colour if live is None else live  # redraw the table only on a terminal
        self.quiet = quiet
        self.width = max([len(n) for n in names] + [4])
        self.colours = {n: _COLOURS[i % len(_COLOURS)] for i, n in enumerate(names)}
        self.lock = threading.Lock()
        self.rows: list[Row] = []
        self.drawn = 0
        self.mask: Callable[[str], str] = no_mask  # hides secret values in all it prints (model/masking.py)
        self.hinted: set[str] = set()

    def _paint(self, text: str, code: int) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour else text

    def prefix(self, name: str) -> str:
        base = name.split(":", 1)[0]
        return self._paint(f"{name:<{self.width}} |", self.colours.get(base, 37))

    # -- output ----------------------------------------------------------
    def _emit(self, text: str) -> None:
        text = self.mask(text)
        with self.lock:
            self._erase()
            self.out.write(text + "\n")
            self._draw()
            self.out.flush()

    def log(self, name: str, line: str) -> None:
        if not self.quiet:
            self._emit(f"{self.prefix(neutralise(name, False))} {neutralise(line, False)}")
        for key, (needle, hint) in HINTS.items():
            if needle in line and key not in self.hinted:
                self.hinted.add(key)
                self.note(f"{name.split(':', 1)[0]}: {hint}")

    def note(self, text: str) -> None:
        self._emit(self._paint(f"trainspec: {neutralise(text)}", 1))

    def transition(self, name: str, text: str) -> None:
        if not self.live:  # on a terminal the live table says it
            self._emit(self._paint(f"trainspec: {neutralise(name, False):<{self.width}} {neutralise(text)}", 2))

    def update(self, rows: list[Row]) -> None:
        with self.lock:
            self.rows = rows
            if self.live:
                self._erase()
                self._draw()
                self.out.flush()

    def _erase(self) -> None:
        if self.drawn:
            self.out.write(f"\x1b[{self.drawn}F\x1b[J")
            self.drawn = 0

    def _draw(self) -> None:
        if self.live and self.rows:
            cols, lines = terminal_size(self.out)
            # At most half the terminal (at least 3 rows): the log lines keep the rest. A line wider
            # than the terminal would wrap and break the erase count, so every line is cut to fit.
            text = self.table(self.rows, limit=max(3, lines // 2), width=cols - 1)
            self.out.write(text + "\n")
            self.drawn = text.count("\n") + 1

    def finish(self) -> None:
        """Stop redrawing: what is on screen stays."""
        with self.lock:
            self._erase()
            self.live = False

    def summary(self, head: str, rows: list[Row], logs: str) -> None:
        """The run's last words: what happened, the final table (no AGE), where the logs are."""
        text = self.mask(f"{neutralise(head)}\n{self.table(rows, age=False)}\nlogs: {neutralise(logs)}/")
        with self.lock:
            self.out.write(text + "\n")
            self.out.flush()

    # -- formatting ------------------------------------------------------
    def table(self, rows: list[Row], age: bool = True, limit: int | None = None, width: int | None = None) -> str:
        """AGE is the time in the current status (live view only). `limit`: at most that many
        lines; the replicas that need attention (failed, restarting, pending) are kept first and
        the rest are summed up in a last line. `width`: lines cut to that many characters."""
        if limit is not None and len(rows) + 1 > limit:
            rows, hidden = _clip(rows, max(limit - 2, 1))
        else:
            hidden = []
        head = ["REPLICA", "STATUS", "READY", "RESTARTS", "EXIT", "AGE", "DETAIL"]
        now = time.time()
        body = [[neutralise(r.name, False), neutralise(r.phase, False), "yes" if r.ready else "-", str(r.restarts),
                 "-" if r.exit_code is None else str(r.exit_code), age_text(now - r.since), neutralise(r.reason, False)]
                for r in rows]
        if not age:
            head = head[:5] + head[6:]
            body = [b[:5] + b[6:] for b in body]
        widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in [head, *body]]
        if hidden:
            counts: dict[str, int] = {}
            for r in hidden:
                counts[r.phase] = counts.get(r.phase, 0) + 1
            lines.append(f"... {len(hidden)} more: " + ", ".join(f"{n} {phase}" for phase, n in counts.items()))
        if width is not None and width > 0:
            lines = [line[:width] for line in lines]
        return self.mask("\n".join(lines))


_ATTENTION = ("Failed", "Terminated", "Pending", "Init")


def _clip(rows: list[Row], keep: int) -> tuple[list[Row], list[Row]]:
    """The `keep` rows to show (those that need attention first, then in order), in their
    original order, and the rest."""
    ranked = sorted(range(len(rows)), key=lambda i: (rows[i].phase not in _ATTENTION and rows[i].restarts == 0, i))
    shown = sorted(ranked[:keep])
    return [rows[i] for i in shown], [rows[i] for i in sorted(ranked[keep:])]


def terminal_size(stream: TextIO) -> tuple[int, int]:
    """(columns, lines) of the terminal `stream` writes to; $COLUMNS/$LINES win (as in
    shutil.get_terminal_size), 80x24 when it cannot be told."""
    import shutil

    try:
        size = os.get_terminal_size(stream.fileno())
        cols, lines = size.columns, size.lines
    except (AttributeError, OSError, ValueError):
        cols, lines = shutil.get_terminal_size((80, 24))
    for name in ("COLUMNS", "LINES"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            cols, lines = (int(value), lines) if name == "COLUMNS" else (cols, int(value))
    return cols or 80, lines or 24


# Lines a replica prints that a cluster would show too, and what to do about them (once per run).
HINTS = {
    "strictmodes": (
        "Authentication refused: bad ownership or modes for directory",
        "sshd refused the MPI keys: the Secret volume's folder is world-writable (drwxrwxrwt), as the kubelet "
        "makes it on a cluster, and this image's sshd keeps the default `StrictModes yes`, so the job fails "
        "there too; set `StrictModes no` in the image's sshd_config (mpi-operator's images do), or mount the "
        "keys elsewhere (MPIJob sshAuthMountPath) and copy them into a 0700 ~/.ssh before sshd starts "
        "(defaultMode changes the files' modes, not the folder's)"),
}


def age_text(seconds: float) -> str:
    s = int(max(seconds, 0))
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"
