"""What the API server said, in the user's words: metav1.Status bodies to one-line errors, and a
rejected field (`details.causes[].field`) back to the spec line that wrote it.

Pure functions: the bodies come in as data (tests feed them the recorded answers of a real
kube-apiserver, /work/shared/reference/apiserver/).
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from trainspec.compiler.errors import Error, UsageError

ROLE_LABEL = "trainspec.dev/role"


class ClusterError(UsageError):
    """A failure on the cluster side (unreachable, forbidden, conflict, rejected): one line, exit 2."""


class Cause(NamedTuple):
    field: str
    message: str
    reason: str


class Status(NamedTuple):
    """A metav1.Status (or the plain-text 404 a server gives for a path it does not serve)."""

    code: int
    reason: str
    message: str
    causes: tuple[Cause, ...] = ()
    kind: str = ""
    name: str = ""
    group: str = ""


def parse_status(code: int, body: Any) -> Status:
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return Status(code, "", body.strip())  # not a Status: a path the server does not serve at all
    if not isinstance(body, dict) or body.get("kind") != "Status":
        return Status(code, "", "")
    details = body.get("details") or {}
    causes = tuple(Cause(str(c.get("field", "")), str(c.get("message", "")), str(c.get("reason", "")))
                   for c in details.get("causes") or () if isinstance(c, dict))
    return Status(int(body.get("code") or code), str(body.get("reason", "")), str(body.get("message", "")), causes,
                  str(details.get("kind", "")), str(details.get("name", "")), str(details.get("group", "")))


# Causes the server adds after a real one, which say nothing the user can act on.
_NOISE = "some validation rules were not checked because the object was invalid"


def real_causes(status: Status) -> tuple[Cause, ...]:
    kept = tuple(c for c in status.causes if _NOISE not in c.message)
    return kept or status.causes


def describe(status: Status, what: str, context: str = "") -> str:
    """One line for a failed request on `what` (e.g. "TFJob ml/tf-ps")."""
    code, reason = status.code, status.reason
    if "admission webhook" in status.message:  # a webhook's refusal comes with any code, 403 included
        return f"{what}: rejected: {cut_reason(status.message)}"
    if code == 401 or reason == "Unauthorized":
        return (f"{what}: the cluster refused the credentials ({status.message or 'Unauthorized'}); "
                f"check the kubeconfig user{context}")
    if any(c.reason == "NamespaceTerminating" for c in status.causes):
        # the namespace lifecycle admission answers 403 Forbidden, but it is no permission problem
        namespace = next((m.group(1) for c in status.causes for m in [re.search(r"namespace (\S+)", c.message)]
                          if m), "")
        return (f"{what}: namespace {namespace or '(its namespace)'} is being deleted: wait until it is gone "
                "(then --create-namespace), or use another namespace")
    if code == 403 or reason == "Forbidden":
        return f"{what}: permission denied: {status.message or 'Forbidden'}"
    if reason == "AlreadyExists":
        return f"{what}: already exists ({status.message})"
    if code == 409 and reason == "Conflict":
        fields = ", ".join(c.field.lstrip(".") for c in status.causes if c.field)
        owners = sorted({m.group(1) for c in status.causes for m in [re.search(r'conflict with "([^"]+)"',
                                                                              c.message)] if m})
        return (f"{what}: conflict: {fields or status.message} "
                f"{'is' if len(status.causes) == 1 else 'are'} owned by field manager "
                f"{', '.join(repr(o) for o in owners) or '(another manager)'}; change it there, or let trainspec "
                "own it with `trainspec apply --force-conflicts`")
    if code == 413 or reason == "RequestEntityTooLarge":
        return f"{what}: too large for the API server ({status.message})"
    if code == 404 and not status.reason:
        return f"{what}: the server does not serve this resource (404)"
    if code == 404:
        return f"{what}: not found ({status.message})"
    text = cut_reason(status.message) or reason or f"HTTP {code}"
    return f"{what}: {text}"


# Server-side apply checks the object against the schema before any validation, and says so in the
# message only (code 500 before Kubernetes 1.28's fix, 400 since): "failed to create typed patch object
# (ns/name; group/v, Kind=K): .spec.x: expected numeric (int or float), got string".
TYPED_PATCH = "failed to create typed patch object"
_TYPED_FIELD = re.compile(r'(?:^|\s|:\s)(\.[A-Za-z0-9_][^\s:]*?):\s+(.+?)(?=\n|$)')
# fieldValidation=Strict (what kubectl sends): unknown and duplicate fields are a 400 BadRequest naming them
# (k8s.io/apimachinery runtime.NewStrictDecodingError), rather than fields the server silently drops.
_STRICT = "strict decoding error"
_STRICT_FIELD = re.compile(r'(unknown|duplicate) field "([^"]+)"')
_WEBHOOK_FIELD = re.compile(r"denied the request: ([A-Za-z][A-Za-z0-9_.\[\]/-]*): (.*)")


def message_causes(message: str) -> tuple[Cause, ...]:
    """Field errors a server put in the message only: SSA's typed-patch errors, a webhook's refusal."""
    if TYPED_PATCH in message:
        rest = message.split("):", 1)[-1] if "):" in message else message
        return tuple(Cause(m.group(1), m.group(2).strip(), "FieldValueTypeInvalid")
                     for m in _TYPED_FIELD.finditer(rest))
    if _STRICT in message:  # fieldValidation=Strict: `strict decoding error: unknown field "spec.x", ...`
        return tuple(Cause(m.group(2), f"{m.group(1)} field (not in the schema)" if m.group(1) == "unknown"
                           else f"{m.group(1)} field", "FieldValueNotSupported")
                     for m in _STRICT_FIELD.finditer(message))
    match = _WEBHOOK_FIELD.search(message)
    return (Cause(match.group(1), match.group(2), "webhook"),) if match else ()


# -- field paths ---------------------------------------------------------------------------------

_STEP = re.compile(r"\.?([^.\[\]]+)|\[([^\]]*)\]")


def parse_field_path(text: str) -> tuple:
    """`spec.template.spec.containers[0].env[1].value` -> ('spec', 'template', 'spec', 'containers', 0, 'env', 1,
    'value'); a map key in brackets stays a string (`metadata.labels[a.b/c]`); `<nil>` and `[]` are the object."""
    text = text.strip()
    if text in ("", "<nil>", "[]"):
        return ()
    steps: list[Any] = []
    for name, bracket in _STEP.findall(text):
        if name:
            steps.append(name)
        elif bracket.isdigit():
            steps.append(int(bracket))
        elif bracket:
            steps.append(bracket)
    return tuple(steps)


def pointer_path(pointer: str) -> tuple:
    """An RFC 6901 JSON pointer (`/spec/x/0`) as a path tuple."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    return tuple(int(p) if p.isdigit() else p for p in parts)


