"""`trainspec build`: compile many specs to OUT/<job>/, remembering what it wrote.

A build cache (outside OUT, so it never lands in a repository) records, per spec,
a fingerprint of its input (spec bytes, targets, Jsonnet options and trainspec's
own code) and the digest and stat of every file it produced.  An unchanged spec
whose files are still on disk as written is not compiled again; anything else
is, so the cache can only save work, never change a result.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

CACHE_VERSION = 1


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tool_digest() -> str:
    """A digest of trainspec's own code: a new version invalidates every cached result."""
    import trainspec
    import trainspec.compiler
    import trainspec.targets

    h = hashlib.sha256()
    for package in (trainspec, trainspec.compiler, trainspec.targets):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix in (".py", ".tpl", ".json", ".txt", ".yaml"):
                h.update(str(path.relative_to(root)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()


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


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


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

    def key(self, spec_path: str) -> str | None:
        if spec_path.endswith(".jsonnet"):
            return None  # its imports are inputs too; always compiled
        try:
            with open(spec_path, "rb") as handle:
                return _digest(handle.read())
        except OSError:
            return None

    def lookup(self, spec_path: str, key: str | None) -> dict | None:
        entry = self.entries.get(os.path.abspath(spec_path))
        if not self.enabled or key is None or not entry or entry.get("key") != key:
            return None
        for rel, recorded in entry["files"].items():
            if _stat(os.path.join(self.out_dir, rel)) != recorded[1]:
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
            files = {rel: [digest, _stat(os.path.join(self.out_dir, rel))] for rel, digest in out.digests.items()}
            self.entries[os.path.abspath(out.path)] = {"key": key, "jobs": out.jobs, "owned": out.owned,
                                                       "files": files}
        try:
            from trainspec.output import write_atomic

            write_atomic(str(self.path), json.dumps({"version": CACHE_VERSION, "salt": self.salt,
                                                     "entries": self.entries}, sort_keys=True))
        except OSError:
            pass  # a cache we cannot write only costs time


def compile_spec(path: str, targets: tuple[str, ...], load, skip_unsupported: bool = True) -> SpecOutput:
    """With skip_unsupported, a target that cannot express a job's framework at all is left out for it."""
    from trainspec.targets import render, unsupported

    plans = load(path)
    texts: dict[str, str] = {}
    owned: list[str] = []
    for plan in plans:
        for target in targets:
            if skip_unsupported and unsupported(target, plan):
                continue
            for rel, text in render(target, plan).items():
                texts[os.path.join(plan.name, rel)] = text
            if target == "helm":
                owned.append(os.path.join(plan.name, "helm"))
    digests = {rel: _digest(text.encode("utf-8")) for rel, text in texts.items()}
    return SpecOutput(path, [plan.name for plan in plans], digests, owned, texts)


def run_build(paths: list[str], out_dir: str, targets: tuple[str, ...], load, options_text: str,
              use_cache: bool = True, skip_unsupported: bool = True) -> tuple[Build, BuildCache, dict[str, str | None]]:
    """Compile (or take from the cache) every spec; raises SpecErrors with all problems."""
    from trainspec.compiler import SpecError, SpecErrors

    salt = _digest(f"{tool_digest()}|{','.join(targets)}|{skip_unsupported}|{options_text}".encode())
    cache = BuildCache(out_dir, salt, use_cache)
    build = Build(out_dir)
    keys: dict[str, str | None] = {}
    errors: list[SpecError] = []
    seen: dict[str, str] = {}
    for path in paths:
        key = cache.key(path)
        keys[path] = key
        entry = cache.lookup(path, key)
        if entry is not None:
            out = SpecOutput(path, entry["jobs"], {rel: f[0] for rel, f in entry["files"].items()}, entry["owned"])
        else:
            try:
                out = compile_spec(path, targets, load, skip_unsupported)
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
