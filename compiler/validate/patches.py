"""Spec v1.1 validation of `patches`: RFC 6902 operations per target, with their positions."""

from __future__ import annotations

from .. import fields as F
from ..model import PatchOp
from ..reader import Reader, type_name

PATCH_TARGETS, PATCH_OPS = F.PATCH_TARGETS, F.PATCH_OPS


def patches(v, value, path: tuple) -> dict[str, tuple[PatchOp, ...]]:
    r: Reader = v.r
    mapping = r.mapping(value, path, PATCH_TARGETS + ("helm",))
    out: dict[str, tuple[PatchOp, ...]] = {}
    for target, ops in (mapping or {}).items():
        tp = path + (target,)
        if target == "helm":
            r.error(tp, "the helm chart takes no patches", "one of " + ", ".join(PATCH_TARGETS),
                    "the chart renders the k8s objects; patch them under patches.k8s, or change values.yaml",
                    at_key=True)
            continue
        if target not in PATCH_TARGETS:
            continue
        if not isinstance(ops, list):
            r.error(tp, f"is {type_name(ops)}", "a list of JSON-patch operations",
                    "e.g. - {op: add, path: /spec/runPolicy/suspend, value: true}")
            continue
        found = []
        for i, item in enumerate(ops):
            op = _patch_op(r, item, tp + (i,))
            if op is not None:
                line, column = r.sink.position(tp + (i,))
                found.append(PatchOp(op, tp + (i,), line, column))
        out[target] = tuple(found)
    return out


def _patch_op(r: Reader, item, path: tuple) -> dict | None:
    body = r.mapping(item, path, F.MAPPINGS["patchOp"].names, required=F.MAPPINGS["patchOp"].required)
    if not body or body.get("op") is None or body.get("path") is None:
        return None
    op = r.choice(body["op"], path + ("op",), PATCH_OPS)
    pointers = ["path"] + (["from"] if op in ("move", "copy") else [])
    ok = op is not None
    for key in pointers:
        if key not in body:
            r.error(path, f"missing required field {key!r}", f"{key!r} for op {op}")
            ok = False
            continue
        text = r.string(body[key], path + (key,), non_empty=False)
        if text is None or (text and not text.startswith("/")):
            if text is not None:
                r.error(path + (key,), f"{text!r} is not a JSON pointer", "a path starting with /",
                        "e.g. /spec/template/spec/hostNetwork")
            ok = False
    if op in ("add", "replace", "test") and "value" not in body:
        r.error(path, "missing required field 'value'", f"a value for op {op}")
        ok = False
    return dict(body) if ok else None
