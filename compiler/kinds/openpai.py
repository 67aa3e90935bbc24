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

# The config's fields the importer reads, as a CRD's schema would write them, so they are checked by the same
# walk as every Kubernetes kind (compiler/apiserver/crd.py check_document); taskRoles are read field by field
# by the importer, which reports each wrong one at its line.
_STRING, _INTEGER, _OBJECT = {"type": "string"}, {"type": "integer"}, {"type": "object",
                                                                        "x-kubernetes-preserve-unknown-fields": True}
SCHEMA: dict = {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {
    "jobName": _STRING, "name": _STRING, "image": _STRING, "retryCount": _INTEGER, "jobRetryCount": _INTEGER,
    "prerequisites": {"type": "array", "items": _OBJECT}, "parameters": _OBJECT, "defaults": _OBJECT}}
