"""Scale with replicas: compile time and output bytes per replica, 1 to 4,096 replicas.

  python bench/scale.py [--targets k8s,kubeflow,volcano,compose,helm] [--max 4096]

Goal: bytes per replica flat (total linear) and time per replica flat.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml  # noqa: E402

from corpus import replica_job  # noqa: E402
from timing import machine, median_time, run_bench, table  # noqa: E402

SIZES = (1, 8, 64, 512, 4096)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", default="")
    parser.add_argument("--max", type=int, default=4096)
    args = parser.parse_args()

    from trainspec.build import compile_spec
    from trainspec.compiler import load_plans
    from trainspec.compiler.limits import problems
    from trainspec.targets import available

    targets = tuple(t for t in (args.targets.split(",") if args.targets else available()) if t)
    print(f"# Scale with replicas — {machine()}\ntargets: {', '.join(targets)}\n")
    with tempfile.TemporaryDirectory() as tmp:
        for framework in ("tensorflow", "pytorch"):
            rows = []
            for size in (s for s in SIZES if s <= args.max):
                path = Path(tmp) / f"{framework}-{size}.yaml"
                path.write_text(yaml.safe_dump(replica_job(framework, size)))
                (plan,) = load_plans(str(path))
                replicas = plan.total_replicas
                result = {}
                # A target that refuses this size (compiler/limits.py: e.g. compose past 64 MiB) is left out.
                fitting = tuple(t for t in targets if not problems(plan, t))

                def once(fitting=fitting):
                    result["out"] = compile_spec(str(path), fitting, load_plans)

                seconds = median_time(once, repeat=3 if size <= 512 else 1)
                per_target = {}
                for rel, text in result["out"].texts.items():
                    target = rel.split("/")[1].split(".")[0]
                    per_target[target] = per_target.get(target, 0) + len(text.encode())
                total = sum(per_target.values())
                rows.append([replicas, f"{seconds * 1000:.1f}", f"{seconds * 1e6 / replicas:.0f}",
                             f"{total / 1024:.1f}", f"{total / replicas:.0f}"]
                            + [f"{per_target.get(t, 0) / replicas:.0f}" if t in fitting else "refused"
                               for t in targets])
            print(f"## {framework}\n")
            print(table(["replicas", "compile ms", "µs/replica", "output KiB", "bytes/replica"]
                        + [f"{t} B/rep" for t in targets], rows))
            print()
    print("Bytes per replica should fall toward a constant as replicas grow (fixed per-job overhead is spread);\n"
          "a value that grows with the replica count would mean quadratic output.")
    return 0


if __name__ == "__main__":
    sys.exit(run_bench(main))
