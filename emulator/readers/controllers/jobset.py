"""JobSet (jobset.x-k8s.io/v1alpha2) and the Indexed Job controller under it.

Sources (shared/reference/CONVENTIONS-V2.md §1-2; kubernetes-sigs/jobset v0.12.0,
kubernetes job controller):
  * child Jobs `<js>-<rj>-<j>` (placement.go GenJobName); each Indexed Job's pods have the
    hostname `<js>-<rj>-<j>-<i>` and, with network.enableDNSHostnames (default true), the
    subdomain network.subdomain or the JobSet's name (jobset_controller.go constructJob,
    GetSubdomain): `<js>-<rj>-<j>-<i>.<subdomain>`;
  * labels (and annotations) `jobset.sigs.k8s.io/{jobset-name, replicatedjob-name,
    replicatedjob-replicas, job-index, job-global-index, global-replicas, group-name,
    restart-attempt}` (labelAndAnnotateObject) and the completion index
    `batch.kubernetes.io/job-completion-index` (indexed_job_utils.go);
  * JOB_COMPLETION_INDEX appended to every container that has no variable of that name
    (addCompletionIndexEnvVariable); pod restartPolicy OnFailure where unset (webhook);
  * each Job's backoffLimit counts the failures of all its pods (job_controller.go; jobcount.py:
    the pod wrappers name their Job as owner), with backoffLimitPerIndex, maxFailedIndexes and
    its podFailurePolicy as written; a failed Job's other pods are deleted;
  * a Job completes when every index succeeded, or when its successPolicy rule
    (succeededIndexes / succeededCount) is met; the JobSet succeeds when All (or Any) of the
    targeted replicatedJobs' Jobs completed (success_policy.go); without failurePolicy the first
    failed Job fails the JobSet (failure_policy.go).
  * startupPolicy InOrder creates replicatedJob k+1 once every Job of k is ready (succeeded +
    ready pods >= min(parallelism, completions)), dependsOn `Ready` waits for the named
    replicatedJob the same way, dependsOn `Complete` until each of its Jobs completed
    (startup_policy.go, depends_on.go, jobset_controller.go calculateReplicatedJobStatuses):
    start gates (startorder.py) that hold the pods back, uncreated, for as long as the controller
    would — until the gate opens or the JobSet is decided (a failed Job fails it, so the pods
    behind a failed Job never start; a Job's activeDeadlineSeconds counts from its creation).
    A pod with no readinessProbe is ready once running. InOrder together with dependsOn,
    dependsOn on the first replicatedJob or on a later one, are refused as the API server does.
  * failurePolicy (failure_policy.go): rules in order, first match, no match = RestartJobSet;
    maxRestarts counted restarts, then ReachedMaxRestarts; every pod recreated with the
    restart-attempt label raised (restarts.py, which names its sources). Recreate runs as
    BlockingRecreate (one address per pod on one machine).
Not reproduced: the alpha restartStrategy InPlaceRestart and actions RestartJob /
RestartJobAndIgnoreMaxRestarts (refused).
"""

from __future__ import annotations

from typing import Any

from ....compiler.kinds.jobset import DEFAULT_RULE_NAME, JOBSET
from ...model.job import FAIL, RESTART, RESTART_UNCOUNTED
from .. import positions
from . import ControllerSuccess, Created, Gate, JobRestart, Make, RestartRule, append_env, fail, meta, pod_wrapper

INDEX_KEY = "batch.kubernetes.io/job-completion-index"
PREFIX = "jobset.sigs.k8s.io/"
# failurePolicy actions the v0.12.0 controller applies without an alpha feature gate (failure_policy.go)
ACTIONS = {"FailJobSet": FAIL, "RestartJobSet": RESTART, "RestartJobSetAndIgnoreMaxRestarts": RESTART_UNCOUNTED}
REASONS = ("BackoffLimitExceeded", "DeadlineExceeded", "FailedIndexes", "MaxFailedIndexesExceeded",
           "PodFailurePolicy")  # jobset_webhook.go validOnJobFailureReasons


def indexes(text: str, total: int) -> list[int]:
    """An interval string such as `0,2-3` (Job successPolicy succeededIndexes)."""
    out: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out += [i for i in range(int(lo), int(hi or lo) + 1) if i < total]
    return out


