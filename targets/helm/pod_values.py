"""The chart's spec v1.1 knobs: pod settings at the top of values.yaml, a role's own where it differs.

The chart merges a role's value over the job's as the compiler does (maps per key with
mergeOverwrite, anything else replaced), so `--set nodeSelector.pool=a100` moves every role.
"""

from __future__ import annotations

from trainspec.compiler.model import PodSettings
from trainspec.compiler.plan import JobPlan, RolePlan

# values key -> PodSettings attribute
KNOBS = (("imagePullPolicy", "image_pull_policy"), ("serviceAccountName", "service_account_name"),
         ("nodeSelector", "node_selector"), ("tolerations", "tolerations"), ("affinity", "affinity"),
         ("securityContext", "security_context"), ("podSecurityContext", "pod_security_context"),
         ("podLabels", "pod_labels"), ("podAnnotations", "pod_annotations"))

COMMENTS = {
    "imagePullPolicy": "imagePullPolicy: Always | IfNotPresent | Never, for every container (a role may set its own).",
    "imagePullSecrets": "imagePullSecrets: names of the registry Secrets every pod uses.",
    "serviceAccountName": "serviceAccountName: of every pod (a role may set its own).",
    "nodeSelector": "nodeSelector: node labels every pod requires; roles.<role>.nodeSelector adds to it per key.",
    "tolerations": "tolerations: Kubernetes tolerations of every pod (a role's list replaces this one).",
    "affinity": "affinity: Kubernetes affinity of every pod (a role's is merged over it per key).",
    "securityContext": "securityContext: the training container's Kubernetes securityContext.",
    "podSecurityContext": "podSecurityContext: every pod's Kubernetes securityContext.",
    "podLabels": "podLabels: extra labels on every pod template (trainspec's own labels win).",
    "podAnnotations": "podAnnotations: annotations on every pod template.",
}


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def job_values(plan: JobPlan) -> dict:
    out: dict = {}
    for key, attr in KNOBS:
        value = getattr(plan.pod, attr)
        if value is not None:
            out[key] = _plain(value)
    if plan.image_pull_secrets:
        out["imagePullSecrets"] = list(plan.image_pull_secrets)
    return out


def role_values(plan: JobPlan, role: RolePlan) -> dict:
    """What the role sets beyond the job's values (its merged value where it differs)."""
    out: dict = {}
    job: PodSettings = plan.pod
    for key, attr in KNOBS:
        mine, theirs = getattr(role.pod, attr), getattr(job, attr)
        if mine is not None and mine != theirs:
            out[key] = _plain(mine)
    if role.pod.priority_class_name and role.pod.priority_class_name != plan.scheduling.priority_class_name:
        out["priorityClassName"] = role.pod.priority_class_name
    own_volumes = role.volumes[len(plan.volumes):]
    if own_volumes:
        out["volumes"] = [volume_value(v) for v in own_volumes]
    return out


def volume_value(v) -> dict:
    from ..common import volume

    entry = {"name": v.name, "mountPath": v.mount_path}
    if v.read_only:
        entry["readOnly"] = True
    source = volume(v)
    source.pop("name")
    entry["source"] = source
    return entry


def schema(dns1123: str, quantity: dict) -> tuple[dict, dict]:
    """(job-level, role-level) JSON-schema properties of these knobs (shapes checked by the compiler)."""
    string_map = {"type": "object", "additionalProperties": {"type": "string"}}
    common = {
        "imagePullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]},
        "serviceAccountName": {"type": "string", "pattern": dns1123},
        "nodeSelector": string_map, "podLabels": string_map, "podAnnotations": string_map,
        "tolerations": {"type": "array", "items": {"type": "object"}},
        "affinity": {"type": "object"}, "securityContext": {"type": "object"},
        "podSecurityContext": {"type": "object"},
    }
    job = dict(common, imagePullSecrets={"type": "array", "items": {"type": "string", "pattern": dns1123}})
    role = dict(common, priorityClassName={"type": "string", "pattern": dns1123})
    return job, role
