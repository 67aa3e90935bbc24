"""The replica plan: the one intermediate form every target and the emulator read.

It says, for each replica, its name, DNS name, port, full environment, command
and args after templating, and the role-wide pod settings; for the job, every
setting a target writes (labels, restart and success semantics, start order,
cleanup, scheduling, framework options), typed.  Nothing here points back to the
spec: the plan is complete.

Environment values that depend on the whole topology (host lists, the TF
cluster, the MPI hostfile) are not copied into every replica: they live once in
the job's topology map and replicas refer to them, which keeps every target's
output linear in the replica count.  `resolved_env` expands those references for
targets (and the emulator) that need literal values.

Host names differ by target (each target's scheme.py; compiler/schemes.py): the replicas' `host` is
the per-replica Service scheme; `RolePlan.renders[scheme]` holds the role's
command, args and env rendered with another scheme's host names, and whether one
pod template can serve every replica.
"""

from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from .errors import SpecError, SpecErrors
from .kube import PERMANENT_EXIT_CODES, expand_references
from .model import (
    ConfigMapRef,
    Elastic,
    FieldRef,
    InitContainer,
    Lifecycle,
    PatchOp,
    PodSettings,
    Probes,
    ResourceFieldRef,
    Resources,
    Scheduling,
    SecretRef,
    TrainJobOnRuntime,
    Volume,
    by_type,
)

if TYPE_CHECKING:
    from .schemes import NamingScheme

__all__ = [
    "Cleanup",
    "EnvVar",
    "FieldRef",
    "ResourceFieldRef",
    "HostList",
    "JobPlan",
    "Rendered",
    "Replica",
    "Restart",
    "RolePlan",
    "RoleRender",
    "StartAfter",
    "SuccessRule",
    "Text",
    "TopologyVar",
    "expand_references",
    "resolved_env",
    "user_var",
]


# Every type here is a NamedTuple, not a frozen dataclass: as immutable, and about ten times
# cheaper to define (dataclasses itself imports inspect and ast), which is CLI start-up time
# (bench/startup.py; tests/project/test_startup_imports.py keeps `dataclasses` off the compile path).
# Equality and hashing are by type and value (`by_type` at the end), as a dataclass's.
# Change one with `_replace(...)`, not `dataclasses.replace`.

class EnvVar(NamedTuple):
    """One environment variable.  Exactly one of the value fields is set.

    value   literal text, exactly what the program sees.
    expand  generated text with Kubernetes `$(NAME)` references to earlier variables.
    topology  a key of the job's topology map.
    config_map / secret  a user's ConfigMap or Secret key.
    field  the downward API (FieldRef / ResourceFieldRef): the pod's own value at runtime.
    """

    name: str
    value: str | None = None
    expand: str | None = None
    topology: str | None = None
    config_map: ConfigMapRef | None = None
    secret: SecretRef | None = None
    field: FieldRef | ResourceFieldRef | None = None


class Replica(NamedTuple):
    role: str
    index: int  # type: ignore[assignment]  # shadows tuple.index, which nothing calls on a replica
    name: str  # <job>-<role>-<index>: pod, Service and container name
    host: str  # the DNS name peers use in the "service" scheme (== name: the per-replica headless Service)
    port: int
    command: tuple[str, ...] | None  # rendered with the "service" scheme's host names
    args: tuple[str, ...] | None
    env: tuple[EnvVar, ...]

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


# --- job and role semantics, as data ----------------------------------------------------------

class SuccessRule(NamedTuple):
    """When the job has succeeded: `role`'s replica `index` exits 0 (scope "one"), every replica of
    `role` does ("all"), or any one of them does ("any", framework: generic's AnyReplica).
    `role` "" (generic's default): every role, so with "all" every replica of the job."""

    role: str
    scope: str = "one"  # "one" | "all" | "any"
    index: int = 0  # type: ignore[assignment]  # shadows tuple.index, which nothing calls on a rule

    @property
    def text(self) -> str:
        """For messages and annotations only: "chief-0 succeeds", "all workers succeed"."""
        if not self.role:
            return "all replicas succeed"
        if self.scope == "any":
            return f"any {self.role} succeeds"
        return f"all {self.role}s succeed" if self.scope == "all" else f"{self.role}-{self.index} succeeds"

    def decided_by(self, role: str, index: int) -> bool:
        """Whether replica (role, index) is one whose success the rule waits for (with "any": one of them)."""
        return (not self.role or role == self.role) and (self.scope != "one" or index == self.index)


class Restart(NamedTuple):
    """What happens when a replica's program exits non-zero.

    policy: Never | OnFailure | Always | ExitCode, as the spec means them (Always
    also restarts after exit 0).  backoff_limit: the job's retry budget as written
    (None: the target's default).  permanent_exit_codes: the exit codes that fail
    the job instead of being retried.
    """

    policy: str
    backoff_limit: int | None = None

    @property
    def permanent_exit_codes(self) -> range:
        if self.policy == "ExitCode":
            return PERMANENT_EXIT_CODES
        if self.policy == "Never":
            return range(1, 256)
        return range(0)  # OnFailure / Always: every failure is retried

    @property
    def in_place(self) -> bool:
        """The container restarts inside its pod (the kubelet), not as a new pod."""
        return self.policy in ("OnFailure", "Always")


