"""Semantic equality of two training-job manifests (Kubeflow v1 / MPIJob v2beta1 / Volcano Job).

`semantic_diff(source, compiled, task_roles)` -> list of differences ("" when none).
Both manifests are reduced to what the job *does* — replicas, containers, image,
command/args, the user's env, resources, volumes, restart and run policies,
scheduling — with the operators' defaults filled in and what trainspec adds
removed:

- labels `app.kubernetes.io/*`, `trainspec.dev/*`; env `TRAINSPEC_*` and, for a job with a
  framework, the env the operators / Volcano plugins inject (TF_CONFIG, MASTER_ADDR..., PET_*,
  DMLC_*, OMPI_*...), which the volcano target writes itself where Volcano has no plugin (a
  `generic` job's PADDLE_*, DMLC_*... are the user's and compared);
- the topology ConfigMap, the MPI hostfile volume on a Volcano launcher, the
  framework's port entry (its number is compared), the `env`/`svc`/`ssh` plugins
  with trainspec's own arguments and the role names in the framework plugin's;
  init containers' volume mounts (trainspec mounts the role's volumes in them);
- a Kubeflow v1 job's legacy top-level cleanPodPolicy/ttlSecondsAfterFinished/activeDeadlineSeconds/
  backoffLimit as the runPolicy ones they became;
- explicit defaults: replicas 1, the framework's restartPolicy, cleanPodPolicy None,
  slotsPerWorker 1, mpiImplementation OpenMPI, sshAuthMountPath /root/.ssh, the MPI
  worker's `/usr/sbin/sshd -De` (Kubeflow), Volcano's queue/maxRetry/minAvailable/scheduler;
  requests default to limits; quantities compare as strings; a Volcano job's priority class
  stands for its pods' (Volcano's controller gives it to pods without one), a Kubeflow job's
  does not (the PodGroup reads it, kube-scheduler the pods');
- what the API server makes of a manifest (`_api_defaults`): null is absent, an env var without
  value is "", `fieldRef.apiVersion` v1 is the default; the metadata it sets on a job read back
  from a cluster (uid, resourceVersion, managedFields...).

Everything else is compared as written: labels and annotations under `volcano.sh/`,
`training.kubeflow.org/`, `scheduling.k8s.io/`, Volcano policies (job and task), finalizers and
ownerReferences.
"""

from __future__ import annotations

import copy

REPLICA_FIELDS = {"TFJob": ("tensorflow", "tfReplicaSpecs"), "PyTorchJob": ("pytorch", "pytorchReplicaSpecs"),
                  "MXJob": ("mxnet", "mxReplicaSpecs"), "XGBoostJob": ("xgboost", "xgbReplicaSpecs"),
                  "PaddleJob": ("paddle", "paddleReplicaSpecs"), "JAXJob": ("jax", "jaxReplicaSpecs"),
                  "MPIJob": ("mpi", "mpiReplicaSpecs")}
RESTART = {"generic": "Never", "tensorflow": "Never", "pytorch": "OnFailure", "mxnet": "Never", "xgboost": "Never",
           "paddle": "OnFailure", "jax": "Never"}
PORTS = {"tensorflow": ("tfjob-port", 2222), "pytorch": ("pytorchjob-port", 23456), "mxnet": ("mxjob-port", 9091),
         "mpi": ("mpijob-port", 22), "xgboost": ("xgboostjob-port", 9999), "paddle": ("master", 36543),
         "jax": ("jaxjob-port", 6666), "generic": ("trainspec", 8080)}
INJECTED = ("TF_CONFIG", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "PYTHONUNBUFFERED", "PET_", "DMLC_",
            "MX_CONFIG", "OMPI_MCA_", "I_MPI_HYDRA_HOST_FILE", "I_MPI_PERHOST", "HYDRA_HOST_FILE", "K_MPI_JOB_ROLE",
            "MPI_HOST", "WORKER_PORT", "WORKER_ADDRS", "PADDLE_", "POD_IP_DUMMY", "COORDINATOR_", "NUM_PROCESSES",
            "PROCESS_ID", "TRAINSPEC_", "VC_", "VK_TASK_INDEX")
