"""Error types that carry everything a user needs to fix a spec.

Every problem with an input is a `SpecError`: where it is (file, line,
column), which field (a dotted path), what was wrong, what was expected and a
hint.  Loading and validation collect all of them for a file before raising
`SpecErrors`, so one run shows every mistake at once.

`Error` is the base of every exception trainspec raises on purpose (the compiler's, the
targets', the importer's, the emulator's and the cluster commands'): `except trainspec.Error`
catches them all, and the CLI maps the rest to "internal error".  It is defined here, in the
ground layer, so every layer can derive from it; the Python API re-exports it
(`trainspec.Error`, and `trainspec.SpecError` is `SpecErrors`).
"""

from typing import NamedTuple


class Problem(NamedTuple):
    """One problem, where it is (`trainspec.Problem`; `SpecError` in the compiler).  A NamedTuple, not a
    frozen dataclass: cheaper to define, and every command that reads a spec imports this module
    (`_asdict()` gives its fields by name)."""

    file: str
    line: int
    column: int
    path: str
    message: str
    expected: str = ""
    hint: str = ""

    def format(self) -> str:
        return error_text(f"{self.file}:{self.line}:{self.column}", self.path or "<document>", self.message,
                          self.expected, self.hint)


SpecError = Problem  # the compiler's name for it, from before the Python API


def error_text(where: str, path: str, message: str, expected: str = "", hint: str = "") -> str:
    """The one error shape, compiler and emulator alike: `where: field path: message; expected X; hint: Y`
    (`where` is file:line:column when the position is known, else the file)."""
    text = f"{where}: {path}: {message}"
    if expected:
        text += f"; expected {expected}"
    if hint:
        text += f"; hint: {hint}"
    return text


class Error(Exception):
    """The base of every error trainspec raises about its input, its options or its environment."""


class SpecErrors(Error):
    """One or more problems in the input; `str()` is the report for the user (`trainspec.SpecError`).
    `errors` (also `problems`) holds each `SpecError`, sorted by position."""

    def __init__(self, errors: list[SpecError]):
        # The same template can fail once per role that uses it: report it once.
        self.errors = sorted(set(errors), key=lambda e: (e.file, e.line, e.column, e.path, e.message))
        super().__init__("\n".join(e.format() for e in self.errors))

    @property
    def problems(self) -> list[SpecError]:
        """The Python API's name for `errors` (`trainspec.SpecError.problems`)."""
        return self.errors


class UsageError(Error):
    """Bad command-line usage, or a problem with no line and column to point at (a folder, an
    option, the container engine), in the same shape as a `SpecError`: `where` (a file, an
    option), the field path, the message, what was expected and a hint, each optional but the
    message; `str()` renders them as `error_text` does, so `hint:` reads the same everywhere."""

    def __init__(self, message: str = "", *, where: str = "", path: str = "", expected: str = "",
                 hint: str = ""):
        self.where, self.path, self.message, self.expected, self.hint = where, path, message, expected, hint
        super().__init__(usage_text(message, where, path, expected, hint))


def usage_text(message: str, where: str = "", path: str = "", expected: str = "", hint: str = "") -> str:
    """`error_text` when the problem has no position: the parts it has, in the same order and words."""
    text = ": ".join(part for part in (where, path, message) if part)
    if expected:
        text += f"; expected {expected}"
    if hint:
        text += f"; hint: {hint}"
    return text


class ErrorSink:
    """Collects errors for one file; `position` finds where a path is."""

    __slots__ = ("errors", "file", "key_positions", "positions", "prefix")

    def __init__(self, file: str, positions: dict[tuple, tuple[int, int]] | None = None,
                 key_positions: dict[tuple, tuple[int, int]] | None = None, errors: list[SpecError] | None = None,
                 prefix: tuple = ()):
        self.file = file
        self.positions = {} if positions is None else positions
        self.key_positions = {} if key_positions is None else key_positions
        self.errors = [] if errors is None else errors
        self.prefix = prefix

    def __repr__(self) -> str:
        return f"ErrorSink({self.file!r}, errors={self.errors!r}, prefix={self.prefix!r})"

    def position(self, path: tuple, at_key: bool = False) -> tuple[int, int]:
        table = self.key_positions if at_key else self.positions
        full = self.prefix + tuple(path)
        while True:
            if full in table:
                return table[full]
            if full in self.positions:
                return self.positions[full]
            if len(full) <= len(self.prefix):
                return self.positions.get(self.prefix, (1, 1))
            full = full[:-1]

    def add(self, path: tuple, message: str, expected: str = "", hint: str = "",
            at_key: bool = False, where: tuple | None = None) -> None:
        """`where`: a more precise position key than `path` (a template's `{{ }}`), when the loader has it."""
        line, column = self.position(where or path, at_key)
        self.errors.append(SpecError(self.file, line, column, dotted(path), message, expected, hint))

    def raise_if_any(self) -> None:
        if self.errors:
            raise SpecErrors(self.errors)


def dotted(path: tuple) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out
