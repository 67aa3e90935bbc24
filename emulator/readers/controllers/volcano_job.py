"""Volcano's Job controller (batch.volcano.sh/v1alpha1 Job) with its env, svc, ssh,
tensorflow, pytorch and mpi plugins.

Sources (shared/reference/CONVENTIONS.md §2; volcano-sh/volcano @ed72c7c8):
  * pods `<job>-<task>-<i>`, labels `volcano.sh/{job-name, task-spec, task-index,
    job-namespace}` (pkg/controllers/job/helpers/helpers.go, job_controller_util.go createJobPod);
  * webhook defaults: `svc` added with tensorflow/pytorch/mpi, `ssh` with mpi, maxRetry 3,
    minAvailable Σ replicas (pkg/webhooks/admission/jobs/mutate/mutate_job.go);
  * env plugin: VK_TASK_INDEX, VC_TASK_INDEX (plugins/env); svc plugin: hostname = pod name,
    subdomain = job (helpers.MakeDomainName `<hostname>.<subdomain>`), VC_<TASK>_HOSTS and
    VC_<TASK>_NUM in every container, the files /etc/volcano/<task>.host (plugins/svc);
    ssh plugin: the Secret `<job>-ssh` at --ssh-key-file-path (default /root/.ssh) as id_rsa,
    id_rsa.pub, authorized_keys, mode 0600 (plugins/ssh);
  * tensorflow plugin: TF_CONFIG (cluster ps/worker/chief/evaluator, no "environment" key), not
    for one task of one replica; pytorch plugin: MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK; mpi
    plugin: MPI_HOST on the master task (plugins/distributed-framework/*);
  * policies (job level, then the task's): `event`/`events` or `exitCode` → action;
    completion: a task's TaskCompleted→CompleteJob completes the job, else succeeded ≥ minSuccess,
    else every pod (pkg/controllers/job/state/running.go).
  * RestartJob (state/running.go RestartJobAction: KillJob, RetryCount++; restarting.go: RetryCount
    >= maxRetry fails the job): every pod is killed and created afresh, maxRetry-1 times (restarts.py);
    RestartTask / RestartPod the same for the task's pods / the failed pod (running.go KillTarget,
    RetryCount++: the same count);
    the policy a failed pod triggers is the first of its task's, then the job's, whose event is
    PodFailed or `*` or whose exitCode is the pod's (job_controller_util.go applyPolicies).
What the emulator does with the other actions: TerminateJob/AbortJob on PodFailed or an exit code
fail the job when a pod fails (with that code); RestartPartition restarts the failed pod (up to
maxRetry times for that pod); a pod with an exitCode policy that fails with another code fails the
job; PodEvicted never happens on one machine.
A task's `dependsOn` (names, `iteration: any|all`) holds its pods back, uncreated, until minAvailable
(default replicas) pods of each named task (of any one with `any`) are Running with every container
ready (job_controller_actions.go isDependsOnPodsReady): a start gate with no time limit (startorder.py).
"""

from __future__ import annotations

import json
from typing import Any

from ....compiler.kinds import volcano
from ...model.job import FAIL, GROUP, JOB, NONE, POD, RESTART
from .. import positions
from . import (
    UNLIMITED,
    ControllerSuccess,
    Created,
    Gate,
    JobRestart,
    Make,
    RestartRule,
    append_env,
    fail,
    meta,
    pod_wrapper,
)

FAIL_ACTIONS = ("TerminateJob", "AbortJob")
# What the controller kills and creates again, counted against maxRetry (state/running.go: KillJob for
# RestartJob, KillTarget for the task / pod; RetryCount++ either way). RestartPartition (a part of a
# task under network-topology scheduling) stays the pod's own retry here.
RESTART_SCOPES = {"RestartJob": JOB, "RestartTask": GROUP, "RestartPod": POD}
RESTART_ACTIONS = ("RestartJob", "RestartTask", "RestartPod", "RestartPartition")


def flags(args: list, defaults: dict[str, str]) -> dict[str, str]:
    """Go `flag` parsing of `--name=value` plugin arguments over the plugin's defaults."""
    out = dict(defaults)
    for arg in args or []:
        key, _, value = str(arg).lstrip("-").partition("=")
        out[key] = value
    return out


