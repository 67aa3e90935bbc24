"""Job and Deployment: kubernetes pkg/apis/batch/validation/validation.go (ValidateJob, validateJobSpec,
validatePodFailurePolicy, validateSuccessPolicy) and pkg/apis/apps/validation (ValidateDeployment)."""

from __future__ import annotations

from ..kube_rules import JOB_SELECTOR_LABELS, subdomain_problem
from .findings import Sink
from .meta import object_name
from .pod import pod_template

COMPLETION_MODES = ("NonIndexed", "Indexed")
FAILURE_ACTIONS = ("FailJob", "FailIndex", "Ignore", "Count")
EXIT_OPERATORS = ("In", "NotIn")
MAX_FAILURE_RULES = 20  # maxPodFailurePolicyRules
MAX_EXIT_CODES = 255  # maxPodFailurePolicyOnExitCodesValues
MAX_SUCCESS_RULES = 20  # maxSuccessPolicyRule


def _name(s: Sink, doc: dict) -> None:
    """batch ValidateJob / apps ValidateDeployment: ValidateObjectMeta with a DNS-subdomain name."""
    object_name(s, doc, subdomain_problem)


def job(s: Sink, doc: dict) -> None:
    """batch ValidateJob -> validateJobSpec: counts non-negative, completions for Indexed, the pod's
    restartPolicy OnFailure or Never, podFailurePolicy only with Never, the generated selector's labels."""
    _name(s, doc)
    spec = doc.get("spec") or {}
    for field in ("parallelism", "completions", "backoffLimit", "ttlSecondsAfterFinished"):
        value = spec.get(field)
        if value is not None and (not isinstance(value, int) or value < 0):
            s.invalid(("spec", field), value, "must be greater than or equal to 0")
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and (not isinstance(deadline, int) or deadline <= 0):
        s.invalid(("spec", "activeDeadlineSeconds"), deadline, "must be greater than 0")
    mode = spec.get("completionMode")
    if mode is not None and mode not in COMPLETION_MODES:
        s.unsupported(("spec", "completionMode"), mode, COMPLETION_MODES)
    if mode == "Indexed" and spec.get("completions") is None:
        s.required(("spec", "completions"), "when completion mode is Indexed")
    per_index = spec.get("backoffLimitPerIndex")
    if per_index is not None and mode != "Indexed":
        s.invalid(("spec", "backoffLimitPerIndex"), per_index, "requires indexed completion mode")
    if spec.get("maxFailedIndexes") is not None and per_index is None:
        s.required(("spec", "backoffLimitPerIndex"), "when maxFailedIndexes is specified")
    template = spec.get("template") or {}
    pod = template.get("spec") or {} if isinstance(template, dict) else {}
    policy = pod.get("restartPolicy") if isinstance(pod, dict) else None
    if policy not in ("OnFailure", "Never"):
        s.unsupported(("spec", "template", "spec", "restartPolicy"), policy, ("OnFailure", "Never"))
    labels = ((template.get("metadata") or {}).get("labels") or {}) if isinstance(template, dict) else {}
    for key in JOB_SELECTOR_LABELS:  # validateGeneratedSelector: the controller's own values
        if key in labels:
            s.invalid(("spec", "template", "metadata", "labels"), key, "must not be set: the Job controller "
                      "sets it to the Job's name or uid")
    failure = spec.get("podFailurePolicy")
    if isinstance(failure, dict):
        if policy != "Never":
            s.invalid(("spec", "podFailurePolicy"), "", "only allowed when restartPolicy is Never")
        _pod_failure_policy(s, failure, pod, spec)
    success = spec.get("successPolicy")
    if isinstance(success, dict):
        _success_policy(s, success, spec)
    pod_template(s, template, ("spec", "template"))


