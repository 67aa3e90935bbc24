"""Whole-job restarts: a controller deletes every pod of the job (or of a task) and creates them afresh.

The controllers fill `JobModel.restart` (runmodel.JobRestart); the run loop (run.py) calls
`check(run)` whenever it looks at the replicas, and this module decides and carries out
the restart. What the controllers do, and where it is written:

JobSet `spec.failurePolicy` (CONVENTIONS-V2.md §1.5; kubernetes-sigs/jobset v0.12.0
pkg/controllers/failure_policy.go):
  * `executeFailurePolicy`: without failurePolicy the first failed Job fails the JobSet
    (reason FailedJobs); with it, the rules are tried in order (`findFirstFailedPolicyRuleAndJob`)
    and no match applies `defaultFailurePolicyRuleAction` = RestartJobSet;
  * `ruleIsApplicable`: the Job's failure-condition reason is in `onJobFailureReasons` and its
    replicatedJob in `targetReplicatedJobs` (an empty list matches anything); the CRD adds
    `onJobFailureMessagePatterns` (a regex on the Job's failure message);
  * `restartJobSetActionApplier`: fails with ReachedMaxRestarts once `restartsCountTowardsMax`
    >= `maxRestarts`, else `failurePolicyRecreateAll`: `restarts` += 1 and, counted, the other
    += 1; `RestartJobSetAndIgnoreMaxRestarts` only adds to `restarts`; `FailJobSet` fails
    (FailJobSetAction). The new Jobs carry `jobset.sigs.k8s.io/restart-attempt` = `restarts`
    (jobset_controller.go `labelAndAnnotateObject`); Jobs of a lower attempt are deleted
    (`getChildJobs`, `deleteJobs`), so every pod is new: fresh containers and emptyDirs, the
    same names and addresses (§1.2).
Volcano `RestartJob` (volcano-sh/volcano pkg/controllers/job/state/running.go: RestartJobAction
→ KillJob(PodRetainPhaseNone), `RetryCount++`, phase Restarting; restarting.go: `RetryCount >=
maxRetry` → Failed, else the pods are created again): `maxRetry` counts runs, not retries, so
maxRetry N allows N-1 whole restarts (the maintainers' reading in volcano-sh/volcano#2012).
`RestartTask` / `RestartPod` (running.go: KillTarget of the task / the pod, `RetryCount++`): the
same for the failed pod's task / that pod alone, on the same count.

On one machine a pod's address is fixed, so an old pod is always gone before its new one
starts: Recreate behaves as BlockingRecreate does on a cluster.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from ..adapters.base import EngineError, short
from ..model.job import FAIL, JOB, NONE, POD, RESTART, RESTART_UNCOUNTED, JobRestart, Replica, RestartRule
from ..model.policy import FAILED, Decision
from ..model.status import PENDING, Status
from .context import RunContext
from .pods import PodRunner

# The Job controller's failure messages for each reason (kubernetes pkg/controller/job/job_controller.go),
# what `onJobFailureMessagePatterns` is matched against.
MESSAGES = {
    "BackoffLimitExceeded": "Job has reached the specified backoff limit",
    "DeadlineExceeded": "Job was active longer than specified deadline",
    "PodFailurePolicy": "Container {container} for pod {namespace}/{pod} failed with exit code {code} "
                        "matching FailJob rule at index 0",
    "FailedIndexes": "Job has failed indexes",
    "MaxFailedIndexesExceeded": "Job has exceeded the specified maximal number of failed indexes",
}


@dataclass
class Verdict:
    action: str         # FAIL | RESTART | RESTART_UNCOUNTED
    why: str            # which rule, or that none matched, and what it does
    scope: str = JOB    # JOB | GROUP | POD: what is restarted


def message(cause: str, container: str, namespace: str, pod: str, code: int | None) -> str:
    return MESSAGES.get(cause, "").format(container=container, namespace=namespace, pod=pod, code=code)


def matches(rule: RestartRule, cause: str, text: str, group: str, code: int | None) -> bool:
    return ((not rule.reasons or cause in rule.reasons)
            and (not rule.messages or any(re.search(p, text) for p in rule.messages))
            and (not rule.groups or group in rule.groups)
            and (not rule.exit_codes or code in rule.exit_codes))


def verdict(policy: JobRestart, replica: str, cause: str, text: str, code: int | None,
            counted: int) -> Verdict | None:
    """What the controller does about one replica failed for good; None: not this policy's
    business (the pod rules and the success rule decide, policy.py)."""
    group = policy.group_of.get(replica, "")
    rule = next((r for r in policy.rules if matches(r, cause, text, group, code)), None)
    action = rule.action if rule is not None else policy.default
    by = "no rule matched"
    if rule is not None:
        by = f"{rule.name or 'a rule'} ({rule.said})" if rule.said else rule.name or "a rule"
    if action == NONE:
        return None
    if action == FAIL:
        return Verdict(FAIL, f"{policy.controller}: {by}: the job fails")
    if action == RESTART and counted >= policy.max_restarts:
        return Verdict(FAIL, f"{policy.exhausted}: {policy.controller}: {by}, and {counted} of "
                             f"{policy.max_restarts} restarts are used ({policy.limit})")
    left = "not counted" if action == RESTART_UNCOUNTED else f"{counted + 1} of {policy.max_restarts}, {policy.limit}"
    scope = rule.scope if rule is not None else JOB
    what = {JOB: "the whole job", POD: "the pod"}.get(scope, f"the {group} pods")
    return Verdict(action, f"{policy.controller}: {by}: restart {what} ({left})", scope)


def check(run: RunContext) -> Decision | None:
    """Apply the job's restart policy to the replicas failed for good, the first to fail first.
    A restart is carried out here; a failure is returned as the job's decision."""
    policy = run.job.restart
    if policy is None:
        return None
    with run.cond:
        failed = sorted(((r, run.status[r.name]) for r in run.job.replicas if run.status[r.name].phase == FAILED),
                        key=lambda pair: pair[1].since)
        failed = [(r, Status(**vars(st))) for r, st in failed]  # a copy: the runners keep writing
    for r, st in failed:
        text = message(st.cause, r.main.name, run.job.namespace, r.name, st.exit_code)
        v = verdict(policy, r.name, st.cause, text, st.exit_code, run.restarts_counted)
        if v is None:
            continue
        owner = policy.owner_of.get(r.name)
        what = f"{r.display}{f' (Job {owner})' if owner else ''} failed ({st.reason or 'failed'})"
        if v.action == FAIL:
            return Decision(FAILED, f"{what}; {v.why}")
        group = policy.group_of.get(r.name, "")
        scope = {JOB: run.job.replicas, POD: [r]}.get(
            v.scope, [p for p in run.job.replicas if policy.group_of.get(p.name) == group])
        restart(run, f"{what}; {v.why}", counted=v.action == RESTART, scope=scope,
                what={JOB: "every replica", POD: r.display}.get(v.scope, f"the {group} pods"))
        return None
    return None


