"""`trainspec completion SHELL`: completion scripts generated from the argparse parser by shtab.

shtab reads the parser once when the script is printed; the shell then completes
without starting Python, so completion costs nothing at run time.
"""

from __future__ import annotations

import argparse

SPEC_GLOB = "*.@(yaml|yml|json|jsonnet)"
# Arguments that name a file (or a folder of specs): specs, manifests to import or run, values,
# runtimes and env files. `run`'s input and `import`'s manifest are the paths typed most often.
PATH_ARGUMENTS = frozenset({"spec", "specs", "inputs", "old", "new", "file", "files", "input", "manifest",
                            "runtime", "values_files", "env_files", "kubeconfig"})


def _mark_paths(parser: argparse.ArgumentParser) -> None:
    """Tell shtab which arguments are files or folders, so the shell completes paths for them."""
    import shtab

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _mark_paths(sub)
        elif action.dest in PATH_ARGUMENTS:
            action.complete = shtab.FILE  # type: ignore[attr-defined]  # shtab reads this attribute
        elif action.dest in ("target", "to"):
            from trainspec.targets import TARGETS

            if parser.prog.endswith(" apply"):  # a cluster takes Kubernetes objects: not compose, not a chart
                from trainspec.cluster.sources import CLUSTER_TARGETS

                action.choices = list(CLUSTER_TARGETS)
            elif action.dest == "to":  # migrate writes one file; a chart is a folder (refused)
                action.choices = [t for t in TARGETS if t != "helm"]
            else:
                action.choices = list(TARGETS)  # completion only: this parser is thrown away after printing
        elif action.dest in ("output", "jpath", "state_dir", "mount_host"):
            action.complete = (  # type: ignore[attr-defined]
                shtab.DIRECTORY if action.dest != "output" else shtab.FILE)


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    try:
        import shtab
    except ModuleNotFoundError:
        from trainspec.compiler import UsageError

        raise UsageError("shell completion needs the `shtab` package: pip install shtab") from None
    _mark_paths(parser)
    text = shtab.complete(parser, shell=shell)
    return text if text.endswith("\n") else text + "\n"
