"""The reference CRD schemas (shared/reference/crds), as strict jsonschema validators.

The folder comes from helpers.reference_dir() (`$TRAINSPEC_REFERENCE` or
`../shared/reference`; tests skip without it, and fail under CI=true).  As the reference README
describes, plain CRD schemas accept unknown fields; to match
`kubectl apply --validate=strict`, every `type: object` that has `properties`
but neither `additionalProperties` nor `x-kubernetes-preserve-unknown-fields`
is made strict with `additionalProperties: false`.
"""

from __future__ import annotations

import copy
import functools

import yaml

from helpers import reference_dir

CRD_FILES = {
    ("kubeflow.org/v1", "TFJob"): "crds/kubeflow/kubeflow.org_tfjobs.yaml",
    ("kubeflow.org/v1", "PyTorchJob"): "crds/kubeflow/kubeflow.org_pytorchjobs.yaml",
    ("kubeflow.org/v1", "MXJob"): "crds/kubeflow/kubeflow.org_mxjobs.yaml",
    ("kubeflow.org/v2beta1", "MPIJob"): "crds/kubeflow/kubeflow.org_mpijobs_v2beta1.yaml",
    ("batch.volcano.sh/v1alpha1", "Job"): "crds/volcano/batch.volcano.sh_jobs.yaml",
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): "crds/volcano/scheduling.volcano.sh_podgroups.yaml",
    ("scheduling.volcano.sh/v1beta1", "Queue"): "crds/volcano/scheduling.volcano.sh_queues.yaml",
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): "crds/jobset/jobset.x-k8s.io_jobsets.yaml",
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"): "crds/trainer/trainer.kubeflow.org_trainjobs.yaml",
    ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"): "crds/trainer/trainer.kubeflow.org_trainingruntimes.yaml",
}


def strict(schema):
    """A copy of `schema` where objects with `properties` reject unknown fields."""
    schema = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if (node.get("type") == "object" and "properties" in node and "additionalProperties" not in node
                    and not node.get("x-kubernetes-preserve-unknown-fields")):
                node["additionalProperties"] = False
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return schema


def served_schema(crd: dict, version: str) -> dict:
    for ver in crd["spec"]["versions"]:
        if ver["name"] == version and ver.get("served"):
            return ver["schema"]["openAPIV3Schema"]
    raise KeyError(f"{crd['metadata']['name']} does not serve {version}")


@functools.cache
def validator(api_version: str, kind: str):
    """A strict Draft 7 validator for that kind, from its CRD's served version."""
    import jsonschema

    path = reference_dir() / CRD_FILES[(api_version, kind)]
    with open(path, encoding="utf-8") as handle:
        crd = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    version = api_version.rsplit("/", 1)[1]
    return jsonschema.Draft7Validator(strict(served_schema(crd, version)))


def errors(document: dict) -> list[str]:
    """Every schema problem of one custom resource, as 'path: message' lines."""
    found = validator(document["apiVersion"], document["kind"]).iter_errors(document)
    return sorted(f"{'.'.join(str(p) for p in err.absolute_path) or '<root>'}: {err.message}" for err in found)


def has_schema(document: dict) -> bool:
    return (document.get("apiVersion"), document.get("kind")) in CRD_FILES
