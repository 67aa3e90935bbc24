"""Scale with replicas: compile time and output bytes per replica, 1 to 4,096 replicas.

  python bench/scale.py [--targets k8s,kubeflow,volcano,jobset,trainjob,compose,helm] [--max 4096]
                        [--frameworks tensorflow,pytorch,mpi,xgboost]

Goal: bytes per replica flat (total linear) and time per replica flat.  A target that
cannot run the job at all (trainjob for TensorFlow: no Trainer runtime) shows "n/a", one
that refuses its size (compose past 64 MiB) "refused".

Then the JobSet forms at 16 vs 4,096 workers (every framework): their output should be
nearly flat in total, since host lists are the only part that grows, once, in the ConfigMap.

Last, issue 31's bound: for every framework and cluster target (k8s, jobset, volcano, kubeflow,
trainjob), bytes per replica at 16 and 1,024 workers and their ratio, which must stay at most
1.2x (a replica's own bytes fixed, host lists once per job) or the target refuses the size.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml  # noqa: E402
from corpus import replica_job, worker_job  # noqa: E402
from timing import machine, median_time, run_bench, table  # noqa: E402

SIZES = (1, 8, 64, 512, 4096)
FLAT_WORKERS = (16, 4096)
FLAT_TARGETS = ("jobset", "trainjob")
GROWTH_WORKERS = (16, 1024)
GROWTH_TARGETS = ("k8s", "jobset", "volcano", "kubeflow", "trainjob")
GROWTH_FRAMEWORKS = ("tensorflow", "pytorch", "mxnet", "mpi", "xgboost", "paddle", "jax", "generic")
GROWTH_BOUND = 1.2


def _cell(target: str, plan, per_target: dict, fitting: tuple, replicas: int) -> str:
    from trainspec.targets import unsupported

    if unsupported(target, plan):
        return "n/a"
    if target not in fitting:
        return "refused"
    return f"{per_target.get(target, 0) / replicas:.0f}"


def scale_tables(tmp: str, targets: tuple[str, ...], frameworks: list[str], largest: int) -> None:
    from trainspec.build import compile_spec
    from trainspec.targets import load_plans, unsupported

    for framework in frameworks:
        rows = []
        for size in (s for s in SIZES if s <= largest):
            path = Path(tmp) / f"{framework}-{size}.yaml"
            path.write_text(yaml.safe_dump(replica_job(framework, size)))
            (plan,) = load_plans(str(path))
            replicas = plan.total_replicas
            result = {}
            # A target that refuses this size (compiler/limits.py: e.g. compose past 64 MiB) is left out,
            # and so is one that cannot run the job at all (targets/trainjob/checks.py: trainjob for TensorFlow).
            fitting = tuple(t for t in targets if not plan.target_errors.get(t) and not unsupported(t, plan))

            def once(fitting=fitting, path=path, result=result):
                result["out"] = compile_spec(str(path), fitting, load_plans)

            seconds = median_time(once, repeat=3 if size <= 512 else 1)
            per_target: dict[str, int] = {}
            for rel, text in result["out"].texts.items():
                target = rel.split("/")[1].split(".")[0]
                per_target[target] = per_target.get(target, 0) + len(text.encode())
            total = sum(per_target.values())
            rows.append([replicas, f"{seconds * 1000:.1f}", f"{seconds * 1e6 / replicas:.0f}",
                         f"{total / 1024:.1f}", f"{total / replicas:.0f}"]
                        + [_cell(t, plan, per_target, fitting, replicas) for t in targets])
        print(f"## {framework}\n")
        print(table(["replicas", "compile ms", "µs/replica", "output KiB", "bytes/replica"]
                    + [f"{t} B/rep" for t in targets], rows))
        print()
    print("Bytes per replica should fall toward a constant as replicas grow (fixed per-job overhead is spread);\n"
          "a value that grows with the replica count would mean quadratic output.\n")


def _config_map_bytes(text: str) -> int:
    return sum(len(doc.encode()) + 5 for doc in text.split("\n---\n") if "\nkind: ConfigMap\n" in f"\n{doc}\n")


def flatness_table(tmp: str, targets: tuple[str, ...]) -> None:
    """Bytes of the jobset / trainjob output at 16 vs 4,096 workers, side by side."""
    from trainspec.targets import load_plans, render, unsupported

    rows = []
    for framework in ("tensorflow", "pytorch", "mxnet", "mpi"):
        for target in (t for t in FLAT_TARGETS if t in targets):
            sizes = []
            for workers in FLAT_WORKERS:
                path = Path(tmp) / f"flat-{framework}-{workers}.yaml"
                path.write_text(yaml.safe_dump(worker_job(framework, workers)))
                (plan,) = load_plans(str(path))
                if unsupported(target, plan):
                    break
                (text,) = render(target, plan).values()
                total = len(text.encode())
                sizes.append((plan.total_replicas, total, _config_map_bytes(text)))
            if len(sizes) < len(FLAT_WORKERS):
                continue
            (r_small, small, cm_small), (r_large, large, cm_large) = sizes
            rows.append([framework, target, small, large, f"{small / r_small:.0f}", f"{large / r_large:.1f}",
                         f"{large / small:.2f}x", f"{(large - cm_large) / (small - cm_small):.3f}x",
                         f"{(cm_large - cm_small) / (r_large - r_small):.1f}"])
    print("## JobSet forms: 16 vs 4,096 workers\n")
    print(table(["framework", "target", "bytes @16", "bytes @4096", "B/rep @16", "B/rep @4096",
                 "total ratio", "ratio without ConfigMap", "ConfigMap B per added replica"], rows))
    print("\nThe workload objects (JobSet, TrainingRuntime, TrainJob) do not grow with workers; the host lists\n"
          "(and TF cluster / hostfile) grow once, in the topology ConfigMap, as on the k8s target's Indexed\n"
          "Jobs (k8s B/rep in the tables above).")


def growth_table(tmp: str) -> int:
    """Bytes per replica at 16 and 1,024 workers, every framework x cluster target; returns how many exceed 1.2x."""
    from trainspec.targets import load_plans, render, unsupported

    rows, over = [], 0
    for framework in GROWTH_FRAMEWORKS:
        for target in GROWTH_TARGETS:
            cells = []
            for workers in GROWTH_WORKERS:
                path = Path(tmp) / f"growth-{framework}-{workers}.yaml"
                path.write_text(yaml.safe_dump(worker_job(framework, workers)))
                (plan,) = load_plans(str(path))
                if unsupported(target, plan):
                    cells.append("n/a")
                    continue
                if plan.target_errors.get(target):  # a size limit (compiler/limits.py) or a check
                    cells.append("refused")
                    continue
                text = "".join(render(target, plan).values())
                cells.append(len(text.encode()) / plan.total_replicas)
            if all(isinstance(c, float) for c in cells):
                ratio = cells[1] / cells[0]
                over += ratio > GROWTH_BOUND
                verdict = f"{ratio:.2f}x" + (" OVER" if ratio > GROWTH_BOUND else "")
            else:
                verdict = "-"
            rows.append([framework, target] + [f"{c:.0f}" if isinstance(c, float) else c for c in cells] + [verdict])
    print(f"## Bytes per replica, {GROWTH_WORKERS[0]} vs {GROWTH_WORKERS[1]} workers (bound {GROWTH_BOUND}x)\n")
    print(table(["framework", "target", f"B/rep @{GROWTH_WORKERS[0]}", f"B/rep @{GROWTH_WORKERS[1]}", "growth"], rows))
    print(f"\n{over} framework/target pair(s) over {GROWTH_BOUND}x.\n")
    return over


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", default="")
    parser.add_argument("--max", type=int, default=4096)
    parser.add_argument("--frameworks", default="tensorflow,pytorch,mpi,xgboost")
    parser.add_argument("--growth-only", action="store_true", help="only the 16 vs 1,024 workers table")
    args = parser.parse_args()

    from trainspec.targets import available

    targets = tuple(t for t in (args.targets.split(",") if args.targets else available()) if t)
    print(f"# Scale with replicas — {machine()}\ntargets: {', '.join(targets)}\n")
    with tempfile.TemporaryDirectory() as tmp:
        if not args.growth_only:
            scale_tables(tmp, targets, [f for f in args.frameworks.split(",") if f], args.max)
            flatness_table(tmp, targets)
        growth_table(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(run_bench(main))
