"""What the jobset target cannot express: Job pods that restart Always, pod names past a DNS label,
frameworks whose controller variables it does not write, per-replica text one template cannot hold."""

from trainspec.compiler.limits import LimitProblem
from trainspec.compiler.plan import JobPlan
from trainspec.compiler.plan_limits import kubernetes_limits, output_size
from trainspec.compiler.target_rules import Problem

from ..shared_checks import env_path, job_pods_always, shared_template_problems
from .scheme import jobset_shape, scheme_for

MAX_DNS_LABEL = 63
POD_SUFFIX = len("-abcde")  # the random suffix the Job controller adds to a pod's name

# Frameworks the jobset target writes the operator's variables for (the others are refused).
JOBSET_FRAMEWORKS = ("tensorflow", "pytorch", "mxnet", "mpi", "xgboost", "jax", "paddle", "generic")


def check(plan: JobPlan) -> list[Problem]:
    if plan.trainjob is not None and plan.runtime is not None:  # v1.3 with --runtime: the TrainJob, expanded
        from ..trainjob.on_runtime import expanded_checks

        return expanded_checks(plan, "jobset")
    if plan.framework not in JOBSET_FRAMEWORKS:
        return [Problem(("spec", "framework"),
                        f"target jobset: trainspec does not yet write the {plan.framework} controller's variables "
                        "for JobSet host names", "one of " + ", ".join(JOBSET_FRAMEWORKS),
                        "use the kubeflow, volcano, k8s, helm or compose target", True)]
    out: list[Problem] = []
    for role in plan.roles:
        out += job_pods_always(role, "jobset", f"the {role.name} pods are Job pods, which",
                               "use OnFailure (restarts after a failure), or the k8s target (a one-pod Deployment)",
                               unsupported=True)
    for role in plan.roles:
        if not role.count:
            continue
        # JobSet's webhook: the longest pod name `<js>-<rj>-<j>-<i>-abcde` must be a DNS label
        jobs, pods = jobset_shape(plan.framework, role.name, role.count)
        longest = f"{plan.name}-{role.task}-{jobs - 1}-{pods - 1}"
        if len(longest) + POD_SUFFIX > MAX_DNS_LABEL:
            out.append(Problem(("metadata", "name"),
                               f"target jobset: pod names such as {longest}-abcde are longer than 63 characters",
                               f"a job name of at most {MAX_DNS_LABEL - POD_SUFFIX - len(longest) + len(plan.name)} "
                               "characters", "shorten metadata.name"))
            break
    return out + _paddle_node_name(plan) + shared_template_problems(
        plan, "jobset", scheme_for(plan.framework),
        "a JobSet replicatedJob has one pod template for all of its replicas")


def _paddle_node_name(plan: JobPlan) -> list[Problem]:
    """Paddle under jobset: a rendezvous role of several replicas names each pod by its JobSet host in POD_IP
    (render.py paddle_env); a user's POD_IP would replace it and replica 0 would not serve the rendezvous."""
    if plan.framework != "paddle":
        return []
    master = plan.role("master")
    role = master if master is not None and master.count else plan.role("worker")
    if role is None or role.count < 2 or "POD_IP" not in {name for name, _ in role.sources.env}:
        return []
    return [Problem(env_path(role, "POD_IP"), f"target jobset: POD_IP is paddle.distributed.launch's node address, "
                    f"which the jobset target sets to each {role.name} replica's JobSet host name so that "
                    f"{role.name} 0 finds itself in PADDLE_MASTER (one pod template serves all {role.count})",
                    "no POD_IP in the rendezvous role's env",
                    "leave POD_IP out, or use the kubeflow or volcano target (there PADDLE_MASTER carries the pod IP)")]


def limits(plan: JobPlan) -> list[LimitProblem]:
    """The API server's limits, and the file's size (one replicatedJob per role)."""
    return kubernetes_limits(plan) + output_size(plan, "jobset", per_replica=False)
