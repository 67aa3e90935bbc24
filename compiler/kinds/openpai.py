"""OpenPAI job configs: the v1 JSON template and protocol v2 YAML.  No Kubernetes kind: a config is
known by its fields (docs/import.md)."""

from __future__ import annotations

from typing import Any

from . import OperatorKind

KINDS: tuple[OperatorKind, ...] = ()


def matches(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("kind") is None and "taskRoles" in doc \
        and ("jobName" in doc or "protocolVersion" in doc)
