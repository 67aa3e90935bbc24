"""What the emulator refuses of a manifest before it reads it: what the API server refuses, then what one
machine cannot run.

A compiled file may be hand-edited or someone else's. The API server refuses a field of the wrong type
(`completions: "abc"`, `containers: x`) or value (a container named `Bad_Name`, a Job pod with
`restartPolicy: Always`) before anything runs; so does the emulator, with the server's own checks
(compiler/apiserver: the same ones that check every object a target writes, and every manifest `import`
reads), in its words, at the field's line — never a crash. A custom resource's pod templates are checked
as the pods its operator makes, which the server would refuse. Then the local bounds (`LOCAL`): counts
bounded by what one machine's Docker can run (`MAX_LOCAL_REPLICAS`), before any pod is expanded from
them, so `completions: 1000000000000` is refused at once; mount paths and images Docker refuses; mount
features the emulator does not have. A compose file is no Kubernetes object: its types are described here
(`COMPOSE_FILE`), as `docker compose config` checks them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ...compiler.errors import UsageError
from ...compiler.kinds import volcano
from ...compiler.kinds.jobset import JOBSET
from ...compiler.kinds.kubeflow import KUBEFLOW_JOBS, MPI_JOB
from ...compiler.kinds.trainjob import TRAINJOB
from ...compiler.kube import parse_quantity
from .positions import FieldErrors, field_error

# A run's containers share one Docker bridge network, and a Linux bridge takes at most 1024
# ports (BR_MAX_PORTS): past this the run could not even be wired up.
MAX_LOCAL_REPLICAS = 1000
ACCEPTED = "a value the API server accepts"

Shape = Any   # a type name ("str", "int", ...), ("list", Shape), ("map", Shape) or a dict of fields

_INT32 = (-(2**31), 2**31 - 1)
SCALAR = "scalar"

# The local bounds, on fields the server's checks have typed already: each field a bound applies to.
CONTAINER: dict = {
    "image": "image",
    "volumeMounts": ("list", {"mountPath": "abspath", "subPathExpr": "subpathexpr",
                              "mountPropagation": "propagation"}),
}
POD_SPEC: dict = {"containers": ("list", CONTAINER), "initContainers": ("list", CONTAINER)}
POD_TEMPLATE: dict = {"spec": POD_SPEC}
JOB_SPEC: dict = {"completions": "replicas", "parallelism": "bounded", "template": POD_TEMPLATE}
KINDS: dict[str, dict] = {
    "Job": {"spec": JOB_SPEC},
    "Deployment": {"spec": {"replicas": "replicas", "template": POD_TEMPLATE}},
    "Pod": {"spec": POD_SPEC},
    "ConfigMap": {}, "Secret": {}, "Service": {},
}
REPLICA_SPEC: dict = {"replicas": "replicas", "template": POD_TEMPLATE}
MPI_JOB_FIELDS: dict[str, dict] = {MPI_JOB.kind: {"sshAuthMountPath": "abspath"}}
# Custom resources: where their pod templates and counts are. Kubeflow's jobs from the one kind table
# (compiler/kinds/kubeflow.py: each kind's replica-specs field); the MPIJob's own fields beside it.
VOLCANO_JOB = f"{volcano.JOB.kind}.{volcano.GROUP}"  # its shape's key: a Job of Volcano's group, not batch/v1's
OPERATOR_KINDS: dict[str, dict] = {
    **{k.kind: {"spec": {k.replica_specs: ("map", REPLICA_SPEC), **MPI_JOB_FIELDS.get(k.kind, {})}}
       for k in KUBEFLOW_JOBS},
    VOLCANO_JOB: {"spec": {"minAvailable": "bounded", "tasks": ("list", {
        "replicas": "replicas", "minAvailable": "bounded", "template": POD_TEMPLATE})}},
    JOBSET.kind: {"spec": {"replicatedJobs": ("list", {"replicas": "replicas",
                                                       "template": {"spec": JOB_SPEC}})}},
    TRAINJOB.kind: {"spec": {"trainer": {"numNodes": "replicas", "image": "image"}}},
}
HANDLER: dict = {"exec": {"command": ("list", SCALAR)}, "httpGet": "map", "tcpSocket": "map", "sleep": "map"}


# A compose service: the keys from_compose.py reads ("words": a string or a list of them; "pairs": a
# mapping or a list of NAME=VALUE strings; "entry": a short-syntax string or a long-syntax mapping).
COMPOSE_SERVICE: dict = {
    "image": "image", "command": "words", "entrypoint": "words", "environment": "pairs", "labels": "pairs",
    "working_dir": "str", "hostname": "str", "restart": "str", "user": SCALAR, "read_only": "bool",
    "ports": ("list", "entry"), "expose": ("list", SCALAR), "volumes": ("list", "entry"),
    "tmpfs": "words", "shm_size": SCALAR, "stop_grace_period": SCALAR, "networks": "any",
    "depends_on": "any", "scale": "replicas",
    "deploy": {"replicas": "replicas", "resources": {"limits": {"cpus": SCALAR, "memory": SCALAR},
                                                  "reservations": {"devices": ("list", "map")}}},
    "healthcheck": {"test": "words", "interval": SCALAR, "timeout": SCALAR, "start_period": SCALAR,
                    "retries": "count", "disable": "bool"},
    "x-trainspec": {"lifecycle": {"postStart": HANDLER, "preStop": HANDLER}},
}
COMPOSE_FILE: dict = {"services": ("map", COMPOSE_SERVICE), "volumes": ("map", "any"), "networks": ("map", "any"),
                      "x-trainspec": "map"}


class _Object(NamedTuple):
    """The object being checked: errors name its fields from its root (positions.field_error)."""

    source: str
    root: Any
    label: str     # how the file-level form of an error names the object (e.g. "Job trainer")

    def error(self, path: tuple, message: str, expected: str = "", hint: str = "") -> Exception:
        return field_error(self.source, self.root, path, message, expected, hint, self.label)


def check_compose(doc: dict, source: str) -> None:
    """A compose file's types, as `docker compose config` would refuse them."""
    _check(doc, COMPOSE_FILE, _Object(source, doc, ""), (), [])
    services = doc.get("services")
    if isinstance(services, dict):
        check_run_size(len(services), source)


