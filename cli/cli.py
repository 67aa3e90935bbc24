"""The `trainspec` command line: its parser and `main`; what the compile-path commands do is in
compile_commands.py, the emulator's and the cluster's commands in their own packages."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from typing import Any

from trainspec import __version__
from trainspec.argparser import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, Parser
from trainspec.compile_commands import (
    cmd_build,
    cmd_compile,
    cmd_diff,
    cmd_graph,
    cmd_import,
    cmd_schema,
    cmd_validate,
)
from trainspec.subcommand import add_command

TOP_EPILOG = """examples:
  trainspec validate specs/*.yaml
  trainspec compile specs/tf-ps.yaml --target kubeflow
  trainspec build specs/ -o build/            # build/<job>/<target>.yaml, build/<job>/helm/
  trainspec build specs/ -o golden/ --check   # exit 1, what changed and a diff when golden/ is stale
  trainspec diff HEAD:specs/tf-ps.yaml specs/tf-ps.yaml   # what changed, per role and replica
  trainspec graph specs/tf-ps.yaml            # the topology as a Mermaid picture
  cat job.yaml | trainspec compile - -t k8s   # - is standard input
  trainspec run specs/pytorch-ddp.yaml        # run the job locally on Docker
  trainspec apply specs/tf-ps.yaml --dry-run=server   # check it against a live cluster
"""


class _Unused(Parser):
    """The parser of a sub-command this run does not run, keeping nothing: a real one costs ~1 ms."""

    def __init__(self, **kwargs) -> None:
        pass

    def add_argument(self, *args, **kwargs) -> Any:
        return None

    def set_defaults(self, **kwargs) -> None:
        pass


def _key_value(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VALUE")
    return name, value


def add_spec_options(parser: argparse.ArgumentParser) -> None:
    """--tla / --ext-var / -J: Jsonnet inputs, shared by every command that reads specs."""
    parser.add_argument("--tla", metavar="NAME=VALUE", type=_key_value, action="append", default=[],
                        help="Jsonnet top-level argument (string)")
    parser.add_argument("--ext-var", metavar="NAME=VALUE", type=_key_value, action="append", default=[],
                        help="Jsonnet external variable (string)")
    parser.add_argument("-J", "--jpath", metavar="DIR", action="append", default=[],
                        help="extra folder Jsonnet imports may come from")
    parser.add_argument("--kube-version", metavar="X.Y", type=_kube_version, default=None,
                        help="the Kubernetes version whose API-server rules apply: 1.30..1.36 (default: 1.30, "
                             "the oldest supported; docs/validation.md)")
    add_runtime_option(parser)


def add_runtime_option(parser: argparse.ArgumentParser, what: str = "a spec on a Trainer runtime (spec.trainjob)"
                       ) -> None:
    """--runtime FILE|DIR (repeatable): Kubeflow Trainer runtimes' definitions, for `what`."""
    parser.add_argument("--runtime", metavar="FILE|DIR", action="append", default=[],
                        help=f"a TrainingRuntime/ClusterTrainingRuntime file or a folder of them, for {what} "
                             "(`kubectl get clustertrainingruntime NAME -o yaml > runtime.yaml`; repeatable)")


def _kube_version(text: str) -> str:
    from trainspec.compiler.kube_rules import parse_version

    try:
        major, minor = parse_version(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return f"{major}.{minor}"


def _targets_help() -> str:
    from trainspec.targets import TARGETS

    return ", ".join(TARGETS)


COMPILE_COMMANDS = ("validate", "compile", "build", "diff", "graph", "import", "migrate", "schema")


def build_parser(command: str | None = None, cluster: bool = False) -> argparse.ArgumentParser:
    """The parser; for a compile-path `command`, with only its own options and not the emulator's commands;
    `cluster`: `ps|logs|down --cluster`, with the cluster's verbs (kubectl's options) instead of the local ones."""
    parser = Parser(prog="trainspec", description="Compile distributed-training job specs to Kubernetes, "
                     "Kubeflow, Volcano, Helm and Compose, and run them locally on Docker.",
                     epilog=TOP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"trainspec {__version__}")
    # Every command stays a choice, but only the one run gets its options: argparse asks gettext and
    # the terminal size for each option, which is most of what `compile` spends in this function.
    only = command if command in COMPILE_COMMANDS or command == "version" else None

    def sub_parser(**kwargs) -> Parser:  # argparse calls parser_class(prog="trainspec <command>", ...)
        return Parser(**kwargs) if only is None or kwargs["prog"].endswith(f" {only}") else _Unused()

    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=sub_parser)

    p = add_command(sub, "validate", help="check specs; exit 0 when all are valid, 2 otherwise",
                    description="Check specs and report every problem with file:line:column.",
                    examples=["trainspec validate specs/*.yaml"])
    p.add_argument("specs", nargs="+", metavar="SPEC",
                   help="spec file, folder (other tools' YAML in it is skipped) or - for standard input")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="json: a list of {file, line, column, path, message, expected, hint, severity} on stdout")
    p.add_argument("--exclude", metavar="GLOB", action="append", default=[],
                   help="skip matching files and folders when walking a folder (repeatable)")
    p.add_argument("--only-specs", action="store_true",
                   help="skip other tools' documents in named files too, as a folder walk does "
                        "(for hooks that pass every changed YAML file)")
    add_spec_options(p)
    p.set_defaults(func=cmd_validate)

    p = add_command(sub, "compile", help="compile one spec to one target",
                    description="Compile one spec to one target; stdout unless -o (helm needs -o DIR).",
                    examples=[
                        "trainspec compile specs/tf-ps.yaml --target k8s",
                        "trainspec compile specs/tf-ps.yaml --target helm -o charts/tf-ps",
                    ])
    p.add_argument("spec", metavar="SPEC", help="spec file, or - for standard input")
    p.add_argument("--target", "-t", required=True, metavar="TARGET", help=f"one of: {_targets_help()}")
    p.add_argument("-o", "--output", metavar="PATH",
                   help="file to write, - for stdout, or DIR/ for DIR/<target>.yaml (helm: the chart folder)")
    add_spec_options(p)
    p.set_defaults(func=cmd_compile)

    p = add_command(sub, "build", help="compile specs and folders of specs to OUT/<job>/",
                    description="Compile every spec to OUT/<job>/<target>.yaml and OUT/<job>/helm/. "
                                "Nothing is written when any spec is invalid. With --check, write nothing "
                                "and exit 1 with a diff when OUT is stale.",
                    examples=[
                        "trainspec build specs/ -o build/",
                        "trainspec build specs/ -o golden/ --check",
                        "trainspec build specs/tf-ps.yaml -o build/ --target k8s --target helm",
                    ])
    p.add_argument("inputs", nargs="+", metavar="SPEC_OR_DIR")
    p.add_argument("-o", "--output", required=True, metavar="OUT")
    p.add_argument("--target", "-t", action="append", default=[], metavar="TARGET",
                   help=f"repeatable; default: all ({_targets_help()})")
    p.add_argument("--check", action="store_true",
                   help="compare with OUT instead of writing: a summary, then a diff (committed vs compiled); "
                        "exit 1 when OUT is stale or holds an orphaned job folder")
    p.add_argument("--exclude", metavar="GLOB", action="append", default=[],
                   help="skip matching files and folders when walking a spec folder (repeatable)")
    p.add_argument("--no-cache", action="store_true",
                   help="compile every spec even when its input and output are unchanged since the last build")
    add_spec_options(p)
    p.set_defaults(func=cmd_build)

    p = add_command(sub, "diff", help="what changed between two specs or compiled files/folders, in words",
                    description="Compare two specs (compiled to k8s), two compiled files or two compiled "
                                "folders and say per role and replica what changed. Exit 0 when they are "
                                "the same, 1 when they differ, 2 for bad input.",
                    examples=[
                        "trainspec diff old/tf-ps.yaml specs/tf-ps.yaml",
                        "trainspec diff HEAD:specs/tf-ps.yaml specs/tf-ps.yaml   # a spec at a git revision",
                        "trainspec diff golden/ build/ --format json",
                    ])
    p.add_argument("old", metavar="A")
    p.add_argument("new", metavar="B")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_diff)

    p = add_command(sub, "graph", help="draw a job's topology (mermaid, dot or svg)",
                    description="Roles, replica counts, host names and ports, GPUs per replica, and who "
                                "talks to whom, as a Mermaid or Graphviz picture.",
                    examples=[
                        "trainspec graph specs/tf-ps.yaml",
                        "trainspec graph specs/tf-ps.yaml --format dot | dot -Tpng > tf-ps.png",
                    ])
    p.add_argument("spec", metavar="SPEC", help="spec file, or - for standard input")
    p.add_argument("--format", choices=("mermaid", "dot", "svg"), default="mermaid",
                   help="svg needs Graphviz's `dot` on PATH")
    add_spec_options(p)
    p.set_defaults(func=cmd_graph)

    p = add_command(sub, "completion", help="print a shell completion script (bash, zsh, fish)",
                    description="Print a completion script for your shell.",
                    examples=[
                        "trainspec completion bash > ~/.local/share/bash-completion/completions/trainspec",
                        "trainspec completion zsh > \"${fpath[1]}/_trainspec\"",
                        "trainspec completion fish > ~/.config/fish/completions/trainspec.fish",
                    ])
    p.add_argument("shell", choices=("bash", "zsh", "fish"))
    p.set_defaults(func=cmd_completion)

    p = add_command(sub, "import", help="turn a training job (Kubeflow, MPIJob, Volcano, JobSet, TrainJob, batch Job, "
                                        "OpenPAI) into a spec",
                    description="Read a TFJob, PyTorchJob, MXJob, XGBoostJob, PaddleJob, JAXJob, MPIJob v2beta1, "
                                "Volcano Job, JobSet, TrainJob (+ its runtime), batch/v1 Job or OpenPAI job config "
                                "and write a spec. Fields with no spec field go to spec.patches (one warning "
                                "each); what nothing carries is a warning, and with --strict an error (exit 2). "
                                "'-' is stdin / stdout.",
                    examples=["trainspec import tfjob.yaml -o specs/mnist.yaml"])
    p.add_argument("manifest", metavar="MANIFEST")
    p.add_argument("--job", metavar="NAME", help="the job to import from a file holding several")
    p.add_argument("--strict", action="store_true", help="fail (exit 2) on any field that would not survive")
    add_runtime_option(p, "a TrainJob whose runtime is not in MANIFEST")
    p.add_argument("-o", "--output", metavar="SPEC", default="-", help="file to write (default: stdout)")
    p.set_defaults(func=cmd_import)

    p = add_command(sub, "migrate", help="import a job and compile it to another target, saying what is lost",
                    description="Import MANIFEST (as `trainspec import`) and compile it to TARGET in one step. "
                                "What TARGET cannot carry (fields, env and restart semantics) goes to stderr; "
                                "--strict makes any of it an error (exit 2). '-' is stdin / stdout.",
                    examples=["trainspec migrate tfjob.yaml --to jobset -o jobset.yaml"])
    p.add_argument("manifest", metavar="MANIFEST")
    p.add_argument("--to", required=True, metavar="TARGET", help="the target to compile to")
    p.add_argument("--job", metavar="NAME", help="the job to import from a file holding several")
    p.add_argument("--strict", action="store_true", help="fail (exit 2) when anything is lost")
    add_runtime_option(p, "a TrainJob whose runtime is not in MANIFEST")
    p.add_argument("-o", "--output", metavar="PATH", default="-", help="file to write (default: stdout)")
    p.set_defaults(func=lambda args: __import__("trainspec.importer.migrate", fromlist=["run"]).run(
        args.manifest, args.job, args.to, args.strict, args.output, args.runtime))

    p = sub.add_parser("schema", help="print the spec's JSON Schema (for editors)",
                       description="Print the JSON Schema (draft 2020-12) of a spec, generated from the "
                                   "validator's field table.",
                       epilog="example:\n  trainspec schema -o schema/trainspec.schema.json\n"
                              "then start a spec with\n"
                              "  # yaml-language-server: $schema=../schema/trainspec.schema.json",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", metavar="FILE", help="file to write (default: standard output)")
    p.set_defaults(func=cmd_schema)

    if command in COMPILE_COMMANDS or command == "version":
        return parser
    if cluster:
        from trainspec.cluster.commands import register_verbs

        register_verbs(sub)
        return parser
    try:
        from trainspec.emulator.commands import register
    except ModuleNotFoundError as exc:
        if exc.name != "trainspec.emulator.commands":
            raise
    else:
        register(sub)
    from trainspec.cluster.commands import register as register_cluster

    register_cluster(sub)  # apply, and --cluster on ps/logs/down
    return parser


def cmd_completion(args) -> int:
    """The completion script is the parser's own: it lives beside the parser, above the commands."""
    from trainspec.completion import script

    sys.stdout.write(script(build_parser(), args.shell))
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # at any moment: while parsing, importing or running the command
        from trainspec.interrupt import interrupted

        return interrupted()


def _main(argv: list[str] | None) -> int:
    if argv is None:  # run as the program (not called in-process): the objects made so far live until exit,
        gc.freeze()  # so the cyclic collector need not walk them in each collection, nor free them at exit
    words = sys.argv[1:] if argv is None else argv
    command = next((w for w in words if not w.startswith("-")), None)
    # `trainspec --version` prints and exits while parsing: the emulator's commands (slower to
    # import) need not be built for it.
    parser = build_parser("version" if command is None and words[:1] == ["--version"] else command,
                          cluster=command in ("ps", "logs", "down") and "--cluster" in words)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if getattr(args, "command", None) == "run":
        from trainspec.on_runtime import install  # what the emulator needs rendered of a spec

        install(args)
    try:
        return args.func(args)
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:
        from trainspec.compiler.errors import Error, SpecErrors  # one small module: NamedTuple and classes
        from trainspec.termsafe import neutralise  # messages quote files' text: no control characters

        if isinstance(exc, SpecErrors):  # FieldErrors (a UsageError too) prints as the compiler prints
            print(neutralise(exc), file=sys.stderr)
            return EXIT_USAGE
        if isinstance(exc, Error):  # UsageError (OutputError, ClusterError...) and every other error of ours
            print(f"trainspec: error: {neutralise(exc)}", file=sys.stderr)
            return EXIT_USAGE
        # a bug in trainspec, not bad input: say so briefly
        if os.environ.get("TRAINSPEC_DEBUG"):
            raise
        print(f"trainspec: internal error: {type(exc).__name__}: {neutralise(exc)} "
              "(set TRAINSPEC_DEBUG=1 for the traceback, and please report it)", file=sys.stderr)
        return EXIT_INTERNAL
