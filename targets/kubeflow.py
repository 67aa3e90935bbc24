"""`kubeflow`: one TFJob / PyTorchJob / MXJob (kubeflow.org/v1) or MPIJob (kubeflow.org/v2beta1).

For the Kubeflow training operator v1.9 (TFJob, PyTorchJob), v1.8 (MXJob: removed
in 1.9) and mpi-operator v2beta1; rules from shared/reference/CONVENTIONS.md §1.

The operator creates the pods from one template per replica type and injects
the framework's variables itself (TF_CONFIG, MASTER_ADDR/PORT, WORLD_SIZE, RANK,
PET_*, DMLC_*/MX_CONFIG, the MPI hostfile and OMPI_* / I_MPI_* env), so those are
NOT written here.  What is written: the user's env, and trainspec's own
`TRAINSPEC_*` variables — `TRAINSPEC_INDEX` through the downward API from the
pod label the operator sets (`training.kubeflow.org/replica-index`), the host
lists once in the `<job>-topology` ConfigMap emitted in the same file.

One exception: the training operator gives no TF_CONFIG to a TFJob with a single
replica; PRODUCT.md promises it to every replica, so for that one case (its only
replica is index 0) we write it, in the operator's own format.
"""

from __future__ import annotations

import json

from trainspec.compiler.plan import JobPlan, RolePlan

from . import common
from .kubeflow_common import (base_env, field_ref, per_replica_error, render_role, role_container, role_labels,
                             runtime_form, spec_error, topology_data)
from .yamlout import dump_all

FILE = "kubeflow.yaml"
INDEX_LABEL = "training.kubeflow.org/replica-index"
MXJOB_NOTE = ("MXJob is served only by Kubeflow training-operator <= 1.8 "
              "(MXNet support was removed in 1.9); use the volcano or k8s target on newer clusters.")

# framework -> (kind, apiVersion, replica-specs field)
KINDS = {
    "tensorflow": ("TFJob", "kubeflow.org/v1", "tfReplicaSpecs"),
    "pytorch": ("PyTorchJob", "kubeflow.org/v1", "pytorchReplicaSpecs"),
    "mxnet": ("MXJob", "kubeflow.org/v1", "mxReplicaSpecs"),
    "mpi": ("MPIJob", "kubeflow.org/v2beta1", "mpiReplicaSpecs"),
}
REPLICA_TYPES = {
    "tensorflow": {"chief": "Chief", "ps": "PS", "worker": "Worker", "evaluator": "Evaluator"},
    "pytorch": {"master": "Master", "worker": "Worker"},
    "mxnet": {"scheduler": "Scheduler", "server": "Server", "worker": "Worker"},
    "mpi": {"launcher": "Launcher", "worker": "Worker"},
}
MPI_RESTART_POLICIES = ("Never", "OnFailure")  # mpi-operator's validation accepts no others


def render(plan: JobPlan) -> dict[str, str]:
    note = MXJOB_NOTE if plan.framework == "mxnet" else ""
    return {FILE: dump_all(objects(plan), common.header(plan, note))}


def hosts(plan: JobPlan) -> dict[str, list[str]]:
    """host:port of every replica, as the operator names them.

    training-operator: one headless Service per replica, `<job>-<rt>-<i>`.
    mpi-operator: pods with hostname `<job>-worker-<i>` / `<job>-launcher` and
    subdomain `<job>` (one headless Service `<job>`), so `<host>.<job>`.
    """
    out = {}
    for role in plan.roles:
        if plan.framework == "mpi":
            names = [f"{plan.name}-launcher.{plan.name}"] if role.name == "launcher" else \
                [f"{plan.name}-{role.name}-{i}.{plan.name}" for i in range(role.count)]
        else:
            names = [f"{plan.name}-{role.name}-{i}" for i in range(role.count)]
        out[role.name] = [f"{name}:{role.port}" for name in names]
    return out


def topology_config_map(plan: JobPlan, host_lists: dict[str, list[str]]) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": common.metadata(plan, plan.topology_name, common.job_labels(plan)),
        "data": topology_data(plan, host_lists),
    }


def _check_restart(plan: JobPlan, role: RolePlan) -> None:
    if plan.framework == "mpi" and role.restart_policy not in MPI_RESTART_POLICIES:
        rspec = plan.spec.role(role.name)
        path = ("spec", "roles", role.name, "restartPolicy") if rspec.restart_policy else ("spec", "restartPolicy")
        raise spec_error(plan, path, f"target kubeflow: mpi-operator does not accept restartPolicy "
                                     f"{role.restart_policy!r} for the {role.name}", "Never or OnFailure",
                         "use OnFailure with backoffLimit, or the k8s / volcano target")


