"""Spec v1.3 validation of spec.trainjob: the Kubeflow Trainer runtime the job runs on.

What Trainer's `trainer` field carries comes from the spec's own fields (image, command, args, env,
the replicas, resources); this block names the runtime and carries, as written, the TrainJob fields
trainspec does not decide (initializer, runtimePatches, suspend, managedBy, and Trainer v2.0/v2.1's
labels, annotations and podTemplateOverrides), checked for shape here and by the TrainJob CRD's
schema in the target's tests.
"""

from __future__ import annotations

import copy

from ..fields import MAPPINGS
from ..model import TrainJobOnRuntime
from ..reader import Reader
from .probes import opt_int

TRAINJOB = MAPPINGS["trainjob"]
RUNTIME = MAPPINGS["trainjobRuntime"]
INITIALIZER = MAPPINGS["trainjobInitializer"]
# TrainJob spec keys carried as written, in the TrainJob CRD's order (the trainjob target writes them so)
CARRIED = ("labels", "annotations", "podTemplateOverrides", "initializer", "runtimePatches", "suspend", "managedBy")


def _plain(value):
    """The value as plain data (the loader's own mapping types do not leave the validator)."""
    return copy.deepcopy(value)


def trainjob(r: Reader, value) -> TrainJobOnRuntime | None:
    if value is None:
        return None
    path = ("spec", "trainjob")
    body = r.mapping(value, path, TRAINJOB.names, required=TRAINJOB.required)
    if body is None:
        return None
    ref_path = path + ("runtime",)
    ref = r.mapping(body.get("runtime"), ref_path, RUNTIME.names, required=RUNTIME.required) or {}
    name = r.string(ref["name"], ref_path + ("name",)) if ref.get("name") is not None else None
    for key in ("kind", "apiGroup"):
        if ref.get(key) is not None:
            r.choice(ref[key], ref_path + (key,), RUNTIME.enum(key))
    fields: dict = {}
    if body.get("initializer") is not None:
        init = r.mapping(body["initializer"], path + ("initializer",), INITIALIZER.names)
        for key, step in (init or {}).items():
            if step is not None and not isinstance(step, dict):
                r.error(path + ("initializer", key), f"is {type(step).__name__}",
                        "a mapping: storageUri, env, secretRef")
        fields["initializer"] = _plain(body["initializer"])
    for key in ("runtimePatches", "podTemplateOverrides"):
        if body.get(key) is None:
            continue
        items = body[key]
        if not isinstance(items, list):
            r.error(path + (key,), f"is {type(items).__name__}", "a list of mappings")
            continue
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                r.error(path + (key, i), f"is {type(item).__name__}", "a mapping")
        fields[key] = _plain(items)
    if body.get("suspend") is not None:
        suspend = r.boolean(body["suspend"], path + ("suspend",))
        if suspend is not None:
            fields["suspend"] = suspend
    if body.get("managedBy") is not None:
        managed = r.choice(body["managedBy"], path + ("managedBy",), TRAINJOB.enum("managedBy"))
        if managed is not None:
            fields["managedBy"] = managed
    for key in ("labels", "annotations"):
        if body.get(key) is not None:
            items = body[key]
            if not isinstance(items, dict) or not all(isinstance(v, str) for v in items.values()):
                r.error(path + (key,), "is not a mapping of strings", "NAME: text")
                continue
            fields[key] = dict(items)
    nproc = opt_int(r, body, "numProcPerNode", path, *TRAINJOB.bounds("numProcPerNode"))
    from_runtime = r.boolean(body["numNodesFromRuntime"], path + ("numNodesFromRuntime",)) \
        if body.get("numNodesFromRuntime") is not None else False
    if name is None:
        return None
    out_ref = {k: v for k, v in ref.items() if k in RUNTIME.names and isinstance(v, str)}  # as written
    ordered = {k: fields[k] for k in CARRIED if k in fields}
    return TrainJobOnRuntime(out_ref, ordered, nproc, bool(from_runtime))
