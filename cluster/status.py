"""A job on the cluster as the replica table local `ps` shows: role, index, phase, restarts, exit code,
node, age — from the job object (its spec says which replicas there should be, its status how the
job stands) and its pods (how each replica stands). Pure: objects in, rows out.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, NamedTuple

from trainspec.compiler import kinds
from trainspec.compiler.kinds.trainjob import TRAINING_RUNTIME, TRAINJOB

ROLE, INDEX = "trainspec.dev/role", "trainspec.dev/index"
KUBEFLOW_TYPE, KUBEFLOW_INDEX = "training.kubeflow.org/replica-type", "training.kubeflow.org/replica-index"
VOLCANO_TASK, VOLCANO_INDEX = "volcano.sh/task-spec", "volcano.sh/task-index"
JOBSET_RJOB, JOBSET_JOB_INDEX = "jobset.sigs.k8s.io/replicatedjob-name", "jobset.sigs.k8s.io/job-index"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
POD_INDEX = "apps.kubernetes.io/pod-index"  # a StatefulSet pod's ordinal (the k8s target's roles of Always)
# Waiting reasons that are the replica's real state, not a passing one.
_STUCK = ("CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError",
          "InvalidImageName", "CreateContainerError")


class ReplicaRow(NamedTuple):
    role: str
    number: int  # the replica's index in its role (`index` would shadow tuple.index)
    phase: str
    restarts: int
    exit_code: int | None
    node: str
    age: float | None  # seconds since the replica's pod started (None: no pod yet)
    reason: str
    pod: str
    ready: bool = False

    @property
    def name(self) -> str:
        return f"{self.role}-{self.number}"


class JobState(NamedTuple):
    job: str
    kind: str
    name: str
    phase: str
    message: str
    age: float | None
    replicas: tuple[ReplicaRow, ...]


def parse_time(text: Any) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None


def _int(value: Any, default: int = 1) -> int:
    """A count from an object on the cluster (a template the server stored as written may hold anything)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _labels(obj: dict) -> dict:
    return (obj.get("metadata") or {}).get("labels") or {}


def _template_role(template: Any, fallback: str) -> str:
    if isinstance(template, dict):
        labels = _labels(template)
        if isinstance(labels.get(ROLE), str):
            return labels[ROLE]
    return fallback


def _template_index(template: Any) -> int | None:
    raw = _labels(template).get(INDEX) if isinstance(template, dict) else None
    return int(raw) if isinstance(raw, str) and raw.isdigit() else None


# add(role, count, fixed index or None): a status reader's one call per group of replicas (expected_replicas).
Add = Callable[[str, int, int | None], None]


def expected_replicas(obj: dict) -> list[tuple[str, int]]:
    """(role, index) of every replica the job object asks for, in its own order: the kinds registry says
    whose object it is and where that kind's status reader lives (compiler/kinds/); built-in workloads here."""
    out: list[tuple[str, int]] = []
    counts: dict[str, int] = {}

    def add(role: str, n: int, fixed: int | None = None) -> None:
        for _ in range(n):
            index = fixed if fixed is not None and n == 1 else counts.get(role, 0)
            counts[role] = max(counts.get(role, 0), index + 1)
            out.append((role, index))

    name = kinds.entry_of(obj)
    reader = kinds.reader(name, "status") if name is not None else None
    if reader is not None:
        reader(obj, add)
    elif obj.get("kind") in ("Deployment", "StatefulSet"):
        spec, template = obj.get("spec") or {}, (obj.get("spec") or {}).get("template")
        add(_template_role(template, obj["metadata"]["name"]), _int(spec.get("replicas")), _template_index(template))
    return out


def kubeflow_expected(obj: dict, add: Add) -> None:
    """A Kubeflow job's replicas: each of its replica specs (`<framework>ReplicaSpecs`), in its order."""
    for field, value in (obj.get("spec") or {}).items():
        if field.endswith("ReplicaSpecs") and isinstance(value, dict):
            for rtype, rspec in value.items():
                rspec = rspec or {}
                add(_template_role(rspec.get("template"), rtype.lower()), _int(rspec.get("replicas")), None)


def volcano_expected(obj: dict, add: Add) -> None:
    for task in (obj.get("spec") or {}).get("tasks") or ():
        add(_template_role(task.get("template"), str(task.get("name"))), _int(task.get("replicas")),
            _template_index(task.get("template")))


