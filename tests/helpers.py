"""Shared test helpers: paths and running the CLI as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"
GOLDEN = ROOT / "golden"


def reference_dir() -> Path:
    env = os.environ.get("TRAINSPEC_REFERENCE")
    if env:
        return Path(env)
    return ROOT.parent / "shared" / "reference"


def run_cli(*args: str, cwd: str | os.PathLike | None = None, env: dict | None = None,
            input: str | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "trainspec", *args], cwd=cwd, env=full_env, input=input,
                          capture_output=True, text=True, timeout=120)


def compiled_docs(target: str, spec_path) -> list[dict]:
    """The objects one target writes for a one-job spec, parsed back."""
    import yaml

    from trainspec.compiler import load_plans
    from trainspec.targets import render

    (plan,) = load_plans(str(spec_path))
    return [d for text in render(target, plan).values() for d in yaml.safe_load_all(text) if d]
