"""CLI start-up: `trainspec --version` and `trainspec compile one.yaml` vs a bare interpreter.

  python bench/startup.py [--repeat 15]

Goal: compiling one spec costs at most 3x a bare `python -c pass`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import machine, ms, run, run_bench, table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    spec = str(ROOT / "specs" / "tf-ps.yaml")
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "trainspec --version": [sys.executable, "-m", "trainspec", "--version"],
        "trainspec compile tf-ps.yaml --target k8s": [sys.executable, "-m", "trainspec", "compile", spec,
                                                      "--target", "k8s"],
        "trainspec validate tf-ps.yaml": [sys.executable, "-m", "trainspec", "validate", spec],
    }
    # As installed for a user: bytecode cached (some shells here set PYTHONDONTWRITEBYTECODE,
    # which makes every start re-compile trainspec's sources), and one warm-up run.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for cmd in commands.values():
        run(cmd, env=env)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, cmd in commands.items():
            samples[name].append(run(cmd, env=env))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    base = medians["python -c pass"]
    print(f"# CLI start-up — {machine()}\n")
    print(table(["command", "median ms", "ratio to python -c pass"],
                [[name, ms(value), f"{value / base:.2f}x"] for name, value in medians.items()]))
    ratio = medians["trainspec compile tf-ps.yaml --target k8s"] / base
    print(f"\ngoal: compile of one spec at most 3x bare interpreter start: {'met' if ratio <= 3 else 'missed'} "
          f"({ratio:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(run_bench(main))
