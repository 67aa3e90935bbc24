"""The kinds trainspec writes: where they are served, what provides them, and in what order to apply them."""

from __future__ import annotations

from typing import NamedTuple

from trainspec.compiler.kinds import KUBEFLOW_JOBS


class Kind(NamedTuple):
    api_version: str  # group/version, or "v1" for the core group
    kind: str
    plural: str
    namespaced: bool
    provider: str  # what installs it ("" for built-in kinds)
    instead: str  # a target that runs the job without it ("" when none)


# A target that runs a Kubeflow job without its operator: jobset, except where its semantics need plain k8s.
_INSTEAD = {"MXJob": "k8s", "MPIJob": "k8s"}

KINDS: tuple[Kind, ...] = (
    Kind("v1", "Namespace", "namespaces", False, "", ""),
    Kind("v1", "ServiceAccount", "serviceaccounts", True, "", ""),
    Kind("v1", "Secret", "secrets", True, "", ""),
    Kind("v1", "ConfigMap", "configmaps", True, "", ""),
    Kind("v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, "", ""),
    Kind("v1", "Service", "services", True, "", ""),
    Kind("batch/v1", "Job", "jobs", True, "", ""),
    Kind("apps/v1", "Deployment", "deployments", True, "", ""),
    Kind("apps/v1", "StatefulSet", "statefulsets", True, "", ""),  # the k8s target's roles of restartPolicy Always
    *(Kind(k.api_version, k.kind, k.plural, True, k.provider, _INSTEAD.get(k.kind, "jobset")) for k in KUBEFLOW_JOBS),
    Kind("batch.volcano.sh/v1alpha1", "Job", "jobs", True, "Volcano", "k8s"),
    Kind("jobset.x-k8s.io/v1alpha2", "JobSet", "jobsets", True, "JobSet (jobset.x-k8s.io)", "k8s"),
    Kind("trainer.kubeflow.org/v1alpha1", "TrainingRuntime", "trainingruntimes", True,
         "Kubeflow Trainer v2", "jobset"),
    Kind("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", "clustertrainingruntimes", False,
         "Kubeflow Trainer v2", "jobset"),
    Kind("trainer.kubeflow.org/v1alpha1", "TrainJob", "trainjobs", True, "Kubeflow Trainer v2", "jobset"),
)
BY_KEY = {(k.api_version, k.kind): k for k in KINDS}

# What a job's objects need first: its namespace, then what pods read (service accounts,
# secrets, config maps, claims) and the Services their host names resolve through, then
# runtimes a TrainJob refers to, and the workloads last, so no pod starts before what it mounts.
_RANK = {"Namespace": 0, "ServiceAccount": 1, "Secret": 2, "ConfigMap": 2, "PersistentVolumeClaim": 3,
         "Service": 4, "TrainingRuntime": 5, "ClusterTrainingRuntime": 5}
WORKLOAD_RANK = 6

# The job objects `ps --cluster` reads (the workloads, not their ConfigMaps and Services).
JOB_KINDS = tuple(k for k in KINDS if _RANK.get(k.kind, WORKLOAD_RANK) == WORKLOAD_RANK)
# Kinds a job may own on the cluster: what `--prune` and `down --cluster` look through.
OWNED_KINDS = tuple(k for k in KINDS if k.kind != "Namespace")


def rank(kind: str) -> int:
    return _RANK.get(kind, WORKLOAD_RANK)


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0] if "/" in api_version else ""


def base_path(api_version: str) -> str:
    """The REST prefix of a group/version: /api/v1 for the core group, /apis/<group>/<version> otherwise."""
    return "/api/v1" if api_version == "v1" else f"/apis/{api_version}"


def resource_path(api_version: str, plural: str, namespace: str | None, name: str | None = None) -> str:
    path = base_path(api_version)
    if namespace:
        path += f"/namespaces/{namespace}"
    path += f"/{plural}"
    return path + (f"/{name}" if name else "")


def group_version(obj: dict) -> str:
    """The version part of an object's apiVersion (v1 of trainer.kubeflow.org/v1alpha1 is v1alpha1)."""
    return str(obj.get("apiVersion", "")).rpartition("/")[2]
