"""Reading the manifest to import: a file, or standard input for `-`."""

from __future__ import annotations

import sys


def read_manifest(path: str) -> tuple[str, str]:
    """(text, name for messages); `-` is standard input."""
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    from trainspec.compiler.loader import read_text

    return read_text(path), path
