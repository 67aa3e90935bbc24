"""`trainspec apply` and `trainspec ps | logs | down --cluster`: the command line of the cluster verbs.

cli/cli.py calls `register(subparsers)` (apply, and a `--cluster` switch on the local verbs
for help and completion) and, when `--cluster` is on the command line of ps/logs/down,
`register_verbs(subparsers)`: those verbs with kubectl's options (`-n` is the namespace there, as
in kubectl). Nothing here imports `kubernetes`: client.py does, when a command runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from trainspec.compiler.errors import UsageError
from trainspec.compiler.kinds import trainjob

from . import kinds
from .errors import ApiFailure, ClusterError, describe

CLUSTER_VERBS = ("ps", "logs", "down")
POLL_SECONDS = 2.0


def add_connection_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
    p.add_argument("--context", metavar="NAME", help="kubeconfig context (default: its current context)")
    p.add_argument("-n", "--namespace", metavar="NS",
                   help="namespace (default: the objects' own, else the context's, else default)")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "apply", help="put jobs on a cluster: server-side apply, labelled by job (--dry-run=server to check)",
        description="Compile specs in memory (or read compiled files and chart folders) and server-side apply "
                    "every object with field manager `trainspec`, labelled with its job. Exit 0 applied or "
                    "checked, 2 bad input, a rejection, or a cluster error.",
        epilog="examples:\n  trainspec apply specs/tf-ps.yaml --dry-run=server   # the pre-merge check\n"
               "  trainspec apply specs/tf-ps.yaml --target kubeflow -n ml --create-namespace\n"
               "  trainspec apply specs/pytorch-ddp.yaml --prune        # and delete what the job no longer has\n"
               "  trainspec apply build/tf-ps/jobset.yaml --context prod\n"
               "  trainspec apply specs/full-features.yaml --secret hf-credentials:token=@env:HF_TOKEN",
        formatter_class=argparse.RawDescriptionHelpFormatter)
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
    ps = subparsers.add_parser("ps", help="a job's replicas on the cluster",
                               description="List trainspec jobs in the namespace, or one job's replicas: role, "
                                           "index, phase, restarts, exit code, node, age.",
                               epilog="examples:\n  trainspec ps --cluster\n  trainspec ps --cluster tf-ps -n ml\n"
                                      "  trainspec ps --cluster tf-ps --watch",
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    ps.add_argument("--cluster", action="store_true", required=True)
    ps.add_argument("job", nargs="?", metavar="JOB")
    ps.add_argument("-w", "--watch", action="store_true", help=f"print the table again every {POLL_SECONDS:g} s")
    ps.add_argument("--format", choices=("table", "json"), default="table")
    add_connection_options(ps)
    ps.set_defaults(func=cmd_ps)

    logs = subparsers.add_parser("logs", help="a job's logs on the cluster, prefixed by replica",
                                 description="Print the job's pods' logs with the prefixes of local logs.",
                                 epilog="examples:\n  trainspec logs --cluster tf-ps\n"
                                        "  trainspec logs --cluster tf-ps worker-1 -f --tail 20",
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    logs.add_argument("--cluster", action="store_true", required=True)
    logs.add_argument("job", metavar="JOB")
    logs.add_argument("replica", nargs="?", metavar="ROLE[-INDEX]", help="e.g. worker (every worker) or worker-1")
    logs.add_argument("-f", "--follow", action="store_true")
    logs.add_argument("--tail", type=int, metavar="N", help="only the last N lines of each replica")
    logs.add_argument("--color", dest="colour", choices=("auto", "always", "never"), default="auto")
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


def _connect(args):
    from .client import Cluster

    return Cluster(args.kubeconfig, args.context, args.namespace)


def _what(obj: dict) -> str:
    from .plan import key

    return key(obj).show()


# -- apply ---------------------------------------------------------------------------------------


def _secrets_for(bundles, options: list[str]) -> dict[str, dict[str, dict[str, bytes]]]:
    """job -> its --secret Secrets: a secret goes with the job that references it (the one job when only one)."""
    if not options:
        return {}
    from trainspec.emulator.readers.secrets import parse_key_options, referenced_secrets

    secrets = parse_key_options(options, "--secret")
    out: dict[str, dict[str, dict[str, bytes]]] = {}
    for name, data in secrets.items():
        users = []
        for b in bundles:
            refs: set[str] = set()
            referenced_secrets(b.objects, refs)
            if name in refs:
                users.append(b.job)
        if not users and len(bundles) == 1:
            users = [bundles[0].job]
        if len(users) != 1:
            raise UsageError(f"--secret {name}: {'no job' if not users else 'jobs ' + ', '.join(users)} "
                             f"reference{'s' if len(users) == 1 else ''} it; apply those jobs one at a time")
        out.setdefault(users[0], {})[name] = data
    return out


def _ssh_secrets(objects: list[dict]) -> dict[str, dict[str, bytes]]:
    from trainspec.emulator.readers.secrets import add_ssh_secrets

    found: dict[str, dict[str, bytes]] = {}
    add_ssh_secrets(objects, found)
    return found


def cmd_apply(args) -> int:
    from .sources import is_chart, load

    if args.timeout <= 0:
        raise UsageError("--timeout must be more than 0 seconds")
    cluster = None
    if args.dry_run != "client" and any(is_chart(i) for i in args.inputs):
        cluster = _connect(args)  # a chart is rendered for the namespace it goes to (reads config only)
    namespace = cluster.namespace if cluster is not None else args.namespace or "default"
    bundles = load(args.inputs, args, args.target, namespace)
    secrets = _secrets_for(bundles, args.secret)
    allowed = frozenset(k.lower() for k in args.allow_kind)
    if args.dry_run == "client":
        namespace = args.namespace or "default"
        failed = False
        for b in bundles:
            objects = _prepared(b, secrets.get(b.job, {}), namespace, args.namespace is not None, None)
            refusals = _refusal_lines(b, objects, allowed, None, namespace)
            if refusals:
                sys.stderr.writelines(line + "\n" for line in refusals)
                failed = True
                continue
            for obj in objects:
                print(f"{_what(obj)}: would be applied (dry run: client)")
        return 2 if failed else 0
    cluster = cluster or _connect(args)
    failed = False
    for b in bundles:
        failed |= _apply_bundle(cluster, args, b, secrets.get(b.job, {}), allowed)
    return 2 if failed else 0


def _prepared(b, secrets: dict[str, dict[str, bytes]], namespace: str, explicit: bool, scope) -> list[dict]:
    """The job's objects as they are sent, its --secret Secrets in the job's own namespace."""
    from . import plan as P

    job_ns = P.job_namespace(P.prepared(b.objects, b.job, namespace, explicit, scope), namespace)
    return P.prepared(b.objects + P.secret_objects(secrets, b.job, job_ns), b.job, namespace, explicit, scope)


def _refusal_lines(b, objects: list[dict], allowed: frozenset[str], scope, namespace: str) -> list[str]:
    """`apply` sends what a training job is made of: every other object is an error at its own line."""
    from . import plan as P

    out = []
    for obj, why in P.refused(objects, P.job_namespace(objects, namespace), allowed, scope):
        where = _object_position(b, obj)
        kind = str(obj.get("kind"))
        out.append(f"{where}: {_what(obj)}: refused: {why}; apply sends only a training job's own objects "
                   f"(pass --allow-kind {kind} to send it anyway)")
    return out


def _object_position(b, obj: dict) -> str:
    """file:line:column of where an object was written: its document in a compiled file, the spec.patches op
    that added it, else the input's name."""
    meta = obj.get("metadata") or {}
    if b.file_positions:
        mine = b.file_positions.get((str(obj.get("kind")), str(meta.get("name"))), {})
        found = mine.get(("kind",)) or mine.get(())
        if found:
            return f"{b.origin}:{found[0]}:{found[1]}"
    if b.from_spec:
        for op in reversed(b.patches):
            value = (op.op or {}).get("value")
            if isinstance(value, dict) and value.get("kind") == obj.get("kind") and \
                    (value.get("metadata") or {}).get("name") == meta.get("name"):
                return f"{b.origin}:{op.line}:{op.column}: spec.patches.{b.target}"
    return f"trainspec: error: {b.origin}"


