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

from ...compiler.errors import UsageError
from ...compiler.loader import yaml_values

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
    """The values files (`-f`) in order, then `--set`. A values file is read with the compiler's loader:
    its limits, and its errors at file:line:column."""
    from ...compiler.errors import SpecError, SpecErrors
    from ...compiler.loader import load_file

    values: dict = {}
    for f in values_files:
        documents = load_file(f)
        if len(documents) > 1:
            second = documents[1].positions.get((), (1, 1))
            raise SpecErrors([SpecError(f, *second, "", "a second YAML document", "one document",
                                        "a values file is one map of keys")])
        if not documents:
            continue
        data = documents[0].data
        if not isinstance(data, dict):
            raise SpecErrors([SpecError(f, *documents[0].positions.get((), (1, 1)), "",
                                        f"is {type(data).__name__}", "a map of keys", "-f names a values file")])
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
    return (f"the chart was compiled for namespace {found.group(1)}: "
            f"`trainspec {command} {path} --namespace {found.group(1)}`")


def render(path: str, values_files: Iterable[str] = (), set_options: Iterable[str] = (),
           namespace: str = "default", command: str = "run") -> list[dict]:
    """The chart's rendered objects, in template-path order. `command`: the trainspec command
    a hint names (`run`, `apply`: both take --namespace)."""
    values = user_values(values_files, set_options)
    import importlib.util

    if importlib.util.find_spec("helm_python") is None:
        raise UsageError(f"{path} is a Helm chart; rendering it needs the Helm engine: {EXTRA_HINT}")
    from .chartcopy import confined_copy

    with confined_copy(path) as copy:
        result = _render_confined(copy, values, namespace)
    if "error" in result:
        message = str(result["error"]).replace(copy, str(path))
        raise UsageError(f"Helm could not render the chart: {message}", where=path,
                         hint=_namespace_hint(message, path, command))
    if "limit" in result:
        raise UsageError(f"{path}: rendering the chart {result['limit']}; the emulator renders a chart with at most "
                         f"{RENDER_MEMORY >> 30} GiB of memory, {RENDER_CPU_SECONDS} s of CPU and "
                         f"{RENDER_OUTPUT >> 20} MB of output (a template loop too large for a local run?)")
    manifests: dict[str, str] = result["manifests"]
    docs: list[dict] = []
    for name, text in sorted(manifests.items()):
        if not name.endswith((".yaml", ".yml")):
            continue  # NOTES.txt
        # The chart's own text: the loader's bounds (aliases by values and bytes, depth, size), so the
        # objects are trees of bounded size that any walk (the secret scan) visits in linear time.
        docs += [d for d in yaml_values(f"{path}/{name} (rendered)", text) if isinstance(d, dict)]
    if not docs:
        raise UsageError(f"{path}: the chart rendered no objects with these values")
    return docs


# A chart is someone else's code: `{{ range until 100000000 }}` makes the Helm engine (in-process
# Go) allocate until the machine runs out of memory. It renders in a child process with these limits.
RENDER_MEMORY = 3 << 30
RENDER_CPU_SECONDS = 60
RENDER_OUTPUT = 50 << 20


_CHILD = """
import json, sys
from helm_python import HelmError
from helm_python import chart as helm_chart
job = json.load(sys.stdin)
try:
    with helm_chart.Chart.load(job["copy"]) as chart:
        out = {"manifests": chart.render(values=job["values"], name=str(chart.name or "release"),
                                         namespace=job["namespace"])}
except HelmError as exc:
    out = {"error": str(exc)}
sys.stdout.write(json.dumps(out))
"""


def _limits() -> None:
    import resource

    # The memory written, not the address space: the Go runtime reserves address space it never uses, so
    # under RLIMIT_AS it died at random ("out of memory: cannot allocate 4194304-byte block (7897088 in
    # use)", about 1 render in 40 under a 1.5 GiB cap); RLIMIT_DATA counts private writable mappings only,
    # and still stops `{{ range until 100000000 }}` (measured: 4 s, "out of memory allocating heap arena").
    # Never above the caller's own limits (a CI runner's `ulimit -d`): raising a hard limit fails.
    for which, value in ((resource.RLIMIT_DATA, RENDER_MEMORY), (resource.RLIMIT_CPU, RENDER_CPU_SECONDS)):
        hard = resource.getrlimit(which)[1]
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (cap, cap))


def _render_confined(copy: str, values: dict, namespace: str) -> dict:
    """{"manifests": {...}} or {"error": Helm's message} or {"limit": what was exceeded}. A fresh
    interpreter (not a fork: a Go runtime already started in this process would not survive one)."""
    import json
    import subprocess
    import sys

    # A pipe, never a temporary file: a chart's rendered Secrets must not touch the disk.
    child = subprocess.Popen([sys.executable, "-I", "-c", _CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, preexec_fn=_limits)
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(json.dumps({"copy": copy, "values": values, "namespace": namespace}).encode())
    child.stdin.close()
    data = child.stdout.read(RENDER_OUTPUT + 1)
    size = len(data)
    if size > RENDER_OUTPUT:
        child.kill()
    child.stdout.close()
    try:
        returncode = child.wait(timeout=RENDER_CPU_SECONDS * 2)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        return {"limit": "took too long"}
    if size > RENDER_OUTPUT:
        return {"limit": "produced too much output"}
    if returncode != 0 or not data:
        return {"limit": "ran out of its memory or CPU time, or the engine failed"}
    return dict(json.loads(data))
