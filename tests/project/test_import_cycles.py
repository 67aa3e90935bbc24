"""No import cycles in the package: every import counts, module-level, function-level (lazy) and
TYPE_CHECKING alike, so a lazy import is no way around the layers (issue 33: "0 import cycles").

import-linter's contracts (test_import_contracts.py) say which layer may import which; this says that no
group of modules imports each other round in a circle at all. The package is laid out as the wheel has
it (scripts/lint_imports.py `lay_out`), and read with ast: nothing is imported to check it.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "lint_imports.py"


def _lay_out(dest: Path) -> Path:
    spec = importlib.util.spec_from_file_location("lint_imports", SCRIPT)
    assert spec and spec.loader
    lint = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lint)
    lint.lay_out(dest)
    return dest / "trainspec"


def _modules(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py of the laid-out package."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def import_graph(package: Path) -> dict[str, set[str]]:
    """module -> the package's modules it imports anywhere in its text (top, in a function, under
    TYPE_CHECKING). `from a import b` is an edge to a.b when that is a module, else to a; a name
    resolves to its longest prefix that is a module."""
    modules = _modules(package)

    def resolve(name: str) -> str | None:
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in modules:
                return ".".join(parts[:i])
        return None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        own_package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = own_package.split(".")[:len(own_package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    targets.add(full if full in modules else source)
        graph[name] = {m for m in map(resolve, targets) if m is not None and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_no_import_cycles(tmp_path):
    graph = import_graph(_lay_out(tmp_path))
    assert len(graph) > 200  # the whole package was read (compiler, targets, emulator, importer, cluster, cli)
    found = cycles(graph)
    assert not found, "import cycles (lazy and TYPE_CHECKING imports count):\n" + "\n".join(
        " <-> ".join(group) for group in found)


def test_a_lazy_upward_import_is_a_cycle(tmp_path):
    """The check is live: the API's run importing the command line again, inside a function, is a cycle."""
    package = _lay_out(tmp_path)
    localrun = package / "localrun.py"
    localrun.write_text(localrun.read_text() + "\n\ndef _upward():\n    from trainspec.cli import build_parser  # noqa: F401\n")
    found = cycles(import_graph(package))
    assert any({"trainspec.localrun", "trainspec.cli"} <= set(group) for group in found), found


def test_a_type_checking_import_counts(tmp_path):
    package = _lay_out(tmp_path)
    limits = package / "compiler" / "limits.py"
    limits.write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from .plan_limits import report  # noqa: F401\n"
                      + limits.read_text())
    found = cycles(import_graph(package))
    assert any({"trainspec.compiler.limits", "trainspec.compiler.plan_limits"} <= set(group) for group in found), found
