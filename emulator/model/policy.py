"""The job's success and failure, decided by the job's SuccessRule (the plan's `success`).

The rule itself is the compiler's (frameworks.SUCCESS_RULES -> JobPlan.success):
spec input carries it in the plan, compiled files in the run policy the targets
write (compiler/runpolicy.py). Only a hand-written manifest without that
metadata falls back to the same table, by its framework annotation and roles.
Any replica that failed for good (its restart policy and backoff exhausted)
fails the job.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...compiler.frameworks import SUCCESS_RULES, success_rule
from ...compiler.plan import SuccessRule
from .job import JobModel, Replica
from .status import INIT, PENDING, RUNNING

SUCCEEDED, FAILED = "Succeeded", "Failed"


@dataclass
class Decision:
    outcome: str        # Succeeded | Failed
    reason: str


def fallback_rule(framework: str | None, replicas: list[Replica], success_policy: str | None) -> SuccessRule | None:
    """The operator's rule for a manifest that does not say it (no run policy); without a known
    framework, all workers when there are some, else None: every replica must complete, like plain Jobs."""
    counts: dict[str, int] = {}
    for r in replicas:
        counts[r.role] = counts.get(r.role, 0) + 1
    if framework in SUCCESS_RULES:
        rule = success_rule(framework, counts, success_policy)
        if counts.get(rule.role):
            return rule
    return SuccessRule("worker", "all") if counts.get("worker") else None


def deciders(job: JobModel) -> tuple[list[Replica], str]:
    """The replicas whose success makes the job succeed, and the rule's name."""
    rule = job.success
    if rule is None:
        # No operator rule: like plain Jobs, every replica must complete.
        return [r for r in job.replicas if r.workload == "Job"] or job.replicas, "all replicas"
    need = sorted((r for r in job.replicas if rule.decided_by(r.role, r.index)), key=lambda r: r.index)
    if not rule.role:
        return need, "all replicas"
    return need, {"all": f"all {rule.role}s", "any": f"any {rule.role}"}.get(rule.scope, f"{rule.role}-{rule.index}")


def decide(job: JobModel, phases: dict[str, str], reasons: dict[str, str]) -> Decision | None:
    own = job.controller_success  # an operator's own rule (controllers/), else the job's SuccessRule
    for r in job.replicas:
        if phases.get(r.name) == FAILED and not (own is not None and r.name in own.tolerated):
            why = reasons.get(r.name) or "failed"
            return Decision(FAILED, f"{r.display} failed ({why})")
    if own is not None:
        done = [g for g in own.groups if g and all(phases.get(n) == SUCCEEDED for n in g)]
        if len(done) >= own.need:
            return Decision(SUCCEEDED, f"{own.name} succeeded")
        if own.min_available is not None and all(phases.get(r.name) in (SUCCEEDED, FAILED) for r in job.replicas):
            ok = sum(phases.get(r.name) == SUCCEEDED for r in job.replicas)
            outcome = SUCCEEDED if ok >= own.min_available else FAILED
            return Decision(outcome, f"every pod finished, {ok} succeeded (minAvailable {own.min_available})")
        return None
    need, rule = deciders(job)
    if job.success is not None and job.success.scope == "any":  # generic AnyReplica: the first one decides
        first = next((r for r in need if phases.get(r.name) == SUCCEEDED), None)
        return Decision(SUCCEEDED, f"{first.display} succeeded ({rule})") if first is not None else None
    if need and all(phases.get(r.name) == SUCCEEDED for r in need):
        return Decision(SUCCEEDED, f"{rule} succeeded" if len(need) != 1 else f"{need[0].display} succeeded")
    return None


def left_running(job: JobModel, phases: dict[str, str]) -> str | None:
    """After success on plain Kubernetes (no controller): which replicas a cluster would leave
    running, and until when (issue 12: the k8s target cannot stop the ps / servers / MPI workers)."""
    if job.controller:
        return None
    left = [r for r in job.replicas if phases.get(r.name) in (PENDING, INIT, RUNNING)]
    if not left:
        return None
    names = ", ".join(r.display for r in left)
    forever = [r.display for r in left if r.workload == "Deployment"]
    deadline = job.active_deadline
    if deadline is not None:
        until = f"until activeDeadlineSeconds ({deadline:g}s after each Job started) fails their Jobs"
        if forever:
            until += f"; {', '.join(forever)} (Deployments) forever"
    else:
        until = "forever (no activeDeadlineSeconds)"
    return (f"on a cluster, {names} would keep running after the job succeeded, {until}: plain Kubernetes "
            "has no controller to stop them (set activeDeadlineSeconds, or use the jobset, kubeflow or "
            "volcano target)")
