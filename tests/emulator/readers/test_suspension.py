"""A workload written with `suspend: true` (emulator/readers/suspension.py): run as admitted when a Kueue queue
would resume it, refused when nothing on a cluster would (it would create no pods, forever)."""

from __future__ import annotations

import pytest
import yaml

from trainspec.compiler.errors import UsageError
from trainspec.emulator.readers import dispatch

from emuhelpers import ROOT

POD = {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "img", "command": ["true"]}]}}


def _jobset(labels: dict | None = None, suspend: bool = True) -> dict:
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "js", **({"labels": labels} if labels else {})},
            "spec": {"suspend": suspend, "replicatedJobs": [
                {"name": "w", "template": {"spec": {"completions": 1, "parallelism": 1, "template": POD}}}]}}


def _load(tmp_path, doc: dict):
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(doc))
    return dispatch.load(str(path), state_dir=str(tmp_path / ".trainspec"))


def test_suspended_without_a_queue_is_refused(tmp_path):
    with pytest.raises(UsageError, match=r"job.yaml:\d+:\d+: spec.suspend: is true .* no kueue.x-k8s.io/queue-name label"):
        _load(tmp_path, _jobset())


def test_suspended_with_a_queue_runs_as_admitted_with_a_note(tmp_path):
    model = _load(tmp_path, _jobset({"kueue.x-k8s.io/queue-name": "team-a"}))
    assert any("until Kueue admits it from LocalQueue 'team-a'" in n for n in model.notes)


def test_not_suspended_has_no_note(tmp_path):
    assert _load(tmp_path, _jobset(suspend=False)).notes == []


def test_kubeflow_run_policy_suspend_and_a_plain_job(tmp_path):
    tfjob = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "tf"},
             "spec": {"runPolicy": {"suspend": True},
                      "tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {"spec": {"containers": [
                          {"name": "tensorflow", "image": "img", "command": ["true"]}]}}}}}}
    with pytest.raises(UsageError, match=r"job.yaml:\d+:\d+: spec.runPolicy.suspend: is true"):
        _load(tmp_path, tfjob)
    docs = list(yaml.safe_load_all((ROOT / "golden" / "tf-single" / "k8s.yaml").read_text()))
    for doc in docs:
        if doc and doc.get("kind") == "Job":
            doc["spec"]["suspend"] = True
    path = tmp_path / "k8s.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    with pytest.raises(UsageError, match=r"k8s.yaml:\d+:\d+: spec.suspend: is true"):
        dispatch.load(str(path), state_dir=str(tmp_path / ".trainspec"))
