"""The layer rules, as import-linter contracts (pyproject.toml [tool.importlinter]).

They replace hand-written AST walks: every import counts (module-level, function-level,
TYPE_CHECKING), indirect chains included where the contract says so.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "lint_imports.py"


def _lint(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False,
                          timeout=300)


@pytest.fixture(scope="module", autouse=True)
def _needs_import_linter():
    if shutil.which("lint-imports", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("import-linter is not installed (the dev extra: pip install -e '.[dev]')")


def test_every_import_contract_is_kept():
    r = _lint()
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_the_contracts_can_fail(tmp_path):
    """A model module that imports the engine breaks the emulator's layers contract (the check is live)."""
    spec = importlib.util.spec_from_file_location("lint_imports", SCRIPT)
    assert spec and spec.loader
    lint = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lint)
    lint.lay_out(tmp_path)
    job = tmp_path / "trainspec" / "emulator" / "model" / "job.py"
    job.write_text(job.read_text() + "\n\ndef _upward():\n    from ..engine import run  # noqa: F401\n")
    lint_bin = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    r = subprocess.run([lint_bin, str(ROOT / "pyproject.toml"), "--no-cache"], cwd=tmp_path, capture_output=True,
                       text=True, check=False, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
                       timeout=300)
    assert r.returncode == 1, r.stdout[-3000:]
    assert "trainspec.emulator.model.job -> trainspec.emulator.engine.run" in r.stdout


def test_docker_outside_the_adapters_breaks_a_contract(tmp_path):
    """An engine module that imports docker itself (even inside a function) breaks the adapters' contract:
    only emulator/adapters may speak to the engine's client."""
    spec = importlib.util.spec_from_file_location("lint_imports", SCRIPT)
    assert spec and spec.loader
    lint = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lint)
    lint.lay_out(tmp_path)
    pods = tmp_path / "trainspec" / "emulator" / "engine" / "pods.py"
    pods.write_text(pods.read_text() + "\n\ndef _direct():\n    import docker.errors  # noqa: F401\n")
    lint_bin = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    r = subprocess.run([lint_bin, str(ROOT / "pyproject.toml"), "--no-cache"], cwd=tmp_path, capture_output=True,
                       text=True, check=False, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
                       timeout=300)
    assert r.returncode == 1, r.stdout[-3000:]
    out = " ".join(r.stdout.split())  # the report wraps long contract names
    assert "Only the emulator's engine adapters import docker (and requests, its transport) BROKEN" in out, out[-3000:]
    assert "trainspec.emulator.engine.pods -> docker" in out


def test_no_emulator_module_uses_another_modules_private_names():
    """What import-linter cannot check: a name with a leading underscore stays in its module. An emulator
    module neither imports one from another (`from .x import _y`) nor reaches one through a module it
    imported (`x._y(...)`): what another module needs is public, or lives where it is used."""
    import ast

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__")

    found = []
    for path in sorted((ROOT / "emulator").rglob("*.py")):
        tree = ast.parse(path.read_text())
        ours: set[str] = set()  # names bound to the project's own modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("trainspec")):
                found += [f"{path.relative_to(ROOT)}:{node.lineno}: imports {a.name}" for a in node.names
                          if private(a.name)]
                ours.update(a.asname or a.name for a in node.names)
            elif isinstance(node, ast.Import):
                ours.update((a.asname or a.name).split(".")[0] for a in node.names if a.name.startswith("trainspec"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and private(node.attr) and isinstance(node.value, ast.Name) \
                    and node.value.id in ours:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: uses {node.value.id}.{node.attr}")
    assert not found, "\n".join(found)
