"""`trainspec build`: compile many specs to OUT/<job>/, remembering what it wrote.

A build cache (outside OUT, so it never lands in a repository) records, per spec,
a fingerprint of its input (spec bytes, targets, Jsonnet options and trainspec's
own code) and the digest of every file it produced.  An unchanged spec whose
files still have those digests (read again, never trusted from size and mtime)
is not compiled again; anything else is, so the cache can only save work, never
change a result.

OUT/.trainspec.build (the marker) lists the job folders builds wrote and the spec
each came from: folder walks skip any folder holding one, and a listed folder
whose spec is gone is an orphan that `build` removes and `--check` reports.
Folders not listed are never touched.  One build at a time holds OUT (flock).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from trainspec.inputs import MARKER, SpecInput

CACHE_VERSION = 2
MARKER_NOTE = ("Written by `trainspec build`: the job folders it owns and their specs (relative to this "
               "folder). A listed folder whose spec is gone is removed by the next build.")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tool_digest() -> str:
    """A digest of trainspec's own code: a new version invalidates every cached result."""
    import trainspec
    import trainspec.compiler
    import trainspec.targets

    h = hashlib.sha256()
    for package in (trainspec, trainspec.compiler, trainspec.targets):
        root = Path(str(package.__file__)).parent
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix in (".py", ".tpl", ".json", ".txt", ".yaml"):
                h.update(str(path.relative_to(root)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


def files_digest(paths: list[str]) -> str:
    """The bytes of these files and of the files in these folders (sorted), for the cache's salt."""
    parts: list[bytes] = []
    for path in paths:
        names = [os.path.join(path, f) for f in sorted(os.listdir(path))] if os.path.isdir(path) else [path]
        for name in names:
            try:
                with open(name, "rb") as handle:
                    parts.append(name.encode() + b"\0" + handle.read())
            except OSError:
                parts.append(name.encode() + b"\0?")  # unreadable: loading says so
    return _digest(b"\0\0".join(parts))


def cache_path(out_dir: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    key = _digest(os.path.realpath(out_dir).encode())[:24]
    return Path(base) / "trainspec" / f"build-{key}.json"


@dataclass
class SpecOutput:
    path: str
    jobs: list[str]
    digests: dict[str, str]  # file relative to OUT -> sha256 of its text
    owned: list[str]  # folders whose whole contents this spec owns (helm charts)
    texts: dict[str, str] | None = None  # None when taken from the cache and not compiled


@dataclass
class Build:
    out_dir: str
    outputs: list[SpecOutput] = field(default_factory=list)

    def expected(self) -> dict[str, str]:
        return {rel: digest for out in self.outputs for rel, digest in out.digests.items()}

    def owned(self) -> set[str]:
        return {folder for out in self.outputs for folder in out.owned}


class BuildCache:
    def __init__(self, out_dir: str, salt: str, enabled: bool = True):
        self.path = cache_path(out_dir)
        self.out_dir = out_dir
        self.salt = salt
        self.enabled = enabled
        self.entries: dict[str, dict] = {}
        if enabled:
            try:
                data = json.loads(self.path.read_text())
                if data.get("version") == CACHE_VERSION and data.get("salt") == salt:
                    self.entries = data.get("entries", {})
            except (OSError, ValueError, AttributeError):
                self.entries = {}

    def key(self, spec: SpecInput) -> str | None:
        if spec.path.endswith(".jsonnet"):
            return None  # its imports are inputs too; always compiled
        try:
            with open(spec.path, "rb") as handle:
                # A walked file skips other tools' documents; a named one validates them: not the same result.
                return _digest(handle.read() + (b"|walked" if spec.walked else b"|named"))
        except OSError:
            return None

    def lookup(self, spec_path: str, key: str | None) -> dict | None:
        entry = self.entries.get(os.path.abspath(spec_path))
        if not self.enabled or key is None or not entry or entry.get("key") != key:
            return None
        from trainspec.output import digests_in

        if digests_in(self.out_dir, entry["files"]) != entry["files"]:
            return None  # someone changed or removed an output: compile and compare for real
        if entry["owned"]:
            from trainspec.output import owned_extras

            for folder in entry["owned"]:
                if owned_extras(self.out_dir, folder, set(entry["files"])):
                    return None  # a stray file in a chart folder: let the real comparison report it
        return entry

    def record(self, build: Build, keys: dict[str, str | None]) -> None:
        if not self.enabled:
            return
        for out in build.outputs:
            key = keys.get(out.path)
            if key is None:
                continue
            files = dict(out.digests)
            self.entries[os.path.abspath(out.path)] = {"key": key, "jobs": out.jobs, "owned": out.owned,
                                                       "files": files}
        try:
            from trainspec.output import write_atomic

            write_atomic(str(self.path), json.dumps({"version": CACHE_VERSION, "salt": self.salt,
                                                     "entries": self.entries}, sort_keys=True))
        except OSError:
            pass  # a cache we cannot write only costs time


def compile_spec(path: str, targets: tuple[str, ...], load, skip_unsupported: bool = False) -> SpecOutput:
    """Every job of one spec file rendered for `targets`; `load(path)` gives its plans.

    With skip_unsupported, a target that cannot run a job at all (`JobPlan.unsupported`, from
    its checks.py) is left out for that job; `load` must then not raise that target's problems.
    """
    from trainspec.api import Job
    from trainspec.targets import unsupported

    plans = load(path)
    texts: dict[str, str] = {}
    owned: list[str] = []
    for plan in plans:
        job = Job(plan)
        for target in targets:
            if skip_unsupported and unsupported(target, plan):
                continue
            for rel, text in job.compile(target).items():  # the Python API's compile: the same bytes
                texts[os.path.join(plan.name, rel)] = text
            if target == "helm":
                owned.append(os.path.join(plan.name, "helm"))
    digests = {rel: _digest(text.encode("utf-8")) for rel, text in texts.items()}
    return SpecOutput(path, [plan.name for plan in plans], digests, owned, texts)


def run_build(specs: list[SpecInput], out_dir: str, targets: tuple[str, ...], load, options_text: str,
              use_cache: bool = True,
              skip_unsupported: bool = False) -> tuple[Build, BuildCache, dict[str, str | None]]:
    """Compile (or take from the cache) every spec; raises SpecErrors with all problems."""
    from trainspec.compiler import SpecError, SpecErrors

    salt = _digest(f"{tool_digest()}|{','.join(targets)}|{skip_unsupported}|{options_text}".encode())
    cache = BuildCache(out_dir, salt, use_cache)
    build = Build(out_dir)
    keys: dict[str, str | None] = {}
    errors: list[SpecError] = []
    seen: dict[str, str] = {}
    for spec in specs:
        path = spec.path
        key = cache.key(spec)
        keys[path] = key
        entry = cache.lookup(path, key)
        if entry is not None:
            out = SpecOutput(path, entry["jobs"], dict(entry["files"]), entry["owned"])
        else:
            try:
                out = compile_spec(path, targets, lambda _path, spec=spec: load(spec), skip_unsupported)
            except SpecErrors as exc:
                errors.extend(exc.errors)
                continue
        duplicate = False
        for job in out.jobs:
            if job in seen:
                errors.append(SpecError(path, 1, 1, "metadata.name", f"job {job!r} is also defined in {seen[job]}",
                                        "unique job names across the build", "rename one of the jobs"))
                duplicate = True
            seen[job] = path
        if not duplicate:
            build.outputs.append(out)
    if errors:
        raise SpecErrors(errors)
    return build, cache, keys


# --- the marker: which job folders builds own ------------------------------------------

def _marker_data(out_dir: str) -> dict:
    from trainspec.output import read_in

    text = read_in(out_dir, MARKER)
    if not isinstance(text, str):
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def read_marker(out_dir: str) -> dict[str, str]:
    """job -> its spec's path relative to OUT, as the last build recorded it ({} without a marker)."""
    jobs = _marker_data(out_dir).get("jobs", {})
    if not isinstance(jobs, dict):
        return {}
    return {job: spec for job, spec in jobs.items()
            if isinstance(job, str) and isinstance(spec, str) and job and os.sep not in job and job[0] != "."}


def read_marker_options(out_dir: str) -> dict[str, dict]:
    """job -> the options (--target, --tla, --ext-var, -J) its last build was given; absent: none."""
    options = _marker_data(out_dir).get("options", {})
    if not isinstance(options, dict):
        return {}
    return {job: value for job, value in options.items() if isinstance(job, str) and isinstance(value, dict)}


def build_options(targets: list[str], spec_options: dict) -> dict:
    """What a build was given beyond its inputs, defaults left out (a plain build records nothing)."""
    given = {"target": list(dict.fromkeys(targets)), **spec_options}
    return {name: value for name, value in given.items() if value}


def options_words(options: dict) -> str:
    """The command-line options `options` stands for, e.g. `--target k8s --tla size=4`, or `no options`."""
    words = [f"--target {t}" for t in options.get("target", [])]
    words += [f"--tla {k}={v}" for k, v in sorted(options.get("tla", {}).items())]
    words += [f"--ext-var {k}={v}" for k, v in sorted(options.get("ext_vars", {}).items())]
    words += [f"-J {p}" for p in options.get("jpath", [])]
    return " ".join(words) or "no options"


def marker_text(jobs: dict[str, str], options: dict[str, dict] | None = None) -> str:
    data: dict = {"note": MARKER_NOTE, "jobs": dict(sorted(jobs.items()))}
    options = {job: value for job, value in (options or {}).items() if value and job in jobs}
    if options:  # left out when every job was built plainly: such a marker reads as before
        data["options"] = dict(sorted(options.items()))
    return json.dumps(data, indent=2, sort_keys=False) + "\n"


def marker_options(out_dir: str, build: Build, marker: dict[str, str], current: dict,
                   keep_recorded: bool = False) -> dict[str, dict]:
    """Per job in the new marker: this build's options for its jobs, the recorded ones for jobs it kept
    (keep_recorded: for every job the marker already lists)."""
    built = {job for out in build.outputs for job in out.jobs}
    old = read_marker_options(out_dir)
    listed = read_marker(out_dir) if keep_recorded else {}
    return {job: (current if job in built and job not in listed else old.get(job, {})) for job in marker}


def ownership(out_dir: str, build: Build, specs: list[SpecInput]) -> tuple[dict[str, str], dict[str, str]]:
    """(the marker after this build, orphans: job -> spec that no longer makes it)."""
    old = read_marker(out_dir)
    new = {job: os.path.relpath(out.path, out_dir).replace(os.sep, "/") for out in build.outputs for job in out.jobs}
    read_now = {os.path.realpath(spec.path) for spec in specs}
    orphans: dict[str, str] = {}
    for job, rel in old.items():
        if job in new:
            continue
        spec = os.path.realpath(os.path.join(out_dir, rel))
        if spec in read_now or not os.path.isfile(spec):
            if os.path.isdir(os.path.join(out_dir, job)) and not os.path.islink(os.path.join(out_dir, job)):
                orphans[job] = rel
        else:
            new[job] = rel  # built from a spec this run did not read: still owned, left alone
    return new, orphans


@contextmanager
def locked(out_dir: str, exclusive: bool = True):
    """Hold OUT for this build; a second build into the same OUT waits here (and says so)."""
    import fcntl

    try:
        fd = os.open(out_dir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except FileNotFoundError:
        yield  # --check of an OUT that is not there: nothing to guard
        return
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"trainspec: waiting for another build into {out_dir} to finish", file=sys.stderr)
            fcntl.flock(fd, mode)
        yield
    finally:
        os.close(fd)  # releases the lock
