"""What the program says and returns when Ctrl-C lands: shared by the entry point (console.py),
which catches it during imports, and the CLI, which catches it around the command."""


def interrupted() -> int:
    import sys

    try:
        print("trainspec: interrupted", file=sys.stderr)
    except (KeyboardInterrupt, OSError):
        pass  # a second Ctrl-C, or stderr gone: the exit status says it
    return 130
