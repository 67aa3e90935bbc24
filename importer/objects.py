"""Source object vs. compiled object, field by field: the exact patches for what trainspec writes differently.

Where the spec has no field for an object-level setting (a JobSet's network, a Job's
completionMode, podFailurePolicy...) the importer compiles the spec once and patches every
top-level key whose value differs: `add` (which replaces) the source's value, or `remove` a
key only trainspec writes.  Metadata maps are compared key by key, ignoring the keys trainspec
owns (`app.kubernetes.io/*`, `trainspec.dev/*`).
"""

from __future__ import annotations

from .context import Context
from .pod import RESERVED_PREFIXES, pointer


def diff_fields(ctx: Context, src: dict, out: dict, path: tuple, ptr: str, skip: tuple = (),
                why: str = "a setting the spec does not hold") -> None:
    keys = list(src) + [k for k in out if k not in src]
    for key in keys:
        if key in skip:
            continue
        if key in src and out.get(key) != src[key]:
            ctx.unmap(path + (key,), "add", f"{ptr}/{pointer(key)[1:]}", src[key], why)
        elif key not in src:
            ctx.unmap(path, "remove", f"{ptr}/{pointer(key)[1:]}", None, f"{key} is written by trainspec, "
                      "not in the source")


def diff_metadata(ctx: Context, src: dict, out: dict, path: tuple, ptr: str) -> None:
    """Labels and annotations of an inner template (a JobSet's Job template): the source's keys, exactly."""
    for key in ("labels", "annotations"):
        want = {k: str(v) for k, v in (src.get(key) or {}).items()}
        have = {k: v for k, v in (out.get(key) or {}).items() if not k.startswith(RESERVED_PREFIXES)}
        if want == {k: v for k, v in have.items()}:
            continue
        for k, v in want.items():
            if have.get(k) != v:
                if key not in out:
                    ctx.unmap(path + (key,), "add", f"{ptr}/{key}", want, "metadata of the inner template")
                    break
                ctx.unmap(path + (key, k), "add", f"{ptr}/{key}/{pointer(k)[1:]}", v, "metadata of the inner template")
        for k in have:
            if k not in want:
                ctx.unmap(path, "remove", f"{ptr}/{key}/{pointer(k)[1:]}", None,
                          f"{key} {k} is written by trainspec, not in the source")
