"""A Helm chart folder rendered with a real Helm engine (helm-python-sdk, the `helm` extra).

`trainspec run CHART/ --set roles.worker.replicas=2 -f my-values.yaml` renders the chart
offline (no cluster is contacted; `lookup` returns nothing) with the chart's values, then the
values files in order, then the --set values (Helm's precedence), and hands the rendered
objects to the same readers as a compiled file: a k8s-style chart to from_k8s, a chart of
custom resources to its controller (from_operator).

The engine never sees the chart folder itself but a copy of its regular files
(chartcopy.py): a symlink that leads out of the folder, a FIFO, a socket or a device is
refused, so `.Files.Get`, a template or a values file can never read the host's files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import yaml

from ..compiler.errors import UsageError

EXTRA_HINT = "pip install 'trainspec[helm]'"
_INDEX = re.compile(r"^(?P<key>[^\[\]]*)\[(?P<i>\d+)\]$")


def is_chart(path: str) -> bool:
    return Path(path).is_dir() and (Path(path) / "Chart.yaml").is_file()


def apply_set(values: dict, option: str) -> None:
    """One `--set a.b[0].c=v[,x=y]` into chart values: the emulator's one --set parser (overrides.py)."""
    from .overrides import apply, parse

    for assignment in parse(option, spec=False):
        apply(values, assignment, extend=True)


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


def _namespace_hint(message: str, path: str, command: str) -> str:
    """The chart's pin names the namespace it was compiled for: say how to run (or apply) it there."""
    import re

    found = re.search(r'compiled for \\?"[^"\\]*@([a-z0-9-]+)\\?"; this install has \\?"[^"\\]*@([a-z0-9-]+)', message)
    if not found or found.group(1) == found.group(2):
        return ""
    return (f"; hint: the chart was compiled for namespace {found.group(1)}: "
            f"`trainspec {command} {path} --namespace {found.group(1)}`")


def render(path: str, values_files: Iterable[str] = (), set_options: Iterable[str] = (),
           namespace: str = "default", command: str = "run") -> list[dict]:
    """The chart's rendered objects, in template-path order. `command`: the trainspec command
    a hint names (`run`, `apply`: both take --namespace)."""
    values = user_values(values_files, set_options)
    try:
        from helm_python import HelmError
        from helm_python import chart as helm_chart
    except ImportError:
        raise UsageError(f"{path} is a Helm chart; rendering it needs the Helm engine: {EXTRA_HINT}") from None
    from .chartcopy import confined_copy

    with confined_copy(path) as copy:
        try:
            with helm_chart.Chart.load(copy) as chart:
                release = str(chart.name or "release")
                manifests = chart.render(values=values, name=release, namespace=namespace)
        except HelmError as exc:
            raise UsageError(f"{path}: Helm could not render the chart: {str(exc).replace(copy, str(path))}"
                                 f"{_namespace_hint(str(exc), path, command)}") from None
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
