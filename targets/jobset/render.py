"""`jobset`: one `jobset.x-k8s.io/v1alpha2` JobSet (JobSet v0.12.0), plus the `<job>-topology` ConfigMap.

Facts from shared/reference/CONVENTIONS-V2.md §1-2 (JobSet, Indexed Job).

One replicatedJob per role.  Normally that is one Indexed Job whose
completions = parallelism = the role's replicas, so replica i of role r is the
pod with hostname `<job>-<r>-0-<i>`, reachable as `<job>-<r>-0-<i>.<job>`
through the JobSet's headless Service (`network.enableDNSHostnames`,
`subdomain: <job>`); its index comes from the pod annotation
`batch.kubernetes.io/job-completion-index` through the downward API.

One exception: PyTorch workers need RANK = index + 1, and the downward API
cannot add.  Their replicatedJob is `replicas: N` one-pod Jobs instead, and
RANK is the pod label `jobset.sigs.k8s.io/job-global-index` (the Job's index
plus the master's one Job before it); hosts are then `<job>-worker-<i>-0.<job>`.
Either way the output grows with the number of roles, not replicas: host lists,
the TF cluster and the MPI hostfile are written once, in the ConfigMap.

JobSet injects no environment, so the framework variables (TF_CONFIG, MASTER_*
/ RANK / WORLD_SIZE / PET_*, DMLC_*, the MPI hostfile and OMPI_* etc.) are
written here, per role, with `$(VAR)` references for the per-replica parts.
Paddle: launch serves its rendezvous where PADDLE_MASTER's host is its own node address; the
PaddleJob controller gives the rendezvous replica (worker 0, or master 0 in PS mode) its pod IP
there, which one template cannot give replica 0 alone.  So a rendezvous role of several replicas
names each pod by its JobSet host in POD_IP (launch's `--host`) and PADDLE_MASTER is replica 0's
name everywhere; one replica gets the operator's `$(POD_IP_DUMMY):port`.  Run for real from
jobset.yaml (tests/emulator/e2e/test_v1_frameworks_e2e.py); docs/targets-jobset-trainjob.md.
Success: `successPolicy` on the deciding role (TF's worker-0 rule through the
Indexed Job's own `successPolicy` on index 0, Kubernetes >= 1.33).  Start order:
`startupPolicy: InOrder` with the servers first (ps; scheduler, server; MPI
workers before the launcher).
"""

from __future__ import annotations

import json

from trainspec.compiler.frameworks import (
    HOSTFILE_KEY,
    MPI_HOSTFILE_PATH,
    POD_IP_VAR,
    TF_CLUSTER_KEY,
    mpi_hostfile,
    pytorch_elastic_env,
    tf_cluster,
)
from trainspec.compiler.kinds.jobset import JOBSET
from trainspec.compiler.model import GENERIC
from trainspec.compiler.plan import EnvVar, JobPlan, RolePlan

from .. import common
from ..job_settings import Settings, settings_of
from ..role_template import (
    INDEX_ANNOTATION,
    base_env,
    field_ref,
    mpi_mounts,
    role_container,
    role_labels,
    role_texts,
    topology_data,
    user_env_names,
)
from ..yamlout import dump_all
from .scheme import JOBSET_ONE_POD_JOBS, scheme_for

FILE = "jobset.yaml"
API_VERSION = JOBSET.api_version
PADDLE_NODE_VAR = "POD_IP"  # paddle.distributed.launch's node address (its --host)
JOB_INDEX_LABEL = "jobset.sigs.k8s.io/job-index"
GLOBAL_INDEX_LABEL = "jobset.sigs.k8s.io/job-global-index"
# replicatedJobs in start order: servers before their clients (InOrder starts k+1 once k is ready)
START_ORDER = {
    "tensorflow": ("ps", "chief", "worker", "evaluator"),
    "pytorch": ("master", "worker"),  # master first: the workers' job-global-index is then index + 1
    "mxnet": ("scheduler", "server", "worker"),
    "mpi": ("worker", "launcher"),
    "xgboost": ("master", "worker"),  # master first: the workers' job-global-index is then index + 1 = RANK
    "jax": ("worker",),
    "paddle": ("master", "worker"),  # no order needed: paddle.distributed.launch waits for its peers
    # generic: the roles in the spec's order (no start order is implied: no startupPolicy)
}


