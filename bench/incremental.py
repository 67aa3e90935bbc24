"""Incremental build: one spec of 300 changed, and `--check` of an up-to-date tree, vs a full build.

  python bench/incremental.py [--specs 300]

Runs the CLI as a user does (`trainspec build specs -o out`), each in a fresh process.
Goal: both at most 10% of a full build.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import write_corpus  # noqa: E402
from timing import machine, ms, run, run_bench, table  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        specs = Path(tmp) / "specs"
        paths = write_corpus(specs, args.specs)
        out = str(Path(tmp) / "out")
        env = dict(os.environ, XDG_CACHE_HOME=str(Path(tmp) / "cache"))
        cli = [sys.executable, "-m", "trainspec", "build", str(specs), "-o", out]
        cold = run(cli + ["--no-cache"], env=env)          # full build, nothing cached, all files written
        full = run(cli + ["--no-cache"], env=env)          # full compile, files unchanged
        run(cli, env=env)                                  # fill the cache
        one = paths[len(paths) // 2]
        one.write_text(one.read_text().replace("--epochs", "--num-epochs"))
        incremental = run(cli, env=env)
        check = run(cli + ["--check"], env=env)
        check_full = run(cli + ["--check", "--no-cache"], env=env)
    print(f"# Incremental build — {machine()}\ncorpus: {args.specs} specs, all targets\n")
    print(table(["run", "ms", "ratio to full build"], [
        ["full build into an empty folder", ms(cold), f"{cold / full:.2f}"],
        ["full build (--no-cache), outputs unchanged", ms(full), "1.00"],
        ["one spec changed (cache)", ms(incremental), f"{incremental / full:.3f}"],
        ["--check, up to date (cache)", ms(check), f"{check / full:.3f}"],
        ["--check, up to date (--no-cache)", ms(check_full), f"{check_full / full:.3f}"],
    ]))
    ok = incremental <= 0.1 * full and check <= 0.1 * full
    print(f"\ngoal: incremental build and --check at most 10% of a full build: {'met' if ok else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_bench(main))
