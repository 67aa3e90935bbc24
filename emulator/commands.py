"""`trainspec run | ps | logs | down | gc`: the emulator's subcommands.

cli/cli.py calls `register(subparsers)`. Nothing here imports docker at
module level: the compile path imports this module to build its parser.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

from ..compiler.errors import SpecErrors, UsageError
from ..termsafe import neutralise

ENGINE_HELP = ("the container engine: docker or podman (default: $TRAINSPEC_ENGINE; else Docker at $DOCKER_HOST, "
               "Podman at $CONTAINER_HOST; else Docker when its socket is found, also when Podman's is too; "
               "else Podman when only its socket is found: /run/podman/podman.sock, "
               "$XDG_RUNTIME_DIR/podman/podman.sock)")


RECORDED = ("; without it, also the engines this folder's runs were recorded on (a run is reached on the "
            "engine that ran it)")


def _add_engine(p: argparse.ArgumentParser, what: str = "") -> None:
    p.add_argument("--engine", choices=("docker", "podman"), help=ENGINE_HELP + what)


def register(subparsers) -> None:
    run = subparsers.add_parser(
        "run", help="run a spec, a compiled file or a chart folder locally on Docker (or Podman)",
        description="Compile (if given a spec) and run the job on the local Docker engine (or Podman: --engine): "
                    "a spec, any file "
                    "trainspec compiles (k8s, compose, kubeflow, volcano, jobset, trainjob; hand-written ones "
                    "too) or a Helm chart folder; one network per "
                    "run, one container per replica, the operators' env and success rules. Exit code: 0 the "
                    "job succeeded, 1 it failed, 2 bad input; 130/143 when interrupted.",
        epilog="examples:\n  trainspec run specs/tf-ps.yaml\n"
               "  trainspec run specs/pytorch-ddp.yaml --gpus 0,1\n"
               "  trainspec run build/tf-ps/k8s.yaml --image registry.example.com/tf:2.15=tf:dev --cpu-only\n"
               "  trainspec run specs/full-features.yaml --secret hf-credentials=secrets/hf-credentials/ --detach\n"
               "  trainspec run specs/tf-ps.yaml --set roles.worker.replicas=1 --claim tf-results=./out:rw\n"
               "  trainspec run specs/pytorch-ddp.yaml --gpus 0 --share-gpus",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_arguments(run)
    run.set_defaults(func=cmd_run)

    ps = subparsers.add_parser("ps", help="list emulator runs (or one run's replicas)",
                               description="List the live emulator runs started from this folder (--all: also "
                                           "finished ones, and those of other folders), or one run's replicas.",
                               epilog="examples:\n  trainspec ps\n  trainspec ps tf-ps",
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    ps.add_argument("run", nargs="?", help="a run id or job name: show its replicas")
    ps.add_argument("-a", "--all", action="store_true",
                    help="also list finished runs recorded here, and live runs started from other folders")
    ps.add_argument("--format", choices=("table", "json"), default="table",
                    help="json: one object per run (or the run's replicas), for scripts")
    ps.add_argument("--state-dir", help="where runs are recorded (default ./.trainspec, or $TRAINSPEC_STATE_DIR)")
    _add_engine(ps, RECORDED)
    ps.set_defaults(func=cmd_ps)

    logs = subparsers.add_parser("logs", help="show a run's logs (saved under .trainspec/runs/<run-id>/)",
                                 description="Show a run's logs, prefixed by replica.",
                                 epilog="examples:\n  trainspec logs tf-ps\n  trainspec logs tf-ps worker-1 -f\n"
                                        "  trainspec logs tf-ps --tail 20 -t\n  trainspec logs tf-ps --since 5m",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    logs.add_argument("job", metavar="JOB", help="a run id, or a job name (its latest run)")
    logs.add_argument("replica", metavar="REPLICA", nargs="?", help="e.g. worker-1 (default: every replica)")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines until the run ends")
    logs.add_argument("-n", "--tail", type=int, metavar="N", help="only the last N lines of each replica")
    logs.add_argument("--since", metavar="WHEN",
                      help="only lines from this time on: a duration (30s, 10m, 1h30m) or a time "
                           "(2026-11-23T14:00:00Z)")
    logs.add_argument("-t", "--timestamps", action="store_true", help="show when each line was printed (UTC)")
    logs.add_argument("--state-dir", help="where runs are recorded")
    logs.add_argument("--color", dest="colour", choices=("auto", "always", "never"), default="auto")
    _add_engine(logs, RECORDED)
    logs.set_defaults(func=cmd_logs)

    down = subparsers.add_parser("down", help="stop a run and remove its containers and network",
                                 description="Stop a run and remove its containers, network and volumes. "
                                             "A job name stops the job's runs started from this folder "
                                             "(--all: from any folder); a run id stops that run.",
                                 epilog="examples:\n  trainspec down tf-ps\n  trainspec down tf-ps-3f9a1c -t 0",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    down.add_argument("job", metavar="JOB", help="a run id, or a job name (every run of it)")
    down.add_argument("-t", "--grace", type=float, metavar="SECONDS",
                      help="cap on the grace period of the run's containers (default: their own, capped by the "
                           "run's --grace); 0 kills them at once and skips preStop hooks, like `docker-compose "
                           "down -t 0`")
    down.add_argument("--state-dir", help="where runs are recorded")
    down.add_argument("-a", "--all", action="store_true",
                      help="a job name also stops its runs started from other folders (default: this folder's)")
    _add_engine(down, RECORDED)
    down.set_defaults(func=cmd_down)

    gc = subparsers.add_parser("gc", help="remove what crashed or killed runs left behind (found by labels)",
                               description="Remove the containers, networks and volumes that crashed or killed "
                                           "runs of this state folder left behind, found by their trainspec labels.",
                               epilog="examples:\n  trainspec gc --dry-run\n  trainspec gc",
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    gc.add_argument("--all", action="store_true", help="also remove live and --keep runs")
    gc.add_argument("--all-folders", action="store_true",
                    help="the runs of every state folder on this Docker engine, not only this one's")
    gc.add_argument("--state-dir", help="whose runs to remove (default ./.trainspec, or $TRAINSPEC_STATE_DIR)")
    gc.add_argument("-n", "--dry-run", action="store_true", help="only list what would be removed")
    _add_engine(gc, RECORDED)
    gc.set_defaults(func=cmd_gc)


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="SPEC_OR_COMPILED_FILE",
                   help="a spec (.yaml/.json/.jsonnet); a k8s, compose, kubeflow, volcano, jobset or trainjob file; "
                        "or a Helm chart folder")
    p.add_argument("--job", help="which job, when the file holds several")
    p.add_argument("--runtime", metavar="FILE|DIR", action="append", default=[],
                   help="a Kubeflow Trainer TrainingRuntime/ClusterTrainingRuntime file or folder, for a TrainJob or "
                        "a spec on a runtime (spec.trainjob): the pods the Trainer controller would make of it "
                        "(`kubectl get clustertrainingruntime NAME -o yaml > runtime.yaml`; repeatable)")
    p.add_argument("--gpus", help="GPUs the run may use: all (default), none, or ids like 0,1,2")
    p.add_argument("--cpu-only", action="store_true", help="drop GPU requests: a CPU dry-run")
    p.add_argument("--offline", action="store_true",
                   help="an internal network: nothing reaches or leaves the machine, DNS included")
    p.add_argument("--detach", "-d", action="store_true",
                   help="run in the background; see `trainspec ps`, `logs`, `down`")
    p.add_argument("--keep", action="store_true", help="leave containers and network after the run")
    p.add_argument("--image", action="append", default=[], metavar="NEW|OLD=NEW",
                   help="run a local image instead: OLD=NEW maps one image; NEW replaces every other image "
                        "(main, init and sidecar containers)")
    p.add_argument("--pull", action="store_true",
                   help="pull the images that are not present locally (default: never pull, no network)")
    p.add_argument("--set", dest="set", action="append", default=[], metavar="PATH=VALUE",
                   help="change a value before the run, e.g. roles.worker.replicas=2 (Helm's --set syntax; "
                        "for a spec: the spec's fields; for a chart folder: its values)")
    p.add_argument("--claim", action="append", default=[], metavar="NAME=HOSTPATH[:rw]",
                   help="mount the host folder HOSTPATH for the persistentVolumeClaim NAME (default: "
                        ".trainspec/volumes/NAME), read-only unless it ends in :rw; refused for /, /etc, the "
                        "Docker socket... unless --allow-host-path")
    p.add_argument("--mount-host", action="append", default=[], metavar="HOSTPATH[:rw]",
                   help="let the file's hostPath volumes (compose binds) mount HOSTPATH or a path inside it, "
                        "read-only unless it ends in :rw; without it no host path reaches a container")
    p.add_argument("--gpus-per-replica", type=int, metavar="N",
                   help="give each replica at most N GPUs (a smaller dry-run of a job that asks for more); said, "
                        "never silent")
    p.add_argument("--share-gpus", action="store_true",
                   help="when the job asks for more GPUs than the run may use, let replicas share them (round "
                        "robin; each replica still sees the count it asked for, or fewer when there are fewer)")
    p.add_argument("--secret", action="append", default=[], metavar="NAME=PATH|NAME:KEY=@FILE|NAME:KEY=@env:VAR",
                   help="a Secret the manifests reference but do not hold (never written to disk): a folder of "
                        "key files or a KEY=VALUE file, one key from a file or an environment variable; "
                        "NAME:KEY=VALUE works too but shows the value in the process list")
    p.add_argument("--configmap", action="append", default=[], metavar="NAME=PATH|NAME:KEY=VALUE",
                   help="a ConfigMap the manifests reference but do not hold")
    p.add_argument("--allow-host-path", action="store_true",
                   help="allow host paths named with --mount-host/--claim to be /, /etc, /proc, the Docker socket, "
                        "or hold sockets and devices, which are refused by default")
    p.add_argument("--start-order", action="store_true",
                   help="spec input: start roles in the plan's order (MPI workers before the launcher), as the "
                        "compose and jobset outputs do; by default a spec starts every replica at once, like "
                        "its k8s output on a cluster")
    p.add_argument("--grace", type=float, default=10.0, metavar="SECONDS",
                   help="cap on terminationGracePeriodSeconds when stopping containers (default 10)")
    p.add_argument("--restart-backoff", type=float, default=1.0, metavar="SECONDS",
                   help="first restart delay, doubling up to 10s (the kubelet's is 10s up to 5m)")
    p.add_argument("--pids-limit", metavar="N|none",
                   help="the pids limit of every container whose file sets none (compose pids_limit); default "
                        "4096, so a fork bomb stops inside its container; none: no limit")
    p.add_argument("--memory-limit", metavar="SIZE|none",
                   help="the memory limit of every container whose file sets none (e.g. 8Gi); default: 3/4 of "
                        "the engine's memory; none: no limit")
    p.add_argument("--publish-all-interfaces", action="store_true",
                   help="publish host ports (compose ports, hostPort) on every interface when the file names "
                        "no host IP; by default they are published on 127.0.0.1 only")
    p.add_argument("--state-dir", help="where volumes and run records go (default ./.trainspec)")
    _add_engine(p, "; the run's record names it, so ps, logs and down reach it again")
    p.add_argument("--color", dest="colour", choices=("auto", "always", "never"), default="auto")
    p.add_argument("-q", "--quiet", action="store_true", help="no log lines on the console (still saved)")
    p.add_argument("--tla", action="append", default=[], metavar="NAME=VALUE", help="Jsonnet top-level argument")
    p.add_argument("--ext-var", action="append", default=[], metavar="NAME=VALUE", help="Jsonnet external variable")
    p.add_argument("-J", dest="jpath", action="append", default=[], metavar="DIR", help="Jsonnet library path")
    p.add_argument("-f", "--values", dest="values_files", action="append", default=[], metavar="FILE",
                   help="a Helm values file (chart folder input); later files and --set win")
    p.add_argument("--namespace", metavar="NS",
                   help="a Helm chart folder's release namespace, as `helm install -n NS` (default: default)")
    p.add_argument("--env-file", dest="env_files", action="append", default=[], metavar="FILE",
                   help="compose input: read interpolation variables from FILE instead of the project's .env")
    p.add_argument("-e", "--env", dest="env_vars", action="append", default=[], metavar="NAME[=VALUE]",
                   help="compose input: one interpolation variable (NAME alone: its value in your environment); "
                        "no other variable of your environment is seen")
    p.add_argument("--run-id", help=argparse.SUPPRESS)  # set by --detach for the background process


def _pairs(values: list[str], option: str) -> dict[str, str]:
    out = {}
    for v in values:
        if "=" not in v:
            raise UsageError(f"{option} {v!r}: expected NAME=VALUE")
        k, val = v.split("=", 1)
        out[k] = val
    return out


def _state(args) -> Path:
    from .host.state import state_dir

    return state_dir(getattr(args, "state_dir", None))


def build_run(args, stream=None):
    """The run `trainspec run` asks for, its console made here and handed to it; its input checked
    against this host first, before the engine (and `docker`) is even imported."""
    from .console.table import job_console
    from .engine.preflight import check_input
    from .model.limits import parse_memory_option, parse_pids_option
    from .model.status import RunOptions
    from .readers.dispatch import load
    from .readers.overrides import using

    state = _state(args)
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
                   spec_on_runtime=getattr(args, "spec_on_runtime", None))
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
    from .engine.run import Run  # only past the input's checks: the engine's modules import the adapters

    return Run(job, opts, console, input_checked=True)


def _is_spec_input(path: str) -> bool:
    from .readers.dispatch import is_spec, read_documents

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
    from .engine.detach import detach, retitle

    if args.detach:
        from .console.table import job_console

        # the supervisor's console: quiet, no colour, written to its supervisor.log
        return detach(args, run, lambda: job_console(run.job, None, "never", True))
    if any(":" in s.split("=", 1)[0] and not s.split("=", 1)[1].startswith("@") for s in args.secret if "=" in s):
        retitle(f"trainspec run {args.input}")  # inline --secret values: out of the process list from here on
    return run.execute()



# -- ps / logs / down / gc ------------------------------------------------------

def _resolve(state: Path, name: str, docker_runs: dict | None = None, anywhere: bool = True) -> list[str]:
    """Run ids for a run id or a job name (newest first).

    A job name means this state folder's runs; when it has none and `anywhere` (reading:
    `logs`, `ps RUN`), the job's live runs in any folder (found by their labels) — if those
    are in one folder only, so the name is not ambiguous.  `down` stops nothing of another
    folder's by a job name alone: it names them and the option instead."""
    from .host.ownfs import Untrusted

    recorded, refused = _recorded(state)
    if name in refused:
        raise Untrusted(f"run {name}: {refused[name]}",
                        hint=f"remove {state / 'runs' / name} if you did not make it; trainspec acts only on the "
                             "runs it recorded")
    ids = [s["run_id"] for s in recorded if s.get("run_id") == name]
    if ids or name in (docker_runs or {}):
        return ids or [name]
    ids = [s["run_id"] for s in recorded if s.get("job") == name]
    for rid, info in (docker_runs or {}).items():
        if info.get("job") == name and info.get("state_dir") == str(state) and rid not in ids:
            ids.append(rid)
    if ids:
        return ids
    elsewhere = {rid: info.get("state_dir") or "?" for rid, info in (docker_runs or {}).items()
                 if info.get("job") == name}
    folders = sorted(set(elsewhere.values()))
    if folders and not anywhere:
        listed = ", ".join(f"{rid} ({folder})" for rid, folder in sorted(elsewhere.items()))
        raise UsageError(f"no run of job {name!r} was started from this folder ({state}); it runs from other "
                         f"folders: {listed}; `trainspec down {name} --all` stops those, or name a run id")
    if len(folders) == 1:
        return sorted(elsewhere)
    if folders:
        listed = ", ".join(f"{rid} ({folder})" for rid, folder in sorted(elsewhere.items()))
        raise UsageError(f"job {name!r} has runs in {len(folders)} folders: {listed}; name a run id, or run "
                         "from its folder (or pass --state-dir)")
    raise UsageError(f"no run or job named {name!r} here ({state}) nor running anywhere on this Docker engine "
                     "(see `trainspec ps -a`)")


