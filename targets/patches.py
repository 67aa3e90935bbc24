"""spec.patches: RFC 6902 JSON patches applied to a target's output, after it is compiled.

What a patch addresses: for the operator targets (kubeflow, volcano, jobset, trainjob)
the job's custom resource, the last object of the file; for `compose` the compose
document; for `k8s` the whole file as a list of objects in file order (`/0` is the
topology ConfigMap, then each replica's Service and workload).  A patch that does not
apply is a spec error at the op's own line and column (the planner kept them).
"""

from __future__ import annotations

from trainspec.compiler.errors import SpecError, SpecErrors
from trainspec.compiler.limits import MAX_PATCH_BYTES, text_bytes
from trainspec.compiler.plan import JobPlan


def apply(plan: JobPlan, target: str, docs, whole_file: bool = False):
    """`docs` (a list of objects, or one document) with the spec's patches for `target` applied: to the last
    object (the job's), or with `whole_file` to the list of objects itself."""
    ops = plan.patches.get(target)
    if not ops:
        return docs
    import jsonpatch  # only specs with patches pay for the import
    import jsonpointer

    whole = whole_file or not isinstance(docs, list)
    doc = docs if whole else docs[-1]
    where = "the file's objects" if whole and isinstance(docs, list) else \
        ("the compose document" if whole else "the job object")
    added = 0  # bytes the ops add, checked before each is applied: a `copy` into itself doubles the document
    for op in ops:
        name = f"{op.op.get('op')} {op.op.get('path')}"
        try:
            added += _adds(doc, op.op, jsonpointer)
            if added > MAX_PATCH_BYTES:
                raise _error(plan, target, op, f"patch op '{name}' would make the patches add over "
                             f"{MAX_PATCH_BYTES} bytes to {where} (compiler/limits.py MAX_PATCH_BYTES)",
                             hint="a patch adds what no field covers; a `copy` of a value into itself doubles it")
            doc = jsonpatch.apply_patch(doc, [op.op])
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError, ValueError,
                KeyError, IndexError) as exc:
            raise _error(plan, target, op, f"patch op '{name}' does not apply to {where}: {exc}") from None
        objects = doc if whole and isinstance(docs, list) else [doc]
        if not isinstance(objects, list) or not all(isinstance(item, dict) for item in objects):
            raise _error(plan, target, op, f"patch op '{name}' leaves {where} without "
                         f"{'a list of objects' if whole and isinstance(docs, list) else 'a mapping'}")
    if whole:
        return doc
    return list(docs[:-1]) + [doc]


def check(plan: JobPlan) -> list[SpecError]:
    """`trainspec validate`: render each target the spec patches and return the ops that do not apply."""
    from . import available, render

    found: list[SpecError] = []
    for target in plan.patches:
        if plan.patches[target] and target in available():
            try:
                render(target, plan)
            except SpecErrors as exc:
                found.extend(exc.errors)
    return found


def _adds(doc, op: dict, jsonpointer) -> int:
    """About how many bytes `op` adds, counted without making it (`copy`: the value at `from`)."""
    kind = op.get("op")
    if kind in ("add", "replace"):
        return text_bytes(op.get("value"), MAX_PATCH_BYTES + 1)
    if kind == "copy":
        return text_bytes(jsonpointer.resolve_pointer(doc, op.get("from")), MAX_PATCH_BYTES + 1)
    return 0


def _error(plan: JobPlan, target: str, op, message: str, hint: str = "") -> SpecErrors:
    return SpecErrors([SpecError(plan.source, op.line, op.column, _dotted(op.path), f"target {target}: {message}",
                                 "an operation that applies to the compiled output",
                                 hint or f"compile with --target {target} to see it")])


def _dotted(path: tuple) -> str:
    from trainspec.compiler.errors import dotted

    return dotted(path)