class Cleanup(NamedTuple):
    """What is left when the job ends: pods (Kubeflow's cleanPodPolicy as written, None: the
    target's default) and how long the finished job's objects stay."""

    pods: str | None = None  # Running | All | None
    ttl_seconds_after_finished: int | None = None


class StartAfter(NamedTuple):
    """`role` starts only once every replica of each role in `after` is up (e.g. mpirun needs sshd)."""

    role: str
    after: tuple[str, ...]


# --- the spec's text, and its renderings per naming scheme ------------------------------------

class TopologyVar(NamedTuple):
    """A template part that is one of the topology names: index, replicas, port, job.name, job.namespace."""

    name: str


class HostList(NamedTuple):
    """A template part `{{ hosts.<role> | join(sep) }}`: the role's host:port list, joined."""

    role: str
    separator: str = ""


class Text(NamedTuple):
    """A command/args item or env value as written in the spec, with where it is.

    For a template: `parts` is the template as literal text, TopologyVar and
    HostList parts when it is only that (None otherwise: filters, arithmetic...),
    and `names` the top-level names it reads (None when it does not parse).
    """

    source: str
    path: tuple
    templated: bool = False
    parts: tuple[str | TopologyVar | HostList, ...] | None = None
    names: frozenset[str] | None = None


class RoleSources(NamedTuple):
    """A role's command, args and env as written (before templating): the job's env, then the role's over it."""

    command: tuple[Text, ...] | None
    args: tuple[Text, ...] | None
    env: tuple[tuple[str, Text | SecretRef | ConfigMapRef], ...]

    @property
    def templated(self) -> bool:
        texts = list(self.command or ()) + list(self.args or ()) + [v for _, v in self.env if isinstance(v, Text)]
        return any(t.templated for t in texts)


class Rendered(NamedTuple):
    """What a replica's templates rendered to: command, args and the user's env (in order)."""

    command: tuple[str, ...] | None
    args: tuple[str, ...] | None
    env: tuple[EnvVar, ...]


class RoleRender(NamedTuple):
    """A role's templates rendered with one naming scheme's host names.

    uniform: every replica got the same text; `per_replica` then has one entry.
    Otherwise `per_replica[i]` is replica i's, and `shared` is one rendering for
    a pod template shared by all replicas, in kubelet text: `$(TRAINSPEC_INDEX)`
    where the index goes, `$` escaped (command/args items as is, env values as
    EnvVar.expand).  `shared` is None when some text cannot be rebuilt that way;
    `unshared` is then the spec path of the first such field.
    """

    uniform: bool
    per_replica: tuple[Rendered, ...]
    shared: Rendered | None = None
    unshared: tuple | None = None

    def of(self, index: int) -> Rendered:
        return self.per_replica[0] if self.uniform else self.per_replica[index]


# --- roles and the job ------------------------------------------------------------------------

class RolePlan(NamedTuple):
    name: str
    image: str
    working_dir: str | None
    port: int
    restart: Restart
    resources: Resources
    volumes: tuple[Volume, ...]
    init_containers: tuple[InitContainer, ...]
    lifecycle: Lifecycle | None
    probes: Probes
    replicas: tuple[Replica, ...]
    sources: RoleSources
    restart_path: tuple = ()  # where the restart policy was written (for messages)
    renders: dict[str, RoleRender] = {}  # naming scheme -> rendering
    # v1.1: the job's settings with the role's over them (maps merged per key, lists replaced);
    # priority_class_name: the role's, else scheduling.priorityClassName.
    pod: PodSettings = PodSettings()
    # v1.2: the Volcano task / JobSet replicatedJob name ("": the role's name) and the main container's
    # name ("": the job's container_name); read them through `task` and `container(plan)`.
    task_name: str = ""
    container_name: str = ""

    @property
    def task(self) -> str:
        """The role's name in a target's per-role object (Volcano task, JobSet replicatedJob)."""
        return self.task_name or self.name

    def container(self, plan: "JobPlan") -> str:
        """The main container's name."""
        return self.container_name or plan.container_name

    @property
    def count(self) -> int:  # type: ignore[override]  # shadows tuple.count, which nothing calls on a role
        return len(self.replicas)

    @property
    def restart_policy(self) -> str:
        return self.restart.policy


