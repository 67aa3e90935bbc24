"""OpenPAI job configs: the v1 JSON template and protocol v2 YAML.  No Kubernetes kind: a config is
known by its fields (docs/import.md)."""

from __future__ import annotations

from typing import Any

from . import OperatorKind, Readers

KINDS: tuple[OperatorKind, ...] = ()
# Where its readers live (compiler/kinds/__init__.py: Readers).
READERS = Readers("trainspec.importer.openpai:import_job",
                  "",
                  "")


def matches(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("kind") is None and "taskRoles" in doc \
        and ("jobName" in doc or "protocolVersion" in doc)
