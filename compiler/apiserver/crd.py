"""Custom resources: the structural schema and `x-kubernetes-validations` of each operator's CRD
(k8s.io/apiextensions-apiserver: pkg/apiserver/validation ValidateCustomResource (kube-openapi's
validate package), pkg/apiserver/schema/listtype ValidateListSetsAndMaps, pkg/apiserver/schema/cel
Validator), and the core rules on the pod templates inside them (what the operator's pods meet).

The schemas are compiler/apiserver/crds/*.json (scripts/gen_crd_schemas.py), read only for a kind
that is written; the CEL library (common-expression-language) is imported only when a rule is
reached.  Transition rules (`oldSelf`) do not apply to a create and are skipped.
"""

from __future__ import annotations

import functools
import re

from .findings import Sink, field_path, go_value
from .pod import pod_template
from .schemas import core, schema

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}
# a core finding on a template inside a custom resource: the server takes the resource (it does not validate
# the template), the operator's pods are refused when it creates them
OPERATOR_PODS = "the operator's pods would be refused: "
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"




def check(s: Sink, doc: dict, metadata: bool = True) -> None:
    """A custom resource: its CRD's schema and rules, then (as warnings) the pod templates inside.
    `metadata`: its types too (ObjectMeta's), which a renderer's own objects have by construction."""
    root = schema(str(doc.get("apiVersion")), str(doc.get("kind")))
    if root is None:
        return
    rules: list[tuple[tuple, dict, object]] = []
    if metadata and "metadata" in doc:
        _metadata(s, doc["metadata"], ("metadata",))
    _walk(s, doc, root, (), rules, top=True)
    if rules:
        _cel(s, rules)
    _templates(s, doc, ())


# --- structural schema ------------------------------------------------------------------------------



def check_core(s: Sink, doc: dict) -> None:
    """A built-in kind's types and known fields (Kubernetes' OpenAPI definitions, strict: what the API server
    cannot decode, or kubectl's fieldValidation=Strict refuses as an unknown field)."""
    table = core()
    name = table["roots"].get(f"{doc.get('apiVersion')}/{doc.get('kind')}")
    if name is not None:
        _walk(s, doc, table["definitions"][name], (), [], top=True, defs=table["definitions"])


def decoded(doc: dict) -> dict:
    """A built-in kind's object as the server decodes it into its Go types before its rules run: a null list
    item is the item type's zero value (`containers: [null]` is a container with no name, which the rules then
    refuse; `{}` for an object, "" for a string, 0 for a number).  `doc` itself is not changed."""
    table = core()
    name = table["roots"].get(f"{doc.get('apiVersion')}/{doc.get('kind')}")
    return doc if name is None else _zeroed(doc, table["definitions"][name], table["definitions"])


_ZERO: dict = {"object": {}, "string": "", "integer": 0, "number": 0, "boolean": False}


def _zeroed(value, node: dict, defs: dict):
    """encoding/json into the kind's Go types (as the server's decoder runs it): a null list item is its zero."""
    while "$ref" in node:
        node = defs[node["$ref"]]
    if isinstance(value, dict):
        props, extra = node.get("properties") or {}, node.get("additionalProperties")
        return {k: _zeroed(v, props[k] if k in props else extra if isinstance(extra, dict) else {}, defs)
                for k, v in value.items()}
    if isinstance(value, list):
        items = node.get("items") or {}
        while "$ref" in items:
            items = defs[items["$ref"]]
        kinds = _types(items)[0]
        zero = _ZERO.get(kinds[0]) if kinds else None
        return [(dict(zero) if isinstance(zero, dict) else zero) if v is None and zero is not None
                else _zeroed(v, items, defs) for v in value]
    return value


def known(doc: dict) -> bool:
    """The API server here serves doc's apiVersion and kind: a built-in kind trainspec reads, or a custom
    resource whose CRD (at that version) trainspec knows."""
    api_version, kind = str(doc.get("apiVersion")), str(doc.get("kind"))
    return f"{api_version}/{kind}" in core()["roots"] or schema(api_version, kind) is not None


