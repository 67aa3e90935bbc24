"""The `trainspec import` command: read the manifest, print the warnings, write the spec atomically."""

from __future__ import annotations

import sys

from trainspec.compiler.errors import SpecError, SpecErrors

from .reading import read_manifest


def run(manifest: str, job: str | None, strict: bool, output: str, runtime: list[str] | None = None) -> int:
    from trainspec.output import write_atomic

    from . import import_text

    text, source = read_manifest(manifest)
    if not text.strip():
        raise SpecErrors([SpecError(source, 1, 1, "", "the manifest is empty", "a Kubeflow or Volcano job")])
    result = import_text(text, source, job, strict, runtime)
    for line in result.warnings:
        print(line, file=sys.stderr)
    if output == "-":
        sys.stdout.write(result.text)
    else:
        write_atomic(output, result.text)
    return 0
