"""`trainspec run`: read the input, plan the run, start it (attached or detached)."""
from __future__ import annotations

import os

from ...compiler.errors import SpecErrors, UsageError
from .runs import state_folder


def _pairs(values: list[str], option: str) -> dict[str, str]:
    out = {}
    for v in values:
        if "=" not in v:
            raise UsageError(f"{option} {v!r}: expected NAME=VALUE")
        k, val = v.split("=", 1)
        out[k] = val
    return out


def build_run(args, stream=None):
    """The run `trainspec run` asks for, its console made here and handed to it; its input checked
    against this host first, before the engine (and `docker`) is even imported."""
    from ..console.table import job_console
    from ..engine.preflight import check_input
    from ..model.limits import parse_memory_option, parse_pids_option
    from ..model.status import RunOptions
    from ..readers.dispatch import load
    from ..readers.overrides import using

    state = state_folder(args)
    sets = getattr(args, "set", None) or []
    if sets and not os.path.isdir(args.input) and not _is_spec_input(args.input):
        raise UsageError(f"--set changes a spec's (or a chart's) values; {args.input} is a compiled file: edit it, "
                         "or run the spec with --set")
    with using(sets):
        job = load(args.input, tla=_pairs(args.tla, "--tla"), ext_vars=_pairs(args.ext_var, "--ext-var"),
                   jpath=args.jpath, job=args.job, secret_options=args.secret, configmap_options=args.configmap,
                   state_dir=str(state), check_missing=False,  # preflight reports them, with images
                   start_order=getattr(args, "start_order", False), set_options=sets,
                   values_files=getattr(args, "values_files", []), namespace=getattr(args, "namespace", None),
                   env_files=getattr(args, "env_files", []), env_options=getattr(args, "env_vars", []),
                   runtimes=getattr(args, "runtime", None) or (),
                   spec_on_runtime=getattr(args, "spec_on_runtime", None),
                   spec_patched=getattr(args, "spec_patched", None))
    opts = RunOptions(
        gpus=args.gpus, cpu_only=args.cpu_only, offline=args.offline, keep=args.keep, state_dir=str(state),
        images=args.image, backoff=args.restart_backoff, max_grace=args.grace,
        colour=None if args.colour == "auto" else args.colour, quiet=args.quiet, run_id=args.run_id,
        assume_gpu_runtime=os.environ.get("TRAINSPEC_ASSUME_GPU_RUNTIME") == "1",
        allow_host_path=getattr(args, "allow_host_path", False),
        claims=getattr(args, "claim", None) or [], mount_host=getattr(args, "mount_host", None) or [],
        pull=getattr(args, "pull", False),
        gpus_per_replica=getattr(args, "gpus_per_replica", None), share_gpus=getattr(args, "share_gpus", False),
        daemon_wait=float(os.environ.get("TRAINSPEC_DAEMON_WAIT") or 15), engine=getattr(args, "engine", None),
        pids_limit=parse_pids_option(getattr(args, "pids_limit", None)),
        memory_limit=parse_memory_option(getattr(args, "memory_limit", None)),
        publish_address="" if getattr(args, "publish_all_interfaces", False) else "127.0.0.1")
    console = job_console(job, stream, opts.colour, opts.quiet)
    check_input(job, opts, state, console)
    from ..engine.run import Run  # only past the input's checks: the engine's modules import the adapters

    return Run(job, opts, console, input_checked=True)


def _is_spec_input(path: str) -> bool:
    from ..readers.dispatch import is_spec, read_documents

    if path.endswith(".jsonnet"):
        return True
    try:
        return is_spec(path, read_documents(path))
    except (UsageError, SpecErrors):
        return True  # load() says what is wrong with it


def cmd_run(args) -> int:
    if args.gpus and args.cpu_only:
        raise UsageError("--gpus and --cpu-only contradict each other; use one")
    if args.cpu_only and (args.share_gpus or args.gpus_per_replica is not None):
        raise UsageError("--cpu-only drops every GPU request; --share-gpus and --gpus-per-replica need GPUs")
    run = build_run(args)
    from ..engine.detach import detach, retitle

    if args.detach:
        from ..console.table import job_console

        # the supervisor's console: quiet, no colour, written to its supervisor.log
        return detach(args, run, lambda: job_console(run.job, None, "never", True))
    if any(":" in s.split("=", 1)[0] and not s.split("=", 1)[1].startswith("@") for s in args.secret if "=" in s):
        retitle(f"trainspec run {args.input}")  # inline --secret values: out of the process list from here on
    return run.execute()