def restart(run: RunContext, why: str, counted: bool, scope: list[Replica], what: str) -> None:
    """Stop the replicas in `scope` (with their grace period, preStop first), remove their containers
    and emptyDirs, and start them afresh: same names and addresses; the start order is wired again
    when the whole job restarts (a partial restart is Volcano's, which orders no start)."""
    policy = run.job.restart
    assert policy is not None
    attempt = run.job_restarts + 1
    whole = len(scope) == len(run.job.replicas)
    run.reporter.note(f"restart-attempt {attempt}: {why}; stopping {what}")
    old = [run.runners[r.name] for r in scope]
    for rn in old:
        rn.terminate(f"stopped for restart-attempt {attempt}")
    deadline = time.time() + run.opts.max_grace + 15
    while any(rn.is_alive() for rn in old) and time.time() < deadline:
        if run.interrupted or run.fatal:
            return  # the run is ending: its shutdown stops and removes the rest
        for rn in old:
            rn.join(0.05)
        run.refresh()
    for r in scope:
        _remove_pod(run, r)
    for rn in old:  # a runner still waiting on a container that is gone now ends at once
        rn.join(5)
    if run.interrupted or run.fatal:
        return
    with run.cond:
        run.job_restarts = attempt
        run.restarts_counted += 1 if counted else 0
        run.restarted.append("the whole job" if whole else what)
        for r in scope:
            before = run.status[r.name]
            run.status[r.name] = Status(phase=PENDING, restarts=before.restarts + 1,
                                        reason=f"restart-attempt {attempt}")
            if policy.attempt_label:
                r.labels[policy.attempt_label] = str(attempt)  # the downward API reads it
        run.dirty = True
    run.reporter.note(f"restart-attempt {attempt}: creating {what} afresh")
    if whole:
        run.bind_sources.clear()
        run.start_runners()
        return
    for r in scope:
        run.runners[r.name] = PodRunner(run, r)
        run.runners[r.name].start()


def _remove_pod(run: RunContext, r: Replica) -> None:
    """One old pod's containers and emptyDir volumes, by their labels (the run's network stays)."""
    try:
        run.client.remove_replica(run.run_id, r.display)
    except EngineError as exc:
        run.reporter.note(f"restart: could not remove every old container of {r.display} ({short(exc)}); "
                          "continuing")


def summary(run: RunContext) -> str:
    """For the run's final line: how many restarts the controller made, of what."""
    n = run.job_restarts
    if not n:
        return ""
    counted = "" if run.restarts_counted == n else f", {run.restarts_counted} counted"
    if all(what == "the whole job" for what in run.restarted):
        return f" after {n} whole-job restart{'s' if n != 1 else ''}{counted}"
    return f" after {n} restart{'s' if n != 1 else ''} of {' and '.join(dict.fromkeys(run.restarted))}{counted}"
