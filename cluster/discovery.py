"""What the server serves (its discovery answers) against what a job needs: the missing-CRD message."""

from __future__ import annotations

from typing import Any

from .kinds import BY_KEY


def served_kinds(resource_list: Any) -> dict[str, tuple[str, bool]]:
    """kind -> (plural, namespaced) of an APIResourceList body (`GET /apis/<group>/<version>`); subresources skipped."""
    out: dict[str, tuple[str, bool]] = {}
    if not isinstance(resource_list, dict):
        return out
    for res in resource_list.get("resources") or ():
        if not isinstance(res, dict) or "/" in str(res.get("name", "")):
            continue
        out.setdefault(str(res.get("kind")), (str(res.get("name")), bool(res.get("namespaced"))))
    return out


def missing_message(api_version: str, kind: str, served: dict[str, tuple[str, bool]] | None,
                    compiled_from_spec: bool) -> str:
    """Why `kind` cannot be applied here and what to do (`served`: the group/version's kinds; None: not served)."""
    known = BY_KEY.get((api_version, kind))
    provider = known.provider if known else ""
    what = f"{api_version} {kind} is not served here"
    if served:  # the group/version is there, the kind is not (an operator version without it)
        what += f" ({api_version} serves {', '.join(sorted(served))})"
    todo = []
    if provider:
        todo.append(f"install {provider}")
    else:
        todo.append(f"install the CustomResourceDefinition for {kind}")
    if known and known.instead:
        todo.append(f"compile --target {known.instead}" if compiled_from_spec
                    else f"compile the spec with --target {known.instead}")
    return f"{what}: {', or '.join(todo)}"