def check_document(s: Sink, value, node: dict) -> None:
    """A document that is no Kubernetes object (an OpenPAI config) against a schema written as a CRD's is:
    the same walk, so the same types, bounds and wording."""
    _walk(s, value, node, (), [])


def _metadata(s: Sink, meta, path: tuple) -> None:
    """Every object's metadata decodes as ObjectMeta (a custom resource's too: its schema says only `object`);
    a label of 1 is refused ("cannot unmarshal number into Go struct field ObjectMeta.labels of type string")."""
    defs = core()["definitions"]
    _walk(s, meta, defs[OBJECT_META], path, [], defs=defs)


def _types(node: dict) -> tuple[list[str], bool]:
    """(the JSON types a node allows, whether null is one): `type` as a name or a list, or a oneOf of types."""
    kinds = node.get("type")
    if kinds is None and node.get("oneOf"):
        kinds = [k for option in node["oneOf"] for k in _types(option)[0]] + \
            (["null"] if any(_types(option)[1] for option in node["oneOf"]) else [])
    if kinds is None:
        return [], True
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    return [k for k in kinds if k != "null"], "null" in kinds


def _walk(s: Sink, value, node: dict, path: tuple, rules: list, top: bool = False, defs: dict | None = None) -> None:
    """apiextensions ValidateCustomResource: one value against its schema node; CEL rules collected."""
    while "$ref" in node and defs is not None:
        node = defs[node["$ref"]]
    kinds, nullable = _types(node)
    if value is None:
        # a built-in kind's null decodes as the Go zero value (a nil list, an unset pointer): taken
        if defs is None and not (nullable or node.get("nullable")):
            s.invalid(path, "null", f"{field_path(path)} in body must be of type {'/'.join(kinds) or 'object'}")
        return
    if node.get("x-kubernetes-int-or-string"):
        kinds = ["integer", "string"]
    if kinds and not any(_is_type(value, kind) for kind in kinds):
        s.invalid(path, _type_of(value), f"{field_path(path)} in body must be of type {' or '.join(kinds)}")
        return
    if node.get("format") == "int32" and isinstance(value, int) and not -2**31 <= value < 2**31:
        s.invalid(path, value, f"{field_path(path)} in body must be a 32-bit integer")
        return
    if isinstance(value, dict) and defs is None:
        # a custom resource's null field is pruned before validation (and CEL) when its schema does not say
        # `nullable` (apiextensions structural pruning): unset, not "must be of type"
        props = node.get("properties") or {}
        value = {k: v for k, v in value.items()
                 if v is not None or _nullable(props.get(k, node.get("additionalProperties")))}
    for rule in node.get("x-kubernetes-validations") or ():
        if "oldSelf" not in rule["rule"]:
            rules.append((path, rule, value))
    if "enum" in node and value not in node["enum"]:
        s.unsupported(path, value, node["enum"])
    if isinstance(value, str):
        _string(s, value, node, path)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _number(s, value, node, path)
    elif isinstance(value, list):
        _array(s, value, node, path, rules, defs)
    elif isinstance(value, dict):
        _object(s, value, node, path, rules, top, defs)


def _nullable(node) -> bool:
    """apiextensions structural schema: a node that takes null says `nullable: true` (a node with no type,
    int-or-string or preserved, does not take it either: its null is pruned)."""
    return isinstance(node, dict) and bool(node.get("nullable"))


def _is_type(value, kind: str) -> bool:
    """kube-openapi validate type check (an integral float is an integer, as JSON decodes it)."""
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or isinstance(value, float) and \
            value.is_integer()
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, TYPES.get(kind, object))


def _type_of(value) -> str:
    """A value's JSON type name, as the server's messages give it."""
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array", str: "string", int: "integer", float: "number"}.get(type(value), "null")


