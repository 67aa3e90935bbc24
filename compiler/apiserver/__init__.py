"""The API server's validation of the objects a target writes, run on those objects themselves.

A target's render hands every object it writes (after `patches`, after its env merges) to
`check_objects`; each finding names the object, the field inside it (a JSON path) and the API
server's own message.  targets/written.py maps a finding back to the spec (a patch op's line for a
field a patch wrote, the spec field that fills it otherwise).

Modules, by the kinds of object validated (each rule cites its upstream function):
- findings.py  what a refusal holds and how it is worded (Finding, Sink, the server's field paths)
- meta.py   object metadata (apimachinery ValidateObjectMeta), shared by every kind's check
- pod.py    core pod templates (pkg/apis/core/validation/validation.go ValidatePodSpec), with
            volumes.py (ValidateVolumes), containers.py (validateContainers), security.py (the
            security contexts), scheduling.py (spread, tolerations, affinity, label selectors) and
            values.py (the helpers they share)
- schemas.py  the schema tables (crds/core.json, each CRD's), loaded when first asked for
- core.py   Service, ConfigMap, Secret, Pod (the same file)
- batch.py  Job and Deployment specs (pkg/apis/batch/validation, pkg/apis/apps/validation)
- crd.py    the operators' custom resources: where their pod templates are, the list-map keys their
            structural schemas declare, and their x-kubernetes-validations rules (CEL, loaded lazily)

`refusals` runs the same checks on one object trainspec did not write: the manifest `import` reads and every
object `trainspec run` reads (a kind's shape is its OpenAPI definition in crds/core.json or its CRD's
schema, crds/<group>_<version>_<Kind>.json, named by the kind's identity in compiler/kinds): one checker of
objects, read or written.

Nothing here is imported on the start-up path of a spec that is only validated: the renderers
import it when they write objects.
"""

from __future__ import annotations

from .findings import Finding, Sink, field_path


def check_objects(docs: list, version: tuple[int, int], touched: frozenset[int] | None = None) -> list[Finding]:
    """Every refusal the API server (and, for a custom resource, its operator's pods) would give.

    `touched`: the objects something other than the renderer wrote into (a patch); None: all of them.
    The built-in kinds' types and known fields (core.json) are checked on those only: the renderer writes
    typed data by construction (the spec's own types are checked at the spec), and loading the schema
    and walking it is most of a one-spec compile's share of these checks (bench/startup.py)."""
    from ..kube_rules import subdomain_problem
    from . import batch, core, crd, meta, schemas

    found: list[Finding] = []
    for index, doc in enumerate(docs):
        if not isinstance(doc, dict):
            continue
        kind, group = doc.get("kind"), str(doc.get("apiVersion") or "").rpartition("/")[0]
        sink = Sink(version)
        builtin = group in ("", "batch", "apps")
        typed = touched is None or index in touched
        if builtin and typed:
            crd.check_core(sink, doc)  # types and known fields first: the value rules read typed data
            doc = crd.decoded(doc)
        if not sink.items:
            try:
                meta.metadata(sink, doc.get("metadata"), ("metadata",), namespaced=True)
                if builtin and kind in core.KINDS:
                    core.KINDS[kind](sink, doc)
                elif builtin and kind in batch.KINDS:
                    batch.KINDS[kind](sink, doc)
                elif not builtin:
                    if schemas.schema(str(doc.get("apiVersion")), str(kind)) is not None:
                        # apiextensions customResourceStrategy: ValidateObjectMetaAccessor, NameIsDNSSubdomain
                        meta.object_name(sink, doc, subdomain_problem)
                    crd.check(sink, doc, metadata=typed)
            except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
                # a custom resource's schema let through a shape the core rules do not expect (its pod
                # template's schema is older or looser): the API server cannot decode such a pod either
                sink.add((), f"the object does not decode as its kind: {exc}")
        found.extend(Finding(index, path, message) for path, message in sink.items)
        found.extend(Finding(index, path, message, True) for path, message in sink.warnings)
    return found


def refusals(doc: dict, schema: dict | None = None, version: tuple[int, int] | None = None,
             pods: bool = False) -> list[tuple[tuple, str]]:
    """What the API server refuses of one object trainspec did not write (a manifest to import or run), as
    (path inside it, the server's message): every field's type, then every rule (check_objects, all typed).

    `schema`: a document that is no Kubernetes object (an OpenPAI config), walked against it instead.
    `pods`: a custom resource's pod templates too, which the server takes but whose pods the operator cannot
    create (the emulator runs those pods).  The operator's mutating webhook's defaults come first, as on a
    cluster (compiler/kinds `admitted`: a JobSet's failure rule gets its name).  A kind of the registry at a
    version no CRD here serves is refused as kubectl refuses it; any other kind trainspec does not know is
    not checked (it is not read either)."""
    from ..kinds import admitted, entry_of, kinds
    from ..kube_rules import KUBE_VERSIONS, parse_version
    from . import crd

    if schema is not None:
        sink = Sink(version or parse_version(KUBE_VERSIONS[-1]))
        crd.check_document(sink, doc, schema)
        return [(path, _unprefixed(path, message)) for path, message in sink.items]
    if not crd.known(doc):
        entry = entry_of(doc)
        if entry is None:
            return []
        served = [k.api_version for k in kinds(entry) if k.kind == doc.get("kind")]
        if served and served[0] == doc.get("apiVersion"):
            return []  # a kind of the registry whose schema is not here: read, not checked
        return [(("apiVersion",), f'no matches for kind "{doc.get("kind")}" in version "{doc.get("apiVersion")}"'
                 + (f" (its CRD serves {served[0]})" if served else ""))]
    found = check_objects([admitted(doc)], version or parse_version(KUBE_VERSIONS[-1]))
    return [(f.path, _unprefixed(f.path, f.message)) for f in found
            if not f.warning or pods and f.message.startswith(crd.OPERATOR_PODS)]


def _unprefixed(path: tuple, message: str) -> str:
    """The server's message without its leading field path (a refusal is shown at that path already)."""
    head = field_path(path) + ": "
    return message[len(head):] if message.startswith(head) else message


__all__ = ["Finding", "check_objects", "refusals"]
