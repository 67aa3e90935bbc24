"""Output formats, one folder each, and the registry that names them.

A target is a package `targets/<name>/`: its `__init__.py` holds `RULES`, what the planner needs
of it (`TargetRules`: its naming scheme, what it cannot express, its warnings and limits; light,
no renderer imported), and its `render.py` holds `render(plan) -> {relative path: text}`, imported
only when that target renders.  Adding a target is that folder and one line in `TARGETS`.

The compiler imports no target: `load_plans` here resolves target names to their rules and hands
them to `compiler.load_plans`, which plans and checks with them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from trainspec.compiler.plan import JobPlan
    from trainspec.compiler.target_rules import TargetRules

# name -> the package that holds the target.  Order is the order `build` writes them in and
# `--help` lists them.
TARGETS: dict[str, str] = {
    "k8s": "trainspec.targets.k8s",
    "kubeflow": "trainspec.targets.kubeflow",
    "volcano": "trainspec.targets.volcano",
    "helm": "trainspec.targets.helm",
    "compose": "trainspec.targets.compose",
    "jobset": "trainspec.targets.jobset",
    "trainjob": "trainspec.targets.trainjob",
}


def available(names: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Those of `names` (default: every target) this installation has (found, not imported)."""
    import importlib.util

    return tuple(name for name in (tuple(TARGETS) if names is None else names)
                 if importlib.util.find_spec(TARGETS[name]) is not None)


def rules(name: str) -> TargetRules:
    """What the planner needs of target `name` (its package's RULES; the renderer is not imported)."""
    return importlib.import_module(TARGETS[name]).RULES


def render(target: str, plan: JobPlan) -> dict[str, str]:
    """`target`'s files for `plan`; SpecErrors (positioned) when the target cannot express the job.
    The check is here, once, so no renderer can write a job its target refused."""
    if plan.targets is None or target in plan.targets:
        plan.check(target)
    return importlib.import_module(TARGETS[target] + ".render").render(plan)


def load_plans(path: str, tla: dict[str, str] | None = None, ext_vars: dict[str, str] | None = None,
               jpath: list[str] | None = None, targets: tuple[str, ...] | None = None,
               documents: list | None = None, skip_unsupported: bool = False,
               kube_version: str | None = None, runtimes: tuple[str, ...] = (),
               name_for: Callable[[str], str] | None = None) -> list[JobPlan]:
    """Every job in one spec file, validated and planned for `targets`; raises SpecErrors with all problems.

    `targets`: plan for those targets only (their naming schemes and checks) and raise what they
    cannot express with the spec's errors.  None: plan for every target, and leave those problems
    to each target's render (JobPlan.check).  The other arguments are `compiler.load_plans`'s.
    """
    from trainspec.compiler import load_plans as plan_file

    names = tuple(TARGETS) if targets is None else targets

    def trainjob_rules() -> tuple[TargetRules, ...]:
        # expanding a v1.3 job's runtime (given with --runtime, or one Trainer ships) starts from the TrainJob
        # the trainjob target writes: its host names (scheme) for the jobs on a runtime, not its checks (the
        # expanding target runs them: expanded_checks)
        from trainspec.compiler.target_rules import no_problems

        return (rules("trainjob")._replace(checks=no_problems, warnings=no_problems, limits=no_problems),)

    expands = "trainjob" not in names and any(rules(name).expands_runtime for name in names)
    return plan_file(path, tuple(rules(name) for name in names), named=targets is not None, tla=tla,
                     ext_vars=ext_vars, jpath=jpath, documents=documents, skip_unsupported=skip_unsupported,
                     kube_version=kube_version, runtimes=runtimes, runtime_rules=trainjob_rules if expands else None,
                     name_for=name_for)


def unsupported(target: str, plan: JobPlan) -> str | None:
    """Why `target` cannot run this job at all (e.g. trainjob for TensorFlow), or None.

    Decided by the target's checks (`Problem.unsupported`), recorded by the planner.  A build over
    all targets skips such targets for such jobs; naming one is an error.
    """
    return plan.unsupported.get(target)