class _Served:
    """Discovery, asked once per group/version: kind -> (plural, namespaced), or None when not served."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.cache: dict[str, dict[str, tuple[str, bool]] | None] = {}

    def kinds(self, api_version: str) -> dict[str, tuple[str, bool]] | None:
        if api_version not in self.cache:
            from .discovery import served_kinds

            try:
                self.cache[api_version] = served_kinds(self.cluster.request("GET", kinds.base_path(api_version)))
            except ApiFailure as exc:
                if exc.status.code != 404:
                    raise ClusterError(describe(exc.status, f"discovery of {api_version}")) from None
                self.cache[api_version] = None
        return self.cache[api_version]

    def plural(self, api_version: str, kind: str) -> tuple[str, bool] | None:
        return (self.kinds(api_version) or {}).get(kind)


def _apply_bundle(cluster, args, b, secrets: dict[str, dict[str, bytes]], allowed: frozenset[str]) -> bool:
    """Apply one job; True when something failed (already reported on stderr)."""
    from . import plan as P
    from .discovery import missing_message
    from .trainer_runtimes import missing_runtimes

    dry = args.dry_run == "server"
    served = _Served(cluster)

    def scope(obj: dict) -> bool | None:
        found = served.plural(str(obj.get("apiVersion")), str(obj.get("kind")))
        return None if found is None else found[1]

    def fail(lines: list[str]) -> bool:
        sys.stderr.writelines(line + "\n" for line in lines)
        return True

    objects = _prepared(b, secrets, cluster.namespace, cluster.explicit_namespace, scope)
    refusals = _refusal_lines(b, objects, allowed, scope, cluster.namespace)
    if refusals:
        return fail(refusals)
    missing = [missing_message(str(o["apiVersion"]), str(o["kind"]), served.kinds(str(o["apiVersion"])), b.from_spec)
               for o in objects if served.plural(str(o["apiVersion"]), str(o["kind"])) is None]
    if missing:
        return fail([f"trainspec: error: {b.origin}: job {b.job}: {line}" for line in dict.fromkeys(missing)])
    problems: list[str] = []
    unchecked: set[str] = set()
    for ns in P.namespaces_of(objects):
        try:
            cluster.request("GET", f"/api/v1/namespaces/{ns}")
        except ApiFailure as exc:
            if exc.status.code == 403:
                continue  # may not read namespaces but may write in one: the apply itself will say
            if exc.status.code != 404:
                raise ClusterError(describe(exc.status, f"namespace {ns}")) from None
            if not args.create_namespace:
                problems.append(f"namespace {ns} does not exist: create it, or pass --create-namespace")
                continue
            _apply_one(cluster, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, "namespaces",
                       False, dry, args.force_conflicts)
            print(f"Namespace {ns}: {'created (dry run: server)' if dry else 'created'}")
            if dry:
                unchecked.add(ns)
    problems += _queue_problems(cluster, objects)
    problems += missing_runtimes(cluster, objects)  # the Trainer runtimes its TrainJobs name
    if problems:
        return fail([f"trainspec: error: {b.origin}: job {b.job}: {line}" for line in problems])
    job_ns = P.job_namespace(objects, cluster.namespace)
    ssh = {name: data for name, data in _ssh_secrets(objects).items()
           if job_ns in unchecked or not _exists(cluster, job_ns, name)}
    objects = P.ordered(objects + P.secret_objects(ssh, b.job, job_ns))
    live = {P.key(o): o for o in _live_objects(cluster, served, b.job, P.namespaces_of(objects))
            if not (o.get("metadata") or {}).get("deletionTimestamp")}

    def send(obj: dict, dry_run: bool) -> Any:
        plural, is_namespaced = served.plural(str(obj["apiVersion"]), str(obj["kind"])) or ("", True)
        return _apply_one(cluster, obj, plural, is_namespaced, dry_run, args.force_conflicts)

    # The objects already on the cluster first, as a dry run (the server's whole update validation, nothing
    # stored): a field it will not change in place, or another rejection of the update, is reported before
    # anything changes, not after half the job. New objects are not checked ahead: one may need an earlier one
    # to exist (a TrainJob its runtime, for Trainer's webhook), which a dry run does not store. With
    # --dry-run=server this is the whole run, every object.
    failures: list[str] = []
    stuck: list[tuple[dict, tuple[str, ...]]] = []  # (object, its immutable fields)
    answers: dict = {}
    for obj in objects:
        if obj["metadata"].get("namespace") in unchecked:
            print(f"{_what(obj)}: not checked: its namespace does not exist yet (dry run)", file=sys.stderr)
            continue
        if not dry and P.key(obj) not in live:
            continue
        try:
            answers[P.key(obj)] = send(obj, True)
        except ApiFailure as exc:
            from .errors import immutable_fields

            fields = immutable_fields(exc.status) if P.key(obj) in live else ()
            if fields:
                stuck.append((obj, fields))
            else:
                failures += _rejection_lines(b, obj, exc.status)
    if failures:
        return fail(failures)  # nothing was changed: the real requests come after the dry runs passed
    if stuck and not args.force:
        return fail(_immutable_lines(b, stuck, dry))
    suffix = " (dry run: server)" if dry else ""
    for obj, fields in stuck:  # --force: as kubectl apply --force, delete, wait until gone, then create
        _delete(cluster, served, obj, dry, _propagation(cluster, b.job))
        print(f"{_what(obj)}: deleted to be re-created ({', '.join(fields)} cannot change){suffix}")
    if stuck and not dry:
        _wait_gone(cluster, served, [o for o, _ in stuck], args.timeout)
    recreated = {P.key(o) for o, _ in stuck}
    changed = 0
    for obj in objects:
        k = P.key(obj)
        if obj["metadata"].get("namespace") in unchecked:
            continue
        if dry:
            new = k not in live or _differs(answers.get(k), live[k])
            word = "re-created" if k in recreated else "accepted" if new else "unchanged"
        else:
            try:
                answer = send(obj, False)
            except ApiFailure as exc:
                # accepted by the dry run a moment ago: something changed on the cluster in between
                return fail(_rejection_lines(b, obj, exc.status))
            word = "re-created" if k in recreated else "created" if k not in live else \
                "unchanged" if _version(answer) == _version(live[k]) else "configured"
        changed += word != "unchanged"
        print(f"{_what(obj)}: {word}{suffix}")
    pruned = 0
    if args.prune:
        for obj in P.prune_set(_live_objects(cluster, served, b.job, P.namespaces_of(objects)), objects, b.job):
            # kubectl's prune cascade (background): the object goes now, what it owns after it
            _delete(cluster, served, obj, dry, "Background")
            pruned += 1
            print(f"{_what(obj)}: pruned{suffix}")
    if not changed and not pruned and not unchecked:
        print(f"job {b.job}: unchanged: the cluster already runs this job as written{suffix}")
    return False


def _version(obj: Any) -> str:
    return str(((obj or {}).get("metadata") or {}).get("resourceVersion", "")) if isinstance(obj, dict) else ""


_SERVER_OWNED = ("managedFields", "resourceVersion", "generation", "creationTimestamp", "uid")


def _differs(answer: Any, live: dict) -> bool:
    """Whether a dry-run answer (the object as it would be stored) differs from the stored one."""
    def strip(obj: Any) -> Any:
        if not isinstance(obj, dict):
            return obj
        out = {k: v for k, v in obj.items() if k not in ("status", "apiVersion", "kind")}
        out["metadata"] = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _SERVER_OWNED}
        return out

    return strip(answer) != strip(live)


def _immutable_lines(b, stuck: list[tuple[dict, tuple[str, ...]]], dry: bool, shown: int = 2) -> list[str]:
    """A few lines: where each object comes from and which field cannot change (two objects at most, then a
    count), and the way out."""
    from .errors import locate, parse_field_path, spec_candidates

    lines = []
    for obj, fields in stuck[:shown]:
        what = f"{_what(obj)}: {', '.join(fields)} cannot change on an existing object (field is immutable)"
        where = locate(b.origin, b.positions, spec_candidates(obj, parse_field_path(fields[0]))) \
            if b.from_spec else None
        lines.append(f"{where.file}:{where.line}:{where.column}: {where.path}: {what}" if where is not None
                     else f"{_object_position(b, obj)}: {what}")
    if len(stuck) > shown:
        lines.append(f"trainspec: error: and {len(stuck) - shown} more: "
                     + ", ".join(_what(o) for o, _ in stuck[shown:]))
    lines.append(f"trainspec: error: job {b.job}: {'nothing was changed; ' if not dry else ''}"
                 f"`trainspec apply --force` deletes and re-creates {'it' if len(stuck) == 1 else 'them'} "
                 "(their pods restart), as kubectl apply --force does")
    return lines


def _propagation(cluster, job: str) -> str:
    """Foreground while the job has pods (they stop before what they run under goes); with none, Background: a
    foreground deletion would wait for the garbage collector's finalizer, forever on a server without
    kube-controller-manager."""
    try:
        return "Foreground" if _pods(cluster, job) else "Background"
    except ClusterError:  # may not list pods (RBAC): pods first
        return "Foreground"


def _wait_gone(cluster, served, objects: list[dict], timeout: float) -> None:
    """Until every object is gone (as kubectl apply --force waits before it creates again)."""
    deadline = time.monotonic() + timeout
    left = list(objects)
    while left:
        still = []
        for obj in left:
            meta = obj["metadata"]
            plural, is_namespaced = served.plural(str(obj["apiVersion"]), str(obj["kind"])) or ("", True)
            try:
                cluster.request("GET", kinds.resource_path(str(obj["apiVersion"]), plural,
                                                           meta.get("namespace") if is_namespaced else None,
                                                           meta["name"]))
                still.append(obj)
            except ApiFailure as exc:
                if exc.status.code != 404:
                    raise ClusterError(describe(exc.status, _what(obj))) from None
        left = still
        if left and time.monotonic() > deadline:
            raise ClusterError(f"{', '.join(_what(o) for o in left)}: still there {timeout:g} s after its "
                               "deletion (finalizers?); nothing was re-created: run apply --force again when it "
                               "is gone")
        if left:
            time.sleep(0.5)


def _apply_one(cluster, obj: dict, plural: str, is_namespaced: bool, dry: bool, force: bool) -> Any:
    meta = obj["metadata"]
    path = kinds.resource_path(str(obj["apiVersion"]), plural, meta.get("namespace") if is_namespaced else None,
                               meta["name"])
    # fieldValidation=Strict as kubectl sends it: the server default (Warn) drops an unknown field with only
    # a warning header, so a misspelt field would pass the check and vanish from the job
    query = {"fieldManager": "trainspec", "fieldValidation": "Strict", "force": "true" if force else None,
             "dryRun": "All" if dry else None}
    return cluster.request("PATCH", path, query, obj, content_type="application/apply-patch+yaml")


def _exists(cluster, namespace: str, secret: str) -> bool:
    try:
        cluster.request("GET", f"/api/v1/namespaces/{namespace}/secrets/{secret}")
        return True
    except ApiFailure as exc:
        if exc.status.code == 404:
            return False
        raise ClusterError(describe(exc.status, f"Secret {namespace}/{secret}")) from None


def _queue_problems(cluster, objects: list[dict]) -> list[str]:
    from .plan import queues

    out = []
    preferred: dict[str, str] = {}
    for kind, ns, name in queues(objects):
        if kind == "LocalQueue":
            # the version the server prefers (Kueue serves v1beta1 and, since 0.15, v1beta2); v1beta1 when the
            # group answers nothing readable (the GET below then says what is wrong)
            version = preferred.get("kueue") or preferred.setdefault("kueue", _preferred_version(
                cluster, "kueue.x-k8s.io", "v1beta1"))
            path, group, what = (f"/apis/kueue.x-k8s.io/{version}/namespaces/{ns}/localqueues/{name}",
                                 f"Kueue (kueue.x-k8s.io/{version})", f"Kueue LocalQueue {ns}/{name}")
            todo = "create it (a LocalQueue pointing at a ClusterQueue), or change the spec's scheduling.queue"
        else:
            path, group, what = (f"/apis/scheduling.volcano.sh/v1beta1/queues/{name}",
                                 "Volcano (scheduling.volcano.sh/v1beta1)", f"Volcano Queue {name}")
            todo = "create it, or change the spec's scheduling.queue"
        try:
            cluster.request("GET", path)
        except ApiFailure as exc:
            if exc.status.code == 404 and not exc.status.reason and kind == "LocalQueue":
                # Without Kueue nothing suspends the job for its queue: the label does nothing, the job runs.
                print(f"trainspec: warning: {what} is named by the job, but {group} is not served here: the job "
                      "runs without queueing", file=sys.stderr)
            elif exc.status.code == 404 and not exc.status.reason:
                out.append(f"{what} is named by the job, but {group} is not served here: install it, or drop "
                           "scheduling.queue")
            elif exc.status.code == 404:
                out.append(f"{what} does not exist: the job would wait for it forever; {todo}")
            elif exc.status.code != 403:  # may not read queues: the admission will tell
                out.append(describe(exc.status, what))
    return out


def _preferred_version(cluster, group: str, fallback: str) -> str:
    """The group's preferred version by its discovery document (GET /apis/<group>: an APIGroup)."""
    try:
        answer = cluster.request("GET", f"/apis/{group}")
    except ApiFailure:
        return fallback
    version = ((answer or {}).get("preferredVersion") or {}).get("version") if isinstance(answer, dict) else None
    return str(version) if version else fallback