def check_documents(docs: list[Any], source: str) -> None:
    """Every object the emulator reads: what the API server refuses of it (and of its operator's pods), then
    the counts and fields one machine cannot run."""
    from ...compiler.apiserver import refusals

    total = 0
    for n, doc in enumerate(docs):
        if not isinstance(doc, dict):
            continue
        kind = doc.get("kind")
        meta = doc.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        at = _Object(source, doc, f"{kind} {name if isinstance(name, str) else f'(document {n + 1})'}")
        _refuse(at, refusals(doc, pods=True))
        key = VOLCANO_JOB if volcano.matches(doc) else kind
        shape = KINDS.get(str(key)) or OPERATOR_KINDS.get(str(key))
        if shape is None:
            continue
        counts: list[int] = []
        _check(doc, shape, at, (), counts)
        total += _pods(doc, str(key), counts)
    check_run_size(total, source)


def _refuse(at: _Object, found: list[tuple[tuple, str]]) -> None:
    """The server's refusals of one object, all at once (each at its line when it was written)."""
    errors = [at.error(path, message, ACCEPTED) for path, message in found]
    placed = [e for e in errors if isinstance(e, FieldErrors)]
    if placed and len(placed) == len(errors):
        raise FieldErrors([item for e in placed for item in e.errors])
    if errors:
        raise errors[0]


def _pods(doc: dict, key: str, counts: list[int]) -> int:
    """How many pods one object makes, from its (already checked) counts: enough to refuse a run too
    large before any pod is expanded; the run model's count is checked again (check_run_size)."""
    if key in ("ConfigMap", "Secret", "Service"):
        return 0
    if key == JOBSET.kind:
        total = 0
        for rj in (doc.get("spec") or {}).get("replicatedJobs") or []:
            jspec = (rj.get("template") or {}).get("spec") or {}
            total += (rj.get("replicas") or 1) * max(jspec.get("completions") or 1, jspec.get("parallelism") or 1)
        return total
    return max(1, sum(counts))


def check_run_size(count: int, source: str) -> None:
    if count > MAX_LOCAL_REPLICAS:
        raise UsageError(f"the job would start {count} pods; the emulator runs at most {MAX_LOCAL_REPLICAS} "
                         "on one machine (a run's containers share one Docker bridge network, which takes at most "
                         "1024)", where=source, hint="lower the replica counts for a local dry-run")


