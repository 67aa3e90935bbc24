"""The argument parser of the command line and of the API's `run` (cli/localrun.py), with the exit codes.

Below both: the API builds `trainspec run`'s options with it (emulator/commands/ `add_run_arguments`)
without importing the command line (cli/cli.py), which sits above the API.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def terminal_columns() -> int:
    """What shutil.get_terminal_size() answers, without importing shutil (and bz2, lzma, fnmatch)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class Parser(argparse.ArgumentParser):
    def __init__(self, *, formatter_class: type[argparse.HelpFormatter] = argparse.HelpFormatter,
                 **kwargs: Any) -> None:
        # The terminal's width given: argparse's own default imports shutil for it, and asks on every
        # add_argument, which is most of what a parser costs at start-up (argparse keeps 2 columns free).
        sized = functools.partial(formatter_class, width=terminal_columns() - 2)
        super().__init__(formatter_class=sized, **kwargs)

    def error(self, message: str):  # usage errors exit 2 with one line, as documented
        self.print_usage(sys.stderr)
        print(f"trainspec: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
