"""A Job's backoffLimit counts the failures of all its pods (emulator/engine/jobcount.py; issue 13: the
emulator must never be kinder than the cluster), without Docker: the count, the verdict, and the
pod runner's decision that fails the Job and stops its other pods."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from trainspec.compiler.errors import UsageError
from trainspec.emulator.engine import jobcount
from trainspec.emulator.engine.pods import PodRunner
from trainspec.emulator.model.policy import FAILED, SUCCEEDED
from trainspec.emulator.model.status import PENDING, RUNNING, TERMINATED, Status
from trainspec.emulator.readers import dispatch


def jobset(tmp_path: Path, restart: str, pods: int = 2, jobs: int = 1, **jspec) -> object:
    job = {"completionMode": "Indexed", "completions": pods, "parallelism": pods, **jspec, "template": {
        "spec": {"restartPolicy": restart, "containers": [{"name": "main", "image": "img", "command": ["true"]}]}}}
    doc = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
           "spec": {"replicatedJobs": [{"name": "w", "replicas": jobs, "template": {"spec": job}}]}}
    path = tmp_path / "jobset.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return dispatch.load(str(path), state_dir=str(tmp_path / "state"))


def statuses(job) -> dict[str, Status]:
    return {r.name: Status(phase=RUNNING) for r in job.replicas}


def by_name(job, name: str):
    return next(r for r in job.replicas if r.name == name)


def test_a_jobset_job_owns_its_pods(tmp_path):
    job = jobset(tmp_path, "Never", pods=2, jobs=2, backoffLimit=1)
    owners = {r.name: r.owner for r in job.replicas}
    assert owners == {"js-w-0-0": "js-w-0", "js-w-0-1": "js-w-0", "js-w-1-0": "js-w-1", "js-w-1-1": "js-w-1"}
    assert [p.name for p in jobcount.pods_of(job.replicas, by_name(job, "js-w-1-0"))] == ["js-w-1-0", "js-w-1-1"]


def test_never_counts_failed_pods_over_every_index(tmp_path):
    job = jobset(tmp_path, "Never", pods=2, jobs=2, backoffLimit=1)
    st = statuses(job)
    a, b, other = by_name(job, "js-w-0-0"), by_name(job, "js-w-0-1"), by_name(job, "js-w-1-0")
    assert jobcount.count(job.replicas, st, a, 1) is None  # 1 failed pod, backoffLimit 1: a new pod
    assert jobcount.count(job.replicas, st, other, 1) is None  # another Job: its own count
    v = jobcount.count(job.replicas, st, b, 1)  # the Job's second failed pod: past backoffLimit 1
    assert v is not None and v.cause == "BackoffLimitExceeded"
    assert v.said == "BackoffLimitExceeded (1: 2 failed pods of Job js-w-0)"
    st[b.name].phase, st[b.name].cause = FAILED, v.cause
    assert jobcount.job_failed(job.replicas, st, a) and not jobcount.job_failed(job.replicas, st, other)
    assert jobcount.others_to_stop(job.replicas, st, b, v.cause) == [a]


def test_on_failure_counts_restarts_of_the_pods_still_running(tmp_path):
    job = jobset(tmp_path, "OnFailure", pods=3, backoffLimit=2)
    st = statuses(job)
    a, b, c = job.replicas
    assert jobcount.count(job.replicas, st, a, 1) is None  # 1 restart of 2
    st[a.name].phase = SUCCEEDED  # then it succeeded: its restart no longer counts (pastBackoffLimitOnFailure)
    assert jobcount.count(job.replicas, st, b, 1) is None
    v = jobcount.count(job.replicas, st, c, 1)  # b's and c's restarts reach 2
    assert v is not None and v.said == "BackoffLimitExceeded (2: 2 restarts of Job js-w-0)"
    assert jobcount.others_to_stop(job.replicas, st, c, v.cause) == [b]  # a succeeded: not deleted


def test_on_failure_backoff_zero_fails_at_the_first_restart_and_exit_zero_is_no_restart(tmp_path):
    job = jobset(tmp_path, "OnFailure", pods=2, backoffLimit=0)
    st = statuses(job)
    assert jobcount.count(job.replicas, st, job.replicas[0], 0) is None
    assert jobcount.count(job.replicas, st, job.replicas[1], 1).cause == "BackoffLimitExceeded"


def test_a_job_of_one_pod_says_what_it_said_before(tmp_path):
    job = jobset(tmp_path, "Never", pods=1, backoffLimit=0)
    v = jobcount.count(job.replicas, statuses(job), job.replicas[0], 3)
    assert v.said == "restartPolicy Never" and v.cause == "BackoffLimitExceeded"
    job = jobset(tmp_path, "Never", pods=1, backoffLimit=1)
    st = statuses(job)
    assert jobcount.count(job.replicas, st, job.replicas[0], 3) is None
    assert jobcount.count(job.replicas, st, job.replicas[0], 3).said == "BackoffLimitExceeded (1)"


def test_backoff_limit_per_index(tmp_path):
    job = jobset(tmp_path, "Never", pods=3, backoffLimitPerIndex=1, maxFailedIndexes=1)
    a, b, c = job.replicas
    assert a.backoff_per_index == 1 and a.max_failed_indexes == 1 and a.backoff_limit == 2**31 - 1
    st = statuses(job)
    assert jobcount.count(job.replicas, st, a, 1) is None
    assert jobcount.count(job.replicas, st, b, 1) is None  # each index its own count: 1 of 1 each
    v = jobcount.count(job.replicas, st, a, 1)
    assert v.cause == "FailedIndexes" and "backoffLimitPerIndex 1" in v.said
    st[a.name].phase, st[a.name].cause = FAILED, v.cause
    assert not jobcount.job_failed(job.replicas, st, b)  # a failed index alone does not end the Job ...
    assert jobcount.others_to_stop(job.replicas, st, a, v.cause) == []
    assert jobcount.count(job.replicas, st, c, 1) is None
    v2 = jobcount.count(job.replicas, st, c, 1)  # ... a second one does, past maxFailedIndexes 1
    assert v2.cause == "MaxFailedIndexesExceeded" and v2.said == (
        "its index failed (backoffLimitPerIndex 1); MaxFailedIndexesExceeded (2 failed indexes, maxFailedIndexes 1)")
    assert jobcount.others_to_stop(job.replicas, st, c, v2.cause) == [b]


def test_backoff_limit_per_index_zero_names_restart_policy_never(tmp_path):
    # the k8s target writes restartPolicy Never as backoffLimitPerIndex 0 (issue 31): the first failed pod is
    # final for its index, and the message still names the policy the spec wrote, then the Job's mechanism
    job = jobset(tmp_path, "Never", pods=2, backoffLimitPerIndex=0)
    a, b = job.replicas
    st = statuses(job)
    v = jobcount.count(job.replicas, st, a, 3)
    assert v.said == "restartPolicy Never: its index failed (backoffLimitPerIndex 0)" and v.cause == "FailedIndexes"
    st[a.name].phase, st[a.name].cause = FAILED, v.cause
    assert not jobcount.job_failed(job.replicas, st, b)  # the other index runs on, as on a cluster


def test_backoff_limit_per_index_with_a_job_wide_limit(tmp_path):
    job = jobset(tmp_path, "Never", pods=2, backoffLimitPerIndex=5, backoffLimit=1)
    st = statuses(job)
    assert jobcount.count(job.replicas, st, job.replicas[0], 1) is None
    assert jobcount.count(job.replicas, st, job.replicas[1], 1).cause == "BackoffLimitExceeded"  # checked first


def test_backoff_limit_per_index_needs_restart_policy_never(tmp_path):
    with pytest.raises(UsageError, match="backoffLimitPerIndex: requires the pod's restartPolicy Never"):
        jobset(tmp_path, "OnFailure", backoffLimitPerIndex=1)


def test_jobset_pod_failure_policy_reaches_every_pod_whole(tmp_path):
    job = jobset(tmp_path, "Never", backoffLimitPerIndex=0, podFailurePolicy={"rules": [
        {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [7]}},
        {"action": "FailIndex", "onExitCodes": {"operator": "NotIn", "values": [0, 7]}}]})
    rules = job.replicas[1].failure_rules
    assert [(r.action, r.operator) for r in rules] == [("Ignore", "In"), ("FailIndex", "NotIn")]


class _Run:
    """The parts of emulator.run.Run a PodRunner's failure decision reads (no containers)."""

    def __init__(self, job):
        self.job = job
        self.cond = threading.Condition()
        self.status = statuses(job)
        self.opts = SimpleNamespace(backoff=0.0, max_backoff=0.0)
        self.dir = Path("/nonexistent")
        self.runners: dict[str, PodRunner] = {}

    def set_status(self, r, **changes) -> None:
        with self.cond:
            for k, v in changes.items():
                setattr(self.status[r.name], k, v)


