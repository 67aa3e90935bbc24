"""Shared pieces of the fuzz tests (tests/compiler/test_fuzz.py) and the long run (bench/fuzz.py).

- `valid_specs()`: a hypothesis strategy of spec documents (plain dicts) that must
  validate: every framework and topology, replica counts down to 0 where a role may
  be empty, resources, env with Secret/ConfigMap refs and templates, every volume
  kind, init containers, probes, hooks, scheduling, framework blocks, restart
  policies, and arbitrary unicode in the free-text values.
- `mutated_specs()`: a valid spec broken by one to three mutators (wrong types,
  huge numbers, deleted required fields, unknown fields, deep nesting, unicode keys,
  null), written as YAML or JSON, sometimes with its text mangled byte by byte.
- `load_outcome()`: load one file and check the only two allowed outcomes: plans,
  or a `SpecErrors` whose every error is well formed.
- `check_target()`: the real schema check of one target's output (the same checks as
  the target tests: strict Kubernetes schemas, strict CRD schemas, the Compose
  schema, the chart's values schema), plus the replica's command, args and env read
  back from the output equal to the plan's (nothing lost or injected by quoting).
"""

from __future__ import annotations

import functools
import json
import os
import re

import yaml
from hypothesis import strategies as st

from trainspec.compiler import SpecErrors
from trainspec.compiler.model import ConfigMapRef, SecretRef
from trainspec.compiler.plan import expand_references, resolved_env
from trainspec.compiler.templating import has_template
from trainspec.targets import load_plans

# --- building blocks ----------------------------------------------------------------------------

HOSTILE_TEXT = [
    "", " ", "  lead", "trail  ", "a\nb", "a\r\nb", "\n", "line\n", "---", "--- x", "...", "a: b", "k: v # c",
    "# comment", "#", "&anchor", "*alias", "!tag", "!!str x", "%YAML 1.1", "@at", "`tick`", "|", ">", "- item",
    "? key", "[a, b]", "{a: b}", "'single'", '"double"', "back\\slash", "\\n", "$(HOME)", "$$(X)", "$$", "$",
    "${VAR}", "${VAR:-x}", "$VAR", "cost $5", "$(unterminated", "; rm -rf / | cat & $(id) `id` > out < in",
    "yes", "no", "on", "off", "true", "False", "null", "~", "NULL", "0x1F", "0o17", "017", "1e3", "1_000", ".inf",
    "-.inf", ".nan", "12:30:45", "2001-12-14", "+1", "-0", "0", "=", "<<", "}}", "%}", "#}", "{", "}",
    "\u2028", "a\u2029b", "\x85", "tab\there", "\x00nul", "\x1b[31mred", "\ufeffbom", "é", "日本語", "emoji 🚀",
    "\u202eevil", "x" * 300,
]

# No surrogates (not UTF-8); everything else, controls included, is fair game in free text.
_CHARS = st.characters(codec="utf-8")


def _no_template(text: str) -> bool:
    return not has_template(text)


free_text = st.one_of(st.sampled_from(HOSTILE_TEXT), st.text(_CHARS, max_size=24)).filter(_no_template)
nonblank_text = free_text.filter(lambda s: s.strip() != "")

_LOWER = "abcdefghijklmnopqrstuvwxyz"
_DIGITS = "0123456789"


@st.composite
def dns_label(draw, max_len: int = 20, first=_LOWER + _DIGITS):
    head = draw(st.sampled_from(first))
    if max_len == 1:
        return head
    middle = draw(st.text(_LOWER + _DIGITS + "-", max_size=max_len - 2))
    tail = draw(st.text(_LOWER + _DIGITS, min_size=1, max_size=1)) if middle or draw(st.booleans()) else ""
    return head + middle + tail


dns1035 = dns_label(max_len=24, first=_LOWER)
dns1123 = dns_label(max_len=20)
subdomain = st.lists(dns_label(max_len=12), min_size=1, max_size=3).map(".".join)

label_name = st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,20}[A-Za-z0-9])?", fullmatch=True)
label_key = st.one_of(label_name, st.builds(lambda p, n: f"{p}/{n}", subdomain, label_name)).filter(
    lambda k: not k.startswith(("trainspec.dev/", "app.kubernetes.io/")))
label_value = st.one_of(st.just(""), label_name)

env_name = st.from_regex(r"[A-Za-z_.-][A-Za-z0-9_.-]{0,15}", fullmatch=True).filter(
    lambda n: not n.startswith("TRAINSPEC_"))
