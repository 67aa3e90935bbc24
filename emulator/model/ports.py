"""Container ports and what is published on the host: the address and protocol asked for, nothing more.

A Kubernetes `hostPort` is published on its `hostIP` with its `protocol`; a compose `ports`
entry on the address it names (`0.0.0.0:18081:80`) and with its `/udp`. A port whose file names
no address is published on 127.0.0.1 only (`run --publish-all-interfaces`: every address, as
Docker and the kubelet do): a file someone else wrote does not open the machine to the network.
Ports without a host port are never published. Every field is checked when the input is read
(a number in range, a protocol Docker knows, an IP address), so a malformed one is an error
naming the field, not a crash at create.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, NamedTuple

from .errors import FieldError

PROTOCOLS = ("TCP", "UDP", "SCTP")


class Port(NamedTuple):
    container: int
    protocol: str = "TCP"
    host: int | None = None
    host_ip: str = ""          # "" : none named: the run's publish address (loopback unless the user asks)


class _At(NamedTuple):
    """Where a port entry is: `where` names it; `owner` is the list holding it and `index` its place,
    so an error names the field under that list (model/errors.py) for the reader to position."""

    where: str
    owner: Any = None
    position: int = 0

    def error(self, field: tuple, message: str, expected: str = "", hint: str = "") -> FieldError:
        at = (self.position, *field) if self.owner is not None else field
        return FieldError(message, where=self.where, node=self.owner, field=at, expected=expected, hint=hint)


def _number(value: Any, at: _At, field: tuple, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise at.error(field, f"{what} {value!r} is not a port number", "an integer 1..65535")
    return value


def _ip(value: Any, at: _At, field: tuple) -> str:
    if value in (None, ""):
        return ""
    try:
        return str(ipaddress.ip_address(str(value).strip("[]")))
    except ValueError:
        raise at.error(field, f"hostIP {value!r} is not an IP address") from None


def k8s_port(p: Any, where: str, owner: Any = None, index: int = 0) -> Port:
    """One entry of a container's `ports` (`owner[index]`). One without containerPort is refused, as the
    API server does ("Required value"): a `hostPort` alone would otherwise be dropped without a word."""
    at = _At(where, owner, index)
    if not isinstance(p, dict):
        raise at.error((), f"is {type(p).__name__}", "a mapping (containerPort, protocol, hostPort...)")
    if p.get("containerPort") is None:
        raise at.error(("containerPort",), "is missing", "an integer 1..65535 (the API server refuses a port without "
                       "it" + (f", so hostPort {p['hostPort']!r} cannot be published"
                               if p.get("hostPort") not in (None, 0) else "") + ")")
    cport = _number(p["containerPort"], at, ("containerPort",), "containerPort")
    proto = p.get("protocol", "TCP")
    if proto not in PROTOCOLS:
        raise at.error(("protocol",), f"protocol {proto!r} is not one of {', '.join(PROTOCOLS)}")
    host = _number(p["hostPort"], at, ("hostPort",), "hostPort") if p.get("hostPort") not in (None, 0) else None
    return Port(cport, proto, host, _ip(p.get("hostIP"), at, ("hostIP",)) if host else "")


_SHORT = re.compile(r"^(?:(?P<ip>\[[0-9a-fA-F:.]+\]|\d{1,3}(?:\.\d{1,3}){3}):)?(?:(?P<host>[^:/]*):)?(?P<cport>[^:/]+)"
                    r"(?:/(?P<proto>[a-zA-Z]+))?$")


def compose_port(p: Any, where: str, owner: Any = None, index: int = 0) -> Port:
    """A compose `ports` entry (`owner[index]`), short (`[IP:][HOST:]CONTAINER[/PROTO]`) or long syntax.
    Ranges (`8000-8010:8000-8010`) are refused: the emulator publishes ports one by one."""
    at = _At(where, owner, index)
    if isinstance(p, dict):
        target, published = p.get("target"), p.get("published")
        proto = str(p.get("protocol") or "tcp").upper()
        ip = p.get("host_ip")
    elif isinstance(p, (str, int)) and not isinstance(p, bool):
        m = _SHORT.match(str(p))
        if not m:
            raise at.error((), f"{p!r} is not a port mapping", "[IP:][HOST:]CONTAINER[/PROTOCOL]")
        target, published, ip = m.group("cport"), m.group("host"), m.group("ip")
        proto = (m.group("proto") or "tcp").upper()
    else:
        raise at.error((), f"{p!r} is not a port mapping", "a string or a mapping")
    if any("-" in str(v) for v in (target, published) if v is not None):
        raise at.error((), f"port ranges ({p!r}) are not supported by the emulator", hint="list the ports one by one")
    if proto not in PROTOCOLS:
        raise at.error((), f"protocol {proto.lower()!r} is not tcp, udp or sctp")
    cport = _number(_int(target, at), at, (), "container port")
    host = _number(_int(published, at), at, (), "published port") if published not in (None, "") else None
    return Port(cport, proto, host, _ip(ip, at, ()) if host else "")


def _int(value: Any, at: _At) -> Any:
    if isinstance(value, str) and value.isdigit():
        return int(value)
    if isinstance(value, int):
        return value
    raise at.error((), f"port {value!r} is not a number")


def bindings(ports: list[Port], default_address: str = "127.0.0.1") -> dict[str, tuple[str, int] | int]:
    """Docker's port_bindings for the published ones: "80/udp" -> ("127.0.0.1", 18081); a port whose file
    names no address is published on `default_address` ("": every address)."""
    out: dict[str, tuple[str, int] | int] = {}
    for p in ports:
        if p.host:
            key = f"{p.container}/{p.protocol.lower()}"
            address = p.host_ip or default_address
            out[key] = (address, p.host) if address else p.host
    return out
