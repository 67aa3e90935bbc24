"""Volcano's Job (batch.volcano.sh/v1alpha1), as targets/volcano writes it and the importer and the
emulator read it."""

from __future__ import annotations

from typing import Any

from . import OperatorKind, Readers, matching

GROUP = "batch.volcano.sh"
API_VERSION = f"{GROUP}/v1alpha1"
JOB = OperatorKind("Job", API_VERSION, "jobs", provider="Volcano", instead="k8s")
KINDS: tuple[OperatorKind, ...] = (JOB,)
# Where its readers live (compiler/kinds/__init__.py: Readers).
READERS = Readers("trainspec.importer.volcano:import_job",
                  "trainspec.emulator.readers.controllers.volcano_job:controller",
                  "trainspec.cluster.status:volcano_expected")


def matches(doc: Any) -> bool:
    return matching(KINDS, doc)