def _events(policy: dict) -> list[str]:
    events = list(policy.get("events") or [])
    if policy.get("event"):
        events.append(policy["event"])
    return [str(e) for e in events]


def restart_rules(task: dict, job_policies: list[dict]) -> list[RestartRule]:
    """What a failed pod of `task` triggers, in applyPolicies' order (job_controller_util.go): the
    task's policies, then the job's; a policy matches the PodFailed event (or `*`) or the exit code."""
    rules: list[RestartRule] = []
    for whose, policies in (("the task's", task.get("policies") or []), ("the job's", job_policies)):
        for p in policies:
            action = str(p.get("action"))
            kind = RESTART if action in RESTART_SCOPES else FAIL if action in FAIL_ACTIONS else NONE
            scope = RESTART_SCOPES.get(action, JOB)
            events = [e for e in _events(p) if e in ("PodFailed", "*")]
            if events:
                rules.append(RestartRule(kind, name=f"{whose} policy {events[0]}", said=action,
                                         groups=(str(task["name"]),), scope=scope))
            elif "exitCode" in p:
                rules.append(RestartRule(kind, name=f"{whose} policy exitCode {p['exitCode']}", said=action,
                                         groups=(str(task["name"]),), exit_codes=(int(p["exitCode"]),), scope=scope))
    return rules


def plugin_env(plugins: dict, tasks: list[dict], task: dict, i: int, task_hosts: dict[str, list[str]]
               ) -> list[tuple[str, object]]:
    env: list[tuple[str, object]] = []
    if "env" in plugins:
        env += [("VK_TASK_INDEX", str(i)), ("VC_TASK_INDEX", str(i))]
    if "svc" in plugins:
        svc: dict[str, str] = {}
        for t in tasks:
            key = str(t["name"]).upper().replace("-", "_")
            svc[f"VC_{key}_HOSTS"] = ",".join(task_hosts[t["name"]])
            svc[f"VC_{key}_NUM"] = str(t.get("replicas", 1))
        env += sorted(svc.items())
    if "tensorflow" in plugins and not (len(tasks) == 1 and int(tasks[0].get("replicas", 1)) == 1):
        f = flags(plugins["tensorflow"], {"ps": "ps", "worker": "worker", "chief": "chief",
                                          "evaluator": "evaluator", "port": "2222"})
        cluster = {k: [f"{h}:{f['port']}" for h in task_hosts.get(f[k], [])] for k in ("ps", "worker", "chief",
                                                                                         "evaluator")}
        task_type = next((k for k in ("chief", "worker", "ps", "evaluator") if f[k] == task["name"]), task["name"])
        env.append(("TF_CONFIG", json.dumps({"cluster": {k: v for k, v in cluster.items() if v},
                                             "task": {"type": task_type, "index": i}}, separators=(",", ":"))))
    if "pytorch" in plugins:
        f = flags(plugins["pytorch"], {"master": "master", "worker": "worker", "port": "23456"})
        if f["master"] in task_hosts:
            world = sum(int(t.get("replicas", 1)) for t in tasks if t["name"] in (f["master"], f["worker"]))
            env += [("MASTER_ADDR", task_hosts[f["master"]][0]), ("MASTER_PORT", f["port"]),
                    ("WORLD_SIZE", str(world))]
            if task["name"] == f["worker"]:
                env.append(("RANK", str(i + 1)))
            elif task["name"] == f["master"]:
                env.append(("RANK", "0"))
    if "mpi" in plugins:
        f = flags(plugins["mpi"], {"master": "master", "worker": "worker", "port": "22"})
        if task["name"] == f["master"]:
            env.append(("MPI_HOST", ",".join(task_hosts.get(f["worker"], []))))
    return env


def controller(doc: Any) -> Make | None:
    """The kinds registry's controller of the `volcano` entry."""
    return _make if volcano.JOB.matches(doc) else None


def _make(doc: dict, source: str, docs: list[Any], runtimes: tuple[Any, ...]) -> Created:
    return create(doc, source)


