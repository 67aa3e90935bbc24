"""The background process of `trainspec run --detach`.

It reads the parsed `run` arguments as JSON on stdin (a pipe, so --secret
values never appear in a process list) and supervises the run like a
foreground `trainspec run`, writing only to the run's files.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..compiler.errors import UsageError


def main() -> int:
    args = argparse.Namespace(**json.loads(sys.stdin.read()))
    from .cli import build_run

    try:
        return build_run(args).execute()
    except UsageError as exc:
        print(f"trainspec: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
