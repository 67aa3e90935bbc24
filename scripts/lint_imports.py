#!/usr/bin/env python3
"""Run import-linter (`lint-imports`) over the `trainspec` package as it is installed.

The checkout maps folders into the package (pyproject.toml's package-dir: cli/ is `trainspec`,
compiler/ is `trainspec.compiler`, ...), but grimp finds a package's modules by walking its
one folder. So this lays the package out as a wheel would (the .py files only, in a temporary
folder), puts that first on the path, and runs the contracts of pyproject.toml against it.

    python scripts/lint_imports.py [lint-imports options]     # exit status: lint-imports'
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def lay_out(dest: Path) -> None:
    """Copy every package folder's .py files to where the wheel puts them."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for package, folder in mapping.items():
        target = dest.joinpath(*package.split("."))
        for src in (ROOT / folder).rglob("*.py"):
            rel = src.relative_to(ROOT / folder)
            if rel.parts[0] in mapping.values() or "__pycache__" in rel.parts:
                continue
            out = target / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, out)


def main(argv: list[str]) -> int:
    lint = shutil.which("lint-imports", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                             os.environ.get("PATH", "")]))
    if lint is None:
        print("lint_imports.py: lint-imports not found (pip install -e '.[dev]')", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="trainspec-lint-imports-") as tmp:
        lay_out(Path(tmp))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([tmp, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
        return subprocess.call([lint, str(ROOT / "pyproject.toml"), "--no-cache", *argv],
                               cwd=tmp, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
