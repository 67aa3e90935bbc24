"""`trainspec run | ps | logs | down | gc`: the emulator's subcommands.

cli/cli.py calls `register(subparsers)`. The parsers are here; what each command does is in its own
module: run.py, status.py (ps, logs), down.py (down, gc), over runs.py (finding recorded and live
runs). Nothing here imports docker at module level: the CLI imports this package to build the
emulator commands' parsers, and an engine client is loaded only once a command reaches an engine.
"""

from __future__ import annotations

import argparse

from trainspec.subcommand import add_colour_option, add_command

from .down import cmd_down, cmd_gc
from .run import build_run, cmd_run
from .status import cmd_logs, cmd_ps

__all__ = ["add_run_arguments", "build_run", "register"]

ENGINE_HELP = ("the container engine: docker or podman (default: $TRAINSPEC_ENGINE; else Docker at $DOCKER_HOST, "
               "Podman at $CONTAINER_HOST; else Docker when its socket is found, also when Podman's is too; "
               "else Podman when only its socket is found: /run/podman/podman.sock, "
               "$XDG_RUNTIME_DIR/podman/podman.sock)")


RECORDED = ("; without it, also the engines this folder's runs were recorded on (a run is reached on the "
            "engine that ran it)")


def _add_engine(p: argparse.ArgumentParser, what: str = "") -> None:
    p.add_argument("--engine", choices=("docker", "podman"), help=ENGINE_HELP + what)


def register(subparsers) -> None:
    run = add_command(subparsers, "run",
                      help="run a spec, a compiled file or a chart folder locally on Docker (or Podman)",
                      description="Compile (if given a spec) and run the job on the local Docker engine (or "
                                  "Podman: --engine): a spec, any file trainspec compiles (k8s, compose, kubeflow, "
                                  "volcano, jobset, trainjob; hand-written ones too) or a Helm chart folder; one "
                                  "network per run, one container per replica, the operators' env and success rules. "
                                  "Exit code: 0 the job succeeded, 1 it failed, 2 bad input; 130/143 when interrupted.",
                      examples=[
                          "trainspec run specs/tf-ps.yaml",
                          "trainspec run specs/pytorch-ddp.yaml --gpus 0,1",
                          "trainspec run build/tf-ps/k8s.yaml --image registry.example.com/tf:2.15=tf:dev --cpu-only",
                          "trainspec run specs/full-features.yaml --secret hf-credentials=secrets/hf-credentials/ "
                          "--detach",
                          "trainspec run specs/tf-ps.yaml --set roles.worker.replicas=1 --claim tf-results=./out:rw",
                          "trainspec run specs/pytorch-ddp.yaml --gpus 0 --share-gpus",
                      ])
    add_run_arguments(run)
    run.set_defaults(func=cmd_run)

    ps = add_command(subparsers, "ps", help="list emulator runs (or one run's replicas)",
                     description="List the live emulator runs started from this folder (--all: also "
                                 "finished ones, and those of other folders), or one run's replicas.",
                     examples=["trainspec ps", "trainspec ps tf-ps"])
    ps.add_argument("run", nargs="?", help="a run id or job name: show its replicas")
    ps.add_argument("-a", "--all", action="store_true",
                    help="also list finished runs recorded here, and live runs started from other folders")
    ps.add_argument("--format", choices=("table", "json"), default="table",
                    help="json: one object per run (or the run's replicas), for scripts")
    ps.add_argument("--state-dir", help="where runs are recorded (default ./.trainspec, or $TRAINSPEC_STATE_DIR)")
    _add_engine(ps, RECORDED)
    ps.set_defaults(func=cmd_ps)

    logs = add_command(subparsers, "logs", help="show a run's logs (saved under .trainspec/runs/<run-id>/)",
                       description="Show a run's logs, prefixed by replica.",
                       examples=[
                           "trainspec logs tf-ps",
                           "trainspec logs tf-ps worker-1 -f",
                           "trainspec logs tf-ps --tail 20 -t",
                           "trainspec logs tf-ps --since 5m",
                       ])
    logs.add_argument("job", metavar="JOB", help="a run id, or a job name (its latest run)")
    logs.add_argument("replica", metavar="REPLICA", nargs="?", help="e.g. worker-1 (default: every replica)")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing new lines until the run ends")
    logs.add_argument("-n", "--tail", type=int, metavar="N", help="only the last N lines of each replica")
    logs.add_argument("--since", metavar="WHEN",
                      help="only lines from this time on: a duration (30s, 10m, 1h30m) or a time "
                           "(2026-11-23T14:00:00Z)")
    logs.add_argument("-t", "--timestamps", action="store_true", help="show when each line was printed (UTC)")
    logs.add_argument("--state-dir", help="where runs are recorded")
    add_colour_option(logs)
    _add_engine(logs, RECORDED)
    logs.set_defaults(func=cmd_logs)

    down = add_command(subparsers, "down", help="stop a run and remove its containers and network",
                       description="Stop a run and remove its containers, network and volumes. "
                                   "A job name stops the job's runs started from this folder "
                                   "(--all: from any folder); a run id stops that run.",
                       examples=["trainspec down tf-ps", "trainspec down tf-ps-3f9a1c -t 0"])
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

    gc = add_command(subparsers, "gc", help="remove what crashed or killed runs left behind (found by labels)",
                     description="Remove the containers, networks and volumes that crashed or killed "
                                 "runs of this state folder left behind, found by their trainspec labels.",
                     examples=["trainspec gc --dry-run", "trainspec gc"])
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