def _role_here(node: Any) -> str | None:
    """The trainspec role of a replica spec / task / replicated job / workload, found in its pod template."""
    if not isinstance(node, dict):
        return None
    for template in (node.get("template"), (node.get("template") or {}).get("spec", {}).get("template")
                     if isinstance(node.get("template"), dict) else None):
        if isinstance(template, dict):
            labels = (template.get("metadata") or {}).get("labels") or {}
            if isinstance(labels, dict) and isinstance(labels.get(ROLE_LABEL), str):
                return labels[ROLE_LABEL]
    return None


# Container fields a spec writes per role (or once for the job), by the name the spec uses.
_CONTAINER_FIELDS = {"image": "image", "command": "command", "args": "args", "env": "env", "resources": "resources",
                     "ports": "port", "workingDir": "workingDir", "livenessProbe": "probes",
                     "readinessProbe": "probes", "startupProbe": "probes", "lifecycle": "lifecycle",
                     "volumeMounts": "volumes"}
_REPLICA_COUNTS = ("replicas", "taskNumber", "numNodes", "parallelism", "completions")


def spec_candidates(obj: dict, field: tuple) -> list[tuple]:
    """Spec paths that may have written `field` of compiled object `obj`, the most precise first."""
    node: Any = obj
    role: str | None = None
    pod: tuple | None = None  # the rest of the path from a pod spec on
    for i, step in enumerate(field):
        if pod is None:
            role = _role_here(node) or role
            if isinstance(node, dict) and "containers" in node and role is not None:
                pod = field[i:]
                break
        if isinstance(node, dict) and step in node:
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
        else:
            break
    else:
        if pod is None and role is None:
            role = _role_here(node)
    out: list[tuple] = []
    if role is None:
        if field[:2] in (("metadata", "name"), ("metadata", "labels"), ("metadata", "annotations")):
            out.append(field[:3])
        return out + [("metadata", "name")]
    own = ("spec", "roles", role)
    if pod and len(pod) >= 3 and pod[0] in ("containers", "initContainers") and pod[2] in _CONTAINER_FIELDS:
        name = _CONTAINER_FIELDS[pod[2]]
        tail: tuple = ()
        if name == "env" and len(pod) >= 4 and isinstance(pod[3], str) and pod[3].startswith("name="):
            tail = (pod[3].split("=", 1)[1].strip('"'),)  # SSA's list key: env[name="FOO"]
        elif name == "env" and len(pod) >= 4:
            try:
                env = _walk(obj, field[:len(field) - len(pod) + 4])
                tail = (env["name"],) if isinstance(env, dict) and "name" in env else ()
            except (KeyError, IndexError, TypeError):
                tail = ()
        out += [own + (name,) + tail, ("spec", name) + tail, own + (name,), ("spec", name)]
    elif not pod and field and field[-1] in _REPLICA_COUNTS:
        out.append(own + ("replicas",))
    return out + [own]


