"""Output formats.  Each target is a module with `render(plan) -> {relative path: text}`."""

from __future__ import annotations

import importlib

# Order is the order `build` writes them in and `--help` lists them.
TARGETS = ("k8s", "kubeflow", "volcano", "helm", "compose", "jobset", "trainjob")


def available(names: tuple[str, ...] = TARGETS) -> tuple[str, ...]:
    """Those of `names` this installation has (found, not imported: each target loads when it renders)."""
    import importlib.util

    return tuple(name for name in names if importlib.util.find_spec(f"trainspec.targets.{name}") is not None)


def render(target: str, plan) -> dict[str, str]:
    module = importlib.import_module(f"trainspec.targets.{target}")
    return module.render(plan)


def unsupported(target: str, plan) -> str | None:
    """Why `target` cannot run this job at all (e.g. trainjob for TensorFlow), or None.

    Decided by the target's check in compiler/checks.py (`Problem.unsupported`), recorded by the
    planner.  A build over all targets skips such targets for such jobs; naming one is an error.
    """
    return plan.unsupported.get(target)
