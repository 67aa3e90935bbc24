"""Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1): the TrainJob and the runtimes it references.

`matches` is the TrainJob's: a runtime is read with the TrainJob that names it, never alone."""

from __future__ import annotations

from typing import Any

from . import OperatorKind, Readers, matching

GROUP = "trainer.kubeflow.org"
API_VERSION = f"{GROUP}/v1alpha1"
PROVIDER = "Kubeflow Trainer v2"
TRAINING_RUNTIME = OperatorKind("TrainingRuntime", API_VERSION, "trainingruntimes", provider=PROVIDER, instead="jobset")
CLUSTER_TRAINING_RUNTIME = OperatorKind("ClusterTrainingRuntime", API_VERSION, "clustertrainingruntimes",
                                        provider=PROVIDER, namespaced=False, instead="jobset")
TRAINJOB = OperatorKind("TrainJob", API_VERSION, "trainjobs", provider=PROVIDER, instead="jobset")
RUNTIMES: tuple[OperatorKind, ...] = (TRAINING_RUNTIME, CLUSTER_TRAINING_RUNTIME)
KINDS: tuple[OperatorKind, ...] = (*RUNTIMES, TRAINJOB)
# the labels a runtime's replicatedJobs carry (pkg/constants: LabelTrainJobAncestor; the runtime's framework)
ANCESTOR_LABEL = f"{GROUP}/trainjob-ancestor-step"
FRAMEWORK_LABEL = f"{GROUP}/framework"
# Where its readers live (compiler/kinds/__init__.py: Readers).
READERS = Readers("trainspec.importer.trainjob:import_job",
                  "trainspec.emulator.readers.controllers.trainjob:controller",
                  "trainspec.cluster.status:trainjob_expected")


def matches(doc: Any) -> bool:
    return matching((TRAINJOB,), doc)
