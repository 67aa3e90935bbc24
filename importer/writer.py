"""The imported spec as readable YAML (ruamel.yaml): block style, short lists inline, comments where we chose."""

from __future__ import annotations

import io

from .context import Context

FLOW_MAPS = ("resources", "source", "scheduling", "secretKeyRef", "configMapKeyRef", "fieldRef", "resourceFieldRef",
             "requests", "limits", "tcpSocket", "httpGet", "nodeSelector", "podLabels", "podAnnotations", "elastic")
FLOW_KEYS = ("command", "args", "imagePullSecrets", "exec", "resources", "source")
# YAML 1.1 booleans that ruamel (YAML 1.2) writes plain; the spec loader reads YAML 1.1 and would take them
# as booleans (`lmp -k on`), so they are quoted
YAML11_BOOLS = frozenset("y Y yes Yes YES n N no No NO on On ON off Off OFF".split())


def _node(value, key=None):
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, dict):
        out = CommentedMap()
        for k, v in value.items():
            out[k] = _node(v, k)
        if key in FLOW_MAPS and _flat(value):
            out.fa.set_flow_style()
        return out
    if isinstance(value, list):
        seq = CommentedSeq(_node(v) for v in value)
        if key in FLOW_KEYS and all(isinstance(v, (str, int, float, bool)) for v in value) and \
                sum(len(str(v)) for v in value) < 60:
            seq.fa.set_flow_style()
        return seq
    if isinstance(value, str) and "\n" in value.rstrip("\n") and not any(
            ord(c) < 32 and c != "\n" for c in value) and not value.endswith((" ", "\n\n")):
        from ruamel.yaml.scalarstring import LiteralScalarString

        return LiteralScalarString(value)  # scripts read better as a block
    if isinstance(value, str) and value in YAML11_BOOLS:
        from ruamel.yaml.scalarstring import SingleQuotedScalarString

        return SingleQuotedScalarString(value)
    return value


def _flat(value: dict) -> bool:
    return all(isinstance(v, (str, int, float, bool)) or v == {} for v in value.values()) and \
        sum(len(str(v)) + len(str(k)) for k, v in value.items()) < 60


def _attach(root, path: tuple, text: str, header: list[str]) -> None:
    node, parent, last = root, None, None  # ruamel CommentedMaps
    for part in path:
        if isinstance(node, dict) and part in node:
            parent, last, node = node, part, node[part]
        else:
            break
    if parent is None:
        header.append(text)
        return
    existing = parent.ca.items.get(last)  # type: ignore[attr-defined]
    comment = existing[2].value.strip().lstrip("#").strip() + "; " + text if existing and existing[2] else text
    if existing:
        parent.ca.items.pop(last)  # type: ignore[attr-defined]
    parent.yaml_add_eol_comment(comment, last)  # type: ignore[attr-defined]


def dump(spec: dict, ctx: Context, source: str) -> str:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.width = 100
    yaml.indent(mapping=2, sequence=4, offset=2)
    root = _node(spec)
    header = [f"Imported by trainspec from {source}."]
    for path, text in ctx.comments:
        _attach(root, path, text, header)
    if ctx.unmapped:
        _attach(root, ("spec", "patches"), f"{len(ctx.unmapped)} field(s) with no spec field, applied to the "
                f"compiled {ctx.target} output", header)
    root.yaml_set_start_comment("\n".join(header))
    out = io.StringIO()
    yaml.dump(root, out)
    return out.getvalue()
