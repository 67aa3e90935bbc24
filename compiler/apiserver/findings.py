"""What the API server's checks find and how it words it: one `Finding` per refusal, the `Sink` a check
adds to (in the server's own wording: Invalid value, Required value, ...), the server's field paths
(`spec.containers[0].name`) and Go's %#v of a value.  Every check module imports this; it imports none."""

from __future__ import annotations

from typing import NamedTuple

from ..errors import dotted


class Finding(NamedTuple):
    """One refusal: object `doc` of the list written, `path` inside it, the API server's message; or, with
    `warning`, what the server takes but loses or cannot run: an unknown field it drops (its default
    fieldValidation, Warn), a pod template inside a custom resource whose pods the operator would have
    refused (the server does not validate the template itself)."""

    doc: int
    path: tuple
    message: str
    warning: bool = False


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
        self.add(path, f"Invalid value: {go_value(value)}: {why}")

    def required(self, path: tuple, why: str = "") -> None:
        self.add(path, "Required value" + (f": {why}" if why else ""))

    def unsupported(self, path: tuple, value, allowed) -> None:
        self.add(path, f"Unsupported value: {go_value(value)}: supported values: "
                 + ", ".join(f'"{a}"' for a in allowed))

    def forbidden(self, path: tuple, why: str) -> None:
        self.add(path, f"Forbidden: {why}")

    def duplicate(self, path: tuple, value, raw: bool = False) -> None:
        self.add(path, f"Duplicate value: {value if raw else go_value(value)}")

    def not_found(self, path: tuple, value) -> None:
        self.add(path, f"Not found: {go_value(value)}")

    def too_many(self, path: tuple, count: int, most: int) -> None:
        self.add(path, f"Too many: {count}: must have at most {most} items")


def field_path(path: tuple) -> str:
    """The API server's form: spec.containers[0].ports[1].name (`<root>` for the object itself)."""
    return dotted(path) if path else "<root>"


def go_value(value) -> str:
    """A value as the server quotes it in a message (Go's %#v: strings quoted, booleans lower-case)."""
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):  # Go's %#v of a []string, as the server prints a refused list
        return "[]string{" + ", ".join(go_value(item) for item in value) + "}"
    return str(value)


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               '"': '\\"', "\\": "\\\\"}


def go_quote(text: str) -> str:
    """Go's strconv.Quote: a control character (an escape sequence a terminal would run) never passes through."""
    out = []
    for ch in text:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return '"' + "".join(out) + '"'
