"""The jobset target's host names: pod hostname `<job>-<task>-<j>-<i>` + subdomain `<job>`.

JobSet v0.12 names a pod by its replicatedJob (`<task>`: the role's taskName, else its name),
its Job j and its completion index i.  One Indexed Job per role gives `<job>-<task>-0-<i>.<job>`
(`jobset`); PyTorch and XGBoost workers are one-pod Jobs (`jobset-ranked`: `<job>-worker-<i>-0.<job>`).
"""

from collections.abc import Callable

from trainspec.compiler.schemes import NamingScheme

# Roles whose replicas are one-pod Jobs in the jobset target: their rank is index + 1 (the master
# is rank 0), which only the JobSet's job-global-index label gives (the downward API cannot add).
JOBSET_ONE_POD_JOBS: dict[str, tuple[str, ...]] = {"pytorch": ("worker",), "xgboost": ("worker",)}


def jobset_shape(framework: str, role: str, count: int) -> tuple[int, int]:
    """(Jobs, pods per Job) of a role's replicatedJob in the jobset target."""
    return (count, 1) if role in JOBSET_ONE_POD_JOBS.get(framework, ()) else (1, count)


def _jobset_named(one_pod_jobs: tuple[str, ...]) -> Callable[[str, str, str, int], str]:
    """The replicatedJob is named `task` (the role's taskName, else its name); one-pod Jobs by role."""
    def host(job: str, role: str, task: str, i: int) -> str:
        return f"{job}-{task}-{i}-0.{job}" if role in one_pod_jobs else f"{job}-{task}-0-{i}.{job}"
    return host


def _jobset_host(one_pod_jobs: tuple[str, ...]) -> Callable[[str, str, int], str]:
    named = _jobset_named(one_pod_jobs)
    return lambda job, role, i: named(job, role, role, i)


JOBSET = NamingScheme("jobset", "<job>-<task>-0-<i>.<job>", _jobset_host(()), named=_jobset_named(()))
JOBSET_RANKED = NamingScheme("jobset-ranked", "<job>-master-0-0.<job>, <job>-worker-<i>-0.<job>",
                             _jobset_host(("worker",)), named=_jobset_named(("worker",)))


def scheme_for(framework: str) -> NamingScheme:
    return JOBSET_RANKED if framework in JOBSET_ONE_POD_JOBS else JOBSET
