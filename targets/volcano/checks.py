"""What the volcano target cannot express, and the task layout its checks and its renderer share.

A Volcano Job has one pod template per task; the target writes one task per role, or one per
replica where a replica's values cannot come from the task index (`task_per_replica`), which
grows the object with the replica count (`object_size`, kube_rules' request-size rule).
"""


from trainspec.compiler.limits import HOST_LISTS, LimitProblem
from trainspec.compiler.plan import JobPlan
from trainspec.compiler.plan_limits import annotations_size, config_map_size, largest_role, output_size
from trainspec.compiler.target_rules import Problem

from .scheme import SUBDOMAIN


def volcano_split(plan: JobPlan) -> bool:
    """Whether the volcano target writes one task per replica instead of one per role.

    Only when some role's text differs per replica and cannot be rebuilt from the task
    index at runtime ($(TRAINSPEC_INDEX) from the pod's task-index label): one task per
    replica gives up the framework plugins, so it is the last resort.
    """
    return any(not render.uniform and render.shared is None
               for render in (r.renders.get(SUBDOMAIN.name) for r in plan.roles) if render is not None)


def volcano_node_rank_split(framework: str, elastic: bool, counts: dict[str, int]) -> bool:
    """Whether the volcano target writes one task per replica for torchrun's node rank.

    torchrun takes its node rank from PET_NODE_RANK (as the Kubeflow operator sets it); Volcano's pytorch
    plugin sets RANK only, and a worker's node rank (index + 1) cannot come from the task index: with
    several workers every worker's torchrun would be node 0.  The importer lays its patches out by this too.
    """
    return framework == "pytorch" and not elastic and counts.get("master", 0) > 0 and counts.get("worker", 0) > 1


XGBOOST_PLUGIN_ENV = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")


def volcano_xgboost_plugin(plan: JobPlan) -> bool:
    """Whether Volcano's pytorch plugin gives an XGBoost job's replicas MASTER_ADDR, MASTER_PORT, WORLD_SIZE and
    RANK: its values are the XGBoostJob controller's (the master is rank 0, worker i is i + 1; the master's
    `<job>-master-0.<job>`; every master and worker counted), so the workers need not be one task each for
    their RANK.  Not when the user's env sets one of those names: the plugin appends its own after the
    template's, and the later one would win over the user's."""
    if plan.framework != "xgboost" or plan.role("master") is None:
        return False
    return not any(name in XGBOOST_PLUGIN_ENV for role in plan.roles for name, _ in role.sources.env)


def check(plan: JobPlan) -> list[Problem]:
    decider = plan.role(plan.success.role) if plan.success.role else None
    if plan.success.scope == "any" and decider is not None and decider.count > 1:
        return [Problem(("spec", "success", "policy"), f"target volcano: a Volcano Job completes when a whole task "
                        f"completes (TaskCompleted) or minSuccess pods of the job succeed; it cannot complete when "
                        f"any one of the {decider.count} {decider.name} replicas does", "AllReplicas, or a role with "
                        "one replica", "use AllReplicas, or the jobset, k8s or compose target (they keep AnyReplica)")]
    if plan.framework == "tensorflow" and not volcano_split(plan):
        ports = {role.port for role in plan.roles}
        if len(ports) > 1:
            return [Problem(("spec", "roles"), "target volcano: Volcano's tensorflow plugin gives every task the "
                            f"same port (roles use {sorted(ports)})", "one port for every role",
                            "remove the per-role ports")]
    return []


VOLCANO_SCHEDULER_NAME_MAX = 63  # volcano CRD batch.volcano.sh_jobs.yaml spec.schedulerName maxLength


