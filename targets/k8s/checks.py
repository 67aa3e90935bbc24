"""What the k8s target warns about: with no controller, nothing ends the roles that outlive the decider;
ranked workers with no command stay one Job per replica.

The helm target writes the same objects and warns the same (targets/helm/__init__.py).
"""

from trainspec.compiler.limits import MAX_OUTPUT_BYTES, LimitProblem, text_bytes
from trainspec.compiler.plan import JobPlan, Replica, RolePlan
from trainspec.compiler.plan_limits import kubernetes_limits, output_size
from trainspec.compiler.target_rules import Problem

from .scheme import INDEXED, command_known, rank_names, shape


def estimate_args(plan: JobPlan) -> dict:
    """How the k8s file's size is estimated: a pod template per role, or per replica for the roles written
    one object a replica (scheme.shape); a replica's own text is its rendering under the k8s host names,
    the framework's host lists being the topology ConfigMap's (once per job), not copies per replica."""
    def replica_text(role: RolePlan, replica: Replica) -> int:
        r = role.renders[INDEXED.name].of(replica.index)
        return text_bytes((r.command, r.args, r.env), MAX_OUTPUT_BYTES)
    return {"per_replica": lambda role: shape(plan, role).per_replica, "replica_text": replica_text}


def limits(plan: JobPlan) -> list[LimitProblem]:
    """The API server's limits, and the file's size (estimate_args)."""
    return kubernetes_limits(plan) + output_size(plan, "k8s", **estimate_args(plan))


def helm_limits(plan: JobPlan) -> list[LimitProblem]:
    """As k8s: the chart renders the k8s target's objects (an Indexed Job per role, issue 31), and its values
    carry per-replica text only where a replica's templates render apart (RoleRender not shared)."""
    return kubernetes_limits(plan) + output_size(plan, "helm", **estimate_args(plan))


def checks(plan: JobPlan) -> list[Problem]:
    """The pods' host names, and for a v1.3 job on a runtime given with --runtime, what its TrainJob cannot carry."""
    return check(plan) + runtime_checks(plan)


def lingering_roles(plan: JobPlan) -> list[str]:
    """Roles of this job that nothing stops on a plain cluster when the decider succeeds."""
    from trainspec.compiler.frameworks import LINGERING_ROLES

    if plan.framework == "generic":
        # generic: whoever is still running when spec.success's role decides (unset: nobody, all must finish)
        rule = plan.success
        return [role.name for role in plan.roles if rule.role and role.count and
                (role.name != rule.role or (rule.scope == "any" and role.count > 1))]
    return [role.name for role in plan.roles if role.count and role.name in LINGERING_ROLES.get(plan.framework, ())]


def plain_kubernetes_caveat(plan: JobPlan) -> list[Problem]:
    """k8s / helm: no controller ends the job, so servers outlive it (a warning, not an error)."""
    roles = lingering_roles(plan)
    if not roles or plan.active_deadline_seconds is not None:
        return []
    if plan.framework == "generic":
        return [Problem(("spec", "success"), f"on a plain cluster nothing stops the {' and '.join(roles)} replicas "
                        f"still running when {plan.success.text}: they would keep running, and holding their "
                        "resources", "spec.activeDeadlineSeconds, or a target whose controller ends the job",
                        "compile for jobset or volcano, set activeDeadlineSeconds, or let them exit on their own")]
    return [Problem(("spec", "roles", roles[0]),
                    f"on a plain cluster nothing stops the {' and '.join(roles)} replicas when "
                    f"{plan.success.text}: they keep running, and holding their resources, forever",
                    "spec.activeDeadlineSeconds, or a target whose controller ends the job",
                    "compile for jobset, kubeflow or volcano, or set activeDeadlineSeconds")]


def ranked_one_job_per_replica(plan: JobPlan) -> list[Problem]:
    """k8s / helm: PyTorch / XGBoost workers with no command stay a Job per replica (scheme.py): say so, and how not."""
    out = []
    for role in plan.roles:
        if rank_names(plan, role) and not command_known(role):
            out.append(Problem(
                ("spec", "roles", role.name),
                f"the {role.name} role's {role.count} replicas are {role.count} one-pod Jobs, not one Indexed Job: "
                f"their RANK is the index + 1, which a shell prelude sets before the role's command, and the spec "
                "sets no command (the image's entry point) for the prelude to run",
                "spec.command or spec.roles." + role.name + ".command (the entry point, written out)",
                "set command to the image's entry point to get one Indexed Job for the role "
                "(docs/targets-jobset-trainjob.md#ranked-workers)"))
    return out


def warnings(plan: JobPlan) -> list[Problem]:
    """What the k8s target and the chart warn about (valid output the user should know of)."""
    return plain_kubernetes_caveat(plan) + ranked_one_job_per_replica(plan)


MAX_DNS_LABEL = 63


def check(plan: JobPlan) -> list[Problem]:
    """A pod's hostname `<job>-<role>-<i>` is a DNS label: the Job controller cannot create a longer one."""
    for role in plan.roles:
        if not role.count:
            continue
        longest = f"{plan.name}-{role.task}-{role.count - 1}"
        if len(longest) > MAX_DNS_LABEL:
            return [Problem(("metadata", "name"), f"target k8s: pod hostnames such as {longest} are longer than "
                            f"{MAX_DNS_LABEL} characters", f"a job name of at most "
                            f"{MAX_DNS_LABEL - len(longest) + len(plan.name)} characters", "shorten metadata.name")]
    return []


def runtime_checks(plan: JobPlan) -> list[Problem]:
    """A v1.3 job on a Trainer runtime given with --runtime: what its TrainJob cannot carry (on_runtime)."""
    if plan.trainjob is None or plan.runtime is None:
        return []
    from ..trainjob.on_runtime import expanded_checks

    return expanded_checks(plan, "k8s")