def test_the_pod_that_exhausts_the_jobs_backoff_fails_it_and_the_others_are_deleted(tmp_path):
    job = jobset(tmp_path, "Never", pods=3, backoffLimit=1)
    run = _Run(job)
    a, b, c = (PodRunner(run, r) for r in job.replicas)
    run.runners = {rn.r.name: rn for rn in (a, b, c)}
    assert a._on_failure(1, "exit code 1") == "newpod"  # 1 failed pod of backoffLimit 1
    assert b._on_failure(1, "exit code 1") == "failed"  # the Job's second: it fails
    sb, sa, sc = run.status[b.r.name], run.status[a.r.name], run.status[c.r.name]
    assert (sb.phase, sb.cause) == (FAILED, "BackoffLimitExceeded")
    assert sb.reason == "exit code 1; BackoffLimitExceeded (1: 2 failed pods of Job js-w-0)"
    for st in (sa, sc):
        assert st.phase == TERMINATED and st.reason == ("Job js-w-0 failed (BackoffLimitExceeded): "
                                                        "deleted by the Job controller")
    assert a.stop_ev.is_set() and c.stop_ev.is_set()
    assert c._on_failure(1, "exit code 1") == "stopped"  # an exit as it is deleted: the Job has failed


def test_a_whole_job_restart_starts_the_count_afresh(tmp_path):
    job = jobset(tmp_path, "Never", pods=2, backoffLimit=1)
    run = _Run(job)
    a, b = (PodRunner(run, r) for r in job.replicas)
    run.runners = {a.r.name: a, b.r.name: b}
    assert a._on_failure(1, "exit code 1") == "newpod"
    run.status = {r.name: Status(phase=PENDING) for r in job.replicas}  # what restarts.restart() does
    assert b._on_failure(1, "exit code 1") == "newpod"


