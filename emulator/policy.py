"""The job's success and failure rule, as the operators decide it.

Plain Kubernetes has no operator, so the compiler writes the job-level
policy into the topology ConfigMap's annotations and the emulator applies the
rule the corresponding operator would (CONVENTIONS.md §1):
TF: chief/master if present, else worker-0 (all workers with AllWorkers);
PyTorch, XGBoost: master; MXNet: scheduler; MPI: launcher; Paddle: every
master, else (collective) every worker; JAX: every worker. Any replica that failed
for good (its restart policy and backoff exhausted) fails the job.
"""

from __future__ import annotations

from dataclasses import dataclass

from .runmodel import JobModel, Replica

SUCCEEDED, FAILED = "Succeeded", "Failed"


@dataclass
class Decision:
    outcome: str        # Succeeded | Failed
    reason: str


def deciders(job: JobModel) -> tuple[list[Replica], str]:
    """The replicas whose success makes the job succeed, and the rule's name."""
    by_role: dict[str, list[Replica]] = {}
    for r in job.replicas:
        by_role.setdefault(r.role.lower(), []).append(r)
    fw = (job.framework or "").lower()
    workers = by_role.get("worker", [])

    def first(role: str) -> list[Replica]:
        return sorted(by_role[role], key=lambda r: r.index)[:1]

    if fw == "tensorflow":
        for role in ("chief", "master"):
            if role in by_role:
                return first(role), role
        if workers:
            if (job.success_policy or "").lower() == "allworkers":
                return workers, "all workers"
            return first("worker"), "worker-0"
    elif fw in ("pytorch", "xgboost") and "master" in by_role:
        return first("master"), "master"
    elif fw == "paddle" and "master" in by_role:  # PaddleJob (PS mode): every master (CONVENTIONS-V2 §4)
        return by_role["master"], "all masters"
    elif fw == "mxnet" and "scheduler" in by_role:
        return first("scheduler"), "scheduler"
    elif fw == "mpi" and "launcher" in by_role:
        return first("launcher"), "launcher"
    if workers:
        return workers, "all workers"
    # No operator rule applies: like plain Jobs, every replica must complete.
    return [r for r in job.replicas if r.workload == "Job"] or job.replicas, "all replicas"


def decide(job: JobModel, phases: dict[str, str], reasons: dict[str, str]) -> Decision | None:
    own = job.success  # an operator's own rule (controllers/), else the framework's below
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
    if need and all(phases.get(r.name) == SUCCEEDED for r in need):
        return Decision(SUCCEEDED, f"{rule} succeeded" if len(need) != 1 else f"{need[0].display} succeeded")
    return None
