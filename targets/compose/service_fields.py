"""Spec v1.1 settings in a Compose service, where Compose has an equivalent.

imagePullPolicy -> pull_policy; securityContext (the pod's, the container's over it):
runAsUser/runAsGroup -> user, readOnlyRootFilesystem -> read_only, privileged,
capabilities -> cap_add/cap_drop, allowPrivilegeEscalation: false -> no-new-privileges,
supplementalGroups -> group_add; podLabels -> labels; resources.requests cpu/memory ->
deploy.resources.reservations, resources.limits cpu/memory -> deploy.resources.limits;
downward-API env metadata.name / metadata.namespace -> the replica's name / the namespace.
Everything else (node placement, service accounts, pull secrets, annotations, other
resources and downward-API fields) has no meaning on one Docker host: it is dropped, and
`common.warn_dropped` says so once per spec on stderr.
"""

from __future__ import annotations

from decimal import ROUND_CEILING

from trainspec.compiler.kube import parse_quantity
from trainspec.compiler.model import FieldRef, ResourceFieldRef
from trainspec.compiler.plan import JobPlan, RolePlan

PULL_POLICY = {"Always": "always", "IfNotPresent": "if_not_present", "Never": "never"}
SECURITY_KEYS = ("runAsUser", "runAsGroup", "readOnlyRootFilesystem", "privileged", "capabilities",
                 "allowPrivilegeEscalation", "supplementalGroups")



# --- quantities ---------------------------------------------------------------------------------

quantity = parse_quantity  # `8Gi`, `500m`, `1e3` as a Decimal; ValueError otherwise


def cpus(text: str) -> str:
    """`500m` -> `0.5`, `4` -> `4`."""
    value = quantity(text).normalize()
    return format(value, "f")


def byte_size(text: str) -> str:
    """A memory quantity as a Compose byte size: `8Gi` -> `8g`, `500Mi` -> `500m`, `1G` -> `1000000000b`."""
    count = int(quantity(text).to_integral_value(rounding=ROUND_CEILING))
    for unit, size in (("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10)):
        if count and count % size == 0:
            return f"{count // size}{unit}"
    return f"{count}b"


def security(role: RolePlan, dropped: set[str]) -> dict:
    pod = dict(role.pod.pod_security_context or {})
    own = dict(role.pod.security_context or {})
    merged = {**pod, **own}
    out: dict = {}
    if merged.get("runAsUser") is not None:
        out["user"] = str(merged["runAsUser"]) + (f":{merged['runAsGroup']}" if merged.get("runAsGroup") is not None
                                                  else "")
    if merged.get("readOnlyRootFilesystem"):
        out["read_only"] = True
    if merged.get("privileged"):
        out["privileged"] = True
    caps = merged.get("capabilities") or {}
    if caps.get("add"):
        out["cap_add"] = list(caps["add"])
    if caps.get("drop"):
        out["cap_drop"] = list(caps["drop"])
    if merged.get("allowPrivilegeEscalation") is False:
        out["security_opt"] = ["no-new-privileges:true"]
    if merged.get("supplementalGroups"):
        out["group_add"] = [str(g) for g in merged["supplementalGroups"]]
    for key in merged:
        if key not in SECURITY_KEYS:
            dropped.add(f"securityContext.{key}" if key in own else f"podSecurityContext.{key}")
    return out


def service_fields(plan: JobPlan, role: RolePlan, dropped: set[str]) -> dict:
    """pull_policy and the security fields of a role's services."""
    out: dict = {}
    if role.pod.image_pull_policy:
        out["pull_policy"] = PULL_POLICY[role.pod.image_pull_policy]
    out.update(security(role, dropped))
    for key, attr in (("serviceAccountName", "service_account_name"), ("nodeSelector", "node_selector"),
                      ("tolerations", "tolerations"), ("affinity", "affinity"), ("podAnnotations", "pod_annotations")):
        if getattr(role.pod, attr):
            dropped.add(key)
    if role.pod.priority_class_name and role.pod.priority_class_name != plan.scheduling.priority_class_name:
        dropped.add("roles.<role>.priorityClassName")
    if plan.image_pull_secrets:
        dropped.add("imagePullSecrets")
    return out


def labels(role: RolePlan, ours: dict[str, str]) -> dict[str, str]:
    merged = dict(role.pod.pod_labels or {})
    merged.update(ours)
    return merged


def resources(role: RolePlan, limits: dict, dropped: set[str]) -> tuple[dict, dict]:
    """(limits, reservations): the shorthand's limits, then resources.limits / requests for cpu and memory."""
    limits = dict(limits)
    reservations: dict = {}
    for amounts, target, what in ((role.resources.limits, limits, "limits"),
                                  (role.resources.requests, reservations, "requests")):
        for name, value in amounts:
            if name == "cpu":
                target["cpus"] = cpus(value)
            elif name == "memory":
                target["memory"] = byte_size(value)
            else:
                dropped.add(f"resources.{what}.{name}")
    return limits, reservations


def downward(plan: JobPlan, replica_name: str, ref, dropped: set[str]) -> str | None:
    """A downward-API env value Compose can know before the container starts."""
    if isinstance(ref, FieldRef) and ref.field_path == "metadata.name":
        return replica_name
    if isinstance(ref, FieldRef) and ref.field_path == "metadata.namespace":
        return plan.namespace
    dropped.add(f"env fieldRef {ref.field_path}" if isinstance(ref, FieldRef) else
                f"env resourceFieldRef {ref.resource}" if isinstance(ref, ResourceFieldRef) else "env reference")
    return None
