"""`trainspec import`: a Kubeflow v1 job, an MPIJob v2beta1 or a Volcano Job -> a trainspec spec.

`import_text` is the whole pipeline, data in and data out: the manifest text, the
job to pick, strict or not -> the spec's YAML text and the warnings to print.
Fields with a first-class spec field map to it; every other field becomes an
RFC 6902 op in `spec.patches.<target>` (kubeflow or volcano), or, with
`strict`, an error listing them all.  See docs/import.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainspec.compiler.errors import SpecError, SpecErrors

from .context import Context

KUBEFLOW_KINDS = ("TFJob", "PyTorchJob", "MXJob", "XGBoostJob", "PaddleJob", "JAXJob", "MPIJob")
SUPPORTED = ", ".join(KUBEFLOW_KINDS) + ", Volcano Job"


@dataclass(frozen=True)
class Imported:
    text: str  # the spec, as YAML
    spec: dict  # the same, as data
    warnings: tuple[str, ...]
    target: str  # the target whose compiled output the input was (kubeflow | volcano)


def _is_job(data) -> bool:
    if not isinstance(data, dict):
        return False
    kind, api = data.get("kind"), str(data.get("apiVersion", ""))
    return kind in KUBEFLOW_KINDS and api.startswith("kubeflow.org/") or \
        kind == "Job" and api.startswith("batch.volcano.sh/")


def _name(data: dict) -> str:
    meta = data.get("metadata")
    return str(meta.get("name")) if isinstance(meta, dict) and meta.get("name") is not None else "<unnamed>"


def select(docs, source: str, job: str | None):
    """The one job document to import; a clear error when there is none, or more than one and no --job."""
    jobs = [d for d in docs if _is_job(d.data)]
    if not jobs:
        kinds = sorted({f"{d.data.get('apiVersion')}/{d.data.get('kind')}" for d in docs
                        if isinstance(d.data, dict) and d.data.get("kind")})
        found = f"found {', '.join(kinds)}" if kinds else ("no Kubernetes object" if docs else "an empty file")
        line, column = (docs[0].positions.get((), (1, 1)) if docs else (1, 1))
        raise SpecErrors([SpecError(source, line, column, "kind", f"no job to import: {found}",
                                    f"one of {SUPPORTED}", "`trainspec import` reads training jobs, not specs")])
    if job is not None:
        chosen = [d for d in jobs if _name(d.data) == job]
        if not chosen:
            raise SpecErrors([SpecError(source, 1, 1, "metadata.name", f"no job named {job!r}",
                                        "one of " + ", ".join(_name(d.data) for d in jobs))])
        return chosen[0]
    if len(jobs) > 1:
        raise SpecErrors([SpecError(source, 1, 1, "", f"{len(jobs)} jobs in this file",
                                    "one job, or --job NAME", "jobs: " + ", ".join(_name(d.data) for d in jobs))])
    return jobs[0]


def import_text(text: str, source: str, job: str | None = None, strict: bool = False) -> Imported:
    from trainspec.compiler.loader import _from_yaml_text

    from . import kubeflow, volcano
    from .assemble import patches
    from .shapes import checked
    from .writer import dump

    doc = select(_from_yaml_text(source, text), source, job)
    is_volcano = doc.data["kind"] == "Job"
    data = checked(doc, None if is_volcano else kubeflow.KINDS[doc.data["kind"]][2])
    ctx = Context(doc, "volcano" if is_volcano else "kubeflow")
    meta = data.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        raise ctx.fail(("metadata",), "the job has no name", "metadata.name")
    spec = volcano.import_job(ctx, data) if is_volcano else kubeflow.import_job(ctx, data)
    if strict and ctx.unmapped:
        raise ctx.strict_errors()
    if ctx.unmapped:
        spec["spec"]["patches"] = {ctx.target: patches(ctx)}
        ctx.uses("patches")
    if ctx.v11:
        spec["apiVersion"] = "trainspec/v1.1"
        ctx.comment(("apiVersion",), "uses " + ", ".join(sorted(ctx.v11)))
    return Imported(dump(spec, ctx, source), spec, tuple(ctx.warnings()), ctx.target)
