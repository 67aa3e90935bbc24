"""Spec v1 validation of the job's scheduling: gang, minAvailable, queue, priority class, scheduler."""

from __future__ import annotations

from ..fields import MAPPINGS
from ..kube_rules import subdomain_problem
from ..model import Scheduling
from ..reader import Reader
from .probes import opt_int

SCHEDULING = MAPPINGS["scheduling"]
SCHEDULING_FIELDS = SCHEDULING.names


def scheduling(r: Reader, value, total: int) -> Scheduling:
    path = ("spec", "scheduling")
    body = r.mapping(value, path, SCHEDULING_FIELDS) or {}
    gang = r.boolean(body["gang"], path + ("gang",)) if body.get("gang") is not None else False
    min_available = opt_int(r, body, "minAvailable", path, *SCHEDULING.bounds("minAvailable"))
    if min_available is not None and total and min_available > total:
        r.error(path + ("minAvailable",), f"{min_available} is more than the job's {total} replicas",
                f"an integer <= {total}")
    names = {}
    for key in ("queue", "priorityClassName", "schedulerName"):
        text = r.string(body[key], path + (key,)) if body.get(key) is not None else None
        # The pod's schedulerName is any string to the API server (`Volcano` is fine; the Volcano Job's
        # 63-character limit is the volcano target's, targets/volcano); queue and priorityClassName
        # name objects: DNS-1123 subdomains (kube_rules: scheduling-names).
        problem = subdomain_problem(text) if text is not None and key != "schedulerName" else None
        if problem:
            r.error(path + (key,), f"{text!r} is not a valid {key}: {problem}",
                    "a DNS-1123 subdomain of at most 253 characters")
            text = None
        names[key] = text
    return Scheduling(gang=bool(gang), min_available=min_available, queue=names["queue"],
                      priority_class_name=names["priorityClassName"], scheduler_name=names["schedulerName"])
