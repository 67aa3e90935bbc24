"""`trainspec apply`: compile or read the job's objects, check them, and server-side apply them."""

from __future__ import annotations

import sys
from typing import Any

from trainspec.compiler.errors import UsageError

from .. import kinds
from ..errors import ApiFailure, ClusterError, describe
from .live import Served, connect, delete_object, live_objects, object_name, propagation, wait_gone


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
    from ..sources import is_chart, load

    if args.timeout <= 0:
        raise UsageError("--timeout must be more than 0 seconds")
    cluster = None
    if args.dry_run != "client" and any(is_chart(i) for i in args.inputs):
        cluster = connect(args)  # a chart is rendered for the namespace it goes to (reads config only)
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
                print(f"{object_name(obj)}: would be applied (dry run: client)")
        return 2 if failed else 0
    cluster = cluster or connect(args)
    failed = False
    for b in bundles:
        failed |= _apply_bundle(cluster, args, b, secrets.get(b.job, {}), allowed)
    return 2 if failed else 0


def _prepared(b, secrets: dict[str, dict[str, bytes]], namespace: str, explicit: bool, scope) -> list[dict]:
    """The job's objects as they are sent, its --secret Secrets in the job's own namespace."""
    from .. import plan as P

    job_ns = P.job_namespace(P.prepared(b.objects, b.job, namespace, explicit, scope), namespace)
    return P.prepared(b.objects + P.secret_objects(secrets, b.job, job_ns), b.job, namespace, explicit, scope)


def _refusal_lines(b, objects: list[dict], allowed: frozenset[str], scope, namespace: str) -> list[str]:
    """`apply` sends what a training job is made of: every other object is an error at its own line."""
    from .. import plan as P

    out = []
    for obj, why in P.refused(objects, P.job_namespace(objects, namespace), allowed, scope):
        where = _object_position(b, obj)
        kind = str(obj.get("kind"))
        out.append(f"{where}: {object_name(obj)}: refused: {why}; apply sends only a training job's own objects "
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


def _apply_bundle(cluster, args, b, secrets: dict[str, dict[str, bytes]], allowed: frozenset[str]) -> bool:
    """Apply one job; True when something failed (already reported on stderr)."""
    from .. import plan as P
    from ..discovery import missing_message
    from ..trainer_runtimes import missing_runtimes

    dry = args.dry_run == "server"
    served = Served(cluster)

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
    live = {P.key(o): o for o in live_objects(cluster, served, b.job, P.namespaces_of(objects))
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
            print(f"{object_name(obj)}: not checked: its namespace does not exist yet (dry run)", file=sys.stderr)
            continue
        if not dry and P.key(obj) not in live:
            continue
        try:
            answers[P.key(obj)] = send(obj, True)
        except ApiFailure as exc:
            from ..errors import immutable_fields

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
        delete_object(cluster, served, obj, dry, propagation(cluster, b.job))
        print(f"{object_name(obj)}: deleted to be re-created ({', '.join(fields)} cannot change){suffix}")
    if stuck and not dry:
        wait_gone(cluster, served, [o for o, _ in stuck], args.timeout)
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
        print(f"{object_name(obj)}: {word}{suffix}")
    pruned = 0
    if args.prune:
        for obj in P.prune_set(live_objects(cluster, served, b.job, P.namespaces_of(objects)), objects, b.job):
            # kubectl's prune cascade (background): the object goes now, what it owns after it
            delete_object(cluster, served, obj, dry, "Background")
            pruned += 1
            print(f"{object_name(obj)}: pruned{suffix}")
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
    from ..errors import locate, parse_field_path, spec_candidates

    lines = []
    for obj, fields in stuck[:shown]:
        what = f"{object_name(obj)}: {', '.join(fields)} cannot change on an existing object (field is immutable)"
        where = locate(b.origin, b.positions, spec_candidates(obj, parse_field_path(fields[0]))) \
            if b.from_spec else None
        lines.append(f"{where.file}:{where.line}:{where.column}: {where.path}: {what}" if where is not None
                     else f"{_object_position(b, obj)}: {what}")
    if len(stuck) > shown:
        lines.append(f"trainspec: error: and {len(stuck) - shown} more: "
                     + ", ".join(object_name(o) for o, _ in stuck[shown:]))
    lines.append(f"trainspec: error: job {b.job}: {'nothing was changed; ' if not dry else ''}"
                 f"`trainspec apply --force` deletes and re-creates {'it' if len(stuck) == 1 else 'them'} "
                 "(their pods restart), as kubectl apply --force does")
    return lines


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
    from ..plan import queues

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
    from ..errors import Located, locate, parse_field_path, patch_for, spec_candidates

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
    from ..errors import REASON_WIDTH, TYPED_PATCH, cut_reason, message_causes, real_causes

    what = object_name(obj)
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