_WARNED: set[str] = set()


def _recorded(state: Path) -> tuple[list[dict], dict[str, str]]:
    """This folder's run records trainspec made (newest first), and the others (folder -> why), each
    said once on stderr. A state folder (or its `runs`) that is a link is refused outright."""
    from .host.ownfs import FOLDER, Untrusted
    from .host.state import find_runs

    refused: dict[str, str] = {}
    runs = find_runs(state, refused)
    if FOLDER in refused:
        raise Untrusted(refused[FOLDER].split("; hint: ")[0],
                        hint="remove it (trainspec makes it again), or pass --state-dir with another folder")
    for name, why in sorted(refused.items()):
        if name not in _WARNED:
            _WARNED.add(name)
            print(neutralise(f"trainspec: ignoring {state / 'runs' / name}: {why}", False), file=sys.stderr)
    return runs, refused


def _engines(args, state: Path) -> list:
    """Clients of the engine chosen for this command and, unless --engine/$TRAINSPEC_ENGINE named one,
    of the engines this folder's runs were recorded on (a Podman run is found on Podman even where
    Docker is the default). The chosen engine's error when none answers."""
    from .adapters.choice import choose, recorded
    from .adapters.engines import connect

    first = choose(getattr(args, "engine", None))
    wanted = [first]
    if not first.explicit:
        for st in _recorded(state)[0]:
            ch = recorded(st.get("engine"), st.get("engine_url"))
            if ch is not None and all(ch.url != w.url for w in wanted):
                wanted.append(ch)
    clients, error = [], None
    for ch in wanted:
        try:
            clients.append(connect(choice=ch))
        except UsageError as exc:
            if ch is first:
                error = exc
    if error is not None:
        if not clients:
            raise error
        print(f"trainspec: {error}; listing the runs of {', '.join(c.title for c in clients)} only",
              file=sys.stderr)
    return clients


