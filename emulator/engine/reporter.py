"""How a run tells what happens: the interface the engine reports through.

The engine (run.py, pods.py, restarts.py, preflight.py, the log pumps) owns this interface;
the console (console/table.py's Console: prefixes, colours, the live table) implements it
and sits above the engine, so the engine never imports the way things are shown. The CLI
(commands.py) makes the console and hands it to the run.
"""

from __future__ import annotations

from typing import Protocol

from ..model.status import Row


class Reporter(Protocol):
    # True while a table is redrawn in place (a terminal): the run redraws it every second (AGE
    # moves), and transitions are not printed as lines.
    live: bool

    def note(self, text: str) -> None: ...                    # what trainspec itself says
    def transition(self, name: str, text: str) -> None: ...   # a replica changed phase or readiness
    def update(self, rows: list[Row]) -> None: ...            # every replica's status, now
    def log(self, name: str, line: str) -> None: ...          # one line a container printed
    def finish(self) -> None: ...                             # no more redrawing: what is shown stays
    def summary(self, head: str, rows: list[Row], logs: str) -> None: ...  # the run's outcome, last
