"""`trainspec import`: a Kubeflow v1 job, an MPIJob v2beta1 or a Volcano Job -> a trainspec spec.

`import_text` is the whole pipeline, data in and data out: the manifest text, the
job to pick, strict or not -> the spec's YAML text and the warnings to print.
Fields with a first-class spec field map to it; every other field becomes an
RFC 6902 op in `spec.patches.<target>` (kubeflow or volcano), or, with
`strict`, an error listing them all.  See docs/import.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainspec.compiler.errors import SpecError, SpecErrors, dotted
from trainspec.compiler.kinds import KINDS as KIND_REGISTRY
from trainspec.compiler.kinds import kinds as registry_kinds
from trainspec.compiler.kinds import reader as kind_reader
from trainspec.compiler.kinds import source_of as kind_source
from trainspec.compiler.kinds.jobset import JOBSET
from trainspec.compiler.kinds.kubeflow import GROUP as KUBEFLOW_GROUP
from trainspec.compiler.kinds.kubeflow import KUBEFLOW_KIND_NAMES, KUBEFLOW_V1, MPI_JOB

from .context import Context

KUBEFLOW_KINDS = KUBEFLOW_KIND_NAMES
SUPPORTED = ", ".join(KUBEFLOW_KINDS) + ", Volcano Job, TrainJob, JobSet, batch/v1 Job, OpenPAI job config"


@dataclass(frozen=True)
class Imported:
    text: str  # the spec, as YAML
    spec: dict  # the same, as data
    warnings: tuple[str, ...]
    target: str  # the target whose compiled output the input was (kubeflow | volcano)
    lost: tuple[SpecError, ...] = ()  # what would not survive (the --strict errors)
    patched: tuple[tuple[str, int, int, str], ...] = ()  # (field path, line, column, why) carried as patches

    @property
    def losses(self) -> tuple[SpecError, ...]:
        """The Python API's name for `lost` (`trainspec.import_manifest(...).losses`)."""
        return self.lost


# Kinds a team may have that import cannot read: (group, kind) -> (message, hint).  `None` kind: any kind.
LEGACY = {
    (KUBEFLOW_GROUP, MPI_JOB.kind): (
        "is the retired mpi-operator API",
        f"upgrade to {MPI_JOB.api_version} (mpi-operator v0.4+): spec.mpiReplicaSpecs Launcher/Worker stay, "
        "slotsPerWorker replaces gpus/processingUnits, mpiImplementation and runPolicy are top-level; "
        "see github.com/kubeflow/mpi-operator/blob/master/proposals/scalable-robust-operator.md"),
}
LEGACY_V1 = f"upgrade to {KUBEFLOW_V1} (training-operator v1.0+): the replica specs keep their names " \
    "({field}), cleanPodPolicy/ttlSecondsAfterFinished/activeDeadlineSeconds/backoffLimit move under spec.runPolicy"
RAY_KINDS = ("RayJob", "RayCluster", "RayService")
V12_FEATURES = {"framework generic", "taskName", "containerName", "success"}
KNOWN_GROUPS = tuple(dict.fromkeys(k.group for name in KIND_REGISTRY for k in registry_kinds(name)))



def _made_of_prefix(name, prefix) -> bool:
    """A job the spec names by its generateName: none named, or named as `build` (the prefix without its
    trailing '-') or the API server (the prefix and 5 random characters) name it from the prefix; another
    name wins (the API server ignores generateName then) and the importer reads that name."""
    if not isinstance(prefix, str) or not prefix.rstrip("-"):
        return False
    from trainspec.compiler.kube import GENERATED_SUFFIX, generated_name

    return name is None or name == prefix.rstrip("-") or (
        isinstance(name, str) and len(name) == len(generated_name(prefix, "x" * GENERATED_SUFFIX))
        and name.startswith(generated_name(prefix, "")))

