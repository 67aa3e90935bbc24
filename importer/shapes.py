"""A manifest is checked as the API server checks it, once, before anything is mapped.

The same checks as every object a target writes (compiler/apiserver: the kind's OpenAPI definition or its
CRD's structural schema and rules, then the core rules on metadata and pod templates), so an import
refuses what a cluster refuses, in the server's words, at the field's line and column; the readers then
read data of the right types.  A `null` value means "unset" in Kubernetes, so null-valued keys are dropped
first.  An OpenPAI config (no Kubernetes object) is walked against its schema in compiler/kinds/openpai.py
by the same walk.
"""

from __future__ import annotations

from trainspec.compiler.errors import ErrorSink
from trainspec.compiler.loader import Document

ACCEPTED = "a value the API server accepts"


def _prune(value):
    if isinstance(value, dict):
        return {k: _prune(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_prune(v) for v in value]
    return value


def checked(doc: Document) -> dict:
    """The job's data with nulls dropped; SpecErrors listing every refusal, each at its field."""
    from trainspec.compiler import kinds
    from trainspec.compiler.apiserver import refusals

    data = _prune(doc.data)
    sink = ErrorSink(doc.file, doc.positions, doc.key_positions)
    if kinds.source_of(data) == "openpai":
        from trainspec.compiler.kinds.openpai import SCHEMA

        found = refusals(data, SCHEMA)
    else:
        found = refusals(data)
    for path, message in found:
        sink.add(path, message, ACCEPTED)
    sink.raise_if_any()
    return data