abs_path = st.builds(lambda parts: "/" + "/".join(parts),
                     st.lists(st.text(_CHARS.filter(lambda c: c not in "/\x00"), min_size=1, max_size=8), max_size=3))
plain_path = st.builds(lambda parts: "/" + "/".join(parts), st.lists(dns_label(max_len=8), max_size=3))

image = st.one_of(
    st.sampled_from(["python:3.12-slim", "busybox", "registry.example.com:5000/ml/train:2.15-gpu",
                     "ghcr.io/org/img@sha256:" + "a" * 64, "localhost/x:latest"]),
    st.builds(lambda r, t: f"{r}:{t}" if t else r, st.lists(dns_label(max_len=10), min_size=1, max_size=3).map("/".join),
              st.one_of(st.just(""), st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,10}", fullmatch=True))),
    nonblank_text.filter(lambda s: s == s.strip()),  # any text: Kubernetes does not check it
    st.sampled_from(["a:", "reg:5000/x:", ":", "x:y/z", "a:b:c", "x:t@sha256:abc"]),
)

cpu = st.one_of(st.sampled_from(["500m", "1", "4", "0.5", "100m", "1e3", "2k"]),
                st.integers(1, 64), st.sampled_from([0.25, 1.5]))
memory = st.one_of(st.sampled_from(["512Mi", "8Gi", "1G", "100M", "1Ti", "1e9", "123456789", "1.5Gi"]),
                   st.integers(1, 2 ** 40))
quantity_size = st.sampled_from(["64Mi", "1Gi", "2G", "500M"])


@functools.cache
def _templates(roles: tuple[str, ...]) -> st.SearchStrategy[str]:
    exprs = ["{{ index }}", "{{ role }}", "{{ replicas }}", "{{ port }}", "{{ job.name }}", "{{ job.namespace }}",
             "{{ '{{' }}", "{{ '}}' }}", "{{ index + 1 }}", "{{ '{%' }}"]
    exprs += [f"{{{{ hosts.{r} | join(',') }}}}" for r in roles] + [f"{{{{ hosts.{r} | length }}}}" for r in roles]
    piece = st.one_of(st.sampled_from(exprs), free_text.filter(lambda s: "{" not in s and "}" not in s))
    return st.lists(piece, min_size=1, max_size=4).map("".join)


@functools.cache
def _text_or_template(roles: tuple[str, ...]):
    return st.one_of(free_text, free_text, _templates(roles))


@functools.cache
def _ref(kind: str):
    key = st.from_regex(r"[-._a-zA-Z0-9]{1,20}", fullmatch=True).filter(lambda k: k not in (".", ".."))
    return st.builds(lambda n, k: {kind: {"name": n, "key": k}}, subdomain, key)


@functools.cache
def _env(roles: tuple[str, ...], templated: bool = True):
    value = st.one_of(_text_or_template(roles) if templated else free_text, _ref("secretKeyRef"),
                      _ref("configMapKeyRef"))
    return st.dictionaries(env_name, value, max_size=4)


@functools.cache
def _resources():
    return st.fixed_dictionaries({}, optional={"cpu": cpu, "memory": memory, "gpu": st.integers(0, 4),
                                               "shm": quantity_size})


@functools.cache
def _handler(kinds=("exec", "httpGet", "tcpSocket")):
    options = {
        "exec": st.lists(free_text, min_size=1, max_size=4),
        # a port name is an IANA service name: a DNS label without consecutive hyphens (IsValidPortName)
        "httpGet": st.fixed_dictionaries({"port": st.one_of(st.integers(1, 65535), dns_label(
            max_len=15, first=_LOWER).filter(lambda name: "--" not in name))},
                                         optional={"path": plain_path, "scheme": st.sampled_from(["HTTP", "HTTPS"]),
                                                   "host": dns1123}),
        "tcpSocket": st.fixed_dictionaries({"port": st.integers(1, 65535)}, optional={"host": dns1123}),
    }
    return st.sampled_from(kinds).flatmap(lambda k: options[k].map(lambda v: {k: v}))


@functools.cache
def _probe(kind: str):
    return _probe_of(kind)


@st.composite
def _probe_of(draw, kind: str):
    body = draw(_handler())
    for key, low in (("initialDelaySeconds", 0), ("periodSeconds", 1), ("timeoutSeconds", 1),
                     ("failureThreshold", 1)):
        if draw(st.booleans()):
            body[key] = draw(st.integers(low, 2 ** 31 - 1))
    if kind == "readiness" and draw(st.booleans()):
        body["successThreshold"] = draw(st.integers(1, 100))
    return body


@functools.cache
def _init_containers():
    entry = st.fixed_dictionaries(
        {"name": dns1123},
        optional={"image": image, "command": st.lists(free_text, max_size=4), "args": st.lists(free_text, max_size=3),
                  "workingDir": abs_path, "env": _env((), templated=False), "resources": _resources()})
    return st.lists(entry, max_size=3, unique_by=lambda c: c["name"]).map(
        lambda items: [c for c in items if c["name"] not in ("tensorflow", "pytorch", "mxnet", "mpi")])


@functools.cache
def _volume():
    source = st.one_of(
        subdomain.map(lambda s: {"persistentVolumeClaim": s}),
        abs_path.map(lambda p: {"hostPath": p}),
        st.fixed_dictionaries({}, optional={"medium": st.sampled_from(["", "Memory"]), "sizeLimit": quantity_size}
                              ).map(lambda d: {"emptyDir": d}),
        subdomain.map(lambda s: {"configMap": s}),
        subdomain.map(lambda s: {"secret": s}),
    )
    return st.fixed_dictionaries({"name": dns1123, "mountPath": abs_path, "source": source},
                                 optional={"readOnly": st.booleans()})


TOPOLOGIES = {
    # role -> (min, max) replicas drawn; None: the role may be left out
    "tensorflow": {"chief": (0, 1), "ps": (0, 3), "worker": (0, 4), "evaluator": (0, 1)},
    "pytorch": {"master": (1, 1), "worker": (0, 4)},
    "mxnet": {"scheduler": (1, 1), "server": (1, 3), "worker": (1, 3)},
    "mpi": {"launcher": (1, 1), "worker": (1, 4)},
}
REQUIRED_ROLES = {"tensorflow": (), "pytorch": ("master",), "mxnet": ("scheduler", "server", "worker"),
                  "mpi": ("launcher", "worker")}


@st.composite
def _roles(draw, framework: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for role, (low, high) in TOPOLOGIES[framework].items():
        if role in REQUIRED_ROLES[framework] or draw(st.booleans()):
            counts[role] = draw(st.integers(low, high))
    if framework == "tensorflow":
        if counts.get("ps", 0) and not counts.get("worker"):
            counts["worker"] = draw(st.integers(1, 3))
        if not counts.get("chief") and not counts.get("worker"):
            counts["worker"] = draw(st.integers(1, 3))
    return counts


MINIMAL = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: other}
spec: {framework: pytorch, image: pt:1, roles: {master: {replicas: 1}}}
"""


@functools.cache
def _job_optional(roles: tuple[str, ...]) -> dict:
    return {
        "command": st.lists(_text_or_template(roles), max_size=4),
        "args": st.lists(_text_or_template(roles), max_size=4),
        "workingDir": abs_path,
        "env": _env(roles),
        "volumes": st.lists(_volume(), max_size=4, unique_by=(lambda v: v["name"], lambda v: v["mountPath"])),
        "accelerator": st.sampled_from(["nvidia.com/gpu", "amd.com/gpu", "huawei.com/Ascend910"]),
        "restartPolicy": st.sampled_from(["Never", "OnFailure", "Always", "ExitCode"]),
        "backoffLimit": st.one_of(st.integers(0, 10), st.just(2 ** 31 - 1)),
        "activeDeadlineSeconds": st.one_of(st.integers(1, 10 ** 6), st.just(2 ** 31 - 1)),
        "ttlSecondsAfterFinished": st.integers(0, 2 ** 31 - 1),
        "cleanPodPolicy": st.sampled_from(["Running", "All", "None"]),
        "port": st.integers(1, 65535),
    }


@functools.cache
def _role_optional(roles: tuple[str, ...]) -> dict:
    return {
        "image": image,
        "command": st.lists(_text_or_template(roles), max_size=3),
        "args": st.lists(_text_or_template(roles), max_size=3),
        "workingDir": abs_path,
        "env": _env(roles),
        "restartPolicy": st.sampled_from(["Never", "OnFailure", "Always", "ExitCode"]),
        "resources": _resources(),
        "initContainers": _init_containers(),
        "lifecycle": st.fixed_dictionaries({}, optional={"postStart": _handler(("exec", "httpGet")),
                                                         "preStop": _handler(("exec", "httpGet"))}),
        "probes": st.fixed_dictionaries({}, optional={k: _probe(k) for k in ("liveness", "readiness", "startup")}),
        "port": st.integers(1, 65535),
    }


@st.composite
def valid_specs(draw, framework: str | None = None) -> dict:
    """A spec document (dict) that must validate and compile; any framework unless one is given."""
    framework = framework or draw(st.sampled_from(sorted(TOPOLOGIES)))
    counts = draw(_roles(framework))
    roles = tuple(counts)
    meta: dict = {"name": draw(dns1035)}
    if draw(st.booleans()):
        meta["namespace"] = draw(dns1123)
    if draw(st.booleans()):
        meta["labels"] = draw(st.dictionaries(label_key, label_value, max_size=3))
    if draw(st.booleans()):
        meta["annotations"] = draw(st.dictionaries(label_key, free_text, max_size=3))
    spec: dict = {"framework": framework}
    role_images = draw(st.booleans())
    if not role_images:
        spec["image"] = draw(image)
    optional = _job_optional(roles)
    for key, strategy in optional.items():
        if draw(st.integers(0, 2)) == 0:
            spec[key] = draw(strategy)
    total = sum(counts.values())
    if draw(st.booleans()):
        sched = draw(st.fixed_dictionaries({}, optional={
            "gang": st.booleans(), "queue": subdomain, "priorityClassName": subdomain, "schedulerName": subdomain}))
        if total and draw(st.booleans()):
            sched["minAvailable"] = draw(st.integers(1, total))
        spec["scheduling"] = sched
    if draw(st.booleans()):
        if framework == "tensorflow":
            spec["tensorflow"] = draw(st.fixed_dictionaries({}, optional={
                "successPolicy": st.sampled_from(["ChiefOrWorker0", "AllWorkers"])}))
        elif framework == "pytorch":
            spec["pytorch"] = {"nprocPerNode": draw(st.one_of(st.integers(1, 8),
                                                              st.sampled_from(["auto", "cpu", "gpu", "4"])))}
        elif framework == "mpi":
            spec["mpi"] = draw(st.fixed_dictionaries({}, optional={
                "slotsPerWorker": st.integers(1, 1024), "implementation": st.sampled_from(["OpenMPI", "Intel", "MPICH"])}))
        else:
            spec["mxnet"] = {}
    role_bodies: dict = {}
    for role, count in counts.items():
        body: dict = {"replicas": count}
        if role_images:
            body["image"] = draw(image)
        role_optional = _role_optional(roles)
        for key, strategy in role_optional.items():
            if key not in body and draw(st.integers(0, 3)) == 0:
                body[key] = draw(strategy)
        role_bodies[role] = body
    spec["roles"] = role_bodies
    return {"apiVersion": "trainspec/v1", "kind": "TrainingJob", "metadata": meta, "spec": spec}


# --- mutators -----------------------------------------------------------------------------------

def _deep(depth: int, kind: str):
    value: object = "x"
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


HOSTILE_VALUES = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1.5, -1e308, 10 ** 30, -(10 ** 30), 2 ** 63, 2 ** 31, 100_001,
                     "", " ", "x", "0", "yes", [], {}, [None], [1, 2], {"": None}, {"a": []}, "\x00", "\ud7ff",
                     float("inf"), float("nan")]),
    st.integers(), st.floats(), st.text(_CHARS, max_size=30), free_text,
    st.sampled_from([_deep(30, "list"), _deep(30, "dict"), _deep(100, "list"), _deep(100, "dict")]),
    st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=5)), max_size=4),
    st.dictionaries(st.text(_CHARS, max_size=8), st.one_of(st.none(), st.integers(), st.text(max_size=5)), max_size=3),
)
HOSTILE_KEYS = st.one_of(st.sampled_from(["", " ", "replicas ", "Replicas", "ΝΑΜΕ", "名前", "__class__", "<<",
                                          "TRAINSPEC_X", "1", "a/b", "x" * 300]),
                         st.text(_CHARS, min_size=1, max_size=12))


def _paths(node, path=()):
    """Every path to a node in the document (the root included)."""
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, path + (i,))


def _get(doc, path):
    for part in path:
        doc = doc[part]
    return doc


def _set(doc, path, value):
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


@st.composite
def mutate(draw, doc: dict) -> dict:
    """One mutation of `doc` (a fresh copy): replace, delete, add, rename, wrap or null a node."""
    doc = json.loads(json.dumps(doc))
    paths = list(_paths(doc))
    path = draw(st.sampled_from(paths))
    action = draw(st.sampled_from(["replace", "replace", "delete", "unknown-field", "rename-key", "wrap",
                                   "null-everywhere", "deep", "to-string"]))
    node = _get(doc, path)
    if action == "replace":
        return _set(doc, path, draw(HOSTILE_VALUES))
    if action == "delete" and path:
        del _get(doc, path[:-1])[path[-1]]
        return doc
    if action == "unknown-field" and isinstance(node, dict):
        node[draw(HOSTILE_KEYS)] = draw(HOSTILE_VALUES)
        return doc
    if action == "rename-key" and path and isinstance(path[-1], str):
        parent = _get(doc, path[:-1])
        parent[draw(HOSTILE_KEYS)] = parent.pop(path[-1])
        return doc
    if action == "wrap":
        return _set(doc, path, draw(st.sampled_from([[node], {"value": node}, [[node]]])))
    if action == "null-everywhere":
        def nulls(value):
            if isinstance(value, dict):
                return {k: nulls(v) for k, v in value.items()}
            if isinstance(value, list):
                return [nulls(v) for v in value]
            return None
        return _set(doc, path, nulls(node))
    if action == "deep":
        return _set(doc, path, _deep(draw(st.integers(10, 200)), draw(st.sampled_from(["list", "dict"]))))
    if action == "to-string":
        return _set(doc, path, json.dumps(node))
    return _set(doc, path, None)


@st.composite
def mutated_specs(draw, framework: str | None = None) -> tuple[str, bytes]:
    """(file suffix, file bytes) of a broken (or, rarely, still valid) spec."""
    return draw(mutations_of(draw(valid_specs(framework))))


@st.composite
def mutated_batches(draw, framework: str | None = None, size: int = 4) -> list[tuple[str, bytes]]:
    """`size` independent mutants of one valid spec (generating the spec is most of the cost)."""
    doc = draw(valid_specs(framework))
    return [draw(mutations_of(doc)) for _ in range(size)]


@st.composite
def mutations_of(draw, doc: dict) -> tuple[str, bytes]:
    for _ in range(draw(st.integers(1, 3))):
        doc = draw(mutate(doc))
    suffix = draw(st.sampled_from([".yaml", ".yaml", ".json"]))
    data = to_text(doc, suffix).encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 4)) == 0:  # mangle the text itself
        data = bytearray(data)
        for _ in range(draw(st.integers(1, 5))):
            if not data:
                break
            at = draw(st.integers(0, len(data) - 1))
            op = draw(st.sampled_from(["flip", "delete", "insert", "dup"]))
            if op == "flip":
                data[at] = draw(st.integers(0, 255))
            elif op == "delete":
                del data[at:at + draw(st.integers(1, 20))]
            elif op == "insert":
                data[at:at] = draw(st.sampled_from([b": ", b"\n", b"- ", b"&a ", b"*a", b"{", b"[", b"'", b'"',
                                                    b"\t", b"!!python/object ", b"<<: *a\n", b"\xff", b"\x00"]))
            else:
                data[at:at] = data[at:at + draw(st.integers(1, 40))]
        data = bytes(data)
    return suffix, data


def to_text(doc, suffix: str) -> str:
    if suffix == ".json":
        return json.dumps(doc, indent=1, ensure_ascii=False)
    text = yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, width=float("inf"))
    try:
        if yaml.safe_load(text) == doc:
            return text
    except yaml.YAMLError:
        pass
    # PyYAML writes some characters (NEL, U+2028...) raw that its own reader then folds:
    # escape everything but ASCII in that case, so the file still says what `doc` says.
    return yaml.safe_dump(doc, allow_unicode=False, sort_keys=False, width=float("inf"))


# --- outcomes -----------------------------------------------------------------------------------

def load_outcome(path: str):
    """load_plans(path): the plans, or the SpecErrors after checking every error is well formed.

    Any other exception propagates: that is a crash (a traceback for the user).
    """
    try:
        return load_plans(path)
    except SpecErrors as exc:
        assert exc.errors, "SpecErrors without errors"
        for error in exc.errors:
            assert error.file == path, error
            assert isinstance(error.line, int) and error.line >= 1, error
            assert isinstance(error.column, int) and error.column >= 1, error
            assert isinstance(error.path, str) and isinstance(error.message, str) and error.message, error
            assert "Traceback" not in error.message
            text = error.format()
            assert text.startswith(f"{path}:{error.line}:{error.column}: "), text
        str(exc)
        return exc


# Targets that may refuse a valid spec, with a clear error, for a documented reason
# (mpi-operator's restart policies, one pod template per Kubeflow replica type,
# Volcano's one TF port): docs/targets-kubeflow-volcano.md.
MAY_REFUSE = {"kubeflow", "volcano"}


def compile_all(plan) -> dict[str, dict[str, str] | SpecErrors]:
    out: dict = {}
    for target in ("k8s", "kubeflow", "volcano", "helm", "compose"):
        try:
            out[target] = _render(target, plan)
        except SpecErrors as exc:
            assert target in MAY_REFUSE, f"{target} refused a valid spec: {exc}"
            assert all(e.message.startswith(f"target {target}: ") for e in exc.errors), str(exc)
            out[target] = exc
    return out



def _render(target: str, plan):
    from trainspec.targets import render

    return render(target, plan)


# --- schema checks ------------------------------------------------------------------------------

K8S_VERSION = "1.30"


@functools.cache
def _k8s_definitions(schema_dir: str):
    from kubernetes_validate.utils import schema_contents
    from referencing import Resource

    return Resource.from_contents(schema_contents(f"kubernetes-json-schema/{schema_dir}/_definitions.json",
                                                  K8S_VERSION))


@functools.cache
def _k8s_validator(api_version: str, kind: str):
    """kubernetes_validate.validate(doc, K8S_VERSION, strict=True), with the schemas loaded once."""
    import jsonschema
    from kubernetes_validate.utils import all_versions, major_minor, schema_contents
    from referencing import Registry, Resource

    version = [v for v in all_versions() if major_minor(v) <= K8S_VERSION][-1]
    schema_dir = f"v{version}-local-strict"
    api = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    schema = schema_contents(f"kubernetes-json-schema/{schema_dir}/{kind.lower()}-{api}.json", K8S_VERSION)
    registry = _k8s_definitions(schema_dir) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.validators.Draft202012Validator(schema, registry=registry)


def k8s_errors(doc: dict) -> list[str]:
    found = _k8s_validator(doc["apiVersion"], doc["kind"]).iter_errors(doc)
    return sorted(f"{'.'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in found)


@functools.cache
def _compose_validator():
    import jsonschema

    from tools import compose_schema

    return jsonschema.Draft7Validator(compose_schema())


class Retyped:
    """A plain scalar that go-yaml (Kubernetes, Helm, Compose) would read as a number or boolean."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return f"Retyped({self.text!r})"

    def __hash__(self):
        return hash(self.text)


class GoLikeLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc, valid-type]
    """PyYAML, plus go-yaml's extra implicit types: such a plain scalar comes back as `Retyped`.

    Reading output with it makes a string that Kubernetes or Compose would retype
    (`y`, `1e3`, `08`, `0o17`...) unequal to the string that was meant, and not a
    string for the schema checks.
    """


