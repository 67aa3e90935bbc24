"""Volcano's Job (batch.volcano.sh/v1alpha1), as targets/volcano writes it and the importer and the
emulator read it."""

from __future__ import annotations

from typing import Any

from . import OperatorKind, matching

GROUP = "batch.volcano.sh"
API_VERSION = f"{GROUP}/v1alpha1"
JOB = OperatorKind("Job", API_VERSION, "jobs", provider="Volcano")
KINDS: tuple[OperatorKind, ...] = (JOB,)


def matches(doc: Any) -> bool:
    return matching(KINDS, doc)
