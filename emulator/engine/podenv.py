"""A container's final environment, command and args, as the kubelet makes them."""

from __future__ import annotations

import math
import re

from ...compiler.kube import expand_env, expand_references
from ..model.job import Container, Replica

NODE_NAME = "trainspec-emulator"


def field_value(path: str, c: Container, r: Replica, namespace: str, ip: str, host_ip: str) -> str:
    if path.startswith("resource:"):
        res = path.split(":", 1)[1]
        if res.endswith("cpu"):
            return str(math.ceil(c.cpu)) if c.cpu is not None else "0"
        if res.endswith("memory"):
            return str(c.memory or 0)
        return "0"
    m = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
    if m:
        return r.labels.get(m.group(2), "") if m.group(1) == "labels" else ""
    return {
        "metadata.name": r.name,
        "metadata.namespace": namespace,
        "metadata.uid": "",
        "status.podIP": ip,
        "status.podIPs": ip,
        "status.hostIP": host_ip,
        "spec.nodeName": NODE_NAME,
        "spec.serviceAccountName": "default",
    }.get(path, "")


def container_env(c: Container, r: Replica, namespace: str, ip: str = "", host_ip: str = "") -> dict[str, str]:
    pairs = []
    for e in c.env:
        value = field_value(e.field_path, c, r, namespace, ip, host_ip) if e.field_path else e.value
        pairs.append((e.name, value, e.literal))
    return expand_env(pairs)


def command_and_args(c: Container, env: dict[str, str]) -> tuple[list[str] | None, list[str] | None]:
    """command/args see the container's whole final environment (the kubelet's expansion)."""
    if not c.expand:
        return c.command, c.args
    return _expand(c.command, env), _expand(c.args, env)


def _expand(words: list[str] | None, env: dict[str, str]) -> list[str] | None:
    return None if words is None else [expand_references(w, env) for w in words]


def check_expansions(replicas: list[Replica], namespace: str, source: str) -> None:
    """Every container's `$(VAR)` expansion made once while the file is read, before anything starts:
    past compiler/limits.py's MAX_EXPANSION_BYTES it is a UsageError naming the container (exit 2)."""
    from ...compiler.limits import BoundExceeded

    for r in replicas:
        for c in [*r.init_containers, r.main]:
            try:
                command_and_args(c, container_env(c, r, namespace, "255.255.255.255", "255.255.255.255"))
            except BoundExceeded as exc:
                raise BoundExceeded(f"{r.display} ({c.name}): {exc.what}", exc.limit, exc.hint,
                                    where=source) from None