def _field_position(b, obj: dict, field_text: str) -> str | None:
    """`file:line:column: spec.field` of what wrote a field of a sent object: the spec.patches op that wrote it,
    else the spec field (the role's, else the job's); in a compiled file the field's own line."""
    from .errors import Located, locate, parse_field_path, patch_for, spec_candidates

    field = parse_field_path(field_text)
    where = None
    if b.from_spec:
        op = patch_for(b.patches, field)
        where = Located(b.origin, op.line, op.column, f"spec.patches.{b.target}") if op is not None \
            else locate(b.origin, b.positions, spec_candidates(obj, field))
    elif b.file_positions:  # a compiled file: the rejected field's own line in it
        meta = obj.get("metadata") or {}
        mine = b.file_positions.get((str(obj.get("kind")), str(meta.get("name"))), {})
        found = locate(b.origin, mine, [field])
        where = found._replace(path=field_text.lstrip(".")) if found is not None and field else None
    return None if where is None else f"{where.file}:{where.line}:{where.column}: {where.path}"


def _rejection_lines(b, obj: dict, status) -> list[str]:
    """A rejection in at most two lines: the first cause at the file:line:column and field that wrote it, with
    the server's reason cut to the reason; the other causes of the same object by field on a second line."""
    from .errors import REASON_WIDTH, TYPED_PATCH, cut_reason, message_causes, real_causes

    what = _what(obj)
    if status.code not in (400, 422) and status.reason not in ("Invalid", "BadRequest") \
            and "denied the request" not in status.message and TYPED_PATCH not in status.message \
            and "strict decoding error" not in status.message:
        # forbidden, conflict, too large...: one line, at the first field the server named (a conflict's)
        field = next((c.field for c in status.causes if c.field), "")
        where = _field_position(b, obj, field) if field else None
        return [f"{where or 'trainspec: error: ' + b.origin}: {describe(status, what)}"]
    causes = real_causes(status) or message_causes(status.message)
    if not causes:
        return [f"trainspec: error: {b.origin}: {describe(status, what)}"]
    first = causes[0]
    text = f"the server rejected {what}: {first.field.lstrip('.') or '<object>'}: {cut_reason(first.message)}"
    lines = [f"{_field_position(b, obj, first.field) or 'trainspec: error: ' + b.origin}: {text}"]
    if len(causes) > 1:  # the others by field, each cut to its reason
        rest = "; ".join(f"{c.field.lstrip('.') or '<object>'}: {cut_reason(c.message, 80)}" for c in causes[1:])
        lines.append(cut_reason(f"trainspec: error: {what}: and {len(causes) - 1} more: {rest}", 2 * REASON_WIDTH))
    return lines


