"""A Job's backoffLimit counts the failures of all its pods, on a real Docker engine (issue 13: the
emulator must never be kinder than the cluster). A hand-written JobSet whose one replicatedJob is an
Indexed Job of 2 pods; each pod fails its first attempt and succeeds its second, so a count per pod
would let both retry and the JobSet succeed, where the Job controller fails the Job once its pods'
failures, together, pass backoffLimit. Every test ends with `leak_check`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from emuhelpers import norm, trainspec

pytestmark = pytest.mark.docker

# Attempt n of each index is marked in a shared claim; both indexes reach attempt n before either
# exits (1 on the first attempt, 0 after), so the two first failures always come together.
PROGRAM = """
import os, sys, time
i = int(os.environ["JOB_COMPLETION_INDEX"])
n = len([f for f in os.listdir("/data") if f.startswith(f"try-{i}-")]) + 1
open(f"/data/try-{i}-{n}", "w").close()
print(f"index {i} attempt {n}", flush=True)
while not os.path.exists(f"/data/try-{1 - i}-{n}"):
    time.sleep(0.1)
sys.exit(1 if n == 1 else 0)
"""


def jobset_file(tmp_path: Path, image: str, restart: str, **limits: int) -> Path:
    job = {"completionMode": "Indexed", "completions": 2, "parallelism": 2, **limits, "template": {
        "spec": {"restartPolicy": restart, "terminationGracePeriodSeconds": 1,
                 "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "marks"}}],
                 "containers": [{"name": "main", "image": image, "command": ["python3", "-c", PROGRAM],
                                 "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}}}
    doc = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "bo"},
           "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": job}}]}}
    path = tmp_path / "jobset.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.parametrize("restart, limits, said", [
    ("Never", {"backoffLimit": 1}, "BackoffLimitExceeded (1: 2 failed pods of Job bo-w-0)"),
    ("OnFailure", {"backoffLimit": 2}, "BackoffLimitExceeded (2: 2 restarts of Job bo-w-0)"),
])
def test_the_jobs_pods_share_one_backoff_count(tmp_path, test_image, leak_check, restart, limits, said):
    r = trainspec("run", jobset_file(tmp_path, test_image, restart, **limits), cwd=tmp_path, timeout=240)
    out = norm(r.stdout + r.stderr)
    assert r.returncode == 1, out
    assert "job bo FAILED" in out and said in out
    # the other pod, retried and waiting for its peer's second attempt, is deleted with the failed Job
    assert "Job bo-w-0 failed (BackoffLimitExceeded): deleted by the Job controller" in out
    assert "index 0 attempt 1" in out and "index 1 attempt 1" in out
    marks = sorted(p.name for p in (tmp_path / ".trainspec/volumes/marks").iterdir())
    assert not any(m.endswith("-3") for m in marks), marks  # no third attempt anywhere


@pytest.mark.parametrize("restart, limits", [
    ("Never", {"backoffLimitPerIndex": 1}),  # each index its own count: one failure each is allowed
    ("OnFailure", {"backoffLimit": 3}),       # two restarts in all, under 3
])
def test_within_the_limit_both_pods_retry_and_the_jobset_succeeds(tmp_path, test_image, leak_check, restart, limits):
    r = trainspec("run", jobset_file(tmp_path, test_image, restart, **limits), cwd=tmp_path, timeout=240)
    out = norm(r.stdout + r.stderr)
    assert r.returncode == 0, out
    assert "index 0 attempt 2" in out and "index 1 attempt 2" in out and "job bo SUCCEEDED" in out


def test_a_hand_written_indexed_job_in_k8s_yaml_shares_one_count(tmp_path, test_image, leak_check):
    pod = yaml.safe_load(jobset_file(tmp_path, test_image, "Never").read_text())["spec"]["replicatedJobs"][0]
    job = {**pod["template"]["spec"], "backoffLimit": 1}
    path = tmp_path / "k8s.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "ix-worker", "labels": {"trainspec.dev/job": "ix"}}, "spec": job}, sort_keys=False))
    r = trainspec("run", path, cwd=tmp_path, timeout=240)
    out = norm(r.stdout + r.stderr)
    assert r.returncode == 1, out
    assert "job ix FAILED" in out and "BackoffLimitExceeded (1: 2 failed pods of Job ix-worker)" in out
    assert "index 0 attempt 1" in out and "index 1 attempt 1" in out
