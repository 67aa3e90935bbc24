"""Generated valid specs (tests/fuzzing.py) compile for jobset and trainjob, or are refused with a clear error.

jobset may refuse (restartPolicy Always; per-replica text that $(TRAINSPEC_INDEX)
cannot rebuild; over-long pod names); trainjob may refuse frameworks and
topologies Trainer v2 cannot run.  Whatever compiles passes the strict CRD schema,
and the jobset output is the same bytes twice.
"""

from __future__ import annotations

import os
import tempfile

import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from trainspec.compiler import SpecErrors
from trainspec.targets import render

import fuzzing
import schemas

EXAMPLES = 40  # x 4 frameworks
# Generated specs: the slow set (`pytest -m "not slow"` leaves them out), as tests/compiler/test_fuzz.py.
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("framework", sorted(fuzzing.TOPOLOGIES))
def test_valid_specs_compile_or_are_refused_clearly(framework):
    seen = {"jobset": 0, "trainjob": 0}
    with tempfile.TemporaryDirectory(prefix="trainspec-fuzz-js-") as folder:
        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                         HealthCheck.filter_too_much, HealthCheck.large_base_example])
        @given(doc=fuzzing.valid_specs(framework))
        def run(doc):
            path = os.path.join(folder, "spec.yaml")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(fuzzing.to_text(doc, ".yaml"))
            outcome = fuzzing.load_outcome(path)
            assert not isinstance(outcome, SpecErrors), str(outcome)
            (plan,) = outcome
            for target in ("jobset", "trainjob"):
                try:
                    files = render(target, plan)
                except SpecErrors as exc:
                    assert all(e.message.startswith(f"target {target}: ") for e in exc.errors), str(exc)
                    continue
                seen[target] += 1
                if target == "jobset":
                    assert render(target, plan) == files
                for text in files.values():
                    for d in yaml.safe_load_all(text):
                        if d and schemas.has_schema(d):
                            assert schemas.errors(d) == [], (target, d["kind"])

        run()
    assert seen["jobset"] > 0
