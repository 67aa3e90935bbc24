"""Host naming schemes: the DNS names replicas reach each other by, per target.

The spec's `{{ hosts.<role> }}` must name the hosts the target really creates, and
those differ (PRODUCT.md, shared/reference/CONVENTIONS.md):

  service       one headless Service per replica, `<job>-<role>-<i>`
                (the k8s target, the Kubeflow training operator, Helm, Compose)
  mpi-operator  pods with hostname `<job>-launcher` / `<job>-worker-<i>` and
                subdomain `<job>`: `<job>-launcher.<job>`, `<job>-worker-<i>.<job>`
  subdomain     pod hostname `<job>-<task>-<i>` + subdomain `<job>` (Volcano's svc plugin)
  jobset        pod hostname `<job>-<role>-<j>-<i>` + subdomain `<job>` (JobSet v0.12: replicatedJob
                `<role>`, its Job j, completion index i): one Indexed Job per role, so `<job>-<role>-0-<i>.<job>`;
                PyTorch and XGBoost workers are one-pod Jobs (`jobset-ranked`: `<job>-worker-<i>-0.<job>`)
  trainjob-*    Kubeflow Trainer v2's JobSet: torch and xgboost run master and workers as the `node` Job's
                pods, `<job>-node-0-<k>.<job>` at Trainer's port 29500 (master k=0, worker i k=i+1); jax
                runs its workers so (worker i k=i); mpi names the workers `node`

A scheme is a function (job, role, index) -> host name.  The planner renders the
spec's templates once per scheme some target of the framework needs
(`schemes_for`), so a new target adds its scheme with `register` and its
entry in `TARGET_SCHEMES` (see "jobset" below).

This module is plain data (no Jinja): targets may import it.
"""

from collections.abc import Callable
from typing import NamedTuple

# The scheme of the plan's own replicas (Replica.host) and of the per-replica rendering.
BASE = "service"


class NamingScheme(NamedTuple):
    name: str
    pattern: str  # for docs and messages
    host: Callable[[str, str, int], str]  # (job, role, index) -> the DNS name peers use
    port: int | None = None  # a port the scheme's system fixes for every host (None: the role's port)
    # (job, role, task, index) -> host, for schemes whose names derive from the target's per-role object
    # name (a Volcano task, a JobSet replicatedJob): spec v1.2's taskName (the role's name when unset)
    named: Callable[[str, str, str, int], str] | None = None

    def address_host(self, job: str, role: str, task: str, index: int) -> str:
        """The host of replica `index` of `role`, whose task (replicatedJob) is named `task`."""
        return self.named(job, role, task, index) if self.named is not None else self.host(job, role, index)


SCHEMES: dict[str, NamingScheme] = {}


def register(scheme: NamingScheme) -> NamingScheme:
    SCHEMES[scheme.name] = scheme
    return scheme


register(NamingScheme(BASE, "<job>-<role>-<i>", lambda job, role, i: f"{job}-{role}-{i}"))
register(NamingScheme("mpi-operator", "<job>-launcher.<job>, <job>-worker-<i>.<job>",
                      lambda job, role, i: f"{job}-launcher.{job}" if role == "launcher"
                      else f"{job}-{role}-{i}.{job}"))
register(NamingScheme("subdomain", "<job>-<task>-<i>.<job>", lambda job, role, i: f"{job}-{role}-{i}.{job}",
                      named=lambda job, role, task, i: f"{job}-{task}-{i}.{job}"))

# JobSet: roles whose replicatedJob is N one-pod Jobs instead of one Indexed Job of N pods (RANK =
# index + 1 for PyTorch workers needs the Job's global index; the downward API cannot add).
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


register(NamingScheme("jobset", "<job>-<task>-0-<i>.<job>", _jobset_host(()), named=_jobset_named(())))
register(NamingScheme("jobset-ranked", "<job>-master-0-0.<job>, <job>-worker-<i>-0.<job>",
                      _jobset_host(("worker",)), named=_jobset_named(("worker",))))
TRAINER_PORT = 29500  # Trainer's ContainerTrainerPort: PET_MASTER_PORT for torch
register(NamingScheme("trainjob-torch", "<job>-node-0-<k>.<job>:29500 (master k=0, worker i k=i+1)",
                      lambda job, role, i: f"{job}-node-0-{0 if role == 'master' else i + 1}.{job}", TRAINER_PORT))
register(NamingScheme("trainjob-jax", "<job>-node-0-<i>.<job>:29500",
                      lambda job, role, i: f"{job}-node-0-{i}.{job}", TRAINER_PORT))
register(NamingScheme("trainjob-mpi", "<job>-launcher-0-0.<job>, <job>-node-0-<i>.<job>",
                      lambda job, role, i: f"{job}-{'node' if role == 'worker' else role}-0-{i}.{job}"))

# target -> its scheme, or {framework: scheme, "*": default}.
TARGET_SCHEMES: dict[str, str | dict[str, str]] = {
    "k8s": BASE,
    "kubeflow": {"mpi": "mpi-operator", "*": BASE},
    "volcano": "subdomain",
    "helm": BASE,
    "compose": BASE,
    "jobset": {"pytorch": "jobset-ranked", "xgboost": "jobset-ranked", "*": "jobset"},
    # Trainer v2 has runtimes for torch, mpi, jax and xgboost only (compiler/checks.py reports the others);
    # xgboost's master + workers are numbered as torch's
    "trainjob": {"pytorch": "trainjob-torch", "xgboost": "trainjob-torch", "jax": "trainjob-jax",
                 "mpi": "trainjob-mpi", "*": BASE},
}


def scheme_for(target: str, framework: str) -> str:
    """The naming scheme `target` uses for a job of `framework` (the base scheme for unknown targets)."""
    entry = TARGET_SCHEMES.get(target, BASE)
    if isinstance(entry, str):
        return entry
    return entry.get(framework, entry.get("*", BASE))


def schemes_for(framework: str, targets: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The schemes `targets` (None: every known target) need for `framework`, the base scheme first."""
    out = [BASE]
    for target in TARGET_SCHEMES if targets is None else targets:
        scheme = scheme_for(target, framework)
        if scheme not in out:
            out.append(scheme)
    return tuple(out)


def targets_using(scheme: str, framework: str) -> tuple[str, ...]:
    return tuple(t for t in TARGET_SCHEMES if scheme_for(t, framework) == scheme)
