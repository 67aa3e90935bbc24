"""The Kubeflow training operator's v1 kinds: TFJob, PyTorchJob, MXJob, XGBoostJob, PaddleJob, JAXJob.

Sources (shared/reference/CONVENTIONS.md §1, CONVENTIONS-V2.md §4; kubeflow/training-operator
release-1.9 @078ec30f, MXJob at v1.8.1):
  * one pod and one headless Service per replica, both `<job>-<lower(type)>-<i>`
    (pkg/controller.v1/common/util.go GenGeneralName, service.go); labels
    `training.kubeflow.org/{operator-name, job-name, replica-type, replica-index}` and
    `job-role=master` on the master role (common/job_controller.go GenLabels);
  * the kind's port added to the default container when missing (*_defaults.go);
  * restartPolicy per replica type: ExitCode → pod Never, restarted on exit codes ≥ 128 only
    (pkg/core/pod.go SetRestartPolicy; train_util.go IsRetryableExitCode); runPolicy
    backoffLimit, activeDeadlineSeconds, cleanPodPolicy (default None);
  * the injected env, appended after the template's env (SetClusterSpec on a copy of the
    template): TF_CONFIG (tensorflow/tensorflow.go genTFConfigJSONStr, only when Σ replicas ≠ 1),
    PyTorch MASTER_*/WORLD_SIZE/RANK/PET_* (pytorch/envvar.go), MXNet MX_CONFIG/DMLC_*
    (mxnet/mxnet.go), XGBoost MASTER_*/WORKER_* (xgboost/xgboost.go), Paddle PADDLE_*
    (paddlepaddle/envvar.go), JAX COORDINATOR_*/NUM_PROCESSES/PROCESS_ID (jax/envvar.go);
  * success: TF chief/master, else worker-0 (all workers with successPolicy AllWorkers)
    (tfjob_controller.go UpdateJobStatus); PyTorch, XGBoost, Paddle master (Paddle without
    a master and JAX: all workers); MXNet scheduler; any replica failed for good fails the job;
  * no start order: every replica type's pods are created in the same reconcile
    (common/job.go ReconcileJobs), so no start gate here (startorder.py).
"""

from __future__ import annotations

import json

from ....compiler.kinds import OperatorKind
from ....compiler.kinds.kubeflow import BY_KIND, JAX_JOB, MX_JOB, PADDLE_JOB, PYTORCH_JOB, TF_JOB, XGBOOST_JOB
from .. import positions
from . import (
    PERMANENT_EXIT_CODES,
    UNLIMITED,
    ControllerSuccess,
    Created,
    append_env,
    ensure_port,
    fail,
    main_container,
    meta,
    pod_wrapper,
    port_of,
)

# kind -> (default container, port name, default port, default restartPolicy): the operator's defaults
DEFAULTS: dict[OperatorKind, tuple[str, str, int, str]] = {
    TF_JOB: ("tensorflow", "tfjob-port", 2222, "Never"),
    PYTORCH_JOB: ("pytorch", "pytorchjob-port", 23456, "OnFailure"),
    MX_JOB: ("mxnet", "mxjob-port", 9091, "Never"),
    XGBOOST_JOB: ("xgboost", "xgboostjob-port", 9999, "Never"),
    PADDLE_JOB: ("paddle", "master", 36543, "OnFailure"),
    JAX_JOB: ("jax", "jaxjob-port", 6666, "Never"),
}
# kind -> (replica specs field, default container, port name, default port, default restartPolicy, framework)
KINDS: dict[str, tuple[str, str, str, int, str, str]] = {
    kind.kind: (kind.replica_specs, container, port_name, port, restart, kind.framework)
    for kind, (container, port_name, port, restart) in DEFAULTS.items()}
OPERATOR_NAME: dict[OperatorKind, str] = {
    TF_JOB: "tfjob-controller", PYTORCH_JOB: "pytorchjob-controller", MX_JOB: "mxjob-controller",
    XGBOOST_JOB: "xgboostjob-controller", PADDLE_JOB: "paddlejob-controller", JAX_JOB: "jaxjob-controller"}
