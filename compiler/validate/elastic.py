"""Spec v1.1 validation of pytorch.elastic: its bounds, and that they admit the workers."""

from __future__ import annotations

from .. import fields as F
from ..model import Elastic
from ..reader import Reader

ELASTIC_FIELDS = F.MAPPINGS["elastic"].names


def elastic(v, value, path: tuple) -> Elastic | None:
    r: Reader = v.r
    body = r.mapping(value, path, ELASTIC_FIELDS)
    if not body:
        return None if body is None else Elastic()
    table = F.MAPPINGS["elastic"]
    low = v.opt_int(body, "minReplicas", path, *table.bounds("minReplicas"))
    high = v.opt_int(body, "maxReplicas", path, *table.bounds("maxReplicas"))
    if low is not None and high is not None and low > high:
        r.error(path + ("maxReplicas",), f"maxReplicas {high} is less than minReplicas {low}",
                f"an integer >= {low}")
    backend = v.opt_choice(body, "rdzvBackend", path, table.enum("rdzvBackend")) or "c10d"
    return Elastic(min_replicas=low, max_replicas=high, rdzv_backend=backend,
                   rdzv_port=v.opt_int(body, "rdzvPort", path, *table.bounds("rdzvPort")),
                   max_restarts=v.opt_int(body, "maxRestarts", path, *table.bounds("maxRestarts")))


def elastic_rules(r: Reader, elastic: Elastic, workers: int) -> None:
    path = ("spec", "pytorch", "elastic")
    for key, bound in (("minReplicas", elastic.min_replicas), ("maxReplicas", elastic.max_replicas)):
        if bound is not None and (workers < bound if key == "minReplicas" else workers > bound):
            r.error(path + (key,), f"{key} {bound} does not admit the {workers} worker replicas",
                    "minReplicas <= roles.worker.replicas <= maxReplicas")
