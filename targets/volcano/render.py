"""`volcano`: one `batch.volcano.sh/v1alpha1` Job (Volcano v1.x), with its plugins and policies.

Rules from shared/reference/CONVENTIONS.md §2.  One task per role (task name =
role name); the `env` and `svc` plugins always, `ssh` for MPI, and the framework
plugin where Volcano has one (`tensorflow`, `pytorch`, `mpi`) with arguments
naming our roles and ports.  Hosts are `<job>-<task>-<i>.<job>` (svc plugin).

Per-replica templates: a role whose command, args or env render differently per
replica (`{{ index }}`) keeps one task when the kubelet's `$(TRAINSPEC_INDEX)`
expansion gives every replica its exact text (as on the kubeflow target).  Only
when it cannot does every role become one task per replica (`<role>-<i>`, replicas 1, as TorchX does), the pod
hostname is pinned to `<job>-<role>-<i>` so the host names stay the same, and
since the framework plugins find their roles by task name, we write the
framework variables ourselves, in the plugins' formats.

Variables Volcano's plugins do not give but the spec promises are written here:
MXNet's DMLC_* (there is no MXNet plugin), torchrun's PET_*, the MPI hostfile and
its OMPI_* / I_MPI_* / HYDRA_* variables, and TF_CONFIG for a single-pod job
(the tensorflow plugin skips those), and everything the Kubeflow v1 XGBoostJob,
PaddleJob and JAXJob controllers inject (no Volcano plugin exists for them), with
the svc plugin's host names.  XGBoost's MASTER_ADDR, MASTER_PORT, WORLD_SIZE and
RANK (worker i is i + 1) come from Volcano's pytorch plugin, whose values are the
XGBoostJob controller's (checks.py volcano_xgboost_plugin), so its tasks
stay one per role.  Where a value differs per replica other than by the index and
no plugin gives it (torchrun's PET_NODE_RANK = index + 1 on PyTorch workers,
Paddle's rendezvous replica with its pod IP, XGBoost when the user's env sets
RANK), the job takes the one-task-per-replica form, so every replica gets its
exact value; checks.py refuses it past etcd's object size
(docs/validation.md).  `TRAINSPEC_INDEX` (and `DMLC_WORKER_ID`, JAX's `PROCESS_ID`)
come from the pod label `volcano.sh/task-index` through the downward API: the env
plugin's VC_TASK_INDEX is appended after our variables, so `$(VC_TASK_INDEX)`
could not be referenced from them.
"""

from __future__ import annotations

from trainspec.compiler import frameworks
from trainspec.compiler.frameworks import (
    HOSTFILE_KEY,
    MPI_HOSTFILE_PATH,
    OPERATOR_ENV_FRAMEWORKS,
    TF_CLUSTER_KEY,
    mpi_hostfile,
    tf_config,
)
from trainspec.compiler.kinds.volcano import JOB
from trainspec.compiler.model import GENERIC
from trainspec.compiler.plan import EnvVar, JobPlan, Restart, RolePlan

from .. import common
from ..role_template import base_env, field_ref, role_container, role_labels, role_render, topology_data
from ..yamlout import dump_all
from .checks import XGBOOST_PLUGIN_ENV, volcano_node_rank_split, volcano_split, volcano_xgboost_plugin
from .scheme import SUBDOMAIN

FILE = "volcano.yaml"
INDEX_LABEL = "volcano.sh/task-index"
PLUGIN_FRAMEWORKS = ("tensorflow", "pytorch", "mpi")  # Volcano has no MXNet plugin


SPLIT_NOTE = ("one task per replica: some per-replica text or variable cannot be rebuilt from the task index "
              "at runtime, so the framework plugins are not used")


def render(plan: JobPlan) -> dict[str, str]:
    plan.check("volcano")
    layout = _Layout(plan)
    return {FILE: dump_all(common.patched(plan, "volcano", objects(plan, layout)),
                           common.header(plan, SPLIT_NOTE if layout.split else ""))}


def hosts(plan: JobPlan) -> dict[str, list[str]]:
    """host:port per role: `<job>-<task>-<i>.<job>` (the svc plugin; scheme.py)."""
    return plan.hosts(SUBDOMAIN)


