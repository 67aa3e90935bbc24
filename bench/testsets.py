"""What the README's test sets cost: the fast set against its 3-minute goal, side by side with the
same set in one process (the baseline: what `-n auto` buys on this machine).

  python bench/testsets.py [--sets fast,serial,everything]

fast:        python -m pytest -n auto -m "not slow and not docker"     (goal: under 3 minutes, issue 19)
serial:      python -m pytest -n 0 -m "not slow and not docker"        (the same tests in one process)
everything:  python -m pytest -n auto --dist loadgroup                 (the README's command, what CI runs)

Each set runs once, in this interpreter's environment, from the repository; wall time and the CPU
time of the pytest process and its children (user+sys) are printed with the pass count, so a
loaded machine shows as CPU time well below cores x wall.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import machine, run_bench, table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FAST = ["-m", "not slow and not docker"]
SETS = {
    "fast": ["-n", "auto", *FAST],
    "serial": ["-n", "0", *FAST],
    "everything": ["-n", "auto", "--dist", "loadgroup"],
}
GOALS = {"fast": 180.0}


def timed(args: list[str]) -> tuple[float, float, str]:
    """(wall seconds, child CPU seconds, pytest's summary line) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTEST_ADDOPTS": ""})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines = [line for line in done.stdout.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), \
        (lines[-1].strip("= ") if lines else f"exit {done.returncode}")


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:04.1f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="fast,serial", help="comma-separated: " + ", ".join(SETS))
    args = parser.parse_args()
    chosen = [name for name in args.sets.split(",") if name]
    unknown = [name for name in chosen if name not in SETS]
    if unknown:
        parser.error(f"unknown set {unknown[0]!r}; sets: {', '.join(SETS)}")
    print(f"# Test sets — {machine()}, {os.cpu_count()} cores\n")
    results = {name: timed(SETS[name]) for name in chosen}
    rows = []
    for name, (wall, cpu, summary) in results.items():
        goal = GOALS.get(name)
        verdict = "" if goal is None else \
            f"{wall / goal:.2f}x of {minutes(goal)}: {'met' if wall <= goal else 'missed'}"
        rows.append([name, "pytest " + " ".join(SETS[name]), minutes(wall), f"{cpu:.0f} s", summary, verdict])
    print(table(["set", "command", "wall", "CPU", "result", "goal"], rows))
    if "fast" in results and "serial" in results:
        print(f"\nfast set: -n auto takes {results['fast'][0] / results['serial'][0]:.2f}x the time of one process")
    return 0


if __name__ == "__main__":
    sys.exit(run_bench(main))
