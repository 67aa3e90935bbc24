"""The `trainspec` command line."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from typing import Any

from trainspec import __version__
from trainspec.argparser import EXIT_FAILED, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, Parser
from trainspec.loading import load_input, load_job_plans, load_specs, print_warning, spec_options, validate_inputs

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

    p = sub.add_parser("validate", help="check specs; exit 0 when all are valid, 2 otherwise",
                       description="Check specs and report every problem with file:line:column.",
                       epilog="example:\n  trainspec validate specs/*.yaml",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
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

    p = sub.add_parser("compile", help="compile one spec to one target",
                       description="Compile one spec to one target; stdout unless -o (helm needs -o DIR).",
                       epilog="examples:\n  trainspec compile specs/tf-ps.yaml --target k8s\n"
                              "  trainspec compile specs/tf-ps.yaml --target helm -o charts/tf-ps",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec", metavar="SPEC", help="spec file, or - for standard input")
    p.add_argument("--target", "-t", required=True, metavar="TARGET", help=f"one of: {_targets_help()}")
    p.add_argument("-o", "--output", metavar="PATH",
                   help="file to write, - for stdout, or DIR/ for DIR/<target>.yaml (helm: the chart folder)")
    add_spec_options(p)
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser("build", help="compile specs and folders of specs to OUT/<job>/",
                       description="Compile every spec to OUT/<job>/<target>.yaml and OUT/<job>/helm/. "
                                   "Nothing is written when any spec is invalid. With --check, write nothing "
                                   "and exit 1 with a diff when OUT is stale.",
                       epilog="examples:\n  trainspec build specs/ -o build/\n"
                              "  trainspec build specs/ -o golden/ --check\n"
                              "  trainspec build specs/tf-ps.yaml -o build/ --target k8s --target helm",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
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

    p = sub.add_parser("diff", help="what changed between two specs or compiled files/folders, in words",
                       description="Compare two specs (compiled to k8s), two compiled files or two compiled "
                                   "folders and say per role and replica what changed. Exit 0 when they are "
                                   "the same, 1 when they differ, 2 for bad input.",
                       epilog="examples:\n  trainspec diff old/tf-ps.yaml specs/tf-ps.yaml\n"
                              "  trainspec diff HEAD:specs/tf-ps.yaml specs/tf-ps.yaml   # a spec at a git revision\n"
                              "  trainspec diff golden/ build/ --format json",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old", metavar="A")
    p.add_argument("new", metavar="B")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser("graph", help="draw a job's topology (mermaid, dot or svg)",
                       description="Roles, replica counts, host names and ports, GPUs per replica, and who "
                                   "talks to whom, as a Mermaid or Graphviz picture.",
                       epilog="examples:\n  trainspec graph specs/tf-ps.yaml\n"
                              "  trainspec graph specs/tf-ps.yaml --format dot | dot -Tpng > tf-ps.png",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec", metavar="SPEC", help="spec file, or - for standard input")
    p.add_argument("--format", choices=("mermaid", "dot", "svg"), default="mermaid",
                   help="svg needs Graphviz's `dot` on PATH")
    add_spec_options(p)
    p.set_defaults(func=cmd_graph)

    p = sub.add_parser("completion", help="print a shell completion script (bash, zsh, fish)",
                       description="Print a completion script for your shell.",
                       epilog="examples:\n  trainspec completion bash > ~/.local/share/bash-completion/completions/"
                              "trainspec\n  trainspec completion zsh > \"${fpath[1]}/_trainspec\"\n"
                              "  trainspec completion fish > ~/.config/fish/completions/trainspec.fish",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("shell", choices=("bash", "zsh", "fish"))
    p.set_defaults(func=cmd_completion)

    p = sub.add_parser("import", help="turn a training job (Kubeflow, MPIJob, Volcano, JobSet, TrainJob, batch Job, "
                       "OpenPAI) into a spec",
                       description="Read a TFJob, PyTorchJob, MXJob, XGBoostJob, PaddleJob, JAXJob, MPIJob v2beta1, "
                                   "Volcano Job, JobSet, TrainJob (+ its runtime), batch/v1 Job or OpenPAI job config "
                                   "and write a spec. Fields with no spec field go to spec.patches (one warning "
                                   "each); what nothing carries is a warning, and with --strict an error (exit 2). "
                                   "'-' is stdin / stdout.",
                       epilog="example:\n  trainspec import tfjob.yaml -o specs/mnist.yaml",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("manifest", metavar="MANIFEST")
    p.add_argument("--job", metavar="NAME", help="the job to import from a file holding several")
    p.add_argument("--strict", action="store_true", help="fail (exit 2) on any field that would not survive")
    add_runtime_option(p, "a TrainJob whose runtime is not in MANIFEST")
    p.add_argument("-o", "--output", metavar="SPEC", default="-", help="file to write (default: stdout)")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("migrate", help="import a job and compile it to another target, saying what is lost",
                       description="Import MANIFEST (as `trainspec import`) and compile it to TARGET in one step. "
                                   "What TARGET cannot carry (fields, env and restart semantics) goes to stderr; "
                                   "--strict makes any of it an error (exit 2). '-' is stdin / stdout.",
                       epilog="example:\n  trainspec migrate tfjob.yaml --to jobset -o jobset.yaml",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
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


def cmd_validate(args) -> int:
    from trainspec.api import spec_problems
    from trainspec.compiler import SpecErrors

    failed = False
    problems: list[dict] = []

    def warn(file: str, line: int, message: str) -> None:
        if args.format != "json":
            print_warning(file, line, message)
            return
        problems.append({"file": file, "line": line, "column": 1, "path": "", "message": message,
                         "expected": "", "hint": "", "severity": "warning"})

    def warn_target(warning) -> None:
        if args.format != "json":
            print(f"trainspec: warning: {warning.format()}", file=sys.stderr)
            return
        problems.append(dict(warning._asdict(), severity="warning"))

    def note(item) -> None:
        if args.format != "json":
            print(f"trainspec: note: {item.format()}", file=sys.stderr)
            return
        problems.append(dict(item._asdict(), severity="note"))

    for spec in validate_inputs(args):
        try:
            plans = load_input(spec, args, warn, warn_target=warn_target, note=note)
            errors = spec_problems(plans)  # an op of spec.patches that does not apply is a spec error too
            if errors:
                raise SpecErrors(errors)
        except SpecErrors as exc:
            failed = True
            if args.format == "json":
                problems.extend(dict(error._asdict(), severity="error") for error in exc.errors)
            else:
                print(exc, file=sys.stderr)
            continue
        if args.format == "text" and (plans or not spec.walked):
            names = ", ".join(plan.name for plan in plans)
            print(f"{spec.path}: ok ({names})")
    if args.format == "json":
        import json

        print(json.dumps(problems, indent=2))
    return EXIT_USAGE if failed else EXIT_OK


def _check_target(name: str) -> None:
    from trainspec.api import check_target

    check_target(name)


def cmd_compile(args) -> int:
    from trainspec.api import Job
    from trainspec.compiler import UsageError

    _check_target(args.target)
    to_stdout = args.output in (None, "-")
    if args.target == "helm" and to_stdout:
        raise UsageError("the helm target writes a chart folder: give -o DIR")
    plans = load_specs(args.spec, args, (args.target,))
    outputs = [Job(plan).compile(args.target) for plan in plans]  # the API's compile: the same bytes
    if args.target == "helm":
        if len(plans) != 1:
            raise UsageError(f"{args.spec} holds {len(plans)} jobs; a chart is one job: use `trainspec build`")
        from trainspec.output import write_files, writing

        if os.path.exists(args.output) and not os.path.isdir(args.output):
            raise UsageError(f"-o {args.output}: is a file; the helm target writes a chart folder")
        # The chart folder is swapped in as a whole, like a job folder in `build`.
        parent, name = os.path.split(os.path.abspath(args.output))
        files = {os.path.join(name, os.path.relpath(rel, "helm")): text for rel, text in outputs[0].items()}
        with writing(args.output):
            write_files(parent, files, {os.path.join(name, "templates")})
        return EXIT_OK
    if args.target == "compose" and len(plans) != 1:
        raise UsageError(f"{args.spec} holds {len(plans)} jobs; a compose file is one job: use `trainspec build`")
    text = "".join(text for files in outputs for text in files.values())
    if to_stdout:
        sys.stdout.write(text)
        return EXIT_OK
    from trainspec.output import write_atomic, write_stream, writing

    path = args.output
    if not path:
        raise UsageError("-o needs a path (or - for standard output)")
    if path.endswith(("/", os.sep)) or os.path.isdir(path):
        path = os.path.join(path, f"{args.target}.yaml")
    with writing(path):
        if not write_stream(path, text):
            write_atomic(path, text)
    return EXIT_OK


def cmd_import(args) -> int:
    from trainspec.importer.command import run

    return run(args.manifest, args.job, args.strict, args.output, args.runtime)


def collect_specs(inputs: list[str]) -> list[str]:
    """Spec paths under `inputs` (kept for callers outside the CLI)."""
    from trainspec.inputs import collect

    return [spec.path for spec in collect(inputs)]


def cmd_build(args) -> int:
    from trainspec.compiler import UsageError
    from trainspec.inputs import collect
    from trainspec.output import writing
    from trainspec.targets import available

    targets = tuple(dict.fromkeys(args.target)) or available()
    for target in targets:
        _check_target(target)
    out = args.output
    if out == "-":
        raise UsageError("`build` writes a folder of job folders: give -o DIR (`compile -o -` writes stdout)")
    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"-o {out}: is a file; `build` writes a folder of job folders")
    specs = collect(args.inputs, out, args.exclude)
    created: list[str] = []  # folders this build made for OUT: removed again if it fails
    if not args.check:
        folder = os.path.abspath(out)
        while not os.path.exists(folder):
            created.append(folder)
            folder = os.path.dirname(folder)
        with writing(out):
            os.makedirs(out, exist_ok=True)
    try:
        return _build_locked(args, out, specs, targets)
    except BaseException:
        for folder in created:  # innermost first; rmdir refuses anything not empty
            try:
                os.rmdir(folder)
            except OSError:
                break
        raise


def _build_locked(args, out: str, specs, targets) -> int:
    import json

    from trainspec.build import build_options, locked, marker_options, marker_text, ownership, run_build
    from trainspec.inputs import MARKER
    from trainspec.output import remove_jobs, write_atomic, write_files, writing

    options = json.dumps(spec_options(args), sort_keys=True)
    if getattr(args, "runtime", None):  # the runtimes' contents are input too: an edited runtime is recompiled
        from trainspec.build import files_digest

        options += "|" + files_digest(args.runtime)
    with locked(out, exclusive=not args.check):
        skip = not args.target  # over all targets, skip those that cannot run a job; a target named must fit
        build, cache, keys = run_build(specs, out, targets,
                                       lambda spec: load_input(spec, args, targets=targets, skip_unsupported=skip),
                                       options, use_cache=not args.no_cache, skip_unsupported=skip)
        marker, orphans = ownership(out, build, specs)
        current = build_options(args.target, spec_options(args))
        # --check compares content: options differing alone are not stale (a hint says when they differ)
        recorded = marker_options(out, build, marker, current, keep_recorded=args.check)
        fresh = [o for o in build.outputs if o.texts is not None]
        files = {rel: t for o in fresh for rel, t in (o.texts or {}).items()}
        owned = {folder for o in fresh for folder in o.owned}
        if args.check:
            return _check(args, build, cache, keys, {**files, MARKER: marker_text(marker, recorded)}, owned, orphans,
                          current)
        with writing(out):
            changed = write_files(out, files, owned)
            removed = remove_jobs(out, sorted(orphans))
            write_atomic(os.path.join(out, MARKER), marker_text(marker, recorded))
        cache.record(build, keys)
    # Files a walk read that hold no spec (a kustomization.yaml) are not counted as specs.
    specs_read = [o for o in build.outputs if o.jobs]
    compiled = sum(1 for o in specs_read if o.texts is not None)
    unchanged = len(specs_read) - compiled
    print(f"wrote {len(changed)} of {len(build.expected())} files to {out}"
          f" ({compiled} of {len(specs_read)} spec{'s' if len(specs_read) != 1 else ''} compiled"
          f"{f', {unchanged} unchanged since the last build' if unchanged else ''})", file=sys.stderr)
    for job in removed:
        print(f"removed {os.path.join(out, job)}/: its spec {orphans[job]} no longer defines job {job!r}",
              file=sys.stderr)
    return EXIT_OK


def _check(args, build, cache, keys, files, owned, orphans, current: dict) -> int:
    from trainspec.build import options_words, read_marker, read_marker_options
    from trainspec.output import compare, summary_lines, unified

    out = args.output
    changes = compare(out, files, owned)
    if not changes and not orphans:
        cache.record(build, keys)
        print(f"{out} is up to date ({len(build.expected())} files)", file=sys.stderr)
        return EXIT_OK
    lines = [f"{out} is stale: {len(changes)} file(s) differ, {len(orphans)} orphaned job folder(s)\n"]
    from trainspec.semdiff import check_summary

    semantic = check_summary(out, changes)
    if semantic:
        lines.extend(["what changed:\n"] + semantic)
    lines.append("files (lines added/removed, committed → compiled):\n")
    lines.extend(summary_lines(out, changes))
    for job, spec in sorted(orphans.items()):
        lines.append(f"  {os.path.join(out, job)}/: orphaned (its spec {spec} no longer defines job {job!r}); "
                     "`trainspec build` removes it\n")
    if changes:
        lines.append("\n")
    sys.stdout.writelines(lines + unified(out, changes))
    # Stale because the options differ from the build's (a --tla left out) is not stale at all:
    # say which options OUT was built with, from its marker.
    recorded = read_marker_options(out)
    differing: dict[str, list[str]] = {}
    built_before = read_marker(out)
    for job in sorted({job for o in build.outputs for job in o.jobs} & set(built_before)):
        was = recorded.get(job, {})
        if was != current:
            differing.setdefault(options_words(was), []).append(job)
    for words, jobs in differing.items():
        print(f"trainspec: hint: {out} was built with {words} for {', '.join(jobs)}; this check used "
              f"{options_words(current)}: give the build's options to --check, or rebuild with these",
              file=sys.stderr)
    print(f"trainspec: {out} is stale; run `trainspec build {' '.join(args.inputs)} "
          f"-o {out}{' ' + options_words(current) if current else ''}` and commit the result", file=sys.stderr)
    return EXIT_FAILED


def threading_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def cmd_diff(args) -> int:
    import signal
    import tempfile

    def terminated(signum, frame):  # SIGTERM too leaves through the `with`, which removes the scratch folder
        raise SystemExit(128 + signum)

    before = signal.signal(signal.SIGTERM, terminated) if threading_main() else None
    try:
        return _diff(args, tempfile)
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


def _diff(args, tempfile) -> int:
    from trainspec.semdiff import diff_paths, git_revision_path, render_text

    with tempfile.TemporaryDirectory(prefix="trainspec-diff-") as scratch:
        # REV:PATH is what git holds; absent there (a spec added or removed since), it is None
        def resolve(path: str, other: str) -> str | None:
            if os.path.exists(path):
                return path
            if ":" not in path and ":" in other and not os.path.exists(other):
                return None  # `diff HEAD:specs/gone.yaml specs/gone.yaml`: removed since
            return git_revision_path(path, scratch)

        old, new = resolve(args.old, args.new), resolve(args.new, args.old)
        changes = diff_paths(old, new, args.old, args.new)
    for side, path, other, what in ((old, args.old, args.new, "new"), (new, args.new, args.old, "removed")):
        if side is None and (old, new) != (None, None):  # said, so a mistyped path is not taken for an added spec
            where = f"at {path.partition(':')[0]}" if ":" in path else "in the working tree"
            print(f"trainspec: {path} does not exist {where}: everything in {other} is {what}", file=sys.stderr)
    if args.format == "json":
        import json

        print(json.dumps([c.as_json() for c in changes], indent=2, ensure_ascii=False, default=str))
    elif changes:
        sys.stdout.writelines(render_text(changes))
    else:
        print("no differences", file=sys.stderr)
    return EXIT_FAILED if changes else EXIT_OK


def cmd_graph(args) -> int:
    from trainspec.graph import render_graph

    plans = load_job_plans(args.spec, args)
    sys.stdout.write(render_graph(plans, args.format))
    return EXIT_OK


def cmd_schema(args) -> int:
    from trainspec.compiler.schema import schema_text

    text = schema_text()
    if args.output in (None, "-"):
        sys.stdout.write(text)
        return EXIT_OK
    from trainspec.output import write_atomic, write_stream, writing

    if args.output.endswith(("/", os.sep)) or os.path.isdir(args.output):
        from trainspec.compiler import UsageError

        raise UsageError(f"-o {args.output}: is a folder; give a file name, e.g. trainspec.schema.json")
    with writing(args.output):
        if not write_stream(args.output, text):
            write_atomic(args.output, text)
    return EXIT_OK


def cmd_completion(args) -> int:
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
        def spec_on_runtime(path: str, runtimes: tuple[str, ...], job: str | None):
            from trainspec.on_runtime import spec_objects  # a spec on a Trainer runtime runs as its JobSet

            return spec_objects(path, runtimes, job, args)

        args.spec_on_runtime = spec_on_runtime
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