def host_names(plan: JobPlan) -> dict[str, list[str]]:
    return {role: [address.rsplit(":", 1)[0] for address in addresses] for role, addresses in hosts(plan).items()}


def tf_cluster(plan: JobPlan) -> str:
    """The tensorflow plugin's cluster JSON: Go struct order ps, worker, chief, evaluator; empty roles omitted.

    Like the Kubeflow operator (1.x), the plugin lists the evaluator too; the k8s
    target does not (PRODUCT.md).  See docs/targets-kubeflow-volcano.md.
    """
    return frameworks.tf_cluster(hosts(plan), evaluator=True, struct_order=True)


class _Layout:
    """Which tasks the job has: one per role, or (per-replica templates) one per replica."""

    def __init__(self, plan: JobPlan):
        self.plan = plan
        self.renders = {role.name: role_render(role, SUBDOMAIN) for role in plan.roles}
        self.split = volcano_split(plan)
        # XGBoost's RANK (without the plugin) and Paddle's rendezvous replica differ per replica in ways
        # the task index cannot give through the downward API: then too, one task per replica.
        # A role of 0 replicas still writes its task (replicas: 0): its env is that of an index 0.
        lists: dict[tuple[str, int], str] = {}  # host lists every replica shares: built once per job
        self.operator_env = {role.name: [_operator_env(plan, role, i, lists) for i in range(max(role.count, 1))]
                             for role in plan.roles} if plan.framework in OPERATOR_ENV_FRAMEWORKS else {}
        # XGBoost: the pytorch plugin gives MASTER_*, WORLD_SIZE and RANK (index + 1 on workers) per pod
        self.xgboost_plugin = volcano_xgboost_plugin(plan)
        if self.xgboost_plugin:
            self.operator_env = {role: [[v for v in env if v.name not in XGBOOST_PLUGIN_ENV] for env in envs]
                                 for role, envs in self.operator_env.items()}
        self.index_vars: dict[str, set[str]] = {}
        for role, envs in self.operator_env.items():
            varies = _varies_by_index(envs)
            if varies is None:
                self.split = True
            else:
                self.index_vars[role] = varies
        if volcano_node_rank_split(plan.framework, plan.elastic is not None, {r.name: r.count for r in plan.roles}):
            self.split = True

    def tasks(self):
        """(role, index or None, task name, replicas)."""
        for role in self.plan.roles:
            if self.split:
                for i in range(role.count):
                    yield role, i, f"{role.task}-{i}", 1
            else:
                yield role, None, role.task, role.count


def _operator_env(plan: JobPlan, role: RolePlan, index: int, lists: dict[tuple[str, int], str]) -> list[EnvVar]:
    counts = {r.name: r.count for r in plan.roles}
    ports = {r.name: r.port for r in plan.roles}
    return frameworks.operator_env(plan.framework, role.name, index, counts, ports,
                                   lambda r, i: _host(plan, r, i), plan.name, lists)


def _task(plan: JobPlan, role_name: str) -> str:
    """The task of a role: its taskName (spec v1.2), else its name."""
    role = plan.role(role_name)
    return role.task if role is not None else role_name


def _host(plan: JobPlan, role_name: str, index: int) -> str:
    """The svc plugin's host of replica `index` of a role: `<job>-<task>-<i>.<job>`."""
    return f"{plan.name}-{_task(plan, role_name)}-{index}.{plan.name}"


def _varies_by_index(envs: list[list[EnvVar]]) -> set[str] | None:
    """The variables whose value is the replica's index (the downward API gives it), or None when
    the replicas differ in some other way (one pod template cannot serve them)."""
    out: set[str] = set()
    for i, env in enumerate(envs[1:], 1):
        if [v.name for v in env] != [v.name for v in envs[0]]:
            return None
        for var, first in zip(env, envs[0]):
            if var == first:
                continue
            if var.value == str(i) and first.value == "0":
                out.add(var.name)
            else:
                return None
    return out


def _index_entry(index: int | None) -> dict:
    return {"value": str(index)} if index is not None else field_ref(f"metadata.labels['{INDEX_LABEL}']")


