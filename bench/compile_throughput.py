"""Compile throughput: trainspec vs the serialization floor vs Helm, side by side, one process.

  python bench/compile_throughput.py [--specs 300] [--repeat 3]

1. `trainspec build` of a generated corpus (all targets, cache off) and, for the YAML
   targets, the same output objects dumped with PyYAML's C dumper (the floor).
2. Per target: compiling the corpus to that one target (a target that cannot run a job at
   all, e.g. trainjob for TensorFlow, MXNet or PyTorch roles that differ, is left out for it,
   as `trainspec build` does; the table says for how many specs it wrote a file).
3. Per spec: compiling it to all targets vs a real Helm engine (helm-python-sdk) rendering
   the chart trainspec generated for it (chart loaded beforehand), with `workload: jobs`
   (the default, the k8s objects) and `workload: jobset` (the jobset target's objects).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml  # noqa: E402
from corpus import write_corpus  # noqa: E402
from timing import interleaved, machine, ms, run_bench, table  # noqa: E402

YAML_TARGETS = ("k8s", "kubeflow", "volcano", "jobset", "trainjob", "compose")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--specs", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from trainspec.build import compile_spec as compile_all
    from trainspec.targets import available, load_plans

    # a build over several targets leaves out those a job cannot run on at all (trainjob for TF...)
    compile_spec = functools.partial(compile_all, skip_unsupported=True)

    targets = available()
    yaml_targets = tuple(t for t in YAML_TARGETS if t in targets)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = write_corpus(Path(tmp) / "specs", args.specs)
        paths = [str(p) for p in corpus]

        def build(which):
            def run():
                for path in paths:
                    compile_spec(path, which, load_plans)
            return run

        outputs = {}
        for path in paths:
            out = compile_spec(path, yaml_targets, load_plans)
            outputs[path] = [d for rel, text in out.texts.items() for d in yaml.safe_load_all(text) if d]
        objects = [doc for docs in outputs.values() for doc in docs]
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

        def floor():
            for docs in outputs.values():
                yaml.dump_all(docs, Dumper=dumper, sort_keys=False, default_flow_style=False)

        results = interleaved({"all": build(targets), "yaml": build(yaml_targets), "floor": floor}, args.repeat)
        print(f"# Compile throughput — {machine()}")
        print(f"corpus: {len(paths)} specs, {sum(len(d) for d in outputs.values())} objects in the YAML targets\n")
        print(table(["measure", "ms", "ratio to floor"], [
            [f"trainspec, {len(targets)} targets ({', '.join(targets)})", ms(results["all"]),
             f"{results['all'] / results['floor']:.2f}x"],
            [f"trainspec, YAML targets ({', '.join(yaml_targets)})", ms(results["yaml"]),
             f"{results['yaml'] / results['floor']:.2f}x"],
            ["floor: same objects, yaml.dump_all(CSafeDumper)", ms(results["floor"]), "1.00x"],
        ]))
        print(f"\ngoal: trainspec (YAML targets) within 2x of the floor: "
              f"{'met' if results['yaml'] <= 2 * results['floor'] else 'missed'}")
        del objects

        each = interleaved({t: build((t,)) for t in targets}, args.repeat)
        written = {t: sum(1 for path in paths if compile_spec(path, (t,), load_plans).texts) for t in targets}
        print(f"\n# Per target: the corpus compiled to one target (side by side, {args.repeat} interleaved runs)\n")
        print(table(["target", "ms", "specs written", "ms per spec written", "ratio to k8s"], [
            [t, ms(each[t]), f"{written[t]}/{len(paths)}", f"{each[t] * 1000 / max(written[t], 1):.2f}",
             f"{each[t] / each['k8s']:.2f}x" if "k8s" in each else "-"] for t in targets]))
        print("(each row includes loading, validating and planning every spec: the part no target saves)")

        if "helm" not in targets:
            print("\nhelm target not available: Helm comparison skipped")
            return 0
        from helm_python.chart import Chart

        charts = []
        for path in paths:
            (plan,) = load_plans(path)
            folder = Path(tmp) / "charts" / plan.name
            out = compile_spec(path, ("helm",), load_plans)
            for rel, text in out.texts.items():
                dest = folder / os.path.relpath(rel, os.path.join(plan.name, "helm"))
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(text)
            charts.append((path, Chart.load(str(folder)), plan.name, plan.namespace))

        def helm_render():
            for _, chart, name, namespace in charts:
                chart.render(name=name, namespace=namespace)

        def helm_render_jobset():
            for _, chart, name, namespace in charts:
                chart.render({"workload": "jobset"}, name=name, namespace=namespace)

        def trainspec_all():
            for path, *_ in charts:
                compile_spec(path, targets, load_plans)

        peer = interleaved({"trainspec": trainspec_all, "helm": helm_render, "helm_jobset": helm_render_jobset},
                           args.repeat)
        per = len(charts)
        print(f"\n# Per spec: trainspec to all {len(targets)} targets vs Helm rendering the spec's chart\n")
        print(table(["measure", "total ms", "ms per spec", "ratio to Helm"], [
            [f"trainspec compile (load+validate+plan+{len(targets)} targets)", ms(peer["trainspec"]),
             f"{peer['trainspec'] * 1000 / per:.2f}", f"{peer['trainspec'] / peer['helm']:.2f}x"],
            ["Helm render (helm-python-sdk, chart preloaded)", ms(peer["helm"]), f"{peer['helm'] * 1000 / per:.2f}",
             "1.00x"],
            ["Helm render, workload: jobset", ms(peer["helm_jobset"]), f"{peer['helm_jobset'] * 1000 / per:.2f}",
             f"{peer['helm_jobset'] / peer['helm']:.2f}x"],
        ]))
        print(f"\ngoal: trainspec to all targets faster than Helm renders the chart: "
              f"{'met' if peer['trainspec'] < peer['helm'] else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_bench(main))
