"""What the compile-path commands do: validate, compile, import, build, diff, graph, schema.

cli.py parses the command line and calls these (its parser names them); the exit codes are argparser.py's.
"""

from __future__ import annotations

import os
import sys

from trainspec.argparser import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from trainspec.loading import load_input, load_job_plans, load_specs, print_warning, spec_options, validate_inputs


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
