"""The Python API: load, validate, compile, import and run jobs from code (docs/api.md).

    import trainspec
    jobs = trainspec.load("specs/tf-ps.yaml")      # or a mapping, or trainspec.loads(text)
    files = jobs[0].compile("kubeflow")             # {relative path: text}, the bytes `build` writes
    problems = trainspec.validate("specs/x.yaml")   # [] when valid

The CLI's `validate`, `compile` and `build` plan and render through the functions here
(`plan_source`, `Job.compile`, `spec_problems`), so the API's results are the CLI's byte for byte.
`trainspec.run` is in localrun.py (imported only by it).
Everything heavy (the loader, the planner, Jinja, the emulator, docker) is imported inside the
functions that need it: `import trainspec` stays as cheap as `trainspec --version`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from trainspec.compiler.errors import Error, Problem, SpecError, SpecErrors, UsageError

if TYPE_CHECKING:  # the alias costs start-up: the CLI imports this module to compile
    from typing import TypeAlias

    from trainspec.compiler.plan import JobPlan
    from trainspec.importer import Imported

    Source: TypeAlias = str | "os.PathLike[str]" | Mapping[str, Any] | Sequence[Mapping[str, Any]]

MAPPING_NAME = "<mapping>"  # the file name errors give for a spec handed in as data
TEXT_NAME = "<string>"  # ... and as text (trainspec.loads)


def targets() -> tuple[str, ...]:
    """The targets' names (`trainspec.TARGETS`), in the order `build` writes them."""
    from trainspec.targets import TARGETS

    return tuple(TARGETS)


# --- loading ---------------------------------------------------------------------------------------

def _documents(source: Source) -> tuple[str, list | None]:
    """(name for messages, documents already in memory, or None: the loader reads the file `name`)."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source), None
    from trainspec.compiler.loader import from_data

    if isinstance(source, Mapping):
        return MAPPING_NAME, from_data(MAPPING_NAME, dict(source.items()))
    if isinstance(source, Sequence) and not isinstance(source, (bytes, bytearray)):
        items = [dict(item.items()) for item in source if isinstance(item, Mapping)]
        if len(items) == len(source):
            return MAPPING_NAME, from_data(MAPPING_NAME, items)
    raise UsageError(f"cannot load a {type(source).__name__}",
                     expected="a spec file's path, a mapping (one job) or a list of mappings",
                     hint="trainspec.loads(text) reads a spec's YAML or JSON text")


def plan_source(source: Source, *, targets: tuple[str, ...] | None = None, skip_unsupported: bool = False,
                documents: list | None = None, tla: Mapping[str, str] | None = None,
                ext_vars: Mapping[str, str] | None = None, jpath: Sequence[str] | None = None,
                kube_version: str | None = None, runtimes: Sequence[str] = (),
                name_for: Callable[[str], str] | None = None) -> list[JobPlan]:
    """Every job of `source` planned for `targets` (None: every target, their problems left to each
    render); raises SpecErrors with every problem.  What the CLI's validate/compile/build and `load` call."""
    from trainspec.targets import load_plans

    name, docs = _documents(source)
    options: dict[str, Any] = {"tla": dict(tla or {}), "ext_vars": dict(ext_vars or {}), "jpath": list(jpath or ())}
    if kube_version:
        options["kube_version"] = kube_version
    if runtimes:
        options["runtimes"] = tuple(str(r) for r in runtimes)
    if name_for is not None:  # `apply`: a job written with generateName gets a new name each run
        options["name_for"] = name_for
    try:
        return load_plans(name, targets=targets, skip_unsupported=skip_unsupported,
                          documents=docs if documents is None else documents, **options)
    except SpecErrors:
        if docs is not None or documents is not None:
            raise
        from trainspec.inputs import chart_file_error  # only when the file failed: start-up stays lean

        error = chart_file_error(name)
        if error is not None:
            raise error from None
        raise


def load(source: Source, *, tla: Mapping[str, str] | None = None, ext_vars: Mapping[str, str] | None = None,
         jpath: Sequence[str] | None = None, kube_version: str | None = None,
         runtimes: Sequence[str | os.PathLike[str]] = ()) -> list[Job]:
    """Every job of a spec: a file's path (YAML, JSON or Jsonnet), a mapping, or a list of mappings.

    `tla`, `ext_vars`, `jpath`: Jsonnet's top-level arguments, external variables and import folders
    (`--tla`, `--ext-var`, `-J`); `kube_version`: the API server whose rules apply ("1.30".."1.36");
    `runtimes`: files or folders of Trainer runtimes a v1.3 spec names (`--runtime`).
    Raises `SpecError` (with `.problems`) when the spec is invalid.
    """
    return [Job(plan) for plan in plan_source(source, tla=tla, ext_vars=ext_vars, jpath=jpath,
                                              kube_version=kube_version, runtimes=tuple(map(str, runtimes)))]


