"""Structural validation of the Kubernetes-shaped spec fields, with positions.

tolerations, affinity, securityContext and podSecurityContext are written as
Kubernetes writes them.  Their field names and types come from the Kubernetes
OpenAPI definitions the object checks read too (compiler/apiserver/crds/core.json,
`shapes()`: one description of each Kubernetes type, checked against kubernetes-validate
by tests/compiler/test_kube_shapes.py), so the compile path needs no schema package;
SINCE (kube_shapes_data.py, scripts/gen_kube_shapes.py) says which Kubernetes version
added a field.  The OpenAPI types carry no enums: the
API server's own value rules (operators, effects, profile types, weights) are
added here, as the API server's validation states them.
"""

from __future__ import annotations

import functools

from .kube import Pattern
from .kube_rules import (
    dns_label_problem,
    label_value_problem,
    qualified_name_problem,
    subdomain_problem,
)
from .kube_shapes_data import SINCE
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
    ("PodSecurityContext", "supplementalGroups"): (0, 2**31 - 1),
}
# Values the API server takes as "unset" (the default) for an enum: a toleration's "" effect and operator.
EMPTY_OK = {("Toleration", "operator"), ("Toleration", "effect")}
SYSCTL = Pattern(r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$")
_ANY_INT = (-(2**63), 2**63 - 1)


@functools.cache
def shapes() -> dict:
    """{short definition name: {"required": (...), "fields": {name: type}}} of the core/v1 and meta/v1
    definitions: a type is a JSON type, another shape's name, ("list", type) or ("map", type)."""
    from .apiserver.schemas import core

    out: dict = {}
    for name, node in core()["definitions"].items():
        if name.startswith(("io.k8s.api.core.v1.", "io.k8s.apimachinery.pkg.apis.meta.v1.")) \
                and "properties" in node:
            out[name.rsplit(".", 1)[1]] = {"required": tuple(node.get("x-required", ())),
                                            "fields": {f: kind_of(v) for f, v in sorted(node["properties"].items())}}
    return out


def kind_of(node: dict) -> object:
    """An OpenAPI node's type, as shapes() gives it (a `$ref`'s last name part: local or `#/$defs/` refs)."""
    if "$ref" in node:
        return node["$ref"].rsplit(".", 1)[1]
    types = node.get("type")
    kind = next(t for t in (types if isinstance(types, list) else [types]) if t != "null")
    if kind == "array":
        return ("list", kind_of(node["items"]))
    if kind == "object":
        return ("map", kind_of(node["additionalProperties"]))
    return kind


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
    spec = shapes()[shape]
    fields = spec["fields"]
    errors = len(r.sink.errors)
    body = r.mapping(value, path, tuple(fields), required=spec["required"], what=f"Kubernetes {shape} fields")
    if body is None:
        return False
    for name, item in body.items():
        if name in fields and item is not None:
            since = SINCE.get((shape, name))
            if since is not None and r.kube_version < tuple(int(p) for p in since.split(".")):
                r.error(path + (name,), f"unknown field {name!r} in Kubernetes "
                        f"{r.kube_version[0]}.{r.kube_version[1]}", f"a field of Kubernetes "
                        f"{r.kube_version[0]}.{r.kube_version[1]}'s {shape}",
                        f"Kubernetes {since} adds it: --kube-version {since} (or later)", at_key=True)
                continue
            _value(r, item, path + (name,), fields[name], shape, name)
    if len(r.sink.errors) == errors:
        rules = RULES.get(shape)
        if rules is not None:
            rules(r, body, path)
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
        if choices is not None and item == "" and (shape, name) in EMPTY_OK:
            return
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


# --- the API server's rules per shape (compiler/kube_rules.py names each; messages are the server's) ----

def _key(r: Reader, value, path: tuple) -> bool:
    problem = qualified_name_problem(value) if isinstance(value, str) else None
    if problem:
        r.error(path, f"{value!r} is not a valid key: {problem}", "[prefix/]name: a DNS-subdomain prefix and a name "
                "of 1-63 letters, digits, '-', '_', '.'", at_key=False)
    return problem is None


def _toleration_rules(r: Reader, body: dict, path: tuple) -> None:
    """core validateTolerations (kube_rules: toleration)."""
    key = body.get("key") or ""
    operator = body.get("operator") or "Equal"
    if key:
        _key(r, key, path + ("key",))
    elif operator != "Exists":
        r.error(path, "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
                "operator: Exists, or a key", "an empty key with Exists tolerates every taint")
    value = body.get("value") or ""
    if operator == "Exists" and value:
        r.error(path + ("value",), "value must be empty when `operator` is 'Exists'", "no value",
                "remove value, or use operator Equal")
    elif operator == "Equal" and value and label_value_problem(value):
        r.error(path + ("value",), f"{value!r}: {label_value_problem(value)}", "a label value (at most 63 "
                "letters, digits, '-', '_', '.')")
    if body.get("tolerationSeconds") is not None and body.get("effect") != "NoExecute":
        r.error(path + ("tolerationSeconds",), "effect must be 'NoExecute' when `tolerationSeconds` is set",
                "effect: NoExecute")


def _node_requirement_rules(r: Reader, body: dict, path: tuple) -> None:
    """core ValidateNodeSelectorRequirement."""
    operator = body.get("operator")
    values = body.get("values") or []
    if operator in ("In", "NotIn") and not values:
        r.error(path + ("values",), "must be specified when `operator` is 'In' or 'NotIn'", "at least one value")
    elif operator in ("Exists", "DoesNotExist") and values:
        r.error(path + ("values",), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'", "no values")
    elif operator in ("Gt", "Lt") and (len(values) != 1 or not str(values[0]).lstrip("-").isdigit()):
        r.error(path + ("values",), "must be specified single value when `operator` is 'Lt' or 'Gt'",
                "values: [\"<integer>\"]")
    _key(r, body.get("key"), path + ("key",))
    if operator in ("In", "NotIn"):  # ValidateNodeSelectorRequirement: each value a label value
        for i, value in enumerate(values):
            if isinstance(value, str) and label_value_problem(value):
                r.error(path + ("values", i), f"{value!r}: {label_value_problem(value)}", "a label value")


def _label_requirement_rules(r: Reader, body: dict, path: tuple) -> None:
    """metav1 ValidateLabelSelectorRequirement (values label values: AllowInvalidLabelValueInSelector off)."""
    operator = body.get("operator")
    values = body.get("values") or []
    if operator in ("In", "NotIn") and not values:
        r.error(path + ("values",), "must be specified when `operator` is 'In' or 'NotIn'", "at least one value")
    elif operator in ("Exists", "DoesNotExist") and values:
        r.error(path + ("values",), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'", "no values")
    _key(r, body.get("key"), path + ("key",))
    for i, value in enumerate(values):
        if isinstance(value, str) and label_value_problem(value):
            r.error(path + ("values", i), f"{value!r}: {label_value_problem(value)}", "a label value")


def _label_selector_rules(r: Reader, body: dict, path: tuple) -> None:
    for key, value in (body.get("matchLabels") or {}).items():
        if _key(r, key, path + ("matchLabels", key)) and isinstance(value, str) and label_value_problem(value):
            r.error(path + ("matchLabels", key), f"{value!r}: {label_value_problem(value)}", "a label value")


def _node_selector_rules(r: Reader, body: dict, path: tuple) -> None:
    """core validateNodeSelector: a required node affinity needs at least one term."""
    if not body.get("nodeSelectorTerms"):
        r.error(path + ("nodeSelectorTerms",), "must have at least one node selector term",
                "a term with matchExpressions or matchFields")


def _node_term_rules(r: Reader, body: dict, path: tuple) -> None:
    """core validateNodeFieldSelectorRequirement: matchFields selects by metadata.name only."""
    for i, item in enumerate(body.get("matchFields") or []):
        ip = path + ("matchFields", i)
        if item.get("key") != "metadata.name":
            r.error(ip + ("key",), f"{item.get('key')!r}: not a valid field selector key", "metadata.name",
                    "select by node labels with matchExpressions")
        if item.get("operator") not in ("In", "NotIn"):
            r.error(ip + ("operator",), f"{item.get('operator')!r}: not a valid selector operator", "In or NotIn")
        values = item.get("values") or []
        if len(values) != 1:
            r.error(ip + ("values",), "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                    "selector", "one node name")
        elif isinstance(values[0], str) and subdomain_problem(values[0]):
            r.error(ip + ("values", 0), f"{values[0]!r}: {subdomain_problem(values[0])}", "a node name")


def _pod_affinity_term_rules(r: Reader, body: dict, path: tuple) -> None:
    """core validatePodAffinityTerm and validateMatchLabelKeysAndMismatchLabelKeys."""
    topology = body.get("topologyKey")
    if not topology:
        r.error(path + ("topologyKey",), "can not be empty", "a node label key, e.g. kubernetes.io/hostname")
    else:
        _key(r, topology, path + ("topologyKey",))
    for i, namespace in enumerate(body.get("namespaces") or []):
        if isinstance(namespace, str) and dns_label_problem(namespace):
            r.error(path + ("namespaces", i), f"{namespace!r}: {dns_label_problem(namespace)}", "a namespace name")
    selector = body.get("labelSelector")
    match_keys, mismatch_keys = body.get("matchLabelKeys") or [], body.get("mismatchLabelKeys") or []
    for field, keys in (("matchLabelKeys", match_keys), ("mismatchLabelKeys", mismatch_keys)):
        if keys and selector is None:
            r.error(path + (field,), "must not be specified when labelSelector is not set", "a labelSelector too",
                    f"remove {field}, or add a labelSelector")
            continue
        for i, key in enumerate(keys):
            _key(r, key, path + (field, i))
    if selector is not None:
        # upstream's loop: a matchLabelKeys key is refused only where a matchExpression repeats a key already in
        # the selector (matchLabels or an earlier expression); a key only in matchLabels is accepted (the
        # API server itself merges matchLabelKeys into a pod's selector as expressions)
        seen = set(selector.get("matchLabels") or {})
        for expression in selector.get("matchExpressions") or []:
            key = expression.get("key") if isinstance(expression, dict) else None
            if key in match_keys and key in seen:
                r.error(path + ("matchLabelKeys", match_keys.index(key)), f"{key!r} exists in both matchLabelKeys "
                        "and labelSelector", "a key only in one of them",
                        "the server adds matchLabelKeys to the selector itself")
            seen.add(key)
    for i, key in enumerate(match_keys):
        if key in mismatch_keys:
            r.error(path + ("matchLabelKeys", i), f"{key!r} exists in both matchLabelKeys and mismatchLabelKeys",
                    "a key only in one of them")


def _localhost_profile_rules(what: str):
    def rules(r: Reader, body: dict, path: tuple) -> None:
        """core validateSeccompProfileField / validateAppArmorProfileField."""
        localhost = body.get("type") == "Localhost"
        if localhost and not body.get("localhostProfile"):
            r.error(path + ("localhostProfile",), f"must be set when {what} type is Localhost",
                    "the profile's path on the node")
        elif not localhost and body.get("localhostProfile") is not None:
            r.error(path + ("localhostProfile",), f"can only be set when {what} type is Localhost",
                    "type: Localhost, or no localhostProfile")
        elif localhost and what == "seccomp":  # validateLocalDescendingPath
            profile = body["localhostProfile"]
            if profile.startswith("/"):
                r.error(path + ("localhostProfile",), "must be a relative path", "a path under the kubelet's "
                        "seccomp folder, e.g. profiles/train.json")
            elif ".." in profile.split("/"):
                r.error(path + ("localhostProfile",), "must not contain '..'", "a path without '..' elements")
    return rules


def _security_context_rules(r: Reader, body: dict, path: tuple) -> None:
    """core ValidateSecurityContext and validateProcMountType."""
    if body.get("allowPrivilegeEscalation") is False:
        if body.get("privileged") is True:
            r.error(path, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
                    "one of them", "a privileged container can always escalate")
        if "CAP_SYS_ADMIN" in ((body.get("capabilities") or {}).get("add") or []):
            r.error(path, "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
                    "one of them")
    if (body.get("windowsOptions") or {}).get("hostProcess") is True:
        r.error(path + ("windowsOptions", "hostProcess"), "hostNetwork must be true if hostProcess is true",
                "hostProcess: false", "a Windows HostProcess pod needs hostNetwork, which trainspec does not set")
    if body.get("procMount") == "Unmasked":
        r.error(path + ("procMount",), "`hostUsers` must be false to use `Unmasked`", "procMount: Default",
                "Unmasked needs a user-namespaced pod (spec.hostUsers: false), which trainspec does not write; "
                "add it with patches if your cluster allows it")


def _pod_security_context_rules(r: Reader, body: dict, path: tuple) -> None:
    """core validateSysctls: valid names, each once."""
    seen: set[str] = set()
    for i, item in enumerate(body.get("sysctls") or []):
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str):
            continue
        if len(name) > 253 or not SYSCTL.match(name):
            r.error(path + ("sysctls", i, "name"), f"{name!r} must have at most 253 characters and match regex "
                    f"{SYSCTL.pattern}", "a sysctl name such as net.core.somaxconn")
        elif name in seen:
            r.error(path + ("sysctls", i, "name"), f"Duplicate value: {name!r}", "each sysctl once")
        seen.add(name)


_BAD_USER_CHARS = set('"/\\[]:;|=,+*?<>@')


def _windows_rules(r: Reader, body: dict, path: tuple) -> None:
    """core validateWindowsSecurityContextOptions."""
    name = body.get("gmsaCredentialSpecName")
    if isinstance(name, str) and subdomain_problem(name):
        r.error(path + ("gmsaCredentialSpecName",), f"{name!r}: {subdomain_problem(name)}", "a GMSA resource name")
    spec = body.get("gmsaCredentialSpec")
    if isinstance(spec, str) and len(spec.encode()) > 64 * 1024:
        r.error(path + ("gmsaCredentialSpec",), "gmsaCredentialSpec size must be under 64 KiB", "at most 65536 bytes")
    user = body.get("runAsUserName")
    if isinstance(user, str):
        problem = None
        if not user:
            problem = "runAsUserName cannot be an empty string"
        elif any(ord(ch) < 32 or ord(ch) == 127 for ch in user):
            problem = "runAsUserName cannot contain control characters"
        elif len(user) > 256:
            problem = "runAsUserName's length must be at most 256 characters"
        elif user.count("\\") > 1:
            problem = "runAsUserName cannot contain more than one backslash"
        else:
            domain, _, account = user.rpartition("\\")
            if not account or len(account) > 104 or set(account) & _BAD_USER_CHARS or account.strip(". ") == "":
                problem = ("runAsUserName's User Name must be 1-104 characters, and cannot contain the characters "
                           "\" / \\ [ ] : ; | = , + * ? < > @, nor be only dots or spaces")
            elif domain and (len(domain) > 255 or (len(domain) > 15 and "." not in domain)):
                problem = "runAsUserName's Domain must be a NetBIOS name (at most 15 characters) or a DNS name"
        if problem:
            r.error(path + ("runAsUserName",), problem, "a Windows user name: DOMAIN\\user or user")


RULES = {
    "Toleration": _toleration_rules,
    "NodeSelectorRequirement": _node_requirement_rules,
    "LabelSelectorRequirement": _label_requirement_rules,
    "LabelSelector": _label_selector_rules,
    "NodeSelector": _node_selector_rules,
    "NodeSelectorTerm": _node_term_rules,
    "PodAffinityTerm": _pod_affinity_term_rules,
    "SeccompProfile": _localhost_profile_rules("seccomp"),
    "AppArmorProfile": _localhost_profile_rules("AppArmor"),
    "SecurityContext": _security_context_rules,
    "PodSecurityContext": _pod_security_context_rules,
    "WindowsSecurityContextOptions": _windows_rules,
}
