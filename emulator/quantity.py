"""Kubernetes resource quantities (cpu "500m", memory "8Gi") as numbers."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_SUFFIX = {
    "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "m": Decimal("0.001"), "u": Decimal("0.000001"), "n": Decimal("0.000000001"),
}
_RE = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m|u|n)?$")


def parse_quantity(value: object) -> Decimal:
    """Raise ValueError for anything Kubernetes would not accept."""
    if isinstance(value, bool):
        raise ValueError(f"not a quantity: {value!r}")
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    text = str(value).strip()
    m = _RE.match(text)
    if not m:
        raise ValueError(f"not a quantity: {value!r}")
    try:
        number = Decimal(m.group(1))
    except InvalidOperation as exc:
        raise ValueError(f"not a quantity: {value!r}") from exc
    return number * Decimal(_SUFFIX[m.group(2) or ""])
