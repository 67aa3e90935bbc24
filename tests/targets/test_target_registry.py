"""Adding a target is one folder plus one registry line (issue 22).

A throwaway target is written to a temporary folder — `__init__.py` with its rules (its own naming
scheme and its own check) and `render.py` — and registered with one entry in `targets.TARGETS`.
Nothing else changes: the CLI compiles a spec to it, the spec's templates are rendered with its
host names, its check's error carries the spec's position, and its renderer loads only to render.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from trainspec import targets
from trainspec.cli import main

from helpers import ROOT

PACKAGE = "trainspec_test_tiny_target"

INIT = '''\
"""tiny: one line per replica, host names <job>-<role>-<i>.tiny; at most two replicas per role."""

from trainspec.compiler.schemes import NamingScheme
from trainspec.compiler.target_rules import Problem, TargetRules

TINY = NamingScheme("tiny", "<job>-<role>-<i>.tiny", lambda job, role, i: f"{job}-{role}-{i}.tiny")


def check(plan):
    return [Problem(("spec", "roles", role.name, "replicas"), f"target tiny: {role.count} {role.name} replicas",
                    "at most 2", "use the k8s target") for role in plan.roles if role.count > 2]


RULES = TargetRules("tiny", lambda framework: TINY, check)
'''

RENDER = '''\
from . import TINY


def render(plan):
    plan.check("tiny")
    lines = [f"{r.name} {' '.join(r.renders[TINY.name].of(i).command or ())}"
             for r in plan.roles for i in range(r.count)]
    hosts = plan.hosts(TINY)
    return {"tiny.txt": "\\n".join(lines + [",".join(h for role in plan.roles for h in hosts[role.name])]) + "\\n"}
'''

SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {{name: tj}}
spec:
  framework: pytorch
  image: busybox
  command: [echo, '{{{{ hosts.master[0] }}}}']
  roles:
    master: {{replicas: 1}}
    worker: {{replicas: {workers}}}
"""


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """The one folder, and the one registry line."""
    folder = tmp_path / "lib" / PACKAGE
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(INIT)
    (folder / "render.py").write_text(RENDER)
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    monkeypatch.setitem(targets.TARGETS, "tiny", PACKAGE)
    yield tmp_path
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def test_a_new_target_compiles_through_the_cli(tiny, capsys):
    spec = tiny / "job.yaml"
    spec.write_text(SPEC.format(workers=2))
    assert main(["compile", str(spec), "--target", "tiny", "-o", "-"]) == 0
    out = capsys.readouterr().out
    # the spec's template rendered with the target's own host names, and plan.hosts in its scheme
    assert out == ("master echo tj-master-0.tiny:23456\n" + "worker echo tj-master-0.tiny:23456\n" * 2
                   + "tj-master-0.tiny:23456,tj-worker-0.tiny:23456,tj-worker-1.tiny:23456\n")


def test_a_new_targets_check_is_a_positioned_error(tiny, capsys):
    spec = tiny / "job.yaml"
    spec.write_text(SPEC.format(workers=3))
    assert main(["compile", str(spec), "--target", "tiny", "-o", "-"]) == 2
    err = capsys.readouterr().err
    assert f"{spec}:10:24: spec.roles.worker.replicas: target tiny: 3 worker replicas" in err
    assert "expected at most 2" in err and "use the k8s target" in err
    assert main(["compile", str(spec), "--target", "k8s", "-o", "-"]) == 0  # the other targets are unaffected


def test_a_new_target_loads_its_renderer_only_to_render(tiny):
    spec = tiny / "job.yaml"
    spec.write_text(SPEC.format(workers=1))
    (plan,) = targets.load_plans(str(spec), targets=("tiny",))
    assert PACKAGE in sys.modules and f"{PACKAGE}.render" not in sys.modules
    assert set(plan.role("worker").renders) == {"service", "tiny"}
    assert targets.render("tiny", plan)["tiny.txt"].startswith("master echo tj-master-0.tiny:23456\n")


def test_a_new_target_joins_build_over_all_targets(tiny, capsys):
    spec = tiny / "job.yaml"
    spec.write_text(SPEC.format(workers=1))
    out = tiny / "out"
    assert main(["build", str(spec), "-o", str(out)]) == 0
    assert (out / "tj" / "tiny.txt").read_text().startswith("master echo tj-master-0.tiny:23456\n")
    assert (out / "tj" / "k8s.yaml").is_file()


def test_the_compiler_holds_no_target_name():
    """What a target is lives in its folder: the compiler's modules name no target's scheme or check.
    (Target names do appear where they are the spec's: the `patches` keys, compiler/fields.py.)"""
    names = ('"mpi-operator"', '"subdomain"', '"jobset-ranked"', '"trainjob-torch"', "TRAINER_RUNTIMES",
             "JOBSET_ONE_POD_JOBS", "volcano_split", "CHECKS", "TARGET_SCHEMES", "LIMIT_TARGETS",
             "TOPOLOGY_IN_CONFIG_MAP")
    for path in sorted((ROOT / "compiler").rglob("*.py")):
        text = path.read_text()
        for name in names:
            if name == '"subdomain"' and path.parent.name == "apiserver":
                continue  # the API server's checks name the pod's own field spec.subdomain, not Volcano's scheme
            assert name not in text, f"{path.relative_to(ROOT)} names {name}"


@pytest.mark.parametrize(("module", "line", "broken"), [
    ("compiler/plan.py", "from ..targets import TARGETS", "trainspec.compiler.plan -> trainspec.targets"),
    ("emulator/readers/plan.py", "from ...targets.jobset import render",
     "trainspec.emulator.readers.plan -> trainspec.targets.jobset.render"),
])
def test_the_layer_contracts_keep_targets_in_their_place(tmp_path, module, line, broken):
    """The compiler importing the registry, or the emulator a renderer, breaks a contract (checks are live)."""
    import importlib.util
    import shutil
    import subprocess

    lint_bin = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint_bin is None:
        pytest.skip("import-linter is not installed (the dev extra: pip install -e '.[dev]')")
    spec = importlib.util.spec_from_file_location("lint_imports", ROOT / "scripts" / "lint_imports.py")
    assert spec and spec.loader
    lint = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lint)
    lint.lay_out(tmp_path)
    path = tmp_path / "trainspec" / module
    path.write_text(path.read_text() + f"\n\ndef _upward():\n    {line}  # noqa: F401\n")
    r = subprocess.run([lint_bin, str(ROOT / "pyproject.toml"), "--no-cache"], cwd=tmp_path, capture_output=True,
                       text=True, check=False, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
                       timeout=300)
    assert r.returncode == 1 and broken in r.stdout, r.stdout[-3000:]