def job_success(spec: dict, pods: list[str]) -> list[str]:
    """The pods whose success completes one Indexed Job (the first successPolicy rule; else all)."""
    for rule in ((spec.get("successPolicy") or {}).get("rules") or []):
        if "succeededIndexes" in rule:
            return [pods[i] for i in indexes(rule["succeededIndexes"], len(pods))]
        if "succeededCount" in rule:
            return pods[:int(rule["succeededCount"])]  # the first N: one choice among many
    return pods


def job_success_count(spec: dict) -> int | None:
    """A successPolicy whose first rule is `succeededCount` alone: the Job succeeds when any that many of its
    indexes have (batch/v1 Job successPolicy); None otherwise."""
    rules = (spec.get("successPolicy") or {}).get("rules") or []
    if rules and "succeededCount" in rules[0] and "succeededIndexes" not in rules[0]:
        return int(rules[0]["succeededCount"])
    return None


def failure_policy(spec: dict, pods_of: dict[str, list[str]], source: str, label: str) -> JobRestart | None:
    """spec.failurePolicy as the restart policy restarts.py runs; None without one (the first failed
    Job fails the JobSet, policy.py). `label` names the JobSet in errors without a position."""
    fp = spec.get("failurePolicy")
    if fp is None:
        return None
    strategy = str(fp.get("restartStrategy") or "Recreate")
    if strategy not in ("Recreate", "BlockingRecreate"):
        raise fail(source, spec, ("failurePolicy", "restartStrategy"), f"{strategy!r} is not reproduced by the "
                   "emulator (an alpha feature gate, off in JobSet v0.12.0)", hint="use Recreate or BlockingRecreate",
                   label=label)
    rules: list[RestartRule] = []
    for n, rule in enumerate(fp.get("rules") or []):
        at, action = ("failurePolicy", "rules", n), str(rule.get("action"))
        if action not in ACTIONS:
            raise fail(source, spec, at + ("action",), f"{action!r} is not reproduced by the emulator"
                       + (" (it needs the alpha RestartJob feature gate, off in JobSet v0.12.0)"
                          if action.startswith("RestartJob") else ""), hint="use " + " | ".join(ACTIONS), label=label)
        reasons = tuple(str(r) for r in rule.get("onJobFailureReasons") or [])
        bad = [r for r in reasons if r not in REASONS]
        if bad:
            raise fail(source, spec, at + ("onJobFailureReasons",), f"{', '.join(bad)} is not a Job failure reason",
                       hint="use " + " | ".join(REASONS), label=label)
        targets = tuple(str(t) for t in rule.get("targetReplicatedJobs") or [])
        missing = [t for t in targets if t not in pods_of]
        if missing:
            raise fail(source, spec, at + ("targetReplicatedJobs",),
                       f"no replicatedJob {', '.join(map(repr, missing))}", label=label)
        named = rule.get("name") or DEFAULT_RULE_NAME.format(n)  # the webhook's default name
        rules.append(RestartRule(ACTIONS[action], name=f"rule {named}", said=action,
                                 reasons=reasons, groups=targets,
                                 messages=tuple(str(m) for m in rule.get("onJobFailureMessagePatterns") or [])))
    most = int(fp.get("maxRestarts", 0))
    return JobRestart("JobSet failurePolicy", most, rules, default=RESTART,
                      group_of={pod: rj for rj, pods in pods_of.items() for pod in pods},
                      limit=f"maxRestarts {most}", attempt_label=PREFIX + "restart-attempt",
                      owner_of={pod: pod.rsplit("-", 1)[0] for pods in pods_of.values() for pod in pods})


def controller(doc: Any) -> Make | None:
    """The kinds registry's controller of the `jobset` entry."""
    return _make if JOBSET.matches(doc) else None


def _make(doc: dict, source: str, docs: list[Any], runtimes: tuple[Any, ...]) -> Created:
    rjobs = {str(r.get("name")) for r in (doc.get("spec") or {}).get("replicatedJobs") or []}
    # run.py starts an MPI job's workers (their sshd) before the launcher, as InOrder does here.
    return create(doc, source, framework="mpi" if "launcher" in rjobs else None)


