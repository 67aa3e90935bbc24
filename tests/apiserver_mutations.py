"""Mutations of a spec, for the differential test against a real API server (tests/data/apiserver/).

Two families, both generated from schemas rather than listed by hand:
- `spec` mutations: every field path of the spec (schema/trainspec.schema.json, into the roles and
  the Kubernetes-shaped fields through the Kubernetes OpenAPI definitions), each set to the edge
  values of its type;
- `patch` mutations: every field path of the objects a target writes that a patch can reach (the
  pod template and its containers from the Kubernetes OpenAPI definitions; the custom resource's
  own fields from its CRD schema, compiler/apiserver/crds), each written by an `add` op with the
  edge values of its type, into a valid seed where the field sits in a list item.

scripts/record_apiserver_verdicts.py sends each mutation's compiled objects to a real API server
and records its verdicts; tests/compiler/test_apiserver_differential.py checks `trainspec` agrees.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KUBE_VERSION = "1.36.0"

BASE = {
    "apiVersion": "trainspec/v1.2", "kind": "TrainingJob", "metadata": {"name": "diff"},
    "spec": {"framework": "pytorch", "image": "registry.example.com/train:1", "command": ["python", "train.py"],
             "roles": {"master": {"replicas": 1}, "worker": {"replicas": 1}}},
}
# where each target's pod template is, as a patch addresses it (k8s: the file's objects; /2 is
# master-0's Job after the topology ConfigMap and its Service; the others: the job object)
POD_PATHS = {
    "k8s": "/2/spec/template/spec",
    "jobset": "/spec/replicatedJobs/0/template/spec/template/spec",
    "volcano": "/spec/tasks/0/template/spec",
    "kubeflow": "/spec/pytorchReplicaSpecs/Master/template/spec",
}
CR_KINDS = {"jobset": "jobset.x-k8s.io/v1alpha2/JobSet", "volcano": "batch.volcano.sh/v1alpha1/Job",
            "kubeflow": "kubeflow.org/v1/PyTorchJob", "trainjob": "trainer.kubeflow.org/v1alpha1/TrainJob"}
TARGETS = ("k8s", "jobset", "volcano", "kubeflow", "trainjob")

# a valid item for each list of objects a mutation steps into (by OpenAPI definition name)
SEEDS = {
    "Container": {"name": "side", "image": "registry.example.com/side:1"},
    "ContainerPort": {"containerPort": 8080, "protocol": "TCP", "name": "extra"},
    "EnvVar": {"name": "EXTRA", "value": "1"},
    "EnvFromSource": {"configMapRef": {"name": "cm"}},
    "VolumeMount": {"name": "scratch", "mountPath": "/scratch"},
    "Volume": {"name": "scratch2", "emptyDir": {}},
    "KeyToPath": {"key": "k", "path": "p"},
    "Toleration": {"key": "k", "operator": "Exists", "effect": "NoSchedule"},
    "TopologySpreadConstraint": {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                 "labelSelector": {"matchLabels": {"app": "x"}}},
    "PodReadinessGate": {"conditionType": "example.com/ready"},
    "PodSchedulingGate": {"name": "example.com/gate"},
    "LocalObjectReference": {"name": "pull"},
    "HostAlias": {"ip": "10.0.0.1", "hostnames": ["h"]},
    "PodDNSConfigOption": {"name": "ndots", "value": "2"},
    "Sysctl": {"name": "net.core.somaxconn", "value": "1024"},
    "NodeSelectorTerm": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]},
    "NodeSelectorRequirement": {"key": "k", "operator": "In", "values": ["v"]},
    "PodAffinityTerm": {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "x"}}},
    "WeightedPodAffinityTerm": {"weight": 1, "podAffinityTerm": {"topologyKey": "zone"}},
    "PreferredSchedulingTerm": {"weight": 1, "preference": {"matchExpressions": [
        {"key": "k", "operator": "In", "values": ["v"]}]}},
    "LabelSelectorRequirement": {"key": "k", "operator": "In", "values": ["v"]},
    "HTTPHeader": {"name": "X", "value": "y"},
    "ContainerResizePolicy": {"resourceName": "cpu", "restartPolicy": "NotRequired"},
}
# what a field needs beside it to mean anything (a handler inside a probe, a volume behind a mount)
PARENTS = {
    "livenessProbe": {"tcpSocket": {"port": 8080}}, "readinessProbe": {"tcpSocket": {"port": 8080}},
    "startupProbe": {"tcpSocket": {"port": 8080}},
}
SKIP = {"ephemeralContainers", "resourceClaims", "status", "managedFields", "ownerReferences", "overhead",
        "hostUsers", "schedulingGroup", "hostnameOverride", "resizePolicy", "resources.claims", "restartPolicyRules"}
MAX_DEPTH = 5


def _defs() -> dict:
    import kubernetes_validate

    folder = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / f"v{KUBE_VERSION}-local-strict"
    return json.loads((folder / "_definitions.json").read_text())["$defs"]


def edge_values(node: dict) -> list:
    """The values a mutation writes into a field of this schema: the edges of its type."""
    kinds = node.get("type") or ["object"]
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if node.get("format") == "int-or-string":
        return [0, -1, 65536, "", "Bad_Name", "x" * 16]
    if "enum" in node:
        return ["Bogus"] + list(node["enum"])[:2]
    if "integer" in kinds or "number" in kinds:
        return [0, -1, 1, 65536, 2147483648]
    if "boolean" in kinds:
        return [True, False]
    if "string" in kinds:
        return ["", "UPPER", "/abs", "../up", "a/../b", "x" * 254, "Bogus", "9999999999999",
                "example.com/" + "p" * 250 + "/x"]
    if "array" in kinds:
        return [[], ["a"] * 33, ["a", "a"]]
    if "object" in kinds:
        return [{}]
    return []


def _resolve(defs: dict, node: dict) -> tuple[str, dict]:
    ref = node.get("$ref") or (node.get("items") or {}).get("$ref") if isinstance(node, dict) else None
    if node.get("$ref"):
        name = node["$ref"].rsplit("/", 1)[-1]
        return name.rsplit(".", 1)[-1], defs[name]
    return "", node if ref is None else node


def object_fields(defs: dict, root: str, depth: int = MAX_DEPTH):
    """(pointer tokens, seed parents, schema) of every field below definition `root`: a list of objects is
    entered at item 0 with its seed (written by the mutation), a map of strings at the key `k`."""
    out = []

    def walk(node: dict, tokens: tuple, seeds: tuple, level: int, trail: tuple):
        props = node.get("properties") or {}
        for name, sub in props.items():
            if name in SKIP or ".".join(trail[-1:] + (name,)) in SKIP:
                continue
            here = tokens + (name,)
            out.append((here, seeds, sub))
            if level >= depth:
                continue
            if sub.get("$ref"):
                short, target = _resolve(defs, sub)
                if short not in trail:
                    walk(target, here, seeds, level + 1, trail + (short,))
            elif isinstance(sub.get("items"), dict) and sub["items"].get("$ref"):
                short, target = _resolve(defs, sub["items"])
                if short in SEEDS and short not in trail:
                    walk(target, here + (0,), seeds + ((here, short),), level + 1, trail + (short,))

    walk(defs[root], (), (), 0, (root.rsplit(".", 1)[-1],))
    return out


def _written(target: str):
    """The unpatched objects of BASE on `target` (k8s: the list; the others: the job object)."""
    if target not in _WRITTEN:
        _, _, docs = offline({}, target)
        _WRITTEN[target] = docs if target == "k8s" else (docs or [{}])[-1]
    return _WRITTEN[target]


_WRITTEN: dict = {}


def _exists(doc, pointer: str) -> bool:
    node = doc
    for token in pointer.split("/")[1:]:
        if isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            return False
    return True


def _op_for(target: str, base_pointer: str, tokens: tuple, seeds: tuple, value) -> list[dict]:
    """The patch ops: each missing parent object as {}, each seeded list as its one seed item, then the
    field set to `value`."""
    lists = {where: short for where, short in seeds}
    doc = _written(target)
    ops = []
    for end in range(1, len(tokens)):
        prefix = tokens[:end]
        pointer = _pointer(base_pointer, prefix)
        if prefix in lists:
            ops.append({"op": "add", "path": pointer, "value": [copy.deepcopy(SEEDS[lists[prefix]])]})
        elif not isinstance(prefix[-1], int) and not _exists(doc, pointer):
            ops.append({"op": "add", "path": pointer, "value": {}})
    ops.append({"op": "add", "path": _pointer(base_pointer, tokens), "value": value})
    return ops


def _pointer(base: str, tokens: tuple) -> str:
    return base + "/" + "/".join(str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


def patch_mutations(defs: dict | None = None) -> list[dict]:
    """Every pod-template field a patch reaches on each target (k8s in full; the operator targets the
    pod fields one value each) and every custom-resource field from its CRD schema."""
    defs = defs if defs is not None else _defs()
    cases = []
    fields = object_fields(defs, "io.k8s.api.core.v1.PodSpec")
    for target, pointer in POD_PATHS.items():
        for tokens, seeds, schema in fields:
            # the main container (index 0) exists: step into it instead of replacing the list
            if tokens[:1] in (("containers",),) and seeds and seeds[0][0] == ("containers",):
                seeds = seeds[1:]
            values = edge_values(schema)
            if target != "k8s":
                values = values[:1]
            for value in values:
                name = f"patch/{target}/{'.'.join(str(t) for t in tokens)}={json.dumps(value)[:40]}"
                cases.append({"id": name, "target": target, "patches": _op_for(target, pointer, tokens, seeds,
                                                                                   value)})
    from trainspec.compiler.apiserver.crd import schema as crd_schema

    for target, key in CR_KINDS.items():
        api, kind = key.rsplit("/", 1)
        root = crd_schema(api, kind) or {}
        for tokens, node in _crd_fields(root.get("properties", {}).get("spec", {}), ("spec",)):
            for value in edge_values(node)[:3]:
                name = f"patch/{target}/{'.'.join(str(t) for t in tokens)}={json.dumps(value)[:40]}"
                cases.append({"id": name, "target": target, "patches": _op_for(target, "", tokens, (), value)})
    return _unique(cases)


def _crd_fields(node: dict, tokens: tuple, depth: int = 3):
    """A custom resource's own fields (not into pod or job templates: the core ones cover those)."""
    for name, sub in (node.get("properties") or {}).items():
        if name in ("template", "status") or "containers" in json.dumps(sub)[:0]:
            continue
        here = tokens + (name,)
        yield here, sub
        if depth > 0 and sub.get("type") == "object" and sub.get("properties") and name not in ("template",):
            yield from _crd_fields(sub, here, depth - 1)