def render(plan: JobPlan) -> dict[str, str]:
    plan.check("jobset")
    if plan.trainjob is not None and plan.runtime is not None:
        return {FILE: dump_all(on_runtime_objects(plan), common.header(plan))}
    return {FILE: dump_all(common.patched(plan, "jobset", objects(plan)), common.header(plan))}


# --- host names ------------------------------------------------------------------------------------

def per_job(plan: JobPlan, role: RolePlan) -> bool:
    """True when the role is N one-pod Jobs (index from the Job) instead of one Indexed Job of N pods."""
    return role.name in JOBSET_ONE_POD_JOBS.get(plan.framework, ())


def jobset_hosts(plan: JobPlan) -> dict[str, list[str]]:
    """role -> [host:port]: replica i of role r as the JobSet controller names it (scheme.py)."""
    return plan.hosts(scheme_for(plan.framework))


def host_names(plan: JobPlan) -> dict[str, list[str]]:
    return {role: [h.rsplit(":", 1)[0] for h in hosts] for role, hosts in jobset_hosts(plan).items()}


# --- per-role pieces --------------------------------------------------------------------------------

def _index_entry(plan: JobPlan, role: RolePlan) -> dict:
    if per_job(plan, role):
        return field_ref(f"metadata.labels['{JOB_INDEX_LABEL}']")
    return field_ref(f"metadata.annotations['{INDEX_ANNOTATION}']")


def _count(plan: JobPlan, name: str) -> int:
    role = plan.role(name)
    return role.count if role else 0


def _elastic_env(plan: JobPlan, role: RolePlan, names: dict[str, list[str]]) -> list[dict]:
    """Elastic torchrun (spec v1.1): the rendezvous on worker-0, as the operator's elasticPolicy gives it."""
    master = plan.role("master")
    master_env = []
    if master is not None and master.count:
        master_env = [EnvVar("PET_MASTER_ADDR", names["master"][0]), EnvVar("PET_MASTER_PORT", str(master.port))]
        if role.name == "master":
            master_env.append(EnvVar("PET_NODE_RANK", "0"))
    env = pytorch_elastic_env(plan.elastic, names["worker"][0], {r.name: r.count for r in plan.roles},
                              {r.name: r.port for r in plan.roles}, plan.nproc_per_node, master_env)
    return common.env_list(env, "")


XGBOOST_WORKERS_KEY = "XGBOOST_WORKER_ADDRS"  # the topology ConfigMap's copy of XGBoost's worker list


def xgboost_workers(plan: JobPlan, names: dict[str, list[str]]) -> dict[str, str]:
    """The topology ConfigMap's XGBoost worker list (WORKER_ADDRS): once per job, not once per replica."""
    if plan.framework != "xgboost" or plan.total_replicas <= 1:
        return {}
    return {XGBOOST_WORKERS_KEY: ",".join(names.get("worker", [])[:plan.total_replicas - 1])}