def _live_objects(cluster, served: _Served, job: str, namespaces: list[str]) -> list[dict]:
    """Everything on the cluster labelled with the job, in the kinds trainspec writes that are served."""
    from .plan import job_selector

    out = []
    for kind in kinds.OWNED_KINDS:
        found = served.plural(kind.api_version, kind.kind)
        if found is None:
            continue
        for ns in (namespaces or [""]) if found[1] else [""]:  # a cluster-scoped kind is listed once
            path = kinds.resource_path(kind.api_version, found[0], ns if found[1] else None)
            try:
                listing = cluster.request("GET", path, {"labelSelector": job_selector(job)})
            except ApiFailure as exc:
                raise ClusterError(describe(exc.status, f"listing {kind.kind} in {ns}")) from None
            for item in (listing or {}).get("items") or ():
                item.setdefault("apiVersion", kind.api_version)
                item.setdefault("kind", kind.kind)
                out.append(item)
    return out


def _delete(cluster, served: _Served, obj: dict, dry: bool, policy: str) -> None:
    """DELETE with a propagation policy: Foreground keeps the object (finalizer foregroundDeletion) until the
    garbage collector has removed its dependents; Background removes it now and its dependents after."""
    meta = obj["metadata"]
    plural, is_namespaced = served.plural(str(obj["apiVersion"]), str(obj["kind"])) or ("", True)
    path = kinds.resource_path(str(obj["apiVersion"]), plural, meta.get("namespace") if is_namespaced else None,
                               meta["name"])
    body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": policy}
    try:
        cluster.request("DELETE", path, {"dryRun": "All" if dry else None}, body)
    except ApiFailure as exc:
        if exc.status.code != 404:  # gone already: what deleting wanted
            raise ClusterError(describe(exc.status, f"deleting {_what(obj)}")) from None


