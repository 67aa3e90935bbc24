"""Typed access to loaded spec data that records every problem with its position."""

from __future__ import annotations

from .errors import ErrorSink
from .kube import QUANTITY
from .model import NPROC_WORDS

_MISSING = object()


def type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _suffix(text: str) -> str:
    """A quantity's suffix (`Gi`, `m`, `e3`), for a text QUANTITY matched."""
    body = text.rstrip("0123456789")
    if body != text and body[-1:] in ("e", "E", "+", "-") and body.rstrip("+-")[-1:] in ("e", "E"):
        return text[len(body.rstrip("+-")) - 1:]  # an exponent: e3, E-2, e+5
    for suffix in ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"):
        if text.endswith(suffix):
            return suffix
    return ""


class Reader:
    """Small checked accessors; each returns None (and records an error) on bad input."""

    def __init__(self, sink: ErrorSink, kube_version: tuple[int, int] = (1, 30)):
        self.sink = sink
        self.kube_version = kube_version  # the API server whose rules apply (compiler/kube_rules.py)

    def error(self, path: tuple, message: str, expected: str = "", hint: str = "", at_key: bool = False):
        self.sink.add(path, message, expected, hint, at_key)

    def mapping(self, value, path: tuple, allowed: tuple[str, ...], required: tuple[str, ...] = (),
                what: str = "") -> dict | None:
        if value is None and not required:
            return {}
        if not isinstance(value, dict):
            self.error(path, f"is {type_name(value)}", f"a mapping{' of ' + what if what else ''}")
            return None
        guessed = set()
        for key in value:
            if key not in allowed:
                import difflib  # only for a "did you mean" hint: not imported by a clean compile

                close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
                guessed.update(close)
                hint = (f"did you mean {close[0]!r}?" if close else
                        f"allowed fields: {', '.join(allowed)}" if allowed else "this block takes no fields")
                self.error(path + (key,), f"unknown field {key!r}", "a known field", hint, at_key=True)
        for key in required:
            # a typo of a required key was reported with its "did you mean": not also "missing"
            if (key not in value or value[key] is None) and key not in guessed:
                self.error(path, f"missing required field {key!r}", f"{key!r} to be set")
        return value

    def string(self, value, path: tuple, *, non_empty: bool = True, hint: str = "") -> str | None:
        if not isinstance(value, str):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                hint = hint or f'quote it: "{value}"'
            elif isinstance(value, bool):
                hint = hint or "YAML reads yes/no/on/off/true/false as booleans; quote it"
            self.error(path, f"is {type_name(value)}", "a string", hint)
            return None
        if non_empty and not value.strip():
            self.error(path, "is empty", "a non-empty string", hint)
            return None
        return value

    def choice(self, value, path: tuple, choices: tuple[str, ...]) -> str | None:
        if not isinstance(value, str) or value not in choices:
            shown = repr(value) if isinstance(value, str) else type_name(value)
            import difflib

            close = difflib.get_close_matches(value, choices, n=1, cutoff=0.5) if isinstance(value, str) else []
            if not close and isinstance(value, str):
                close = [c for c in choices if c.lower() == value.lower()]
            hint = f"did you mean {close[0]!r}?" if close else ""
            self.error(path, f"{shown} is not allowed", "one of " + ", ".join(choices), hint)
            return None
        return value

    def integer(self, value, path: tuple, minimum: int | None = None, maximum: int | None = None) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int):
            numeric = isinstance(value, str) and value.strip().lstrip("-").isdigit()
            hint = "write a number without quotes" if numeric else ""
            self.error(path, f"is {type_name(value)}", "an integer", hint)
            return None
        if minimum is not None and value < minimum:
            self.error(path, f"{value} is too small", f"an integer >= {minimum}")
            return None
        if maximum is not None and value > maximum:
            self.error(path, f"{value} is too large", f"an integer <= {maximum}")
            return None
        return value

    def boolean(self, value, path: tuple) -> bool | None:
        if not isinstance(value, bool):
            self.error(path, f"is {type_name(value)}", "true or false")
            return None
        return value

    def string_list(self, value, path: tuple, *, what: str = "strings", example: str = "") -> tuple[str, ...] | None:
        if isinstance(value, str):
            hint = f"write a list, e.g. {example}" if example else "write a YAML list of strings"
            self.error(path, "is a string", f"a list of {what}", hint)
            return None
        if not isinstance(value, list):
            self.error(path, f"is {type_name(value)}", f"a list of {what}")
            return None
        out = []
        ok = True
        for i, item in enumerate(value):
            if not isinstance(item, str):
                hint = f'quote it: "{item}"' if isinstance(item, (int, float)) and not isinstance(item, bool) else \
                    ("YAML reads yes/no/on/off/true/false as booleans; quote it" if isinstance(item, bool) else "")
                self.error(path + (i,), f"is {type_name(item)}", "a string", hint)
                ok = False
            else:
                out.append(item)
        return tuple(out) if ok else None

    def nproc(self, value, path: tuple) -> str | None:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value) if self.integer(value, path, 1, 1024) is not None else None
        if isinstance(value, str) and (value in NPROC_WORDS or value.isdigit() and int(value) >= 1):
            return value
        self.error(path, f"{value!r} is not allowed", "an integer >= 1, or auto, cpu or gpu")
        return None

    def quantity(self, value, path: tuple, example: str) -> str | None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if value != value or value < 0 or value in (float("inf"), float("-inf")):
                self.error(path, f"{value} is not a non-negative quantity", "a non-negative quantity")
                return None
            text = repr(value) if isinstance(value, float) else str(value)
        elif isinstance(value, str):
            text = value.strip()
        else:
            self.error(path, f"is {type_name(value)}", f"a Kubernetes quantity such as {example}")
            return None
        from .kube import QUANTITY_MAX, quantity_size_problem

        too_big = quantity_size_problem(text)  # before any arithmetic: 1e999999999 is not computed
        if too_big:
            self.error(path, f"{value!r} {too_big}", f"a quantity such as {example}",
                       "Kubernetes stores quantities as 64-bit integers (kube_rules: quantity)")
            return None
        if not QUANTITY.match(text):
            self.error(path, f"{value!r} is not a Kubernetes quantity", f"a quantity such as {example}",
                       "use plain numbers with an optional suffix: m, k, M, G, Ki, Mi, Gi, ...")
            return None
        from .kube_rules import quantity_too_large

        number = text.lstrip("+")[:len(text.lstrip("+")) - len(_suffix(text))]  # the digits before the suffix
        if quantity_too_large(number, _suffix(text)):
            self.error(path, f"{value!r} is too large", f"at most {QUANTITY_MAX} (a 64-bit integer)",
                       "no node has that much; Kubernetes stores quantities as 64-bit integers")
            return None
        return text
