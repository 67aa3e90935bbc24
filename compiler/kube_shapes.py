"""Structural validation of the Kubernetes-shaped spec fields, with positions.

tolerations, affinity, securityContext and podSecurityContext are written as
Kubernetes writes them.  Their field names and types come from the Kubernetes
OpenAPI definitions (kube_shapes_data.py, generated from kubernetes-validate by
scripts/gen_kube_shapes.py and checked by tests/test_kube_shapes.py), so the
compile path needs no schema package.  The OpenAPI types carry no enums: the
API server's own value rules (operators, effects, profile types, weights) are
added here, as the API server's validation states them.
"""

from __future__ import annotations

from .kube_shapes_data import SHAPES
from .reader import Reader, type_name

# (shape, field) -> allowed values (k8s.io/kubernetes pkg/apis/core/validation).
ENUMS: dict[tuple[str, str], tuple[str, ...]] = {
    ("Toleration", "operator"): ("Exists", "Equal"),
    ("Toleration", "effect"): ("NoSchedule", "PreferNoSchedule", "NoExecute"),
    ("NodeSelectorRequirement", "operator"): ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"),
    ("LabelSelectorRequirement", "operator"): ("In", "NotIn", "Exists", "DoesNotExist"),
    ("SeccompProfile", "type"): ("RuntimeDefault", "Unconfined", "Localhost"),
    ("AppArmorProfile", "type"): ("RuntimeDefault", "Unconfined", "Localhost"),
    ("SecurityContext", "procMount"): ("Default", "Unmasked"),
    ("PodSecurityContext", "fsGroupChangePolicy"): ("OnRootMismatch", "Always"),
    ("PodSecurityContext", "supplementalGroupsPolicy"): ("Merge", "Strict"),
    ("PodSecurityContext", "seLinuxChangePolicy"): ("MountOption", "Recursive"),
}
# (shape, field) -> (low, high) for integers.
RANGES: dict[tuple[str, str], tuple[int, int]] = {
    ("PreferredSchedulingTerm", "weight"): (1, 100),
    ("WeightedPodAffinityTerm", "weight"): (1, 100),
    ("SecurityContext", "runAsUser"): (0, 2**31 - 1),
    ("SecurityContext", "runAsGroup"): (0, 2**31 - 1),
    ("PodSecurityContext", "runAsUser"): (0, 2**31 - 1),
    ("PodSecurityContext", "runAsGroup"): (0, 2**31 - 1),
    ("PodSecurityContext", "fsGroup"): (0, 2**31 - 1),
}
_ANY_INT = (-(2**63), 2**63 - 1)


def check(r: Reader, value, path: tuple, shape: str):
    """`value` as plain data when it has the Kubernetes shape; None (errors recorded) otherwise."""
    ok = _check(r, value, path, shape)
    return value if ok else None


def check_list(r: Reader, value, path: tuple, shape: str) -> tuple | None:
    if not isinstance(value, list):
        r.error(path, f"is {type_name(value)}", f"a list of Kubernetes {shape}s")
        return None
    results = [_check(r, item, path + (i,), shape) for i, item in enumerate(value)]
    return tuple(value) if all(results) else None


def _check(r: Reader, value, path: tuple, shape: str) -> bool:
    spec = SHAPES[shape]
    fields = spec["fields"]
    errors = len(r.sink.errors)
    body = r.mapping(value, path, tuple(fields), required=spec["required"], what=f"Kubernetes {shape} fields")
    if body is None:
        return False
    for name, item in body.items():
        if name in fields and item is not None:
            _value(r, item, path + (name,), fields[name], shape, name)
    if shape == "Toleration" and len(r.sink.errors) == errors:
        _toleration_rules(r, body, path)
    if shape in ("NodeSelectorRequirement", "LabelSelectorRequirement") and len(r.sink.errors) == errors:
        _requirement_rules(r, body, path)
    return len(r.sink.errors) == errors


def _value(r: Reader, item, path: tuple, kind, shape: str, name: str) -> None:
    if isinstance(kind, tuple):
        container, inner = kind
        if container == "list":
            if not isinstance(item, list):
                r.error(path, f"is {type_name(item)}", "a list")
                return
            for i, element in enumerate(item):
                _value(r, element, path + (i,), inner, shape, name)
            return
        if not isinstance(item, dict):
            r.error(path, f"is {type_name(item)}", "a mapping")
            return
        for key, element in item.items():
            _value(r, element, path + (key,), inner, shape, name)
        return
    if kind == "string":
        choices = ENUMS.get((shape, name))
        if choices is not None:
            r.choice(item, path, choices)
        else:
            r.string(item, path, non_empty=False)
    elif kind == "integer":
        low, high = RANGES.get((shape, name), _ANY_INT)
        r.integer(item, path, low, high)
    elif kind == "boolean":
        r.boolean(item, path)
    elif kind == "number":
        if isinstance(item, bool) or not isinstance(item, (int, float)):
            r.error(path, f"is {type_name(item)}", "a number")
    else:
        _check(r, item, path, kind)


def _toleration_rules(r: Reader, body: dict, path: tuple) -> None:
    operator = body.get("operator") or "Equal"
    if not body.get("key") and operator != "Exists":
        r.error(path, "a toleration without a key must use operator Exists", "operator: Exists, or a key",
                "an empty key with Exists tolerates every taint")
    if operator == "Exists" and body.get("value"):
        r.error(path + ("value",), "a value with operator Exists", "no value", "remove value, or use operator Equal")
    if body.get("tolerationSeconds") is not None and body.get("effect") != "NoExecute":
        r.error(path + ("tolerationSeconds",), "tolerationSeconds needs effect NoExecute", "effect: NoExecute")


def _requirement_rules(r: Reader, body: dict, path: tuple) -> None:
    operator = body.get("operator")
    values = body.get("values") or []
    if operator in ("In", "NotIn") and not values:
        r.error(path, f"operator {operator} with no values", "at least one value in values")
    elif operator in ("Exists", "DoesNotExist") and values:
        r.error(path + ("values",), f"values with operator {operator}", "no values")
    elif operator in ("Gt", "Lt") and (len(values) != 1 or not str(values[0]).lstrip("-").isdigit()):
        r.error(path + ("values",), f"operator {operator} needs one integer value", "values: [\"<integer>\"]")
