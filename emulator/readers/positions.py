"""Where each value of the file being run was written: an error about a manifest field names its line
and column, in the compiler's error shape (compiler/errors.py).

The readers work on plain data (mappings and lists, as the API server's objects are), and the
controllers copy pod templates into the pods they make. While a file is read, `reading(file,
documents)` records every mapping and list of its documents by identity (the compiler's loader gives
each its line and column), and `copy(node)` records a copy as written where its original was. An
error is then raised about a value, not about a text: `field_error(source, node, path, ...)` is a
`SpecError` at `path` under `node` (its nearest written ancestor when `path` is missing) with the
field path from the document's root. A value with no record (a Helm chart's rendered objects, what a
controller adds itself) is reported against the file, in the same shape without a position.

The record lives in a context variable for the length of one read (as overrides.using does for
`--set`): the readers, the controllers and the shape checks are many functions deep, and a position is
what none of them needs but the one that raises.
"""

from __future__ import annotations

import contextlib
import copy as _copy
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, NamedTuple

from ...compiler.errors import SpecError, SpecErrors, UsageError, dotted
from ...compiler.loader import Document
from ..model.errors import FieldError


class Written(NamedTuple):
    """A value of the input: its document and its path there."""

    document: Document
    path: tuple


class Positions:
    """The values of one file's documents, by identity."""

    def __init__(self, documents: list[Document]):
        # node id -> (the node itself, kept so its id is not reused while recorded; where it was written)
        self._nodes: dict[int, tuple[Any, Written]] = {}
        for document in documents:
            self._record(document.data, document, ())

    def _record(self, node: Any, document: Document, path: tuple) -> None:
        if isinstance(node, dict):
            self._nodes[id(node)] = (node, Written(document, path))
            for key, value in node.items():
                self._record(value, document, path + (key,))
        elif isinstance(node, list):
            self._nodes[id(node)] = (node, Written(document, path))
            for i, value in enumerate(node):
                self._record(value, document, path + (i,))

    def written(self, node: Any) -> Written | None:
        entry = self._nodes.get(id(node))
        return entry[1] if entry is not None and entry[0] is node else None

    def same_as(self, made: Any, original: Any) -> None:
        """`made` is a copy of `original`: its values were written where the original's were."""
        where = self.written(original)
        if where is None or not isinstance(made, (dict, list)):
            return
        self._nodes[id(made)] = (made, where)
        if isinstance(made, dict) and isinstance(original, dict):
            for key, value in made.items():
                if key in original:
                    self.same_as(value, original[key])
        elif isinstance(made, list) and isinstance(original, list):
            for value, before in zip(made, original):
                self.same_as(value, before)


class FieldErrors(SpecErrors, UsageError):
    """A manifest's field at fault, in the compiler's shape and printed as the compiler prints its
    errors (the CLI looks for SpecErrors first); a UsageError too, as every other refusal of the
    emulator's input is, so callers that catch those catch this."""


_ACTIVE: ContextVar[Positions | None] = ContextVar("trainspec_positions", default=None)


@contextlib.contextmanager
def reading(documents: list[Document]) -> Iterator[None]:
    token = _ACTIVE.set(Positions(documents))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def same_as(made: Any, original: Any) -> None:
    """`made` is `original` rebuilt (compose interpolation): its values were written where the original's were."""
    positions = _ACTIVE.get()
    if positions is not None:
        positions.same_as(made, original)


def copy(node: Any) -> Any:
    """A deep copy of an input value that keeps its positions (a controller's pod template)."""
    made = _copy.deepcopy(node)
    positions = _ACTIVE.get()
    if positions is not None:
        positions.same_as(made, node)
    return made


def written(node: Any, path: tuple = ()) -> tuple[str, int, int, tuple] | None:
    """(file, line, column, path from the document's root) of `path` under `node`, when recorded."""
    positions = _ACTIVE.get()
    where = positions.written(node) if positions is not None else None
    if where is None:
        return None
    full = where.path + tuple(path)
    table = where.document.positions
    at = full
    while at not in table and at:
        at = at[:-1]
    line, column = table.get(at, (1, 1))
    return where.document.file, line, column, full


def located(exc: FieldError) -> Exception:
    """A model check's FieldError at the field's line and column, when its mapping was written in the file."""
    found = written(exc.node, exc.field)
    if found is None:
        return exc
    file, line, column, full = found
    return FieldErrors([SpecError(file, line, column, dotted(full), exc.message, exc.expected, exc.hint)])


def field_error(source: str, node: Any, path: tuple, message: str, expected: str = "", hint: str = "",
                label: str = "") -> Exception:
    """The error about `path` under the input value `node`: at its line:column when it was written in
    the file; else against `source`, the object named by `label` (e.g. "JobSet trainer")."""
    found = written(node, path)
    if found is not None:
        file, line, column, full = found
        return FieldErrors([SpecError(file, line, column, dotted(full), message, expected, hint)])
    field = " ".join(part for part in (label, dotted(path)) if part)
    return UsageError(message, where=source, path=field, expected=expected, hint=hint)
