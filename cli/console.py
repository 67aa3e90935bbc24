"""The `trainspec` program's entry point, importing nothing before it can catch Ctrl-C.

A Ctrl-C in the first few hundred milliseconds lands in an import (the CLI, the
emulator's commands); caught only around the command, it would print a traceback.
"""


def main() -> int:
    try:
        from trainspec.cli import main as cli_main

        return cli_main(None)
    except KeyboardInterrupt:
        return interrupted()


def interrupted() -> int:
    import sys

    try:
        print("trainspec: interrupted", file=sys.stderr)
    except (KeyboardInterrupt, OSError):
        pass  # a second Ctrl-C, or stderr gone: the exit status says it
    return 130
