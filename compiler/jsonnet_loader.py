"""Evaluate a `.jsonnet` spec to JSON text, with imports confined to known folders."""

from __future__ import annotations

import os
import re

from .errors import SpecError, SpecErrors

_LOCATION = re.compile(r"(?P<file>[^\s:]+):(?P<line>\d+):(?P<col>\d+)")


def _confined(path: str, roots: list[str]) -> bool:
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root + os.sep) for root in roots)


def evaluate(path: str, options) -> str:
    import _jsonnet

    spec_dir = os.path.dirname(os.path.abspath(path))
    roots = [os.path.realpath(spec_dir)] + [os.path.realpath(d) for d in options.jpath]

    def import_callback(base: str, rel: str):
        # Search the importing file's folder first, then -J folders, as jsonnet does;
        # anything that resolves outside the allowed roots is refused.
        candidates = [rel] if os.path.isabs(rel) else [os.path.join(base, rel)] + [
            os.path.join(d, rel) for d in options.jpath]
        for candidate in candidates:
            if os.path.isfile(candidate):
                if not _confined(candidate, roots):
                    raise RuntimeError(f"import {rel!r} is outside the spec's folder and the -J folders")
                with open(candidate, "rb") as handle:
                    return candidate, handle.read()
        raise RuntimeError(f"import {rel!r} not found (searched the spec's folder and -J folders)")

    if not os.path.isfile(path):
        raise SpecErrors([SpecError(path, 1, 1, "", "no such file", "", "check the path")])
    try:
        return _jsonnet.evaluate_file(
            path,
            ext_vars=dict(options.ext_vars),
            tla_vars=dict(options.tla),
            import_callback=import_callback,
            max_stack=500,
        )
    except RuntimeError as exc:
        message = str(exc).strip()
        first = message.splitlines()[0] if message else "Jsonnet evaluation failed"
        line, column = 1, 1
        match = _LOCATION.search(message)
        if match and os.path.basename(match.group("file")) == os.path.basename(path):
            line, column = int(match.group("line")), int(match.group("col"))
        hint = "pass top-level arguments with --tla NAME=VALUE and external variables with --ext-var NAME=VALUE"
        raise SpecErrors([SpecError(path, line, column, "", f"Jsonnet error: {first}", "", hint)]) from None
