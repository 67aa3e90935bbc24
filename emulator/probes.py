"""Liveness, readiness and startup probes, with the kubelet's timing rules.

exec probes run inside the container; tcpSocket and httpGet probes connect
from this host to the replica's address on the run's bridge network, as the
kubelet connects from the node.
"""

from __future__ import annotations

import socket
import threading
import urllib.error
import urllib.request
from typing import Callable

from .runmodel import Probe


def check_once(probe: Probe, ip: str, ports: dict[str, int],
               run_exec: Callable[[list[str], float], tuple[int | None, str]]) -> tuple[bool, str]:
    if probe.kind == "exec":
        code, out = run_exec(probe.command or [], probe.timeout)
        if code == 0:
            return True, ""
        return False, f"exit code {code}" if code is not None else out
    port = probe.port
    if isinstance(port, str) and not port.isdigit():
        if port not in ports:
            return False, f"no port named {port!r}"
        port = ports[port]
    host = probe.host or ip
    if probe.kind == "tcp":
        try:
            with socket.create_connection((host, int(port)), timeout=probe.timeout):
                return True, ""
        except OSError as exc:
            return False, f"tcp {host}:{port}: {exc.strerror or exc}"
    url = f"{probe.scheme.lower()}://{host}:{port}{probe.path if probe.path.startswith('/') else '/' + probe.path}"
    req = urllib.request.Request(url, headers=dict(probe.headers))
    try:
        with urllib.request.urlopen(req, timeout=probe.timeout) as resp:  # noqa: S310 - our own container
            ok = 200 <= resp.status < 400
            return ok, "" if ok else f"HTTP {resp.status}"
    except urllib.error.HTTPError as exc:
        return 200 <= exc.code < 400, f"HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        return False, f"GET {url}: {exc}"


class ProbeLoop(threading.Thread):
    """Runs one probe until stopped; reports pass/fail transitions.

    on_result(passed: bool, detail) is called when the probe crosses its
    success or failure threshold (and for every failure past the threshold,
    so liveness acts at once).
    """

    def __init__(self, name: str, probe: Probe, check: Callable[[], tuple[bool, str]],
                 on_result: Callable[[bool, str], None], stop: threading.Event,
                 start_after: threading.Event | None = None):
        super().__init__(name=name, daemon=True)
        self.probe, self.check, self.on_result, self.stop = probe, check, on_result, stop
        self.start_after = start_after

    def run(self) -> None:
        p = self.probe
        if self.start_after is not None:
            while not self.start_after.wait(0.2):
                if self.stop.is_set():
                    return
        if self.stop.wait(p.initial_delay):
            return
        ok_run = fail_run = 0
        state: bool | None = None
        while not self.stop.is_set():
            ok, detail = self.check()
            if self.stop.is_set():
                return
            if ok:
                ok_run, fail_run = ok_run + 1, 0
                if ok_run >= p.success_threshold and state is not True:
                    state = True
                    self.on_result(True, "")
            else:
                ok_run, fail_run = 0, fail_run + 1
                if fail_run >= p.failure_threshold:
                    state = False
                    self.on_result(False, detail)
            if self.stop.wait(p.period):
                return