def create(js: dict, source: str, framework: str | None = None) -> Created:
    name, ns = meta(js)
    spec = js.get("spec") or {}
    rjobs = list(spec.get("replicatedJobs") or [])
    if not rjobs:
        raise fail(source, js, ("spec", "replicatedJobs"), "is empty", label=f"JobSet {name}")
    network = spec.get("network") or {}
    subdomain = (network.get("subdomain") or name) if network.get("enableDNSHostnames", True) else None
    global_replicas = sum(int(r.get("replicas", 1)) for r in rjobs)
    objects: list[dict] = []
    jobs_of: dict[str, list[list[str]]] = {}
    any_of: dict[str, list[tuple[list[str], int | None]]] = {}  # replicatedJob -> (its pods, succeededCount)
    job_pods: dict[str, list[tuple[list[str], list[str], int]]] = {}  # for the start gates
    global_index = 0
    for rj in rjobs:
        rname = str(rj.get("name"))
        jt = rj.get("template") or {}
        jspec = jt.get("spec") or {}
        completions = int(jspec.get("completions", jspec.get("parallelism", 1)))
        job_labels = (jt.get("metadata") or {}).get("labels") or {}
        job_fields = {k: jspec[k] for k in ("backoffLimitPerIndex", "maxFailedIndexes", "podFailurePolicy")
                      if k in jspec}
        # batch/v1 defaults: with backoffLimitPerIndex no Job-wide limit unless one is set
        backoff = int(jspec.get("backoffLimit", 6 if "backoffLimitPerIndex" not in jspec else 2**31 - 1))
        for j in range(int(rj.get("replicas", 1))):
            pods: list[str] = []
            for i in range(completions):
                template = positions.copy(jspec.get("template") or {})
                pod_spec = template.setdefault("spec", {})
                if not pod_spec.get("containers"):
                    raise fail(source, jspec, ("template", "spec"), "has no containers",
                               label=f"JobSet {name} replicatedJob {rname}")
                for c in [*(pod_spec.get("initContainers") or []), *pod_spec["containers"]]:
                    if not any(e.get("name") == "JOB_COMPLETION_INDEX" for e in c.get("env") or []):
                        append_env(c, [("JOB_COMPLETION_INDEX",
                                        {"fieldRef": {"fieldPath": f"metadata.labels['{INDEX_KEY}']"}})])
                labels = {**{str(k): str(v) for k, v in job_labels.items()},
                          PREFIX + "jobset-name": name, PREFIX + "replicatedjob-name": rname,
                          PREFIX + "replicatedjob-replicas": str(rj.get("replicas", 1)),
                          PREFIX + "job-index": str(j), PREFIX + "job-global-index": str(global_index),
                          PREFIX + "global-replicas": str(global_replicas),
                          PREFIX + "group-name": str(rj.get("groupName") or "default"),
                          PREFIX + "restart-attempt": "0", INDEX_KEY: str(i)}
                restart = str(pod_spec.get("restartPolicy") or "OnFailure")
                pod = f"{name}-{rname}-{j}-{i}"
                # One Job of `completions` pods: its backoffLimit counts them all (jobcount.py).
                objects.append(pod_wrapper(name, pod, rname, j * completions + i, template, restart=restart,
                                           backoff_limit=backoff, hostname=pod, subdomain=subdomain,
                                           labels=labels, namespace=ns, owner=f"{name}-{rname}-{j}",
                                           job_fields=job_fields))
                pods.append(pod)
            jobs_of.setdefault(rname, []).append(job_success(jspec, pods))
            any_of.setdefault(rname, []).append((pods, job_success_count(jspec)))
            parallelism = int(jspec.get("parallelism", completions))
            job_pods.setdefault(rname, []).append((pods, jobs_of[rname][-1], min(parallelism, completions)))
            global_index += 1
    policy = spec.get("successPolicy") or {}
    targets = [str(t) for t in policy.get("targetReplicatedJobs") or []] or [str(r.get("name")) for r in rjobs]
    for t in targets:
        if t not in jobs_of:
            raise fail(source, spec, ("successPolicy", "targetReplicatedJobs"), f"no replicatedJob {t!r}",
                       label=f"JobSet {name} spec")
    groups = [g for t in targets for g in jobs_of[t]]
    any_one = policy.get("operator") == "Any"
    success = ControllerSuccess(groups, 1 if any_one else len(groups),
                          ("any of " if any_one else "") + " and ".join(targets))
    only = [job for t in targets for job in any_of[t]]
    one_count = only[0][1] if len(only) == 1 else None
    if one_count is not None:
        # one Job decides, by succeededCount: any that many of its pods (e.g. trainspec's AnyReplica)
        job_pods_all, count = only[0][0], one_count
        success = ControllerSuccess([[p] for p in job_pods_all], count, f"{targets[0]} ({count} succeeded)")
    pods_of = {rj: [p for pods, _, _ in jobs for p in pods] for rj, jobs in job_pods.items()}
    return Created(name, ns, framework, objects, success, clean_pod_policy="Running",
                   gates=start_gates(spec, rjobs, job_pods, source, name),
                   restart=failure_policy(spec, pods_of, source, f"JobSet {name} spec"))