_RETYPED = "tag:trainspec.dev,2026:retyped"
for _pattern, _first in ((r"^(?:y|Y|n|N)$", "yYnN"),
                         (r"^[-+]?(?:0[oObBxX][0-9a-fA-F_]*|[0-9][0-9_]*)$", "-+0123456789"),
                         (r"^[-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9_]+)?$", "-+0123456789.")):
    GoLikeLoader.add_implicit_resolver(_RETYPED, re.compile(_pattern), list(_first))
GoLikeLoader.add_constructor(_RETYPED, lambda loader, node: Retyped(node.value))
# PyYAML-only scalar tags: go-yaml reads a plain `=` (and `<<` as a value) as the string itself.
GoLikeLoader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: node.value)
GoLikeLoader.add_constructor("tag:yaml.org,2002:merge", lambda loader, node: node.value)


def _parse_all(text: str) -> list:
    return [d for d in yaml.load_all(text, Loader=GoLikeLoader) if d is not None]


def parse_all(text: str) -> list:
    return _parse_all(text)


INDEX_FIELDS = ("metadata.annotations['batch.kubernetes.io/job-completion-index']",
                "metadata.labels['apps.kubernetes.io/pod-index']")


def _kubelet_view(container: dict, config_maps: dict, index: int = 0) -> tuple:
    """(command, args, env) as the program of pod `index` sees them after the kubelet's $(VAR) expansion."""
    values: dict[str, str] = {}
    env: dict[str, object] = {}
    for entry in container.get("env", []):
        if "value" in entry:
            values[entry["name"]] = env[entry["name"]] = expand_references(entry["value"], values)
        else:
            source = entry["valueFrom"]
            ref = source.get("configMapKeyRef")
            if ref and ref["name"] in config_maps:
                values[entry["name"]] = env[entry["name"]] = config_maps[ref["name"]][ref["key"]]
            elif source.get("fieldRef", {}).get("fieldPath") in INDEX_FIELDS:  # the pod's completion index
                values[entry["name"]] = env[entry["name"]] = str(index)
            else:
                values.pop(entry["name"], None)
                env[entry["name"]] = source
    command = [expand_references(s, values) for s in container["command"]] if "command" in container else None
    args = [expand_references(s, values) for s in container["args"]] if "args" in container else None
    return _after_rank_prelude(container.get("command"), command, args, env, values)


