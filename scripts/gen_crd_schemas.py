"""Regenerate compiler/apiserver/crds/*.json from the operators' CRDs (the reference folder).

The API server validates a custom resource against its CRD's structural schema (types, enums,
bounds, required fields, list-map keys) and the schema's `x-kubernetes-validations` CEL rules.
compiler/apiserver/crd.py does the same offline with these files, one per served kind and version
(`<group>_<version>_<Kind>.json`, read only when that kind is written): the CRD's schema with the
descriptions and every keyword the server does not validate with removed.
tests/targets/test_written_objects.py checks they are still what this script makes of the CRDs.

    python scripts/gen_crd_schemas.py [reference/crds]
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import yaml

# the schema keywords apiextensions-apiserver validates a custom resource with (structural schema,
# k8s.io/apiextensions-apiserver pkg/apiserver/schema/validation.go and pkg/apiserver/validation)
KEEP = ("$ref", "type", "properties", "items", "additionalProperties", "required", "enum", "maxItems", "minItems",
        "maxLength", "minLength", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "format", "maxProperties", "minProperties", "nullable", "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys", "x-kubernetes-validations", "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource", "allOf", "anyOf", "oneOf")
FILES = ("jobset/jobset.x-k8s.io_jobsets.yaml", "kubeflow/kubeflow.org_tfjobs.yaml",
         "kubeflow/kubeflow.org_pytorchjobs.yaml", "kubeflow/kubeflow.org_mxjobs.yaml",
         "kubeflow/kubeflow.org_mpijobs_v2beta1.yaml", "kubeflow/kubeflow.org_xgboostjobs.yaml",
         "kubeflow/kubeflow.org_paddlejobs.yaml", "kubeflow/kubeflow.org_jaxjobs.yaml",
         "volcano/batch.volcano.sh_jobs.yaml", "trainer/trainer.kubeflow.org_trainjobs.yaml",
         "trainer/trainer.kubeflow.org_trainingruntimes.yaml",
         "trainer/trainer.kubeflow.org_clustertrainingruntimes.yaml")


def prune(node):
    if isinstance(node, list):
        return [prune(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {name: prune(sub) for name, sub in value.items()}
        elif key == "x-kubernetes-validations":
            out[key] = [{k: v for k, v in rule.items() if k in ("rule", "message", "messageExpression", "reason",
                                                                  "fieldPath")} for rule in value]
        elif key in KEEP:
            out[key] = prune(value)
    return out


CORE_VERSION = "1.36.0"  # the newest Kubernetes trainspec supports (compiler/kube_rules.py KUBE_VERSIONS)
CORE_ROOTS = {"v1/Pod": "io.k8s.api.core.v1.Pod", "v1/Service": "io.k8s.api.core.v1.Service",
              "v1/ConfigMap": "io.k8s.api.core.v1.ConfigMap", "v1/Secret": "io.k8s.api.core.v1.Secret",
              "batch/v1/Job": "io.k8s.api.batch.v1.Job", "apps/v1/Deployment": "io.k8s.api.apps.v1.Deployment"}


def core() -> dict:
    """The built-in kinds trainspec writes, from Kubernetes' OpenAPI definitions as kubernetes-validate ships
    them (strict: unknown fields refused): {"roots": {apiVersion/kind: definition}, "definitions": the
    definitions they reach, pruned}.  The types and known fields; the value rules are compiler/apiserver's."""
    import kubernetes_validate

    folder = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / f"v{CORE_VERSION}-local-strict"
    defs = json.loads((folder / "_definitions.json").read_text())["$defs"]
    reached: dict = {}
    pending = list(CORE_ROOTS.values())
    while pending:
        name = pending.pop()
        if name in reached:
            continue
        reached[name] = prune(defs[name])
        text = json.dumps(defs[name])
        pending += [ref.split('"')[0] for ref in text.split('"$ref": "#/$defs/')[1:]]
    for node in reached.values():
        _local_refs(node)
        _drop_required(node)
    return {"roots": CORE_ROOTS, "definitions": reached}


def _drop_required(node) -> None:
    """A built-in kind's `required` is not the server's check: a missing field decodes to its zero value and
    the validation code decides (a sleep action's seconds default to 0).  Kept as `x-required`, which the
    object walk does not read and the spec's Kubernetes-shaped fields do (compiler/kube_shapes.py: a
    toleration's missing operator is named there, before any object is made)."""
    if isinstance(node, dict):
        if "required" in node and isinstance(node["required"], list):
            node["x-required"] = node.pop("required")
        for value in node.values():
            _drop_required(value)
    elif isinstance(node, list):
        for value in node:
            _drop_required(value)


def _local_refs(node) -> None:
    """'#/$defs/X' -> 'X' (crd.py resolves a $ref in the definitions it was loaded with)."""
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            node["$ref"] = node["$ref"].rsplit("/", 1)[-1]
        for value in node.values():
            _local_refs(value)
    elif isinstance(node, list):
        for value in node:
            _local_refs(value)


def main(folder: Path) -> dict:
    out = {}
    for name in FILES:
        crd = yaml.safe_load((folder / name).read_text())
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if version.get("served", True):
                out[f"{group}/{version['name']}/{kind}"] = prune(version["schema"]["openAPIV3Schema"])
    return out


def file_name(key: str) -> str:
    """'jobset.x-k8s.io/v1alpha2/JobSet' -> 'jobset.x-k8s.io_v1alpha2_JobSet.json' (crd.py reads the same)."""
    return key.replace("/", "_") + ".json"


if __name__ == "__main__":
    default = Path(os.environ.get("TRAINSPEC_REFERENCE", Path(__file__).resolve().parents[2] / "shared" /
                                  "reference")) / "crds"
    data = main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
    target = Path(__file__).resolve().parents[1] / "compiler" / "apiserver" / "crds"
    target.mkdir(exist_ok=True)
    for key, schema in data.items():
        (target / (file_name(key))).write_text(json.dumps(schema, sort_keys=True, separators=(",", ":")) + "\n")
    (target / "core.json").write_text(json.dumps(core(), sort_keys=True, separators=(",", ":")) + "\n")

