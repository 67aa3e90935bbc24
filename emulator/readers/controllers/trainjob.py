"""Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1): a TrainJob on its runtime becomes a JobSet.

What the Trainer controller creates is computed once, in compiler/runtimes.py (`expand`, with its
sources); this controller runs that JobSet as jobset.py says, the runtime's values copied with their
line:column so an error about them points into the runtime's file.
"""

from __future__ import annotations

from ....compiler.runtimes import RuntimeProblem, expand
from .. import positions
from . import Created, fail
from . import jobset as jobset_controller


def create(tj: dict, runtime: dict, source: str) -> Created:
    try:
        made = expand(tj, runtime, positions.copy)
    except RuntimeProblem as exc:
        name = (runtime.get("metadata") or {}).get("name")
        raise fail(source, exc.node, exc.path, exc.message, expected=exc.expected,
                   label=f"{runtime.get('kind')} {name}") from None
    created = jobset_controller.create(made.jobset, source, framework="mpi" if made.mpi else None)
    created.objects += made.objects
    if made.ssh_secret is not None:
        created.ssh_secrets.append(made.ssh_secret)
    return created
