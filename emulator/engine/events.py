"""The engine's event stream for one run (ContainerEngine.events): how the emulator sees exits and OOM kills."""

from __future__ import annotations

import contextlib
import threading

from ..adapters.base import ContainerEngine, EventStream, short


class Events(threading.Thread):
    """The daemon's event stream for this run's containers: how exits are seen."""

    def __init__(self, client: ContainerEngine, run_id: str, on_lost=None):
        super().__init__(name="events", daemon=True)
        self.client = client
        self.run_id = run_id
        self.on_lost = on_lost
        self.closing = False
        self.lock = threading.Lock()
        self.exits: dict[str, int] = {}
        self.oom: set[str] = set()
        self.waiters: dict[str, threading.Event] = {}
        self.ready = threading.Event()
        self.stream: EventStream | None = None

    def run(self) -> None:
        try:
            self.stream = self.client.events(self.run_id)
            self.ready.set()
            for ev in self.stream:
                cid = str(ev.get("id") or (ev.get("Actor") or {}).get("ID") or "")
                action = ev.get("Action") or ev.get("status")
                with self.lock:
                    if action == "oom":
                        self.oom.add(cid)
                    elif action == "die":
                        attrs = (ev.get("Actor") or {}).get("Attributes") or {}
                        self.exits[cid] = int(attrs.get("exitCode", -1))
                        w = self.waiters.get(cid)
                        if w:
                            w.set()
            lost = "the daemon closed its event stream"
        except Exception as exc:  # noqa: BLE001 - closed at shutdown; waiters also poll
            lost = short(exc)
        finally:
            self.ready.set()
        # The stream only ends when we close it, or when the daemon stops or restarts.
        if not self.closing and self.on_lost is not None:
            self.on_lost(lost)

    def waiter(self, cid: str) -> threading.Event:
        with self.lock:
            ev = self.waiters.setdefault(cid, threading.Event())
            if cid in self.exits:
                ev.set()
            return ev

    def exit_code(self, cid: str) -> int | None:
        with self.lock:
            return self.exits.get(cid)

    def close(self) -> None:
        self.closing = True
        with contextlib.suppress(Exception):  # closed already, or the daemon is gone
            if self.stream is not None:
                self.stream.close()