def _walk(obj: Any, path: tuple) -> Any:
    for step in path:
        obj = obj[step]
    return obj


class Located(NamedTuple):
    file: str
    line: int
    column: int
    path: str  # the spec field, dotted


def locate(file: str, positions: dict, candidates: list[tuple]) -> Located | None:
    """The first candidate the spec wrote (positions from the loader), else the nearest written parent."""
    if not positions:
        return None
    for path in candidates:
        if path in positions:
            line, column = positions[path]
            return Located(file, line, column, _dotted(path))
    for path in candidates:
        for cut in range(len(path) - 1, 0, -1):
            if path[:cut] in positions:
                line, column = positions[path[:cut]]
                return Located(file, line, column, _dotted(path[:cut]))
    return None


def patch_for(patches: tuple, field: tuple):
    """The spec.patches op that wrote `field` (or a parent of it), if one did."""
    for op in reversed(patches):  # the last op to touch a field wins
        target = pointer_path(str((op.op or {}).get("path", "")))
        if target and field[:len(target)] == target:
            return op
    return None


def _dotted(path: tuple) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


class ApiFailure(Error):
    """A request the server answered with an error; `status` is its metav1.Status."""

    def __init__(self, status: Status):
        super().__init__(status.message or status.reason or f"HTTP {status.code}")
        self.status = status


# -- the server's reason, cut to the reason ---------------------------------------------------------

_INVALID_VALUE = "Invalid value: "
_OPEN, _CLOSE = "{[(", "}])"
REASON_WIDTH = 240  # a reason longer than this is cut (the server's whole message never reaches the user)


def _value_end(text: str, start: int) -> int:
    """Where a value the server printed (Go's %q string, %#v struct, number...) starting at `start` ends:
    the first top-level ": " after it, or the end of the text."""
    depth, i, quote = 0, start, ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"`":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif depth == 0 and text.startswith(": ", i):
            return i
        i += 1
    return len(text)


def cut_reason(message: str, width: int = REASON_WIDTH) -> str:
    """The server's reason in its own words without the value it echoes back: `Invalid value:
    core.PodTemplateSpec{...5 KB...}: field is immutable` -> `field is immutable`; a short value stays
    (`Invalid value: "two": spec.x in body must be of type integer`). One line, at most `width` characters."""
    text = " ".join(message.split())
    out, i = "", 0
    while True:
        at = text.find(_INVALID_VALUE, i)
        if at < 0:
            out += text[i:]
            break
        start = at + len(_INVALID_VALUE)
        end = _value_end(text, start)
        value = text[start:end]
        out += text[i:at]
        out += f"{_INVALID_VALUE}{value}: " if len(value) <= 40 and end < len(text) else ""
        i = end + 2 if end < len(text) else end
    out = out.strip()
    return out if len(out) <= width else out[:width - 1].rstrip() + "…"


# How a kube-apiserver words a field that cannot change on an existing object: ValidateImmutableField's
# "field is immutable" (a Job's template, selector, completionMode...), a Service's clusterIPs and ipFamilies
# "may not change once set", and the CRDs' `self == oldSelf` rules ("field is immutable", "Value is immutable").
_IMMUTABLE = ("immutable", "may not change once set")


def immutable(cause: Cause) -> bool:
    """A field the server will not change in place: only deleting and creating the object changes it."""
    return any(mark in cause.message.lower() for mark in _IMMUTABLE)


def immutable_fields(status: Status) -> tuple[str, ...]:
    """The fields an update was refused for because they cannot change (empty: refused for another reason,
    or for other reasons as well, which --force would not cure)."""
    if status.code != 422 and status.reason != "Invalid":
        return ()
    causes = real_causes(status)
    if not causes or not all(immutable(c) for c in causes):
        return ()
    return tuple(dict.fromkeys(c.field.lstrip(".") or "<object>" for c in causes))