OWN_LABELS = ("app.kubernetes.io/", "trainspec.dev/")
SERVER_SET = ("uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
              "deletionGracePeriodSeconds", "managedFields", "selfLink")
MPI_WORKER_COMMAND = ["/usr/sbin/sshd", "-De"]
TRAINSPEC_VOLUMES = ("mpi-job-config",)


def job_object(docs: list[dict]) -> dict:
    """The job in a multi-document manifest (trainspec's output also holds a topology ConfigMap)."""
    jobs = [d for d in docs if isinstance(d, dict) and (d.get("kind") in REPLICA_FIELDS or d.get("kind") == "Job")]
    assert len(jobs) == 1, f"expected one job, found {[d.get('kind') for d in docs]}"
    return jobs[0]


def semantic_diff(source: dict, compiled: dict, task_roles: dict[str, str] | None = None,
                  framework: str | None = None) -> list[str]:
    """Differences between what the two jobs do; empty when they are semantically equal.

    `task_roles` renames the source's Volcano tasks to trainspec's role names (e.g.
    {"mpimaster": "launcher"}); the compiled manifest's tasks are named by role.
    `framework` is the framework of a Volcano source without a framework plugin.
    """
    a, b = (normalize(_api_defaults(source), task_roles or {}, framework),
            normalize(_api_defaults(compiled), {}, framework))
    return _diff(a, b, "")