def _pod_failure_policy(s: Sink, policy: dict, pod: dict, spec: dict) -> None:
    """batch validatePodFailurePolicy / validatePodFailurePolicyRuleOnExitCodes; FailIndex only with
    backoffLimitPerIndex."""
    rules = policy.get("rules") or []
    if len(rules) > MAX_FAILURE_RULES:
        s.too_many(("spec", "podFailurePolicy", "rules"), len(rules), MAX_FAILURE_RULES)
    containers = {c.get("name") for f in ("containers", "initContainers") for c in pod.get(f) or []
                  if isinstance(c, dict)}
    for i, rule in enumerate(rules):
        rp = ("spec", "podFailurePolicy", "rules", i)
        if not isinstance(rule, dict):
            continue
        action = rule.get("action")
        if action not in FAILURE_ACTIONS:
            s.unsupported(rp + ("action",), action, FAILURE_ACTIONS)
        elif action == "FailIndex" and spec.get("backoffLimitPerIndex") is None:
            s.invalid(rp + ("action",), action, "requires the backoffLimitPerIndex to be set")
        on = rule.get("onExitCodes")
        if (on is None) == (rule.get("onPodConditions") is None):
            s.invalid(rp, "", "specifying one of onExitCodes and onPodConditions is required")
        if isinstance(on, dict):
            name = on.get("containerName")
            if name is not None and name not in containers:
                s.invalid(rp + ("onExitCodes", "containerName"), name, "must be one of the container or "
                          "initContainer names in the pod template")
            if on.get("operator") not in EXIT_OPERATORS:
                s.unsupported(rp + ("onExitCodes", "operator"), on.get("operator"), EXIT_OPERATORS)
            values = on.get("values") or []
            if not values:
                s.invalid(rp + ("onExitCodes", "values"), "", "at least one value is required")
            if len(values) > MAX_EXIT_CODES:
                s.too_many(rp + ("onExitCodes", "values"), len(values), MAX_EXIT_CODES)
            last = None
            for j, value in enumerate(values):
                if on.get("operator") == "In" and value == 0:
                    s.invalid(rp + ("onExitCodes", "values", j), value, "must not be 0 for the In operator")
                if last is not None and value <= last:
                    s.invalid(rp + ("onExitCodes", "values", j), value, "must be ordered")
                last = value


def _success_policy(s: Sink, policy: dict, spec: dict) -> None:
    """batch validateSuccessPolicy: only for Indexed Jobs; each rule succeededIndexes or succeededCount."""
    path = ("spec", "successPolicy")
    if spec.get("completionMode") != "Indexed":
        s.invalid(path, "", "requires indexed completion mode")
    rules = policy.get("rules") or []
    if not rules:
        s.required(path + ("rules",), "at least one rules must be specified when the successPolicy is specified")
    if len(rules) > MAX_SUCCESS_RULES:
        s.too_many(path + ("rules",), len(rules), MAX_SUCCESS_RULES)
    completions = spec.get("completions")
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        count, indexes = rule.get("succeededCount"), rule.get("succeededIndexes")
        if count is None and indexes is None:
            s.required(path + ("rules", i), "at least one of succeededCount or succeededIndexes must be specified")
        total = None
        if isinstance(indexes, str):
            total, problem = _index_count(indexes, completions)
            if problem:
                s.invalid(path + ("rules", i, "succeededIndexes"), indexes, f"error parsing succeededIndexes: "
                          f"{problem}")
        if count is not None and (not isinstance(count, int) or count < 0):
            s.invalid(path + ("rules", i, "succeededCount"), count, "must be greater than or equal to 0")
        elif count is not None and total is not None and count > total:
            s.invalid(path + ("rules", i, "succeededCount"), count, f"must be less than or equal to {total} "
                      "(the number of indexes in the specified succeededIndexes field)")
        elif count is not None and isinstance(completions, int) and count > completions:
            s.invalid(path + ("rules", i, "succeededCount"), count, f"must be less than or equal to {completions} "
                      "(the number of specified completions)")


def _index_count(text: str, completions) -> tuple[int | None, str]:
    """batch validateIndexesFormat: "0,2-3" -> (3, ""): intervals in increasing order, each below completions;
    (None, why) when it does not parse."""
    total, last = 0, -1
    for part in text.split(","):
        low, _, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            return None, f"cannot convert string to integer for index: {part!r}"
        first, end = int(low), int(high) if high else int(low)
        if end < first:
            return None, f"non-increasing order, previous: {first}, current: {end}"
        if first <= last:
            return None, f"overlapping indexes, previous: {last}, current: {first}"
        if isinstance(completions, int) and end >= completions:
            return None, f"too large: {end}"
        total += end - first + 1
        last = end
    return total, ""


def deployment(s: Sink, doc: dict) -> None:
    """apps ValidateDeployment: replicas non-negative; the pod's restartPolicy Always."""
    _name(s, doc)
    spec = doc.get("spec") or {}
    replicas = spec.get("replicas")
    if replicas is not None and (not isinstance(replicas, int) or replicas < 0):
        s.invalid(("spec", "replicas"), replicas, "must be greater than or equal to 0")
    template = spec.get("template") or {}
    policy = (template.get("spec") or {}).get("restartPolicy") if isinstance(template, dict) else None
    if policy not in (None, "Always"):
        s.unsupported(("spec", "template", "spec", "restartPolicy"), policy, ("Always",))
    pod_template(s, template, ("spec", "template"))


KINDS = {"Job": job, "Deployment": deployment}
