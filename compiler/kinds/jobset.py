"""JobSet (jobset.x-k8s.io/v1alpha2), as targets/jobset writes it and the importer, the emulator and
Trainer v2's runtimes read it."""

from __future__ import annotations

from typing import Any

from . import OperatorKind, Readers, matching

GROUP = "jobset.x-k8s.io"
API_VERSION = f"{GROUP}/v1alpha2"
JOBSET = OperatorKind("JobSet", API_VERSION, "jobsets", provider="JobSet (jobset.x-k8s.io)", instead="k8s")
KINDS: tuple[OperatorKind, ...] = (JOBSET,)
# Where its readers live (compiler/kinds/__init__.py: Readers).
READERS = Readers("trainspec.importer.jobset:import_job",
                  "trainspec.emulator.readers.controllers.jobset:controller",
                  "trainspec.cluster.status:jobset_expected")


def matches(doc: Any) -> bool:
    return matching(KINDS, doc)
