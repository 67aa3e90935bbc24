"""Secret values hidden from everything trainspec prints or records (log lines, notes, errors,
the run's state file): each is replaced by ******, in the forms an output may quote it in."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable

from .job import JobModel


def no_mask(text: str) -> str:
    return text


MASK = "******"


def masker(secret_values: Iterable[str | bytes]) -> Callable[[str], str]:
    """A function that replaces every secret value (and every line of a multi-line one)
    in a text by ******. Values shorter than 4 characters are left alone: masking
    every "1" or "yes" would garble the output and hide nothing."""
    needles: set[str] = set()
    for value in secret_values:
        text = value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)
        for part in [text.strip(), *text.splitlines()]:
            part = part.strip()
            if len(part) >= 4:
                needles.add(part)
                # ... and as an error message may quote it: Python's repr, JSON, Go's %q
                needles.update(f for f in (repr(part)[1:-1], json.dumps(part)[1:-1],
                                           json.dumps(part, ensure_ascii=False)[1:-1]) if len(f) >= 4)
        raw = value if isinstance(value, bytes) else str(value).encode("utf-8", errors="replace")
        if len(raw.strip()) >= 4:
            # ... and base64 of it: the form a Secret's `data` holds it in, and what `echo $TOKEN | base64`
            # (with its newline) or a log of the manifest would print.
            for form in {raw, raw.strip(), raw.strip() + b"\n"}:
                for enc in (base64.b64encode(form), base64.urlsafe_b64encode(form)):
                    needles.update({enc.decode(), enc.decode().rstrip("=")})
    if not needles:
        return no_mask
    ordered = sorted(needles, key=len, reverse=True)  # longest first: a value containing another

    def mask(text: str) -> str:
        for needle in ordered:
            if needle in text:
                text = text.replace(needle, MASK)
        return text

    return mask


def secret_mask(job: JobModel) -> Callable[[str], str]:
    """The mask of one run: every value of every Secret the job holds (read or given with --secret)."""
    return masker(v for data in (job.secrets or {}).values() for v in data.values())
