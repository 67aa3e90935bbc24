"""Text from files and containers made safe to print on a terminal: the one place it is done.

A spec, a compiled file or a container's output is someone else's text. Printed raw, a
control sequence in it can retitle the window, write the clipboard (OSC 52), clear the
screen, or move the cursor back over a line so that "job FAILED" reads "job SUCCEEDED"
(a carriage return). `neutralise` escapes every C0 control except newline and tab, DEL,
every C1 control, and the Unicode controls that reorder or break lines (bidi overrides
and isolates, line/paragraph separators), as visible `\\xNN` / `\\uNNNN` text. Whatever
trainspec adds itself (its colours, the live table's redraw) is added after this.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def neutralise(text: object, newlines: bool = True) -> str:
    """`text` with its control characters escaped; `newlines=False` escapes newlines and tabs too
    (one line of a table cell, a name)."""
    s = str(text)
    out = _UNSAFE.sub(_escape, s)
    if not newlines:
        out = out.replace("\n", "\\n").replace("\t", "\\t")
    return out