def _list_runs(clients: list) -> dict:
    """run id -> its containers, networks and volumes (ContainerEngine.list_runs) on each engine, and
    `client`: the engine it is on."""
    live: dict = {}
    for client in clients:
        for rid, info in client.list_runs().items():
            live.setdefault(rid, {**info, "client": client})
    return live


def _live_runs(args, state: Path) -> dict:
    """Runs on the engines by their labels; {} when no engine answers (saved logs still show)."""
    try:
        return _list_runs(_engines(args, state))
    except UsageError:
        return {}


def _run_folder(state: Path, rid: str, live: dict) -> Path:
    from .host.state import run_dir

    folder = (live.get(rid) or {}).get("state_dir")
    return run_dir(Path(folder) if folder else state, rid)


def cmd_ps(args) -> int:
    from .console.table import age_text
    from .host.state import read_state, run_dir, supervisor_alive
    from .model.status import Row

    state = _state(args)
    live = _list_runs(_engines(args, state))
    if args.run:
        rid = _resolve(state, args.run, live)[0]
        st = read_state(_run_folder(state, rid, live)) or {}
        if args.format == "json":
            print(json.dumps({"run_id": rid, "job": st.get("job", live.get(rid, {}).get("job")),
                              "status": st.get("status"), "reason": st.get("reason", ""),
                              "replicas": st.get("replicas", []),
                              "containers": live.get(rid, {}).get("containers", [])}, indent=2, sort_keys=True))
            return 0
        print(neutralise(f"run {rid}  job {st.get('job', live.get(rid, {}).get('job', '?'))}  "
                         f"status {st.get('status', '?')}" + (f"  ({st['reason']})" if st.get("reason") else ""),
                         False))
        from .console.table import Console

        rows = [Row(r["display"], r["phase"], r.get("ready", False), r.get("restarts", 0), r.get("exit_code"),
                    r.get("reason", ""), st.get("started", time.time())) for r in st.get("replicas", [])]
        if rows:
            print(Console([r.name for r in rows], stream=sys.stdout, colour="never").table(rows, age=False))
        for c in live.get(rid, {}).get("containers", []):
            print(neutralise(f"  container {c['name']}: {c['status']}", False))
        return 0
    recorded = {s["run_id"]: s for s in _recorded(state)[0]}
    # Runs started from other folders are another project's: listed with --all only, but counted.
    here = [rid for rid, info in live.items() if _same_folder(info.get("state_dir"), state)]
    others = [rid for rid in live if rid not in here]
    ids = list(live) if args.all else here
    if args.all:
        ids += [r for r in recorded if r not in live]
    table = []
    for rid in ids:
        info = live.get(rid, {"containers": [], "supervisor": "", "job": "?"})
        st = recorded.get(rid) or read_state(run_dir(Path(info.get("state_dir") or state), rid)) or {}
        running = sum(1 for c in info["containers"] if c["state"] == "running")
        total = len(st.get("replicas", [])) or len({c["replica"] for c in info["containers"]})
        alive = supervisor_alive(info.get("supervisor") or st.get("supervisor", ""))
        status = st.get("status", "?")
        if status == "Running" and alive is False:
            status = "orphaned"
        sup = "alive" if alive else ("-" if st.get("finished") else "gone" if alive is False else "elsewhere")
        table.append({"run_id": rid, "job": st.get("job", info.get("job", "?")), "status": status,
                      "running": running, "replicas": total, "started": st.get("started"),
                      "finished": st.get("finished"), "supervisor": sup, "reason": st.get("reason", ""),
                      "state_dir": info.get("state_dir") or str(state)})
    if args.format == "json":
        print(json.dumps(table, indent=2, sort_keys=True))
        return 0
    elsewhere = any(not _same_folder(row["state_dir"], state) for row in table)
    print((f"{'RUN ID':<28} {'JOB':<20} {'STATUS':<12} {'REPLICAS':<10} {'AGE':<8} {'SUPERVISOR':<10}"
           + (" FOLDER" if elsewhere else "")).rstrip())
    for row in table:
        age = age_text(time.time() - row["started"]) if row["started"] else "-"
        folder = "" if _same_folder(row["state_dir"], state) else os.path.dirname(row["state_dir"])
        line = (f"{row['run_id']:<28} {row['job']:<20} {row['status']:<12} "
                f"{str(row['running']) + '/' + str(row['replicas']):<10} {age:<8} {row['supervisor']:<10}"
                + (f" {folder or '.'}" if elsewhere else ""))
        print(neutralise(line.rstrip(), False))
    if others and not args.all:
        print(f"trainspec: {len(others)} live run(s) started from other folders not listed "
              "(`trainspec ps --all` lists them)", file=sys.stderr)
    return 0


