"""Kubeflow's operator jobs: the training operator's (v1) per-framework jobs and the mpi-operator's
MPIJob (v2beta1), as targets/kubeflow writes them and the importer and the emulator read them."""

from __future__ import annotations

from typing import Any

from . import OperatorKind, matching

GROUP = "kubeflow.org"
KUBEFLOW_V1 = f"{GROUP}/v1"
MPI_V2BETA1 = f"{GROUP}/v2beta1"
KUBEFLOW_PROVIDER = "the Kubeflow training operator"

KINDS: tuple[OperatorKind, ...] = (
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
    OperatorKind("MPIJob", MPI_V2BETA1, "mpijobs", "mpi", "mpiReplicaSpecs",
                 (("launcher", "Launcher"), ("worker", "Worker")), "the mpi-operator (v2beta1)"),
)
MPI_JOB = KINDS[-1]
KUBEFLOW_JOBS = KINDS
KUBEFLOW_KIND_NAMES: tuple[str, ...] = tuple(k.kind for k in KINDS)
BY_KIND: dict[str, OperatorKind] = {k.kind: k for k in KINDS}
BY_FRAMEWORK: dict[str, OperatorKind] = {k.framework: k for k in KINDS}


def matches(doc: Any) -> bool:
    return matching(KINDS, doc)
