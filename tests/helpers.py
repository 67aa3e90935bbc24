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
def on_runtime(path: str | os.PathLike) -> bool:
    """A spec v1.3 job on the cluster's Trainer runtime (spec.trainjob): without the runtime's definition
    (--runtime) only the trainjob target writes it (tests/importer/test_trainjob_on_runtime.py, test_runtime_expansion.py)."""
    import yaml

    doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    return isinstance(doc, dict) and "trainjob" in (doc.get("spec") or {})


def runtime_excludes() -> list[str]:
    """`build` options leaving out the example specs on a Trainer runtime (for a --target they cannot take)."""
    return [arg for p in sorted(SPECS.glob("*.yaml")) if on_runtime(p) for arg in ("--exclude", p.name)]


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


# Commands that read and write only files and their standard streams: run_cli calls their main() in the
# test's own process, as click's CliRunner does (a new interpreter costs more than most of these commands).
# `run`, `apply` and the cluster and emulator commands start threads, processes and signal handlers of
# their own, so they always get a process of their own.
IN_PROCESS = frozenset({"validate", "compile", "build", "diff", "graph", "import", "migrate", "schema"})


def run_cli(*args: str, cwd: str | os.PathLike | None = None, env: dict | None = None,
            input: str | None = None) -> subprocess.CompletedProcess:
    """`trainspec ARGS...`: its exit status and what it printed.

    In a process of its own when `env` is given (the limits read their variables at import), for a
    Jsonnet input (evaluated in a forked child), for commands outside IN_PROCESS, and for every command
    under TRAINSPEC_TEST_SUBPROCESS=1; otherwise main() runs here, with its own working folder,
    standard streams and argv for the call.
    """
    words = [str(a) for a in args]
    command = next((w for w in words if not w.startswith("-")), None)
    if env or command not in IN_PROCESS or any(w.endswith(".jsonnet") for w in words) \
            or os.environ.get("TRAINSPEC_TEST_SUBPROCESS") == "1":
        full_env = dict(os.environ)
        full_env.update(env or {})
        return subprocess.run([sys.executable, "-m", "trainspec", *words], cwd=cwd, env=full_env, input=input,
                              capture_output=True, text=True, timeout=120)
    return _in_process(words, cwd, input)


def _in_process(words: list[str], cwd: str | os.PathLike | None, input: str | None) -> subprocess.CompletedProcess:
    import io

    from trainspec.cli import main

    common = sys.modules.get("trainspec.targets.common")
    if common is not None:  # what a process says once it says once per command here
        common._WARNED.clear()
    out, err = io.BytesIO(), io.BytesIO()
    streams = (io.TextIOWrapper(io.BytesIO((input or "").encode()), encoding="utf-8"),
               io.TextIOWrapper(out, encoding="utf-8", write_through=True),
               io.TextIOWrapper(err, encoding="utf-8", write_through=True))
    saved = (sys.stdin, sys.stdout, sys.stderr, sys.argv, os.getcwd())
    try:
        sys.stdin, sys.stdout, sys.stderr = streams
        sys.argv = ["trainspec", *words]
        if cwd is not None:
            os.chdir(cwd)
        try:
            code = main(words)
        except SystemExit as exc:  # argparse's usage errors and --help
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        for stream in streams[1:]:
            stream.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr, sys.argv = saved[:4]
        os.chdir(saved[4])
    return subprocess.CompletedProcess(["trainspec", *words], code, out.getvalue().decode("utf-8", "replace"),
                                       err.getvalue().decode("utf-8", "replace"))


def plan_text(text: str, targets: tuple[str, ...] | None = None, name: str = "job.yaml") -> list:
    """Every job of a spec's YAML or JSON text, planned as a file named `name` would be (its errors name
    it), with no file written: the Python API's planning (`trainspec.loads` with the targets to plan for)."""
    from trainspec.api import plan_source
    from trainspec.compiler.loader import from_text

    return plan_source(name, documents=from_text(name, text), targets=targets)


def compiled_docs(target: str, spec_path) -> list[dict]:
    """The objects one target writes for a one-job spec, parsed back."""
    import yaml

    from trainspec.targets import load_plans, render

    (plan,) = load_plans(str(spec_path))
    return [d for text in render(target, plan).values() for d in yaml.safe_load_all(text) if d]
