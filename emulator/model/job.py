"""The run model: what the emulator needs to know about one job run, as plain dataclasses.

Every reader fills it (from_k8s.py for a compiled k8s.yaml, from_compose.py for
a compose.yaml); the run (run.py) and the replica runner (podrunner.py) only read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from ...compiler.plan import StartAfter, SuccessRule
from .ports import Port
from .security import Security


@dataclass
class Probe:
    kind: str                      # exec | tcp | http
    command: list[str] | None = None
    port: int | str | None = None
    host: str | None = None
    path: str = "/"
    scheme: str = "HTTP"
    headers: list[tuple[str, str]] = field(default_factory=list)
    initial_delay: float = 0.0
    period: float = 10.0
    timeout: float = 1.0
    success_threshold: int = 1
    failure_threshold: int = 3


@dataclass
class FileEntry:
    path: str       # relative to the mount point
    data: bytes
    mode: int


@dataclass
class Mount:
    target: str
    kind: str                       # bind | emptydir | tmpfs | files
    source: str = ""                # host path (bind) or volume name (emptydir)
    read_only: bool = False
    files: list[FileEntry] = field(default_factory=list)
    secret: bool = False            # files come from a Secret: never written to disk
    single_file: bool = False       # subPath of a configMap/secret: target is one file
    size: int | None = None         # emptyDir sizeLimit (memory medium → tmpfs size)
    host_path: bool = False         # a hostPath / compose bind the user chose (checked against a denylist)
    root: str = ""                  # a volume folder under the state folder the source must stay inside
    grant: str = ""                 # host path: the real path the user named (--mount-host, --claim)


@dataclass
class EnvSource:
    """One entry of a container's env, resolved lazily (podIP is known late)."""
    name: str
    value: str = ""
    literal: bool = True            # only literal values get $(VAR) expansion
    field_path: str | None = None   # fieldRef
    secret: bool = False


@dataclass
class Container:
    name: str
    image: str
    command: list[str] | None
    args: list[str] | None
    working_dir: str | None
    env: list[EnvSource]
    ports: list[Port]               # containerPort, protocol, hostPort, hostIP (ports.py)
    cpu: Decimal | None
    memory: int | None
    accelerators: dict[str, int]
    mounts: list[Mount]
    post_start: list[str] | None = None
    pre_stop: list[str] | None = None
    liveness: Probe | None = None
    readiness: Probe | None = None
    startup: Probe | None = None
    expand: bool = True             # Kubernetes $(VAR) expansion (not for compose input)
    pids: int | None = None         # compose pids_limit / deploy.resources.limits.pids (else the run's default)
    security: Security = field(default_factory=Security)   # user, read-only root, ... (security.py)


@dataclass
class FailureRule:
    action: str                     # FailJob | Ignore | Count | FailIndex
    operator: str                   # In | NotIn
    values: list[int]

    def matches(self, code: int) -> bool:
        return (code in self.values) == (self.operator == "In")


@dataclass
class Replica:
    name: str                       # workload name == its DNS short name
    role: str
    index: int
    workload: str                   # Job | Deployment
    restart_policy: str             # Never | OnFailure | Always (pod level)
    backoff_limit: int
    active_deadline: float | None
    failure_rules: list[FailureRule]
    hostname: str
    aliases: list[str]
    labels: dict[str, str]
    init_containers: list[Container]
    main: Container
    grace: float

    @property
    def display(self) -> str:
        return f"{self.role}-{self.index}"

    # The spec's restartPolicy as the user wrote it, when the input says so (the plan, or the
    # run policy a target wrote); "" for a hand-written manifest, where `policy` infers it.
    spec_policy: str = ""
    # The Job this pod belongs to, whose controller counts backoffLimit over all its pods (jobcount.py);
    # "": a Job of its own (compiled k8s.yaml, one Job per replica) or none (Deployment, operator pods).
    job_owner: str = ""
    # An Indexed Job's backoffLimitPerIndex and maxFailedIndexes (restartPolicy Never): each index counted.
    backoff_per_index: int | None = None
    max_failed_indexes: int | None = None

    @property
    def owner(self) -> str:
        """The Job whose failure count this pod's failures go to."""
        return self.job_owner or self.name

    @property
    def policy(self) -> str:
        """The spec's restartPolicy, as the user wrote it."""
        if self.spec_policy:
            return self.spec_policy
        if self.workload == "Deployment":
            return "Always"
        if self.restart_policy == "Never" and self.failure_rules:
            return "ExitCode"
        return self.restart_policy


@dataclass
class ControllerSuccess:
    """A controller's success rule by replica name (controllers/): the job succeeds once `need`
    of `groups` have all their replicas succeeded; `name` is said in the summary."""
    groups: list[list[str]]
    need: int
    name: str
    tolerated: list[str] = field(default_factory=list)   # replicas whose failure alone does not fail the job
    min_available: int | None = None   # once every replica finished: succeeded >= this, else failed (Volcano)


# What a whole-job restart rule does (restarts.py carries it out).
FAIL, RESTART, RESTART_UNCOUNTED, NONE = "fail", "restart", "restart-uncounted", "none"
# ... and what a restart covers: every replica, the failed one's group (replicatedJob / task), or that pod.
JOB, GROUP, POD = "job", "group", "pod"


