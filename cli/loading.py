"""Loading specs for the CLI: standard input, folder walks, and each job's target warnings."""

from __future__ import annotations

import os
import sys


def spec_options(args) -> dict:
    options = {"tla": dict(args.tla), "ext_vars": dict(args.ext_var), "jpath": list(args.jpath)}
    if getattr(args, "kube_version", None):  # absent: the default version (and the build cache keys as before)
        options["kube_version"] = args.kube_version
    if getattr(args, "runtime", None):  # --runtime FILE|DIR: the Trainer runtimes a v1.3 spec names
        options["runtimes"] = tuple(args.runtime)
    if getattr(args, "name_for", None):  # `apply`: metadata.generateName -> this run's name (cluster/generated.py)
        options["name_for"] = args.name_for
    return options


def warn_targets(plans, targets: tuple[str, ...] | None, warn=None, note=None) -> None:
    """Print each job's target warnings once (`validate`, targets None: those of plain k8s), and its notes
    (`JobPlan.notes`: a Trainer runtime's shipped definition was used) once."""
    seen: set[tuple[str, str]] = set()
    for plan in plans:
        for item in getattr(plan, "notes", ()):
            if note is not None:
                note(item)
            else:
                print(f"trainspec: note: {item.format()}", file=sys.stderr)
        for target in targets if targets is not None else ("k8s",):
            if target in plan.unsupported:
                continue  # left out of the build for this job
            for warning in plan.target_warnings.get(target, ()):
                if (plan.name, warning.path) in seen:
                    continue  # k8s and helm give the same advice
                seen.add((plan.name, warning.path))
                if warn is not None:
                    warn(warning)
                else:
                    print(f"trainspec: warning: {warning.format()}", file=sys.stderr)


def load_specs(path: str, args, targets: tuple[str, ...] | None = None, skip_unsupported: bool = False, warn=None,
               note=None):
    plans = load_job_plans(path, args, targets, skip_unsupported)
    warn_targets(plans, targets, warn, note)
    return plans


def load_job_plans(path: str, args, targets: tuple[str, ...] | None = None, skip_unsupported: bool = False):
    from trainspec.api import plan_source  # the Python API's loading: the CLI is a layer over it

    if path == "-":  # standard input (trainspec.inputs is imported only then: compile start-up stays lean)
        from trainspec.inputs import STDIN_NAME, read_stdin_documents

        return plan_source(STDIN_NAME, documents=read_stdin_documents(), targets=targets,
                           skip_unsupported=skip_unsupported, **spec_options(args))
    return plan_source(path, targets=targets, skip_unsupported=skip_unsupported, **spec_options(args))


def print_warning(file: str, line: int, message: str) -> None:
    print(f"trainspec: warning: {file}:{line}: {message}", file=sys.stderr)


def load_input(spec, args, warn=None, targets: tuple[str, ...] | None = None, skip_unsupported: bool = False,
               warn_target=None, note=None):
    """Plans of a SpecInput: a walked file keeps only its trainspec documents."""
    if not spec.walked:
        return load_specs(spec.path, args, targets, skip_unsupported, warn_target, note)
    from trainspec.api import plan_source
    from trainspec.compiler.loader import JsonnetOptions
    from trainspec.inputs import walked_documents

    options = spec_options(args)
    jsonnet = JsonnetOptions(tuple(sorted(options["tla"].items())), tuple(sorted(options["ext_vars"].items())),
                             tuple(options["jpath"]))
    docs = walked_documents(spec.path, jsonnet, warn or print_warning)
    plans = plan_source(spec.path, documents=docs, targets=targets, skip_unsupported=skip_unsupported,
                        **options) if docs else []
    warn_targets(plans, targets, warn_target, note)
    return plans


def validate_inputs(args):
    from trainspec.inputs import STDIN, SpecInput, collect, in_build_output, in_chart

    named = [item for item in args.specs if item == STDIN or not os.path.isdir(item)]
    if args.specs.count(STDIN) > 1:
        from trainspec.compiler import UsageError

        raise UsageError("standard input (-) can be read once")
    out = []
    for item in args.specs:
        if item in named:
            if args.only_specs and item != STDIN and (in_build_output(item) or in_chart(item)):
                continue  # compiled output or a Helm chart's files, not specs
            out.append(SpecInput(item, args.only_specs and item != STDIN))
        else:
            out.extend(collect([item], None, args.exclude))
    return out
