"""Spec v1.3 `spec.trainjob`: TrainJobs on the cluster's runtimes.

Real TrainJobs from Kubeflow Trainer's docs and examples and Kueue's docs (tests/import_manifests/trainjobs/,
each with its source URL) import under --strict, validate, and compile back to the same TrainJob; a spec
on a runtime compiles to a TrainJob only, valid against the TrainJob CRD, and the targets that need the
runtime's pods say so.
"""

from __future__ import annotations

import pathlib

import pytest
import yaml

import schemas
from helpers import SPECS, run_cli

TRAINJOBS = pathlib.Path(__file__).parents[1] / "import_manifests" / "trainjobs"
EXAMPLES = sorted(TRAINJOBS.glob("*.yaml"))
OWN_LABELS = ("app.kubernetes.io/", "trainspec.dev/")


def _quantities(value):
    """Quantities as text (`cpu: 2` and `cpu: "2"` are one quantity to the API server)."""
    if isinstance(value, dict):
        return {k: _quantities(v) for k, v in value.items()}
    return str(value)


def _comparable(job: dict) -> dict:
    """The TrainJob without what trainspec adds of its own: its labels, and the namespace it writes out."""
    job = yaml.safe_load(yaml.safe_dump(job))
    meta = job["metadata"]
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if not k.startswith(OWN_LABELS)}
    meta.pop("labels", None)
    if labels:
        meta["labels"] = labels
    if meta.get("namespace") == "default":
        meta.pop("namespace")
    trainer = job["spec"].get("trainer") or {}
    if "resourcesPerNode" in trainer:
        trainer["resourcesPerNode"] = _quantities(trainer["resourcesPerNode"])
    return job


def _trainjob(path: pathlib.Path) -> dict:
    return next(d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "TrainJob")


def test_at_least_fifteen_distinct_examples():
    assert len(EXAMPLES) >= 15
    assert len({yaml.safe_dump(_trainjob(p)["spec"]) for p in EXAMPLES}) >= 15
    for path in EXAMPLES:
        assert path.read_text().startswith("# Source: https://github.com/"), path.name


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_real_trainjob_imports_strictly_and_compiles_back_the_same(path, tmp_path):
    spec = tmp_path / "spec.yaml"
    run = run_cli("import", str(path), "--strict", "-o", str(spec))
    assert run.returncode == 0, run.stderr
    data = yaml.safe_load(spec.read_text())
    assert data["apiVersion"] == "trainspec/v1.3"
    source = _trainjob(path)
    assert data["spec"]["trainjob"]["runtime"]["name"] == source["spec"]["runtimeRef"]["name"]
    assert run_cli("validate", str(spec)).returncode == 0
    run = run_cli("compile", str(spec), "--target", "trainjob")
    assert run.returncode == 0, run.stderr
    docs = [d for d in yaml.safe_load_all(run.stdout) if d]
    assert [d["kind"] for d in docs] == ["TrainJob"]  # the cluster's runtime: no TrainingRuntime of our own
    back = docs[0]
    trainer, again = source["spec"].get("trainer") or {}, back["spec"].get("trainer") or {}
    assert back["spec"]["runtimeRef"] == source["spec"]["runtimeRef"]
    for key in ("numNodes", "image", "command", "args", "env", "numProcPerNode"):
        assert again.get(key) == trainer.get(key), key
    assert _comparable(back) == _comparable(source)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_compiled_trainjob_is_valid_against_the_crd(path, tmp_path):
    spec = tmp_path / "spec.yaml"
    assert run_cli("import", str(path), "--strict", "-o", str(spec)).returncode == 0
    run = run_cli("compile", str(spec), "--target", "trainjob")
    job = next(d for d in yaml.safe_load_all(run.stdout) if d)
    if not schemas.has_schema(job):
        pytest.skip("the TrainJob CRD is not in the reference data")
    assert schemas.errors(job) == []


