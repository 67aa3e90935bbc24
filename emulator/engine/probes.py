"""Liveness, readiness and startup probes, with the kubelet's timing rules.

exec probes run inside the container. tcpSocket and httpGet probes reach only
what the replica itself can reach: a probe of the replica's own address (the
default: no `host`) connects to that address on the run's network — the
connection ends in the replica's network namespace, at its own socket; a probe
with any other `host` (another address, a name, loopback) runs *inside* the
replica's network namespace (a small python3 program exec'd in the container,
with the host, port and path as arguments — never pasted into a shell), so an
--offline run's probe cannot reach the internet, and `127.0.0.1` means the
replica's loopback, not this machine's.
"""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Callable

from ..model.job import Probe


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
    if port is None:  # the readers refuse a tcpSocket or httpGet without a port, as the API server does
        return False, "no port"
    host = probe.host or ip
    if host != ip:
        return _inside(probe, host, int(port), run_exec)
    if probe.kind == "tcp":
        try:
            with socket.create_connection((host, int(port)), timeout=probe.timeout):
                return True, ""
        except OSError as exc:
            return False, f"tcp {host}:{port}: {exc.strerror or exc}"
    url = f"{probe.scheme.lower()}://{host}:{port}{probe.path if probe.path.startswith('/') else '/' + probe.path}"
    req = urllib.request.Request(url, headers=dict(probe.headers))
    try:
        with urllib.request.urlopen(req, timeout=probe.timeout) as resp:
            ok = 200 <= resp.status < 400
            return ok, "" if ok else f"HTTP {resp.status}"
    except urllib.error.HTTPError as exc:
        return 200 <= exc.code < 400, f"HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        return False, f"GET {url}: {exc}"


# Run in the replica's network namespace: argv = kind host port timeout url headers-json.
_PROBE_PY = """
import json, socket, ssl, sys, urllib.error, urllib.request
kind, host, port, timeout, url, headers = sys.argv[1:7]
try:
    if kind == "tcp":
        socket.create_connection((host, int(port)), timeout=float(timeout)).close()
        sys.exit(0)
    req = urllib.request.Request(url, headers=dict(json.loads(headers)))
    ctx = ssl._create_unverified_context()
    try:
        code = urllib.request.urlopen(req, timeout=float(timeout), context=ctx).status
    except urllib.error.HTTPError as exc:
        code = exc.code
    print("HTTP %d" % code)
    sys.exit(0 if 200 <= code < 400 else 1)
except Exception as exc:
    print("%s %s:%s: %s" % (kind, host, port, exc))
    sys.exit(1)
"""


def _inside(probe: Probe, host: str, port: int,
            run_exec: Callable[[list[str], float], tuple[int | None, str]]) -> tuple[bool, str]:
    path = probe.path if probe.path.startswith("/") else "/" + probe.path
    hostpart = f"[{host}]" if ":" in host else host
    url = f"{probe.scheme.lower()}://{hostpart}:{port}{path}"
    code, out = run_exec(["python3", "-c", _PROBE_PY, probe.kind, host, str(port), str(probe.timeout), url,
                          json.dumps(probe.headers)], probe.timeout + 5)
    if code == 0:
        return True, ""
    if code in (126, 127) or (code is None and "executable file not found" in out):
        if probe.kind == "tcp":  # no python3 in the image: bash's /dev/tcp, host and port as arguments
            code, out = run_exec(["bash", "-c", 'exec 3<>"/dev/tcp/$1/$2"', "probe", host, str(port)],
                                 probe.timeout + 5)
            if code == 0:
                return True, ""
            if code not in (126, 127) and not (code is None and "executable file not found" in out):
                return False, f"tcp {host}:{port}: connection failed (in the replica's network)"
        return False, (f"a {probe.kind} probe of {host} runs in the replica's network namespace and needs python3 "
                       f"{'or bash ' if probe.kind == 'tcp' else ''}in the image")
    return False, (out.strip().splitlines() or [f"exit code {code}"])[-1][:200] + " (in the replica's network)"


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
