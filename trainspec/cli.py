"""The `trainspec` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys

from trainspec import __version__

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3

TOP_EPILOG = """examples:
  trainspec validate specs/*.yaml
  trainspec compile specs/tf-ps.yaml --target kubeflow
  trainspec build specs/ -o build/            # build/<job>/<target>.yaml, build/<job>/helm/
  trainspec build specs/ -o golden/ --check   # exit 1 and a diff when golden/ is stale
  trainspec run specs/pytorch-ddp.yaml        # run the job locally on Docker
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors exit 2 with one line, as documented
        self.print_usage(sys.stderr)
        print(f"trainspec: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


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


def spec_options(args) -> dict:
    return {"tla": dict(args.tla), "ext_vars": dict(args.ext_var), "jpath": list(args.jpath)}


def _targets_help() -> str:
    from trainspec.targets import TARGETS

    return ", ".join(TARGETS)


COMPILE_COMMANDS = ("validate", "compile", "build", "import")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The full parser; for a compile-path `command`, without the emulator's (slower to import) commands."""
    parser = _Parser(prog="trainspec", description="Compile distributed-training job specs to Kubernetes, "
                     "Kubeflow, Volcano, Helm and Compose, and run them locally on Docker.",
                     epilog=TOP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"trainspec {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("validate", help="check specs; exit 0 when all are valid, 2 otherwise",
                       description="Check specs and report every problem with file:line:column.",
                       epilog="example:\n  trainspec validate specs/*.yaml",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("specs", nargs="+", metavar="SPEC")
    add_spec_options(p)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("compile", help="compile one spec to one target",
                       description="Compile one spec to one target; stdout unless -o (helm needs -o DIR).",
                       epilog="examples:\n  trainspec compile specs/tf-ps.yaml --target k8s\n"
                              "  trainspec compile specs/tf-ps.yaml --target helm -o charts/tf-ps",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("spec", metavar="SPEC")
    p.add_argument("--target", "-t", required=True, metavar="TARGET", help=f"one of: {_targets_help()}")
    p.add_argument("-o", "--output", metavar="PATH", help="file to write (a folder for helm)")
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
    p.add_argument("--check", action="store_true", help="compare with OUT instead of writing")
    p.add_argument("--no-cache", action="store_true",
                   help="compile every spec even when its input and output are unchanged since the last build")
    add_spec_options(p)
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("import", help="turn a Kubeflow v1 job, MPIJob or Volcano Job into a spec",
                       description="Read a TFJob, PyTorchJob, MXJob, XGBoostJob, PaddleJob, JAXJob, MPIJob v2beta1 "
                                   "or Volcano Job and write a spec. Fields with no spec field go to spec.patches "
                                   "(one warning each); --strict makes them errors. '-' is stdin / stdout.",
                       epilog="example:\n  trainspec import tfjob.yaml -o specs/mnist.yaml",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("manifest", metavar="MANIFEST")
    p.add_argument("--job", metavar="NAME", help="the job to import from a file holding several")
    p.add_argument("--strict", action="store_true", help="fail (exit 2) on any field with no spec field")
    p.add_argument("-o", "--output", metavar="SPEC", default="-", help="file to write (default: stdout)")
    p.set_defaults(func=cmd_import)

    if command in COMPILE_COMMANDS:
        return parser
    try:
        from trainspec.emulator.cli import register
    except ModuleNotFoundError as exc:
        if exc.name != "trainspec.emulator.cli":
            raise
    else:
        register(sub)
    return parser


def _load(path: str, args):
    from trainspec.compiler import load_plans

    return load_plans(path, **spec_options(args))


def cmd_validate(args) -> int:
    from trainspec.compiler import SpecErrors

    failed = False
    for path in args.specs:
        try:
            plans = _load(path, args)
        except SpecErrors as exc:
            print(exc, file=sys.stderr)
            failed = True
            continue
        names = ", ".join(plan.name for plan in plans)
        print(f"{path}: ok ({names})")
    return EXIT_USAGE if failed else EXIT_OK


def _check_target(name: str) -> None:
    from trainspec.compiler import UsageError
    from trainspec.targets import TARGETS, available

    if name not in TARGETS:
        raise UsageError(f"unknown target {name!r}; targets: {', '.join(TARGETS)}")
    if name not in available():
        raise UsageError(f"target {name!r} is not available in this version")


def cmd_compile(args) -> int:
    from trainspec.compiler import UsageError
    from trainspec.output import write_atomic
    from trainspec.targets import render

    _check_target(args.target)
    plans = _load(args.spec, args)
    outputs = [render(args.target, plan) for plan in plans]
    if args.target == "helm":
        if len(plans) != 1:
            raise UsageError(f"{args.spec} holds {len(plans)} jobs; a chart is one job: use `trainspec build`")
        if not args.output:
            raise UsageError("the helm target writes a chart folder: give -o DIR")
        from trainspec.output import write_files

        # The chart folder is swapped in as a whole, like a job folder in `build`.
        parent, name = os.path.split(os.path.abspath(args.output))
        files = {os.path.join(name, os.path.relpath(rel, "helm")): text for rel, text in outputs[0].items()}
        write_files(parent, files, {os.path.join(name, "templates")})
        return EXIT_OK
    if args.target == "compose" and len(plans) != 1:
        raise UsageError(f"{args.spec} holds {len(plans)} jobs; a compose file is one job: use `trainspec build`")
    text = "".join(text for files in outputs for text in files.values())
    if args.output:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_import(args) -> int:
    from trainspec.importer.cli import run

    return run(args.manifest, args.job, args.strict, args.output)


def collect_specs(inputs: list[str]) -> list[str]:
    from trainspec.compiler import UsageError
    from trainspec.compiler.loader import find_spec_files

    paths: list[str] = []
    for item in inputs:
        if os.path.isdir(item):
            found = find_spec_files(item)
            if not found:
                raise UsageError(f"{item}: no spec files (*.yaml, *.yml, *.json, *.jsonnet)")
            paths.extend(found)
        elif os.path.exists(item):
            paths.append(item)
        else:
            raise UsageError(f"{item}: no such file or folder")
    return paths


def cmd_build(args) -> int:
    from trainspec.build import run_build
    from trainspec.output import diff_files, write_files
    from trainspec.targets import available

    targets = tuple(dict.fromkeys(args.target)) or available()
    for target in targets:
        _check_target(target)

    def load(path: str):
        return _load(path, args)

    options = json.dumps(spec_options(args), sort_keys=True)
    build, cache, keys = run_build(collect_specs(args.inputs), args.output, targets, load, options,
                                   use_cache=not args.no_cache)
    if args.check:
        fresh = [out for out in build.outputs if out.texts is not None]
        diff = diff_files(args.output, {rel: t for out in fresh for rel, t in out.texts.items()},
                          {folder for out in fresh for folder in out.owned})
        if diff:
            sys.stdout.writelines(diff)
            print(f"trainspec: {args.output} is stale; run `trainspec build {' '.join(args.inputs)} "
                  f"-o {args.output}` and commit the result", file=sys.stderr)
            return EXIT_FAILED
        cache.record(build, keys)
        print(f"{args.output} is up to date ({len(build.expected())} files)", file=sys.stderr)
        return EXIT_OK
    fresh = [out for out in build.outputs if out.texts is not None]
    changed = write_files(args.output, {rel: t for out in fresh for rel, t in out.texts.items()},
                          {folder for out in fresh for folder in out.owned})
    cache.record(build, keys)
    print(f"wrote {len(changed)} of {len(build.expected())} files to {args.output}"
          f" ({len(fresh)} of {len(build.outputs)} specs compiled)", file=sys.stderr)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    from trainspec.compiler.errors import SpecErrors, UsageError

    words = sys.argv[1:] if argv is None else argv
    command = next((w for w in words if not w.startswith("-")), None)
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args.func(args)
    except SpecErrors as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    except UsageError as exc:
        print(f"trainspec: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("trainspec: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug in trainspec, not bad input: say so briefly
        if os.environ.get("TRAINSPEC_DEBUG"):
            raise
        print(f"trainspec: internal error: {type(exc).__name__}: {exc} "
              "(set TRAINSPEC_DEBUG=1 for the traceback, and please report it)", file=sys.stderr)
        return EXIT_INTERNAL
