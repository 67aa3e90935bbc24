"""The replica plan: the one intermediate form every target and the emulator read.

It says, for each replica, its name, DNS name, port, full environment, command
and args after templating, and the role-wide pod settings.  Environment values
that depend on the whole topology (host lists, the TF cluster, the MPI hostfile)
are not copied into every replica: they live once in the job's topology map and
replicas refer to them, which keeps every target's output linear in the replica
count.  `resolved_env` expands those references for targets (and the emulator)
that need literal values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .kube import expand_references
from .model import ConfigMapRef, JobSpec, Lifecycle, Probes, Resources, SecretRef, Volume, InitContainer


@dataclass(frozen=True)
class EnvVar:
    """One environment variable.  Exactly one of the value fields is set.

    value   literal text, exactly what the program sees.
    expand  generated text with Kubernetes `$(NAME)` references to earlier variables.
    topology  a key of the job's topology map.
    config_map / secret  a user's ConfigMap or Secret key.
    """

    name: str
    value: str | None = None
    expand: str | None = None
    topology: str | None = None
    config_map: ConfigMapRef | None = None
    secret: SecretRef | None = None


@dataclass(frozen=True)
class Replica:
    role: str
    index: int
    name: str  # <job>-<role>-<index>: pod, Service and container name
    host: str  # the DNS name peers use (== name: the per-replica headless Service)
    port: int
    command: tuple[str, ...] | None
    args: tuple[str, ...] | None
    env: tuple[EnvVar, ...]

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class RolePlan:
    name: str
    image: str
    working_dir: str | None
    port: int
    restart_policy: str  # Never | OnFailure | Always | ExitCode
    resources: Resources
    volumes: tuple[Volume, ...]
    init_containers: tuple[InitContainer, ...]
    lifecycle: Lifecycle | None
    probes: Probes
    replicas: tuple[Replica, ...]

    @property
    def count(self) -> int:
        return len(self.replicas)


@dataclass(frozen=True)
class JobPlan:
    spec: JobSpec
    name: str
    namespace: str
    framework: str
    container_name: str
    topology_name: str
    topology: dict[str, str]
    roles: tuple[RolePlan, ...]
    success_role: str  # the role whose replica 0 decides success (see success_rule)
    success_rule: str  # human text: "chief", "worker-0", "all workers", "master", ...
    mpi_slots: int | None = None
    annotations: dict[str, str] = field(default_factory=dict)

    def role(self, name: str) -> RolePlan | None:
        return next((r for r in self.roles if r.name == name), None)

    @property
    def total_replicas(self) -> int:
        return sum(role.count for role in self.roles)

    def replicas(self):
        for role in self.roles:
            yield from role.replicas


def user_var(name: str, value) -> EnvVar:
    """An env entry from the spec: a string, or a user's Secret / ConfigMap reference."""
    if isinstance(value, SecretRef):
        return EnvVar(name, secret=value)
    if isinstance(value, ConfigMapRef):
        return EnvVar(name, config_map=value)
    return EnvVar(name, value)


def resolved_env(plan: JobPlan, replica: Replica) -> list[tuple[str, object]]:
    """The replica's environment with topology references expanded.

    Literal values come back as `str`; a user's Secret or ConfigMap reference
    comes back as the `SecretRef` / `ConfigMapRef` itself (its value is not ours).
    """
    values: dict[str, str] = {}
    out: list[tuple[str, object]] = []
    for var in replica.env:
        if var.value is not None:
            text = var.value
        elif var.expand is not None:
            text = expand_references(var.expand, values)
        elif var.topology is not None:
            text = plan.topology[var.topology]
        else:
            ref = var.config_map or var.secret
            values.pop(var.name, None)
            out.append((var.name, ref))
            continue
        values[var.name] = text
        out.append((var.name, text))
    return out
