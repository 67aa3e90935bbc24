"""The runtimes Kubeflow Trainer ships (compiler/shipped_runtimes/, v2.3.0's manifests/base/runtimes/): a spec
or TrainJob naming one of those ClusterTrainingRuntimes needs no --runtime to be expanded; the command says
it used the shipped definition; a --runtime that names it wins."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from trainspec.compiler.runtimes import SHIPPED_DIR, SHIPPED_VERSION, load_runtimes, shipped_names

import schemas
from helpers import SPECS, run_cli

SHIPPED = Path(SHIPPED_DIR)
FILES = sorted(SHIPPED.glob("*.yaml"))
SPEC = SPECS / "torch-on-runtime.yaml"
NOTE = (f"ClusterTrainingRuntime 'torch-distributed': Kubeflow Trainer {SHIPPED_VERSION}'s shipped definition (no "
        "--runtime names it); give your cluster's with --runtime FILE|DIR if it differs")
# a kubeflow/trainer clone holding the tag (`git clone https://github.com/kubeflow/trainer`): the files are its own
TRAINER_REPO = os.environ.get("TRAINSPEC_TRAINER_REPO")


def test_the_five_distributed_runtimes_are_there_named_as_their_files():
    assert shipped_names() == ("deepspeed-distributed", "jax-distributed", "mlx-distributed", "torch-distributed",
                               "xgboost-distributed")
    for path in FILES:
        text = path.read_text()
        assert text.startswith("# Copyright The Kubeflow Authors.\n"), path.name
        assert "Licensed under the Apache License, Version 2.0" in text, path.name
        doc = yaml.safe_load(text)
        assert doc["kind"] == "ClusterTrainingRuntime"
        assert doc["metadata"]["name"] == path.stem.replace("_", "-")


def test_they_are_runtimes_expansion_can_read():
    runtimes = load_runtimes([str(SHIPPED)])
    assert sorted(r.name for r in runtimes) == list(shipped_names())
    assert not any(r.shipped for r in runtimes)  # given with --runtime: the user's, whatever folder they are in


def test_the_readme_names_the_tag_and_commit():
    readme = (SHIPPED / "README.md").read_text()
    assert f"- tag: `{SHIPPED_VERSION}`" in readme
    assert "https://github.com/kubeflow/trainer" in readme and "scripts/refresh_shipped_runtimes.py" in readme


def test_they_are_upstreams_bytes():
    if not TRAINER_REPO:
        pytest.skip("TRAINSPEC_TRAINER_REPO (a kubeflow/trainer clone holding the tag) is not set")
    readme = (SHIPPED / "README.md").read_text()
    commit = next(line.split("`")[1] for line in readme.splitlines() if line.startswith("- commit: "))
    tagged = subprocess.run(["git", "-C", TRAINER_REPO, "rev-list", "-n", "1", SHIPPED_VERSION], check=True,
                            capture_output=True, text=True).stdout.strip()
    assert tagged == commit
    for path in FILES:
        upstream = subprocess.run(["git", "-C", TRAINER_REPO, "show", f"{commit}:manifests/base/runtimes/{path.name}"],
                                  check=True, capture_output=True).stdout
        assert path.read_bytes() == upstream, path.name


@pytest.mark.parametrize("target", ["jobset", "k8s"])
def test_without_runtime_the_shipped_one_compiles_as_if_given_and_says_so(target):
    shipped = run_cli("compile", str(SPEC), "-t", target)
    given = run_cli("compile", str(SPEC), "-t", target, "--runtime", str(SHIPPED / "torch_distributed.yaml"))
    assert shipped.returncode == 0 and given.returncode == 0, shipped.stderr + given.stderr
    assert shipped.stdout == given.stdout  # byte for byte
    line = next(i for i, t in enumerate(SPEC.read_text().splitlines(), 1) if t.strip().startswith("runtime:"))
    assert shipped.stderr.count("trainspec: note: ") == 1
    assert f"trainspec: note: {SPEC}:{line}:5: spec.trainjob.runtime: {NOTE}" in shipped.stderr
    assert "note:" not in given.stderr
    if target == "jobset":
        (js,) = [d for d in yaml.safe_load_all(shipped.stdout) if d]
        assert schemas.errors(js) == []


def test_the_trainjob_target_needs_no_runtime_and_says_nothing():
    r = run_cli("compile", str(SPEC), "-t", "trainjob")
    assert r.returncode == 0 and r.stderr == ""


def test_a_given_runtime_of_the_same_name_wins(tmp_path):
    doc = yaml.safe_load((SHIPPED / "torch_distributed.yaml").read_text())
    node = doc["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    node["containers"][0]["env"] = [{"name": "FROM_THE_CLUSTER", "value": "1"}]
    node["priorityClassName"] = "platform"
    (tmp_path / "rt.yaml").write_text(yaml.safe_dump(doc))
    r = run_cli("compile", str(SPEC), "-t", "jobset", "--runtime", str(tmp_path / "rt.yaml"))
    assert r.returncode == 0, r.stderr
    assert "note:" not in r.stderr
    (js,) = [d for d in yaml.safe_load_all(r.stdout) if d]
    pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "platform"
    assert {"name": "FROM_THE_CLUSTER", "value": "1"} in pod["containers"][0]["env"]


SHIPPED_SPEC = """\
apiVersion: trainspec/v1.3
kind: TrainingJob
metadata: {{name: on-{name}}}
spec:
  framework: generic
  image: example.io/train:1
  command: [python3, train.py]
  trainjob:
    runtime: {{name: {name}}}
  roles:
    node: {{replicas: 2}}