# -- ps / logs / down ----------------------------------------------------------------------------


def _job_objects(cluster, served: _Served, job: str | None, missed: list[str] | None = None) -> list[dict]:
    """The job objects (every job's with no `job`). A kind whose list fails (still, after the retries) is an
    error, or with `missed` a line there while the other kinds are shown."""
    from .plan import JOB_LABEL, MANAGED_BY, MANAGER

    selector = f"{JOB_LABEL}={job},{MANAGED_BY}={MANAGER}" if job else f"{MANAGED_BY}={MANAGER},{JOB_LABEL}"
    out = []
    forbidden: list[tuple[str, Any]] = []  # kinds RBAC hides: fine while the job is found in another kind
    for kind in kinds.JOB_KINDS:
        found = served.plural(kind.api_version, kind.kind)
        if found is None:
            continue
        path = kinds.resource_path(kind.api_version, found[0], cluster.namespace)
        try:
            listing = cluster.request("GET", path, {"labelSelector": selector})
        except ApiFailure as exc:
            if exc.status.code != 403:
                what = describe(exc.status, f"listing {kind.kind}.{kinds.group_of(kind.api_version) or 'core'} "
                                            f"in {cluster.namespace}")
                if missed is None:
                    raise ClusterError(what) from None
                missed.append(what)
                continue
            forbidden.append((kind.kind, exc.status))
            continue
        for item in (listing or {}).get("items") or ():
            item.setdefault("apiVersion", kind.api_version)
            item.setdefault("kind", kind.kind)
            if not (item.get("metadata") or {}).get("ownerReferences"):  # JobSet's child Jobs are its own
                out.append(item)
    if not out and forbidden:
        names = ", ".join(dict.fromkeys(k for k, _ in forbidden))
        raise ClusterError(describe(forbidden[0][1], f"listing {names} in {cluster.namespace}"))
    if job:
        out += _runtimes(cluster, served, out)
    return out