def k8s_job(tmp_path: Path, name: str = "tr-worker", **spec) -> object:
    doc = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "labels": {"trainspec.dev/job": "tr"}},
           "spec": {**spec, "template": {"spec": {
               "restartPolicy": "Never", "subdomain": "tr",
               "containers": [{"name": "main", "image": "img", "command": ["true"], "env": [
                   {"name": "IDX", "valueFrom": {"fieldRef": {
                       "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}]}]}}}}
    path = tmp_path / "k8s.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return dispatch.load(str(path), state_dir=str(tmp_path / "state"))


def test_a_hand_written_indexed_job_is_one_replica_per_index_sharing_the_jobs_count(tmp_path):
    from trainspec.emulator.engine.podenv import container_env

    job = k8s_job(tmp_path, completionMode="Indexed", completions=3, parallelism=3, backoffLimit=1,
                  activeDeadlineSeconds=60)
    assert [(r.name, r.display, r.owner, r.hostname) for r in job.replicas] == [
        ("tr-worker-0", "worker-0", "tr-worker", "tr-worker-0"), ("tr-worker-1", "worker-1", "tr-worker", "tr-worker-1"),
        ("tr-worker-2", "worker-2", "tr-worker", "tr-worker-2")]
    r1 = job.replicas[1]
    assert "tr-worker-1.tr" in r1.aliases and r1.backoff_limit == 1 and r1.active_deadline == 60
    env = container_env(r1.main, r1, job.namespace)
    assert env["JOB_COMPLETION_INDEX"] == "1" and env["IDX"] == "1"
    st = statuses(job)
    assert jobcount.count(job.replicas, st, job.replicas[0], 1) is None
    assert jobcount.count(job.replicas, st, job.replicas[2], 1).said == "BackoffLimitExceeded (1: 2 failed pods of Job tr-worker)"


def test_a_job_of_one_pod_stays_itself_and_a_non_indexed_job_of_several_is_refused(tmp_path):
    job = k8s_job(tmp_path, "tr-worker-0", completions=1, backoffLimit=2)
    assert [(r.name, r.owner, r.backoff_limit) for r in job.replicas] == [("tr-worker-0", "tr-worker-0", 2)]
    with pytest.raises(UsageError, match=r"k8s.yaml:7:1: spec.completionMode: a NonIndexed Job of several pods .*; expected Indexed"):
        k8s_job(tmp_path, completions=2, parallelism=2)


def test_a_fail_index_rule_counts_against_max_failed_indexes(tmp_path):
    job = jobset(tmp_path, "Never", pods=3, backoffLimitPerIndex=1, maxFailedIndexes=0, podFailurePolicy={
        "rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [42]}}]})
    run = _Run(job)
    a, b, c = (PodRunner(run, r) for r in job.replicas)
    run.runners = {rn.r.name: rn for rn in (a, b, c)}
    assert a._on_failure(42, "exit code 42") == "failed"
    st = run.status[a.r.name]
    assert st.cause == "MaxFailedIndexesExceeded" and "podFailurePolicy FailIndex" in st.reason
    assert run.status[b.r.name].phase == TERMINATED and c.stop_ev.is_set()  # the Job failed: its pods deleted
