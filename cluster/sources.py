"""`apply`'s inputs as jobs: specs (compiled in memory), compiled files, and chart folders (rendered)."""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from trainspec.compiler.errors import UsageError

from .plan import JOB_LABEL

DEFAULT_TARGET = "k8s"  # runs on any cluster with no operator installed (PRODUCT.md, Targets)
CLUSTER_TARGETS = ("k8s", "kubeflow", "volcano", "jobset", "trainjob")


class Bundle(NamedTuple):
    """One job's objects, and what is needed to point a server error back at the spec."""

    job: str
    objects: list[dict]
    origin: str  # the file or folder it came from
    target: str  # the target compiled for ("" for a compiled file or a chart)
    positions: dict  # the spec document's positions (the loader's), empty when not from a spec
    patches: tuple  # the spec's patches for this target
    # A compiled file's own positions: (kind, name) -> that document's positions.
    file_positions: dict | None = None

    @property
    def from_spec(self) -> bool:
        return bool(self.target)


def _file_positions(path: str) -> dict:
    """Where each object of a compiled file is written, by (kind, name): a rejection points at its line."""
    from trainspec.compiler.loader import load_file

    try:
        docs = load_file(path)
    except Exception:  # the file parsed a moment ago; positions are a nicety, never a failure
        return {}
    out = {}
    for doc in docs:
        if isinstance(doc.data, dict):
            out[(str(doc.data.get("kind")), str((doc.data.get("metadata") or {}).get("name")))] = doc.positions
    return out


def _documents(path: str) -> list[Any]:
    """The file's documents, read with the compiler's loader: its size, alias and depth bounds (a bad
    file is SpecErrors at its line and column, exit 2)."""
    from trainspec.compiler.loader import read_text, yaml_values

    if path == "-":
        from trainspec.inputs import STDIN_NAME, read_stdin_text

        return [d for d in yaml_values(STDIN_NAME, read_stdin_text()) if d is not None]
    return [d for d in yaml_values(path, read_text(path)) if d is not None]


def _is_spec(docs: list[Any]) -> bool:
    return any(isinstance(d, dict) and (str(d.get("apiVersion", "")).startswith("trainspec/")
                                        or d.get("kind") == "TrainingJob") for d in docs)


def _by_job(path: str, docs: list[Any]) -> list[Bundle]:
    """Compiled objects grouped by their job label; a file of one job's objects may leave it off some."""
    objects = [d for d in docs if isinstance(d, dict)]
    for d in objects:
        if not d.get("apiVersion") or not d.get("kind"):
            raise UsageError(f"{path}: a document without apiVersion/kind is not a Kubernetes object")
    jobs = sorted({str(((d.get("metadata") or {}).get("labels") or {}).get(JOB_LABEL)) for d in objects
                   if ((d.get("metadata") or {}).get("labels") or {}).get(JOB_LABEL)})
    if not jobs:
        raise UsageError(f"{path}: no object carries the {JOB_LABEL} label: not trainspec output "
                         "(compile a spec, or apply this file with kubectl)")
    if len(jobs) > 1 and any(not ((d.get("metadata") or {}).get("labels") or {}).get(JOB_LABEL) for d in objects):
        raise UsageError(f"{path}: holds jobs {', '.join(jobs)} and objects with no {JOB_LABEL} label")
    out = []
    where = _file_positions(path) if os.path.isfile(path) else {}
    for job in jobs:
        mine = [d for d in objects if ((d.get("metadata") or {}).get("labels") or {}).get(JOB_LABEL, job) == job]
        out.append(Bundle(job, mine, path, "", {}, (), where))
    return out


def _spec_positions(path: str, args, job: str) -> dict:
    if path == "-" or path.endswith(".jsonnet"):
        return {}  # standard input is read once; Jsonnet output has no positions
    from trainspec.compiler.kube import generated_name
    from trainspec.compiler.loader import load_file

    try:
        for doc in load_file(path):
            meta = (doc.data.get("metadata") or {}) if isinstance(doc.data, dict) else {}
            prefix = meta.get("generateName")
            if meta.get("name") == job or (isinstance(prefix, str) and job.startswith(generated_name(prefix, ""))):
                return doc.positions
    except Exception:  # the spec compiled a moment ago; positions are a nicety, never a failure
        return {}
    return {}


def _from_spec(path: str, args, target: str, walked: bool) -> list[Bundle]:
    import yaml

    from trainspec.inputs import SpecInput
    from trainspec.loading import load_input
    from trainspec.targets import render

    from .generated import with_new_names

    plans = load_input(SpecInput(path, walked), with_new_names(args), targets=(target,))
    out = []
    for plan in plans:
        docs = [d for text in render(target, plan).values() for d in yaml.safe_load_all(text) if d]
        out.append(Bundle(plan.name, docs, path, target, _spec_positions(path, args, plan.name),
                          tuple(plan.patches.get(target, ()))))
    return out


def is_chart(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "Chart.yaml"))


def load(inputs: list[str], args, target: str | None, namespace: str = "default") -> list[Bundle]:
    """Every job the inputs hold; a job named twice is an error (which one would win?).
    `namespace`: the release namespace a chart is rendered for (its templates write it into objects)."""
    if target is not None and target not in CLUSTER_TARGETS:
        raise UsageError(f"--target {target}: apply puts Kubernetes objects on a cluster; targets: "
                         f"{', '.join(CLUSTER_TARGETS)} (a helm chart folder is applied as rendered)")
    bundles: list[Bundle] = []
    for item in inputs:
        if item == "-":
            raise UsageError("apply reads files and folders, not standard input: save the spec or manifest first")
        if not os.path.exists(item):
            raise UsageError(f"{item}: no such file or folder")
        if os.path.isdir(item):
            if is_chart(item):
                from trainspec.emulator.readers.helm import render as render_chart

                bundles += _by_job(item, render_chart(item, namespace=namespace, command="apply"))
                continue
            from trainspec.inputs import collect

            for spec in collect([item]):
                bundles += _from_spec(spec.path, args, target or DEFAULT_TARGET, True)
            continue
        docs = _documents(item) if not item.endswith(".jsonnet") else [{"kind": "TrainingJob"}]
        if _is_spec(docs):
            bundles += _from_spec(item, args, target or DEFAULT_TARGET, False)
        else:
            if target is not None:
                raise UsageError(f"{item} is compiled output, not a spec: --target applies to specs")
            bundles += _by_job(item, docs)
    seen: dict[str, str] = {}
    for b in bundles:
        if b.job in seen:
            raise UsageError(f"job {b.job!r} comes from both {seen[b.job]} and {b.origin}: apply one of them")
        seen[b.job] = b.origin
    if not bundles:
        raise UsageError("no job to apply in " + ", ".join(inputs))
    return bundles