def _same_folder(folder: str | None, state: Path) -> bool:
    """Whether a run's recorded state folder is this one (a run without one counts as here)."""
    return not folder or os.path.realpath(folder) == os.path.realpath(state)


def cmd_logs(args) -> int:
    from .console.logview import parse_since, select, stamp_text
    from .console.table import Console
    from .host.savedlogs import LogReader
    from .host.state import read_state

    state = _state(args)
    if args.tail is not None and args.tail < 0:
        raise UsageError("--tail must be 0 or more lines")
    since = parse_since(args.since)
    try:  # this folder's saved runs first: no daemon needed
        live: dict = {}
        rid = _resolve(state, args.job)[0]
    except UsageError:
        live = _live_runs(args, state)  # a run of this job started from another folder
        rid = _resolve(state, args.job, live)[0]
    d = _run_folder(state, rid, live)
    files = sorted(p for p in d.glob("*.log") if p.name != "supervisor.log")
    if args.replica:
        files = [p for p in files if p.stem == args.replica]
        if not files:
            names = ", ".join(p.stem for p in sorted(d.glob("*.log")) if p.stem != "supervisor")
            raise UsageError(f"run {rid} has no replica {args.replica!r} (replicas: {names})")
    console = Console([p.stem for p in files], sys.stdout, None if args.colour == "auto" else args.colour, live=False)
    single = len(files) == 1 and bool(args.replica)
    readers = {}
    for p in files:
        try:
            readers[p] = LogReader(p)
        except OSError as exc:  # a link (O_NOFOLLOW) or unreadable: not a log trainspec saved
            print(neutralise(f"trainspec: skipping {p}: {exc.strerror}", False), file=sys.stderr)

    def show(lines) -> None:
        for t, name, line in lines:
            text = f"{stamp_text(t)} {line}" if args.timestamps else line
            if single:
                print(neutralise(text, False), flush=True)
            else:
                console.log(name, text)

    try:
        show(select({r.name: r.read() for r in readers.values()}, args.tail, since))
        while args.follow:
            got = False
            batch = {r.name: r.read() for r in readers.values()}
            if any(batch.values()):
                got = True
                show(select(batch, None, since))
            st = read_state(d) or {}
            if st.get("finished") and not got:
                return 0
            for p in d.glob("*.log"):
                if p not in readers and p.name != "supervisor.log" and (not args.replica or p.stem == args.replica):
                    with contextlib.suppress(OSError):
                        readers[p] = LogReader(p)
            if not got:
                time.sleep(0.3)
    except KeyboardInterrupt:
        return 0
    finally:
        for r in readers.values():
            r.close()
    return 0