def jobset_expected(obj: dict, add: Add) -> None:
    """A JobSet's replicas, or a TrainingRuntime's (its JobSet template's)."""
    spec = obj.get("spec") or {}
    jobs = spec.get("replicatedJobs") or ((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs")
    for rjob in jobs or ():
        jspec = (rjob.get("template") or {}).get("spec") or {}
        per_job = _int(jspec.get("parallelism") or jspec.get("completions"))
        add(_template_role(jspec.get("template"), str(rjob.get("name"))), _int(rjob.get("replicas")) * per_job, None)


def trainjob_expected(obj: dict, add: Add) -> None:
    """A TrainJob's replicas are its runtime's (job_state reads them from the TrainingRuntime's template)."""
    if obj.get("kind") == TRAINING_RUNTIME.kind:
        jobset_expected(obj, add)


def job_expected(obj: dict, add: Add) -> None:
    spec = obj.get("spec") or {}
    template = spec.get("template")
    n = _int(spec.get("completions") or spec.get("parallelism"))
    add(_template_role(template, obj["metadata"]["name"]), n, _template_index(template))


def job_phase(obj: dict) -> tuple[str, str]:
    """The job's state from its status, and a message; a job with no status has no controller acting on it yet."""
    status = obj.get("status")
    if not status:
        spec = obj.get("spec") or {}
        if spec.get("suspend") or (spec.get("runPolicy") or {}).get("suspend"):
            return "Suspended", ""
        if obj.get("kind") in ("Job", "Deployment", "StatefulSet", "Service", "ConfigMap") and \
                str(obj.get("apiVersion", "")) in ("batch/v1", "apps/v1", "v1"):
            return "Pending", ""
        return "Pending", f"no status yet: is the {obj.get('kind')} controller (its operator) running?"
    state = (status.get("state") or {}).get("phase") if isinstance(status.get("state"), dict) else None
    if state:  # Volcano
        return str(state), str((status.get("state") or {}).get("message") or "")
    latest: dict | None = None
    for cond in status.get("conditions") or ():
        if cond.get("status") == "True" and (latest is None or (cond.get("lastTransitionTime") or "") >=
                                             (latest.get("lastTransitionTime") or "")):
            latest = cond
    if latest is not None:
        names = {"Complete": "Succeeded", "Completed": "Succeeded", "Available": "Running"}
        return names.get(str(latest.get("type")), str(latest.get("type"))), str(latest.get("message") or "")
    if obj.get("kind") == "Job" and status.get("active"):
        return "Running", ""
    return "Pending", ""


def pod_identity(pod: dict, jobs: list[dict]) -> tuple[str, int] | None:
    """(role, index) of a pod: trainspec's own labels first, then each operator's."""
    labels = _labels(pod)
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    role = labels.get(ROLE) or (labels.get(KUBEFLOW_TYPE) or "").lower() or labels.get(VOLCANO_TASK) \
        or annotations.get(VOLCANO_TASK) or labels.get(JOBSET_RJOB)
    if not role:
        return None

    def number(*names: str) -> int | None:
        for name in names:
            raw = labels.get(name, annotations.get(name))
            if isinstance(raw, str) and raw.isdigit():
                return int(raw)
        return None

    index = number(INDEX)
    if index is None:
        index = number(KUBEFLOW_INDEX, VOLCANO_INDEX)
    if index is None and labels.get(JOBSET_RJOB):
        per_job = _jobset_per_job(jobs, labels[JOBSET_RJOB])
        index = (number(JOBSET_JOB_INDEX) or 0) * per_job + (number(COMPLETION_INDEX) or 0)
    if index is None:
        index = number(COMPLETION_INDEX, POD_INDEX) or 0
    return str(role), index


def _jobset_per_job(jobs: list[dict], rjob_name: str) -> int:
    for obj in jobs:
        spec = obj.get("spec") or {}
        for rjob in spec.get("replicatedJobs") or ((spec.get("template") or {}).get("spec") or {}).get(
                "replicatedJobs") or ():
            if rjob.get("name") == rjob_name:
                jspec = (rjob.get("template") or {}).get("spec") or {}
                return _int(jspec.get("parallelism") or jspec.get("completions"))
    return 1


def main_container(pod: dict) -> str | None:
    """The container kubectl picks: the `kubectl.kubernetes.io/default-container` annotation when it names
    one of the pod's containers, else the first."""
    names = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or () if isinstance(c, dict)]
    chosen = ((pod.get("metadata") or {}).get("annotations") or {}).get("kubectl.kubernetes.io/default-container")
    return chosen if chosen in names else (names[0] if names else None)


def _main_status(pod: dict) -> dict:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    first = main_container(pod)
    for st in statuses:
        if st.get("name") == first:
            return st
    return statuses[0] if statuses else {}


def pod_row(role: str, index: int, pods: list[dict], now: float) -> ReplicaRow:
    """One replica from its pods (a Job that recreates a failed pod leaves several: the newest is the
    replica now, and each earlier one counts as a restart)."""
    pods = sorted(pods, key=lambda p: ((p.get("metadata") or {}).get("creationTimestamp") or "",
                                       (p.get("metadata") or {}).get("name") or ""))
    pod = pods[-1]
    status = pod.get("status") or {}
    main = _main_status(pod)
    restarts = sum(_int(st.get("restartCount"), 0) for p in pods
                   for st in (p.get("status") or {}).get("containerStatuses") or ()) + len(pods) - 1
    phase, reason = str(status.get("phase") or "Pending"), str(status.get("reason") or "")
    state = main.get("state") or {}
    exit_code = None
    if "waiting" in state and (state["waiting"] or {}).get("reason") in _STUCK:
        reason = state["waiting"]["reason"]
    terminated = state.get("terminated") or (main.get("lastState") or {}).get("terminated")
    if terminated:
        exit_code = terminated.get("exitCode")
        reason = reason or str(terminated.get("reason") or "")
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        phase = "Terminating"
    started = parse_time(status.get("startTime")) or parse_time((pod.get("metadata") or {}).get("creationTimestamp"))
    return ReplicaRow(role, index, phase, restarts, exit_code, str((pod.get("spec") or {}).get("nodeName") or ""),
                      None if started is None else max(0.0, now - started), reason,
                      str((pod.get("metadata") or {}).get("name") or ""), bool(main.get("ready")))


def _trainer_node(who: tuple[str, int], trainjob: bool) -> tuple[str, int]:
    """Trainer v2's torch/xgboost runtimes run master and workers as one `node` Job: node 0 is the
    master, node i+1 worker i (targets/trainjob/scheme.py, `trainjob-torch`); the pod template says master."""
    role, index = who
    return ("worker", index - 1) if trainjob and role == "master" and index > 0 else who


def job_state(job: str, objects: list[dict], pods: list[dict], now: float) -> JobState:
    """The job's replica table from its workload objects (as stored, with status) and its pods."""
    workloads = [o for o in objects if expected_replicas(o) or o.get("kind") in (TRAINJOB.kind,)]
    builtin = ("Job", "Deployment", "StatefulSet", TRAINING_RUNTIME.kind)
    main = next((o for o in workloads if o.get("kind") not in builtin),
                workloads[0] if workloads else {})
    trainjob = any(o.get("kind") == TRAINJOB.kind for o in workloads)
    expected: list[tuple[str, int]] = []
    for obj in workloads:
        if obj.get("kind") != TRAINJOB.kind:
            expected.extend(e for e in map(lambda w: _trainer_node(w, trainjob), expected_replicas(obj))
                            if e not in expected)
    by_replica: dict[tuple[str, int], list[dict]] = {}
    for pod in pods:
        who = pod_identity(pod, workloads)
        if who is not None:
            by_replica.setdefault(_trainer_node(who, trainjob), []).append(pod)
    rows = []
    for who in expected + sorted(w for w in by_replica if w not in expected):
        if who in by_replica:
            rows.append(pod_row(who[0], who[1], by_replica[who], now))
        else:
            rows.append(ReplicaRow(who[0], who[1], "-", 0, None, "", None, "no pod", ""))
    if main.get("kind") in ("Job", "Deployment", "StatefulSet"):  # k8s target: a workload per role, none is "the job"
        phases = [job_phase(o)[0] for o in workloads]
        phase = "Failed" if "Failed" in phases else "Succeeded" if phases and all(
            p == "Succeeded" for p in phases) else "Running" if any(r.phase == "Running" for r in rows) else \
            (phases[0] if phases else "Pending")
        message = ""
    else:
        phase, message = job_phase(main) if main else ("NotFound", "")
    meta = main.get("metadata") or {}
    created = parse_time(meta.get("creationTimestamp"))
    return JobState(job, str(main.get("kind", "")), str(meta.get("name", job)), phase, message,
                    None if created is None else max(0.0, now - created), tuple(rows))


def age_text(seconds: float | None) -> str:
    """As local `ps` writes an age (emulator/console/table.py `age_text`), and days for jobs that run for days."""
    if seconds is None:
        return "-"
    s = int(max(seconds, 0))
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 172800:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def table(state: JobState) -> str:
    """The local `ps` table (emulator/console/table.py: REPLICA STATUS READY RESTARTS EXIT ... DETAIL, columns as
    wide as their widest cell, two spaces apart), with the cluster's ROLE, INDEX, NODE and AGE."""
    head = f"job {state.job}  {state.kind} {state.name}  {state.phase}"
    if state.message:
        head += f"  ({state.message})"
    names = ["REPLICA", "ROLE", "INDEX", "STATUS", "READY", "RESTARTS", "EXIT", "NODE", "AGE", "DETAIL"]
    body = [[r.name, r.role, str(r.number), r.phase, "yes" if r.ready else "-", str(r.restarts),
             "-" if r.exit_code is None else str(r.exit_code), r.node or "-", age_text(r.age), r.reason]
            for r in state.replicas]
    widths = [max(len(x[i]) for x in [names, *body]) for i in range(len(names))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in [names, *body]]
    return "\n".join([head, *lines]) + "\n"


def as_json(state: JobState) -> dict:
    return {"job": state.job, "kind": state.kind, "name": state.name, "phase": state.phase,
            "message": state.message, "age_seconds": state.age,
            "replicas": [{"name": r.name, "role": r.role, "index": r.number, "phase": r.phase, "restarts": r.restarts,
                          "ready": r.ready, "exit_code": r.exit_code, "node": r.node, "age_seconds": r.age,
                          "reason": r.reason, "pod": r.pod} for r in state.replicas]}