def _runtimes(cluster, served: _Served, objects: list[dict]) -> list[dict]:
    """The runtimes the job's TrainJobs name: a TrainJob's replicas (its nodes) are written there."""
    found = []
    for obj in objects:
        if obj.get("kind") != trainjob.TRAINJOB.kind:
            continue
        ref = (obj.get("spec") or {}).get("runtimeRef") or {}
        kind = str(ref.get("kind") or trainjob.CLUSTER_TRAINING_RUNTIME.kind)  # Trainer v2's default
        api_version = f"{ref.get('apiGroup') or trainjob.GROUP}/{kinds.group_version(obj)}"
        plural = served.plural(api_version, kind)
        if plural is None or not ref.get("name"):
            continue
        namespace = (obj.get("metadata") or {}).get("namespace") or cluster.namespace
        try:
            runtime = cluster.request("GET", kinds.resource_path(api_version, plural[0],
                                                                 namespace if plural[1] else None, ref["name"]))
        except ApiFailure:
            continue  # gone or hidden: the table shows what the TrainJob and its pods say
        if isinstance(runtime, dict):
            runtime.setdefault("apiVersion", api_version)
            runtime.setdefault("kind", kind)
            found.append(runtime)
    return found


def _pods(cluster, job: str) -> list[dict]:
    from .plan import JOB_LABEL

    try:
        listing = cluster.request("GET", f"/api/v1/namespaces/{cluster.namespace}/pods",
                                  {"labelSelector": f"{JOB_LABEL}={job}"})
    except ApiFailure as exc:
        raise ClusterError(describe(exc.status, f"listing pods in {cluster.namespace}")) from None
    return list((listing or {}).get("items") or ())


