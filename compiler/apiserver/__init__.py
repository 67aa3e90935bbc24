"""The API server's validation of the objects a target writes, run on those objects themselves.

A target's render hands every object it writes (after `patches`, after its env merges) to
`check_objects`; each finding names the object, the field inside it (a JSON path) and the API
server's own message.  targets/written.py maps a finding back to the spec (a patch op's line for a
field a patch wrote, the spec field that fills it otherwise).

Modules, by the kinds of object validated (each rule cites its upstream function):
- findings.py  what a refusal holds and how it is worded (Finding, Sink, the server's field paths)
- meta.py   object metadata (apimachinery ValidateObjectMeta), shared by every kind's check
- pod.py    core pod templates and containers (pkg/apis/core/validation/validation.go ValidatePodSpec)
- core.py   Service, ConfigMap, Secret, Pod (the same file)
- batch.py  Job and Deployment specs (pkg/apis/batch/validation, pkg/apis/apps/validation)
- crd.py    the operators' custom resources: where their pod templates are, the list-map keys their
            structural schemas declare, and their x-kubernetes-validations rules (CEL, loaded lazily)

Nothing here is imported on the start-up path of a spec that is only validated: the renderers
import it when they write objects.
"""

from __future__ import annotations

from .findings import Finding, Sink


def check_objects(docs: list, version: tuple[int, int], touched: frozenset[int] | None = None) -> list[Finding]:
    """Every refusal the API server (and, for a custom resource, its operator's pods) would give.

    `touched`: the objects something other than the renderer wrote into (a patch); None: all of them.
    The built-in kinds' types and known fields (core.json) are checked on those only: the renderer writes
    typed data by construction (the spec's own types are checked at the spec), and loading the schema
    and walking it is most of a one-spec compile's share of these checks (bench/startup.py)."""
    from . import batch, core, crd, meta

    found: list[Finding] = []
    for index, doc in enumerate(docs):
        if not isinstance(doc, dict):
            continue
        kind, group = doc.get("kind"), str(doc.get("apiVersion") or "").rpartition("/")[0]
        sink = Sink(version)
        builtin = group in ("", "batch", "apps")
        if builtin and (touched is None or index in touched):
            crd.check_core(sink, doc)  # types and known fields first: the value rules read typed data
        if not sink.items:
            try:
                meta.metadata(sink, doc.get("metadata"), ("metadata",), namespaced=True)
                if builtin and kind in core.KINDS:
                    core.KINDS[kind](sink, doc)
                elif builtin and kind in batch.KINDS:
                    batch.KINDS[kind](sink, doc)
                elif not builtin:
                    crd.check(sink, doc)
            except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
                # a custom resource's schema let through a shape the core rules do not expect (its pod
                # template's schema is older or looser): the API server cannot decode such a pod either
                sink.add((), f"the object does not decode as its kind: {exc}")
        found.extend(Finding(index, path, message) for path, message in sink.items)
        found.extend(Finding(index, path, message, True) for path, message in sink.warnings)
    return found


__all__ = ["Finding", "check_objects"]
