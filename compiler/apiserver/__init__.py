"""The API server's validation of the objects a target writes, run on those objects themselves.

A target's render hands every object it writes (after `patches`, after its env merges) to
`check_objects`; each finding names the object, the field inside it (a JSON path) and the API
server's own message.  targets/written.py maps a finding back to the spec (a patch op's line for a
field a patch wrote, the spec field that fills it otherwise).

Modules, by the kinds of object validated (each rule cites its upstream function):
- pod.py    core pod templates and containers (pkg/apis/core/validation/validation.go ValidatePodSpec)
- core.py   object metadata, Service, ConfigMap, Secret (the same file)
- batch.py  Job and Deployment specs (pkg/apis/batch/validation, pkg/apis/apps/validation)
- crd.py    the operators' custom resources: where their pod templates are, the list-map keys their
            structural schemas declare, and their x-kubernetes-validations rules (CEL, loaded lazily)

Nothing here is imported on the start-up path of a spec that is only validated: the renderers
import it when they write objects.
"""

from __future__ import annotations

from typing import NamedTuple


def cached(check):
    """`check` (a pure function of hashable arguments) remembering its answers."""
    import functools

    return functools.lru_cache(maxsize=8192)(check)


class Finding(NamedTuple):
    """One refusal: object `doc` of the list written, `path` inside it, the API server's message; or, with
    `warning`, what the server takes but loses or cannot run: an unknown field it drops (its default
    fieldValidation, Warn), a pod template inside a custom resource whose pods the operator would have
    refused (the server does not validate the template itself)."""

    doc: int
    path: tuple
    message: str
    warning: bool = False


def check_objects(docs: list, version: tuple[int, int], touched: frozenset[int] | None = None) -> list[Finding]:
    """Every refusal the API server (and, for a custom resource, its operator's pods) would give.

    `touched`: the objects something other than the renderer wrote into (a patch); None: all of them.
    The built-in kinds' types and known fields (core.json) are checked on those only: the renderer writes
    typed data by construction (the spec's own types are checked at the spec), and loading the schema
    and walking it is most of a one-spec compile's share of these checks (bench/startup.py)."""
    from . import batch, core, crd

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
                core.metadata(sink, doc.get("metadata"), ("metadata",), namespaced=True)
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


class Sink:
    """Findings of one object: (path inside it, the server's message)."""

    __slots__ = ("items", "version", "warnings")

    def __init__(self, version: tuple[int, int]):
        self.version = version
        self.items: list[tuple[tuple, str]] = []
        self.warnings: list[tuple[tuple, str]] = []

    def warn(self, path: tuple, message: str) -> None:
        self.warnings.append((path, f"{field_path(path)}: {message}"))

    def add(self, path: tuple, message: str) -> None:
        self.items.append((path, f"{field_path(path)}: {message}"))

    def invalid(self, path: tuple, value, why: str) -> None:
        self.add(path, f"Invalid value: {_go(value)}: {why}")

    def required(self, path: tuple, why: str = "") -> None:
        self.add(path, "Required value" + (f": {why}" if why else ""))

    def unsupported(self, path: tuple, value, allowed) -> None:
        self.add(path, f"Unsupported value: {_go(value)}: supported values: "
                 + ", ".join(f'"{a}"' for a in allowed))

    def forbidden(self, path: tuple, why: str) -> None:
        self.add(path, f"Forbidden: {why}")

    def duplicate(self, path: tuple, value, raw: bool = False) -> None:
        self.add(path, f"Duplicate value: {value if raw else _go(value)}")

    def not_found(self, path: tuple, value) -> None:
        self.add(path, f"Not found: {_go(value)}")

    def too_many(self, path: tuple, count: int, most: int) -> None:
        self.add(path, f"Too many: {count}: must have at most {most} items")


def field_path(path: tuple) -> str:
    """The API server's form: spec.containers[0].ports[1].name (`<root>` for the object itself)."""
    if not path:
        return "<root>"
    out = ""
    for key in path:
        if isinstance(key, int):
            out += f"[{key}]"
        else:
            out += ("." if out else "") + str(key)
    return out


def _go(value) -> str:
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):  # Go's %#v of a []string, as the server prints a refused list
        return "[]string{" + ", ".join(_go(item) for item in value) + "}"
    return str(value)