def source_of(data) -> str | None:
    """Which importer reads this document: kubeflow, volcano, trainjob, jobset, batch or openpai (None: not a job).
    The kinds registry decides (compiler/kinds/: each entry's `matches`); its names are the importers'."""
    return kind_source(data)


def _is_job(data) -> bool:
    return source_of(data) is not None


def _refused(doc, source: str) -> SpecErrors | None:
    """A clear error for a job kind import does not read: legacy APIs, mis-cased groups, Ray."""
    data = doc.data
    if not isinstance(data, dict):
        return None
    kind, api = data.get("kind"), str(data.get("apiVersion", ""))
    group, _, version = api.rpartition("/")
    line, column = doc.positions.get(("apiVersion",), doc.positions.get((), (1, 1)))

    def error(message: str, expected: str, hint: str = "") -> SpecErrors:
        return SpecErrors([SpecError(source, line, column, "apiVersion", message, expected, hint)])

    if kind in RAY_KINDS or group == "ray.io":
        return error(f"{kind} ({api}): Ray is not supported", "one of " + SUPPORTED,
                     "trainspec compiles training jobs with fixed roles; keep Ray jobs in KubeRay")
    if group != group.lower() and group.lower() in KNOWN_GROUPS:
        return error(f"API group {group!r} is mis-cased", f"{group.lower()}/{version}",
                     f"did you mean apiVersion: {group.lower()}/{version}?")
    if group == KUBEFLOW_GROUP and isinstance(kind, str) and kind in KUBEFLOW_KINDS:
        from .kubeflow import KINDS

        want = KINDS[kind][0]
        if api != want:
            if (group, kind) in LEGACY:
                message, hint = LEGACY[(group, kind)]
                return error(f"{kind} {api} {message}", want, hint)
            if version.startswith(("v1alpha", "v1beta")):
                return error(f"{kind} {api} is a legacy training-operator API", want,
                             LEGACY_V1.format(field=KINDS[kind][2]))
            return error(f"{kind} {api} is not supported", want)
    return None


def _name(data: dict) -> str:
    meta = data.get("metadata")
    return str(meta.get("name")) if isinstance(meta, dict) and meta.get("name") is not None else "<unnamed>"


def select(docs, source: str, job: str | None):
    """The one job document to import; a clear error when there is none, or more than one and no --job."""
    jobs = [d for d in docs if _is_job(d.data)]
    if not jobs:
        for d in docs:
            refusal = _refused(d, source)
            if refusal is not None:
                raise refusal
        kinds = sorted({f"{d.data.get('apiVersion')}/{d.data.get('kind')}" for d in docs
                        if isinstance(d.data, dict) and d.data.get("kind")})
        found = f"found {', '.join(kinds)}" if kinds else ("no Kubernetes object" if docs else "an empty file")
        line, column = (docs[0].positions.get((), (1, 1)) if docs else (1, 1))
        raise SpecErrors([SpecError(source, line, column, "kind", f"no job to import: {found}",
                                    f"one of {SUPPORTED}", "`trainspec import` reads training jobs, not specs")])
    if job is not None:
        chosen = [d for d in jobs if _name(d.data) == job]
        if chosen:
            refusal = _refused(chosen[0], source)
            if refusal is not None:
                raise refusal
        if not chosen:
            raise SpecErrors([SpecError(source, 1, 1, "metadata.name", f"no job named {job!r}",
                                        "one of " + ", ".join(_name(d.data) for d in jobs))])
        return chosen[0]
    from .batch import job_label

    own = {str(job_label(d.data)) for d in jobs if source_of(d.data) == "batch"}
    if len(jobs) > 1 and all(source_of(d.data) == "batch" for d in jobs) and len(own) == 1 and own != {"None"}:
        return jobs[0]  # the k8s target's output: one Job per replica of one trainspec job (batch.py)
    if len(jobs) > 1:
        raise SpecErrors([SpecError(source, 1, 1, "", f"{len(jobs)} jobs in this file",
                                    "one job, or --job NAME", "jobs: " + ", ".join(_name(d.data) for d in jobs))])
    refusal = _refused(jobs[0], source)
    if refusal is not None:
        raise refusal
    return jobs[0]