def _framework_env(plan: JobPlan, role: RolePlan, index: int | None, layout: _Layout) -> list[dict]:
    fw = plan.framework
    split = layout.split
    if fw == GENERIC:
        return []  # no framework variables: TRAINSPEC_* and the env / svc plugins' VC_* only
    if fw in OPERATOR_ENV_FRAMEWORKS:
        env = layout.operator_env[role.name][index or 0]
        by_index = set() if split else layout.index_vars[role.name]
        return [{"name": v.name, **_index_entry(None)} if v.name in by_index else common.env_entry(v, "")
                for v in env]
    if fw == "tensorflow":
        single = plan.total_replicas == 1 and len(plan.roles) == 1
        if split or single:
            # the plugin's format: no "environment"
            if single:
                return [{"name": "TF_CONFIG", "value": tf_config(tf_cluster(plan), role.name, 0, environment=False)}]
            return [{"name": TF_CLUSTER_KEY, "valueFrom": {"configMapKeyRef": {"name": plan.topology_name,
                                                                                "key": TF_CLUSTER_KEY}}},
                    {"name": "TF_CONFIG", "value": tf_config(f"$({TF_CLUSTER_KEY})", role.name, index or 0,
                                                             environment=False)}]
        return []
    if fw == "pytorch" and (plan.elastic is not None or plan.role("master") is None):
        return _elastic_env(plan, role, index, split)
    if fw == "pytorch":
        master = plan.role("master")
        master_host = _host(plan, "master", 0)
        pods = sum(r.count for r in plan.roles)
        nproc = plan.nproc_per_node or "auto"
        env = []
        if split:
            rank = (index or 0) + (role.name != "master")
            env += [{"name": "MASTER_ADDR", "value": master_host}, {"name": "MASTER_PORT", "value": str(master.port)},
                    {"name": "WORLD_SIZE", "value": str(pods)}, {"name": "RANK", "value": str(rank)}]
        env += [{"name": "PYTHONUNBUFFERED", "value": "1"},
                {"name": "PET_MASTER_ADDR", "value": master_host},
                {"name": "PET_MASTER_PORT", "value": str(master.port)},
                {"name": "PET_NNODES", "value": str(pods)},
                {"name": "PET_NPROC_PER_NODE", "value": nproc}]
        if role.name == "master" or split or role.count == 1:  # else split above: the rank is per replica
            rank = 0 if role.name == "master" else (index or 0) + 1
            env.append({"name": "PET_NODE_RANK", "value": str(rank)})
        return env
    if fw == "mxnet":
        scheduler = plan.role("scheduler")
        env = [{"name": "DMLC_ROLE", "value": role.name},
               {"name": "DMLC_PS_ROOT_URI", "value": _host(plan, "scheduler", 0)},
               {"name": "DMLC_PS_ROOT_PORT", "value": str(scheduler.port)},
               {"name": "DMLC_NUM_SERVER", "value": str(_count(plan, "server"))},
               {"name": "DMLC_NUM_WORKER", "value": str(_count(plan, "worker"))},
               {"name": "DMLC_USE_KUBERNETES", "value": "1"}]
        if role.name == "worker":
            env.append({"name": "DMLC_WORKER_ID", **_index_entry(index)})
        return env
    # mpi: the hostfile (ours, with slots, as mpi-operator writes it) and the launcher's MPI variables
    env = []
    if role.name == "launcher":
        if split:
            workers = ",".join(host_names(plan).get("worker", []))
            env.append({"name": "MPI_HOST", "value": workers})
        env += common.env_list(frameworks.mpi_launcher_env(plan.mpi_implementation, plan.mpi_slots), "")
    return env


