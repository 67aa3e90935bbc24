"""The `trainspec` program's entry point, importing nothing before it can catch Ctrl-C.

A Ctrl-C in the first few hundred milliseconds lands in an import (the CLI, the
emulator's commands); caught only around the command, it would print a traceback.
"""

from trainspec.interrupt import interrupted


def main() -> int:
    try:
        from trainspec.cli import main as cli_main

        return cli_main(None)
    except KeyboardInterrupt:
        return interrupted()