@dataclass
class RestartRule:
    """One rule of a controller's whole-job restart policy, tried in order; the first that
    matches a replica failed for good decides (JobSet failurePolicy.rules[], Volcano policies)."""
    action: str                         # FAIL | RESTART | RESTART_UNCOUNTED | NONE (the pod rules decide)
    name: str = ""                      # said in the notes ("rule restartOnOOM", "the task's policy PodFailed") ...
    said: str = ""                      # ... the controller's word for the action (FailJobSet, RestartJob)
    reasons: tuple[str, ...] = ()       # the Job failure reason (BackoffLimitExceeded, PodFailurePolicy, ...); () any
    messages: tuple[str, ...] = ()      # regexes on the Job failure message; () any
    groups: tuple[str, ...] = ()        # replicatedJobs / tasks the rule applies to; () every one
    exit_codes: tuple[int, ...] = ()    # the failed container's exit code (Volcano exitCode); () any
    scope: str = JOB                    # what a restart covers: JOB | GROUP | POD


@dataclass
class JobRestart:
    """A controller's whole-job restart: when a replica has failed for good, every replica is
    stopped, removed and created afresh (restarts.py), up to `max_restarts` counted restarts."""
    controller: str                     # whose rule it is, for the notes: "JobSet failurePolicy", "Volcano"
    max_restarts: int
    rules: list[RestartRule]
    default: str                        # the action when no rule matches
    group_of: dict[str, str]            # replica name -> its replicatedJob / task
    limit: str = ""                     # the limit as the controller says it, for the notes ...
    exhausted: str = "ReachedMaxRestarts"   # ... and the controller's reason
    attempt_label: str = ""             # pod label set to the attempt number (jobset.sigs.k8s.io/restart-attempt)
    owner_of: dict[str, str] = field(default_factory=dict)  # replica name -> its child Job, for the notes


@dataclass(frozen=True)
class Gate:
    """What a controller (or Compose) waits for before it creates or starts a replica: `need` of
    `pods` (every one when None) pass `test`; with `any_of`, it opens once any of those gates does.

    tests (startorder.py): started (the main container started), ready (Running and Ready),
    ready_or_done (ready, or succeeded: a JobSet Job's ready count), complete (succeeded),
    healthy (Compose's service_healthy: never opens once the dependency exited or is unhealthy).
    """
    pods: tuple[str, ...]
    test: str
    why: str                        # what orders it, said while waiting ("InOrder", "dependsOn Complete")
    need: int | None = None
    any_of: tuple[Gate, ...] = ()
    creates: bool = True            # the controller creates the pod only then (its Job's deadline starts then)


@dataclass
class JobModel:
    name: str
    namespace: str
    framework: str | None
    success: SuccessRule | None     # None: every replica must complete (no operator rule known)
    clean_pod_policy: str
    backoff_limit: int | None
    active_deadline: float | None
    replicas: list[Replica]
    configmaps: dict[str, dict[str, bytes]]
    secrets: dict[str, dict[str, bytes]]
    secret_missing: dict[str, str] = field(default_factory=dict)  # name -> where used
    configmap_missing: dict[str, str] = field(default_factory=dict)
    source: str = ""
    # An operator's own rule by replica name (controllers/); when set it decides instead of `success`.
    controller_success: ControllerSuccess | None = None
    # Start order: what the job asks for (the plan's, as compose/jobset write it) ...
    start_order: tuple[StartAfter, ...] = ()
    # ... and what this input's target enforces: replica name -> the replicas it starts after, and
    # whether to wait for them to be ready (compose's service_healthy) rather than started.
    start_after: dict[str, tuple[str, ...]] = field(default_factory=dict)
    start_after_ready: frozenset[str] = frozenset()
    # A controller's start gates by replica name (controllers/: JobSet InOrder and dependsOn,
    # MPIJob launcherCreationPolicy, Volcano task dependsOn); waited for as long as the cluster would.
    gates: dict[str, tuple[Gate, ...]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # said once when the run starts (e.g. a queued suspend)
    # Whether a controller stops the other replicas once the job has succeeded (an operator, or
    # `docker compose up --exit-code-from`); plain Kubernetes Jobs have none (run.py reports them).
    controller: bool = True
    # Secret/ConfigMap volumes as the kubelet writes them (atomic-writer layout, 0777/1777 mount
    # points): every Kubernetes input; compose binds host folders as they are.
    kubelet_files: bool = True
    # A controller's whole-job restart (JobSet failurePolicy, Volcano RestartJob); None: a replica
    # failed for good fails the job.
    restart: JobRestart | None = None

    def images(self) -> list[str]:
        seen: list[str] = []
        for r in self.replicas:
            for c in [*r.init_containers, r.main]:
                if c.image not in seen:
                    seen.append(c.image)
        return seen


# --------------------------------------------------------------------------
# listing order


# Roles that others connect to are listed (and created) first. This is only the order of the
# status table and of container creation: when a replica may *start* is the target's start
# order (JobModel.start_after, startorder.py).
SERVER_ROLES = ("scheduler", "ps", "server", "master", "chief")


def listing_order(replicas: list[Replica]) -> list[Replica]:
    def rank(r: Replica) -> tuple:
        role = r.role.lower()
        if role in SERVER_ROLES:
            return (0, SERVER_ROLES.index(role), r.index)
        if role == "launcher":
            return (2, 0, r.index)
        return (1, 0, r.index)

    return sorted(replicas, key=rank)


def role_start_after(order: tuple[StartAfter, ...], replicas: list[Replica]) -> dict[str, tuple[str, ...]]:
    """A role-level start order as replica names: each replica of `role` after every replica of `after`."""
    out: dict[str, tuple[str, ...]] = {}
    for rule in order:
        first = tuple(r.name for r in replicas if r.role in rule.after)
        for r in replicas:
            if r.role == rule.role and first:
                out[r.name] = tuple(dict.fromkeys(out.get(r.name, ()) + first))
    return out
