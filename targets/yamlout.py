"""One YAML writer for every target: block style, stable order, no anchors, no tags.

Manifests are plain maps, lists, strings, ints and bools, and PyYAML's emitter
is most of a compile's time (see PEER-BENCHMARKS.md).  So the structure is
written here directly, and only the style of each distinct scalar is asked of
PyYAML, once, and remembered: the output is byte-for-byte what
`yaml.dump_all(..., Dumper=CSafeDumper)` writes with the settings below (a test
holds the two equal), several times faster.
"""

from __future__ import annotations

import re
from typing import Any

from ..compiler.limits import MAX_OUTPUT_BYTES, BoundExceeded
from ..compiler.pyyaml import yaml

_BASE = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_WIDTH = 1 << 30


_LINE_ENDS = "\n\x85\u2028\u2029"


class FlowList(list):
    """A short list of scalars written on one line (e.g. exit-code sets)."""


class _Dumper(_BASE):  # type: ignore[misc, valid-type]
    def ignore_aliases(self, data):  # shared dicts must be written out, never as &anchors
        return True


def _represent_str(dumper, data: str):
    if "\n" in data:
        if data[-1] in _LINE_ENDS and (len(data) == 1 or data[-2] in _LINE_ENDS):
            # A literal block would need keep chomping (`|+`), which leaves the document open-ended:
            # PyYAML ends it with `...`, and text appended after it (the helm values file is written
            # in sections) would either end the document there or add blank lines to the value.
            return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


def _represent_flow(dumper, data):
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=True)


# Kubernetes (sigs.k8s.io/yaml: go-yaml v2), Helm and Compose (go-yaml v3, YAML 1.2) read more
# plain scalars as numbers and booleans than PyYAML's YAML 1.1 resolver does: `y`/`n`, `1e3`,
# `08`, `0o17`, `0b1`, `0X1F`, `1_000`...  A string that any of them would retype must be quoted,
# so the writer's resolver knows those forms too (it only decides quoting; nothing is read with it).
_GO_BOOL = re.compile(r"^(?:y|Y|n|N)$")
_GO_INT = re.compile(r"^[-+]?(?:0[oObBxX][0-9a-fA-F_]*|[0-9][0-9_]*)$")
_GO_FLOAT = re.compile(r"^[-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9_]+)?$"
                       r"|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$")
_Dumper.add_implicit_resolver("tag:yaml.org,2002:bool", _GO_BOOL, list("yYnN"))
_Dumper.add_implicit_resolver("tag:yaml.org,2002:int", _GO_INT, list("-+0123456789"))
_Dumper.add_implicit_resolver("tag:yaml.org,2002:float", _GO_FLOAT, list("-+0123456789."))

_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(FlowList, _represent_flow)

_OPTIONS: dict[str, Any] = {"Dumper": _Dumper, "sort_keys": False, "default_flow_style": False,
                           "allow_unicode": True, "width": _WIDTH}


def reference_dump_all(documents: list) -> str:
    """PyYAML's own rendering: the definition the fast writer must match."""
    return yaml.dump_all(documents, explicit_start=True, **_OPTIONS)


# --- the fast writer ---------------------------------------------------------------

_value_cache: dict[object, str | tuple[str, list[str]]] = {}
_key_cache: dict[str, str] = {}

# Strings PyYAML certainly writes plain: identifier-like, not starting with an
# indicator, and not one of YAML 1.1's bool/null words (which it must quote).
_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*\Z")
_RESOLVED_WORDS = {"y", "Y", "n", "N", "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE",
                   "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL"}
# JSON text (TF_CONFIG): starts with a flow indicator, so never plain; printable ASCII
# without quotes or edge spaces is written single-quoted as it is.
_SINGLE_QUOTABLE = re.compile(r"[{\[][\x20-\x26\x28-\x7e]*[\x21-\x26\x28-\x7e]\Z")


_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")