def _after_rank_prelude(written, command, args, env: dict, values: dict) -> tuple:
    """Under the k8s target's rank prelude (targets/k8s/scheme.py), what the program sees: the command after it,
    and each variable the script exports = TRAINSPEC_INDEX + 1 (a model of `sh`; tests/targets/test_k8s_target.py and the
    emulator's e2e tests run the script in a real /bin/sh)."""
    from trainspec.targets.k8s.scheme import RANK_VALUE, RANK_VARIABLES, strip_rank_prelude

    if command is None or all(strip_rank_prelude(written, fw) is None for fw in RANK_VARIABLES):
        return command, args, env
    names = re.findall(r"(\w+)=" + re.escape(RANK_VALUE), command[2])
    rank = str(int(values["TRAINSPEC_INDEX"]) + 1)
    return command[3:], args, {**env, **dict.fromkeys(names, rank)}


def k8s_hosts(plan):
    """A function renaming the plan's own host names (`<job>-<role>-<i>`) to the k8s target's (`...<i>.<job>`)."""
    from trainspec.compiler.schemes import SERVICE
    from trainspec.targets.k8s.scheme import INDEXED

    old = [h.rsplit(":", 1)[0] for hs in plan.hosts(SERVICE).values() for h in hs]
    new = [h.rsplit(":", 1)[0] for hs in plan.hosts(INDEXED).values() for h in hs]
    rename = dict(zip(old, new, strict=True))
    if not rename:
        return lambda text: text
    pattern = re.compile("|".join(sorted(map(re.escape, rename), key=len, reverse=True)) + r"(?![\w.-])")
    return lambda text: pattern.sub(lambda m: rename[m.group(0)], text)


