"""Kubeflow Trainer v2 (trainer.kubeflow.org/v1alpha1): a TrainJob on its runtime becomes a JobSet.

What the Trainer controller creates is computed once, in compiler/runtimes.py (`expand`, with its
sources); this controller runs that JobSet as jobset.py says, the runtime's values copied with their
line:column so an error about them points into the runtime's file.
"""

from __future__ import annotations

from typing import Any

from ....compiler.kinds.trainjob import TRAINJOB
from ....compiler.runtimes import Runtime, RuntimeProblem, expand, how_to_give, lookup, ref_of, shipped_note
from .. import positions
from . import Created, Make, fail, kind_of
from . import jobset as jobset_controller


def controller(doc: Any) -> Make | None:
    """The kinds registry's controller of the `trainjob` entry (a runtime is run with its TrainJob)."""
    return _make if TRAINJOB.matches(doc) else None


def _make(doc: dict, source: str, docs: list[Any], runtimes: tuple[Runtime, ...]) -> Created:
    """The TrainJob on its runtime: one in the same file, given with --runtime, or one Trainer ships
    (compiler/runtimes.py `lookup`; said in a note)."""
    ref = (doc.get("spec") or {}).get("runtimeRef") or {}
    kind, name = ref_of(ref)
    label = f"{TRAINJOB.kind} {(doc.get('metadata') or {}).get('name')}"
    runtime = next((d for d in docs or [] if kind_of(d)[1] == kind
                    and (d.get("metadata") or {}).get("name") == name), None)
    found = lookup(runtimes, ref) if runtime is None else None
    if runtime is None:
        if found is None:
            raise fail(source, doc, ("spec", "runtimeRef", "name"),
                       f"{kind} {name!r} is not in the file" + (" nor in the --runtime files" if runtimes else ""),
                       hint=how_to_give(kind, name), label=label)
        runtime = found.data
    made = create(doc, runtime, source)
    if found is not None and found.shipped:
        made.notes.append(f"note: {source}: {label}: {shipped_note(found)}")
    return made


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