def cmd_down(args) -> int:
    from concurrent.futures import ThreadPoolExecutor

    state = _state(args)
    clients = _engines(args, state)
    live = _list_runs(clients)
    ids = _resolve(state, args.job, live, anywhere=args.all)
    if args.job in ids:
        ids = [args.job]  # a run id: that run, wherever it was started
    elif args.all:  # a job name with --all: its live runs from every folder too
        ids += [rid for rid, info in live.items() if info.get("job") == args.job and rid not in ids]
    left = sorted(rid for rid, info in live.items()
                  if info.get("job") == args.job and rid not in ids and not _same_folder(info.get("state_dir"), state))
    if args.grace is not None and args.grace < 0:
        raise UsageError("--grace must be 0 or more seconds")
    with ThreadPoolExecutor(max_workers=max(1, min(len(ids), 8))) as pool:
        results = list(pool.map(lambda rid: _down_one(_client_of(clients, state, rid, live), state, rid,
                                                      live.get(rid), args.grace), ids))
    reported = 0
    for rid, (c, n, v) in zip(ids, results):
        if c or n or v or len(ids) == 1:
            print(f"{rid}: removed {c} container(s), {n} network(s), {v} volume(s)")
            reported += 1
    if not reported:
        print(f"nothing to remove for {args.job}")
    if left:
        print(f"trainspec: left {len(left)} run(s) of {args.job} started from other folders running: "
              f"{', '.join(left)} (`trainspec down {args.job} --all` stops them too)", file=sys.stderr)
    return 0