# Env goes into every container of the pod for these kinds, into the default-named one for the others.
EVERY_CONTAINER = (PYTORCH_JOB, XGBOOST_JOB, PADDLE_JOB, JAX_JOB)
RESTART_POLICIES = ("Always", "OnFailure", "Never", "ExitCode")


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def injected_env(kind: str, job: dict, name: str, ns: str, rt: str, i: int, counts: dict[str, int],
                 ports: dict[str, int]) -> list[tuple[str, object]]:
    """What the operator appends to replica `i` of type `rt` (lower case)."""
    spec = job.get("spec") or {}
    total = sum(counts.values())
    env: list[tuple[str, object]] = []
    if kind == TF_JOB.kind:
        if total != 1:
            cluster = {r: [f"{name}-{r}-{j}.{ns}.svc:{ports[r]}" for j in range(n)] for r, n in sorted(counts.items())}
            env.append(("TF_CONFIG", _compact({"cluster": cluster, "task": {"type": rt, "index": i},
                                               "environment": "cloud"})))
    elif kind == PYTORCH_JOB.kind:
        nproc = str(spec.get("nprocPerNode", "auto"))
        per_node = int(nproc) if nproc.isdigit() else 1
        env.append(("PYTHONUNBUFFERED", "1"))
        if "master" in counts:
            rank = str(i if rt == "master" else i + 1)
            master, port = f"{name}-master-0", str(ports["master"])
            env += [("MASTER_PORT", port), ("MASTER_ADDR", master), ("WORLD_SIZE", str(total * per_node)),
                    ("RANK", rank), ("PET_MASTER_PORT", port), ("PET_MASTER_ADDR", master), ("PET_NODE_RANK", rank)]
        elastic = spec.get("elasticPolicy")
        if elastic is None:
            env += [("PET_NPROC_PER_NODE", nproc), ("PET_NNODES", str(total))]
        else:  # pytorch/elastic.go: the rendezvous on worker-0, PET_NNODES = min:max
            workers = counts.get("worker", 0)
            env += [("PET_NPROC_PER_NODE", nproc),
                    ("PET_RDZV_ENDPOINT", f"{name}-worker-0:{elastic.get('rdzvPort', ports.get('worker'))}"),
                    ("PET_RDZV_BACKEND", elastic.get("rdzvBackend", "c10d")),
                    ("PET_NNODES", f"{elastic.get('minReplicas', workers)}:{elastic.get('maxReplicas', workers)}")]
            if "maxRestarts" in elastic:
                env.append(("PET_MAX_RESTARTS", str(elastic["maxRestarts"])))
    elif kind == MX_JOB.kind:
        mx_cluster = {r: [{"url": f"{name}-{r}-{j}", "port": ports[r]} for j in range(n)]
                      for r, n in sorted(counts.items())}
        env += [("MX_CONFIG", _compact({"cluster": mx_cluster, "labels": {}, "task": {"type": rt, "index": i}})),
                ("DMLC_PS_ROOT_PORT", str(ports.get("scheduler", 9091))),
                ("DMLC_PS_ROOT_URI", f"{name}-scheduler-0"),
                ("DMLC_NUM_SERVER", str(counts.get("server", 0))), ("DMLC_NUM_WORKER", str(counts.get("worker", 0))),
                ("DMLC_ROLE", rt), ("DMLC_USE_KUBERNETES", "1")]
        if rt == "worker":
            env.append(("DMLC_WORKER_ID", str(i)))
    elif kind == XGBOOST_JOB.kind:
        env += [("MASTER_PORT", str(ports.get("master", 9999))), ("MASTER_ADDR", f"{name}-master-0"),
                ("WORLD_SIZE", str(total)), ("RANK", str(0 if rt == "master" else i + 1)),
                ("PYTHONUNBUFFERED", "1")]
        if total > 1:
            env += [("WORKER_PORT", str(ports.get("worker", 9999))),
                    ("WORKER_ADDRS", ",".join(f"{name}-worker-{j}" for j in range(total - 1)))]
    elif kind == PADDLE_JOB.kind:
        env += [("PYTHONUNBUFFERED", "1"), ("PADDLE_JOB_ID", name), ("PADDLE_NNODES", str(total))]
        lead = "master" if "master" in counts else "worker"
        paddle_port = ports.get(lead, 36543)
        if rt == lead and i == 0:
            env += [("POD_IP_DUMMY", {"fieldRef": {"fieldPath": "status.podIP"}}),
                    ("PADDLE_MASTER", f"$(POD_IP_DUMMY):{paddle_port}")]
        else:
            env.append(("PADDLE_MASTER", f"{name}-{lead}-0:{paddle_port}"))
        if "master" in counts:
            env.append(("PADDLE_SERVER_NUM" if rt == "master" else "PADDLE_TRAINER_NUM", "1"))
    elif kind == JAX_JOB.kind:
        env += [("PYTHONUNBUFFERED", "1"), ("COORDINATOR_PORT", str(ports.get("worker", 6666))),
                ("COORDINATOR_ADDRESS", f"{name}-worker-0"), ("NUM_PROCESSES", str(total)), ("PROCESS_ID", str(i))]
    return env


