"""`trainspec run --set path=value` on a spec: the spec document edited before validation.

The syntax is Helm's `--set` (what chart input takes too): dotted keys, `[N]` list
indexes, several pairs in one argument separated by commas (`\\,` and `\\.` escape
them), `{a,b}` for a list; values are typed as Helm types them (true/false, null,
integers; anything else a string). Paths are the chart's values paths — the spec's
`spec` fields, so `roles.worker.replicas=2` is the spec's `spec.roles.worker.replicas`;
a path that starts with `metadata`, `spec`, `apiVersion` or `kind` is the document's.
Validation then runs on the edited document as on any spec, and an error at a path a
`--set` wrote names that argument. Every job document of the file is edited.

`inputs.compile_spec` imports `load_plans` from here instead of the compiler; the
values come from `using(...)`, set by `trainspec run` (commands.py) around loading.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ...compiler import load_plans as compiler_load_plans
from ...compiler.errors import SpecError, SpecErrors, UsageError, dotted
from ...compiler.loader import JsonnetOptions, load_file

TOP_LEVEL = ("apiVersion", "kind", "metadata", "spec")
_ACTIVE: ContextVar[tuple[str, ...]] = ContextVar("trainspec_set", default=())


@dataclass(frozen=True)
class Assignment:
    argument: str          # the whole --set argument, for messages
    path: tuple            # keys (str) and list indexes (int)
    value: Any


@contextlib.contextmanager
def using(sets: list[str] | tuple[str, ...]) -> Iterator[None]:
    token = _ACTIVE.set(tuple(sets or ()))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active() -> tuple[str, ...]:
    return _ACTIVE.get()


def _split(text: str, sep: str) -> list[str]:
    """Split on `sep` outside `{...}`, honouring a backslash escape."""
    parts, cur, depth, i = [], "", 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            cur += text[i:i + 2]
            i += 2
            continue
        depth += ch == "{"
        depth -= ch == "}" and depth > 0
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
        i += 1
    parts.append(cur)
    return parts


def _typed(raw: str) -> Any:
    """Helm's strvals typing: booleans, null and integers; everything else stays a string."""
    if raw.startswith("{") and raw.endswith("}"):
        inner = raw[1:-1]
        return [] if not inner else [_typed(v) for v in _split(inner, ",")]
    text = raw.replace("\\,", ",").replace("\\.", ".")
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    if re.fullmatch(r"-?(0|[1-9][0-9]*)", text):
        return int(text)
    return text


def parse(argument: str, spec: bool = True) -> list[Assignment]:
    """One `--set` argument's assignments. `spec`: paths are a spec's values paths (`roles...`
    means `spec.roles...`, as a chart's values would say it); else a chart's values as they are."""
    out = []
    for pair in _split(argument, ","):
        if "=" not in pair:
            raise UsageError(f"{pair!r} has no '='", where=f"--set {argument}",
                             expected="path=value, e.g. roles.worker.replicas=2")
        key, raw = pair.split("=", 1)
        path: list = []
        for part in re.split(r"(?<!\\)\.", key):
            m = re.fullmatch(r"((?:[^\[\]\\]|\\.)*)((?:\[\d+\])*)", part)
            if not m or not m.group(1):
                raise UsageError(f"{key!r} is not a values path", where=f"--set {argument}",
                                 expected="keys separated by dots and [N] list indexes, e.g. roles.worker.env.LR or "
                                          "roles.worker.args[0]")
            path.append(m.group(1).replace("\\.", "."))
            path.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
        if spec and path[0] not in TOP_LEVEL:
            path.insert(0, "spec")  # a values path, as for a chart: the spec's fields
        out.append(Assignment(argument, tuple(path), _typed(raw)))
    return out


def apply(data: Any, a: Assignment, extend: bool = False) -> None:
    """Set one assignment in `data`. `extend`: a list index past the end pads the list with nulls
    (Helm's strvals, for chart values); else it is an error (a spec's list is what it is)."""
    node = data
    for i, part in enumerate(a.path):
        last = i == len(a.path) - 1
        where = dotted(a.path[:i]) or "the document"
        if isinstance(part, int):
            if not isinstance(node, list):
                raise UsageError(f"--set {a.argument}: {where} is not a list, so [{part}] cannot be set")
            if part >= len(node) and extend:
                node.extend([None] * (part + 1 - len(node)))
            if part >= len(node):
                raise UsageError(f"--set {a.argument}: {where} has {len(node)} item(s); [{part}] is past its end")
        elif not isinstance(node, dict):
            raise UsageError(f"--set {a.argument}: {where} is not a mapping, so {part!r} cannot be set in it")
        if last:
            node[part] = a.value
            return
        nxt = node[part] if isinstance(node, list) else node.get(part)
        if nxt is None:
            nxt = [] if isinstance(a.path[i + 1], int) else {}
            node[part] = nxt
        node = nxt


def _names(e: SpecError, edits: list[Assignment]) -> SpecError:
    for a in edits:
        written = dotted(a.path)
        if e.path == written or e.path.startswith(written + ".") or e.path.startswith(written + "[") \
                or written.startswith(e.path + ".") and e.path:
            return SpecError(e.file, e.line, e.column, e.path, f"{e.message} (set by --set {a.argument})",
                             e.expected, e.hint)
    return e


def load_plans(path: str, tla: dict[str, str] | None = None, ext_vars: dict[str, str] | None = None,
               jpath: list[str] | None = None, **kw: Any):
    """The compiler's load_plans, on the spec edited by the active `--set` arguments."""
    sets = active()
    if not sets:
        return compiler_load_plans(path, tla=tla, ext_vars=ext_vars, jpath=jpath, **kw)
    edits = [a for s in sets for a in parse(s)]
    options = JsonnetOptions(tuple(sorted((tla or {}).items())), tuple(sorted((ext_vars or {}).items())),
                             tuple(jpath or ()))
    docs = load_file(path, options)
    for doc in docs:
        if not isinstance(doc.data, dict):
            continue
        for a in edits:
            apply(doc.data, a)
    try:
        return compiler_load_plans(path, tla=tla, ext_vars=ext_vars, jpath=jpath, documents=docs, **kw)
    except SpecErrors as exc:
        raise SpecErrors([_names(e, edits) for e in exc.errors]) from None
