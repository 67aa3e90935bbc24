"""`k8s`: plain Kubernetes objects that run the job with no operator installed (spec v1.3 shape).

Per role one `batch/v1` Indexed Job named `<job>-<role>` (completions = parallelism = replicas), or
for restartPolicy Always one StatefulSet of that name (`podManagementPolicy: Parallel`); one headless
Service `<job>` for the whole job, the pods' `subdomain`.  Replica i of a role is the pod with
hostname `<job>-<role>-<i>` (the Job controller's `<job-name>-<index>`, a StatefulSet's pod name),
reachable as `<job>-<role>-<i>.<job>` (scheme.py).  Its index reaches the pod through the downward
API (`batch.kubernetes.io/job-completion-index`, `apps.kubernetes.io/pod-index`) as TRAINSPEC_INDEX;
per-replica text is kubelet `$(TRAINSPEC_INDEX)` expansion, and topology-wide values (host lists, TF
cluster, MPI hostfile, XGBoost's worker list) live once in the `<job>-topology` ConfigMap, so the
output grows with the number of roles, not replicas.

PyTorch / XGBoost workers beside a master have RANK = index + 1, which the downward API cannot add: their
one Indexed Job's container runs `/bin/sh -c <rank prelude> <command...>` (scheme.py `rank_prelude`), a
fixed script that exports RANK (and PyTorch's PET_NODE_RANK) as TRAINSPEC_INDEX + 1 and `exec`s the role's
own command and args unchanged, so the program sees what the training operator gives worker i (i + 1); those
variables are then not in the container's static env.  The image needs `/bin/sh`.

A role whose replicas one pod template cannot serve keeps one object per replica (a one-pod Job, or a
one-pod Deployment for Always) that sets the same `hostname` and `subdomain` itself: a template whose
per-replica text has no `$(TRAINSPEC_INDEX)` form, and ranked workers with no command (the image's entry
point: nothing for the prelude to `exec`; compile warns, checks.py).

Restart: Never -> `backoffLimitPerIndex: 0` (each replica fails alone, as a Job per replica did);
OnFailure -> the pods restart in place, `backoffLimit` counts the role's restarts; ExitCode ->
`podFailurePolicy` (permanent codes fail the Job) and `backoffLimitPerIndex`.  The deciding replica
of a role of several pods (TF worker 0, generic AnyReplica) is the Job's `successPolicy` from
Kubernetes 1.31 (`--kube-version`; beta, on by default; GA 1.33); on 1.30 the role's Job completes
when all of its pods have, and the rule is only in the run-policy annotation.
"""

from __future__ import annotations

from trainspec.compiler.frameworks import HOSTFILE_KEY, TF_CLUSTER_KEY, mpi_hostfile, tf_cluster
from trainspec.compiler.kube_rules import applies
from trainspec.compiler.plan import JobPlan, RolePlan

from .. import common
from ..jobset import render as jobset
from ..role_template import base_env, field_ref, mpi_mounts, role_container, role_labels, topology_data
from ..yamlout import dump_all
from .checks import lingering_roles
from .scheme import INDEXED, rank_names, rank_prelude, ranked, shape

FILE = "k8s.yaml"
JOB_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"  # a StatefulSet pod's ordinal (PodIndexLabel, on from 1.28)
DEFAULT_BACKOFF = 6  # batch/v1's default backoffLimit, per index for ExitCode as it was per replica's Job


def render(plan: JobPlan) -> dict[str, str]:
    if plan.trainjob is not None and plan.runtime is not None:  # v1.3 on a runtime, given with --runtime
        from .on_runtime import objects as on_runtime

        plan.check("k8s")
        return {FILE: dump_all(on_runtime(plan), common.header(plan, "a Trainer runtime's JobSet as plain Jobs: "
                                                                     "no JobSet controller applies its failure "
                                                                     "and success policies"))}
    docs = common.patched(plan, "k8s", objects(plan), whole_file=True)  # a patch addresses the file's objects
    return {FILE: dump_all(docs, common.header(plan, lingering_note(plan)))}


def lingering_note(plan: JobPlan) -> str:
    """The header's caveat: without a controller, servers outlive the job (issue: plain k8s)."""
    roles = lingering_roles(plan)
    if not roles:
        return ""
    until = (f"until activeDeadlineSeconds ({plan.active_deadline_seconds}s)"
             if plan.active_deadline_seconds is not None else "forever")
    if plan.framework == "generic":  # its roles may well exit on their own
        return (f"Caveat: no controller stops the {' and '.join(roles)} replicas still running when "
                f"{plan.success.text}; they would run {until}. The jobset and volcano targets end the whole job.")
    return (f"Caveat: no controller stops the {' and '.join(roles)} replicas when {plan.success.text}; "
            f"they run {until}. The jobset, kubeflow and volcano targets end the whole job.")


