"""Kubernetes dependent-variable expansion, exactly as the kubelet does it.

A port of k8s.io/kubernetes third_party/forked/golang/expansion: `$$` is an
escaped `$`, `$(NAME)` is replaced when NAME is known and left as written when
it is not, an unterminated `$(` and a `$` before any other character are kept.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence


def expand(text: str, mapping: Callable[[str], str]) -> str:
    out: list[str] = []
    checkpoint = 0
    cursor = 0
    n = len(text)
    while cursor < n:
        if text[cursor] == "$" and cursor + 1 < n:
            out.append(text[checkpoint:cursor])
            read, is_var, advance = _read_name(text, cursor + 1)
            out.append(mapping(read) if is_var else read)
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    return "".join(out) + text[checkpoint:]


def _read_name(text: str, start: int) -> tuple[str, bool, int]:
    first = text[start]
    if first == "$":  # escaped operator
        return "$", False, 1
    if first == "(":
        close = text.find(")", start + 1)
        if close >= 0:
            return text[start + 1:close], True, close - start + 1
        return "$(", False, 1  # incomplete reference: kept as written
    return "$" + first, False, 1


def mapping_for(*contexts: Mapping[str, str]) -> Callable[[str], str]:
    """Look a name up in each context in turn; unknown names stay `$(NAME)`."""

    def lookup(name: str) -> str:
        for ctx in contexts:
            if name in ctx:
                return ctx[name]
        return f"$({name})"

    return lookup


def expand_env(pairs: Sequence[tuple[str, str, bool]]) -> dict[str, str]:
    """Build a container environment the way the kubelet does.

    `pairs` are (name, value, literal) in manifest order. Only literal `value`s
    are expanded (values from configMapKeyRef/secretKeyRef are used as they
    are), and only against variables defined *earlier* in the list. A later
    duplicate replaces an earlier one.
    """
    env: dict[str, str] = {}
    for name, value, literal in pairs:
        if literal and value:
            value = expand(value, mapping_for(env))
        env[name] = value
    return env


def expand_command(words: Sequence[str] | None, env: Mapping[str, str]) -> list[str] | None:
    """command/args see the container's whole final environment."""
    if words is None:
        return None
    lookup = mapping_for(env)
    return [expand(w, lookup) for w in words]