def _no_job(cluster, job: str) -> ClusterError:
    return ClusterError(f"no job {job!r} in namespace {cluster.namespace} "
                        f"({cluster.where or cluster.host}); `trainspec ps --cluster` lists them")


def cmd_ps(args) -> int:
    import json

    from .status import age_text, as_json, job_phase, job_state, table

    cluster = _connect(args)
    served = _Served(cluster)
    while True:
        missed: list[str] = []  # kinds that could not be listed: the table shows the others, and names these
        if args.job:
            objects = _job_objects(cluster, served, args.job, missed)
            if not objects and missed:
                raise ClusterError("; ".join(missed))
            if not objects:
                raise _no_job(cluster, args.job)
            state = job_state(args.job, objects, _pods(cluster, args.job), time.time())
            text = json.dumps(as_json(state), indent=2) + "\n" if args.format == "json" else table(state)
        else:
            rows = []
            for obj in _job_objects(cluster, served, None, missed):
                meta = obj.get("metadata") or {}
                from .status import parse_time

                created = parse_time(meta.get("creationTimestamp"))
                rows.append({"job": (meta.get("labels") or {}).get("trainspec.dev/job", ""),
                             "kind": obj.get("kind"), "name": meta.get("name"), "phase": job_phase(obj)[0],
                             "age_seconds": None if created is None else max(0.0, time.time() - created)})
            rows.sort(key=lambda r: (r["job"], r["kind"], r["name"]))
            if args.format == "json":
                text = json.dumps(rows, indent=2) + "\n"
            else:
                text = f"{'JOB':<24} {'KIND':<16} {'NAME':<32} {'PHASE':<12} AGE\n" + "".join(
                    f"{r['job']:<24} {r['kind']:<16} {r['name']:<32} {r['phase']:<12} {age_text(r['age_seconds'])}\n"
                    for r in rows)
                if not rows:
                    text = f"no trainspec jobs in namespace {cluster.namespace}\n"
        if args.watch and sys.stdout.isatty():
            sys.stdout.write("\x1b[H\x1b[2J")
        sys.stdout.write(text)
        sys.stdout.flush()
        for line in missed:
            print(f"trainspec: error: {line} (not in the table above)", file=sys.stderr)
        if not args.watch:
            return 2 if missed else 0
        try:
            time.sleep(POLL_SECONDS)
        except KeyboardInterrupt:
            return 0