def _client_of(clients: list, state: Path, rid: str, live: dict):
    """The engine a run is on: where its containers are, else the one its record names, else the chosen one."""
    from .host.state import read_state, run_dir

    if rid in live:
        return live[rid]["client"]
    st = read_state(run_dir(state, rid)) or {}
    return next((c for c in clients if c.name == st.get("engine") and c.url == st.get("engine_url")), clients[0])


def _down_one(client, state: Path, rid: str, info: dict | None, grace: float | None) -> tuple[int, int, int]:
    """Stop one run: its supervisor (if alive) stops it as the run would (preStop hooks, grace
    periods, saved state); then everything left with the run's label is removed."""
    import signal
    from concurrent.futures import ThreadPoolExecutor

    from .host.state import read_state, run_dir, supervisor_alive, supervisor_pid

    info = info or {"containers": [], "networks": 0, "volumes": 0}
    rdir = Path(info.get("state_dir") or state) / "runs" if info.get("state_dir") else None
    rdir = (rdir / rid) if rdir else run_dir(state, rid)
    sup = info.get("supervisor") or (read_state(rdir) or {}).get("supervisor", "")
    if sup and supervisor_alive(sup):
        if grace is not None:
            from .host.ownfs import write_own_file

            with contextlib.suppress(OSError, UsageError):  # read by the supervisor's signal handler
                write_own_file(rdir.parent.parent, ("runs", rdir.name), "stop-grace", f"{grace:g}\n".encode())
        pid = supervisor_pid(sup)
        try:
            if pid:
                os.kill(pid, signal.SIGTERM)  # the supervisor cleans up itself, hooks and all
        except OSError:
            pass
        if grace == 0:
            # Nothing to wait for: force-remove (kill + remove, one call each, in parallel) while
            # the supervisor winds down; it finds them gone. What it might still create is
            # removed by label below, once it has exited.
            client.remove_containers(rid)
        # its containers' grace periods (at most the run's --grace, 10 s by default) plus removal
        deadline = time.monotonic() + (grace if grace is not None else 30) + 20
        while supervisor_alive(sup) and time.monotonic() < deadline:
            time.sleep(0.02)
    elif grace is not None and grace > 0:
        # No supervisor (killed, or --keep): stop with the grace period, then remove.
        cids = [c["id"] for c in info["containers"] if c["state"] == "running"]
        with ThreadPoolExecutor(max_workers=max(1, min(len(cids), 32))) as pool:
            list(pool.map(lambda cid: _quiet(client.stop, cid, int(grace)), cids))
    c, n, v = client.remove_run(rid)
    # The supervisor may have removed them itself: report what the run had.
    return max(c, len(info["containers"])), max(n, info["networks"]), max(v, info["volumes"])


