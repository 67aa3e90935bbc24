"""Where a pod may run: kubernetes pkg/apis/core/validation validateTopologySpreadConstraints,
ValidateTolerations, validateAffinity (node and pod (anti-)affinity terms) and metav1
ValidateLabelSelector."""

from __future__ import annotations

from .findings import Sink
from .values import dns_label_problem, is_int, label_value_problem, qualified_name_problem

WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")


INCLUSION_POLICIES = ("Honor", "Ignore")


def check_topology_spread(s: Sink, items, path: tuple) -> None:
    """core validateTopologySpreadConstraints."""
    pairs: set[tuple] = set()
    for i, c in enumerate(items if isinstance(items, list) else []):
        cp = path + (i,)
        if not isinstance(c, dict):
            continue
        skew = c.get("maxSkew")
        if not is_int(skew) or skew <= 0:
            s.invalid(cp + ("maxSkew",), skew, "must be greater than zero")
        key = c.get("topologyKey")
        if not key:
            s.required(cp + ("topologyKey",), "can not be empty")
        when = c.get("whenUnsatisfiable")
        if when not in WHEN_UNSATISFIABLE:
            s.unsupported(cp + ("whenUnsatisfiable",), when, WHEN_UNSATISFIABLE)
        minimum = c.get("minDomains")
        if minimum is not None:  # validateMinDomains
            if not is_int(minimum) or minimum <= 0:
                s.invalid(cp + ("minDomains",), minimum, "must be greater than 0")
            elif when != "DoNotSchedule":
                s.invalid(cp + ("minDomains",), minimum, "can only use minDomains if whenUnsatisfiable=DoNotSchedule,"
                          f" current value: {when}")
        pair = (key, when)
        if pair in pairs:  # ValidateSpreadConstraintNotRepeat
            s.duplicate(cp, f"{{{key}, {when}}}")
        pairs.add(pair)
        label_selector(s, c.get("labelSelector"), cp + ("labelSelector",))
        for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = c.get(field)
            if value is not None and value not in INCLUSION_POLICIES:
                s.unsupported(cp + (field,), value, INCLUSION_POLICIES)
        seen: set[str] = set()
        for j, label in enumerate(c.get("matchLabelKeys") or []):  # validateMatchLabelKeysInTopologySpread
            problem = qualified_name_problem(str(label))
            if problem:
                s.invalid(cp + ("matchLabelKeys", j), label, problem)
            seen.add(str(label))
        if c.get("matchLabelKeys") and c.get("labelSelector") is None:
            s.required(cp + ("labelSelector",), "must be specified when matchLabelKeys is set")


EFFECTS = ("NoExecute", "NoSchedule", "PreferNoSchedule")


SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def label_selector(s: Sink, selector, path: tuple) -> None:
    """metav1 ValidateLabelSelector: matchLabels as labels; each expression's operator, values and key."""
    if not isinstance(selector, dict):
        return
    for key, value in (selector.get("matchLabels") or {}).items():
        problem = qualified_name_problem(str(key)) or label_value_problem(str(value))
        if problem:
            s.invalid(path + ("matchLabels",), key, problem)
    for i, expression in enumerate(selector.get("matchExpressions") or []):
        ep = path + ("matchExpressions", i)
        if not isinstance(expression, dict):
            continue
        op, values = expression.get("operator"), expression.get("values") or []
        if op not in SELECTOR_OPERATORS:
            s.invalid(ep + ("operator",), op, "not a valid selector operator")
        elif op in ("In", "NotIn") and not values:
            s.required(ep + ("values",), "must be specified when `operator` is 'In' or 'NotIn'")
        elif op in ("Exists", "DoesNotExist") and values:
            s.forbidden(ep + ("values",), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
        problem = qualified_name_problem(str(expression.get("key") or ""))
        if problem:
            s.invalid(ep + ("key",), expression.get("key"), problem)


def check_tolerations(s: Sink, items, path: tuple) -> None:
    """core validateTolerations: a key is a label name (empty only with Exists); Exists takes no value;
    Equal's value a label value; tolerationSeconds only with NoExecute; operator and effect enums."""
    for i, item in enumerate(items if isinstance(items, list) else []):
        tp = path + (i,)
        if not isinstance(item, dict):
            continue
        key, operator, value, effect = (item.get("key"), item.get("operator"), item.get("value"),
                                        item.get("effect"))
        if key:
            problem = qualified_name_problem(str(key))
            if problem:
                s.invalid(tp + ("key",), key, problem)
        elif operator != "Exists":
            s.invalid(tp + ("operator",), operator, "operator must be Exists when `key` is empty, which means "
                      "\"match all values and all keys\"")
        if item.get("tolerationSeconds") is not None and effect != "NoExecute":
            s.invalid(tp + ("effect",), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set")
        if operator in (None, "", "Equal"):
            problem = label_value_problem(str(value or ""))
            if problem:
                s.invalid(tp + ("value",), value, problem)
        elif operator == "Exists":
            if value:
                s.invalid(tp + ("operator",), operator, "value must be empty when `operator` is 'Exists'")
        else:
            s.unsupported(tp + ("operator",), operator, ("Equal", "Exists"))
        if effect not in (None, "") and effect not in EFFECTS:
            s.unsupported(tp + ("effect",), effect, EFFECTS)


def check_affinity(s: Sink, affinity, path: tuple) -> None:
    """core validateAffinity -> validateNodeSelectorTerm's requirements (ValidateNodeSelectorRequirement):
    In/NotIn need values, Exists/DoesNotExist none, Gt/Lt one integer; values label values."""
    if not isinstance(affinity, dict):
        return
    node = affinity.get("nodeAffinity") or {}
    required = (node.get("requiredDuringSchedulingIgnoredDuringExecution") or {}) if isinstance(node, dict) else {}
    terms = [(path + ("nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms", i), t)
             for i, t in enumerate(required.get("nodeSelectorTerms") or [])]
    for i, pref in enumerate((node.get("preferredDuringSchedulingIgnoredDuringExecution") or [])
                             if isinstance(node, dict) else []):
        if isinstance(pref, dict):
            terms.append((path + ("nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", i,
                                  "preference"), pref.get("preference") or {}))
    if isinstance(node, dict) and isinstance(node.get("requiredDuringSchedulingIgnoredDuringExecution"), dict) \
            and not required.get("nodeSelectorTerms"):
        s.required(path + ("nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"),
                   "must have at least one node selector term")
    for tp, term in terms:
        for j, req in enumerate((term or {}).get("matchExpressions") or []):
            _node_requirement(s, req, tp + ("matchExpressions", j))
        for j, req in enumerate((term or {}).get("matchFields") or []):
            _node_field_requirement(s, req, tp + ("matchFields", j))
    for i, pref in enumerate((node.get("preferredDuringSchedulingIgnoredDuringExecution") or [])
                             if isinstance(node, dict) else []):
        weight = pref.get("weight") if isinstance(pref, dict) else None
        if not is_int(weight) or not 1 <= weight <= 100:  # validatePreferredSchedulingTerms
            s.invalid(path + ("nodeAffinity", "preferredDuringSchedulingIgnoredDuringExecution", i, "weight"), weight,
                      "must be in the range 1-100")
    for kind in ("podAffinity", "podAntiAffinity"):  # validatePodAffinity / validatePodAntiAffinity
        block = affinity.get(kind)
        if not isinstance(block, dict):
            continue
        kp = path + (kind,)
        for i, term in enumerate(block.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            _pod_affinity_term(s, term, kp + ("requiredDuringSchedulingIgnoredDuringExecution", i))
        for i, weighted in enumerate(block.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            wp = kp + ("preferredDuringSchedulingIgnoredDuringExecution", i)
            if not isinstance(weighted, dict):
                continue
            weight = weighted.get("weight")
            if not is_int(weight) or not 1 <= weight <= 100:  # validateWeightedPodAffinityTerms
                s.invalid(wp + ("weight",), weight, "must be in the range 1-100")
            _pod_affinity_term(s, weighted.get("podAffinityTerm") or {}, wp + ("podAffinityTerm",))


def _pod_affinity_term(s: Sink, term, path: tuple) -> None:
    """core validatePodAffinityTerm and validateMatchLabelKeysAndMismatchLabelKeys: a topologyKey; the label
    keys only with a labelSelector; a matchLabelKeys key refused where a matchExpression repeats a key the
    selector already has; no key in both matchLabelKeys and mismatchLabelKeys."""
    if not isinstance(term, dict):
        return
    key = term.get("topologyKey")
    if not key:
        s.required(path + ("topologyKey",), "can not be empty")
    else:
        problem = qualified_name_problem(str(key))
        if problem:
            s.invalid(path + ("topologyKey",), key, problem)
    for i, namespace in enumerate(term.get("namespaces") or []):
        problem = dns_label_problem(str(namespace))
        if problem:
            s.invalid(path + ("namespaces", i), namespace, problem)
    selector = term.get("labelSelector")
    label_selector(s, selector, path + ("labelSelector",))
    label_selector(s, term.get("namespaceSelector"), path + ("namespaceSelector",))
    match, mismatch = term.get("matchLabelKeys") or [], term.get("mismatchLabelKeys") or []
    for field, keys in (("matchLabelKeys", match), ("mismatchLabelKeys", mismatch)):
        if keys and selector is None:
            s.forbidden(path + (field,), "must not be specified when labelSelector is not set")
            continue
        for i, label in enumerate(keys):
            problem = qualified_name_problem(str(label))
            if problem:
                s.invalid(path + (field, i), label, problem)
    if isinstance(selector, dict):
        seen = set(selector.get("matchLabels") or {})
        for expression in selector.get("matchExpressions") or []:
            label = expression.get("key") if isinstance(expression, dict) else None
            if label in match and label in seen:
                s.invalid(path + (match.index(label),), label, "exists in both matchLabelKeys and labelSelector")
            seen.add(label)
    for i, label in enumerate(match):
        if label in mismatch:
            s.invalid(path + ("matchLabelKeys", i), label, "exists in both matchLabelKeys and mismatchLabelKeys")


def _node_field_requirement(s: Sink, req, path: tuple) -> None:
    """core validateNodeFieldSelectorRequirement: In or NotIn on metadata.name, with one value."""
    if not isinstance(req, dict):
        return
    op, values = req.get("operator"), req.get("values") or []
    if op not in ("In", "NotIn"):
        s.invalid(path + ("operator",), op, "not a valid selector operator")
    elif len(values) != 1:
        s.required(path + ("values",), "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                   "selector")
    if req.get("key") != "metadata.name":
        s.invalid(path + ("key",), req.get("key"), "not a valid field selector key")


def _node_requirement(s: Sink, req, path: tuple) -> None:
    """core ValidateNodeSelectorRequirement."""
    if not isinstance(req, dict):
        return
    op, values = req.get("operator"), req.get("values") or []
    if op not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
        s.invalid(path + ("operator",), op, "not a valid selector operator")
    if op in ("In", "NotIn") and not values:
        s.required(path + ("values",), "must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist") and values:
        s.forbidden(path + ("values",), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            s.required(path + ("values",), "must be specified single value when `operator` is 'Lt' or 'Gt'")
    for k, value in enumerate(values if op not in ("Gt", "Lt") else []):
        problem = label_value_problem(str(value))
        if problem:
            s.invalid(path + ("values", k), value, problem)
    key = req.get("key")
    problem = qualified_name_problem(str(key or ""))
    if problem:
        s.invalid(path + ("key",), key, problem)