def import_text(text: str, source: str, job: str | None = None, strict: bool = False,
                runtime: list[str] | None = None) -> Imported:
    import yaml

    from trainspec.compiler.loader import from_yaml_text

    from . import volcano
    from .assemble import patches
    from .shapes import checked
    from .verify import checked_compile, job_objects
    from .writer import dump

    docs = from_yaml_text(source, text)
    doc = select(docs, source, job)
    kind = source_of(doc.data)
    # the target whose compiled output the source is (its patches address that output)
    target = {"batch": "k8s", "openpai": "k8s"}.get(str(kind), str(kind))
    data = checked(doc)
    ctx = Context(doc, target)
    generate_name: str | None = None  # the source's metadata.generateName (it has no name)
    import_job = kind_reader(str(kind), "importer")  # where the kind's importer lives: compiler/kinds/
    if kind == "openpai":  # a config, no Kubernetes object: no metadata
        spec = import_job(ctx, data, docs, runtime)
    else:
        meta = data.get("metadata")
        if isinstance(meta, dict) and _made_of_prefix(meta.get("name"), meta.get("generateName")):
            # spec v1.3 keeps generateName (each `apply` makes a new name of it); the importers below read the
            # job's name, which `build` derives from the prefix the same way
            generate_name = meta["generateName"]
            data = dict(data, metadata={**{k: v for k, v in meta.items() if k != "generateName"},
                                        "name": generate_name.rstrip("-")})
            meta = data["metadata"]
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
            raise ctx.fail(("metadata",), "the job has no name", "metadata.name or metadata.generateName")
        spec = import_job(ctx, data, docs, runtime)
    after: dict = {"volcano": ("Job", volcano.policies)}  # kind -> (the compiled kind compared, compare)
    if kind == "jobset":
        from . import jobset

        after["jobset"] = (JOBSET.kind, jobset.after_compile)
    if kind == "batch":
        from . import batch

        after["batch"] = ("Job", batch.after_compile)
    if kind in after:  # what trainspec writes itself, against the source: compile once without patches
        compiled_kind, compare = after[str(kind)]
        draft = dict(spec, apiVersion="trainspec/v1.2")
        objects = job_objects(checked_compile(yaml.safe_dump(draft, sort_keys=False), ctx.target, source))
        compiled = [d for d in objects if d.get("kind") == compiled_kind]
        # batch: the k8s file's every object, in order (its patches address the file: /<i>/...)
        compare(ctx, data, objects if kind == "batch" else compiled[0])
    if strict and ctx.losses:
        raise ctx.strict_errors()
    if ctx.unmapped:
        spec["spec"]["patches"] = {ctx.target: patches(ctx)}
        ctx.uses("patches")
    uses = sorted(ctx.v11)
    if ctx.v11:
        spec["apiVersion"] = "trainspec/v1.2" if ctx.v11 & V12_FEATURES else "trainspec/v1.1"
    if generate_name is not None:  # the spec keeps it in the place of the name (spec v1.3)
        spec["metadata"] = {("generateName" if k == "name" else k): (generate_name if k == "name" else v)
                            for k, v in spec["metadata"].items()}
        spec["apiVersion"] = "trainspec/v1.3"
        uses.insert(0, "metadata.generateName")
    if uses:
        ctx.comment(("apiVersion",), "uses " + ", ".join(uses))
    out = dump(spec, ctx, source)
    checked_compile(out, ctx.target, source)  # the imported spec always validates, patches included
    patched = tuple((dotted(u.path), *ctx.position(u.path), u.why) for u in ctx.unmapped)
    return Imported(out, spec, tuple(ctx.warnings()), ctx.target, tuple(ctx.strict_errors().errors), patched)
