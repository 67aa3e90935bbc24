"""Kubernetes' own Job (batch/v1): an Indexed Job with its headless Service is an input kind too."""

from __future__ import annotations

from typing import Any

from . import OperatorKind, Readers, matching

API_VERSION = "batch/v1"
JOB = OperatorKind("Job", API_VERSION, "jobs")
KINDS: tuple[OperatorKind, ...] = (JOB,)
# Where its readers live (compiler/kinds/__init__.py: Readers).
READERS = Readers("trainspec.importer.batch:import_job",
                  "",
                  "trainspec.cluster.status:job_expected")


def matches(doc: Any) -> bool:
    return matching(KINDS, doc)
