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
from collections import deque
from collections.abc import Callable
from typing import TextIO

from ..adapters.base import ContainerEngine
from ..host.savedlogs import TimedLog
from .reporter import Reporter

MAX_LINE = 1 << 20          # bytes; longer lines are split (and marked), never dropped
IDLE_LIMIT = 10.0           # seconds without a byte after the exit before giving up on a stream
CONTINUED = " [trainspec: line continues]"
TAIL = 1000                 # lines of the log read at once after the stream, to find what it left out
KEPT = 8 << 20              # bytes: the end of the stream kept to lay that read over


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
        self.recent: deque[bytes] = deque()  # the stream's last chunks (KEPT bytes and one chunk at most)
        self.recent_size = 0
        self.trimmed = False  # the stream's start is no longer kept

    def run(self) -> None:
        pending: list[bytes] = []
        pending_len = 0
        try:
            for chunk in self.client.logs(self.cid):
                self.last_progress = time.monotonic()
                self._keep(chunk)
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
        else:
            self._catch_up()

    def _keep(self, chunk: bytes) -> None:
        self.recent.append(chunk)
        self.recent_size += len(chunk)
        while len(self.recent) > 1 and self.recent_size - len(self.recent[0]) >= KEPT:
            self.recent_size -= len(self.recent.popleft())
            self.trimmed = True

    def _catch_up(self) -> None:
        """Docker's followed stream can end before the last lines a container wrote as it exited (seen after a
        burst of 20,000 lines: the last line never came, and no error said so).  The log read at once, after
        the exit, has them: its last TAIL lines are laid over the end of the stream, byte for byte, and what
        follows the overlap is emitted now.  No overlap within what was kept is said, never guessed."""
        try:
            data = self.client.log_tail(self.cid, TAIL)
        except Exception:  # noqa: BLE001 - a removed container or a lost daemon: nothing more to read
            return
        streamed = b"".join(self.recent)
        if not data or streamed.endswith(data):
            return  # the usual case: the stream had it all
        cut = len(data)
        while cut > 0:  # the fewest missing lines first: cut the read after each of its newlines, from the end
            cut = data.rfind(b"\n", 0, cut - 1) + 1 if cut > 1 else 0
            head = data[:cut]
            if len(head) <= len(streamed) and streamed.endswith(head) and (head or not streamed) \
                    or self.trimmed and len(head) > len(streamed) and head.endswith(streamed):
                break
        if cut == 0 and streamed:
            self.truncated(f"the log stream ended before the last lines, and more than {TAIL} are missing")
            return
        for raw in data[cut:].split(b"\n")[:-1] if data.endswith(b"\n") else data[cut:].split(b"\n"):
            self._emit(raw)

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
