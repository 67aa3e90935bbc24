"""Every path a comment, a docstring or a doc names in this repository exists.

A comment that names a file the code has since moved away from sends its reader to the wrong place
(or nowhere); this keeps them honest. Scanned: the comments and docstrings of every Python file,
docs/*.md, bench/*.md, README.md and tests/README.md. A reference is `folder/more/name` (slashes
inside one word). The rules:

- one starting with one of this repository's top folders (OURS) must exist: a file or folder, or a
  module named without its `.py` (`compiler/loader`); one followed by `*` (`docs/targets-*.md`)
  must match something;
- any other one ending in `.py` is a module named from inside its package (`engine/pods.py` in the
  emulator's docs) and must end some file's path here, unless it is an upstream project's path
  (UPSTREAM: Kubernetes, Kubeflow, JobSet, Volcano, ... sources cited for a rule);
- what a user would type with their own files (EXAMPLES: `-o specs/new.yaml`) is not a reference.
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from pathlib import Path

from helpers import ROOT

OURS = frozenset({"bench", "cli", "cluster", "compiler", "docs", "emulator", "golden", "importer", "schema",
                  "scripts", "specs", "targets", "tests"})
# Upstream sources the code cites (each names the project's own path, not one of ours).
UPSTREAM = ("pkg/", "api/", "cmd/", "staging/", "third_party/", "kubeflow/", "k8s.io/", "sigs.k8s.io/",
            "python/paddle/", "torch/", "trainer/", "config/", "schedulers/")
# A user's own files in command examples: not files of this repository.
EXAMPLES = frozenset({"specs/x.yaml", "specs/new.yaml", "specs/job.yaml", "specs/a.yaml", "specs/gone.yaml",
                      "specs/mnist.yaml"})
# Stale references in files other work had open when the tests moved into folders; each is fixed there on
# merge (then its entry goes: an entry that no longer matches anything fails below).
PENDING: dict[tuple[str, str], str] = {}

SKIP_DIRS = frozenset({".git", ".venv", "venv", "build", "dist", "__pycache__", ".mypy_cache", ".ruff_cache",
                       ".pytest_cache", ".hypothesis", "node_modules"})
REFERENCE = re.compile(r"(?<![\w./$<{@:-])((?:[A-Za-z_][\w.-]*/)+[A-Za-z_][\w.-]*)(\*?)")


def _tree() -> tuple[set[str], list[str]]:
    """Every file and folder under ROOT (relative, with `/`), and the files alone."""
    paths: set[str] = set()
    files: list[str] = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")]
        rel = Path(folder).relative_to(ROOT).as_posix()
        if rel != ".":
            paths.add(rel)
        for name in names:
            path = name if rel == "." else f"{rel}/{name}"
            paths.add(path)
            files.append(path)
    return paths, files


def _python_texts(source: str):
    """(line, text) of each comment and each docstring line."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                for offset, line in enumerate(doc.splitlines()):
                    yield node.body[0].lineno + offset, line


def _references(text: str):
    """(reference, followed by `*`) of each path-like word; a sentence's full stop is not part of it."""
    for match in REFERENCE.finditer(text):
        yield match.group(1).rstrip("."), bool(match.group(2))


def _scanned(files: list[str]) -> list[str]:
    return sorted(f for f in files if f.endswith(".py") or f in {"README.md", "tests/README.md"}
                  or (f.endswith(".md") and f.count("/") == 1 and f.split("/")[0] in {"docs", "bench"}))


def _exists(reference: str, glob: bool, paths: set[str], files: list[str]) -> bool:
    if reference.split("/")[0] in OURS:
        if reference in EXAMPLES:
            return True
        if glob:
            return any(p.startswith(reference) for p in paths)
        module, _, attribute = reference.rpartition(".")
        # `pkg/module.name`: a module's attribute (a function, a class), as the comments name them
        return reference in paths or f"{reference}.py" in paths or bool(
            attribute.isidentifier() and f"{module}.py" in paths)
    if not reference.endswith(".py") or reference.startswith(UPSTREAM):
        return True
    return any(f == reference or f.endswith("/" + reference) for f in files)


def _stale() -> list[tuple[str, int, str]]:
    paths, files = _tree()
    found = []
    for name in _scanned(files):
        text = (ROOT / name).read_text(encoding="utf-8")
        lines = _python_texts(text) if name.endswith(".py") else enumerate(text.splitlines(), 1)
        for line, words in lines:
            for reference, glob in _references(words):
                if not _exists(reference, glob, paths, files):
                    found.append((name, line, reference))
    return found


def test_every_path_named_in_comments_and_docs_exists():
    stale = [(name, line, ref) for name, line, ref in _stale() if (name, ref) not in PENDING]
    assert not stale, "paths that do not exist (moved or renamed? fix the reference):\n" + "\n".join(
        f"  {name}:{line}: {ref}" for name, line, ref in stale)


def test_pending_entries_are_still_needed():
    still = {(name, ref) for name, _, ref in _stale()}
    assert not set(PENDING) - still, f"fixed, remove from PENDING: {sorted(set(PENDING) - still)}"


def test_the_check_sees_a_stale_reference():
    """The scanner finds a reference in a comment, a docstring and a doc, and tells a real path from a stale one."""
    source = '"""Module doc naming compiler/gone.py."""\n# a comment naming emulator/engine/pods.py and cli/importer\n'
    references = [ref for _, text in _python_texts(source) for ref, _ in _references(text)]
    assert sorted(references) == ["cli/importer", "compiler/gone.py", "emulator/engine/pods.py"]
    paths, files = _tree()
    assert _exists("emulator/engine/pods.py", False, paths, files)
    assert _exists("engine/pods.py", False, paths, files)  # named from inside its package
    assert _exists("compiler/loader", False, paths, files)  # a module without its suffix
    assert _exists("docs/targets-", True, paths, files)
    assert not _exists("compiler/gone.py", False, paths, files)
    assert not _exists("cli/importer", False, paths, files)
    assert not _exists("engine/gone.py", False, paths, files)
    assert _exists("pkg/controller/jobset/jobset_controller.go", False, paths, files)
