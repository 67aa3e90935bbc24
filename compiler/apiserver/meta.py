"""Object metadata: apimachinery's api/validation ValidateObjectMeta (ValidateObjectMetaAccessor,
ValidateAnnotations) and meta/v1/validation ValidateLabels, which every kind's object and pod template
has; core.py, pod.py and the package's check_objects call it."""

from __future__ import annotations

from ..kube_rules import dns_label_problem, label_value_problem, qualified_name_problem
from .findings import Sink


def cached(check):
    """`check` (a pure function of hashable arguments) remembering its answers."""
    import functools

    return functools.lru_cache(maxsize=8192)(check)


# the same label keys, values and env names recur on every object of a job: each checked once
qualified_name_problem = cached(qualified_name_problem)
label_value_problem = cached(label_value_problem)

ANNOTATIONS_MAX = 256 * 1024  # apimachinery TotalAnnotationSizeLimitB


def object_name(s: Sink, doc: dict, check) -> None:
    """apimachinery ValidateObjectMeta: a name by the kind's own rule (`check(name) -> problem | None`), or a
    generateName prefix by the same rule with a trailing '-' masked (maskTrailingDash: the server appends the
    random part to it)."""
    meta = doc.get("metadata") or {}
    name, prefix = meta.get("name"), meta.get("generateName")
    if prefix and isinstance(prefix, str):
        problem = check(prefix[:-1] + "a" if len(prefix) > 1 and prefix.endswith("-") else prefix)
        if problem:
            s.invalid(("metadata", "generateName"), prefix, problem)
    if not name:
        if not prefix:
            s.required(("metadata", "name"), "name or generateName is required")
        return
    problem = check(str(name))
    if problem:
        s.invalid(("metadata", "name"), name, problem)


def metadata(s: Sink, meta, path: tuple, namespaced: bool) -> None:
    """apimachinery ValidateObjectMeta: the name (each kind's own rule), labels, annotations and their size,
    finalizer names, owner references' identity."""
    if not isinstance(meta, dict):
        return
    labels = meta.get("labels") or {}
    for key, value in labels.items() if isinstance(labels, dict) else ():  # metav1 ValidateLabels
        problem = qualified_name_problem(str(key))
        if problem:
            s.invalid(path + ("labels",), key, problem)
        problem = label_value_problem(str(value))
        if problem:
            s.invalid(path + ("labels",), value, problem)
    annotations = meta.get("annotations") or {}
    total = 0
    for key, value in annotations.items() if isinstance(annotations, dict) else ():  # ValidateAnnotations
        problem = qualified_name_problem(str(key).lower())
        if problem:
            s.invalid(path + ("annotations",), key, problem)
        total += len(str(key)) + len(str(value))
    if total > ANNOTATIONS_MAX:  # ValidateAnnotationsSize
        s.add(path + ("annotations",), f"Too long: may not be more than {ANNOTATIONS_MAX} bytes")
    finalizers = meta.get("finalizers") or []
    for value in finalizers if isinstance(finalizers, list) else ():  # ValidateObjectMeta: validateFinalizerName
        problem = qualified_name_problem(str(value or ""))
        if problem:
            s.invalid(path + ("finalizers",), value or "", problem)
    owners = meta.get("ownerReferences") or []
    for owner in owners if isinstance(owners, list) else ():  # validateOwnerReference
        owner = owner if isinstance(owner, dict) else {}
        for field, why in (("apiVersion", "version must not be empty"), ("kind", "must not be empty"),
                           ("name", "must not be empty"), ("uid", "must not be empty")):
            if not owner.get(field):
                s.invalid(path + ("ownerReferences", field), "", why)
    if namespaced and meta.get("namespace"):
        problem = dns_label_problem(str(meta["namespace"]))
        if problem:
            s.invalid(path + ("namespace",), meta["namespace"], problem)