SPEC_KUBE_FIELDS = {"securityContext": "io.k8s.api.core.v1.SecurityContext",
                    "podSecurityContext": "io.k8s.api.core.v1.PodSecurityContext",
                    "affinity": "io.k8s.api.core.v1.Affinity"}


def spec_mutations(defs: dict | None = None) -> list[dict]:
    """Every spec field path (the job's and a role's), set to the edge values of its type."""
    defs = defs if defs is not None else _defs()
    schema = json.loads((ROOT / "schema" / "trainspec.schema.json").read_text())
    sdefs = schema["$defs"]
    cases = []

    def walk(node: dict, tokens: tuple, level: int):
        if "$ref" in node:
            node = sdefs[node["$ref"].rsplit("/", 1)[-1]]
        props = node.get("properties") or {}
        for name, sub in props.items():
            here = tokens + (name,)
            if name in ("patches", "roles", "apiVersion", "kind", "framework"):
                continue
            if name in SPEC_KUBE_FIELDS:
                for ktokens, _seeds, ksub in object_fields(defs, SPEC_KUBE_FIELDS[name], depth=2):
                    if any(isinstance(t, int) for t in ktokens):
                        continue
                    for value in edge_values(ksub)[:4]:
                        cases.append(_spec_case(here + ktokens, value))
                continue
            resolved = sdefs[sub["$ref"].rsplit("/", 1)[-1]] if "$ref" in sub else sub
            if resolved.get("properties") and level < 3:
                walk(resolved, here, level + 1)
            else:
                for value in edge_values(resolved)[:5]:
                    cases.append(_spec_case(here, value))

    walk(schema["properties"]["spec"], ("spec",), 0)
    walk(sdefs["role"], ("spec", "roles", "worker"), 1)
    walk(sdefs["metadata"], ("metadata",), 1)
    for key in ("example.com/" + "p" * 250 + "/x", "UPPER/x", "a" * 64, "nvidia.com/gpu", "requests.example.com/x",
                "example.com/x", "hugepages-2Mi", "memory", "cpu"):
        for value in ("1", "9999999999999", "-1", "0.5"):
            cases.append(_spec_case(("spec", "roles", "worker", "resources", "limits", key), value))
    for key in ("DMLC_ROLE", "PET_NNODES", "PET_MASTER_ADDR", "PYTHONUNBUFFERED", "WORLD_SIZE", "RANK"):
        cases.append(_spec_case(("spec", "env", key), "x"))
    return _unique(cases)