def start_gates(spec: dict, rjobs: list[dict], jobs: dict[str, list[tuple[list[str], list[str], int]]],
                source: str, name: str) -> dict[str, list[Gate]]:
    """pod -> what the JobSet controller waits for before it creates the pod's Job.

    `jobs`: replicatedJob -> its Jobs as (pods, the pods whose success completes it, the ready
    count that makes it ready). A Job is ready when succeeded + ready pods >= min(parallelism,
    completions); InOrder waits for every Job of the replicatedJob before (jobset_controller.go
    calculateReplicatedJobStatuses, startup_policy.go allReplicasStarted), dependsOn Ready the same on
    the named one, dependsOn Complete for each of its Jobs to complete (depends_on.go). Refused as
    the API server refuses: InOrder with dependsOn (the CRD's CEL rule), dependsOn on the first
    replicatedJob or on one not listed before it, a status other than Ready or Complete (webhook, CRD).
    """
    in_order = (spec.get("startupPolicy") or {}).get("startupPolicyOrder") == "InOrder"
    names = [str(r.get("name")) for r in rjobs]
    label = f"JobSet {name} spec"
    if in_order and any(r.get("dependsOn") for r in rjobs):
        raise fail(source, spec, ("startupPolicy",), "StartupPolicy and DependsOn APIs are mutually exclusive",
                   hint="keep dependsOn (startupPolicy is deprecated) or InOrder, not both", label=label)
    gates: dict[str, list[Gate]] = {}
    for k, rj in enumerate(rjobs):
        wait: list[Gate] = []
        if in_order and k:
            wait += [Gate(tuple(pods), "ready_or_done", "InOrder", need=need)
                     for pods, _, need in jobs.get(names[k - 1], [])]
        for n, dep in enumerate(rj.get("dependsOn") or []):
            dep_name, status = str(dep.get("name")), dep.get("status")
            field = ("replicatedJobs", k, "dependsOn", n)
            if k == 0:
                raise fail(source, spec, ("replicatedJobs", 0, "dependsOn"), "the first replicatedJob cannot use "
                           "dependsOn", hint="move it to a replicatedJob listed after the one it depends on",
                           label=label)
            if dep_name not in names[:k]:
                raise fail(source, spec, field + ("name",), f"{dep_name!r} is not a replicatedJob listed before "
                           f"{names[k]!r}", hint="dependsOn names an earlier replicatedJob", label=label)
            if status not in ("Ready", "Complete"):
                raise fail(source, spec, field + ("status",), f"{status!r} is not Ready or Complete", label=label)
            if status == "Ready":
                wait += [Gate(tuple(pods), "ready_or_done", "dependsOn Ready", need=need)
                         for pods, _, need in jobs.get(dep_name, [])]
            else:
                wait += [Gate(tuple(done), "complete", "dependsOn Complete") for _, done, _ in jobs.get(dep_name, [])]
        for pods, _, _ in jobs.get(names[k], []) if wait else []:
            for pod in pods:
                gates[pod] = wait
    return gates
