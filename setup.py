"""The package list, derived from the tree so it cannot drift from the folders.

The design card keeps compiler/, targets/ and emulator/ at the top of the
repository; they install inside the `trainspec` package (never as generic
top-level names in site-packages). Every folder below them with an
`__init__.py` is a subpackage, and every other file below a package (chart
templates, JSON data) ships with it: a wheel holds the whole tree.
"""

from __future__ import annotations

import os

from setuptools import setup

# import name -> folder; the one place the layout is mapped.
PACKAGE_ROOTS = {
    "trainspec": "trainspec",
    "trainspec.compiler": "compiler",
    "trainspec.targets": "targets",
    "trainspec.emulator": "emulator",
}
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
