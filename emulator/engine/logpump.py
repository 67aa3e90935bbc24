"""One container's output, streamed to the run's reporter and the replica's saved log — completely.

The daemon's exit event can arrive before the last lines, and a replica may print a
million lines just before it fails: the runner waits for the stream to end for as
long as it keeps moving (`drain`), and if it has to give up, says so with an explicit
truncation line in the reporter (the console) and the saved log (which `trainspec logs` shows).
Lines are split without re-scanning what was already buffered (no quadratic cost on
long lines); a line longer than MAX_LINE is emitted in pieces, each marked.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO

from ..adapters.base import ContainerEngine
from ..host.savedlogs import TimedLog
from .reporter import Reporter

MAX_LINE = 1 << 20          # bytes; longer lines are split (and marked), never dropped
IDLE_LIMIT = 10.0           # seconds without a byte after the exit before giving up on a stream
CONTINUED = " [trainspec: line continues]"


class LogPump(threading.Thread):
    def __init__(self, client: ContainerEngine, cid: str, label: str, reporter: Reporter,
                 log_file: TimedLog | TextIO | None, mask: Callable[[str], str]):
        super().__init__(name=f"logs-{label}", daemon=True)
        self.client = client
        self.cid = cid
        self.label = label
        self.reporter = reporter
        self.log_file = log_file
        self.mask = mask
        self.prefix = "" if ":" not in label else f"[{label.split(':', 1)[1]}] "
        self.lines = 0
        self.last_progress = time.monotonic()
        self.error: str | None = None        # why the stream ended early, if it did
        self.cut = False                     # a truncation line was written

    def run(self) -> None:
        pending: list[bytes] = []
        pending_len = 0
        try:
            for chunk in self.client.logs(self.cid):
                self.last_progress = time.monotonic()
                start = 0
                while True:
                    nl = chunk.find(b"\n", start)
                    if nl < 0:
                        break
                    piece = chunk[start:nl]
                    if pending:
                        piece = b"".join(pending) + piece
                        pending, pending_len = [], 0
                    self._emit(piece)
                    start = nl + 1
                if start < len(chunk):
                    pending.append(chunk[start:])
                    pending_len += len(chunk) - start
                    if pending_len >= MAX_LINE:
                        joined = b"".join(pending)
                        self._emit(joined[:MAX_LINE], CONTINUED)
                        rest = joined[MAX_LINE:]
                        pending, pending_len = ([rest], len(rest)) if rest else ([], 0)
                self._flush()
        except Exception as exc:  # noqa: BLE001 - a removed container or a lost daemon ends the stream
            self.error = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        finally:
            if pending:
                self._emit(b"".join(pending))
            self._flush()

    def _emit(self, raw: bytes, suffix: str = "") -> None:
        text = self.mask(raw.decode("utf-8", errors="replace").rstrip("\r")) + suffix
        self.lines += 1
        self.reporter.log(self.label, text)
        if self.log_file:
            try:
                self.log_file.write(self.prefix + text + "\n")
            except (OSError, ValueError):
                pass

    def _flush(self) -> None:
        if self.log_file:
            try:
                self.log_file.flush()
            except (OSError, ValueError):
                pass

    def moving(self) -> bool:
        """Still streaming, and something arrived recently."""
        return self.is_alive() and time.monotonic() - self.last_progress < IDLE_LIMIT

    def drain(self, idle_limit: float = IDLE_LIMIT) -> None:
        """After the container exited: wait for the stream's end while it keeps moving; if it
        stops moving (or ended with an error), write an explicit truncation line."""
        while self.is_alive():
            self.join(0.5)
            if self.is_alive() and time.monotonic() - self.last_progress > idle_limit:
                break
        if self.is_alive():
            self.truncated(f"no output for {idle_limit:g}s after the container exited; later lines, if any, "
                           "are missing")
        elif self.error:
            self.truncated(f"the log stream ended early ({self.error}); later lines, if any, are missing")

    def truncated(self, why: str) -> None:
        if self.cut:
            return
        self.cut = True
        line = f"[trainspec: log of {self.label} cut short after {self.lines} lines: {why}]"
        self.reporter.log(self.label, line)
        if self.log_file:
            try:
                self.log_file.write(self.prefix + line + "\n")
                self.log_file.flush()
            except (OSError, ValueError):
                pass