class _Fallback(Exception):
    """A shape only PyYAML's emitter knows how to lay out (complex keys, folded or open-ended scalars)."""


def _scalar(value) -> str | tuple[str, list[str]]:
    """A scalar as a block value: one line of text, or (block header, content lines) for a literal."""
    kind = type(value)
    if kind is str:
        if _PLAIN.match(value) and value not in _RESOLVED_WORDS:
            return value
        if _SINGLE_QUOTABLE.match(value):
            return "'" + value + "'"
    elif kind is int:
        return str(value)
    key = (kind, value)
    cached = _value_cache.get(key)
    if cached is None:
        text = yaml.dump([value], **_OPTIONS)  # "- <scalar>\n", or "- |\n  line\n..." for a literal block
        if not text.endswith("\n") or any(b in text for b in _BREAKS[1:]):
            raise _Fallback  # unicode line separators: layout depends on context
        lines = text[:-1].split("\n")
        if len(lines) > 1 and (lines[-1] == "..." or lines[0].endswith("+")):
            # A keep-chomped block leaves the stream open-ended; where PyYAML then writes "..."
            # depends on what follows, so such (rare) documents are left to PyYAML entirely.
            raise _Fallback
        first = lines[0][2:]
        if len(lines) == 1:
            if any(b in first for b in _BREAKS):  # quoted text folded at a line separator
                raise _Fallback
            cached = first
        else:
            cached = (first, [line[2:] for line in lines[1:]])
        if len(_value_cache) < 200_000:
            _value_cache[key] = cached
    return cached


def _key(key: str) -> str:
    cached = _key_cache.get(key)
    if cached is None:
        if len(key) < 128 and _PLAIN.match(key) and key not in _RESOLVED_WORDS:
            cached = key  # plain, as in _scalar (the emitter writes a simple key of up to 127 characters)
        else:
            text = yaml.dump({key: 0}, **_OPTIONS)
            if text.startswith("? ") or not text.endswith(": 0\n") or any(b in text[:-1] for b in _BREAKS):
                raise _Fallback
            cached = text[: -len(": 0\n")]
        if len(_key_cache) < 50_000:
            _key_cache[key] = cached
    return cached


def _flow(items: list) -> str:
    return yaml.dump(items, Dumper=_Dumper, default_flow_style=True, width=_WIDTH, allow_unicode=True)[:-1]


def _text(value) -> str | tuple[str, list[str]]:
    """`_scalar` with a cache in front: most strings in manifests repeat (keys, labels, names)."""
    rendered = _str_cache.get(value) if type(value) is str else None
    if rendered is None:
        rendered = _scalar(value)
        if type(value) is str and len(_str_cache) < 200_000:
            _str_cache[value] = rendered
    return rendered


_str_cache: dict[str, str | tuple[str, list[str]]] = {}


def _literal(out: list[str], lead: str, rendered: tuple[str, list[str]], content_indent: int) -> None:
    header, lines = rendered
    pad = " " * content_indent
    out.append(lead + " " + header + "\n")
    out.extend((pad + line if line else line) + "\n" for line in lines)


def _emit_mapping(out: list[str], mapping: dict, indent: int, first_inline: bool = False) -> None:
    # The hot loop of every compile: types are tested by identity and common cases come first.
    pad = " " * indent
    append = out.append
    keys = _key_cache
    strings = _str_cache
    lead = "" if first_inline else pad
    for key, value in mapping.items():
        k = keys.get(key)
        if k is None:
            if type(key) is not str:
                raise TypeError(f"mapping keys must be strings, not {type(key).__name__}")
            k = _key(key)
        head = lead + k + ":"
        lead = pad
        kind = type(value)
        if kind is str:
            rendered = strings.get(value)
            if rendered is None:
                rendered = _text(value)
            if type(rendered) is str:
                append(head + " " + rendered + "\n")
            else:
                _literal(out, head, rendered, indent + 2)  # type: ignore[arg-type]  # narrowed by `type() is`
        elif kind is dict:
            if value:
                append(head + "\n")
                _emit_mapping(out, value, indent + 2)
            else:
                append(head + " {}\n")
        elif kind is list:
            if value:
                append(head + "\n")
                _emit_sequence(out, value, indent)  # PyYAML writes lists under a key without indentation
            else:
                append(head + " []\n")
        elif kind is int:
            append(head + " " + str(value) + "\n")
        else:
            append(head)
            _emit_other(out, value, indent)