class JobPlan(NamedTuple):
    """The job.  Its mappings are never changed once made (a NamedTuple's default `{}` is one
    object shared by every plan): the planner fills target_errors & co. before it returns."""

    source: str  # the spec file, for messages and generated-file headers only
    name: str
    namespace: str
    framework: str
    container_name: str
    topology_name: str
    topology: dict[str, str]
    roles: tuple[RolePlan, ...]
    success: SuccessRule
    labels: dict[str, str] = {}  # the user's, on every object
    annotations: dict[str, str] = {}  # the user's, on every object
    image: str | None = None  # the job's default image as written (roles may override it)
    accelerator: str = "nvidia.com/gpu"  # the extended resource resources.gpu counts
    volumes: tuple[Volume, ...] = ()
    scheduling: Scheduling = Scheduling()
    backoff_limit: int | None = None
    active_deadline_seconds: int | None = None
    cleanup: Cleanup = Cleanup()
    start_order: tuple[StartAfter, ...] = ()
    success_policy: str | None = None  # tensorflow, as written (ChiefOrWorker0 | AllWorkers)
    nproc_per_node: str | None = None  # pytorch, as written (None: auto)
    mpi_implementation: str = "OpenMPI"
    slots_per_worker: int | None = None  # mpi, as written
    mpi_slots: int | None = None  # mpi: the slots in effect (slotsPerWorker, else the worker's gpu, else 1)
    target_errors: dict[str, tuple[SpecError, ...]] = {}  # what a target cannot express
    target_warnings: dict[str, tuple[SpecError, ...]] = {}  # valid, but worth knowing
    # target -> why it cannot run this job at all (e.g. trainjob for TensorFlow): `build` over all
    # targets leaves it out for the job instead of failing (its problems are in target_errors too)
    unsupported: dict[str, str] = {}
    targets: tuple[str, ...] | None = None  # the targets named when planning (their schemes and checks); None: all
    image_pull_secrets: tuple[str, ...] = ()
    pod: PodSettings = PodSettings()  # the job's pod settings as written (roles: RolePlan.pod)
    elastic: Elastic | None = None  # pytorch.elastic as written
    mpi_ssh_path: str = "/root/.ssh"  # mpi.sshAuthMountPath
    patches: dict[str, tuple[PatchOp, ...]] = {}  # target -> RFC 6902 ops, positioned
    kube_version: tuple[int, int] = (1, 30)  # the API server whose rules apply (compiler/kube_rules.py)
    trainjob: TrainJobOnRuntime | None = None  # v1.3: the Trainer runtime the job runs on, as written
    # v1.3: that runtime's definition (a TrainingRuntime/ClusterTrainingRuntime as data), when given with
    # --runtime: targets that expand it (jobset) write what the Trainer controller would create
    runtime: dict | None = None
    # the spec's positions (an ErrorSink with none of its errors): where a render's finding on a written
    # object is reported (targets/written.py); None for a plan made without a file
    locator: object = None
    # v1.3 metadata.generateName as written: the objects named `name` carry it too (docs/spec.md, generateName)
    generate_name: str | None = None
    # what the user should know that is no problem, printed once as `trainspec: note:` (a runtime's definition
    # taken from the ones Kubeflow Trainer ships: compiler/runtimes.py shipped_note)
    notes: tuple[SpecError, ...] = ()

    def role(self, name: str) -> RolePlan | None:
        return next((r for r in self.roles if r.name == name), None)

    @property
    def total_replicas(self) -> int:
        return sum(role.count for role in self.roles)

    @property
    def success_role(self) -> str:
        return self.success.role

    @property
    def success_rule(self) -> str:
        return self.success.text

    def replicas(self) -> Iterator[Replica]:
        for role in self.roles:
            yield from role.replicas

    def hosts(self, scheme: "NamingScheme") -> dict[str, list[str]]:
        """role -> ["host:port", ...] in a naming scheme (a target's, from its scheme.py)."""
        port = scheme.port
        return {role.name: [f"{scheme.address_host(self.name, role.name, role.task, i)}:{port or role.port}"
                            for i in range(role.count)] for role in self.roles}

    def check(self, target: str) -> None:
        """Raise SpecErrors (with positions) when `target` cannot express this job."""
        if self.targets is not None and target not in self.targets:
            raise ValueError(f"this plan was made for {', '.join(self.targets) or 'no target'}, not {target}: "
                             f"load_plans(..., targets=) must name it")
        errors = self.target_errors.get(target)
        if errors:
            raise SpecErrors(list(errors))


by_type(EnvVar, Replica, SuccessRule, RolePlan, JobPlan)


def user_var(name: str, value) -> EnvVar:
    """An env entry from the spec: a string, or a user's Secret / ConfigMap reference."""
    if isinstance(value, SecretRef):
        return EnvVar(name, secret=value)
    if isinstance(value, ConfigMapRef):
        return EnvVar(name, config_map=value)
    if isinstance(value, (FieldRef, ResourceFieldRef)):
        return EnvVar(name, field=value)
    return EnvVar(name, value)


def resolved_env(plan: JobPlan, replica: Replica) -> list[tuple[str, object]]:
    """The replica's environment with topology references expanded.

    Literal values come back as `str`; a user's Secret or ConfigMap reference, or a
    downward-API reference (`FieldRef` / `ResourceFieldRef`, known only in the running pod),
    comes back as the reference itself (its value is not ours); a value that references it
    keeps its `$(NAME)`.
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
            ref = var.config_map or var.secret or var.field
            values.pop(var.name, None)
            out.append((var.name, ref))
            continue
        values[var.name] = text
        out.append((var.name, text))
    return out
