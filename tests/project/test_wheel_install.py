"""A regular install works: the sdist and the wheel hold the whole tree, and every command runs from the wheel.

Every other test runs on the editable install, which finds modules in the checkout whether or not a wheel
would ship them; this module builds the sdist, builds the wheel from it (as pip does from a package index),
installs that into a new virtual environment outside the checkout, and runs each subcommand there from a
folder that holds a decoy `trainspec/` folder (a clone named `trainspec` seen from its parent).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from helpers import GOLDEN, ROOT, SPECS, unavailable

pytestmark = pytest.mark.slow

def tree_files() -> dict[str, str]:
    """Every file of the folders pyproject maps into the package (bytecode and caches aside):
    {name in the sdist: name in the wheel}."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10 (requires-python >= 3.10): tomli is tomllib's origin
        tomllib = pytest.importorskip("tomli", reason="Python 3.10 reads pyproject.toml with tomli")

    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    names = {}
    for package, folder in mapping.items():
        prefix = package.replace(".", "/")
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo"):
                rel = path.relative_to(ROOT / folder).as_posix()
                names[f"{folder}/{rel}"] = f"{prefix}/{rel}"
    return names


def _run(*cmd: str | os.PathLike, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> tuple[Path, Path]:
    """(sdist, wheel built from that sdist)."""
    if importlib_missing("build"):
        unavailable("the `build` package is missing (pip install -e '.[test]')")
    out = tmp_path_factory.mktemp("dist")
    src = tmp_path_factory.mktemp("src") / "trainspec"  # a clean copy: no build/ or egg-info of the checkout's
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", ".venv"))
    done = _run(sys.executable, "-m", "build", "--sdist", "-o", out, src, cwd=out)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (sdist,) = out.glob("*.tar.gz")
    done = _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", out, sdist, cwd=out)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = out.glob("*.whl")
    return sdist, wheel


def importlib_missing(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is None


def test_the_sdist_and_the_wheel_hold_every_file_of_the_tree(dists):
    sdist, wheel = dists
    with zipfile.ZipFile(wheel) as zf:
        in_wheel = {n for n in zf.namelist() if ".dist-info/" not in n}
    expected = tree_files()
    assert set(expected.values()) - in_wheel == set(), "the wheel misses these files of the tree"
    assert in_wheel - set(expected.values()) == set(), "the wheel holds files that are not in the tree"
    assert "trainspec/py.typed" in in_wheel  # the API's types reach its users (PEP 561)
    # Kubeflow Trainer's shipped runtimes, package data a spec on torch-distributed & co. expands without --runtime
    shipped = {f"trainspec/compiler/shipped_runtimes/{name}_distributed.yaml"
               for name in ("torch", "deepspeed", "mlx", "jax", "xgboost")}
    assert shipped | {"trainspec/compiler/shipped_runtimes/README.md"} <= in_wheel
    with tarfile.open(sdist) as tf:
        top = tf.getnames()[0].split("/")[0]
        in_sdist = {n.removeprefix(top + "/") for n in tf.getnames()}
    assert set(expected) - in_sdist == set(), "the sdist misses these files of the tree"


@pytest.fixture(scope="module")
def installed(dists, tmp_path_factory) -> tuple[Path, Path]:
    """(the venv's bin folder, a working folder outside the checkout with a decoy `trainspec/` folder)."""
    _, wheel = dists
    venv = tmp_path_factory.mktemp("venv")
    done = _run(sys.executable, "-m", "venv", venv, cwd=venv)
    assert done.returncode == 0, done.stderr
    extras = "[helm]" if not importlib_missing("helm_python") else ""
    done = _run(venv / "bin" / "python", "-m", "pip", "install", "-q", f"{wheel}{extras}", cwd=venv, timeout=900)
    if done.returncode != 0:
        unavailable(f"cannot install the wheel's dependencies: {done.stderr.strip().splitlines()[-1:]}")
    work = tmp_path_factory.mktemp("work")
    (work / "trainspec").mkdir()  # what a clone named `trainspec` looks like from its parent folder
    return venv / "bin", work


def test_every_command_runs_from_the_wheel(installed, tmp_path):
    bin_dir, work = installed
    ts = bin_dir / "trainspec"
    spec = SPECS / "tf-ps.yaml"

    def ok(*args: str | os.PathLike, via_module: bool = False, stdin: str | None = None) -> str:
        cmd = [bin_dir / "python", "-m", "trainspec", *args] if via_module else [ts, *args]
        done = subprocess.run([str(c) for c in cmd], cwd=work, capture_output=True, text=True, timeout=300,
                              input=stdin)
        assert done.returncode == 0, f"trainspec {' '.join(map(str, args))}: {done.stderr[-1500:]}"
        assert "Traceback" not in done.stderr
        return done.stdout

    assert ok("--version").startswith("trainspec ")
    assert ok("--version", via_module=True).startswith("trainspec ")  # installed package wins over ./trainspec/
    ok("validate", *sorted(SPECS.glob("*.yaml")))
    for target in ("k8s", "kubeflow", "volcano", "jobset", "compose"):
        assert ok("compile", spec, "--target", target) == (GOLDEN / "tf-ps" / f"{target}.yaml").read_text()
    assert ok("compile", SPECS / "pytorch-ddp.yaml", "--target", "trainjob") == \
        (GOLDEN / "pytorch-ddp" / "trainjob.yaml").read_text()
    for target in ("jobset", "k8s"):  # on the torch-distributed the wheel ships (no --runtime)
        assert ok("compile", SPECS / "torch-on-runtime.yaml", "--target", target) == \
            (GOLDEN / "torch-on-runtime" / f"{target}.yaml").read_text()
    ok("compile", spec, "--target", "helm", "-o", tmp_path / "chart")
    assert (tmp_path / "chart" / "Chart.yaml").is_file() and (tmp_path / "chart" / "templates").is_dir()
    ok("build", SPECS, "-o", tmp_path / "deploy")
    ok("build", SPECS, "-o", tmp_path / "deploy", "--check")
    manifest = next(p for p in sorted((ROOT / "tests" / "import_manifests").glob("*.yaml")))
    assert "kind: TrainingJob" in ok("import", manifest)
    assert "graph" in ok("graph", spec) or "flowchart" in ok("graph", spec)
    ok("schema", "-o", tmp_path / "schema.json")
    assert (tmp_path / "schema.json").stat().st_size > 1000
    assert "trainspec" in ok("completion", "bash")
    if shutil.which("bash"):  # the script loads in bash and registers the command, as the README shows
        done = subprocess.run(["bash", "-c", f"source <({ts} completion bash); complete -p trainspec"], cwd=work,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "_shtab_trainspec trainspec" in done.stdout, done.stderr
    for shell in ("zsh", "fish"):
        assert "trainspec" in ok("completion", shell)
    tfjob = ROOT / "tests" / "import_manifests" / "tf-dist-mnist.yaml"
    ok("migrate", tfjob, "--to", "jobset", "-o", tmp_path / "jobset.yaml")
    assert "kind: JobSet" in (tmp_path / "jobset.yaml").read_text()
    assert "would be applied (dry run: client)" in ok("apply", spec, "--dry-run=client")
    usage = ok("--help")
    commands = ["validate", "compile", "build", "diff", "graph", "completion", "import", "migrate", "schema",
                "run", "ps", "logs", "down", "gc", "apply"]
    for command in commands:
        assert command in usage
        assert ok(command, "--help").startswith(f"usage: trainspec {command}")

    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(spec, repo / "job.yaml")
    for git in (["init", "-q"], ["add", "job.yaml"],
                ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "job"]):
        assert subprocess.run(["git", *git], cwd=repo, capture_output=True).returncode == 0
    (repo / "job.yaml").write_text(spec.read_text().replace("replicas: 2", "replicas: 3", 1))
    done = subprocess.run([str(ts), "diff", "HEAD:job.yaml", "job.yaml"], cwd=repo, capture_output=True, text=True)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.strip(), "diff of a changed spec printed nothing"


@pytest.mark.docker
def test_the_wheel_runs_a_compiled_kubeflow_file_and_a_chart_on_docker(installed, test_image, tmp_path):
    bin_dir, work = installed
    if importlib_missing("helm_python"):
        unavailable("helm-python-sdk is missing (pip install -e '.[test]')")
    image = "python:3.12-slim=" + test_image
    for form in (GOLDEN / "tf-single" / "kubeflow.yaml", GOLDEN / "tf-single" / "helm"):
        done = subprocess.run([str(bin_dir / "trainspec"), "run", str(form), "--image", image, "--cpu-only",
                               "--offline", "--state-dir", str(tmp_path / "state")],
                              cwd=work, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"run {form.name}: {done.stdout[-1500:]}{done.stderr[-1500:]}"
        assert "SUCCEEDED" in done.stdout + done.stderr