def _emit_other(out: list[str], value, indent: int) -> None:
    """Anything but a plain str/dict/list/int after 'key:' or '- ': subclasses, FlowList, bool, None, float."""
    if isinstance(value, FlowList):
        out.append(" " + _flow(value) + "\n")
    elif isinstance(value, dict):
        if value:
            out.append("\n")
            _emit_mapping(out, value, indent + 2)
        else:
            out.append(" {}\n")
    elif isinstance(value, list):
        if value:
            out.append("\n")
            _emit_sequence(out, value, indent)
        else:
            out.append(" []\n")
    else:
        rendered = _text(value)
        if isinstance(rendered, str):
            out.append(" " + rendered + "\n")
        else:
            _literal(out, "", rendered, indent + 2)


def _emit_sequence(out: list[str], items: list, indent: int, first_inline: bool = False) -> None:
    pad = " " * indent
    append = out.append
    strings = _str_cache
    lead = "" if first_inline else pad
    for item in items:
        head = lead + "-"
        lead = pad
        kind = type(item)
        if kind is dict and item:
            append(head + " ")
            _emit_mapping(out, item, indent + 2, first_inline=True)
        elif kind is str:
            rendered = strings.get(item)
            if rendered is None:
                rendered = _text(item)
            if type(rendered) is str:
                append(head + " " + rendered + "\n")
            else:
                _literal(out, head, rendered, indent + 2)  # type: ignore[arg-type]  # narrowed by `type() is`
        elif kind is list and item:
            append(head + " ")
            _emit_sequence(out, item, indent + 2, first_inline=True)
        elif isinstance(item, dict) and item:
            append(head + " ")
            _emit_mapping(out, item, indent + 2, first_inline=True)
        elif isinstance(item, list) and item and not isinstance(item, FlowList):
            append(head + " ")
            _emit_sequence(out, item, indent + 2, first_inline=True)
        else:
            append(head)
            _emit_other(out, item, indent)  # only empty collections and scalars get here


def _emit_document(out: list[str], document) -> None:
    if isinstance(document, dict) and document:
        _emit_mapping(out, document, 0)
    elif isinstance(document, list) and document and not isinstance(document, FlowList):
        _emit_sequence(out, document, 0)
    else:  # a bare scalar or an empty collection as a whole document
        raise _Fallback


def dump_all(documents: list, header: str = "") -> str:
    """The documents as one YAML text; stops with BoundExceeded past MAX_OUTPUT_BYTES (the backstop of
    every target's `output_size` estimate: nothing on the compile path makes a larger file)."""
    out: list[str] = [header]
    size, counted = 0, 0
    try:
        for document in documents:
            out.append("---\n")
            _emit_document(out, document)
            size += sum(len(piece) for piece in out[counted:])
            counted = len(out)
            if size > MAX_OUTPUT_BYTES:
                raise BoundExceeded("the compiled file", MAX_OUTPUT_BYTES,
                                    "long values repeated per replica belong in a file the job reads; "
                                    "use fewer, larger replicas")
    except _Fallback:
        return header + reference_dump_all(documents)
    return "".join(out)


def dump(document, header: str = "") -> str:
    out: list[str] = [header]
    try:
        _emit_document(out, document)
    except _Fallback:
        return header + yaml.dump(document, **_OPTIONS)
    return "".join(out)