def success_rule(kind: str, job: dict, pods: dict[str, list[str]]) -> ControllerSuccess:
    """`pods`: lower-case replica type -> pod names in index order."""
    def first(rt: str) -> ControllerSuccess:
        return ControllerSuccess([[pods[rt][0]]], 1, f"{rt}-0")

    def every(rt: str) -> ControllerSuccess:
        return ControllerSuccess([pods[rt]], 1, f"all {rt}s")

    workers = "worker" if pods.get("worker") else ""
    if kind == TF_JOB.kind:
        for rt in ("chief", "master"):
            if pods.get(rt):
                return first(rt)
        if workers:
            all_workers = str((job.get("spec") or {}).get("successPolicy") or "") == "AllWorkers"
            return every("worker") if all_workers else first("worker")
    lead = {PYTORCH_JOB.kind: "master", MX_JOB.kind: "scheduler", XGBOOST_JOB.kind: "master",
            PADDLE_JOB.kind: "master"}.get(kind)
    if lead and pods.get(lead):
        return first(lead)
    if workers:
        return every("worker")
    return ControllerSuccess([[p for names in pods.values() for p in names]], 1, "all replicas")


def create(job: dict, source: str) -> Created:
    kind = str(job.get("kind"))
    field, cname, port_name, default_port, default_restart, framework = KINDS[kind]
    name, ns = meta(job)
    spec = job.get("spec") or {}
    specs = spec.get(field)
    if not isinstance(specs, dict) or not specs:
        raise fail(source, job, ("spec", field), "is empty", hint="name at least one replica type",
                   label=f"{kind} {name}")
    run_policy = spec.get("runPolicy") or {}
    backoff = run_policy.get("backoffLimit")
    counts: dict[str, int] = {}
    ports: dict[str, int] = {}
    for rtype, rspec in specs.items():
        rt = str(rtype).lower()
        counts[rt] = int((rspec or {}).get("replicas", 1))
        pod_spec = ((rspec or {}).get("template") or {}).get("spec") or {}
        if not pod_spec.get("containers"):
            raise fail(source, specs, (rtype, "template", "spec"), "has no containers", label=f"{kind} {name} {field}")
        ports[rt] = port_of(main_container(pod_spec, cname), port_name, default_port)
    objects: list[dict] = []
    pods: dict[str, list[str]] = {}
    for rtype, rspec in specs.items():
        rt = str(rtype).lower()
        policy = str(rspec.get("restartPolicy") or default_restart)
        if policy not in RESTART_POLICIES:
            raise fail(source, specs, (rtype, "restartPolicy"), f"{policy!r} is not one of "
                       + "|".join(RESTART_POLICIES), label=f"{kind} {name} {field}")
        restart = {"ExitCode": "Never"}.get(policy, policy)
        limit = 0 if policy == "Never" else int(backoff) if backoff is not None else UNLIMITED
        for i in range(counts[rt]):
            template = positions.copy(rspec.get("template") or {})
            pod_spec = template.setdefault("spec", {})
            default = main_container(pod_spec, cname)
            ensure_port(default, port_name, ports[rt])
            env = injected_env(kind, job, name, ns, rt, i, counts, ports)
            targets = pod_spec.get("containers") if BY_KIND[kind] in EVERY_CONTAINER else [default]
            for c in targets or []:
                append_env(c, env)
            labels = {"training.kubeflow.org/operator-name": OPERATOR_NAME[BY_KIND[kind]],
                      "training.kubeflow.org/job-name": name, "training.kubeflow.org/replica-type": rt,
                      "training.kubeflow.org/replica-index": str(i)}
            if rt in ("master", "chief") or (kind in (TF_JOB.kind, JAX_JOB.kind) and (rt, i) == ("worker", 0)
                                              and not {"chief", "master"} & set(counts)):
                labels["training.kubeflow.org/job-role"] = "master"
            pod = f"{name}-{rt}-{i}"
            wrapper = pod_wrapper(name, pod, rt, i, template, restart=restart, backoff_limit=limit,
                                  failure_codes=PERMANENT_EXIT_CODES if policy == "ExitCode" else None,
                                  labels=labels, namespace=ns)
            if policy == "Always":
                wrapper["kind"], wrapper["apiVersion"] = "Deployment", "apps/v1"
            objects.append(wrapper)
            pods.setdefault(rt, []).append(pod)
    clean = str(run_policy.get("cleanPodPolicy") or "None")
    deadline = run_policy.get("activeDeadlineSeconds")
    return Created(name, ns, framework, objects, success_rule(kind, job, pods), clean_pod_policy=clean,
                   backoff_limit=None if backoff is None else int(backoff),
                   active_deadline=None if deadline is None else float(deadline))
