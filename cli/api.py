"""The Python API: load, validate, compile, import and run jobs from code (docs/api.md).

    import trainspec
    jobs = trainspec.load("specs/tf-ps.yaml")      # or a mapping, or trainspec.loads(text)
    files = jobs[0].compile("kubeflow")             # {relative path: text}, the bytes `build` writes
    problems = trainspec.validate("specs/x.yaml")   # [] when valid

The CLI's `validate`, `compile` and `build` plan and render through the functions here
(`plan_source`, `Job.compile`, `spec_problems`), so the API's results are the CLI's byte for byte.
Everything heavy (the loader, the planner, Jinja, the emulator, docker) is imported inside the
functions that need it: `import trainspec` stays as cheap as `trainspec --version`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO, Union

from trainspec.compiler.errors import Error, Problem, SpecError, SpecErrors, UsageError

if TYPE_CHECKING:
    from trainspec.compiler.plan import JobPlan

Source = Union[str, "os.PathLike[str]", Mapping[str, Any], Sequence[Mapping[str, Any]]]
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
                kube_version: str | None = None) -> list[JobPlan]:
    """Every job of `source` planned for `targets` (None: every target, their problems left to each
    render); raises SpecErrors with every problem.  What the CLI's validate/compile/build and `load` call."""
    from trainspec.targets import load_plans

    name, docs = _documents(source)
    options: dict[str, Any] = {"tla": dict(tla or {}), "ext_vars": dict(ext_vars or {}), "jpath": list(jpath or ())}
    if kube_version:
        options["kube_version"] = kube_version
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
         jpath: Sequence[str] | None = None, kube_version: str | None = None) -> list[Job]:
    """Every job of a spec: a file's path (YAML, JSON or Jsonnet), a mapping, or a list of mappings.

    `tla`, `ext_vars`, `jpath`: Jsonnet's top-level arguments, external variables and import folders
    (`--tla`, `--ext-var`, `-J`); `kube_version`: the API server whose rules apply ("1.30".."1.36").
    Raises `SpecError` (with `.problems`) when the spec is invalid.
    """
    return [Job(plan) for plan in plan_source(source, tla=tla, ext_vars=ext_vars, jpath=jpath,
                                              kube_version=kube_version)]


def loads(text: str, *, name: str = TEXT_NAME, kube_version: str | None = None) -> list[Job]:
    """Every job of a spec's YAML or JSON text; `name` is the file name its errors give."""
    from trainspec.compiler.loader import from_yaml_text  # YAML is a superset of a spec's JSON

    return [Job(plan) for plan in plan_source(name, documents=from_yaml_text(name, text),
                                              kube_version=kube_version)]


def spec_problems(plans: Sequence[JobPlan]) -> list[Problem]:
    """What `validate` finds in planned jobs beyond planning itself: spec.patches ops that do not apply."""
    if not any(plan.patches for plan in plans):
        return []
    from trainspec.targets.patches import check  # jsonpatch: only for a spec that has patches

    return [error for plan in plans for error in check(plan)]


def validate(source: Source, *, tla: Mapping[str, str] | None = None, ext_vars: Mapping[str, str] | None = None,
             jpath: Sequence[str] | None = None, kube_version: str | None = None) -> list[Problem]:
    """Every problem `trainspec validate` reports for `source` (sorted by position); [] when it is valid."""
    try:
        plans = plan_source(source, tla=tla, ext_vars=ext_vars, jpath=jpath, kube_version=kube_version)
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


def check_target(name: str) -> None:
    """UsageError unless `name` is a target this installation has."""
    from trainspec.targets import TARGETS, available

    if name not in TARGETS:
        raise UsageError(f"unknown target {name!r}; targets: {', '.join(TARGETS)}")
    if not available((name,)):  # looks for this one only (start-up)
        raise UsageError(f"target {name!r} is not available in this version")


# --- import ----------------------------------------------------------------------------------------

class Imported(NamedTuple):
    """A job imported from a manifest: the spec as data and as the YAML `trainspec import` writes."""

    spec: dict[str, Any]
    text: str
    losses: tuple[Problem, ...]  # what would not survive (each an error under strict=True)
    warnings: tuple[str, ...]  # the lines `trainspec import` prints on stderr
    target: str  # the target whose output the manifest was (its patches address that target)


def import_manifest(path: str | os.PathLike[str], *, strict: bool = False, job: str | None = None,
                    runtime: str | None = None) -> Imported:
    """A Kubeflow v1 job, MPIJob, Volcano Job, JobSet, TrainJob, batch Job or OpenPAI config -> a spec,
    as `trainspec import` does it.  `strict`: raise SpecError listing every field that would not survive;
    `job`: which job of a file holding several; `runtime`: the file holding a TrainJob's runtime."""
    from trainspec.compiler.loader import read_text
    from trainspec.importer import import_text

    name = os.fspath(path)
    text = read_text(name)
    if not text.strip():
        raise SpecErrors([SpecError(name, 1, 1, "", "the manifest is empty", "a Kubeflow or Volcano job")])
    result = import_text(text, name, job, strict, os.fspath(runtime) if runtime is not None else None)
    return Imported(result.spec, result.text, result.lost, result.warnings, result.target)


# --- a local run -----------------------------------------------------------------------------------

class ReplicaStatus(NamedTuple):
    name: str
    phase: str  # Pending, Running, Succeeded, Failed...
    ready: bool
    restarts: int
    exit_code: int | None
    reason: str


