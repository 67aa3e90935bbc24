"""`k8s`: plain Kubernetes objects that run the job with no operator installed.

Per replica: a headless Service (its stable DNS name) and a `batch/v1` Job
(restartPolicy Never / OnFailure / ExitCode; backoff, deadline and TTL honoured)
or, for restartPolicy Always, a one-pod Deployment.  Topology-wide values live
once in the `<job>-topology` ConfigMap and reach each replica through
`configMapKeyRef` and `$(VAR)` expansion, so the output grows linearly.
"""

from __future__ import annotations

from trainspec.compiler.frameworks import HOSTFILE_KEY, MPI_HOSTFILE_PATH
from trainspec.compiler.plan import JobPlan, Replica, RolePlan

from .. import common
from ..yamlout import dump_all
from .checks import lingering_roles

FILE = "k8s.yaml"


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


def ssh_secret_name(plan: JobPlan) -> str:
    return f"{plan.name}-ssh"


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
    return common.topology_config_map(plan, dict(plan.topology), annotations)


def service(plan: JobPlan, role: RolePlan, replica: Replica) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": common.metadata(plan, replica.name, common.job_labels(plan, role.name)),
        "spec": {
            "clusterIP": "None",
            # Peers must resolve each other while they start, before any readiness probe passes.
            "publishNotReadyAddresses": True,
            "selector": common.replica_selector(plan, replica),
            "ports": [{"name": common.PORT_NAMES[plan.framework], "port": replica.port,
                       "targetPort": replica.port, "protocol": "TCP"}],
        },
    }


def mpi_mounts(plan: JobPlan, role: RolePlan) -> tuple[list[dict], list[dict]]:
    """(volumes, mounts) for the ssh keys and, on the launcher, the hostfile."""
    if plan.framework != "mpi":
        return [], []
    volumes = [{"name": "ssh-auth", "secret": {
        "secretName": ssh_secret_name(plan), "defaultMode": 0o600,
        "items": [{"key": "ssh-privatekey", "path": "id_rsa"}, {"key": "ssh-publickey", "path": "id_rsa.pub"},
                  {"key": "ssh-publickey", "path": "authorized_keys"}]}}]
    mounts = [{"name": "ssh-auth", "mountPath": plan.mpi_ssh_path}]
    if role.name == "launcher":
        volumes.append({"name": "mpi-job-config", "configMap": {
            "name": plan.topology_name, "items": [{"key": HOSTFILE_KEY, "path": "hostfile"}]}})
        mounts.append({"name": "mpi-job-config", "mountPath": MPI_HOSTFILE_PATH.rsplit("/", 1)[0]})
    return volumes, mounts


def pod_template(plan: JobPlan, role: RolePlan, replica: Replica, restart_policy: str) -> dict:
    extra_volumes, extra_mounts = mpi_mounts(plan, role)
    env = common.env_list(replica.env, plan.topology_name)
    spec: dict = {"restartPolicy": restart_policy}
    spec.update(common.scheduling_fields(plan, role))
    container = common.main_container(plan, role, replica, env, extra_mounts=extra_mounts)
    spec.update(common.pod_spec_tail(plan, role, container, extra_volumes))
    return {"metadata": common.template_metadata(role, common.replica_labels(plan, replica)), "spec": spec}


def workload(plan: JobPlan, role: RolePlan, replica: Replica) -> dict:
    labels = common.job_labels(plan, role.name)
    labels.update(common.kueue_labels(plan.scheduling.queue))  # Kueue: on each top-level Job / Deployment
    meta = common.metadata(plan, replica.name, labels)
    policy = role.restart_policy
    if policy == "Always":
        # A batch Job cannot restart a pod that exited 0; a one-pod Deployment can.
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta,
            "spec": {
                "replicas": 1,
                "strategy": {"type": "Recreate"},
                "selector": {"matchLabels": common.replica_selector(plan, replica)},
                "template": pod_template(plan, role, replica, "Always"),
            },
        }
    job_spec: dict = {}
    if policy == "Never":
        job_spec["backoffLimit"] = 0
    elif role.restart.backoff_limit is not None:
        job_spec["backoffLimit"] = role.restart.backoff_limit
    if plan.active_deadline_seconds is not None:
        job_spec["activeDeadlineSeconds"] = plan.active_deadline_seconds
    if plan.cleanup.ttl_seconds_after_finished is not None:
        job_spec["ttlSecondsAfterFinished"] = plan.cleanup.ttl_seconds_after_finished
    if policy == "ExitCode":
        job_spec["podFailurePolicy"] = {"rules": [common.exit_code_rule(role.container(plan), role.restart)]}
    pod_policy = "OnFailure" if policy == "OnFailure" else "Never"
    job_spec["template"] = pod_template(plan, role, replica, pod_policy)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": job_spec}


def objects(plan: JobPlan) -> list[dict]:
    out = [topology_config_map(plan)]
    for role in plan.roles:
        for replica in role.replicas:
            out.append(service(plan, role, replica))
            out.append(workload(plan, role, replica))
    return out