def _spec_case(tokens: tuple, value) -> dict:
    return {"id": f"spec/{'.'.join(str(t) for t in tokens)}={json.dumps(value)[:40]}", "set": [[list(tokens), value]]}


def _unique(cases: list[dict]) -> list[dict]:
    seen: dict[str, dict] = {}
    for case in cases:
        seen.setdefault(case["id"], case)
    return list(seen.values())


def spec_of(case: dict) -> dict:
    """The base spec with the case's writes and patches."""
    spec = copy.deepcopy(BASE)
    for tokens, value in case.get("set", ()):
        node = spec
        for key in tokens[:-1]:
            nxt = node.get(key) if isinstance(node, dict) else None
            if not isinstance(nxt, dict):
                nxt = {}
                node[key] = nxt
            node = nxt
        node[tokens[-1]] = copy.deepcopy(value)
    if case.get("patches"):
        spec["spec"]["patches"] = {case["target"]: copy.deepcopy(case["patches"])}
    return spec


def offline(case: dict, target: str, version: str = "1.36") -> tuple[str, str, list[dict] | None]:
    """(verdict, reason, objects): trainspec's answer for the case on `target`: `refuse` with its first
    message, or `accept` with the objects it writes (parsed)."""
    import tempfile

    import yaml

    from trainspec.compiler import SpecErrors
    from trainspec.targets import load_plans, render

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "job.yaml"
        path.write_text(yaml.safe_dump(spec_of(case), sort_keys=False))
        try:
            (plan,) = load_plans(str(path), targets=(target,), kube_version=version)
            files = render(target, plan)
        except SpecErrors as exc:
            return "refuse", exc.errors[0].message, None
    docs = [doc for text in files.values() for doc in yaml.safe_load_all(text) if doc]
    return "accept", "", docs
