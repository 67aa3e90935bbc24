"""The package list, derived from the tree so it cannot drift from the folders.

pyproject.toml's `[tool.setuptools.package-dir]` maps the top-level folders into
the `trainspec` package. Every folder below them with an `__init__.py` is a
subpackage, and every other file below a package (chart templates, JSON data)
ships with it: a wheel holds the whole tree.
"""

from __future__ import annotations

import os
import sys

from setuptools import setup

if sys.version_info >= (3, 11):
    import tomllib
else:  # setuptools reads pyproject.toml with its own vendored copy on 3.10
    from setuptools.extern import tomli as tomllib  # type: ignore[import-not-found]

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyproject.toml"), "rb") as f:
    PACKAGE_ROOTS: dict[str, str] = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


def _walk(name: str, folder: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    package_dir: dict[str, str] = {}
    package_data: dict[str, list[str]] = {}
    owner: dict[str, str] = {}  # folder -> the package that owns the files in it
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        rel = os.path.relpath(root, folder)
        if "__init__.py" in files:
            pkg = name if rel == "." else name + "." + rel.replace(os.sep, ".")
            package_dir[pkg] = root
            owner[root] = pkg
        else:
            parent = os.path.dirname(root)
            if parent not in owner:
                continue  # a folder below no package is not part of the distribution
            owner[root] = owner[parent]
        pkg = owner[root]
        for f in sorted(files):
            if f.endswith(".py") or f.endswith(_SKIP_SUFFIXES):
                continue
            path = os.path.relpath(os.path.join(root, f), package_dir[pkg])
            package_data.setdefault(pkg, []).append(path.replace(os.sep, "/"))
    return package_dir, package_data


def _layout() -> tuple[dict[str, str], dict[str, list[str]]]:
    package_dir: dict[str, str] = {}
    package_data: dict[str, list[str]] = {}
    for name, folder in PACKAGE_ROOTS.items():
        dirs, data = _walk(name, folder)
        # trainspec/ itself must not claim the mapped folders' names.
        package_dir.update({k: v for k, v in dirs.items() if k not in package_dir})
        package_data.update(data)
    return package_dir, package_data


PACKAGE_DIR, PACKAGE_DATA = _layout()

setup(
    packages=sorted(PACKAGE_DIR),
    package_dir=PACKAGE_DIR,
    package_data=PACKAGE_DATA,
    include_package_data=False,
)