def loads(text: str, *, name: str = TEXT_NAME, kube_version: str | None = None) -> list[Job]:
    """Every job of a spec's YAML or JSON text; `name` is the file name its errors give."""
    from trainspec.compiler.loader import from_text

    return [Job(plan) for plan in plan_source(name, documents=from_text(name, text),
                                              kube_version=kube_version)]


def spec_problems(plans: Sequence[JobPlan]) -> list[Problem]:
    """What `validate` finds in planned jobs beyond planning itself: spec.patches ops that do not apply."""
    if not any(plan.patches for plan in plans):
        return []
    from trainspec.targets.patches import check  # jsonpatch: only for a spec that has patches

    return [error for plan in plans for error in check(plan)]


def validate(source: Source, *, tla: Mapping[str, str] | None = None, ext_vars: Mapping[str, str] | None = None,
             jpath: Sequence[str] | None = None, kube_version: str | None = None,
             runtimes: Sequence[str | os.PathLike[str]] = ()) -> list[Problem]:
    """Every problem `trainspec validate` reports for `source` (sorted by position); [] when it is valid."""
    try:
        plans = plan_source(source, tla=tla, ext_vars=ext_vars, jpath=jpath, kube_version=kube_version,
                            runtimes=tuple(map(str, runtimes)))
        problems = spec_problems(plans)
        if problems:
            raise SpecErrors(problems)  # sorted and made unique as the CLI prints them
    except SpecErrors as exc:
        return list(exc.errors)
    return []


class Job:
    """One planned job: what every target writes for it is decided; `compile` writes it."""

    __slots__ = ("plan",)

    def __init__(self, plan: JobPlan):
        self.plan = plan

    def __repr__(self) -> str:
        return f"<trainspec.Job {self.plan.name!r} ({self.plan.framework}) from {self.plan.source}>"

    @property
    def name(self) -> str:
        return self.plan.name

    @property
    def namespace(self) -> str:
        return self.plan.namespace

    @property
    def framework(self) -> str:
        return self.plan.framework

    @property
    def source(self) -> str:
        """The file the job came from (or `<mapping>`, `<string>`)."""
        return self.plan.source

    def compile(self, target: str) -> dict[str, str]:
        """{path relative to the job's build folder: text}, the bytes `trainspec build` writes to
        OUT/<job>/ for `target` (`k8s.yaml`; the chart under `helm/`).  Raises SpecError when the
        target cannot express the job, UsageError for an unknown target."""
        from trainspec.targets import render

        check_target(target)
        return render(target, self.plan)

    def objects(self, target: str) -> list[dict[str, Any]]:
        """The objects `target` writes, as data (a compose file is one object).  Helm writes a chart,
        not objects: rendered with its default values it gives `objects("k8s")`."""
        if target == "helm":
            raise UsageError("the helm target writes a chart (templates), not objects", path="target",
                             expected="a target that writes objects: " + ", ".join(t for t in targets() if t != "helm"),
                             hint="the chart rendered with its default values gives objects('k8s')")
        from trainspec.compiler.pyyaml import yaml

        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return [doc for text in self.compile(target).values() for doc in yaml.load_all(text, Loader=loader)
                if doc is not None]

    def warnings(self, target: str = "k8s") -> list[Problem]:
        """What `target` asks the user to act on for this job (the warnings `build` prints)."""
        check_target(target)
        return list(self.plan.target_warnings.get(target, ()))

    @property
    def notes(self) -> list[Problem]:
        """What the CLI says as notes for this job: where a definition came from that no option gave
        (Kubeflow Trainer's shipped runtime, for a job on a runtime no `runtimes` file holds)."""
        return list(self.plan.notes)


def check_target(name: str) -> None:
    """UsageError unless `name` is a target this installation has."""
    from trainspec.targets import TARGETS, available

    if name not in TARGETS:
        raise UsageError(f"unknown target {name!r}; targets: {', '.join(TARGETS)}")
    if not available((name,)):  # looks for this one only (start-up)
        raise UsageError(f"target {name!r} is not available in this version")


# --- import ----------------------------------------------------------------------------------------

def import_manifest(path: str | os.PathLike[str], *, strict: bool = False, job: str | None = None,
                    runtime: str | os.PathLike[str] | None = None) -> Imported:
    """A Kubeflow v1 job, MPIJob, Volcano Job, JobSet, TrainJob, batch Job or OpenPAI config -> a spec,
    as `trainspec import` does it (`Imported`: .spec, .text, .losses, .warnings, .target).  `strict`: raise
    SpecError listing every field that would not survive; `job`: which job of a file holding several;
    `runtime`: the file holding a TrainJob's runtime."""
    from trainspec.compiler.loader import read_text
    from trainspec.importer import import_text

    name = os.fspath(path)
    text = read_text(name)
    if not text.strip():
        raise SpecErrors([SpecError(name, 1, 1, "", "the manifest is empty", "a Kubeflow or Volcano job")])
    return import_text(text, name, job, strict, os.fspath(runtime) if runtime is not None else None)


__all__ = ["Error", "Job", "Problem", "SpecErrors", "UsageError", "import_manifest", "load", "loads", "validate"]