def _elastic_env(plan: JobPlan, role: RolePlan, index: int | None, split: bool) -> list[dict]:
    """Elastic torchrun: the rendezvous on worker-0 (the plugin's master variables when there is a master)."""
    counts = {r.name: r.count for r in plan.roles}
    master_env = []
    master = plan.role("master")
    if master is not None:
        rank = 0 if role.name == "master" else (index or 0) + 1
        host = _host(plan, "master", 0)
        master_env = [EnvVar("PET_MASTER_ADDR", host), EnvVar("PET_MASTER_PORT", str(master.port))]
        if role.name == "master" or split:
            master_env.append(EnvVar("PET_NODE_RANK", str(rank)))
    env = frameworks.pytorch_elastic_env(plan.elastic, _host(plan, "worker", 0), counts,
                                         {r.name: r.port for r in plan.roles}, plan.nproc_per_node, master_env)
    return common.env_list(env, "")


def _count(plan: JobPlan, name: str) -> int:
    role = plan.role(name)
    return role.count if role else 0


def topology_config_map(plan: JobPlan, split: bool) -> dict:
    data = topology_data(plan, hosts(plan))
    if plan.framework == "tensorflow" and split:
        data[TF_CLUSTER_KEY] = tf_cluster(plan)
    if plan.framework == "mpi":
        workers = host_names(plan).get("worker", [])
        data[HOSTFILE_KEY] = mpi_hostfile(workers, plan.mpi_slots or 1, plan.mpi_implementation)
    return common.topology_config_map(plan, data)


def plugins(plan: JobPlan, split: bool, xgboost_plugin: bool = False) -> dict:
    out: dict = {"env": [], "svc": ["--publish-not-ready-addresses"]}
    if plan.framework == "mpi":
        out["ssh"] = [f"--ssh-key-file-path={plan.mpi_ssh_path}"]
    if xgboost_plugin and not split:  # the XGBoostJob controller's MASTER_*, WORLD_SIZE and RANK
        out["pytorch"] = ["--master=master", "--worker=worker", f"--port={plan.role('master').port}"]
    if split or plan.framework not in PLUGIN_FRAMEWORKS:
        return out
    names = {role.name for role in plan.roles}
    task = {role.name: role.task for role in plan.roles}  # the plugins find their roles by task name
    if plan.framework == "tensorflow":
        args = [f"--{name}={task[name]}" for name in ("ps", "worker", "chief", "evaluator") if name in names]
        out["tensorflow"] = args + [f"--port={plan.roles[0].port}"]
    elif plan.framework == "pytorch" and plan.role("master") is None:
        pass  # the plugin needs a master task; the elastic rendezvous variables are written per task
    elif plan.framework == "pytorch":
        out["pytorch"] = [f"--master={task['master']}", f"--worker={task.get('worker', 'worker')}",
                          f"--port={plan.role('master').port}"]
    else:
        worker = plan.role("worker")
        out["mpi"] = [f"--master={task['launcher']}", f"--worker={task.get('worker', 'worker')}",
                      f"--port={worker.port if worker else 22}"]
    return out


def _exit_code_policies(restart: Restart) -> list[dict]:
    """ExitCode: fail on the permanent exit codes (1-127), restart on anything else (>= 128), up to maxRetry.

    Volcano matches `exitCode` one code per policy, checked in order before the catch-all.
    """
    rules = [{"exitCode": code, "action": "TerminateJob"} for code in restart.permanent_exit_codes]
    return rules + [{"event": "PodFailed", "action": "RestartJob"}]


def _all_exit_code(plan: JobPlan) -> bool:
    return all(role.restart_policy == "ExitCode" for role in plan.roles)


def _restart(plan: JobPlan, restart: Restart) -> tuple[str, list[dict]]:
    """(pod restartPolicy, task policies) for the role's restart semantics."""
    policy = restart.policy
    if policy == "Never":
        return "Never", [{"event": "PodFailed", "action": "TerminateJob"}]
    if policy == "ExitCode":
        # When every role uses ExitCode the rules are written once, at the job level.
        return "Never", [] if _all_exit_code(plan) else _exit_code_policies(restart)
    return policy, []  # OnFailure / Always: the kubelet restarts the container in place


def _success_tasks(plan: JobPlan, split: bool) -> set[str]:
    """The tasks whose TaskCompleted completes the job (plan.success); none when split and every replica counts."""
    rule = plan.success
    if not rule.role:
        return set()  # generic's default: Volcano's own, every pod of every task
    task = _task(plan, rule.role)
    if rule.scope in ("all", "any"):  # "any": the role has one replica (checks.py refuses more)
        return set() if split and rule.scope == "all" else ({f"{task}-0"} if split else {task})
    return {f"{task}-{rule.index}" if split else task}