def _framework_env(plan: JobPlan, role: RolePlan, host_lists: dict[str, list[str]]) -> list[dict]:
    """Variables the operator would not inject but the spec promises (see the module doc)."""
    if plan.framework == "tensorflow" and plan.total_replicas == 1:
        cluster = {r.name: [f"{h.rsplit(':', 1)[0]}.{plan.namespace}.svc:{r.port}" for h in host_lists[r.name]]
                   for r in plan.roles if r.count}
        config = {"cluster": dict(sorted(cluster.items())), "task": {"type": role.name, "index": 0},
                  "environment": "cloud"}
        return [{"name": "TF_CONFIG", "value": common.escape_k8s(json.dumps(config, separators=(",", ":"),
                                                                           sort_keys=False))}]
    return []


def replica_spec(plan: JobPlan, role: RolePlan, host_lists: dict[str, list[str]]) -> dict:
    _check_restart(plan, role)
    rendered = render_role(plan, role, host_lists)
    if plan.framework == "mpi" and role.name == "launcher":
        index = {"value": "0"}  # mpi-operator labels only the workers with their index
    else:
        index = field_ref(f"metadata.labels['{INDEX_LABEL}']")
    env = base_env(plan, role, index, plan.topology_name)
    env += _framework_env(plan, role, host_lists)
    values = rendered.of(0)
    if rendered.uniform:
        env += common.env_list(values.env, plan.topology_name)
        container = role_container(plan, role, env, values)
    else:
        # One template for all replicas: the index reaches the text at runtime, and only
        # where the kubelet's $(TRAINSPEC_INDEX) expansion gives every replica its exact text.
        form, bad = runtime_form(rendered)
        if form is None:
            raise per_replica_error(plan, role, bad, "kubeflow",
                                    "a Kubeflow replica spec has one pod template for all of its replicas, and "
                                    "this text cannot be rebuilt at runtime from $(TRAINSPEC_INDEX)")
        command, args, user_env = form
        container = role_container(plan, role, env + user_env, values)
        for key, items in (("command", command), ("args", args)):
            if items is not None:
                container[key] = items
    pod: dict = dict(common.scheduling_fields(plan))
    if role.init_containers:
        pod["initContainers"] = [common.init_container(plan, role, init) for init in role.init_containers]
    pod["containers"] = [container]
    volumes = common.pod_volumes(role)
    if volumes:
        pod["volumes"] = volumes
    return {
        "replicas": role.count,
        "restartPolicy": role.restart_policy,
        "template": {"metadata": {"labels": role_labels(plan, role)}, "spec": pod},
    }


def run_policy(plan: JobPlan) -> dict:
    spec = plan.spec
    out: dict = {}
    clean = spec.clean_pod_policy or ("None" if plan.framework == "mpi" else None)
    if clean:
        out["cleanPodPolicy"] = clean
    if spec.ttl_seconds_after_finished is not None:
        out["ttlSecondsAfterFinished"] = spec.ttl_seconds_after_finished
    if spec.active_deadline_seconds is not None:
        out["activeDeadlineSeconds"] = spec.active_deadline_seconds
    if spec.backoff_limit is not None:
        out["backoffLimit"] = spec.backoff_limit
    sched = spec.scheduling
    policy: dict = {}
    if sched.min_available is not None:
        policy["minAvailable"] = sched.min_available
    elif sched.gang:
        policy["minAvailable"] = plan.total_replicas
    if sched.queue:
        policy["queue"] = sched.queue
    if sched.priority_class_name:
        policy["priorityClass"] = sched.priority_class_name
    if policy:
        out["schedulingPolicy"] = policy
    return out


def job(plan: JobPlan) -> dict:
    kind, api, field = KINDS[plan.framework]
    host_lists = hosts(plan)
    spec: dict = {}
    if plan.framework == "mxnet":
        spec["jobMode"] = "MXTrain"
    if plan.framework == "pytorch" and plan.spec.nproc_per_node:
        spec["nprocPerNode"] = plan.spec.nproc_per_node
    if plan.framework == "tensorflow" and plan.spec.success_policy == "AllWorkers":
        spec["successPolicy"] = "AllWorkers"
    if plan.framework == "mpi":
        spec["slotsPerWorker"] = plan.mpi_slots or 1
        spec["mpiImplementation"] = plan.spec.mpi_implementation
        spec["sshAuthMountPath"] = "/root/.ssh"
    spec["runPolicy"] = run_policy(plan)
    types = REPLICA_TYPES[plan.framework]
    spec[field] = {types[role.name]: replica_spec(plan, role, host_lists) for role in plan.roles}
    return {
        "apiVersion": api,
        "kind": kind,
        "metadata": common.metadata(plan, plan.name, common.job_labels(plan)),
        "spec": spec,
    }


def objects(plan: JobPlan) -> list[dict]:
    return [topology_config_map(plan, hosts(plan)), job(plan)]