def create(job: dict, source: str) -> Created:
    name, ns = meta(job)
    spec = job.get("spec") or {}
    tasks = list(spec.get("tasks") or [])
    if not tasks:
        raise fail(source, job, ("spec", "tasks"), "is empty", label=f"Volcano Job {name}")
    plugins = dict(spec.get("plugins") or {})
    if {"tensorflow", "pytorch", "mpi"} & set(plugins):
        plugins.setdefault("svc", [])
    if "mpi" in plugins:
        plugins.setdefault("ssh", [])
    max_retry = int(spec.get("maxRetry", 3))

    def host(task: dict, i: int) -> str:
        pod_spec = (task.get("template") or {}).get("spec") or {}
        hostname = pod_spec.get("hostname") or f"{name}-{task['name']}-{i}"
        return f"{hostname}.{pod_spec.get('subdomain') or name}"

    task_hosts = {t["name"]: [host(t, i) for i in range(int(t.get("replicas", 1)))] for t in tasks}
    objects: list[dict] = []
    if "svc" in plugins:
        objects.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{name}-svc", "namespace": ns},
                        "data": {f"{t}.host": "\n".join(h) for t, h in task_hosts.items()}})
    ssh_path = flags(plugins.get("ssh", []), {"ssh-key-file-path": "/root/.ssh"})["ssh-key-file-path"]
    complete_tasks: list[list[str]] = []
    complete_names: list[str] = []
    tolerated: list[str] = []
    all_pods: list[str] = []
    rules: list[RestartRule] = []
    group_of: dict[str, str] = {}
    for t in tasks:
        task_rules = restart_rules(t, list(spec.get("policies") or []))
        rules += task_rules
        by_controller = any(r.action == RESTART for r in task_rules)
        policies = list(spec.get("policies") or []) + list(t.get("policies") or [])
        fail_codes = sorted({int(p["exitCode"]) for p in policies
                             if "exitCode" in p and p.get("action") in FAIL_ACTIONS})
        on_failed = [p.get("action") for p in policies if "PodFailed" in _events(p) or "*" in _events(p)]
        # A pod that fails with no policy acting on it leaves the job running (state/running.go): it
        # counts against minAvailable once every pod has finished.
        tolerate = not on_failed and not fail_codes
        pods: list[str] = []
        for i in range(int(t.get("replicas", 1))):
            template = positions.copy(t.get("template") or {})
            pod_spec = template.setdefault("spec", {})
            if not pod_spec.get("containers"):
                raise fail(source, t, ("template", "spec"), "has no containers", label=f"Volcano Job {name} task "
                           f"{t['name']}")
            restart = str(pod_spec.get("restartPolicy") or "Always")
            if restart == "Never":
                # RestartJob/Task/Pod: the pod fails at once and the controller restarts (restarts.py)
                restarts = max_retry if not by_controller and any(a in RESTART_ACTIONS for a in on_failed) else 0
            else:
                restarts = UNLIMITED  # the kubelet restarts in place; Volcano sees no PodFailed
            env = plugin_env(plugins, tasks, t, i, task_hosts)
            for c in [*(pod_spec.get("initContainers") or []), *pod_spec["containers"]]:
                append_env(c, env if c in pod_spec["containers"] else env[:2] if "env" in plugins else [])
            for c in pod_spec["containers"]:
                mounts = c.setdefault("volumeMounts", [])
                if "svc" in plugins and not any(m.get("mountPath") == "/etc/volcano" for m in mounts):
                    mounts.append({"name": f"{name}-svc", "mountPath": "/etc/volcano"})
                if "ssh" in plugins and not any(m.get("mountPath") == ssh_path for m in mounts):
                    mounts.append({"name": f"{name}-ssh", "mountPath": ssh_path})
            volumes = pod_spec.setdefault("volumes", [])
            if "svc" in plugins:
                volumes.append({"name": f"{name}-svc", "configMap": {"name": f"{name}-svc"}})
            if "ssh" in plugins:
                volumes.append({"name": f"{name}-ssh", "secret": {
                    "secretName": f"{name}-ssh", "defaultMode": 0o600,
                    "items": [{"key": "ssh-privatekey", "path": "id_rsa"},
                              {"key": "ssh-publickey", "path": "id_rsa.pub"},
                              {"key": "ssh-publickey", "path": "authorized_keys"}]}})
            pod = f"{name}-{t['name']}-{i}"
            tmpl_labels = (template.get("metadata") or {}).get("labels") or {}
            role = str(tmpl_labels.get("trainspec.dev/role") or t["name"])
            index = int(tmpl_labels.get("trainspec.dev/index", i)) if role != t["name"] else i
            labels = {"volcano.sh/job-name": name, "volcano.sh/task-spec": str(t["name"]),
                      "volcano.sh/task-index": str(i), "volcano.sh/job-namespace": ns}
            wrapper = pod_wrapper(name, pod, role, index, template, restart=restart, backoff_limit=restarts,
                                  failure_codes=fail_codes, labels=labels, namespace=ns,
                                  hostname=pod_spec.get("hostname") or pod, subdomain=pod_spec.get("subdomain") or name)
            if restart == "Always":
                wrapper["kind"], wrapper["apiVersion"] = "Deployment", "apps/v1"
            objects.append(wrapper)
            pods.append(pod)
            group_of[pod] = str(t["name"])
            if tolerate and restart == "Never":
                tolerated.append(pod)
        all_pods += pods
        if any("TaskCompleted" in _events(p) and p.get("action") == "CompleteJob" for p in t.get("policies") or []):
            complete_tasks.append(pods)
            complete_names.append(str(t["name"]))
    if complete_tasks:
        success = ControllerSuccess(complete_tasks, 1, "task " + " or ".join(complete_names))
    elif spec.get("minSuccess"):
        need = int(spec["minSuccess"])
        success = ControllerSuccess([[p] for p in all_pods], need, f"minSuccess {need}")
    else:
        success = ControllerSuccess([all_pods], 1, "all pods")
    success.tolerated = tolerated
    success.min_available = int(spec.get("minAvailable", len(all_pods)))
    framework = next((f for f in ("tensorflow", "pytorch", "mpi") if f in plugins), None)
    # maxRetry counts runs: RetryCount++ then `RetryCount >= maxRetry` fails (running.go, restarting.go)
    retry = JobRestart("Volcano", max(max_retry - 1, 0), rules, default=NONE, group_of=group_of,
                         limit=f"maxRetry {max_retry} counts runs", exhausted="Failed (retryCount reached maxRetry)")
    # Completing kills the pods still running (state/completing.go): cleanPodPolicy Running.
    return Created(name, ns, framework, objects, success, clean_pod_policy="Running",
                   restart=retry if any(r.action == RESTART for r in rules) else None,
                   gates=task_gates(tasks, source, name))