def _api_defaults(node):
    """What the API server makes of a manifest before any controller reads it, so that two spellings of
    one object compare equal: a key whose value is null is absent (`command:` with nothing after it); an
    env var without `value` or `valueFrom` is set to ""; `fieldRef.apiVersion` defaults to v1."""
    if isinstance(node, list):
        return [_api_defaults(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: _api_defaults(v) for k, v in node.items() if v is not None}
    if isinstance(out.get("env"), list):
        out["env"] = [dict(e, value="") if isinstance(e, dict) and "value" not in e and "valueFrom" not in e
                      else e for e in out["env"]]
    ref = out.get("fieldRef")
    if isinstance(ref, dict) and ref.get("apiVersion") == "v1":
        out["fieldRef"] = {k: v for k, v in ref.items() if k != "apiVersion"}
    return out


def normalize(job: dict, task_roles: dict[str, str], framework: str | None = None) -> dict:
    job = copy.deepcopy(job)
    meta = job.get("metadata") or {}
    out = {"kind": job["kind"], "name": meta.get("name"), "namespace": meta.get("namespace") or "default",
           "labels": _own_removed(meta.get("labels")), "annotations": dict(meta.get("annotations") or {}),
           # finalizers, ownerReferences...; not what the API server sets on a job read back from a cluster
           "metadata": {k: v for k, v in meta.items() if k not in ("name", "namespace", "labels", "annotations")
                        + SERVER_SET}}
    if job["kind"] == "Job":
        out["spec"] = _volcano(job["spec"], task_roles, framework, out["labels"])
    else:
        out["spec"] = _kubeflow(job["kind"], job["spec"], out["labels"])
    return out


def _own_removed(labels) -> dict:
    return {k: str(v) for k, v in (labels or {}).items() if not k.startswith(OWN_LABELS)}


def _kubeflow(kind: str, spec: dict, job_labels: dict) -> dict:
    framework, field = REPLICA_FIELDS[kind]
    replicas = spec.pop(field)
    run = dict(spec.pop("runPolicy", None) or {})
    for key in ("cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        if key in spec and framework != "mpi":  # tf-operator v1.0's place for them, before runPolicy
            run.setdefault(key, spec.pop(key))
    run.setdefault("cleanPodPolicy", "None")
    sched = dict(run.pop("schedulingPolicy", None) or {})
    # the gang scheduler's PodGroup reads schedulingPolicy.priorityClass, kube-scheduler reads the pods':
    # not one setting (unlike Volcano, whose controller gives pods without one the job's)
    priority = None
    if sched:
        run["schedulingPolicy"] = sched
    if framework == "tensorflow" and spec.get("successPolicy") == "":
        spec.pop("successPolicy")
    if framework == "pytorch":
        spec["nprocPerNode"] = str(spec.get("nprocPerNode", "auto"))
    if framework == "mxnet":
        spec.setdefault("jobMode", "MXTrain")
    if framework == "mpi":
        spec.setdefault("slotsPerWorker", 1)
        spec.setdefault("mpiImplementation", "OpenMPI")
        spec.setdefault("sshAuthMountPath", "/root/.ssh")
    roles = {}
    for rtype, body in replicas.items():
        name = rtype.lower()
        name = "chief" if framework == "tensorflow" and name == "master" else name
        default = RESTART.get(framework) or ("OnFailure" if name == "launcher" else "Never")
        pod = _pod(body.get("template") or {}, framework, priority, job_labels)
        if framework == "mpi" and name == "worker":
            main = pod["main"]
            if "command" not in main and "args" not in main:
                main["command"] = list(MPI_WORKER_COMMAND)
        pod.get("spec", {}).pop("restartPolicy", None)
        roles[name] = {"replicas": body.get("replicas", 1), "restartPolicy": body.get("restartPolicy", default),
                       "pod": pod, **{k: v for k, v in body.items() if k not in ("replicas", "restartPolicy",
                                                                                  "template")}}
    return {"framework": framework, "runPolicy": run, "roles": roles, **spec}


def _volcano(spec: dict, task_roles: dict[str, str], framework: str | None, job_labels: dict) -> dict:
    tasks = spec.pop("tasks")
    total = sum(t.get("replicas", 1) for t in tasks)
    scheduler = spec.pop("schedulerName", None) or "volcano"
    out = {"schedulerName": scheduler, "minAvailable": spec.pop("minAvailable", total),
           "queue": spec.pop("queue", None) or "default", "maxRetry": spec.pop("maxRetry", 3)}
    plugins = spec.pop("plugins", None) or {}
    framework = next((p for p in ("tensorflow", "pytorch", "mpi") if p in plugins), framework)
    port = None
    kept = {}
    for name, args in plugins.items():
        args = [str(a) for a in args or []]
        if name == "svc":
            args = [a for a in args if a not in ("--publish-not-ready-addresses", "--publish-not-ready-addresses=true")]
        elif name == "ssh":
            args = [a for a in args if a != "--ssh-key-file-path=/root/.ssh"]
        elif name in ("tensorflow", "pytorch", "mpi"):
            for a in args:
                if a.startswith("--port="):
                    port = int(a.split("=", 1)[1])
            args = [a for a in args if a.lstrip("-").partition("=")[0] not in
                    ("ps", "worker", "chief", "evaluator", "master", "port")]
        if args or name not in ("env", "svc", "ssh", "tensorflow", "pytorch", "mpi"):
            kept[name] = args
    out["plugins"] = kept
    out["policies"] = list(spec.pop("policies", None) or [])
    out.update(spec)
    roles = {}
    for task in tasks:
        role = task_roles.get(task["name"], task["name"])
        tpl = task.get("template") or {}
        pod_spec = tpl.setdefault("spec", {})
        restart = pod_spec.pop("restartPolicy", None) or "Always"
        pod_spec.setdefault("schedulerName", scheduler)
        if pod_spec["schedulerName"] == scheduler:
            pod_spec.pop("schedulerName")
        pod = _pod(tpl, _container_framework(tpl, framework), spec.get("priorityClassName"), job_labels, port)
        policies = list(task.get("policies") or [])
        pass
        roles[role] = {"replicas": task.get("replicas", 1), "restartPolicy": restart, "pod": pod,
                       "policies": sorted(policies, key=str),
                       **{k: v for k, v in task.items() if k not in ("name", "replicas", "template", "policies")}}
    out["roles"] = _folded(roles)
    return out


def _folded(roles: dict[str, dict]) -> dict[str, dict]:
    """trainspec's one-task-per-replica form (`<role>-<i>`, replicas 1 each: targets/volcano/render.py splits when a
    per-replica value cannot come from the task index) as one role of that many replicas, when the replicas'
    tasks are the same apart from the injected env (already removed)."""
    groups: dict[str, list[tuple[int, dict]]] = {}
    for name, body in roles.items():
        base, _, index = name.rpartition("-")
        if not base or not index.isdigit() or body["replicas"] != 1:
            return roles
        groups.setdefault(base, []).append((int(index), body))
    out = {}
    for base, members in groups.items():
        for _, body in members:  # the svc plugin's hostname / subdomain, written out when the plugin is not used
            for key in ("hostname", "subdomain"):
                body["pod"].get("spec", {}).pop(key, None)
        members.sort(key=lambda m: m[0])
        bodies = [b for _, b in members]
        if [i for i, _ in members] != list(range(len(members))) or any(b != bodies[0] for b in bodies):
            return roles
        out[base] = dict(bodies[0], replicas=len(bodies))
    return out


def _container_framework(tpl: dict, framework: str | None) -> str:
    names = [c.get("name") for c in (tpl.get("spec") or {}).get("containers") or []]
    if framework:
        return framework
    for fw in PORTS:
        if fw in names:
            return fw
    return framework or "tensorflow"


def _pod(tpl: dict, framework: str, priority: str | None, job_labels: dict, port: int | None = None) -> dict:
    meta = tpl.get("metadata") or {}
    spec = dict(tpl.get("spec") or {})
    containers = list(spec.pop("containers", None) or [])
    index = next((i for i, c in enumerate(containers) if c.get("name") == framework), 0)
    main = dict(containers.pop(index)) if containers else {}  # its name is compared: tools and operators use it
    port_name, default_port = PORTS[framework]
    ports = [p for p in main.pop("ports", None) or [] if p.get("name") != port_name]
    named = [p for p in (tpl.get("spec") or {}).get("containers", [{}])[index].get("ports") or []
             if p.get("name") == port_name]
    out_port = named[0].get("containerPort") if named else (port or default_port)
    if ports:
        main["ports"] = ports
    env = {e["name"]: {k: v for k, v in e.items() if k != "name"} for e in main.pop("env", None) or []
           if not e["name"].startswith(INJECTED if framework != "generic" else ("TRAINSPEC_",))}
    if env:
        main["env"] = env
    if "resources" in main:
        main["resources"] = _resources(main["resources"])
        if not main["resources"]:
            del main["resources"]
    volumes = {v["name"]: v for v in spec.pop("volumes", None) or [] if v["name"] not in TRAINSPEC_VOLUMES}
    mounts = {m["name"]: dict(m) for m in main.pop("volumeMounts", None) or [] if m["name"] not in TRAINSPEC_VOLUMES}
    for name, vol in volumes.items():
        claim = vol.get("persistentVolumeClaim")
        if isinstance(claim, dict) and claim.pop("readOnly", False) and name in mounts:
            mounts[name]["readOnly"] = True
    for mount in mounts.values():
        if not mount.get("readOnly"):
            mount.pop("readOnly", None)
    if mounts:
        main["volumeMounts"] = mounts
    inits = []
    for init in spec.pop("initContainers", None) or []:
        init = dict(init)
        init.pop("volumeMounts", None)
        init.setdefault("image", main.get("image"))
        if "resources" in init:
            init["resources"] = _resources(init["resources"])
        if "env" in init:
            init["env"] = {e["name"]: {k: v for k, v in e.items() if k != "name"} for e in init["env"]}
        inits.append(init)
    pod_priority = spec.pop("priorityClassName", None) or priority
    # trainspec copies the job's labels onto every pod template
    labels = {k: v for k, v in _own_removed(meta.get("labels")).items() if job_labels.get(k) != v}
    out = {"labels": labels,
           "annotations": dict(meta.get("annotations") or {}),
           "main": main, "port": out_port, "sidecars": containers, "initContainers": inits, "volumes": volumes,
           "priorityClassName": pod_priority, "spec": spec}
    return out


def _resources(res: dict) -> dict:
    limits = {k: str(v) for k, v in (res.get("limits") or {}).items()}
    requests = {k: str(v) for k, v in (res.get("requests") or {}).items()}
    for k, v in limits.items():
        requests.setdefault(k, v)
    out = {}
    if limits:
        out["limits"] = limits
    if requests:
        out["requests"] = requests
    return out


def _diff(a, b, path: str) -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            if key not in a:
                out.append(f"{path}.{key}: only in the compiled manifest: {b[key]!r}")
            elif key not in b:
                out.append(f"{path}.{key}: only in the source: {a[key]!r}")
            else:
                out += _diff(a[key], b[key], f"{path}.{key}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: source {a!r} != compiled {b!r}"]


# --- exact comparison (JobSet, batch/v1 Job, generic Volcano jobs) -------------------------------

# What the controllers default when a key is absent: the same job whether written or not.
DEFAULTS = {("JobSet", "job"): {"completionMode": "Indexed"}, ("JobSet", "replicatedJob"): {"replicas": 1},
            ("JobSet", "spec"): {"successPolicy": {"operator": "All"}}}


def exact_diff(source: dict, compiled: dict) -> list[str]:
    """Differences between two objects of one kind, field by field, after removing only what trainspec adds
    to every job (its reserved labels, the TRAINSPEC_* env, a generic job's `trainspec` port, the job's
    labels copied onto pod templates).  Stricter than `semantic_diff`: no operator defaults but DEFAULTS."""
    a, b = _api_defaults(source), _api_defaults(compiled)
    job_labels = _own_removed((a.get("metadata") or {}).get("labels"))
    for obj in (a, b):
        obj.setdefault("metadata", {}).setdefault("namespace", "default")
        _strip(obj, job_labels, obj.get("kind", ""))
    return _diff(a, b, "")


def _strip(node, job_labels: dict, kind: str, parent: str = "") -> None:
    if isinstance(node, dict):
        meta = node.get("metadata")
        if parent == "pod" and isinstance(meta, dict) and isinstance(meta.get("labels"), dict):
            # the job's labels that trainspec copies onto each pod template (labels sit under metadata)
            meta["labels"] = {k: v for k, v in meta["labels"].items() if job_labels.get(k) != v}
        for key in ("labels", "annotations"):
            if isinstance(node.get(key), dict):
                node[key] = {k: v for k, v in node[key].items() if not k.startswith(("app.kubernetes.io/",
                                                                                     "trainspec.dev/"))}
                if key == "labels" and parent == "pod":
                    node[key] = {k: v for k, v in node[key].items() if job_labels.get(k) != v}
                if not node[key]:
                    del node[key]
        if isinstance(node.get("env"), list):
            node["env"] = [e for e in node["env"] if not str(e.get("name", "")).startswith("TRAINSPEC_")]
            if not node["env"]:
                del node["env"]
        if isinstance(node.get("ports"), list):
            node["ports"] = [p for p in node["ports"] if p.get("name") != "trainspec"]
            if not node["ports"]:
                del node["ports"]
        if kind == "JobSet" and parent == "pod" and isinstance(node.get("spec"), dict):
            node["spec"].setdefault("restartPolicy", "OnFailure")  # JobSet's webhook default
        if "replicatedJobs" in node:
            for k, v in DEFAULTS.get((kind, "spec"), {}).items():
                node.setdefault(k, v)
            for rj in node["replicatedJobs"]:
                for k, v in DEFAULTS.get((kind, "replicatedJob"), {}).items():
                    rj.setdefault(k, v)
                job_spec = (rj.get("template") or {}).get("spec")
                if isinstance(job_spec, dict):  # a Job spec, with or without completions/parallelism
                    for k, v in DEFAULTS.get((kind, "job"), {}).items():
                        job_spec.setdefault(k, v)
        if "completions" in node or "parallelism" in node:  # a Job spec
            for k, v in DEFAULTS.get((kind, "job"), {}).items():
                node.setdefault(k, v)
        if isinstance(node.get("resources"), dict):  # quantities: 4 and "4" are one quantity
            for side in ("limits", "requests"):
                if isinstance(node["resources"].get(side), dict):
                    node["resources"][side] = {k: str(v) for k, v in node["resources"][side].items()}
        for key, value in list(node.items()):
            _strip(value, job_labels, kind, "pod" if key == "template" and "containers" in (
                (value or {}).get("spec") or {}) else key)
        if node.get("metadata") == {}:
            del node["metadata"]
    elif isinstance(node, list):
        for item in node:
            _strip(item, job_labels, kind, parent)
