"""Kubeflow's operator jobs: the training operator's (v1) per-framework jobs and the mpi-operator's
MPIJob (v2beta1), as targets/kubeflow writes them and the importer and the emulator read them."""

from __future__ import annotations

from typing import Any

from . import OperatorKind, Readers, matching

GROUP = "kubeflow.org"
KUBEFLOW_V1 = f"{GROUP}/v1"
MPI_V2BETA1 = f"{GROUP}/v2beta1"
KUBEFLOW_PROVIDER = "the Kubeflow training operator"

TF_JOB = OperatorKind("TFJob", KUBEFLOW_V1, "tfjobs", "tensorflow", "tfReplicaSpecs",
                      (("chief", "Chief"), ("ps", "PS"), ("worker", "Worker"), ("evaluator", "Evaluator")),
                      KUBEFLOW_PROVIDER, instead="jobset")
PYTORCH_JOB = OperatorKind("PyTorchJob", KUBEFLOW_V1, "pytorchjobs", "pytorch", "pytorchReplicaSpecs",
                           (("master", "Master"), ("worker", "Worker")), KUBEFLOW_PROVIDER, instead="jobset")
MX_JOB = OperatorKind("MXJob", KUBEFLOW_V1, "mxjobs", "mxnet", "mxReplicaSpecs",
                      (("scheduler", "Scheduler"), ("server", "Server"), ("worker", "Worker")), KUBEFLOW_PROVIDER,
                      instead="k8s")
XGBOOST_JOB = OperatorKind("XGBoostJob", KUBEFLOW_V1, "xgboostjobs", "xgboost", "xgbReplicaSpecs",
                           (("master", "Master"), ("worker", "Worker")), KUBEFLOW_PROVIDER, instead="jobset")
PADDLE_JOB = OperatorKind("PaddleJob", KUBEFLOW_V1, "paddlejobs", "paddle", "paddleReplicaSpecs",
                          (("master", "Master"), ("worker", "Worker")), KUBEFLOW_PROVIDER, instead="jobset")
JAX_JOB = OperatorKind("JAXJob", KUBEFLOW_V1, "jaxjobs", "jax", "jaxReplicaSpecs", (("worker", "Worker"),),
                       KUBEFLOW_PROVIDER, instead="jobset")
MPI_JOB = OperatorKind("MPIJob", MPI_V2BETA1, "mpijobs", "mpi", "mpiReplicaSpecs",
                       (("launcher", "Launcher"), ("worker", "Worker")), "the mpi-operator (v2beta1)",
                       instead="k8s")
# The training operator's v1 jobs, then the mpi-operator's.
TRAINING_OPERATOR_JOBS: tuple[OperatorKind, ...] = (TF_JOB, PYTORCH_JOB, MX_JOB, XGBOOST_JOB, PADDLE_JOB, JAX_JOB)
KINDS: tuple[OperatorKind, ...] = (*TRAINING_OPERATOR_JOBS, MPI_JOB)
# Where its readers live (compiler/kinds/__init__.py: Readers).
READERS = Readers("trainspec.importer.kubeflow:import_job",
                  "trainspec.emulator.readers.controllers.kubeflow:controller",
                  "trainspec.cluster.status:kubeflow_expected")
KUBEFLOW_JOBS = KINDS
KUBEFLOW_KIND_NAMES: tuple[str, ...] = tuple(k.kind for k in KINDS)
BY_KIND: dict[str, OperatorKind] = {k.kind: k for k in KINDS}
BY_FRAMEWORK: dict[str, OperatorKind] = {k.framework: k for k in KINDS}


def matches(doc: Any) -> bool:
    return matching(KINDS, doc)
