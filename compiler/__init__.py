"""Spec loading, validation, normalization and the replica plan."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from .errors import ErrorSink, SpecError, SpecErrors, UsageError
    from .loader import JsonnetOptions, load_file
    from .plan import JobPlan
    from .target_rules import TargetRules

# Names this package re-exports, and the module each comes from.  They load on first use
# (module __getattr__), so `from trainspec.compiler.errors import ...` or `trainspec --version`
# does not import the loader, the plan and their dependencies.
_LAZY = {"ErrorSink": "errors", "SpecError": "errors", "SpecErrors": "errors", "UsageError": "errors",
         "JsonnetOptions": "loader", "load_file": "loader", "JobPlan": "plan"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:  # AttributeError lets `from trainspec.compiler import runpolicy` import the submodule
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def load_plans(path: str, rules: tuple[TargetRules, ...], named: bool = True, tla: dict[str, str] | None = None,
               ext_vars: dict[str, str] | None = None, jpath: list[str] | None = None, documents: list | None = None,
               skip_unsupported: bool = False, kube_version: str | None = None,
               runtimes: tuple[str, ...] = (), runtime_rules: Callable[[], tuple[TargetRules, ...]] | None = None,
               name_for: Callable[[str], str] | None = None) -> list[JobPlan]:
    """Every job in one spec file, validated and planned; raises SpecErrors with all problems.

    `rules`: the targets to plan for (their naming schemes, checks, warnings, limits:
    compiler/target_rules.py), handed in by the caller; `trainspec.targets.load_plans` is the
    entry that takes target names.  `named`: the user named those targets: raise what they
    cannot express with the spec's errors.  Not named (every target): leave those problems to
    each target's render (JobPlan.check).
    `documents`: already loaded (stdin, or a folder walk that skipped other tools' YAML).
    `skip_unsupported`: do not raise the problems of a target that cannot run a job at all
    (`JobPlan.unsupported`); the caller leaves that target out for the job (`build`).
    `kube_version`: "1.30".."1.36", the API server whose rules apply (default: the oldest supported).
    `runtimes`: `--runtime FILE|DIR`, the Trainer runtimes a spec v1.3 job on a runtime may name
    (compiler/runtimes.py): read and checked once, attached to the plans that name them.
    `runtime_rules`: targets planned for too for a job on a runtime (the TrainJob an expansion starts from),
    asked for only when a job is on a runtime (their modules stay unloaded for every other spec).
    `name_for`: the name of a job written with metadata.generateName, from its prefix (`apply` generates one
    per run); None: the prefix without its trailing '-' (`build`, `compile`: the same bytes every time).
    """
    from .errors import ErrorSink, SpecError, SpecErrors, UsageError
    from .kube_rules import DEFAULT_KUBE_VERSION, parse_version
    from .loader import JsonnetOptions, load_file
    from .plan_limits import report as report_limits
    from .planner import build_plan
    from .validate import validate

    try:
        version = parse_version(kube_version or DEFAULT_KUBE_VERSION)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    options = JsonnetOptions(tuple(sorted((tla or {}).items())), tuple(sorted((ext_vars or {}).items())),
                             tuple(jpath or ()))
    given: tuple = ()
    if runtimes:
        from .runtimes import load_runtimes

        given = load_runtimes(runtimes)
    docs = load_file(path, options) if documents is None else documents
    if not docs:
        raise SpecErrors([SpecError(path, 1, 1, "", "no job in this file", "a TrainingJob document")])
    errors: list[SpecError] = []
    plans: list[JobPlan] = []
    names: dict[str, tuple[int, int, int]] = {}  # job name -> (line, column, number) of its first document
    for number, doc in enumerate(docs, 1):
        spec, sink = validate(doc, version)
        if spec is not None and spec.generate_name is not None and name_for is not None:
            spec = spec._replace(name=name_for(spec.generate_name))
        if spec is not None:
            if spec.name in names:
                line, column, first = names[spec.name]
                # Jsonnet output has no positions: say which jobs of the output instead
                where = f"first at line {line}, column {column}" if doc.positions else \
                    f"jobs {first} and {number} of the {len(docs)} it holds"
                sink.add(("metadata", "name"), f"job {spec.name!r} is defined twice in this file ({where})",
                         "one document per job name", "rename one of them")
            names.setdefault(spec.name, sink.position(("metadata", "name")) + (number,))
            on_runtime = runtime_rules() if spec.trainjob is not None and runtime_rules is not None else ()
            plan = build_plan(spec, sink, rules + on_runtime, named, given,
                              bool(runtimes)) if not sink.errors else None
            if plan is not None:
                plan = plan._replace(kube_version=version, locator=ErrorSink(sink.file, sink.positions,
                                                                             sink.key_positions, prefix=sink.prefix))
                report_limits(plan, sink)  # Linux's per-string limit, which no target can get past
                plans.append(plan)
                for target in plan.targets or ():
                    if not (skip_unsupported and target in plan.unsupported):
                        errors.extend(plan.target_errors.get(target, ()))
        errors.extend(sink.errors)
    if errors:
        raise SpecErrors(errors)
    return plans


__all__ = ["ErrorSink", "JobPlan", "JsonnetOptions", "SpecError", "SpecErrors", "UsageError", "load_file", "load_plans"]
