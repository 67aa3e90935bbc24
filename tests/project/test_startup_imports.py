"""Start-up stays lean: what a command imports, checked in a fresh interpreter (no timings).

`trainspec --version` loads neither the compiler nor the emulator; compiling a spec with no
`{{ }}` template never imports Jinja; the compile path never imports Docker or Kubernetes.
"""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from helpers import ROOT, SPECS, neutral_cwd

# Runs the CLI's main() in-process, then prints the names in sys.modules (repr: nothing imported for it).
PROBE = """
import sys
from trainspec.cli import main
sys.argv = ["trainspec", *{args!r}]
try:
    code = main()
except SystemExit as exc:
    code = exc.code
sys.stdout.flush()
sys.stderr.write("\\n@@modules@@" + repr(sorted(sys.modules)) + "\\n")
sys.stderr.write("@@code@@" + repr(code) + "\\n")
"""


def imported(*args: str) -> tuple[set[str], object]:
    """The modules a `trainspec ARGS...` run had loaded when it finished, and its exit code."""
    modules, code, _stderr = probed(*args)
    return modules, code


def probed(*args: str) -> tuple[set[str], object, str]:
    """imported(), and what the command wrote to stderr."""
    done = subprocess.run([sys.executable, "-c", PROBE.format(args=list(args))], capture_output=True,
                          text=True, cwd=neutral_cwd(), check=True)
    modules = code = None
    for line in done.stderr.splitlines():
        if line.startswith("@@modules@@"):
            modules = set(ast.literal_eval(line.removeprefix("@@modules@@")))
        elif line.startswith("@@code@@"):
            code = ast.literal_eval(line.removeprefix("@@code@@"))
    assert modules is not None, done.stderr
    return modules, code, done.stderr.split("\n@@modules@@", 1)[0]


def loaded(modules: set[str], package: str) -> list[str]:
    return sorted(m for m in modules if m == package or m.startswith(package + "."))


def test_version_does_not_import_the_compiler_or_the_emulator():
    modules, code = imported("--version")
    assert code == 0
    for package in ("trainspec.compiler", "trainspec.emulator", "yaml", "jinja2", "docker", "dataclasses"):
        assert not loaded(modules, package), f"`trainspec --version` imports {loaded(modules, package)}"


def untemplated_specs() -> list[str]:
    """Specs with neither templates nor `patches` (which load jsonpatch, and with it difflib)."""
    return sorted(p.name for p in SPECS.glob("*.yaml")
                  if not any(mark in p.read_text() for mark in ("{{", "{%", "\npatches:", "\n  patches:")))


@pytest.mark.parametrize("target", ["k8s", "kubeflow", "compose"])
def test_compiling_a_spec_without_templates_does_not_import_jinja(target):
    spec = next(name for name in untemplated_specs() if name.startswith(("tf-", "pytorch")))
    modules, code = imported("compile", str(SPECS / spec), "--target", target, "-o", "-")
    assert code in (0, None), f"compile {spec} -t {target} exited {code}"
    assert "trainspec.compiler.plan" in modules  # it did compile
    assert not loaded(modules, "jinja2"), f"compile {spec} imports jinja2"
    for package in ("docker", "kubernetes", "difflib"):
        assert not loaded(modules, package), f"compile {spec} imports {package}"


@pytest.mark.parametrize("args", [
    ("compile", "tf-ps.yaml", "--target", "k8s", "-o", "-"),
    ("compile", "pytorch-ddp.yaml", "--target", "jobset", "-o", "-"),
    ("compile", "mpi-horovod.yaml", "--target", "kubeflow", "-o", "-"),
    ("compile", "tf-ps.yaml", "--target", "compose", "-o", "OUT/compose.yaml"),
    ("validate", "tf-ps.yaml"),
], ids=lambda args: " ".join(args[:4]))
def test_the_compile_path_imports_neither_dataclasses_nor_inspect(args, tmp_path):
    # `dataclasses` imports inspect, ast, dis and tokenize (~11 ms), and every frozen dataclass costs
    # ~1.5 ms to define: the plan, the errors and the loader's types are NamedTuples or plain classes.
    argv = [str(SPECS / a) if a.endswith(".yaml") and "/" not in a else a.replace("OUT", str(tmp_path)) for a in args]
    modules, code = imported(*argv)
    assert code in (0, None), f"trainspec {' '.join(args)} exited {code}"
    assert "trainspec.compiler.plan" in modules  # it did plan the job
    for module in ("dataclasses", "inspect"):
        assert module not in modules, f"trainspec {' '.join(args)} imports {module}"
    if "k8s" in args:  # quantities are compared as Decimals only when a spec writes requests or limits
        assert "decimal" not in modules


