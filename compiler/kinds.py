"""The operator job kinds, one row each: the one table the targets that write them, the importer
that reads them, the emulator's controllers and the cluster commands derive theirs from.

What differs per consumer stays with it (a controller's default port, the importer's aliases);
what the kind *is* (group/version, plural, framework, replica-specs field, replica types) is here.
"""

from __future__ import annotations

from typing import NamedTuple

KUBEFLOW_V1 = "kubeflow.org/v1"
KUBEFLOW_PROVIDER = "the Kubeflow training operator"


class OperatorKind(NamedTuple):
    kind: str
    api_version: str
    plural: str
    framework: str  # the spec's framework the kind runs
    replica_specs: str  # the field that holds {replica type: replica spec}
    replica_types: tuple[tuple[str, str], ...]  # (role, the operator's replica type), in the operator's order
    provider: str  # what installs the kind on a cluster

    @property
    def type_of_role(self) -> dict[str, str]:
        return dict(self.replica_types)


# Kubeflow's per-framework jobs (training-operator v1) and the mpi-operator's MPIJob (v2beta1).
KUBEFLOW_JOBS: tuple[OperatorKind, ...] = (
    OperatorKind("TFJob", KUBEFLOW_V1, "tfjobs", "tensorflow", "tfReplicaSpecs",
                 (("chief", "Chief"), ("ps", "PS"), ("worker", "Worker"), ("evaluator", "Evaluator")),
                 KUBEFLOW_PROVIDER),
    OperatorKind("PyTorchJob", KUBEFLOW_V1, "pytorchjobs", "pytorch", "pytorchReplicaSpecs",
                 (("master", "Master"), ("worker", "Worker")), KUBEFLOW_PROVIDER),
    OperatorKind("MXJob", KUBEFLOW_V1, "mxjobs", "mxnet", "mxReplicaSpecs",
                 (("scheduler", "Scheduler"), ("server", "Server"), ("worker", "Worker")), KUBEFLOW_PROVIDER),
    OperatorKind("XGBoostJob", KUBEFLOW_V1, "xgboostjobs", "xgboost", "xgbReplicaSpecs",
                 (("master", "Master"), ("worker", "Worker")), KUBEFLOW_PROVIDER),
    OperatorKind("PaddleJob", KUBEFLOW_V1, "paddlejobs", "paddle", "paddleReplicaSpecs",
                 (("master", "Master"), ("worker", "Worker")), KUBEFLOW_PROVIDER),
    OperatorKind("JAXJob", KUBEFLOW_V1, "jaxjobs", "jax", "jaxReplicaSpecs", (("worker", "Worker"),),
                 KUBEFLOW_PROVIDER),
    OperatorKind("MPIJob", "kubeflow.org/v2beta1", "mpijobs", "mpi", "mpiReplicaSpecs",
                 (("launcher", "Launcher"), ("worker", "Worker")), "the mpi-operator (v2beta1)"),
)
KUBEFLOW_KIND_NAMES: tuple[str, ...] = tuple(k.kind for k in KUBEFLOW_JOBS)
BY_KIND: dict[str, OperatorKind] = {k.kind: k for k in KUBEFLOW_JOBS}
BY_FRAMEWORK: dict[str, OperatorKind] = {k.framework: k for k in KUBEFLOW_JOBS}
