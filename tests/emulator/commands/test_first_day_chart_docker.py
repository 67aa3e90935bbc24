"""First day (issue 19): a chart compiled from a spec with `namespace: ml` runs locally with
`run CHART/ --namespace ml`, and without it the refusal says so."""

from __future__ import annotations

import importlib.util

import pytest

from emuhelpers import trainspec

pytestmark = [pytest.mark.docker,
              pytest.mark.skipif(importlib.util.find_spec("helm_python") is None, reason="helm-python-sdk missing")]

SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: nschart, namespace: ml}
spec:
  framework: jax
  image: IMAGE
  command: [python, -c, "import os; print('run', os.environ['RUN'], flush=True)"]
  env: {RUN: "{{ job.name | upper }}-{{ index }}"}
  roles: {worker: {replicas: 2}}
"""


def test_a_chart_compiled_for_a_namespace_runs_with_namespace(tmp_path, test_image, leak_check):
    (tmp_path / "job.yaml").write_text(SPEC.replace("IMAGE", test_image))
    compiled = trainspec("compile", "job.yaml", "--target", "helm", "-o", "charts/x", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    refused = trainspec("run", "charts/x", "--offline", cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "compiled for namespace ml: `trainspec run charts/x --namespace ml`" in refused.stderr, refused.stderr
    ran = trainspec("run", "charts/x", "--namespace", "ml", "--offline", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "run NSCHART-0" in ran.stdout and "run NSCHART-1" in ran.stdout, ran.stdout
    other = trainspec("run", "job.yaml", "--namespace", "ml", cwd=tmp_path)
    assert other.returncode == 2 and "--namespace is a Helm chart folder's release namespace" in other.stderr