def test_compiling_to_a_file_imports_neither_shutil_nor_tempfile(tmp_path):
    # argparse asks shutil for the terminal's width on every add_argument, and tempfile imports shutil,
    # random and weakref: a few ms of every `compile -o FILE` (bench/startup.py).
    out = tmp_path / "k8s.yaml"
    modules, code = imported("compile", str(SPECS / "tf-ps.yaml"), "--target", "k8s", "-o", str(out))
    assert code in (0, None) and out.read_text().startswith("# ")
    for module in ("shutil", "tempfile", "random"):
        assert module not in modules, f"compile -o FILE imports {module}"


def test_a_spec_with_templates_does_import_jinja():
    # The other side of the test above: the probe does see Jinja when a spec needs it.
    spec = next(p for p in sorted(SPECS.glob("*.yaml")) if "{{" in p.read_text())
    modules, code = imported("compile", str(spec), "--target", "k8s", "-o", "-")
    assert code in (0, None)
    assert loaded(modules, "jinja2")


def test_error_types_are_lazy_names_of_the_compiler_package():
    done = subprocess.run([sys.executable, "-c", (
        "import sys\n"
        "from trainspec.compiler.errors import SpecError\n"
        "assert 'trainspec.compiler.plan' not in sys.modules, 'errors alone loads the plan'\n"
        "from trainspec.compiler import JobPlan, SpecErrors, load_plans, runpolicy\n"
        "assert SpecErrors.__module__ == 'trainspec.compiler.errors'\n"
        "assert JobPlan.__module__ == 'trainspec.compiler.plan'\n"
        "import trainspec.compiler as c\n"
        "assert not hasattr(c, 'no_such_name')\n")], capture_output=True, text=True, cwd=neutral_cwd())
    assert done.returncode == 0, done.stderr


def test_bad_spec_still_reports_and_exits_2(tmp_path):
    # main() finds the error types in sys.modules instead of importing them: errors still exit 2.
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: trainspec.io/v1\nkind: TrainingJob\nmetadata: {name: x}\nspec: {frameworkk: pytorch}\n")
    done = subprocess.run([sys.executable, "-m", "trainspec", "validate", str(bad)], capture_output=True,
                          text=True, cwd=neutral_cwd())
    assert done.returncode == 2, done.stderr
    assert "bad.yaml:" in done.stderr and "Traceback" not in done.stderr
    done = subprocess.run([sys.executable, "-m", "trainspec", "compile", str(bad), "-t", "nope"], capture_output=True,
                          text=True, cwd=neutral_cwd())
    assert done.returncode == 2 and "unknown target 'nope'" in done.stderr, done.stderr


@pytest.mark.parametrize("where", ["a clone named trainspec, from its parent", "the checkout itself"])
def test_python_m_trainspec_finds_the_installed_package_whatever_the_working_folder(where, tmp_path):
    # The working folder comes first on sys.path for `python -m`; neither a folder named `trainspec`
    # there (a namespace package) nor the checkout may stand in for the installed package.
    if where == "the checkout itself":
        cwd = ROOT
    else:
        (tmp_path / "trainspec" / "specs").mkdir(parents=True)
        cwd = tmp_path
    done = subprocess.run([sys.executable, "-m", "trainspec", "--version"], capture_output=True, text=True, cwd=cwd)
    assert done.returncode == 0 and done.stdout.startswith("trainspec "), done.stderr[-800:]
    done = subprocess.run([sys.executable, "-m", "trainspec", "validate", str(SPECS / "tf-ps.yaml")],
                          capture_output=True, text=True, cwd=cwd)
    assert done.returncode == 0, done.stderr[-800:]


@pytest.mark.parametrize("refusal", ["a bad spec", "a refused hostPath"])
def test_a_run_refused_before_any_engine_contact_never_imports_docker(refusal, tmp_path):
    # The input's checks run before the engine is imported (emulator/commands/run.py build_run, then
    # engine/preflight.py connects): a refusal answers at once, without loading docker (~0.5 s).
    if refusal == "a bad spec":
        path = tmp_path / "bad.yaml"
        path.write_text("apiVersion: trainspec.io/v1\nkind: TrainingJob\nmetadata: {name: x}\n"
                        "spec: {frameworkk: pytorch}\n")
        expected = "frameworkk"
    else:
        text = (SPECS / "tf-ps.yaml").read_text()
        assert "\n  volumes:\n" in text
        path = tmp_path / "tf-ps.yaml"
        path.write_text(text.replace("\n  volumes:\n", "\n  volumes:\n    - name: host-etc\n      mountPath: /host\n"
                                     "      readOnly: true\n      source: {hostPath: /etc}\n", 1))
        expected = "refusing to mount host system paths"
    modules, code, stderr = probed("run", str(path), "--state-dir", str(tmp_path / "state"), "--engine", "docker")
    assert code == 2 and expected in stderr and "Traceback" not in stderr, stderr
    for package in ("docker", "requests", "trainspec.emulator.adapters.docker_api", "trainspec.emulator.engine.run"):
        assert not loaded(modules, package), f"a run refused for {refusal} imports {loaded(modules, package)}"
    assert "trainspec.emulator.readers.dispatch" in modules  # it did read the input
    assert not (tmp_path / "state" / "runs").exists()