def test_example_spec_compiles_to_one_trainjob_naming_its_runtime():
    run = run_cli("compile", str(SPECS / "torch-on-runtime.yaml"), "--target", "trainjob")
    assert run.returncode == 0, run.stderr
    (job,) = [d for d in yaml.safe_load_all(run.stdout) if d]
    assert job["kind"] == "TrainJob"
    assert job["spec"]["runtimeRef"] == {"name": "torch-distributed", "kind": "ClusterTrainingRuntime"}
    assert job["spec"]["trainer"]["numNodes"] == 3  # master + 2 workers
    assert job["spec"]["trainer"]["numProcPerNode"] == 1
    assert job["spec"]["suspend"] is True
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    assert job["spec"]["runtimePatches"][0]["manager"] == "example.io/platform-team"


def _on_runtime_named(tmp_path, name: str) -> pathlib.Path:
    """The example spec on the ClusterTrainingRuntime `name` (one Kubeflow Trainer does not ship: the cluster's own)."""
    spec = tmp_path / "spec.yaml"
    spec.write_text((SPECS / "torch-on-runtime.yaml").read_text().replace("name: torch-distributed", f"name: {name}"))
    return spec


@pytest.mark.parametrize("target", ["k8s", "jobset", "volcano", "kubeflow"])
def test_other_targets_name_the_runtime_they_would_need(target, tmp_path):
    run = run_cli("compile", str(_on_runtime_named(tmp_path, "my-torch")), "--target", target)
    assert run.returncode == 2
    assert "spec.trainjob.runtime" in run.stderr
    assert "ClusterTrainingRuntime 'my-torch'" in run.stderr
    assert "--target trainjob" in run.stderr
    assert "--runtime FILE|DIR" in run.stderr
    assert "torch-distributed" in run.stderr  # the names known without --runtime
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("target", ["volcano", "kubeflow"])
def test_targets_that_cannot_hold_a_shipped_runtime_point_at_those_that_expand_it(target):
    run = run_cli("compile", str(SPECS / "torch-on-runtime.yaml"), "--target", target)
    assert run.returncode == 2
    assert "ClusterTrainingRuntime 'torch-distributed'" in run.stderr
    assert "--target jobset or k8s (the runtime's JobSet" in run.stderr
    assert "--runtime" not in run.stderr  # nothing more to give: Trainer ships it
    assert "Traceback" not in run.stderr


def test_pod_settings_a_trainjob_cannot_carry_are_errors_with_the_way_out(tmp_path):
    text = (SPECS / "torch-on-runtime.yaml").read_text().replace(
        "  roles:\n", "  nodeSelector: {pool: gpu}\n  roles:\n", 1)
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    run = run_cli("compile", str(spec), "--target", "trainjob")
    assert run.returncode == 2
    assert "spec.roles.master.nodeSelector" in run.stderr
    assert "runtimePatches" in run.stderr


def test_bad_runtime_kind_points_at_the_field(tmp_path):
    text = (SPECS / "torch-on-runtime.yaml").read_text().replace("kind: ClusterTrainingRuntime",
                                                                 "kind: ClusterRuntime")
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    run = run_cli("validate", str(spec))
    assert run.returncode == 2
    assert "spec.trainjob.runtime.kind" in run.stderr
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "ClusterRuntime" in t)
    assert f"spec.yaml:{line}:" in run.stderr


def test_numnodes_left_to_the_runtime_stays_left_out(tmp_path):
    source = tmp_path / "tj.yaml"
    source.write_text(yaml.safe_dump({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                                      "metadata": {"name": "x"},
                                      "spec": {"runtimeRef": {"name": "torch-distributed"}}}))
    spec = tmp_path / "spec.yaml"
    assert run_cli("import", str(source), "--strict", "-o", str(spec)).returncode == 0
    assert yaml.safe_load(spec.read_text())["spec"]["trainjob"]["numNodesFromRuntime"] is True
    run = run_cli("compile", str(spec), "--target", "trainjob")
    job = next(d for d in yaml.safe_load_all(run.stdout) if d)
    assert "numNodes" not in (job["spec"].get("trainer") or {})