def k8s_workload(plan, workloads: dict, replica) -> dict:
    """The replica's own object (a role one template cannot serve) or its role's Indexed Job / StatefulSet."""
    base = f"{plan.name}-{plan.role(replica.role).task}"
    return workloads.get(f"{base}-{replica.index}") or workloads[base]


def _expected_env(plan, replica, hosts=None) -> dict:
    """The plan's environment of the replica; `hosts` renames its host names (the k8s target's); the user's
    own env values are their rendering with those names (role.renders)."""
    out = {}
    user: dict = {}
    if hosts is not None:
        from trainspec.targets.k8s.scheme import INDEXED

        user = {var.name: var.value for var in plan.role(replica.role).renders[INDEXED.name].of(replica.index).env
                if var.value is not None}
    for name, value in resolved_env(plan, replica):
        if hosts is not None and isinstance(value, str):
            value = user.get(name, hosts(value))
        if isinstance(value, SecretRef):
            out[name] = {"secretKeyRef": {"name": value.name, "key": value.key}}
        elif isinstance(value, ConfigMapRef):
            out[name] = {"configMapKeyRef": {"name": value.name, "key": value.key}}
        else:
            out[name] = value
    return out


def check_k8s(plan, files: dict[str, str]) -> None:
    docs = _parse_all(files["k8s.yaml"])
    for doc in docs:
        assert k8s_errors(doc) == [], (doc["kind"], doc["metadata"]["name"], k8s_errors(doc))
    for doc in docs:
        meta = doc["metadata"]
        assert {k: meta["labels"][k] for k in dict(plan.labels)} == dict(plan.labels)
        assert {k: meta.get("annotations", {}).get(k) for k in dict(plan.annotations)} == \
            dict(plan.annotations)
    config_maps = {d["metadata"]["name"]: d["data"] for d in docs if d["kind"] == "ConfigMap"}
    workloads = {d["metadata"]["name"]: d for d in docs if d["kind"] in ("Job", "Deployment", "StatefulSet")}
    hosts = k8s_hosts(plan)
    from trainspec.targets.k8s.scheme import INDEXED

    for replica in plan.replicas():  # the k8s target from v1.3: hosts <job>-<role>-<i>.<job>, one Job per role
        container = k8s_workload(plan, workloads, replica)["spec"]["template"]["spec"]["containers"][0]
        command, args, env = _kubelet_view(container, config_maps, replica.index)
        rendered = plan.role(replica.role).renders[INDEXED.name].of(replica.index)
        assert command == (list(rendered.command) if rendered.command is not None else None)
        assert args == (list(rendered.args) if rendered.args is not None else None)
        expected = _expected_env(plan, replica, hosts)
        if plan.framework == "paddle":  # a rendezvous role names each pod by its own host (as on jobset)
            env = {k: v for k, v in env.items() if k not in ("POD_IP", "PADDLE_MASTER")}
            expected = {k: v for k, v in expected.items() if k not in ("POD_IP", "PADDLE_MASTER")}
        assert env == expected


