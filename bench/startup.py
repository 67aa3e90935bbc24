"""CLI start-up: `trainspec --version` and `trainspec compile one.yaml` vs a bare interpreter, two installs.

  python bench/startup.py [--repeat 15] [--keep VENV]

(a) editable: this interpreter's install, as the README does it (`pip install -e .`, the
    setuptools editable finder);
(b) regular: the README's way, `pip install .` of this repository (with its dependencies,
    from the package index) into a new venv of its own; the bench checks `trainspec.__file__`
    to be sure it runs that copy.

Each install is compared with its own `python -c pass`, runs interleaved, so load on a shared
machine hits all alike.  Two measures: wall time (median), and CPU time of the child
(user+sys from getrusage(RUSAGE_CHILDREN), median), which a loaded machine disturbs less.

Goals: compiling one spec costs at most 2x a bare `python -c pass` (issue 10), and no more than
`kubectl kustomize` of the same compiled output (issue 19: what `make build-manifests` would run
otherwise), printed side by side when kubectl is on PATH.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import machine, run_bench, table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GOAL = 2.0
KUSTOMIZE_GOAL = 1.0


# Children run outside the repository: `python -m` and `-c` put the working folder first on
# sys.path, where the repository's trainspec/ would shadow the install being measured.
CWD = tempfile.gettempdir()


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds: user+sys) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=CWD)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def regular_install(venv: Path) -> Path:
    """A venv of its own with a regular, non-editable install of this repo, as the README makes it."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # From a copy: setuptools builds in the source folder (build/), which is not the bench's to leave behind.
    source = venv.parent / "trainspec-src"
    shutil.rmtree(source, ignore_errors=True)
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", "golden"))
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(source)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(source)],
                   check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(source, ignore_errors=True)
    return python


def where(python: str, env: dict[str, str]) -> str:
    return subprocess.run([python, "-c", "import trainspec; print(trainspec.__file__)"], check=True,
                          capture_output=True, text=True, env=env, cwd=CWD).stdout.strip()


def commands(python: str) -> dict[str, list[str]]:
    spec = str(ROOT / "specs" / "tf-ps.yaml")
    return {
        "python -c pass": [python, "-c", "pass"],
        "trainspec --version": [python, "-m", "trainspec", "--version"],
        "trainspec compile tf-ps.yaml -t k8s": [python, "-m", "trainspec", "compile", spec, "--target", "k8s"],
        "trainspec validate tf-ps.yaml": [python, "-m", "trainspec", "validate", spec],
    }


def kustomize_command(folder: Path) -> list[str] | None:
    """`kubectl kustomize` of tf-ps's compiled k8s output, or None without kubectl."""
    kubectl = shutil.which("kubectl")
    if not kubectl:
        return None
    compiled = subprocess.run([sys.executable, "-m", "trainspec", "compile", str(ROOT / "specs" / "tf-ps.yaml"),
                               "--target", "k8s"], check=True, capture_output=True, text=True, cwd=CWD).stdout
    (folder / "k8s.yaml").write_text(compiled)
    (folder / "kustomization.yaml").write_text("resources:\n- k8s.yaml\n")
    return [kubectl, "kustomize", str(folder)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--keep", metavar="VENV", help="build (b) in this folder, kept (default: a temporary one)")
    args = parser.parse_args()
    # As installed for a user: bytecode cached (some shells here set PYTHONDONTWRITEBYTECODE,
    # which makes every start re-compile trainspec's sources), and one warm-up run each.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    with tempfile.TemporaryDirectory(prefix="trainspec-startup-") as tmp:
        venv = Path(args.keep) if args.keep else Path(tmp) / "venv"
        installs = {"editable": sys.executable, "regular": str(regular_install(venv))}
        locations = {name: where(python, env) for name, python in installs.items()}
        if not locations["editable"].startswith(str(ROOT)):
            print(f"(a) imports trainspec from {locations['editable']}, not this repository", file=sys.stderr)
            return 1
        if locations["regular"].startswith(str(ROOT)):
            print(f"(b) imports the editable copy ({locations['regular']}), not the regular install", file=sys.stderr)
            return 1
        runs = {(install, name): cmd for install, python in installs.items()
                for name, cmd in commands(python).items()}
        kustomize = kustomize_command(Path(tmp))
        if kustomize:
            runs["kubectl", "kubectl kustomize (tf-ps k8s output)"] = kustomize
        for cmd in runs.values():
            timed(cmd, env)
        samples: dict[tuple[str, str], list[tuple[float, float]]] = {key: [] for key in runs}
        for _ in range(args.repeat):
            for key, cmd in runs.items():
                samples[key].append(timed(cmd, env))
    wall = {key: statistics.median(s[0] for s in values) for key, values in samples.items()}
    cpu = {key: statistics.median(s[1] for s in values) for key, values in samples.items()}
    print(f"# CLI start-up, two installs — {machine()}\n")
    for install, location in locations.items():
        print(f"{install}: trainspec from {location}")
    print()
    rows = []
    for install, name in runs:
        if install == "kubectl":
            ms = wall[install, name] * 1000, cpu[install, name] * 1000
            rows.append([install, name, f"{ms[0]:.1f}", "", f"{ms[1]:.1f}", ""])
            continue
        base_wall, base_cpu = wall[install, "python -c pass"], cpu[install, "python -c pass"]
        rows.append([install, name, f"{wall[install, name] * 1000:.1f}", f"{wall[install, name] / base_wall:.2f}x",
                     f"{cpu[install, name] * 1000:.1f}", f"{cpu[install, name] / base_cpu:.2f}x"])
    print(table(["install", "command", "wall ms", "wall ratio", "CPU ms", "CPU ratio"], rows))
    print()
    for install in installs:
        name = "trainspec compile tf-ps.yaml -t k8s"
        ratio = wall[install, name] / wall[install, "python -c pass"]
        cpu_ratio = cpu[install, name] / cpu[install, "python -c pass"]
        print(f"goal ({install}): compile of one spec at most {GOAL:g}x its bare interpreter: "
              f"{'met' if ratio <= GOAL else 'missed'} (wall {ratio:.2f}x, CPU {cpu_ratio:.2f}x)")
    if kustomize:
        key = "kubectl", "kubectl kustomize (tf-ps k8s output)"
        for install in installs:
            name = "trainspec compile tf-ps.yaml -t k8s"
            ratio, cpu_ratio = wall[install, name] / wall[key], cpu[install, name] / cpu[key]
            print(f"goal ({install}): compile of one spec at most {KUSTOMIZE_GOAL:g}x `kubectl kustomize` of it: "
                  f"{'met' if ratio <= KUSTOMIZE_GOAL else 'missed'} (wall {ratio:.2f}x, CPU {cpu_ratio:.2f}x)")
    else:
        print("kubectl is not on PATH: the comparison with `kubectl kustomize` was not run")
    return 0


if __name__ == "__main__":
    sys.exit(run_bench(main))