# --- host names ------------------------------------------------------------------------------------

def hosts(plan: JobPlan) -> dict[str, list[str]]:
    """role -> [host:port] as the k8s target names its pods (scheme.py)."""
    return plan.hosts(INDEXED)


def host_names(plan: JobPlan) -> dict[str, list[str]]:
    return {role: [h.rsplit(":", 1)[0] for h in items] for role, items in hosts(plan).items()}


def workload_name(plan: JobPlan, role: RolePlan) -> str:
    """The role's Job / StatefulSet: its pods' hosts are `<this>-<i>`."""
    return f"{plan.name}-{role.task}"


def service_name(plan: JobPlan) -> str:
    return plan.name


# --- the job's shared objects ----------------------------------------------------------------------

def topology_config_map(plan: JobPlan) -> dict:
    annotations = {"trainspec.dev/framework": plan.framework,
                   "trainspec.dev/success-rule": plan.success.text}
    if plan.success_policy:
        annotations["trainspec.dev/success-policy"] = plan.success_policy
    if plan.cleanup.pods:
        annotations["trainspec.dev/clean-pod-policy"] = plan.cleanup.pods
    if plan.backoff_limit is not None:
        annotations["trainspec.dev/backoff-limit"] = str(plan.backoff_limit)
    if plan.active_deadline_seconds is not None:
        annotations["trainspec.dev/active-deadline-seconds"] = str(plan.active_deadline_seconds)
    annotations.update(common.run_policy(plan))
    addresses = hosts(plan)
    data = topology_data(plan, addresses)
    names = host_names(plan)
    if plan.framework == "tensorflow":
        data[TF_CLUSTER_KEY] = tf_cluster(addresses)
    if plan.framework == "mpi":
        data[HOSTFILE_KEY] = mpi_hostfile(names.get("worker", []), plan.mpi_slots or 1, plan.mpi_implementation)
    data.update(jobset.xgboost_workers(plan, names))
    return common.topology_config_map(plan, data, annotations)


def service(plan: JobPlan) -> dict:
    """The job's one headless Service: the DNS domain of every pod's `<hostname>.<job>` name."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": common.metadata(plan, service_name(plan), common.job_labels(plan)),
        "spec": {
            "clusterIP": "None",
            # Peers must resolve each other while they start, before any readiness probe passes.
            "publishNotReadyAddresses": True,
            "selector": {"trainspec.dev/job": plan.name},
        },
    }


# --- one role ----------------------------------------------------------------------------------------

def pod_template(plan: JobPlan, role: RolePlan, pod_policy: str, index: int | None) -> dict:
    """The role's pod template: for all of its pods (`index` None) or for replica `index` alone."""
    settings = jobset.settings_of(plan)
    rendered = role.renders[INDEXED.name]
    name = workload_name(plan, role)
    if index is None:
        always = role.restart_policy == "Always"
        index_entry = field_ref(f"metadata.labels['{POD_INDEX_LABEL}']" if always
                                else f"metadata.annotations['{JOB_INDEX_ANNOTATION}']")
        if role.count <= 1:  # one pod: replica 0's own text
            values = rendered.of(0)
            command = args = None
            user_env = common.env_list(values.env, plan.topology_name)
        else:
            values, command, args, user_env = jobset.role_texts(plan, role, INDEXED)
        rank: dict = {"value": "1" if ranked(plan, role) else "$(TRAINSPEC_INDEX)"}
        labels = role_labels(plan, role)
    else:
        index_entry = {"value": str(index)}
        values = rendered.of(index)
        command = args = None
        user_env = common.env_list(values.env, plan.topology_name)
        rank = {"value": str(index + 1)}
        labels = role_labels(plan, role)
        labels["trainspec.dev/index"] = str(index)
    prelude = rank_prelude(plan, role) if index is None else []
    # the rank prelude sets these at start (scheme.py): no static value in the env to contradict it
    taken = jobset.user_env_names(role) | (set(rank_names(plan, role)) if prelude else set())
    env = base_env(plan, role, index_entry, plan.topology_name)
    env += [e for e in jobset.framework_env(plan, role, settings, host_names(plan), rank,
                                            f"{name}-$(TRAINSPEC_INDEX).{service_name(plan)}", shared_lists=True)
            if e["name"] not in taken]
    env += user_env
    container = role_container(plan, role, env, values)
    for key, items in (("command", command), ("args", args)):
        if items is not None:
            container[key] = items
    if prelude:  # `sh -c SCRIPT <command...>`: the kubelet appends args, the script execs them all unchanged
        container["command"] = prelude + container["command"]
    extra_volumes, extra_mounts = mpi_mounts(plan, role)
    if extra_mounts:
        container["volumeMounts"] = container.get("volumeMounts", []) + extra_mounts
    pod: dict = {"restartPolicy": pod_policy}
    if index is not None:  # no controller names this pod's host: the same name an Indexed Job would give
        pod["hostname"] = f"{name}-{index}"
    pod["subdomain"] = service_name(plan)
    pod.update(common.scheduling_fields(plan, role))
    pod.update(common.pod_spec_tail(plan, role, container, extra_volumes))
    return {"metadata": common.template_metadata(role, labels), "spec": pod}


