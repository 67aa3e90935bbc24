"""Whole-job restart rules (emulator/engine/restarts.py) as the JobSet and Volcano controllers fill them
(emulator/readers/controllers/jobset.py, volcano_job.py), without Docker: which failure restarts the job,
which fails it, and when the restarts are used up."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from trainspec.compiler.errors import UsageError
from trainspec.emulator.engine import restarts
from trainspec.emulator.model.job import FAIL, GROUP, POD, RESTART, RESTART_UNCOUNTED
from trainspec.emulator.readers import dispatch


def load(tmp_path: Path, doc: dict):
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return dispatch.load(str(path), state_dir=str(tmp_path / "state"))


def pod(restart: str = "Never") -> dict:
    return {"spec": {"restartPolicy": restart,
                     "containers": [{"name": "main", "image": "img", "command": ["true"]}]}}


def jobset(failure_policy: dict | None) -> dict:
    spec: dict = {"replicatedJobs": [
        {"name": "driver", "replicas": 1, "template": {"spec": {"template": pod()}}},
        {"name": "node", "replicas": 2, "template": {"spec": {"backoffLimit": 0, "template": pod()}}}]}
    if failure_policy is not None:
        spec["failurePolicy"] = failure_policy
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"}, "spec": spec}


def verdict(job, pod_name: str, cause: str, counted: int = 0, code: int | None = 1):
    text = restarts.message(cause, "main", job.namespace, pod_name, code)
    return restarts.verdict(job.restart, pod_name, cause, text, code, counted)


def test_jobset_rules_first_match_default_restart_and_max_restarts(tmp_path):
    job = load(tmp_path, jobset({"maxRestarts": 2, "rules": [
        {"name": "fatal", "action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"]},
        {"action": "RestartJobSetAndIgnoreMaxRestarts", "targetReplicatedJobs": ["driver"]},
        {"name": "slow", "action": "FailJobSet", "onJobFailureMessagePatterns": ["active longer than"]}]}))
    assert job.restart.group_of["js-node-1-0"] == "node"
    assert job.restart.attempt_label == "jobset.sigs.k8s.io/restart-attempt"
    assert job.replicas[0].labels["jobset.sigs.k8s.io/restart-attempt"] == "0"
    fatal = verdict(job, "js-driver-0-0", "PodFailurePolicy")  # the first matching rule wins over the second
    assert fatal.action == FAIL and "rule fatal (FailJobSet)" in fatal.why
    free = verdict(job, "js-driver-0-0", "BackoffLimitExceeded", counted=9)
    assert free.action == RESTART_UNCOUNTED and "failurePolicyRule1" in free.why  # the webhook's default name
    assert verdict(job, "js-node-0-0", "DeadlineExceeded").action == FAIL  # by the message pattern
    default = verdict(job, "js-node-0-0", "BackoffLimitExceeded", counted=1)
    assert default.action == RESTART and "no rule matched" in default.why and "2 of 2" in default.why
    used_up = verdict(job, "js-node-0-0", "BackoffLimitExceeded", counted=2)
    assert used_up.action == FAIL and used_up.why.startswith("ReachedMaxRestarts")


def test_jobset_without_failure_policy_has_no_restart_and_zero_restarts_fails(tmp_path):
    assert load(tmp_path, jobset(None)).restart is None  # the first failed Job fails the JobSet (policy.py)
    job = load(tmp_path, jobset({}))  # maxRestarts unset: 0
    assert verdict(job, "js-node-0-0", "BackoffLimitExceeded").action == FAIL


@pytest.mark.parametrize("policy, message", [
    ({"rules": [{"action": "RestartJob"}]}, "alpha RestartJob feature gate"),
    ({"restartStrategy": "InPlaceRestart"}, "InPlaceRestart"),
    ({"rules": [{"action": "FailJobSet", "onJobFailureReasons": ["OOMKilled"]}]}, "not a Job failure reason"),
    ({"rules": [{"action": "FailJobSet", "targetReplicatedJobs": ["nope"]}]}, "no replicatedJob 'nope'"),
])
def test_jobset_failure_policy_refused(tmp_path, policy, message):
    with pytest.raises(UsageError, match=message):
        load(tmp_path, jobset(policy))


def volcano(tasks: list[dict], **spec) -> dict:
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "v"},
            "spec": {**spec, "tasks": tasks}}


def test_volcano_restart_job_counts_runs_and_follows_policy_order(tmp_path):
    job = load(tmp_path, volcano([
        {"name": "w", "replicas": 2, "template": pod(),
         "policies": [{"exitCode": 3, "action": "TerminateJob"}, {"event": "PodFailed", "action": "RestartJob"}]},
        {"name": "ps", "replicas": 2, "template": pod(), "policies": [{"event": "PodFailed", "action": "RestartPod"}]},
        {"name": "ev", "replicas": 2, "template": pod(), "policies": [{"event": "PodFailed", "action": "RestartTask"}]},
        {"name": "x", "replicas": 1, "template": pod(),
         "policies": [{"event": "PodFailed", "action": "RestartPartition"}]},
    ], maxRetry=3))
    assert job.restart.max_restarts == 2  # maxRetry counts runs: 3 runs, 2 whole restarts
    w = next(r for r in job.replicas if r.display == "w-1")
    assert w.backoff_limit == 0  # fails for good at once: the whole job restarts, not the pod
    x = next(r for r in job.replicas if r.role == "x")
    assert x.backoff_limit == 3  # RestartPartition stays the pod's own retry
    assert verdict(job, "v-w-1", "BackoffLimitExceeded", code=3).action == FAIL  # exitCode 3 comes first
    again = verdict(job, "v-w-1", "BackoffLimitExceeded", code=137, counted=1)
    assert again.action == RESTART and "the task's policy PodFailed (RestartJob)" in again.why
    assert verdict(job, "v-w-1", "BackoffLimitExceeded", code=137, counted=2).action == FAIL
    assert verdict(job, "v-x-0", "BackoffLimitExceeded") is None  # not the controller's restart
    pod_only = verdict(job, "v-ps-1", "BackoffLimitExceeded", counted=1)  # KillTarget: the same count
    assert (pod_only.action, pod_only.scope) == (RESTART, POD) and "restart the pod (2 of 2" in pod_only.why
    task = verdict(job, "v-ev-0", "BackoffLimitExceeded")
    assert (task.action, task.scope) == (RESTART, GROUP) and "restart the ev pods" in task.why


def test_volcano_task_policy_before_job_policy(tmp_path):
    job = load(tmp_path, volcano([
        {"name": "a", "template": pod(), "policies": [{"event": "PodFailed", "action": "AbortJob"}]},
        {"name": "b", "template": pod()}],
        maxRetry=1, policies=[{"events": ["PodEvicted", "PodFailed"], "action": "RestartJob"}]))
    assert verdict(job, "v-a-0", "BackoffLimitExceeded").action == FAIL  # the task's AbortJob wins
    used_up = verdict(job, "v-b-0", "BackoffLimitExceeded")
    assert used_up.action == FAIL and "retryCount reached maxRetry" in used_up.why  # maxRetry 1: one run
    assert load(tmp_path, volcano([{"name": "b", "template": pod()}])).restart is None


def test_trainjob_runtime_failure_policy_reaches_the_jobset(tmp_path):
    """Trainer v2 copies the runtime's JobSet template, failurePolicy included."""
    root = Path(__file__).parents[3]
    docs = list(yaml.safe_load_all((root / "golden/pytorch-ddp/trainjob.yaml").read_text()))
    runtime = next(d for d in docs if d["kind"] == "TrainingRuntime")
    runtime["spec"]["template"]["spec"]["failurePolicy"] = {"maxRestarts": 2}
    path = tmp_path / "trainjob.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    job = dispatch.load(str(path), state_dir=str(tmp_path / "state"))
    assert job.restart is not None and job.restart.max_restarts == 2
    assert set(job.restart.group_of.values()) == {"node"}