def task(plan: JobPlan, role: RolePlan, index: int | None, name: str, replicas: int, layout: _Layout) -> dict:
    rendered = layout.renders[role.name]
    values = rendered.of(index or 0)
    shared = None if rendered.uniform or index is not None else rendered.shared
    env = base_env(plan, role, _index_entry(index), plan.topology_name)
    env += _framework_env(plan, role, index, layout)
    env += common.env_list((shared or values).env, plan.topology_name)
    extra_volumes, extra_mounts = [], []
    if plan.framework == "mpi" and role.name == "launcher":
        extra_volumes = [{"name": "mpi-job-config", "configMap": {
            "name": plan.topology_name, "items": [{"key": HOSTFILE_KEY, "path": "hostfile"}]}}]
        extra_mounts = [{"name": "mpi-job-config", "mountPath": MPI_HOSTFILE_PATH.rsplit("/", 1)[0]}]
    container = role_container(plan, role, env, values)
    if shared is not None:  # one task template: the index reaches the text at runtime, exactly
        for key, items in (("command", shared.command), ("args", shared.args)):
            if items is not None:
                container[key] = list(items)  # kubelet text already: not escaped again
    if extra_mounts:
        container["volumeMounts"] = container.get("volumeMounts", []) + extra_mounts
    pod_policy, policies = _restart(plan, role.restart)
    pod: dict = {"restartPolicy": pod_policy}
    pod.update(common.scheduling_fields(plan, role))
    if plan.active_deadline_seconds is not None:
        pod["activeDeadlineSeconds"] = plan.active_deadline_seconds
    if index is not None:
        pod["hostname"] = f"{plan.name}-{role.task}-{index}"  # keeps the host <job>-<task>-<i>.<job>
    pod.update(common.pod_spec_tail(plan, role, container, extra_volumes))
    if name in _success_tasks(plan, layout.split):
        policies = [{"event": "TaskCompleted", "action": "CompleteJob"}] + policies
    labels = role_labels(plan, role)
    if index is not None:
        labels["trainspec.dev/index"] = str(index)
    out: dict = {"name": name, "replicas": replicas}
    if policies:
        out["policies"] = policies
    out["template"] = {"metadata": common.template_metadata(role, labels), "spec": pod}
    return out


def job(plan: JobPlan, layout: _Layout) -> dict:
    sched = plan.scheduling
    body: dict = {
        "schedulerName": sched.scheduler_name or "volcano",
        "minAvailable": sched.min_available if sched.min_available is not None else plan.total_replicas,
    }
    if sched.queue:
        body["queue"] = sched.queue
    if sched.priority_class_name:
        body["priorityClassName"] = sched.priority_class_name
    if plan.backoff_limit is not None:
        body["maxRetry"] = plan.backoff_limit
    if plan.cleanup.ttl_seconds_after_finished is not None:
        body["ttlSecondsAfterFinished"] = plan.cleanup.ttl_seconds_after_finished
    if layout.split and not _success_tasks(plan, True) and plan.success.role:
        body["minSuccess"] = _count(plan, plan.success.role)  # every replica counts, and no one task to watch
    body["plugins"] = plugins(plan, layout.split, layout.xgboost_plugin)
    body["policies"] = [{"event": "PodEvicted", "action": "RestartJob"}]
    if _all_exit_code(plan):
        body["policies"] += _exit_code_policies(plan.roles[0].restart)
    body["tasks"] = [task(plan, role, index, name, replicas, layout)
                     for role, index, name, replicas in layout.tasks()]
    return {
        "apiVersion": JOB.api_version,
        "kind": JOB.kind,
        "metadata": common.metadata(plan, plan.name, common.job_labels(plan)),
        "spec": body,
    }


def objects(plan: JobPlan, layout: _Layout | None = None) -> list[dict]:
    layout = layout or _Layout(plan)
    return [topology_config_map(plan, layout.split), job(plan, layout)]
