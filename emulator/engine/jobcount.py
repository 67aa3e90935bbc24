"""The Job controller's failure count: one count over every pod of a Job, not one per pod.

kubernetes pkg/controller/job/job_controller.go (syncJob) fails a Job with BackoffLimitExceeded
  * restartPolicy Never: once its failed pods, whichever index each ran, exceed backoffLimit
    (`jobCtx.failed > *job.Spec.BackoffLimit`);
  * restartPolicy OnFailure: once the container restarts of its pods still Pending or Running
    reach backoffLimit, any restart when it is 0 (`pastBackoffLimitOnFailure`);
and then deletes the Job's active pods. An Indexed Job with `backoffLimitPerIndex` (restartPolicy
Never only) also counts each index on its own: an index past it fails (the Job ends Failed,
FailedIndexes) and, with `maxFailedIndexes`, more failed indexes than that fail the Job at once
(MaxFailedIndexesExceeded); its backoffLimit defaults to MaxInt32 then (pkg/apis/batch/v1 defaults).

A replica is one pod (one index) of the Job `Replica.owner` names: a compiled k8s.yaml has one
Job per replica, a JobSet's Indexed Job of N pods owns N replicas (controllers/jobset.py). The
counts are read from the run's statuses (`Status.failures`: the failed pods of that index, or its
container restarts), so a whole-job restart, which makes every status afresh, starts them at 0
as the new Jobs do. Call with the run's lock held: the count and the verdict are one step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..model.job import Replica
from ..model.policy import FAILED, SUCCEEDED
from ..model.status import INIT, PENDING, RUNNING, TERMINATED, Status

ACTIVE = (PENDING, INIT, RUNNING)
# Job failure reasons that end the whole Job (FailedIndexes alone waits for the other indexes).
JOB_ENDING = ("BackoffLimitExceeded", "PodFailurePolicy", "DeadlineExceeded", "MaxFailedIndexesExceeded")


@dataclass
class Verdict:
    """A failure that ends the index or the Job: what to say after the exit, and the Job's reason."""
    said: str
    cause: str


def pods_of(replicas: list[Replica], r: Replica) -> list[Replica]:
    """The pods of r's Job, r among them."""
    return [p for p in replicas if p.owner == r.owner]


def failed_pods(replicas: list[Replica], status: Mapping[str, Status], r: Replica) -> int:
    """restartPolicy Never: the Job's failed pods, over every index."""
    return sum(status[p.name].failures for p in pods_of(replicas, r))


def restarts(replicas: list[Replica], status: Mapping[str, Status], r: Replica) -> int:
    """restartPolicy OnFailure: the restarts of the Job's pods still Pending or Running (a pod that
    succeeded no longer counts); r, whose container just exited, among them."""
    return sum(status[p.name].failures for p in pods_of(replicas, r)
               if p is r or status[p.name].phase in ACTIVE)


def job_failed(replicas: list[Replica], status: Mapping[str, Status], r: Replica) -> bool:
    """Another pod of r's Job already failed the Job: the controller is deleting r, no retry."""
    return any(p is not r and status[p.name].phase == FAILED and status[p.name].cause in JOB_ENDING
               for p in pods_of(replicas, r))


def _of(replicas: list[Replica], r: Replica, n: int, what: str) -> str:
    """`: 2 failed pods of Job js-w-0` when the Job has several pods (a Job of one says nothing more)."""
    return f": {n} {what} of Job {r.owner}" if len(pods_of(replicas, r)) > 1 else ""


def count(replicas: list[Replica], status: Mapping[str, Status], r: Replica, code: int) -> Verdict | None:
    """Count one failure of r's container (exit `code`) as its Job's controller does, once the pod
    rules let it count; a Verdict when it ends the index or the Job, None when r is retried."""
    st = status[r.name]
    if r.restart_policy in ("Always", "OnFailure"):
        if code != 0:
            st.failures += 1
        if r.restart_policy == "Always":
            return None  # a Deployment: no Job counts
        n = restarts(replicas, status, r)
        if n >= max(r.backoff_limit, 1):
            return Verdict(f"BackoffLimitExceeded ({r.backoff_limit}{_of(replicas, r, n, 'restarts')})",
                           "BackoffLimitExceeded")
        return None
    st.failures += 1
    n = failed_pods(replicas, status, r)
    if n > r.backoff_limit:
        said = (f"BackoffLimitExceeded ({r.backoff_limit}{_of(replicas, r, n, 'failed pods')})" if r.backoff_limit
                else "restartPolicy Never")  # backoffLimit 0: the first failed pod fails the Job
        return Verdict(said, "BackoffLimitExceeded")
    if r.backoff_per_index is not None and st.failures > r.backoff_per_index:
        said = f"its index failed (backoffLimitPerIndex {r.backoff_per_index})"
        # 0: the first failed pod is final, as backoffLimit 0 above; the user wrote restartPolicy Never (the k8s
        # target writes it as backoffLimitPerIndex 0), so the message names both the cause and the mechanism
        return index_failed(replicas, status, r, f"restartPolicy Never: {said}" if not r.backoff_per_index else said)
    return None


def index_failed(replicas: list[Replica], status: Mapping[str, Status], r: Replica, said: str) -> Verdict:
    """r's index failed for good (past backoffLimitPerIndex, or a FailIndex rule): FailedIndexes, or,
    once more indexes failed than maxFailedIndexes, the Job fails (MaxFailedIndexesExceeded)."""
    failed = 1 + sum(status[p.name].phase == FAILED for p in pods_of(replicas, r) if p is not r)
    if r.max_failed_indexes is not None and failed > r.max_failed_indexes:
        return Verdict(f"{said}; MaxFailedIndexesExceeded ({failed} failed indexes, maxFailedIndexes "
                       f"{r.max_failed_indexes})", "MaxFailedIndexesExceeded")
    return Verdict(said, "FailedIndexes")


def others_to_stop(replicas: list[Replica], status: Mapping[str, Status], r: Replica, cause: str) -> list[Replica]:
    """When r's failure ended its Job: the Job's other pods still active, which the controller deletes."""
    if cause not in JOB_ENDING:
        return []
    return [p for p in pods_of(replicas, r)
            if p is not r and status[p.name].phase not in (FAILED, SUCCEEDED, TERMINATED)]
