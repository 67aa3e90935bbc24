"""Kubernetes' own rules, in one place: names and labels, quantities, `$(VAR)` expansion, exit codes.

The compiler validates with these, the targets write with them, and the emulator
runs with them (emulator/engine/podenv.py, emulator/readers/shapes.py): one set of rules.
Everything here is plain data and functions: no Kubernetes client, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from decimal import Decimal


class Pattern:
    """A regular expression compiled on first use, with `match` and `pattern` as a compiled one has.

    Every command that reads a spec imports this module, and compiling a typical spec needs only
    a few of these rules: compiling them all here would be a visible part of its start-up.
    """

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str):
        self.pattern = pattern
        self._compiled: re.Pattern[str] | None = None

    def match(self, text: str) -> re.Match[str] | None:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern)
        return self._compiled.match(text)

    def __repr__(self) -> str:
        return f"Pattern({self.pattern!r})"


# --- names and labels (k8s.io/apimachinery/pkg/util/validation) -------------------------------

DNS1035_LABEL = Pattern(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1123_LABEL = Pattern(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = Pattern(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_NAME = Pattern(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = Pattern(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
CONFIG_KEY = Pattern(r"^[-._a-zA-Z0-9]+$")  # a ConfigMap / Secret data key
ENV_NAME = Pattern(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
# An extended resource name such as nvidia.com/gpu: an optional DNS-subdomain prefix and a qualified name.
RESOURCE_NAME = Pattern(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                        r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
MAX_NAME = 63  # a DNS-1123 label: every object name that is also a host name
# metadata.generateName as the API server applies it (k8s.io/apiserver/pkg/storage/names/generate.go): the prefix
# cut to 58 characters, then 5 random ones from an alphabet without vowels (no words by chance)
GENERATED_SUFFIX = 5
GENERATED_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def generated_name(prefix: str, suffix: str) -> str:
    """The name the API server makes of `prefix` and its `suffix` (GENERATED_SUFFIX characters)."""
    return prefix[:MAX_NAME - GENERATED_SUFFIX] + suffix


# --- quantities (k8s.io/apimachinery/pkg/api/resource) -----------------------------------------

# What a spec may write for cpu, memory and sizes: non-negative, every suffix the API server takes
# (`100n` cpu is rounded up to 1m by the server, not refused).
QUANTITY = Pattern(r"^\+?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$")
# JSON-schema spelling of QUANTITY (no \d: schema regexes are ECMA-262 and read by Go and Python alike).
QUANTITY_SCHEMA = r"^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+)?$"
# Everything Kubernetes parses (a signed number, all suffixes): for reading compiled files.
_ANY_QUANTITY = Pattern(r"^([+-]?(\d+(\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$")

QUANTITY_MAX_CHARS = 64  # far beyond any real quantity; keeps Decimal's work small
QUANTITY_MAX = 2**63 - 1  # int64: what a scheduler or kubelet can hold


def quantity_size_problem(text: str) -> str | None:
    """Refuse, before any arithmetic, a quantity whose exponent or length makes it absurd."""
    if len(text) > QUANTITY_MAX_CHARS:
        return f"is {len(text)} characters long (at most {QUANTITY_MAX_CHARS})"
    lowered = text.lower()
    if "e" in lowered and not lowered.endswith(("e", "ei")):
        exponent = lowered.rsplit("e", 1)[1]
        digits = exponent.lstrip("+-")
        if digits.isdigit() and int(digits[:6] or "0") > 30:
            return f"has the exponent {exponent} (at most 1e30 either way)"
    return None



# Exact values for Decimal(): `decimal` is imported on the first parse_quantity (few specs need one).
_SUFFIX: dict[str, int | str] = {
    "": 1, "n": "1e-9", "u": "1e-6", "m": "0.001",
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}


def parse_quantity(value: object) -> Decimal:
    """The value of a Kubernetes quantity (`500m` -> 0.5, `8Gi` -> 8589934592, `1e3` -> 1000).

    Accepts what the API server accepts (also `n`/`u` suffixes, a sign, and JSON
    numbers); raises ValueError otherwise.  The spec's own, stricter form is QUANTITY.
    """
    from decimal import Decimal, InvalidOperation

    if isinstance(value, bool):
        raise ValueError(f"not a Kubernetes quantity: {value!r}")  # noqa: TRY004 - callers catch ValueError
    if isinstance(value, (int, float)):
        text = str(value)
        if "inf" in text or "nan" in text:
            raise ValueError(f"not a Kubernetes quantity: {value!r}")
        value = text
    if quantity_size_problem(str(value).strip()):  # no arithmetic on 1e999999999 (decimal.Overflow, or hours)
        raise ValueError(f"not a Kubernetes quantity: {value!r}")
    match = _ANY_QUANTITY.match(str(value).strip())
    if not match:
        raise ValueError(f"not a Kubernetes quantity: {value!r}")
    number, suffix = match.group(1), match.group(4) or ""
    try:
        if suffix not in _SUFFIX:  # an exponent (e3, E-2); a bare E is the exa suffix
            return Decimal(number) * (Decimal(10) ** int(suffix[1:]))
        return Decimal(number) * Decimal(_SUFFIX[suffix])
    except (InvalidOperation, KeyError, ValueError) as exc:
        raise ValueError(f"not a Kubernetes quantity: {value!r}") from exc


# --- $(VAR) expansion (k8s.io/kubernetes third_party/forked/golang/expansion) ------------------

_DOLLAR = re.compile(r"\$(?=[$(])")


def expand_references(text: str, defined: Mapping[str, str], limit: int | None = None) -> str:
    """The kubelet's `$(VAR)` expansion of command, args and env values.

    `$$` is an escaped `$`; `$(NAME)` becomes NAME's value when NAME is in
    `defined` (for env values: defined earlier in the list; for command and args:
    the container's whole environment), and is left as written otherwise; an
    unterminated `$(` and a `$` before any other character are kept.

    The result is at most `limit` characters (default `limits.MAX_EXPANSION_BYTES`), checked before
    each piece is added: a value that doubles itself through references (`A1=$(A0)$(A0)`, ...) is
    `limits.BoundExceeded`, never gigabytes.
    """
    if "$" not in text:
        return text
    from .limits import MAX_EXPANSION_BYTES, BoundExceeded

    most = MAX_EXPANSION_BYTES if limit is None else limit
    out: list[str] = []
    size = 0
    i, n = 0, len(text)
    while i < n:
        dollar = text.find("$", i)
        if dollar == -1 or dollar + 1 >= n:
            piece, i = text[i:], n
        elif text[dollar + 1] == "$":
            piece, i = text[i:dollar + 1], dollar + 2
        elif text[dollar + 1] == "(" and (close := text.find(")", dollar + 2)) != -1:
            name = text[dollar + 2:close]
            value = defined.get(name)
            piece = text[i:dollar] + (text[dollar:close + 1] if value is None else value)
            i = close + 1
        else:
            piece, i = text[i:dollar + 1], dollar + 1
        size += len(piece)
        if size > most:
            raise BoundExceeded("a `$(VAR)` expansion", most,
                                "a value whose references refer to references doubles each time; "
                                "write the value out, or put large data in a file")
        out.append(piece)
    return "".join(out)


def expand_env(pairs: Iterable[tuple[str, str, bool]]) -> dict[str, str]:
    """A container's environment as the kubelet builds it from (name, value, literal) in manifest order.

    Only literal values are expanded (configMapKeyRef / secretKeyRef values are
    used as they are), against the variables defined earlier; a later duplicate
    replaces an earlier one.
    """
    from .limits import MAX_EXPANSION_BYTES, BoundExceeded

    env: dict[str, str] = {}
    made = 0  # text the expansions made, all variables together: one bound for the whole environment
    for name, value, literal in pairs:
        if literal and value and "$" in value:
            try:
                value = expand_references(value, env, MAX_EXPANSION_BYTES - made)
            except BoundExceeded as exc:
                raise BoundExceeded(f"the `$(VAR)` expansion of env {name} (with the values expanded before it)",
                                    MAX_EXPANSION_BYTES, exc.hint) from None
            made += len(value)
        env[name] = value
    return env


def escape_references(text: str) -> str:
    """Text that expand_references gives back unchanged (`$(` -> `$$(`, `$$` -> `$$$$`)."""
    return _DOLLAR.sub("$$", text) if "$" in text else text


# --- exit codes -------------------------------------------------------------------------------

# Kubeflow's restartPolicy ExitCode (and trainspec's): a program's own failure (1-127) is permanent;
# death by a signal (128 + n: OOM kill, preemption, SIGTERM) is retried.
PERMANENT_EXIT_CODES = range(1, 128)


def is_permanent_exit(code: int) -> bool:
    """True for exit codes ExitCode does not retry; 0 is success, not a failure."""
    return code in PERMANENT_EXIT_CODES
