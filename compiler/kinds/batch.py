"""Kubernetes' own Job (batch/v1): an Indexed Job with its headless Service is an input kind too."""

from __future__ import annotations

from typing import Any

from . import OperatorKind, matching

API_VERSION = "batch/v1"
JOB = OperatorKind("Job", API_VERSION, "jobs")
KINDS: tuple[OperatorKind, ...] = (JOB,)


def matches(doc: Any) -> bool:
    return matching(KINDS, doc)