def _check(value: Any, shape: Shape, at: _Object, path: tuple, counts: list[int]) -> None:
    if value is None:
        return  # the API server treats a null field as unset
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            raise _error(at, path, value, "a mapping")
        for field, sub in shape.items():
            if field in value:
                _check(value[field], sub, at, path + (field,), counts)
        return
    if isinstance(shape, tuple):
        container, inner = shape
        if container == "list":
            if not isinstance(value, list):
                raise _error(at, path, value, "a list")
            for i, item in enumerate(value):
                _check(item, inner, at, path + (i,), counts)
        else:
            if not isinstance(value, dict):
                raise _error(at, path, value, "a mapping")
            for k, item in value.items():
                _check(item, inner, at, path + (k,), counts)
        return
    _leaf(value, shape, at, path, counts)


def _leaf(value: Any, shape: str, at: _Object, path: tuple, counts: list[int]) -> None:
    if shape == "any":
        return
    if shape == "map":
        if not isinstance(value, dict):
            raise _error(at, path, value, "a mapping")
    elif shape == "words":
        if not isinstance(value, str) and not (isinstance(value, list)
                                               and all(not isinstance(w, (dict, list)) for w in value)):
            raise _error(at, path, value, "a string or a list of strings")
    elif shape == "pairs":
        if not isinstance(value, dict) and not (isinstance(value, list)
                                                and all(not isinstance(w, (dict, list)) for w in value)):
            raise _error(at, path, value, "a mapping or a list of NAME=VALUE strings")
        if isinstance(value, dict) and any(isinstance(v, (dict, list)) for v in value.values()):
            raise _error(at, path, value, "a mapping of names to strings")
    elif shape == "entry":
        if isinstance(value, (list, bool)) or value is None:
            raise _error(at, path, value, "a string or a mapping")
    elif shape == "str":
        if not isinstance(value, str):
            raise _error(at, path, value, "a string")
    elif shape == "abspath":
        # A mount point Docker would refuse only after the run's network exists: refused before.
        if not isinstance(value, str) or not value.startswith("/") or "\0" in value:
            raise _error(at, path, value, "an absolute path in the container (starting with /)")
    elif shape == "subpathexpr":
        # Expanded from the container's env on a node; the emulator does not expand it, and mounting the
        # whole volume instead would be a silent change of what the container sees.
        raise at.error(path, "subPathExpr is not supported by the emulator (it would mount the whole volume)",
                       hint="use subPath with the expanded value")
    elif shape == "propagation":
        # HostToContainer/Bidirectional share mounts between the host and the container (the latter
        # needs a privileged container on a cluster); the emulator's mounts are always private.
        if value != "None":
            raise at.error(path, f"{_show(value)} is not supported by the emulator (its mounts never propagate "
                           "between the host and a container)", hint="remove mountPropagation to run it locally")
    elif shape == SCALAR:
        if isinstance(value, (dict, list)):
            raise _error(at, path, value, "a string (or number)")
    elif shape == "bool":
        if not isinstance(value, bool):
            raise _error(at, path, value, "true or false")
    elif shape in ("int", "count", "replicas", "bounded"):
        low = 0 if shape != "int" else _INT32[0]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= _INT32[1]:
            raise _error(at, path, value, f"an integer {low}..{_INT32[1]}" if shape != "int" else "an integer")
        if shape in ("replicas", "bounded"):
            if value > MAX_LOCAL_REPLICAS:
                raise at.error(path, f"{value} pods; the emulator runs at most {MAX_LOCAL_REPLICAS} on one machine "
                               "(a run's containers share one Docker bridge network, which takes at most 1024)",
                               hint="lower it for a local dry-run")
            if shape == "replicas":
                counts.append(value)
    elif shape == "port":
        if isinstance(value, bool) or not isinstance(value, (int, str)) or (
                isinstance(value, int) and not 1 <= value <= 65535):
            raise _error(at, path, value, "a port number 1..65535 or a port name")
    elif shape == "quantity":
        try:
            parse_quantity(str(value))
        except (ValueError, ArithmeticError):
            raise _error(at, path, value, "a Kubernetes quantity (e.g. 1Gi, 500Mi)") from None
    elif shape == "image":
        if not isinstance(value, str) or not value.strip():
            raise _error(at, path, value, "an image reference")
        if value.startswith("-") or any(c.isspace() or ord(c) < 32 for c in value):
            raise at.error(path, f"{_show(value)} is not an image reference (it starts with '-' or holds spaces or "
                           "control characters)")



def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _error(at: _Object, path: tuple, value: Any, expected: str) -> Exception:
    # A Secret's values are never quoted (`label` names the object: "Secret creds").
    secret = at.label.startswith("Secret ")
    shown = f" {_show(value)}" if isinstance(value, (str, int, float)) and not isinstance(value, bool) \
        and not secret else ""
    return at.error(path, f"is {_type(value)}{shown}", expected)
