"""Which objects `apply` sends, in what order, with which labels, and what `--prune` and `down` remove.

Pure: objects in, decisions out. The job label (`trainspec.dev/job`) plus
`app.kubernetes.io/managed-by: trainspec` is what ties an object on the cluster to a job; an
object a controller made (it has ownerReferences) is never ours to delete: its owner's
foreground deletion removes it.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Callable
from typing import Any, NamedTuple

from trainspec.compiler.kinds import volcano

from .errors import ClusterError
from .kinds import BY_KEY, CLUSTER_SCOPED, TRAINING_KINDS, WORKLOAD_RANK, group_of, rank

JOB_LABEL = "trainspec.dev/job"
MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGER = "trainspec"  # the field manager and the managed-by value


class Key(NamedTuple):
    """An object's identity on the cluster (the group, not the version: a new version is the same object)."""

    group: str
    kind: str
    namespace: str
    name: str

    def show(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        return f"{kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


def key(obj: dict) -> Key:
    meta = obj.get("metadata") or {}
    return Key(group_of(str(obj.get("apiVersion", ""))), str(obj.get("kind", "")), str(meta.get("namespace") or ""),
               str(meta.get("name", "")))


def job_selector(job: str) -> str:
    return f"{JOB_LABEL}={job},{MANAGED_BY}={MANAGER}"


def namespaced(obj: dict, scope: Callable[[dict], bool | None] | None = None) -> bool:
    """Whether the object lives in a namespace: the server's discovery (`scope`) when it knows the kind,
    else the kinds trainspec writes; any other kind is taken as namespaced except Namespace."""
    found = scope(obj) if scope is not None else None
    if found is not None:
        return found
    known = BY_KEY.get((str(obj.get("apiVersion")), str(obj.get("kind"))))
    if known:
        return known.namespaced
    return (group_of(str(obj.get("apiVersion", ""))), str(obj.get("kind"))) not in CLUSTER_SCOPED


def prepared(objects: list[dict], job: str, namespace: str, explicit: bool,
             scope: Callable[[dict], bool | None] | None = None) -> list[dict]:
    """Copies labelled with the job and put in `namespace`, in apply order.

    An object's own namespace wins unless `-n` was given and differs: then it is an error, as
    with kubectl, rather than a job split across namespaces. A cluster-scoped object (by the
    server's discovery, `scope`) gets no namespace: a PriorityClass or ClusterTrainingRuntime in a
    compiled file is not put in one.
    """
    out = []
    for obj in objects:
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        if not meta.get("name"):
            raise ClusterError(f"a {obj.get('kind', 'document')} of job {job!r} has no metadata.name")
        labels = meta.setdefault("labels", {})
        if labels.get(JOB_LABEL, job) != job:
            raise ClusterError(f"{obj.get('kind')} {meta['name']} is labelled {JOB_LABEL}={labels[JOB_LABEL]}, "
                               f"not {job}")
        labels[JOB_LABEL] = job
        labels.setdefault(MANAGED_BY, MANAGER)
        if namespaced(obj, scope):
            own = meta.get("namespace")
            if own and explicit and own != namespace:
                raise ClusterError(f"{obj.get('kind')} {meta['name']} is in namespace {own!r} but -n {namespace} "
                                   "was given; drop -n or recompile the spec for that namespace")
            meta["namespace"] = own or namespace
        else:
            meta.pop("namespace", None)
        out.append(obj)
    return ordered(out)


def kind_names(obj: dict) -> tuple[str, str]:
    """The names `--allow-kind` accepts for an object's kind: `Kind` and `Kind.group` (lower case)."""
    group = group_of(str(obj.get("apiVersion", "")))
    kind = str(obj.get("kind", "")).lower()
    return kind, f"{kind}.{group}" if group else kind


def job_namespace(objects: list[dict], default: str) -> str:
    """The namespace a job runs in: its workloads' (prepared objects), else `default`."""
    for obj in objects:
        ns = (obj.get("metadata") or {}).get("namespace")
        if ns and rank(str(obj.get("kind", ""))) == WORKLOAD_RANK:
            return str(ns)
    return default


def refused(objects: list[dict], namespace: str, allowed: frozenset[str],
            scope: Callable[[dict], bool | None] | None = None) -> list[tuple[dict, str]]:
    """The objects `apply` will not send, each with why: a kind a training job is not made of (a
    ClusterRoleBinding, a webhook configuration: anything outside TRAINING_KINDS, every cluster-scoped kind),
    or an object outside the job's namespace (a Secret in kube-system). `allowed`: the kinds the user named
    with --allow-kind (`Kind` or `Kind.group`, any case), which pass either check."""
    out = []
    for obj in objects:
        if allowed & set(kind_names(obj)):
            continue
        kind = (group_of(str(obj.get("apiVersion", ""))), str(obj.get("kind", "")))
        ns = (obj.get("metadata") or {}).get("namespace")
        if not namespaced(obj, scope):
            out.append((obj, "a cluster-scoped object is not part of a training job"))
        elif kind not in TRAINING_KINDS:
            out.append((obj, "not a kind a training job is made of"))
        elif ns and ns != namespace:
            out.append((obj, f"outside the job's namespace {namespace}"))
    return out


def ordered(objects: list[dict]) -> list[dict]:
    """Namespace, then what pods read (Secrets, ConfigMaps), Services, runtimes, workloads; stable within a rank."""
    return sorted(objects, key=lambda o: rank(str(o.get("kind", ""))))


def namespaces_of(objects: list[dict]) -> list[str]:
    return sorted({o["metadata"]["namespace"] for o in objects if o.get("metadata", {}).get("namespace")})


def secret_objects(secrets: dict[str, dict[str, bytes]], job: str, namespace: str) -> list[dict]:
    """Secrets from --secret, built in memory (never written to disk) and labelled with the job, so
    `down --cluster` removes them with it."""
    return [{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
             "metadata": {"name": name, "namespace": namespace, "labels": {JOB_LABEL: job, MANAGED_BY: MANAGER}},
             "data": {k: base64.b64encode(v).decode("ascii") for k, v in sorted(data.items())}}
            for name, data in sorted(secrets.items())]


def ours(live: dict, job: str) -> bool:
    """Whether an object on the cluster belongs to `job` and was put there by trainspec itself."""
    meta = live.get("metadata") or {}
    labels = meta.get("labels") or {}
    return labels.get(JOB_LABEL) == job and labels.get(MANAGED_BY) == MANAGER and not meta.get("ownerReferences")


def prune_set(live: list[dict], applied: list[dict], job: str) -> list[dict]:
    """The job's objects on the cluster that this apply did not send: what `--prune` deletes.

    Only objects labelled with this job and managed by trainspec, never one a controller owns
    (the Services and pods an operator made go with their owner), never one being deleted.
    """
    keep = {key(o) for o in applied}
    out = []
    for obj in live:
        meta = obj.get("metadata") or {}
        if not ours(obj, job) or meta.get("deletionTimestamp"):
            continue
        if key(obj) not in keep:
            out.append(obj)
    return sorted(out, key=lambda o: (-rank(str(o.get("kind", ""))), key(o)))


def delete_order(live: list[dict], job: str) -> list[dict]:
    """The job's own objects, workloads first (their pods stop before what they mount goes)."""
    return sorted((o for o in live if ours(o, job)), key=lambda o: (-rank(str(o.get("kind", ""))), key(o)))


def queues(objects: list[dict]) -> list[tuple[str, str, str]]:
    """(kind, namespace, name) of the queues the job waits in: a Kueue LocalQueue named by the
    `kueue.x-k8s.io/queue-name` label, a Volcano Queue named by a Volcano Job's spec.queue (or a
    Kubeflow runPolicy.schedulingPolicy.queue of pods scheduled by Volcano)."""
    found: set[tuple[str, str, str]] = set()
    for obj in objects:
        meta = obj.get("metadata") or {}
        label = (meta.get("labels") or {}).get("kueue.x-k8s.io/queue-name")
        if label:
            found.add(("LocalQueue", str(meta.get("namespace") or ""), str(label)))
        spec = obj.get("spec") or {}
        if group_of(str(obj.get("apiVersion", ""))) == volcano.GROUP and spec.get("queue"):
            found.add(("Queue", "", str(spec["queue"])))
        policy = ((spec.get("runPolicy") or {}).get("schedulingPolicy") or {})
        if policy.get("queue") and _scheduler_names(spec) == {"volcano"}:
            found.add(("Queue", "", str(policy["queue"])))
    return sorted(found)


def _scheduler_names(node: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(node, dict):
        if isinstance(node.get("schedulerName"), str):
            out.add(node["schedulerName"])
        for value in node.values():
            out |= _scheduler_names(value)
    elif isinstance(node, list):
        for value in node:
            out |= _scheduler_names(value)
    return out
