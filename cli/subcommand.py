"""The shape every sub-command's parser shares, so the compile-path, emulator and cluster commands
present their help one way: a one-line help, a description, and examples shown as written."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def add_command(subparsers, name: str, help: str, description: str, examples: Sequence[str]
                ) -> argparse.ArgumentParser:
    """`trainspec <name>`'s parser; its epilog lists `examples` (one command line each) under
    "example:" or "examples:"."""
    heading = "example:" if len(examples) == 1 else "examples:"
    return subparsers.add_parser(name, help=help, description=description,
                                 epilog="\n".join([heading] + [f"  {line}" for line in examples]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)


def add_colour_option(parser: argparse.ArgumentParser) -> None:
    """--color, as `logs` takes it locally and on a cluster."""
    parser.add_argument("--color", dest="colour", choices=("auto", "always", "never"), default="auto")
