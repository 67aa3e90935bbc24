"""A spec with `spec.patches.k8s` runs as its k8s output with the patches applied, as `build` writes it: the
plan alone would run the objects before the patches, a silent change (an imported foreign Job's renamed pods
waited for hosts that never came).  The command and `trainspec.run` hand the emulator the same callbacks."""

from __future__ import annotations

import argparse
import textwrap

import pytest

from trainspec.compiler.errors import UsageError
from trainspec.emulator.readers import dispatch
from trainspec.on_runtime import install

SPEC = textwrap.dedent("""\
    apiVersion: trainspec/v1.2
    kind: TrainingJob
    metadata:
      name: patched
    spec:
      framework: generic
      image: python:3.12-slim
      command: [python3, -c, "import os; print(os.environ['FROM_PATCH'])"]
      roles:
        worker:
          replicas: 2
      patches:
        k8s:
          - {op: add, path: /2/spec/template/spec/containers/0/env/-, value: {name: FROM_PATCH, value: "yes"}}
    """)


def _args() -> argparse.Namespace:
    args = argparse.Namespace(tla=None, ext_var=None, jpath=None)
    install(args)
    return args


def test_the_patches_reach_every_replica(tmp_path):
    (tmp_path / "spec.yaml").write_text(SPEC)
    model = dispatch.load(str(tmp_path / "spec.yaml"), state_dir=str(tmp_path / "st"), check_missing=False,
                          spec_patched=_args().spec_patched)
    assert [r.name for r in model.replicas] == ["patched-worker-0", "patched-worker-1"]
    for replica in model.replicas:
        assert [(e.name, e.value) for e in replica.main.env if e.name == "FROM_PATCH"] == [("FROM_PATCH", "yes")]


def test_without_the_compiled_objects_the_spec_is_refused_not_run_unpatched(tmp_path):
    (tmp_path / "spec.yaml").write_text(SPEC)
    with pytest.raises(UsageError, match=r"spec.patches.k8s: the spec has k8s patches.*trainspec run k8s.yaml"):
        dispatch.load(str(tmp_path / "spec.yaml"), state_dir=str(tmp_path / "st"), check_missing=False)


def test_a_spec_without_k8s_patches_runs_from_its_plan(tmp_path):
    (tmp_path / "spec.yaml").write_text(SPEC.replace("  patches:\n    k8s:\n", "  patches:\n    jobset:\n"))
    model = dispatch.load(str(tmp_path / "spec.yaml"), state_dir=str(tmp_path / "st"), check_missing=False,
                          spec_patched=lambda plan: pytest.fail("compiled for k8s without k8s patches"))
    assert all(not [e for e in r.main.env if e.name == "FROM_PATCH"] for r in model.replicas)


def test_set_edits_the_spec_before_its_patched_objects_are_made(tmp_path):
    from trainspec.emulator.readers import overrides

    (tmp_path / "spec.yaml").write_text(SPEC)
    with overrides.using(["spec.roles.worker.replicas=3"]):  # `run --set`: dropped before, on a patched spec
        model = dispatch.load(str(tmp_path / "spec.yaml"), state_dir=str(tmp_path / "st"), check_missing=False,
                              spec_patched=_args().spec_patched)
    assert len(model.replicas) == 3
    assert all([e.name for e in r.main.env if e.name == "FROM_PATCH"] for r in model.replicas)


def test_a_jsonnet_spec_s_patches_are_applied_once_it_is_evaluated(tmp_path):
    import json

    import yaml

    (tmp_path / "spec.jsonnet").write_text(json.dumps(yaml.safe_load(SPEC)))
    model = dispatch.load(str(tmp_path / "spec.jsonnet"), state_dir=str(tmp_path / "st"), check_missing=False,
                          spec_patched=_args().spec_patched)
    assert [[e.value for e in r.main.env if e.name == "FROM_PATCH"] for r in model.replicas] == [["yes"], ["yes"]]
    plain = yaml.safe_load(SPEC)
    del plain["spec"]["patches"]
    (tmp_path / "plain.jsonnet").write_text(json.dumps(plain))  # no k8s patches: run from its plan
    model = dispatch.load(str(tmp_path / "plain.jsonnet"), state_dir=str(tmp_path / "st"), check_missing=False,
                          spec_patched=_args().spec_patched)
    assert len(model.replicas) == 2 and not [e for r in model.replicas for e in r.main.env if e.name == "FROM_PATCH"]
    assert "spec.patches.k8s applied" not in model.source