class RunStatus(NamedTuple):
    run_id: str
    job: str
    status: str  # Pending until the run records itself, then Running, Succeeded, Failed, Interrupted, Error...
    reason: str
    replicas: tuple[ReplicaStatus, ...]


class LocalRun:
    """A job running on the local container engine, in a thread of this process (`trainspec.run`)."""

    def __init__(self, run: Any):
        self._run = run
        self._code: int | None = None
        self._error: BaseException | None = None
        import threading

        self._thread = threading.Thread(target=self._execute, name=f"trainspec-run-{run.run_id}", daemon=True)
        self._thread.start()

    def _execute(self) -> None:
        try:
            self._code = self._run.execute()
        except BaseException as exc:  # handed to wait(): the caller's thread raises it
            self._error = exc

    def __repr__(self) -> str:
        return f"<trainspec.LocalRun {self.id} ({self.status().status})>"

    @property
    def id(self) -> str:
        """The run's id, as `trainspec ps` lists it."""
        return str(self._run.run_id)

    @property
    def job(self) -> str:
        return str(self._run.job.name)

    def wait(self, timeout: float | None = None) -> int:
        """Block until the job ends: 0 it succeeded, 1 it failed (the exit codes of `trainspec run`).
        Raises TimeoutError when `timeout` seconds pass first, and the run's own error (an `Error`)
        when it could not run (no engine, a missing image)."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"run {self.id} is still running after {timeout} s")
        if self._error is not None:
            raise self._error
        assert self._code is not None
        return self._code

    def done(self) -> bool:
        return not self._thread.is_alive()

    def status(self) -> RunStatus:
        """The run's status and each replica's, as `trainspec ps RUN` shows them."""
        from trainspec.emulator.host.state import read_state

        state = read_state(self._run.dir) or {}
        replicas = tuple(ReplicaStatus(r["display"], r["phase"], bool(r.get("ready")), int(r.get("restarts", 0)),
                                       r.get("exit_code"), r.get("reason", "")) for r in state.get("replicas", ()))
        if not replicas:  # not recorded yet: every replica is still pending
            replicas = tuple(ReplicaStatus(row.name, row.phase, row.ready, row.restarts, row.exit_code, row.reason)
                             for row in self._run.rows())
        return RunStatus(self.id, self.job, state.get("status", "Pending"), state.get("reason", ""), replicas)

    def logs(self) -> dict[str, str]:
        """{replica: its log so far} (`trainspec logs RUN`); secret values are masked as on the console."""
        folder = self._run.dir
        if not os.path.isdir(folder):
            return {}
        out: dict[str, str] = {}
        for entry in sorted(os.listdir(folder)):
            if entry.endswith(".log") and entry != "supervisor.log":
                with open(os.path.join(folder, entry), encoding="utf-8", errors="replace") as handle:
                    out[entry[:-len(".log")]] = handle.read()
        return out

    def down(self, timeout: float | None = None) -> int:
        """Stop the run as Ctrl-C stops `trainspec run` (grace periods, then every container and the
        network removed) and wait for it; the exit code (130 when it was still running)."""
        run = self._run
        if self._thread.is_alive():
            with run.cond:
                run.interrupted = run.interrupted or "SIGINT"
                run.cond.notify_all()
        return self.wait(timeout)


def run(source: str | os.PathLike[str], *, offline: bool = False, engine: str | None = None,
        gpus: str | None = None, cpu_only: bool = False, job: str | None = None, keep: bool = False,
        state_dir: str | os.PathLike[str] | None = None, images: Sequence[str] = (),
        mount_host: Sequence[str] = (), tla: Mapping[str, str] | None = None,
        ext_vars: Mapping[str, str] | None = None, jpath: Sequence[str] = (), output: TextIO | None = None,
        quiet: bool = True) -> LocalRun:
    """Start `trainspec run SOURCE` (a spec, a compiled file or a chart folder) on the local engine and
    return at once; the run goes on in a thread of this process.  The keywords are `run`'s options
    (`engine`: "docker" | "podman"; `gpus`: "all", "none" or ids such as "0,1"); `output`: where the
    console's lines go (default: standard output; `quiet`: only the transitions and the summary).
    The input is checked before this returns: an invalid spec raises SpecError, an unusable option
    or host UsageError."""
    from trainspec.cli import build_parser

    argv = ["run", os.fspath(source), "--color", "never"]
    if engine is not None:
        if engine not in ("docker", "podman"):
            raise UsageError(f"unknown engine {engine!r}", path="engine", expected="docker or podman")
        argv += ["--engine", engine]
    argv += ["--offline"] * offline + ["--cpu-only"] * cpu_only + ["--keep"] * keep + ["--quiet"] * quiet
    if gpus is not None:
        argv += ["--gpus", gpus]
    if job is not None:
        argv += ["--job", job]
    if state_dir is not None:
        argv += ["--state-dir", os.fspath(state_dir)]
    for option, values in (("--image", images), ("--mount-host", mount_host), ("-J", jpath)):
        for value in values:
            argv += [option, value]
    for option, pairs in (("--tla", tla), ("--ext-var", ext_vars)):
        for key, value in (pairs or {}).items():
            argv += [option, f"{key}={value}"]
    args = build_parser("run").parse_args(argv)
    if args.gpus and args.cpu_only:
        raise UsageError("gpus and cpu_only contradict each other; use one")
    from trainspec.emulator.commands import build_run

    return LocalRun(build_run(args, output))


__all__ = ["Error", "Imported", "Job", "LocalRun", "Problem", "ReplicaStatus", "RunStatus", "SpecErrors",
           "UsageError", "import_manifest", "load", "loads", "run", "validate"]
