"""The operator kinds' registry (compiler/kinds/): one module per kind's home, one line each in `KINDS`.

A throwaway kind is registered so and the importer's and the emulator's detectors see it; every
registered kind's identity is consistent; and no module outside the registry spells a kind's
group/version (docstrings and comments aside).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from trainspec.compiler import kinds
from trainspec.compiler.kinds import OperatorKind

from helpers import ROOT

PACKAGE = "trainspec_test_tiny_kind"
MODULE = '''\
"""RayJob: a kind trainspec does not read, registered by a test."""

from trainspec.compiler.kinds import OperatorKind, matching

RAY_JOB = OperatorKind("RayJob", "ray.io/v1", "rayjobs", provider="KubeRay")
KINDS = (RAY_JOB,)


def matches(doc):
    return matching(KINDS, doc)
'''


@pytest.fixture
def tiny_kind(tmp_path, monkeypatch):
    (tmp_path / f"{PACKAGE}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(kinds.KINDS, "ray", PACKAGE)  # the one line
    yield
    sys.modules.pop(PACKAGE, None)


def test_a_new_input_kind_is_one_module_and_one_line(tiny_kind):
    from trainspec.importer import source_of

    doc = {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "r"}}
    assert kinds.source_of(doc) == "ray"
    assert source_of(doc) == "ray"  # the importer asks the registry
    assert kinds.kind("ray", "RayJob").plural == "rayjobs"
    assert kinds.source_of(dict(doc, apiVersion="ray.io/v2")) == "ray"  # any version of its group
    assert kinds.source_of(dict(doc, apiVersion="example.com/v1")) is None


def every_kind() -> list[tuple[str, OperatorKind]]:
    return [(name, k) for name in kinds.KINDS for k in kinds.kinds(name)]


@pytest.mark.parametrize(("name", "kind"), every_kind(), ids=lambda v: v if isinstance(v, str) else v.kind)
def test_each_kind_s_identity(name, kind):
    assert kind.api_version == f"{kind.group}/{kind.version}" and kind.version.startswith("v")
    assert kind.plural == kind.kind.lower() + "s"  # what the API server serves them as
    doc = {"apiVersion": kind.api_version, "kind": kind.kind}
    assert kind.matches(doc) and not kind.matches(dict(doc, apiVersion=f"other.{kind.api_version}"))
    if kind.kind not in ("TrainingRuntime", "ClusterTrainingRuntime"):  # read with their TrainJob, never alone
        assert kinds.source_of(doc) == name
    else:
        assert kinds.source_of(doc) is None


def test_the_registry_names_the_importers():
    from trainspec.importer import source_of

    assert source_of({"jobName": "x", "taskRoles": []}) == kinds.source_of({"jobName": "x", "taskRoles": []}) == "openpai"
    assert source_of({"apiVersion": "v1", "kind": "Pod"}) is None


def test_the_cluster_commands_take_the_operators_from_the_registry():
    from trainspec.cluster.kinds import BY_KEY

    for name in ("kubeflow", "volcano", "jobset", "trainjob"):
        for kind in kinds.kinds(name):
            row = BY_KEY[(kind.api_version, kind.kind)]
            assert (row.plural, row.namespaced, row.provider) == (kind.plural, kind.namespaced, kind.provider)


def _strings(path: Path) -> set[str]:
    """The string constants of a module, its docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings}


def test_a_kind_s_group_version_is_spelled_in_its_registry_module_only():
    spelled = {k.api_version for _, k in every_kind() if k.group not in ("", "batch")}  # batch/v1 is Kubernetes'
    outside = {}
    for folder in ("cli", "compiler", "targets", "emulator", "importer", "cluster"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if (ROOT / "compiler" / "kinds") in path.parents:
                continue
            found = _strings(path) & spelled
            if found:
                outside[str(path.relative_to(ROOT))] = sorted(found)
    assert outside == {}


# Modules that still spell a kind's API group or kind name themselves (a ratchet: none now; a new spelling
# outside compiler/kinds/ fails, unless listed here with why).
NOT_YET: set[str] = set()


def test_a_kind_s_group_and_name_are_spelled_in_the_registry_only_but_for_the_listed_modules():
    every = every_kind()
    groups = {k.group for _, k in every if k.group not in ("", "batch")}
    names = {k.kind for _, k in every if k.kind != "Job"}  # Job is Kubernetes' own word
    outside = set()
    for folder in ("cli", "compiler", "targets", "emulator", "importer", "cluster"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if (ROOT / "compiler" / "kinds") in path.parents:
                continue
            strings = _strings(path)
            if strings & names or {s.rstrip("/") for s in strings} & groups:
                outside.add(str(path.relative_to(ROOT)))
    assert outside == NOT_YET