def scheduler_name(plan: JobPlan) -> list[LimitProblem]:
    """kube_rules scheduling-names: the Volcano Job's schedulerName is limited by its CRD."""
    name = plan.scheduling.scheduler_name
    if not name or len(name) <= VOLCANO_SCHEDULER_NAME_MAX:
        return []
    return [LimitProblem(
        (("spec", "scheduling", "schedulerName"),),
        f"the Volcano Job's schedulerName is {len(name)} characters; its CRD allows at most "
        f"{VOLCANO_SCHEDULER_NAME_MAX}", f"at most {VOLCANO_SCHEDULER_NAME_MAX} characters",
        "the other targets take it as the pod's schedulerName")]


# --- the object's size: etcd's limit (kube_rules request-size) -------------------------------------------

VOLCANO_TASK_BASE_BYTES = 1600  # a task's YAML without its env, command and args (measured: docs/validation.md)


def task_per_replica(plan: JobPlan) -> bool:
    """Whether the volcano target writes one task per replica (render.py lays tasks out by the same
    rules): a text that differs per replica, torchrun's node rank, or an operator variable that is the
    index plus an offset (XGBoost's RANK on workers, when the pytorch plugin cannot give it) or differs on
    one replica (Paddle's rendezvous)."""
    counts = {role.name: role.count for role in plan.roles}
    if volcano_split(plan) or volcano_node_rank_split(plan.framework, plan.elastic is not None, counts):
        return True
    if plan.framework == "xgboost" and not volcano_xgboost_plugin(plan):
        return counts.get("worker", 0) > 1 and counts.get("master", 0) > 0
    if plan.framework == "paddle":
        return counts.get("master" if counts.get("master", 0) else "worker", 0) > 1
    return False


def size_estimate(plan: JobPlan) -> int:
    """Bytes of the Volcano Job when it has one task per replica (within a few percent, above)."""
    total = 0
    for role in plan.roles:
        if not role.replicas:
            continue
        last = role.replicas[-1]
        # values at 5/4: Volcano's host names (`<job>-<role>-<i>.<job>`) are longer than the plan's
        env = sum(len(var.name) + 24 + len(var.value or var.expand or "") * 5 // 4 for var in last.env)
        words = sum(len(w) + 6 for w in (last.command or ()) + (last.args or ()))
        labels = sum(len(k) + len(v) + 8 for k, v in {**plan.labels, **plan.annotations}.items())
        total += role.count * (VOLCANO_TASK_BASE_BYTES + env + words + labels)
    return total


def object_size(plan: JobPlan) -> list[LimitProblem]:
    """kube_rules request-size: an object over etcd's 1.5 MiB is refused (over 3 MiB, with 413 already).

    Only the one-task-per-replica layout grows with the replica count: every other target writes one
    pod template per role (k8s and helm one small object per replica)."""
    from trainspec.compiler.kube_rules import ETCD_OBJECT_MAX_BYTES, REQUEST_MAX_BYTES

    if not task_per_replica(plan):
        return []
    size = size_estimate(plan)
    if size <= ETCD_OBJECT_MAX_BYTES:
        return []
    total = plan.total_replicas
    role = largest_role(plan)
    over = "the API server's 3 MiB request limit and " if size > REQUEST_MAX_BYTES else ""
    return [LimitProblem(
        (("spec", "roles", role.name, "replicas"),),
        f"with {total} replicas the Volcano Job would be about {size / 2**20:.1f} MiB: it needs one task per "
        f"replica here (Volcano gives a pod only its task index, and {plan.framework} needs the index plus an "
        f"offset, or per-replica text), over {over}etcd's {ETCD_OBJECT_MAX_BYTES // 1024} KiB object limit",
        f"at most about {max(1, total * ETCD_OBJECT_MAX_BYTES // size)} replicas for the volcano target",
        "the kubeflow, jobset, trainjob, k8s and helm targets write one pod template per role and fit")]


def limits(plan: JobPlan) -> list[LimitProblem]:
    """The host lists' ConfigMap and annotations (the queue is a field), the CRD's schedulerName, the size."""
    return (config_map_size(plan, HOST_LISTS) + annotations_size(plan) + scheduler_name(plan) + object_size(plan)
            + output_size(plan, "volcano", per_replica=task_per_replica(plan)))


