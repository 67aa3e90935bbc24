"""The spec's JSON Schema (draft 2020-12), written from the field table (compiler/fields.py).

For editors (the YAML language server, VS Code): completion, descriptions and
red underlines while typing.  The validator stays the authority: rules that need
the whole job (replica counts, name lengths, reserved label prefixes) are only
there, so the schema accepts some specs `trainspec validate` refuses.  The one
way it is stricter: a key with no value (`image:`, null) is underlined, where the
validator reads it as absent.  Imported by `trainspec schema` only.
"""

from __future__ import annotations

import json

from .fields import FRAMEWORK_BLOCKS, MAPPINGS, Field, Mapping
from .kube import DNS1123_LABEL, ENV_NAME, QUANTITY_SCHEMA
from .model import GENERIC, NPROC_WORDS, ROLE_ORDER

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _ref(name: str) -> dict:
    return {"$ref": f"#/$defs/{name}"}


def _scalar(field: Field, kind: str) -> dict:
    """The schema of one value of scalar type `kind` with the field's constraints."""
    if kind == "string":
        out: dict = {"type": "string"}
        if field.enum:
            return {"enum": list(field.enum)}
        if not field.empty:
            out["minLength"] = 1
        if field.max_length is not None:
            out["maxLength"] = field.max_length
        if field.pattern:
            out["pattern"] = field.pattern
        return out
    if kind == "integer":
        out = {"type": "integer"}
        if field.minimum is not None:
            out["minimum"] = field.minimum
        if field.maximum is not None:
            out["maximum"] = field.maximum
        return out
    if kind == "boolean":
        return {"type": "boolean"}
    if kind == "quantity":
        return {"anyOf": [{"type": "string", "pattern": QUANTITY_SCHEMA}, {"type": "number", "minimum": 0}]}
    if kind == "port":
        return {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 65535},
                          {"type": "string", "pattern": "^[a-z]([-a-z0-9]*[a-z0-9])?$", "maxLength": 15}]}
    if kind == "nproc":
        return {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 1024}, {"enum": list(NPROC_WORDS)},
                          {"type": "string", "pattern": "^[0-9]*[1-9][0-9]*$"}]}
    if kind == "any":  # any JSON value (a patch's value)
        return {}
    if kind == "object":  # any mapping, passed through (e.g. a Kubernetes affinity)
        return {"type": "object"}
    if kind == "strings":
        return {"type": "array", "items": {"type": "string"}}
    if kind == "env":
        return _ref("env")
    if kind == "roles":
        return _ref("roles")
    if kind in MAPPINGS:
        return _ref(kind)
    raise ValueError(f"field {field.name!r}: unknown type {kind!r}")


def field_schema(field: Field) -> dict:
    if field.type == "object":
        out = _ref(field.of) if field.of else {"type": "object"}
    elif field.type == "list":
        out = {"type": "array", "items": _scalar(field, field.of)}
    elif field.type == "map":
        out = {"type": "object", "additionalProperties": _scalar(field, field.of)}
        if field.keys:
            out["propertyNames"] = {"pattern": field.keys}
    else:
        out = _scalar(field, field.type)
    if field.doc:
        out = {"description": field.doc, **out}
    return out


def mapping_schema(mapping: Mapping) -> dict:
    out: dict = {"type": "object", "description": mapping.doc,
                 "properties": {f.name: field_schema(f) for f in mapping.fields},
                 "additionalProperties": False}
    if mapping.required:
        out["required"] = list(mapping.required)
    if mapping.exactly_one:
        out["oneOf"] = [{"required": [name]} for name in mapping.exactly_one]
    return out


def _roles() -> dict:
    # any DNS-1123 label (framework: generic); the other frameworks' names in _per_framework
    return {"type": "object", "description": "role name -> role; which names depends on spec.framework",
            "propertyNames": {"pattern": DNS1123_LABEL.pattern, "maxLength": 63},
            "additionalProperties": _ref("role"), "minProperties": 1}


def _per_framework() -> list[dict]:
    """Each framework's role names, and no other framework's options block."""
    out = []
    for framework, roles in ROLE_ORDER.items():
        others: dict = {block: False for block in FRAMEWORK_BLOCKS if block != framework}
        if framework != GENERIC:
            others = {"roles": {"propertyNames": {"enum": list(roles)}}, **others, "success": False}
        out.append({"if": {"properties": {"framework": {"const": framework}}, "required": ["framework"]},
                    "then": {"properties": others}})
    return out


def _env() -> dict:
    return {"type": "object", "description": "NAME: value (a string; quote numbers and booleans), or a reference",
            "propertyNames": {"pattern": ENV_NAME.pattern, "not": {"pattern": "^TRAINSPEC_"}},
            "additionalProperties": {"anyOf": [{"type": "string"}, _ref("envRef")]}}


def json_schema() -> dict:
    defs = {name: mapping_schema(mapping) for name, mapping in MAPPINGS.items() if name != "TrainingJob"}
    defs["spec"]["allOf"] = _per_framework()
    defs["roles"] = _roles()
    defs["env"] = _env()
    top = mapping_schema(MAPPINGS["TrainingJob"])
    return {"$schema": DIALECT, "title": "trainspec TrainingJob", **top,
            "$defs": dict(sorted(defs.items()))}


def schema_text() -> str:
    """The schema as written to schema/trainspec.schema.json (stable bytes)."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
