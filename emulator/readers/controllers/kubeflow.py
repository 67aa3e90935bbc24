"""The controllers of Kubeflow's operator jobs (the kinds registry's `kubeflow` entry): the training
operator's v1 kinds (kubeflow_v1.py) and the mpi-operator's MPIJob v2beta1 (mpi_operator.py)."""

from __future__ import annotations

from typing import Any

from ....compiler.kinds.kubeflow import KUBEFLOW_V1, MPI_JOB
from . import Created, Make, kind_of, kubeflow_v1, mpi_operator


def controller(doc: Any) -> Make | None:
    api, kind = kind_of(doc)
    if api == KUBEFLOW_V1 and kind in kubeflow_v1.KINDS:
        return _v1
    if MPI_JOB.matches(doc) and api.startswith(f"{MPI_JOB.group}/v2"):
        return _mpi
    return None


def _v1(doc: dict, source: str, docs: list[Any], runtimes: tuple[Any, ...]) -> Created:
    return kubeflow_v1.create(doc, source)


def _mpi(doc: dict, source: str, docs: list[Any], runtimes: tuple[Any, ...]) -> Created:
    return mpi_operator.create(doc, source)