def _quiet(fn, *a, **kw) -> None:
    with contextlib.suppress(Exception):  # gone already
        fn(*a, **kw)


def cmd_gc(args) -> int:
    from .host.state import read_state, run_dir, supervisor_alive

    here = _state(args)
    runs = _list_runs(_engines(args, here))
    removed = 0
    any_listed = False
    for rid, info in sorted(runs.items()):
        alive = supervisor_alive(info.get("supervisor", ""))
        st = read_state(run_dir(Path(info["state_dir"]), rid)) if info.get("state_dir") else None
        kept = bool(st and st.get("kept") and st.get("finished"))
        if not args.all_folders and info.get("state_dir") != str(here):
            continue  # another folder's runs are not this command's business (a test or a project there)
        if (alive or alive is None or kept) and not args.all:
            continue
        if args.dry_run:
            any_listed = True
            print(f"would remove {rid}: {len(info['containers'])} container(s), {info['networks']} network(s), "
                  f"{info['volumes']} volume(s)")
            continue
        c, n, v = info["client"].remove_run(rid)
        removed += 1
        print(f"{rid}: removed {c} container(s), {n} network(s), {v} volume(s)")
    removed += _sweep_files(here, runs, args)
    if not removed and not (args.dry_run and any_listed):
        print("nothing to remove")
    return 0


