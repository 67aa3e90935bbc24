"""Output formats.  Each target is a module with `render(plan) -> {relative path: text}`."""

from __future__ import annotations

import importlib

# Order is the order `build` writes them in and `--help` lists them.
TARGETS = ("k8s", "kubeflow", "volcano", "helm", "compose", "jobset", "trainjob")


def available() -> tuple[str, ...]:
    """Targets this installation has (found, not imported: each target loads when it renders)."""
    import importlib.util

    return tuple(name for name in TARGETS if importlib.util.find_spec(f"trainspec.targets.{name}") is not None)


def render(target: str, plan) -> dict[str, str]:
    module = importlib.import_module(f"trainspec.targets.{target}")
    return module.render(plan)


def unsupported(target: str, plan) -> str | None:
    """Why `target` cannot express this job at all (e.g. trainjob for TensorFlow), or None.

    A build over all targets skips such targets for such jobs; asking for one by name is an error.
    """
    module = importlib.import_module(f"trainspec.targets.{target}")
    check = getattr(module, "unsupported", None)
    return check(plan) if check is not None else None