"""
# what each shipped runtime's ML policy injects (kubeflow/trainer v2.3.0 pkg/runtime/framework/plugins/)
INJECTED = {"torch-distributed": "PET_NNODES", "jax-distributed": "JAX_NUM_PROCESSES",
            "xgboost-distributed": "DMLC_NUM_WORKER", "deepspeed-distributed": "OMPI_MCA_orte_default_hostfile",
            "mlx-distributed": "OMPI_MCA_orte_default_hostfile"}


@pytest.mark.parametrize("name", sorted(INJECTED))
def test_every_shipped_runtime_expands_to_a_valid_jobset(name, tmp_path):
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(SHIPPED_SPEC.format(name=name))
    r = run_cli("compile", str(spec), "-t", "jobset")
    assert r.returncode == 0, r.stderr
    assert f"ClusterTrainingRuntime '{name}': Kubeflow Trainer {SHIPPED_VERSION}'s shipped definition" in r.stderr
    docs = [d for d in yaml.safe_load_all(r.stdout) if d]
    js = next(d for d in docs if d["kind"] == "JobSet")
    assert schemas.errors(js) == []
    env = {e["name"] for rjob in js["spec"]["replicatedJobs"]
           for c in rjob["template"]["spec"]["template"]["spec"]["containers"] for e in c.get("env") or []}
    assert INJECTED[name] in env


def test_validate_says_it_once_and_json_calls_it_a_note():
    r = run_cli("validate", str(SPEC))
    assert r.returncode == 0 and r.stderr.count("trainspec: note: ") == 1, r.stderr
    r = run_cli("validate", str(SPEC), "--format", "json")
    assert r.returncode == 0
    (note,) = json.loads(r.stdout)
    assert note["severity"] == "note" and note["path"] == "spec.trainjob.runtime" and note["message"] == NOTE


def test_build_writes_the_jobset_and_k8s_forms_with_the_note(tmp_path):
    r = run_cli("build", str(SPEC), "-o", str(tmp_path), "--no-cache")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "torch-on-runtime").iterdir()) == ["jobset.yaml", "k8s.yaml",
                                                                                 "trainjob.yaml"]
    assert r.stderr.count("trainspec: note: ") == 1 and NOTE in r.stderr


def test_a_trainjob_file_on_a_shipped_runtime_is_read_without_runtime(tmp_path):
    """The emulator's reader of a TrainJob (as `trainspec run` reads it, before any engine): the shipped runtime's
    JobSet, the note among the run's notes."""
    from trainspec.emulator.readers.dispatch import load

    tj = tmp_path / "tj.yaml"
    tj.write_text(yaml.safe_dump({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                                  "metadata": {"name": "tj"},
                                  "spec": {"runtimeRef": {"name": "jax-distributed"},
                                           "trainer": {"numNodes": 2, "command": ["python3", "-c", "pass"]}}}))
    model = load(str(tj), state_dir=str(tmp_path / ".trainspec"), check_missing=False)
    assert len(model.replicas) == 2
    assert {r.main.image for r in model.replicas} == {"nvcr.io/nvidia/jax:25.10-py3"}  # the shipped runtime's
    assert any(f"{tj}: TrainJob tj: ClusterTrainingRuntime 'jax-distributed': Kubeflow Trainer {SHIPPED_VERSION}'s "
               "shipped definition" in n for n in model.notes), model.notes


def test_a_namespaced_training_runtime_of_a_shipped_name_is_not_taken_from_there(tmp_path):
    from trainspec.compiler import UsageError
    from trainspec.emulator.readers.dispatch import load

    tj = tmp_path / "tj.yaml"
    tj.write_text(yaml.safe_dump({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                                  "metadata": {"name": "tj"},
                                  "spec": {"runtimeRef": {"name": "torch-distributed", "kind": "TrainingRuntime"}}}))
    with pytest.raises(UsageError, match="TrainingRuntime 'torch-distributed' is not in the file"):
        load(str(tj), state_dir=str(tmp_path / ".trainspec"), check_missing=False)