def task_gates(tasks: list[dict], source: str, name: str) -> dict[str, list[Gate]]:
    """pod -> what the controller waits for before creating the pods of its task: `dependsOn`
    (job_controller_actions.go waitDependsOnTaskMeetCondition, isDependsOnPodsReady)."""
    pods = {str(t["name"]): tuple(f"{name}-{t['name']}-{i}" for i in range(int(t.get("replicas", 1)))) for t in tasks}
    gates: dict[str, list[Gate]] = {}
    for k, t in enumerate(tasks):
        dep = t.get("dependsOn") or {}
        deps = [str(d) for d in dep.get("name") or []]
        for d in deps:
            if d not in pods:
                raise fail(source, t, ("dependsOn", "name"), f"no task named {d!r}",
                           label=f"Volcano Job {name} spec.tasks[{k}]")
        if not deps:
            continue
        # a task is ready once minAvailable (the webhook's default: replicas) of its pods are Running
        # with every container ready
        each = [Gate(pods[d], "ready", f"dependsOn {d}", need=int(next(x for x in tasks if x["name"] == d)
                                                                      .get("minAvailable", len(pods[d]))))
                for d in deps]
        wait = [Gate((), "ready", "dependsOn", any_of=tuple(each))] if dep.get("iteration") == "any" \
            and len(each) > 1 else each
        for pod in pods[str(t["name"])]:
            gates[pod] = wait
    return gates
