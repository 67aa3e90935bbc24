"""The compose target's limit: the file's size.

Every service carries the topology values literally, so compose.yaml grows with the square of the
replica count; past COMPOSE_MAX_BYTES it is refused before it is rendered (estimated from the plan).
"""

from trainspec.compiler.limits import MAX_OUTPUT_BYTES, LimitProblem
from trainspec.compiler.plan import JobPlan, resolved_env
from trainspec.compiler.plan_limits import largest_role, output_size

COMPOSE_MAX_BYTES = MAX_OUTPUT_BYTES  # every target's bound (compiler/limits.py); docs/targets-helm-compose.md
COMPOSE_SERVICE_BYTES = 1536  # a service without its environment (image, labels, network, healthcheck ...)


def size_estimate(plan: JobPlan) -> int:
    """Bytes of compose.yaml, estimated from one replica per role (within a few percent above 1 MiB)."""
    total = 0
    for role in plan.roles:
        if not role.replicas:
            continue
        last = role.replicas[-1]
        env = sum(len(name) + 4 + (len(value) if isinstance(value, str) else 64)
                  for name, value in resolved_env(plan, last))
        words = sum(len(w) + 4 for w in (last.command or ()) + (last.args or ()))
        total += role.count * (COMPOSE_SERVICE_BYTES + env + words)
    return total


def file_size(plan: JobPlan) -> list[LimitProblem]:
    size = size_estimate(plan)
    if size <= COMPOSE_MAX_BYTES:
        return []
    total = plan.total_replicas
    # The file grows with the square of the replica count when topology values dominate.
    most = max(1, int(total * (COMPOSE_MAX_BYTES / size) ** 0.5))
    role = largest_role(plan)
    return [LimitProblem(
        (("spec", "roles", role.name, "replicas"),),
        f"with {total} replicas compose.yaml would be about {size >> 20} MiB (every service carries the "
        f"topology literally), over the {COMPOSE_MAX_BYTES >> 20} MiB a compose file may have "
        "(docs/targets-helm-compose.md)",
        f"at most about {most} replicas for the compose target",
        "compile this job for k8s, kubeflow, jobset, trainjob or helm; compose is for running small jobs locally")]


def limits(plan: JobPlan) -> list[LimitProblem]:
    # No Kubernetes object: none of the API server's limits. The topology, written literally per service,
    # is file_size's; the pod templates' own text, per service, is every target's output_size.
    return file_size(plan) or output_size(plan, "compose", per_replica=True)
