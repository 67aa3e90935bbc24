"""Which files a command reads as specs: standard input, named files, and folder walks.

A folder walk is a guess about what is a spec, so it is forgiving: documents of
other tools (a kustomization.yaml, a CI file) are skipped, and so is any folder a
build wrote (it holds the build's marker file) and OUT itself.  A file named on
the command line is what the user asked for, so every document in it is validated.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from typing import NamedTuple

STDIN = "-"
STDIN_NAME = "<stdin>"
MARKER = ".trainspec.build"  # in OUT: the job folders a build wrote (see cli/build.py)
SPEC_SUFFIXES = (".yaml", ".yml", ".json", ".jsonnet")


class SpecInput(NamedTuple):  # not a dataclass: `dataclasses` costs start-up
    path: str
    walked: bool  # found by walking a folder: other tools' documents are skipped, not errors


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _excluded(patterns: list[str], root: str, path: str) -> bool:
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    candidates = (rel, os.path.basename(path), path, os.path.join(root, rel).replace(os.sep, "/"))
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if any(fnmatch.fnmatchcase(c, pattern) for c in candidates):
            return True
    return False


def walk(root: str, out_dir: str | None, excludes: list[str]) -> list[str]:
    """Spec-like files under root, sorted; skips hidden names, --exclude matches, OUT and marked folders."""
    out_real = os.path.realpath(out_dir) if out_dir else None
    found: list[str] = []
    if is_chart(root):
        return found

    def unreadable(error: OSError) -> None:
        # A folder skipped silently would make `build` remove its jobs' output as orphans.
        from trainspec.compiler import UsageError

        raise UsageError(f"{error.filename}: cannot read this folder ({error.strerror}); "
                         "fix its permissions or leave it out with --exclude")

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable):
        keep = []
        for name in sorted(dirnames):
            path = os.path.join(dirpath, name)
            if name.startswith(".") or _excluded(excludes, root, path):
                continue
            if os.path.realpath(path) == out_real or os.path.isfile(os.path.join(path, MARKER)):
                continue  # a build's output is never read back as specs
            if is_chart(path):
                continue  # a Helm chart: its templates are Go templates, not specs
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if name.lower().endswith(SPEC_SUFFIXES) and not name.startswith(".") \
                    and not _excluded(excludes, root, path):
                found.append(path)
    return found


def collect(inputs: list[str], out_dir: str | None = None, excludes: list[str] | None = None) -> list[SpecInput]:
    """The spec files of a build; a UsageError for a missing input or an OUT that overlaps a spec folder."""
    from trainspec.compiler import UsageError

    excludes = excludes or []
    out_real = os.path.realpath(out_dir) if out_dir else None
    specs: list[SpecInput] = []
    for item in inputs:
        if item == STDIN:
            raise UsageError("`build` reads files and folders; use `trainspec compile -` for standard input")
        real = os.path.realpath(item)
        if os.path.isdir(item):
            if out_real and _inside(real, out_real):
                raise UsageError(f"the output folder {out_dir} is (or contains) the spec folder {item}: "
                                 "a build would read its own output; choose another -o")
            if is_chart(item):
                raise UsageError(f"{item} is a Helm chart folder, not a folder of specs "
                                 f"(`helm template {item}` renders it, `trainspec run {item}` runs it)")
            # OUT inside the folder is fine: the walk skips it (and every folder holding a marker).
            found = walk(item, out_dir, excludes)
            if not found:
                raise UsageError(f"{item}: no spec files (*.yaml, *.yml, *.json, *.jsonnet)")
            specs.extend(SpecInput(path, True) for path in found)
        elif os.path.exists(item):
            specs.append(SpecInput(item, False))
        else:
            raise UsageError(f"{item}: no such file or folder")
    return specs


def in_build_output(path: str) -> bool:
    """Whether a file lies inside a folder some build wrote (a parent holds the marker)."""
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.isfile(os.path.join(folder, MARKER)):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def is_trainspec(data) -> bool:
    version = data.get("apiVersion") if isinstance(data, dict) else None
    return isinstance(version, str) and version.startswith("trainspec/")


def _squash(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


def _close(text: str, word: str) -> bool:
    """At most two edits (or a swap of two letters) from `word`: a typo, not another name.
    A few lines instead of difflib, which a folder walk would import for every other file."""
    if abs(len(text) - len(word)) > 2:
        return False
    if sorted(text) == sorted(word):
        return True
    previous = list(range(len(word) + 1))
    for i, a in enumerate(text, 1):
        current = [i]
        for j, b in enumerate(word, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1] <= 2


def looks_like_trainspec(data) -> bool:
    """A document meant as a spec even if its apiVersion or kind is mistyped.

    Skipping it would be silent data loss: `build` would remove its job's output as an
    orphan.  So `kind: TrainingJob` with an apiVersion naming trainspec in any spelling
    (trainspec.dev/v1, TrainSpec/v1, trainpsec/v1) or none at all, and any kind under a
    trainspec-like apiVersion, are validated (and fail with a hint), never skipped; so is a
    TrainingJob under a group-less apiVersion (`v1`).
    Another tool's TrainingJob (e.g. sagemaker.aws.amazon.com/v1) is still skipped.
    """
    if not isinstance(data, dict):
        return False
    if is_trainspec(data):
        return True
    version, kind = data.get("apiVersion"), data.get("kind")
    group = version.rpartition("/")[0] if isinstance(version, str) else ""
    if isinstance(version, str) and version.strip():
        squashed = _squash(group or version)
        if "trainspec" in squashed or _close(squashed, "trainspec"):
            return True
    if isinstance(kind, str) and _squash(kind) in ("trainingjob", "trainspec"):
        # no apiVersion, or one without a group (`v1`: the core API has no TrainingJob): a spec's typo
        return not group.strip()
    return False


def in_chart(path: str) -> bool:
    """Whether a file lies inside a Helm chart folder (a parent holds Chart.yaml beside templates/)."""
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        if is_chart(folder):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def chart_holding(path: str) -> str | None:
    """The Helm chart folder a file belongs to (relative to the working folder): its Chart.yaml,
    values files and values.schema.json, or anything below its templates/ or charts/; else None.
    Other files inside a chart folder may be anything, so they are not claimed."""
    full = os.path.abspath(path)
    parent, name = os.path.dirname(full), os.path.basename(full)
    if is_chart(parent) and (name in ("Chart.yaml", "values.schema.json")
                             or (name.startswith("values") and name.endswith((".yaml", ".yml")))):
        return os.path.relpath(parent)
    while os.path.basename(parent) not in ("templates", "charts"):
        if os.path.dirname(parent) == parent:
            return None
        parent = os.path.dirname(parent)
    return os.path.relpath(os.path.dirname(parent)) if is_chart(os.path.dirname(parent)) else None


def chart_file_error(path: str, shown: str | None = None):
    """A named file of a Helm chart is not a spec: one line that says so, instead of its YAML or
    field errors (a template is Go text, values.yaml has none of a spec's fields); None otherwise."""
    from trainspec.compiler import SpecError, SpecErrors

    chart = chart_holding(path)
    if chart is None:
        return None
    return SpecErrors([SpecError(shown or path, 1, 1, "", f"a file of the Helm chart {chart}, not a spec",
                                 "a trainspec spec (apiVersion: trainspec/v1)",
                                 f"`trainspec run {chart}` runs the chart, `helm lint {chart}` checks it; "
                                 "validate --only-specs (the pre-commit hook) skips chart files")])


def is_chart(folder: str) -> bool:
    """A Helm chart (`compile --target helm -o charts/x`): its templates are Go templates, not specs."""
    return os.path.isfile(os.path.join(folder, "Chart.yaml")) and os.path.isdir(os.path.join(folder, "templates"))


def read_stdin_text() -> str:
    """Standard input as text, at most a spec file's size; errors name the file `<stdin>`."""
    from trainspec.compiler import SpecError, SpecErrors
    from trainspec.compiler.loader import MAX_FILE_BYTES

    raw = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise SpecErrors([SpecError(STDIN_NAME, 1, 1, "", "input is too large", f"at most {MAX_FILE_BYTES} bytes")])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise SpecErrors([SpecError(STDIN_NAME, line, 1, "", f"byte 0x{raw[exc.start]:02x} is not UTF-8",
                                    "UTF-8 text")]) from None


def read_stdin_documents():
    """The documents of a spec piped in; errors name the file `<stdin>`."""
    from trainspec.compiler.loader import from_text

    return from_text(STDIN_NAME, read_stdin_text())


def walked_documents(path: str, options, warn) -> list:
    """A walked file's trainspec documents; others skipped (warn(file, line, message) when no apiVersion)."""
    from trainspec.compiler.loader import load_file

    docs = load_file(path, options)
    keep = []
    for doc in docs:
        if looks_like_trainspec(doc.data):
            keep.append(doc)  # a mistyped apiVersion or kind is an error, never a skip
        elif not (isinstance(doc.data, dict) and "apiVersion" in doc.data):
            line = doc.positions.get((), (1, 1))[0] if doc.positions else 1
            warn(path, line, "skipped a document with no apiVersion (not a trainspec spec; "
                             "name the file to validate it)")
    return keep