def _string(s: Sink, value: str, node: dict, path: tuple) -> None:
    """kube-openapi validate: maxLength, minLength, pattern; a metav1.Time (format date-time) RFC 3339, or the
    decoder refuses it ("parsing time")."""
    where = field_path(path)
    if node.get("format") == "date-time" and value and not _rfc3339(value):
        s.invalid(path, value, f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00"')
    if "maxLength" in node and len(value) > node["maxLength"]:
        s.add(path, f"Too long: may not be more than {node['maxLength']} bytes")
    if "minLength" in node and len(value) < node["minLength"]:
        s.invalid(path, value, f"{where} in body should be at least {node['minLength']} chars long")
    if "pattern" in node and not _pattern(node["pattern"]).search(value):
        s.invalid(path, value, f"{where} in body should match '{node['pattern']}'")


def _rfc3339(text: str) -> bool:
    """time.RFC3339 as metav1.Time unmarshals it: a date, `T`, a time and a zone (Z or an offset)."""
    import datetime

    if not _RFC3339.match(text):
        return False
    try:
        datetime.datetime.fromisoformat(text.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return True


_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


@functools.cache
def _pattern(text: str):
    return re.compile(text)


def _number(s: Sink, value, node: dict, path: tuple) -> None:
    """kube-openapi validate: minimum, maximum (exclusive when the schema says so)."""
    where = field_path(path)
    if "minimum" in node and (value < node["minimum"] or node.get("exclusiveMinimum") and value == node["minimum"]):
        s.invalid(path, value, f"{where} in body should be greater than or equal to {node['minimum']}")
    if "maximum" in node and (value > node["maximum"] or node.get("exclusiveMaximum") and value == node["maximum"]):
        s.invalid(path, value, f"{where} in body should be less than or equal to {node['maximum']}")


def _array(s: Sink, value: list, node: dict, path: tuple, rules: list, defs: dict | None) -> None:
    """kube-openapi validate: maxItems, minItems, items; apiextensions listtype ValidateListSetsAndMaps."""
    if "maxItems" in node and len(value) > node["maxItems"]:
        s.too_many(path, len(value), node["maxItems"])
    if "minItems" in node and len(value) < node["minItems"]:
        s.invalid(path, len(value), f"{field_path(path)} in body should have at least {node['minItems']} items")
    items = node.get("items") or {}
    for i, item in enumerate(value):
        _walk(s, item, items, path + (i,), rules, defs=defs)
    while "$ref" in items and defs is not None:
        items = defs[items["$ref"]]
    kind = node.get("x-kubernetes-list-type")
    if kind == "map":  # listtype ValidateListSetsAndMaps: one item per key
        keys = node.get("x-kubernetes-list-map-keys") or ()
        seen: set[tuple] = set()
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                continue
            key = tuple(_key_value(item, k, items) for k in keys)
            if any(isinstance(part, (dict, list)) for part in key):
                continue  # a key of the wrong type: refused as such by the walk above
            if key in seen:
                s.duplicate(path + (i,), "map[string]interface {}{" + ", ".join(
                    f'"{k}":{go_value(v)}' for k, v in zip(keys, key)) + "}", raw=True)
            seen.add(key)
    elif kind == "set":
        seen_items: list = []
        for i, item in enumerate(value):
            if item in seen_items:
                s.duplicate(path + (i,), item)
            seen_items.append(item)


def _key_value(item: dict, key: str, items: dict):
    """A list-map key's value, its schema default where unset (a port's protocol defaults to TCP)."""
    if key in item:
        return item[key]
    return ((items.get("properties") or {}).get(key) or {}).get("default")


def _object(s: Sink, value: dict, node: dict, path: tuple, rules: list, top: bool, defs: dict | None) -> None:
    """kube-openapi validate: required, min/maxProperties, properties / additionalProperties; unknown fields."""
    extra = node.get("additionalProperties")
    props = node.get("properties")
    for name in node.get("required") or ():
        if name not in value:
            s.required(path + (name,))
    if "maxProperties" in node and len(value) > node["maxProperties"]:
        s.too_many(path, len(value), node["maxProperties"])
    if "minProperties" in node:
        # counted after pruning: an unknown field does not count (a `{a: 1}` spec has 0 properties)
        kept = len(value) if props is None or extra is not None or node.get("x-kubernetes-preserve-unknown-fields") \
            else sum(1 for name in value if name in props)
        if kept < node["minProperties"]:
            s.invalid(path, kept, f"{field_path(path)} in body should have at least {node['minProperties']} properties")
    for name, item in value.items():
        if top and name == "metadata" and defs is not None:
            _metadata(s, item, path + (name,))
        if top and name in ("apiVersion", "kind", "metadata"):
            continue
        if props is not None and name in props:
            _walk(s, item, props[name], path + (name,), rules, defs=defs)
        elif isinstance(extra, dict):
            _walk(s, item, extra, path + (name,), rules, defs=defs)
        elif props is not None and not node.get("x-kubernetes-preserve-unknown-fields") and extra is not True:
            # the API server's default fieldValidation (Warn): it drops an unknown field, with a warning
            s.warn(path + (name,), f'unknown field "{field_path(path + (name,))}": the API server drops it')


# --- CEL ------------------------------------------------------------------------------------------

def _cel(s: Sink, rules: list) -> None:
    """pkg/apiserver/schema/cel Validator: each rule with `self` the value it sits on; a false result is the
    rule's message (or "failed rule: <rule>")."""
    cel = _cel_engine()

    for path, rule, value in rules:
        try:
            ok = cel.evaluate(rule["rule"], {"self": value})
        except Exception as exc:  # noqa: BLE001 - the library raises its own types; a rule it cannot run is a refusal
            # the API server's runtime error ("no such key" on an absent optional field) refuses too
            s.invalid(path, _type_of(value), f"rule evaluation error: {exc}")
            continue
        if ok is not True:
            message = rule.get("message") or f"failed rule: {rule['rule']}"
            field = tuple(p for p in str(rule.get("fieldPath") or "").split(".") if p) or _subject(rule["rule"])
            s.invalid(path + field, _type_of(value), message)


def _cel_engine():
    """common-expression-language's compiled evaluator, only when a written object reaches a rule.  Loaded
    as its extension module `cel.cel`, without the package's __init__, which also imports its command line
    (typer, rich: dataclasses, inspect, decimal, ~25 ms) that the compile path never uses."""
    import sys

    loaded = sys.modules.get("cel.cel") or sys.modules.get("cel")
    if loaded is not None:
        return loaded
    import importlib.machinery
    import importlib.util
    import os

    package = importlib.util.find_spec("cel")  # finds the package without running its __init__
    for folder in (package.submodule_search_locations or []) if package else []:
        for name in sorted(os.listdir(folder)):
            if name.startswith("cel.") and name.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
                loader = importlib.machinery.ExtensionFileLoader("cel.cel", os.path.join(folder, name))
                spec = importlib.util.spec_from_loader("cel.cel", loader)
                if spec is not None:
                    module = importlib.util.module_from_spec(spec)
                    loader.exec_module(module)
                    sys.modules["cel.cel"] = module
                    return module
    import cel  # another build of the package: the whole of it

    return cel


_SELF_FIELDS = re.compile(r"self((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def _subject(rule: str) -> tuple:
    """The one field below `self` a rule reads, when it reads only one (`self.metadata.name.matches(...)`:
    metadata.name), so its refusal points there; () otherwise."""
    chains = {tuple(m.split(".")[1:]) for m in _SELF_FIELDS.findall(rule)}
    chains = {tuple(c for c in chain if c not in ("matches", "size", "all", "exists", "filter")) for chain in chains}
    return next(iter(chains)) if len(chains) == 1 else ()


# --- pod templates inside -----------------------------------------------------------------------------

def _templates(s: Sink, value, path: tuple) -> None:
    """Every pod template in a custom resource (`template: {spec: {containers: ...}}`), checked with the core
    rules: the operator creates pods from it, and the API server refuses those pods."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "template" and isinstance(item, dict) and isinstance(item.get("spec"), dict) \
                    and "containers" in item["spec"]:
                inner = Sink(s.version)
                pod_template(inner, item, path + (key,))
                s.warnings.extend((p, OPERATOR_PODS + m) for p, m in inner.items)
            else:
                _templates(s, item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _templates(s, item, path + (i,))