def check_crd_target(plan, files: dict[str, str], name: str) -> None:
    import schemas

    docs = _parse_all(files[f"{name}.yaml"])
    assert docs
    for doc in docs:
        if schemas.has_schema(doc):
            assert schemas.errors(doc) == [], (doc["kind"], schemas.errors(doc))
        else:
            assert k8s_errors(doc) == [], (doc["kind"], k8s_errors(doc))


def unescape_compose(value):
    """Compose interpolation of a value we wrote: `$$` is `$`; `${NAME:?...}` stays a reference."""
    if isinstance(value, str):
        return re.sub(r"\$\$", "$", value)
    if isinstance(value, list):
        return [unescape_compose(v) for v in value]
    if isinstance(value, dict):
        return {k: unescape_compose(v) for k, v in value.items()}
    return value


def check_compose(plan, files: dict[str, str]) -> dict:
    (doc,) = _parse_all(files["compose.yaml"])
    errors = sorted(e.message for e in _compose_validator().iter_errors(doc))
    assert errors == [], errors
    for replica in plan.replicas():
        service = doc["services"][f"{replica.role}-{replica.index}"]
        env = service["environment"]
        for name, value in resolved_env(plan, replica):
            if isinstance(value, (SecretRef, ConfigMapRef)):
                assert re.fullmatch(r"\$\{[A-Za-z0-9_]+:\?[^}]*\}", env[name]), env[name]
            else:
                assert unescape_compose(env[name]) == value, (name, env[name], value)
        if not (plan.framework == "mpi" and replica.role == "launcher"):
            want_command = list(replica.command) if replica.command is not None else None
            want_args = list(replica.args) if replica.args is not None else None
            assert unescape_compose(service.get("entrypoint")) == want_command
            assert unescape_compose(service.get("command")) == want_args
    return doc