def _sweep_files(here: Path, runs: dict, args) -> int:
    """Secret/configMap folders on the tmpfs recorded by runs of this folder whose supervisor is
    gone (a CLI killed before or while creating containers): found from the run's record, not
    only through container labels."""
    from .host.filesvol import sweep
    from .host.state import read_state, run_dir, supervisor_alive

    def alive(rid: str, supervisor: str) -> bool:
        if args.all and not args.dry_run and rid in runs:
            return False  # removed above with its containers; the folder too
        st = read_state(run_dir(here, rid)) or {}
        if st.get("kept") and st.get("finished") and not args.all:
            return True  # --keep: the containers still use it, until `trainspec down` (or gc --all)
        for ident in {supervisor, str(st.get("supervisor") or ""), str(runs.get(rid, {}).get("supervisor", ""))}:
            if ident and supervisor_alive(ident) is not False:
                return not args.all
        return False

    refused: dict[str, str] = {}
    found = sweep(here, alive, dry_run=args.dry_run, refused=refused)
    for name, why in sorted(refused.items()):
        if name not in _WARNED:
            _WARNED.add(name)
            print(neutralise(f"trainspec: gc leaves alone what {here / 'runs' / name} names: {why}", False),
                  file=sys.stderr)
    for rid, path in found:
        print(f"{'would remove' if args.dry_run else 'removed'} {rid}'s secret files folder {path}")
    return 0 if args.dry_run else len(found)
