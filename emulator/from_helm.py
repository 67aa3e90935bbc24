"""A Helm chart folder rendered with a real Helm engine (helm-python-sdk, the `helm` extra).

`trainspec run CHART/ --set roles.worker.replicas=2 -f my-values.yaml` renders the chart
offline (no cluster is contacted; `lookup` returns nothing) with the chart's values, then the
values files in order, then the --set values (Helm's precedence), and hands the rendered
objects to the same readers as a compiled file: a k8s-style chart to from_k8s, a chart of
custom resources to its controller (from_operator).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from ..compiler.errors import UsageError

EXTRA_HINT = "pip install 'trainspec[helm]'"
_INDEX = re.compile(r"^(?P<key>[^\[\]]*)\[(?P<i>\d+)\]$")


def is_chart(path: str) -> bool:
    return Path(path).is_dir() and (Path(path) / "Chart.yaml").is_file()


def parse_scalar(text: str) -> Any:
    """A --set value as Helm's strvals types it: true/false, null, integers, {a,b} lists; else a string."""
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    if re.fullmatch(r"-?(0|[1-9][0-9]*)", text):
        return int(text)
    if text.startswith("{") and text.endswith("}"):
        return [parse_scalar(x) for x in re.split(r"(?<!\\),", text[1:-1])] if text[1:-1] else []
    return text.replace("\\,", ",")


def _split(text: str) -> list[str]:
    """Split at commas outside `{...}` lists and not escaped `\\,` (kept escaped for parse_scalar)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(depth - 1, 0)
        elif ch == "," and depth == 0 and (i == 0 or text[i - 1] != "\\"):
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def apply_set(values: dict, option: str) -> None:
    """One `--set a.b[0].c=v[,x=y]` into values (Helm's strvals paths)."""
    for assignment in _split(option):
        path, eq, raw = assignment.partition("=")
        if not eq or not path:
            raise UsageError(f"--set {option!r}: expected PATH=VALUE (e.g. roles.worker.replicas=2)")
        node: Any = values
        keys = path.split(".")
        for n, key in enumerate(keys):
            last = n == len(keys) - 1
            m = _INDEX.match(key)
            name, index = (m.group("key"), int(m.group("i"))) if m else (key, None)
            if not name:
                raise UsageError(f"--set {option!r}: empty key in {path!r}")
            if not isinstance(node, dict):
                raise UsageError(f"--set {option!r}: {'.'.join(keys[:n])} is not a map")
            if index is None:
                if last:
                    node[name] = parse_scalar(raw)
                else:
                    if not isinstance(node.get(name), dict):
                        node[name] = {}
                    node = node[name]
                continue
            items = node.get(name)
            if not isinstance(items, list):
                items = node[name] = []
            while len(items) <= index:
                items.append(None)
            if last:
                items[index] = parse_scalar(raw)
            else:
                if not isinstance(items[index], dict):
                    items[index] = {}
                node = items[index]


def merge(base: dict, over: dict) -> dict:
    """Helm's coalescing of a values file over the ones before it: maps merge, the rest replaces."""
    out = dict(base)
    for k, v in over.items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def user_values(values_files: Iterable[str], set_options: Iterable[str]) -> dict:
    values: dict = {}
    for f in values_files:
        try:
            data = yaml.safe_load(Path(f).read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"-f {f}: cannot read it: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise UsageError(f"-f {f}: not YAML: {exc}") from None
        if data is None:
            continue
        if not isinstance(data, dict):
            raise UsageError(f"-f {f}: a values file is a map of keys, not {type(data).__name__}")
        values = merge(values, data)
    for option in set_options:
        apply_set(values, option)
    return values


def render(path: str, values_files: Iterable[str] = (), set_options: Iterable[str] = (),
           namespace: str = "default") -> list[dict]:
    """The chart's rendered objects, in template-path order."""
    values = user_values(values_files, set_options)
    try:
        from helm_python import HelmError
        from helm_python import chart as helm_chart
    except ImportError:
        raise UsageError(f"{path} is a Helm chart; rendering it needs the Helm engine: {EXTRA_HINT}") from None
    try:
        with helm_chart.Chart.load(str(path)) as chart:
            release = str(chart.name or "release")
            manifests = chart.render(values=values, name=release, namespace=namespace)
    except HelmError as exc:
        raise UsageError(f"{path}: Helm could not render the chart: {exc}") from None
    docs: list[dict] = []
    for name, text in sorted(manifests.items()):
        if not name.endswith((".yaml", ".yml")):
            continue  # NOTES.txt
        try:
            docs += [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
        except yaml.YAMLError as exc:
            raise UsageError(f"{path}: {name} rendered to invalid YAML: {exc}") from None
    if not docs:
        raise UsageError(f"{path}: the chart rendered no objects with these values")
    return docs
