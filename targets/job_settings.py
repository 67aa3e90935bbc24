"""The job-level settings the JobSet-shaped targets read from the plan (jobset; trainjob's runtime, whose
template is a JobSet's; k8s's framework env, written as the jobset target's): one projection of the plan,
so the three read the same fields the same way."""

from __future__ import annotations

from typing import NamedTuple

from trainspec.compiler.plan import JobPlan


class Settings(NamedTuple):
    backoff_limit: int | None
    active_deadline_seconds: int | None
    ttl_seconds_after_finished: int | None
    tf_success_policy: str | None
    nproc_per_node: str | None
    mpi_implementation: str
    queue: str | None


def settings_of(plan: JobPlan) -> Settings:
    return Settings(plan.backoff_limit, plan.active_deadline_seconds, plan.cleanup.ttl_seconds_after_finished,
                    plan.success_policy, plan.nproc_per_node, plan.mpi_implementation, plan.scheduling.queue)
