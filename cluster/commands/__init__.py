"""`trainspec apply` and `trainspec ps | logs | down --cluster`: the command line of the cluster verbs.

Their parsers are here; what each verb does is in its own module: apply.py, status.py (ps, logs),
down.py, over live.py (connecting, discovery, a job's live objects and pods).

cli/cli.py calls `register(subparsers)` (apply, and a `--cluster` switch on the local verbs
for help and completion) and, when `--cluster` is on the command line of ps/logs/down,
`register_verbs(subparsers)`: those verbs with kubectl's options (`-n` is the namespace there, as
in kubectl). Nothing here imports `kubernetes`: client.py does, when a command runs.
"""

from __future__ import annotations

import argparse

from trainspec.subcommand import add_colour_option, add_command

from .apply import cmd_apply
from .down import cmd_down
from .live import POLL_SECONDS
from .status import cmd_logs, cmd_ps

CLUSTER_VERBS = ("ps", "logs", "down")


def add_connection_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
    p.add_argument("--context", metavar="NAME", help="kubeconfig context (default: its current context)")
    p.add_argument("-n", "--namespace", metavar="NS",
                   help="namespace (default: the objects' own, else the context's, else default)")


def register(subparsers) -> None:
    p = add_command(subparsers, "apply",
                    help="put jobs on a cluster: server-side apply, labelled by job (--dry-run=server to check)",
                    description="Compile specs in memory (or read compiled files and chart folders) and "
                                "server-side apply every object with field manager `trainspec`, labelled with its "
                                "job. Exit 0 applied or checked, 2 bad input, a rejection, or a cluster error.",
                    examples=[
                        "trainspec apply specs/tf-ps.yaml --dry-run=server   # the pre-merge check",
                        "trainspec apply specs/tf-ps.yaml --target kubeflow -n ml --create-namespace",
                        "trainspec apply specs/pytorch-ddp.yaml --prune        # and delete what the job no longer has",
                        "trainspec apply build/tf-ps/jobset.yaml --context prod",
                        "trainspec apply specs/full-features.yaml --secret hf-credentials:token=@env:HF_TOKEN",
                    ])
    p.add_argument("inputs", nargs="+", metavar="SPEC_OR_DIR_OR_COMPILED",
                   help="spec file or folder (compiled in memory), compiled file, or chart folder")
    p.add_argument("--target", "-t", metavar="TARGET",
                   help="for specs: k8s (default: runs with no operator), kubeflow, volcano, jobset, trainjob")
    p.add_argument("--dry-run", choices=("none", "server", "client"), default="none",
                   help="server: the API server checks everything (schemas, CEL, webhooks) and stores nothing; "
                        "client: print what would be applied, without a cluster")
    p.add_argument("--prune", action="store_true",
                   help="delete the job's objects on the cluster that it no longer produces (nothing else)")
    p.add_argument("--create-namespace", action="store_true", help="create a missing namespace (else an error)")
    p.add_argument("--force-conflicts", action="store_true",
                   help="take over fields another field manager owns (kubectl's --force-conflicts; off by default)")
    p.add_argument("--force", action="store_true",
                   help="delete and re-create the objects the server will not update in place (immutable fields: a "
                        "Job's pod template...), as kubectl apply --force; their pods restart")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="with --force: how long to wait for a deleted object to be gone (default 120)")
    p.add_argument("--allow-kind", action="append", default=[], metavar="KIND",
                   help="also send objects of KIND (Kind or Kind.group) that a training job is not made of "
                        "(cluster-scoped ones, RBAC, webhooks) or that lie outside the job's namespace")
    p.add_argument("--secret", action="append", default=[], metavar="NAME=PATH|NAME:KEY=@FILE|NAME:KEY=@env:VAR",
                   help="create a Secret from memory (as `run --secret`); never written to disk")
    p.add_argument("--runtime", metavar="FILE|DIR", action="append", default=[], help="Trainer runtime files for a "
                   "spec on a runtime (spec.trainjob) applied as --target jobset (the JobSet Trainer would make)")
    add_connection_options(p)
    for name in ("tla", "ext_var", "jpath"):
        p.set_defaults(**{name: []})
    p.set_defaults(func=cmd_apply)
    for verb in CLUSTER_VERBS:  # the local verbs' parsers: --cluster switches to register_verbs' parser
        local = subparsers.choices.get(verb)
        if local is not None:
            local.add_argument("--cluster", action="store_true",
                               help=f"act on a job on the cluster (see `trainspec {verb} --cluster --help`)")


def register_verbs(subparsers) -> None:
    ps = add_command(subparsers, "ps", help="a job's replicas on the cluster",
                     description="List trainspec jobs in the namespace, or one job's replicas: role, "
                                 "index, phase, restarts, exit code, node, age.",
                     examples=[
                         "trainspec ps --cluster",
                         "trainspec ps --cluster tf-ps -n ml",
                         "trainspec ps --cluster tf-ps --watch",
                     ])
    ps.add_argument("--cluster", action="store_true", required=True)
    ps.add_argument("job", nargs="?", metavar="JOB")
    ps.add_argument("-w", "--watch", action="store_true", help=f"print the table again every {POLL_SECONDS:g} s")
    ps.add_argument("--format", choices=("table", "json"), default="table")
    add_connection_options(ps)
    ps.set_defaults(func=cmd_ps)

    logs = add_command(subparsers, "logs", help="a job's logs on the cluster, prefixed by replica",
                       description="Print the job's pods' logs with the prefixes of local logs.",
                       examples=[
                           "trainspec logs --cluster tf-ps",
                           "trainspec logs --cluster tf-ps worker-1 -f --tail 20",
                       ])
    logs.add_argument("--cluster", action="store_true", required=True)
    logs.add_argument("job", metavar="JOB")
    logs.add_argument("replica", nargs="?", metavar="ROLE[-INDEX]", help="e.g. worker (every worker) or worker-1")
    logs.add_argument("-f", "--follow", action="store_true")
    logs.add_argument("--tail", type=int, metavar="N", help="only the last N lines of each replica")
    add_colour_option(logs)
    add_connection_options(logs)
    logs.set_defaults(func=cmd_logs)

    down = subparsers.add_parser("down", help="delete a job's objects on the cluster (foreground deletion)",
                                 description="Delete every object labelled with the job that trainspec put there, "
                                             "with foreground propagation (pods go before their job).",
                                 epilog="examples:\n  trainspec down --cluster tf-ps -n ml --wait",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    down.add_argument("--cluster", action="store_true", required=True)
    down.add_argument("job", metavar="JOB")
    down.add_argument("--wait", action="store_true", help="return when the objects and their pods are gone")
    down.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS", help="for --wait (default 300)")
    add_connection_options(down)
    down.set_defaults(func=cmd_down)
