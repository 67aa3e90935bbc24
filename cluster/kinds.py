"""The kinds trainspec writes: where they are served, what provides them, and in what order to apply them."""

from __future__ import annotations

from typing import NamedTuple

from trainspec.compiler import kinds as registry
from trainspec.compiler.kinds import OperatorKind, trainjob


class Kind(NamedTuple):
    api_version: str  # group/version, or "v1" for the core group
    kind: str
    plural: str
    namespaced: bool
    provider: str  # what installs it ("" for built-in kinds)
    instead: str  # a target that runs the job without it ("" when none)


def _operator(kind: OperatorKind) -> Kind:
    """An operator's kind as the cluster commands see it (its identity and what runs it instead: compiler/kinds/)."""
    return Kind(kind.api_version, kind.kind, kind.plural, kind.namespaced, kind.provider, kind.instead)


def operator_kinds() -> tuple[Kind, ...]:
    """Every kind an operator installs, from the kinds registry (built-in kinds, batch/v1's Job, are listed above)."""
    return tuple(_operator(k) for name in registry.KINDS for k in registry.kinds(name) if k.provider)

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
    *operator_kinds(),  # each registry entry's, in its order (a TrainJob's runtimes before the TrainJob)
)
BY_KEY = {(k.api_version, k.kind): k for k in KINDS}

# What a job's objects need first: its namespace, then what pods read (service accounts,
# secrets, config maps, claims) and the Services their host names resolve through, then
# runtimes a TrainJob refers to, and the workloads last, so no pod starts before what it mounts.
_RANK = {"Namespace": 0, "ServiceAccount": 1, "Secret": 2, "ConfigMap": 2, "PersistentVolumeClaim": 3,
         "Service": 4, **{k.kind: 5 for k in trainjob.RUNTIMES}}
WORKLOAD_RANK = 6

# The job objects `ps --cluster` reads (the workloads, not their ConfigMaps and Services).
JOB_KINDS = tuple(k for k in KINDS if _RANK.get(k.kind, WORKLOAD_RANK) == WORKLOAD_RANK)
# What a training job is made of: the namespaced kinds trainspec's targets write (and `apply` itself adds: a
# --secret, an MPI job's ssh Secret). A patch may add one of these to a job (a PersistentVolumeClaim, a
# ServiceAccount); any other kind, cluster-scoped ones above all (a ClusterRoleBinding, a webhook
# configuration), is refused unless the user names it (`apply --allow-kind KIND`).
TRAINING_KINDS = frozenset((k.api_version.rpartition("/")[0] if "/" in k.api_version else "", k.kind)
                           for k in KINDS if k.namespaced)
# Cluster-scoped built-in kinds, for when no server was asked (`apply --dry-run=client`): such an object is
# never shown under a namespace. With a server, its discovery decides.
CLUSTER_SCOPED = frozenset({
    ("", "Namespace"), ("", "Node"), ("", "PersistentVolume"), ("", "ComponentStatus"),
    ("rbac.authorization.k8s.io", "ClusterRole"), ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"), ("apiregistration.k8s.io", "APIService"),
    ("scheduling.k8s.io", "PriorityClass"), ("storage.k8s.io", "StorageClass"), ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"), ("storage.k8s.io", "VolumeAttachment"), ("node.k8s.io", "RuntimeClass"),
    ("certificates.k8s.io", "CertificateSigningRequest"), ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"), ("networking.k8s.io", "IngressClass"),
    (trainjob.CLUSTER_TRAINING_RUNTIME.group, trainjob.CLUSTER_TRAINING_RUNTIME.kind),
    ("scheduling.volcano.sh", "Queue"),
    ("kueue.x-k8s.io", "ClusterQueue"), ("kueue.x-k8s.io", "ResourceFlavor"),
})
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
