"""Shared test helpers: paths and running the CLI as a user would."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"
GOLDEN = ROOT / "golden"
# The smallest valid spec; NAME is the job's name.
MINIMAL = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: NAME}
spec:
  framework: pytorch
  image: pt:1
  roles: {master: {replicas: 1}, worker: {replicas: 1}}
"""


@functools.cache
def neutral_cwd() -> str:
    """An empty folder to start Python in: the working folder comes first on sys.path for `-c` and `-m`,
    and neither the checkout nor its parent (where a clone named `trainspec` is a namespace package
    that an editable install's finder never gets to) may stand in for the installed package."""
    path = tempfile.mkdtemp(prefix="trainspec-cwd-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def unavailable(reason: str) -> NoReturn:
    """Skip a test that needs something this machine lacks; under CI=true, fail it instead."""
    import pytest

    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


def reference_dir() -> Path:
    """The upstream schemas: `$TRAINSPEC_REFERENCE`, else `shared/reference` beside the checkout.

    They are not part of the repository; a test that needs them is skipped with a
    one-line reason on a fresh clone, and fails under CI=true (CI always has them).
    """
    env = os.environ.get("TRAINSPEC_REFERENCE")
    path = Path(env) if env else ROOT.parent / "shared" / "reference"
    if not (path / "crds").is_dir():
        unavailable(f"no upstream schemas at {path} (set TRAINSPEC_REFERENCE to a shared/reference folder)")
    return path


def run_cli(*args: str, cwd: str | os.PathLike | None = None, env: dict | None = None,
            input: str | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "trainspec", *args], cwd=cwd, env=full_env, input=input,
                          capture_output=True, text=True, timeout=120)


def compiled_docs(target: str, spec_path) -> list[dict]:
    """The objects one target writes for a one-job spec, parsed back."""
    import yaml

    from trainspec.targets import load_plans, render

    (plan,) = load_plans(str(spec_path))
    return [d for text in render(target, plan).values() for d in yaml.safe_load_all(text) if d]