def check_helm_values(plan, files: dict[str, str]) -> None:
    import jsonschema

    (values,) = _parse_all(files["helm/values.yaml"])
    schema = json.loads(files["helm/values.schema.json"])
    errors = sorted(e.message for e in jsonschema.Draft7Validator(schema).iter_errors(values))
    assert errors == [], errors
    chart = yaml.safe_load(files["helm/Chart.yaml"])
    assert chart["name"] == plan.name


def write_files(root: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)


def helm_render(chart_dir: str, namespace: str) -> list[dict]:
    from helm_python import chart as helm_chart

    with helm_chart.Chart.load(chart_dir) as chart:
        manifests = chart.render(name="release", namespace=namespace)
    docs = []
    for path, text in sorted(manifests.items()):
        if path.endswith(".yaml"):
            docs.extend(_parse_all(text))
    return sorted(docs, key=lambda o: (o["kind"], o["metadata"]["name"]))


def check_helm_render(plan, files: dict[str, str], k8s_text: str, root: str) -> None:
    """The chart rendered by a real Helm engine with default values is exactly the k8s target."""
    write_files(root, files)
    got = helm_render(os.path.join(root, "helm"), plan.namespace)
    want = sorted(_parse_all(k8s_text), key=lambda o: (o["kind"], o["metadata"]["name"]))
    assert [(o["kind"], o["metadata"]["name"]) for o in got] == [(o["kind"], o["metadata"]["name"]) for o in want]
    for g, w in zip(got, want):
        assert g == w, (f"helm render of {g['kind']} {g['metadata']['name']} differs from the k8s target: "
                        f"{first_difference(g, w)}")


def first_difference(got, want, path="") -> str:
    """Where two parsed documents first differ, for assertion messages."""
    if type(got) is not type(want):
        return f"{path or '<root>'}: {got!r} != {want!r}"
    if isinstance(got, dict):
        for key in sorted(set(got) | set(want), key=str):
            if got.get(key) != want.get(key):
                return first_difference(got.get(key), want.get(key), f"{path}.{key}")
    if isinstance(got, list):
        if len(got) != len(want):
            return f"{path}: {len(got)} items != {len(want)}: {got!r} != {want!r}"
        for i, (a, b) in enumerate(zip(got, want)):
            if a != b:
                return first_difference(a, b, f"{path}[{i}]")
    return f"{path or '<root>'}: {got!r} != {want!r}"


def compose_host_env(doc: dict) -> dict[str, str]:
    out = {}
    for service in doc["services"].values():
        for value in (service.get("environment") or {}).values():
            match = re.fullmatch(r"\$\{([A-Za-z0-9_]+):\?.*\}", str(value), re.S)
            if match:
                out[match.group(1)] = "from-the-host"
    return out
