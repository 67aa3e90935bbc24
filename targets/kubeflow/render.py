"""`kubeflow`: one TFJob / PyTorchJob / MXJob / XGBoostJob / PaddleJob / JAXJob (kubeflow.org/v1)
or MPIJob (kubeflow.org/v2beta1).

For the Kubeflow training operator v1.9 (TFJob, PyTorchJob, XGBoostJob, PaddleJob,
JAXJob), v1.8 (MXJob: removed in 1.9) and mpi-operator v2beta1; rules from
shared/reference/CONVENTIONS.md §1 and CONVENTIONS-V2.md §4.

The operator creates the pods from one template per replica type and injects
the framework's variables itself (TF_CONFIG, MASTER_ADDR/PORT, WORLD_SIZE, RANK,
PET_*, DMLC_*/MX_CONFIG, the MPI hostfile and OMPI_* / I_MPI_* env, XGBoost's
WORKER_ADDRS, PADDLE_*, JAX's COORDINATOR_* / PROCESS_ID), so those are
NOT written here.  What is written: the user's env, and trainspec's own
`TRAINSPEC_*` variables — `TRAINSPEC_INDEX` through the downward API from the
pod label the operator sets (`training.kubeflow.org/replica-index`), the host
lists once in the `<job>-topology` ConfigMap emitted in the same file.

One exception: the training operator gives no TF_CONFIG to a TFJob with a single
replica; PRODUCT.md promises it to every replica, so for that one case (its only
replica is index 0) we write it, in the operator's own format.
"""

from __future__ import annotations

from trainspec.compiler.frameworks import tf_cluster, tf_config
from trainspec.compiler.kinds.kubeflow import KUBEFLOW_JOBS
from trainspec.compiler.plan import JobPlan, RolePlan

from .. import common
from ..role_template import base_env, field_ref, role_container, role_labels, role_render, topology_data
from ..yamlout import dump_all
from .scheme import scheme_for

FILE = "kubeflow.yaml"
INDEX_LABEL = "training.kubeflow.org/replica-index"
MXJOB_NOTE = ("MXJob is served only by Kubeflow training-operator <= 1.8 "
              "(MXNet support was removed in 1.9); use the volcano or k8s target on newer clusters.")

# framework -> (kind, apiVersion, replica-specs field) and role -> replica type: compiler/kinds/kubeflow.py's table
KINDS = {k.framework: (k.kind, k.api_version, k.replica_specs) for k in KUBEFLOW_JOBS}
REPLICA_TYPES = {k.framework: k.type_of_role for k in KUBEFLOW_JOBS}


def render(plan: JobPlan) -> dict[str, str]:
    plan.check("kubeflow")
    note = MXJOB_NOTE if plan.framework == "mxnet" else ""
    return {FILE: dump_all(common.patched(plan, "kubeflow", objects(plan)), common.header(plan, note))}


def hosts(plan: JobPlan) -> dict[str, list[str]]:
    """host:port of every replica, as the operator names them (scheme.py).

    training-operator: one headless Service per replica, `<job>-<rt>-<i>`.
    mpi-operator: pods with hostname `<job>-worker-<i>` / `<job>-launcher` and
    subdomain `<job>` (one headless Service `<job>`), so `<host>.<job>`.
    """
    return plan.hosts(scheme_for(plan.framework))


def topology_config_map(plan: JobPlan, host_lists: dict[str, list[str]]) -> dict:
    return common.topology_config_map(plan, topology_data(plan, host_lists))


def _framework_env(plan: JobPlan, role: RolePlan, host_lists: dict[str, list[str]]) -> list[dict]:
    """Variables the operator would not inject but the spec promises (see the module doc)."""
    if plan.framework == "tensorflow" and plan.total_replicas == 1:
        cluster = {r.name: [f"{h.rsplit(':', 1)[0]}.{plan.namespace}.svc:{r.port}" for h in host_lists[r.name]]
                   for r in plan.roles}
        config = tf_config(tf_cluster(cluster, evaluator=True), role.name, 0)
        return [{"name": "TF_CONFIG", "value": common.escape_k8s(config)}]
    return []


def replica_spec(plan: JobPlan, role: RolePlan, host_lists: dict[str, list[str]]) -> dict:
    rendered = role_render(role, scheme_for(plan.framework))
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
        # (checks.py reported a role without a shared form: plan.check above raised)
        shared = rendered.shared
        container = role_container(plan, role, env + common.env_list(shared.env, plan.topology_name), values)
        for key, items in (("command", shared.command), ("args", shared.args)):
            if items is not None:
                container[key] = list(items)  # kubelet text already: not escaped again
    pod: dict = dict(common.scheduling_fields(plan, role))
    pod.update(common.pod_spec_tail(plan, role, container))
    return {
        "replicas": role.count,
        "restartPolicy": role.restart_policy,
        "template": {"metadata": common.template_metadata(role, role_labels(plan, role)), "spec": pod},
    }


def elastic_policy(plan: JobPlan) -> dict:
    """pytorch.elastic as the operator's elasticPolicy (it then injects PET_RDZV_* and PET_NNODES=min:max)."""
    elastic = plan.elastic
    out: dict = {}
    for key, value in (("minReplicas", elastic.min_replicas), ("maxReplicas", elastic.max_replicas),
                       ("rdzvBackend", elastic.rdzv_backend), ("rdzvPort", elastic.rdzv_port),
                       ("maxRestarts", elastic.max_restarts)):
        if value is not None:
            out[key] = value
    return out


def run_policy(plan: JobPlan) -> dict:
    out: dict = {}
    clean = plan.cleanup.pods or ("None" if plan.framework == "mpi" else None)
    if clean:
        out["cleanPodPolicy"] = clean
    if plan.cleanup.ttl_seconds_after_finished is not None:
        out["ttlSecondsAfterFinished"] = plan.cleanup.ttl_seconds_after_finished
    if plan.active_deadline_seconds is not None:
        out["activeDeadlineSeconds"] = plan.active_deadline_seconds
    if plan.backoff_limit is not None:
        out["backoffLimit"] = plan.backoff_limit
    sched = plan.scheduling
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
    if plan.framework == "pytorch" and plan.nproc_per_node:
        spec["nprocPerNode"] = plan.nproc_per_node
    if plan.framework == "pytorch" and plan.elastic is not None:
        spec["elasticPolicy"] = elastic_policy(plan)
    if plan.framework == "tensorflow" and plan.success_policy == "AllWorkers":
        spec["successPolicy"] = "AllWorkers"
    if plan.framework == "mpi":
        spec["slotsPerWorker"] = plan.mpi_slots or 1
        spec["mpiImplementation"] = plan.mpi_implementation
        spec["sshAuthMountPath"] = plan.mpi_ssh_path
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