def cmd_logs(args) -> int:
    import threading

    from trainspec.emulator.console.table import Console

    from .status import main_container, pod_identity

    if args.tail is not None and args.tail < 0:
        raise UsageError("--tail must be 0 or more lines")
    cluster = _connect(args)
    served = _Served(cluster)
    workloads = _job_objects(cluster, served, args.job)
    pods = _pods(cluster, args.job)
    if not workloads and not pods:
        raise _no_job(cluster, args.job)
    chosen: dict[str, dict] = {}
    for pod in sorted(pods, key=lambda p: (p.get("metadata") or {}).get("creationTimestamp") or ""):
        who = pod_identity(pod, workloads)
        if who is not None:
            chosen[f"{who[0]}-{who[1]}"] = pod  # the newest pod of each replica
    names = sorted(chosen, key=lambda n: (n.rsplit("-", 1)[0], int(n.rsplit("-", 1)[1])))
    if args.replica:
        names = [n for n in names if n == args.replica or n.rsplit("-", 1)[0] == args.replica]
        if not names:
            raise UsageError(f"job {args.job} has no replica {args.replica!r} with a pod "
                             f"(replicas: {', '.join(sorted(chosen)) or 'none yet'})")
    if not names:  # the job is there, its pods are not (yet: pending admission, or no controller runs)
        print(f"trainspec: {args.job}: no pods yet, so no logs (`trainspec ps --cluster {args.job}` shows why)",
              file=sys.stderr)
        return 0
    console = Console(names, sys.stdout, None if args.colour == "auto" else args.colour, live=False)
    single = len(names) == 1 and bool(args.replica)

    def show(name: str) -> None:
        pod = chosen[name]
        container = main_container(pod)
        path = f"/api/v1/namespaces/{cluster.namespace}/pods/{pod['metadata']['name']}/log"
        query = {"container": container, "tailLines": args.tail, "follow": "true" if args.follow else None}
        try:
            for raw in cluster.stream(path, query):
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if single:
                    print(line, flush=True)
                else:
                    console.log(name, line)
        except ApiFailure as exc:
            print(f"trainspec: {name}: {exc.status.message or describe(exc.status, 'logs')}", file=sys.stderr)

    if not args.follow:
        for name in names:
            show(name)
        return 0
    threads = [threading.Thread(target=show, args=(n,), daemon=True) for n in names]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    except KeyboardInterrupt:
        return 0
    return 0


def cmd_down(args) -> int:
    from . import plan as P

    cluster = _connect(args)
    served = _Served(cluster)
    live = P.delete_order(_live_objects(cluster, served, args.job, [cluster.namespace]), args.job)
    if not live:
        print(f"nothing to remove for {args.job} in namespace {cluster.namespace}")
        return 0
    # Foreground while the job has pods: they stop before the objects they run under and mount go. With no
    # pod nothing depends on the objects, and a foreground deletion would only wait for the garbage
    # collector to drop its finalizer (forever on a server without kube-controller-manager).
    try:
        policy = "Foreground" if _pods(cluster, args.job) else "Background"
    except ClusterError:  # may not list pods (RBAC): what the issue asks, pods first
        policy = "Foreground"
    for obj in live:
        _delete(cluster, served, obj, False, policy)
        print(f"{_what(obj)}: deleted ({policy.lower()})")
    if not args.wait:
        return 0
    deadline = time.monotonic() + args.timeout
    while True:
        left = [o for o in _live_objects(cluster, served, args.job, [cluster.namespace])] + _pods(cluster, args.job)
        if not left:
            print(f"{args.job}: gone")
            return 0
        if time.monotonic() > deadline:
            print(f"trainspec: error: {args.job}: {len(left)} object(s) and pod(s) still there after "
                  f"{args.timeout:g} s (finalizers? `kubectl get all -l trainspec.dev/job={args.job}`)",
                  file=sys.stderr)
            return 1
        time.sleep(POLL_SECONDS)
