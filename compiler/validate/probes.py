"""Spec v1 validation of what a role's container carries besides its command: probes and lifecycle hooks."""

from __future__ import annotations

from ..fields import MAPPINGS
from ..kube import DNS1123_SUBDOMAIN
from ..kube_rules import port_name_problem
from ..model import Handler, Lifecycle, Probe, Probes
from ..reader import Reader

# Keys, enums and bounds from the field table (compiler/fields.py).
PROBE = MAPPINGS["probe"]
HOOK = MAPPINGS["hook"]
PROBE_FIELDS = PROBE.names
HANDLER_KINDS = PROBE.exactly_one


def opt_int(r: Reader, body: dict, key: str, path: tuple, low: int | None, high: int | None) -> int | None:
    return r.integer(body[key], path + (key,), low, high) if body.get(key) is not None else None


def handler(r: Reader, value, path: tuple, kinds=HANDLER_KINDS, extra=()) -> tuple[Handler, dict] | None:
    body = r.mapping(value, path, kinds + extra)
    if body is None:
        return None
    present = [k for k in kinds if k in body]
    if len(present) != 1:
        r.error(path, f"has {len(present)} actions", "exactly one of " + ", ".join(kinds))
        return None
    kind = present[0]
    kp = path + (kind,)
    if kind == "exec":
        command = r.string_list(body[kind], kp, example="[cat, /tmp/healthy]")
        if command == ():  # core validateExecAction: Required
            r.error(kp, "command: Required value", "a command, e.g. [cat, /tmp/healthy]")
        return (Handler(exec=command), body) if command else None
    action = MAPPINGS[kind]  # httpGet or tcpSocket
    fields = action.names
    spec = r.mapping(body[kind], kp, fields, required=action.required)
    if not spec or spec.get("port") is None:
        return None
    port = spec["port"]
    if isinstance(port, str):
        problem = port_name_problem(port)
        if problem:
            r.error(kp + ("port",), f"{port!r} is not a port name: {problem}", "a number 1-65535 or a port name "
                    "(1-15 lower-case letters, digits and '-', with a letter)")
            return None
    elif r.integer(port, kp + ("port",), 1, 65535) is None:
        return None
    cleaned = {"port": port}
    for key in ("path", "scheme") if kind == "httpGet" else ():
        if spec.get(key) is not None:
            text = r.string(spec[key], kp + (key,))
            if key == "scheme" and text is not None and text not in action.enum("scheme"):
                r.error(kp + (key,), f"{text!r} is not allowed", "HTTP or HTTPS")
                return None
            if key == "path" and text is not None and not _probe_path_ok(text):
                r.error(kp + (key,), f"{text!r} is not a URL path", "a path starting with / and without "
                        "spaces or control characters", "e.g. /healthz; the host goes in `host`")
                return None
            if text is not None:
                cleaned[key] = text
    if spec.get("host") is not None:
        host = r.string(spec["host"], kp + ("host",))
        if host is not None and not _probe_host_ok(host):
            r.error(kp + ("host",), f"{host!r} is not a host name or IP address",
                    "a DNS name (e.g. localhost, db.example.com) or an IPv4/IPv6 address",
                    "leave host out to probe the replica itself")
            return None
        if host is not None:
            cleaned["host"] = host
    return (Handler(http_get=cleaned) if kind == "httpGet" else Handler(tcp_socket=cleaned)), body


def probes(r: Reader, value, path: tuple) -> Probes:
    names = MAPPINGS["probes"].names
    body = r.mapping(value, path, names) or {}
    found = {}
    for key in names:
        if body.get(key) is None:
            continue
        kp = path + (key,)
        result = handler(r, body[key], kp, extra=tuple(n for n in PROBE_FIELDS if n not in HANDLER_KINDS))
        if result is None:
            continue
        action, raw = result
        numbers = {}
        for field_name in ("initialDelaySeconds", "periodSeconds", "timeoutSeconds", "successThreshold",
                           "failureThreshold"):
            numbers[field_name] = opt_int(r, raw, field_name, kp, *PROBE.bounds(field_name))
        if key in ("liveness", "startup") and numbers["successThreshold"] not in (None, 0, 1):  # 0 defaults to 1
            r.error(kp + ("successThreshold",), f"{numbers['successThreshold']} for a {key} probe", "1")
        found[key] = Probe(action, numbers["initialDelaySeconds"], numbers["periodSeconds"],
                           numbers["timeoutSeconds"], numbers["successThreshold"], numbers["failureThreshold"])
    return Probes(**found)


def lifecycle(r: Reader, value, path: tuple) -> Lifecycle | None:
    body = r.mapping(value, path, MAPPINGS["lifecycle"].names)
    if not body:
        return None
    hooks = {}
    for key, attr in (("postStart", "post_start"), ("preStop", "pre_stop")):
        if body.get(key) is not None:
            result = handler(r, body[key], path + (key,), kinds=HOOK.exactly_one)
            if result is not None:
                hooks[attr] = result[0]
    return Lifecycle(**hooks) if hooks else None


def _probe_host_ok(text: str) -> bool:
    """A probe host is put into a URL and a command line: only a DNS name or an IP address."""
    import ipaddress

    if len(text) <= 253 and DNS1123_SUBDOMAIN.match(text.lower()):
        return True
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _probe_path_ok(text: str) -> bool:
    # Starting with `/` keeps the path from continuing the URL's authority (`@evil.example/`).
    return text.startswith("/") and not any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in text)
