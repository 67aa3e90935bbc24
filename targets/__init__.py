"""Output formats.  Each target is a module with `render(plan) -> {relative path: text}`."""

from __future__ import annotations

import importlib

# Order is the order `build` writes them in and `--help` lists them.
TARGETS = ("k8s", "kubeflow", "volcano", "helm", "compose")


def available() -> tuple[str, ...]:
    found = []
    for name in TARGETS:
        try:
            importlib.import_module(f"trainspec.targets.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"trainspec.targets.{name}":
                raise
            continue
        found.append(name)
    return tuple(found)


def render(target: str, plan) -> dict[str, str]:
    module = importlib.import_module(f"trainspec.targets.{target}")
    return module.render(plan)