def framework_env(plan: JobPlan, role: RolePlan, settings: Settings, names: dict[str, list[str]] | None = None,
                  rank: dict | None = None, node_host: str | None = None, shared_lists: bool = False) -> list[dict]:
    """What the operator would inject, written for JobSet hosts; per-replica parts via $(TRAINSPEC_INDEX).

    The k8s target writes the same for its own hosts: `names` (role -> host names), `rank` (a PyTorch or
    XGBoost worker's RANK entry) and `node_host` (a Paddle rendezvous replica's own host, with
    $(TRAINSPEC_INDEX)), `shared_lists` (XGBoost's WORKER_ADDRS from the topology ConfigMap, whose
    `xgboost_workers` holds it: once per job); the defaults are the JobSet's."""
    fw = plan.framework
    if fw == GENERIC:
        return []  # no framework variables: TRAINSPEC_* only
    names = host_names(plan) if names is None else names
    worker_rank = field_ref(f"metadata.labels['{GLOBAL_INDEX_LABEL}']") if rank is None else rank
    if fw == "tensorflow":
        task = f'{{"type":{json.dumps(role.name)},"index":$(TRAINSPEC_INDEX)}}'
        return [{"name": TF_CLUSTER_KEY, "valueFrom": {"configMapKeyRef": {"name": plan.topology_name,
                                                                            "key": TF_CLUSTER_KEY}}},
                {"name": "TF_CONFIG", "value": f'{{"cluster":$({TF_CLUSTER_KEY}),"task":{task},'
                                               f'"environment":"cloud"}}'}]
    if fw == "pytorch" and plan.elastic is not None:
        return _elastic_env(plan, role, names)
    if fw == "pytorch":
        nproc = settings.nproc_per_node or "auto"
        per_node = int(nproc) if nproc.isdigit() else 1
        master, port = names["master"][0], str(plan.role("master").port)
        total = plan.total_replicas
        rank = {"value": "0"} if role.name == "master" else worker_rank
        return [{"name": "PYTHONUNBUFFERED", "value": "1"},
                {"name": "MASTER_ADDR", "value": master},
                {"name": "MASTER_PORT", "value": port},
                {"name": "WORLD_SIZE", "value": str(total * per_node)},
                {"name": "RANK", **rank},
                {"name": "PET_MASTER_ADDR", "value": master},
                {"name": "PET_MASTER_PORT", "value": port},
                {"name": "PET_NNODES", "value": str(total)},
                {"name": "PET_NODE_RANK", "value": "$(RANK)"},
                {"name": "PET_NPROC_PER_NODE", "value": nproc}]
    if fw == "mxnet":
        env = [{"name": "DMLC_ROLE", "value": role.name},
               {"name": "DMLC_PS_ROOT_URI", "value": names["scheduler"][0]},
               {"name": "DMLC_PS_ROOT_PORT", "value": str(plan.role("scheduler").port)},
               {"name": "DMLC_NUM_SERVER", "value": str(_count(plan, "server"))},
               {"name": "DMLC_NUM_WORKER", "value": str(_count(plan, "worker"))},
               {"name": "DMLC_USE_KUBERNETES", "value": "1"}]
        if role.name == "worker":
            env.append({"name": "DMLC_WORKER_ID", "value": "$(TRAINSPEC_INDEX)"})
        return env
    if fw == "xgboost":  # the XGBoostJob controller's variables, in its order (CONVENTIONS-V2 §4)
        total = plan.total_replicas
        rank = {"value": "0"} if role.name == "master" else worker_rank
        worker_addrs = ({"valueFrom": {"configMapKeyRef": {"name": plan.topology_name, "key": XGBOOST_WORKERS_KEY}}}
                        if shared_lists else {"value": ",".join(names.get("worker", [])[:total - 1])})
        env = [{"name": "MASTER_PORT", "value": str(plan.role("master").port)},
               {"name": "MASTER_ADDR", "value": names["master"][0]},
               {"name": "WORLD_SIZE", "value": str(total)},
               {"name": "RANK", **rank},
               {"name": "PYTHONUNBUFFERED", "value": "1"}]
        if total > 1:
            env += [{"name": "WORKER_PORT", "value": str(plan.role("worker").port)},
                    {"name": "WORKER_ADDRS", **worker_addrs}]
        return env
    if fw == "paddle":
        return paddle_env(plan, role, names, node_host)
    if fw == "jax":  # the JAXJob controller's (CONVENTIONS-V2 §4): the coordinator is worker 0, no port
        return [{"name": "PYTHONUNBUFFERED", "value": "1"},
                {"name": "COORDINATOR_PORT", "value": str(plan.role("worker").port)},
                {"name": "COORDINATOR_ADDRESS", "value": names["worker"][0]},
                {"name": "NUM_PROCESSES", "value": str(plan.total_replicas)},
                {"name": "PROCESS_ID", "value": "$(TRAINSPEC_INDEX)"}]
    env = [{"name": "K_MPI_JOB_ROLE", "value": role.name}]
    if role.name == "launcher":
        slots = str(plan.mpi_slots or 1)
        if settings.mpi_implementation == "OpenMPI":
            env += [{"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
                    {"name": "OMPI_MCA_orte_default_hostfile", "value": MPI_HOSTFILE_PATH},
                    {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"},
                    {"name": "OMPI_MCA_orte_set_default_slots", "value": slots}]
        elif settings.mpi_implementation == "Intel":
            env += [{"name": "I_MPI_HYDRA_HOST_FILE", "value": MPI_HOSTFILE_PATH},
                    {"name": "I_MPI_PERHOST", "value": slots}]
        else:
            env += [{"name": "HYDRA_HOST_FILE", "value": MPI_HOSTFILE_PATH}]
    return env


def paddle_env(plan: JobPlan, role: RolePlan, names: dict[str, list[str]], node_host: str | None = None) -> list[dict]:
    """The PaddleJob controller's variables (CONVENTIONS-V2 §4), with one change where one template must
    serve a rendezvous role of several replicas: see the module docstring (Paddle)."""
    ps = _count(plan, "master") > 0
    rendezvous = "master" if ps else "worker"
    port = plan.role(rendezvous).port
    env = [{"name": "PYTHONUNBUFFERED", "value": "1"},
           {"name": "PADDLE_JOB_ID", "value": plan.name},
           {"name": "PADDLE_NNODES", "value": str(plan.total_replicas)}]
    if role.name == rendezvous and role.count == 1:  # its only replica is the rendezvous: the operator's form
        env += [{"name": POD_IP_VAR, **field_ref("status.podIP")},
                {"name": "PADDLE_MASTER", "value": f"$({POD_IP_VAR}):{port}"}]
    else:
        if role.name == rendezvous:  # launch takes POD_IP as its node address: replica i's own JobSet name
            own = node_host or f"{plan.name}-{role.task}-0-$(TRAINSPEC_INDEX).{plan.name}"
            env.append({"name": PADDLE_NODE_VAR, "value": own})
        env.append({"name": "PADDLE_MASTER", "value": f"{names[rendezvous][0]}:{port}"})
    if ps:
        env.append({"name": "PADDLE_SERVER_NUM" if role.name == "master" else "PADDLE_TRAINER_NUM", "value": "1"})
    return env


def topology_config_map(plan: JobPlan, settings: Settings) -> dict:
    hosts = jobset_hosts(plan)
    data = topology_data(plan, hosts)
    if plan.framework == "tensorflow":
        data[TF_CLUSTER_KEY] = tf_cluster(hosts)
    if plan.framework == "mpi":
        data[HOSTFILE_KEY] = mpi_hostfile(host_names(plan).get("worker", []), plan.mpi_slots or 1,
                                          settings.mpi_implementation)
    return common.topology_config_map(plan, data)


def _decides_alone_at_index_0(plan: JobPlan, settings: Settings) -> bool:
    """TF ChiefOrWorker0 without a chief: worker 0 alone decides (the Job's own successPolicy)."""
    return (plan.framework == "tensorflow" and plan.success_role == "worker" and not _count(plan, "chief")
            and settings.tf_success_policy != "AllWorkers")


def pod_template(plan: JobPlan, role: RolePlan, settings: Settings, pod_policy: str) -> dict:
    values, command, args, user_env = role_texts(plan, role, scheme_for(plan.framework))
    taken = user_env_names(role)
    env = base_env(plan, role, _index_entry(plan, role), plan.topology_name)
    env += [e for e in framework_env(plan, role, settings) if e["name"] not in taken]
    env += user_env
    container = role_container(plan, role, env, values)
    for key, items in (("command", command), ("args", args)):
        if items is not None:
            container[key] = items
    extra_volumes, extra_mounts = mpi_mounts(plan, role)
    if extra_mounts:
        container["volumeMounts"] = container.get("volumeMounts", []) + extra_mounts
    pod: dict = {"restartPolicy": pod_policy}
    pod.update(common.scheduling_fields(plan, role))
    pod.update(common.pod_spec_tail(plan, role, container, extra_volumes))
    return {"metadata": common.template_metadata(role, role_labels(plan, role)), "spec": pod}


def job_spec(plan: JobPlan, role: RolePlan, settings: Settings) -> dict:
    policy = role.restart_policy  # not Always: checks.py reports it
    pods = 1 if per_job(plan, role) else role.count
    spec: dict = {"completionMode": "Indexed", "completions": pods, "parallelism": pods}
    if policy == "Never":
        spec["backoffLimit"] = 0
    elif settings.backoff_limit is not None:
        spec["backoffLimit"] = settings.backoff_limit
    if settings.active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = settings.active_deadline_seconds
    if role.name == plan.success_role and _decides_alone_at_index_0(plan, settings):
        spec["successPolicy"] = {"rules": [{"succeededIndexes": "0"}]}
    if role.name == plan.success_role and plan.success.scope == "any" and pods > 1:
        # generic AnyReplica: the Indexed Job succeeds with its first succeeded pod (Kubernetes >= 1.33)
        spec["successPolicy"] = {"rules": [{"succeededCount": 1}]}
    if policy == "ExitCode":
        # podFailurePolicy needs pod restartPolicy Never (JobSet would default it to OnFailure)
        spec["podFailurePolicy"] = {"rules": [common.exit_code_rule(role.container(plan), role.restart)]}
    pod_policy = "OnFailure" if policy == "OnFailure" else "Never"
    spec["template"] = pod_template(plan, role, settings, pod_policy)
    return spec


def _ordered_roles(plan: JobPlan) -> list[RolePlan]:
    if plan.framework not in START_ORDER:  # generic: as written
        return [r for r in plan.roles if r.count]
    order = START_ORDER[plan.framework]
    return sorted((r for r in plan.roles if r.count), key=lambda r: order.index(r.name))


def _needs_in_order(plan: JobPlan) -> bool:
    return plan.framework in ("mxnet", "mpi") or (plan.framework == "tensorflow" and _count(plan, "ps") > 0)


def _success_policy(plan: JobPlan) -> dict:
    """The deciding role's replicatedJob; generic's default rule (role ""): every replicatedJob."""
    role = plan.role(plan.success_role)
    if role is None:
        return {"operator": "All"}
    return {"operator": "All", "targetReplicatedJobs": [role.task]}


def jobset(plan: JobPlan) -> dict:
    settings = settings_of(plan)
    roles = _ordered_roles(plan)
    replicated = []
    for role in roles:
        replicated.append({"name": role.task, "replicas": role.count if per_job(plan, role) else 1,
                           "template": {"metadata": {"labels": common.job_labels(plan, role.name)},
                                        "spec": job_spec(plan, role, settings)}})
    spec: dict = {"network": {"enableDNSHostnames": True, "subdomain": plan.name,
                              # peers must resolve each other while they start, before readiness
                              "publishNotReadyAddresses": True},
                  "successPolicy": _success_policy(plan)}
    if _needs_in_order(plan):
        spec["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    exit_code = [r.task for r in roles if r.restart_policy == "ExitCode"]
    if exit_code:
        # a permanent exit code (1-127) fails the Job through its podFailurePolicy: fail the JobSet, no restart
        spec["failurePolicy"] = {"maxRestarts": 0, "rules": [{
            "name": "permanent-exit-code", "action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"],
            "targetReplicatedJobs": exit_code}]}
    if settings.ttl_seconds_after_finished is not None:
        spec["ttlSecondsAfterFinished"] = settings.ttl_seconds_after_finished
    spec["replicatedJobs"] = replicated
    labels = common.job_labels(plan)
    labels.update(common.kueue_labels(settings.queue))
    return {"apiVersion": API_VERSION, "kind": JOBSET.kind,
            "metadata": common.metadata(plan, plan.name, labels), "spec": spec}


def objects(plan: JobPlan) -> list[dict]:
    return [topology_config_map(plan, settings_of(plan)), jobset(plan)]


def on_runtime_objects(plan: JobPlan) -> list[dict]:
    """A v1.3 job on a Trainer runtime, given the runtime's definition (--runtime): the JobSet (and the
    MPI hostfile ConfigMap) the Trainer controller creates for the TrainJob the trainjob target writes
    (compiler/runtimes.py `expand`, with its sources).  The MPI ssh Secret is not written: it holds keys."""
    from trainspec.compiler.runtimes import expand

    from ..trainjob.on_runtime import train_job

    assert plan.runtime is not None
    tj = train_job(plan)
    made = expand(tj, plan.runtime)
    # trainspec's own labels too (the controller's JobSet has the runtime's): `ps`, `down` find the job by them
    labels = {**tj["metadata"].get("labels", {}), **made.jobset["metadata"].get("labels", {})}
    made.jobset["metadata"]["labels"] = labels
    return [made.jobset, *made.objects]