def job_spec(plan: JobPlan, role: RolePlan, completions: int, index: int | None) -> dict:
    policy = role.restart_policy
    spec: dict = {}
    if index is None:
        spec.update({"completionMode": "Indexed", "completions": completions, "parallelism": completions})
    limit = role.restart.backoff_limit
    if policy == "Never":
        # each replica fails alone, as its own Job did (backoffLimit then defaults to MaxInt32)
        spec["backoffLimitPerIndex" if index is None else "backoffLimit"] = 0
    elif policy == "ExitCode" and index is None:
        spec["backoffLimitPerIndex"] = DEFAULT_BACKOFF if limit is None else limit
    elif limit is not None:
        spec["backoffLimit"] = limit
    if plan.active_deadline_seconds is not None:
        spec["activeDeadlineSeconds"] = plan.active_deadline_seconds
    if plan.cleanup.ttl_seconds_after_finished is not None:
        spec["ttlSecondsAfterFinished"] = plan.cleanup.ttl_seconds_after_finished
    if index is None and completions > 1 and applies("job-success-policy", plan.kube_version):
        rule = success_rule(plan, role)
        if rule is not None:
            spec["successPolicy"] = {"rules": [rule]}
    if policy == "ExitCode":
        spec["podFailurePolicy"] = {"rules": [common.exit_code_rule(role.container(plan), role.restart)]}
    pod_policy = "OnFailure" if policy == "OnFailure" else "Never"
    spec["template"] = pod_template(plan, role, pod_policy, index)
    return spec


def success_rule(plan: JobPlan, role: RolePlan) -> dict | None:
    """The Job successPolicy rule when one pod of this role decides the job (TF worker 0, AnyReplica)."""
    rule = plan.success
    if rule.role != role.name:
        return None
    if rule.scope == "one":
        return {"succeededIndexes": str(rule.index)}
    if rule.scope == "any":
        return {"succeededCount": 1}
    return None


def workload_labels(plan: JobPlan, role: RolePlan) -> dict[str, str]:
    labels = common.job_labels(plan, role.name)
    labels.update(common.kueue_labels(plan.scheduling.queue))  # Kueue: on each top-level Job / StatefulSet
    return labels


def role_objects(plan: JobPlan, role: RolePlan) -> list[dict]:
    kind = shape(plan, role)
    labels = workload_labels(plan, role)
    name = workload_name(plan, role)
    if not kind.per_replica:
        meta = common.metadata(plan, name, labels)
        if kind.always:
            # A Job cannot restart a pod that exited 0; a StatefulSet can, and names its pods <name>-<i>.
            return [{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta, "spec": {
                "replicas": role.count, "serviceName": service_name(plan), "podManagementPolicy": "Parallel",
                "selector": {"matchLabels": {"trainspec.dev/job": plan.name, "trainspec.dev/role": role.name}},
                "template": pod_template(plan, role, "Always", None)}}]
        return [{"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
                 "spec": job_spec(plan, role, role.count, None)}]
    out = []
    for i in range(role.count):
        meta = common.metadata(plan, f"{name}-{i}", labels)
        if kind.always:
            out.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": {
                "replicas": 1, "strategy": {"type": "Recreate"},
                "selector": {"matchLabels": {"trainspec.dev/job": plan.name, "trainspec.dev/role": role.name,
                                             "trainspec.dev/index": str(i)}},
                "template": pod_template(plan, role, "Always", i)}})
        else:
            out.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
                        "spec": job_spec(plan, role, 1, i)})
    return out


def objects(plan: JobPlan) -> list[dict]:
    out = [topology_config_map(plan), service(plan)]
    for role in plan.roles:
        if role.count:
            out += role_objects(plan, role)
    return out
