"""The validated spec v1, as typed data.  Field names follow the public spec.

The types are NamedTuples, not frozen dataclasses: immutable all the same, and about ten times
cheaper to define, which is CLI start-up time (bench/startup.py).  Equality and hashing are by
type and value, as a dataclass's (`by_type` below): a SecretRef never equals a ConfigMapRef.
"""

from typing import NamedTuple

from .kinds.trainjob import CLUSTER_TRAINING_RUNTIME

FRAMEWORKS = ("tensorflow", "pytorch", "mxnet", "mpi", "xgboost", "paddle", "jax", "generic")
# Spec v1.2: roles named freely, no framework variables (ROLE_ORDER has none: roles keep the spec's order).
GENERIC = "generic"
GENERIC_CONTAINER = "main"  # a generic job's main container (no operator expects a name)

# Roles in the order every target lists them: servers before their clients.
ROLE_ORDER: dict[str, tuple[str, ...]] = {
    "tensorflow": ("chief", "ps", "worker", "evaluator"),
    "pytorch": ("master", "worker"),
    "mxnet": ("scheduler", "server", "worker"),
    "mpi": ("launcher", "worker"),
    "xgboost": ("master", "worker"),
    "paddle": ("master", "worker"),
    "jax": ("worker",),
    "generic": (),  # any DNS-1123 label, in the order written
}

# The Kubeflow v1 defaults (CONVENTIONS-V2.md §4 for xgboost, paddle, jax).
DEFAULT_PORT = {"tensorflow": 2222, "pytorch": 23456, "mxnet": 9091, "mpi": 22, "xgboost": 9999, "paddle": 36543,
                "jax": 6666, "generic": 8080}

RESTART_POLICIES = ("Never", "OnFailure", "Always", "ExitCode")
IMAGE_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
RDZV_BACKENDS = ("c10d",)
CLEAN_POD_POLICIES = ("Running", "All", "None")
MPI_IMPLEMENTATIONS = ("OpenMPI", "Intel", "MPICH")
TF_SUCCESS_POLICIES = ("ChiefOrWorker0", "AllWorkers")
GENERIC_SUCCESS_POLICIES = ("AllReplicas", "AnyReplica")  # spec.success.policy (framework: generic)
NPROC_WORDS = ("auto", "cpu", "gpu")  # pytorch nprocPerNode besides an integer
MAX_REPLICAS = 100_000
# (min, max) replicas per role; None = unbounded.
ROLE_LIMITS: dict[str, dict[str, tuple[int, int | None]]] = {
    "tensorflow": {"chief": (0, 1), "ps": (0, None), "worker": (0, None), "evaluator": (0, 1)},
    "pytorch": {"master": (1, 1), "worker": (0, None)},
    "mxnet": {"scheduler": (1, 1), "server": (1, None), "worker": (1, None)},
    "mpi": {"launcher": (1, 1), "worker": (1, None)},
    "xgboost": {"master": (1, 1), "worker": (0, None)},
    "paddle": {"master": (0, None), "worker": (1, None)},  # no master: collective mode; masters: PS mode
    "jax": {"worker": (1, None)},
    "generic": {},  # any role, 0 or more replicas (at least one replica in the job)
}


class SecretRef(NamedTuple):
    name: str
    key: str


class ConfigMapRef(NamedTuple):
    name: str
    key: str


class FieldRef(NamedTuple):
    """Downward API: a field of the pod (metadata.name, status.podIP, ...)."""

    field_path: str


class ResourceFieldRef(NamedTuple):
    """Downward API: a container's request or limit (limits.cpu, requests.memory, ...)."""

    resource: str
    container_name: str | None = None
    divisor: str | None = None


# An env value in the spec: a (template) string, or a reference.
EnvSource = "str | SecretRef | ConfigMapRef | FieldRef | ResourceFieldRef"


class Resources(NamedTuple):
    cpu: str | None = None
    memory: str | None = None
    gpu: int = 0
    shm: str | None = None  # size of /dev/shm (a Memory emptyDir); DataLoader needs more than Docker's 64M
    requests: tuple[tuple[str, str], ...] = ()  # v1.1: any resource name -> quantity, besides the shorthand
    limits: tuple[tuple[str, str], ...] = ()


class Volume(NamedTuple):
    name: str
    mount_path: str
    read_only: bool
    kind: str  # persistentVolumeClaim | hostPath | emptyDir | configMap | secret
    source: str = ""  # claim, path, configMap or secret name; "" for emptyDir
    medium: str = ""  # emptyDir: "" or "Memory"
    size_limit: str | None = None


class Handler(NamedTuple):
    """A probe or hook action: exactly one of exec, http_get, tcp_socket."""

    exec: tuple[str, ...] | None = None
    http_get: dict | None = None  # {path, port, scheme?, host?}
    tcp_socket: dict | None = None  # {port, host?}


class Probe(NamedTuple):
    handler: Handler
    initial_delay_seconds: int | None = None
    period_seconds: int | None = None
    timeout_seconds: int | None = None
    success_threshold: int | None = None
    failure_threshold: int | None = None


class Probes(NamedTuple):
    liveness: Probe | None = None
    readiness: Probe | None = None
    startup: Probe | None = None


class Lifecycle(NamedTuple):
    post_start: Handler | None = None
    pre_stop: Handler | None = None


class InitContainer(NamedTuple):
    name: str
    image: str | None
    command: tuple[str, ...] | None
    args: tuple[str, ...] | None
    working_dir: str | None
    env: tuple[tuple[str, object], ...]
    resources: Resources
    restart_policy: str | None = None  # "Always": a native sidecar (Kubernetes >= 1.29)


class Scheduling(NamedTuple):
    gang: bool = False
    min_available: int | None = None
    queue: str | None = None
    priority_class_name: str | None = None
    scheduler_name: str | None = None


class PodSettings(NamedTuple):
    """Spec v1.1 pod and container settings; None: not written.  Kubernetes-shaped values are
    plain data as written (validated by compiler/kube_shapes.py)."""

    image_pull_policy: str | None = None
    service_account_name: str | None = None
    node_selector: dict | None = None
    tolerations: tuple | None = None
    affinity: dict | None = None
    security_context: dict | None = None
    pod_security_context: dict | None = None
    pod_labels: dict | None = None
    pod_annotations: dict | None = None
    priority_class_name: str | None = None  # role only


class Elastic(NamedTuple):
    """pytorch.elastic: torchrun's elastic rendezvous (Kubeflow PyTorchJob elasticPolicy)."""

    min_replicas: int | None = None
    max_replicas: int | None = None
    rdzv_backend: str = "c10d"
    rdzv_port: int | None = None
    max_restarts: int | None = None


class PatchOp(NamedTuple):
    """One RFC 6902 operation of spec.patches.<target>, with where it was written."""

    op: dict
    path: tuple
    line: int
    column: int


class GenericSuccess(NamedTuple):
    """spec.success (framework: generic): `role`'s replicas decide, all of them or any one."""

    role: str
    policy: str = "AllReplicas"  # AllReplicas | AnyReplica


class TrainJobOnRuntime(NamedTuple):
    """spec.trainjob (v1.3): the job runs on a Kubeflow Trainer runtime the cluster already has.

    `runtime_ref` and `fields` are written into the TrainJob as the spec has them (`fields`: the
    TrainJob spec keys trainspec does not decide itself, in the CRD's order: initializer,
    runtimePatches, suspend, managedBy and Trainer v2.0/v2.1's labels, annotations,
    podTemplateOverrides), so an imported TrainJob compiles back to itself.
    """

    runtime_ref: dict  # {name, kind?, apiGroup?}, as written
    fields: dict  # TrainJob spec key -> value, as written
    num_proc_per_node: int | None = None
    nodes_from_runtime: bool = False  # trainer.numNodes left out: the runtime's mlPolicy.numNodes decides

    @property
    def name(self) -> str:
        return str(self.runtime_ref["name"])

    @property
    def kind(self) -> str:
        return str(self.runtime_ref.get("kind") or CLUSTER_TRAINING_RUNTIME.kind)


class RoleSpec(NamedTuple):
    name: str
    replicas: int
    image: str | None
    command: tuple[str, ...] | None
    args: tuple[str, ...] | None
    working_dir: str | None
    env: tuple[tuple[str, object], ...]
    restart_policy: str | None
    resources: Resources
    init_containers: tuple[InitContainer, ...]
    lifecycle: Lifecycle | None
    probes: Probes
    port: int | None = None
    volumes: tuple[Volume, ...] = ()  # v1.1: added to the job's
    pod: PodSettings = PodSettings()
    task_name: str | None = None  # v1.2: the Volcano task / JobSet replicatedJob name (None: the role's)
    container_name: str | None = None  # v1.2: the main container's name (None: the job's, else the framework's)


class JobSpec(NamedTuple):
    source: str
    name: str
    namespace: str
    labels: tuple[tuple[str, str], ...]
    annotations: tuple[tuple[str, str], ...]
    framework: str
    image: str | None
    command: tuple[str, ...] | None
    args: tuple[str, ...] | None
    working_dir: str | None
    env: tuple[tuple[str, object], ...]
    volumes: tuple[Volume, ...]
    accelerator: str
    restart_policy: str | None
    backoff_limit: int | None
    active_deadline_seconds: int | None
    ttl_seconds_after_finished: int | None
    clean_pod_policy: str | None
    scheduling: Scheduling
    port: int | None
    success_policy: str | None  # tensorflow
    nproc_per_node: str | None  # pytorch: int as text, or auto|cpu|gpu
    slots_per_worker: int | None  # mpi
    mpi_implementation: str  # mpi
    roles: tuple[RoleSpec, ...] = ()
    pod: PodSettings = PodSettings()
    image_pull_secrets: tuple[str, ...] = ()
    elastic: Elastic | None = None  # pytorch
    ssh_auth_mount_path: str = "/root/.ssh"  # mpi
    patches: dict[str, tuple[PatchOp, ...]] = {}  # noqa: RUF012 (never mutated)
    container_name: str | None = None  # v1.2: every role's main container name (None: the framework's)
    success: GenericSuccess | None = None  # v1.2, generic only (None: every replica of every role)
    trainjob: TrainJobOnRuntime | None = None  # v1.3: runs on a Trainer runtime the cluster has
    # v1.3 metadata.generateName as written (then `name` is the prefix without its trailing '-', or the name
    # `apply` generated from it: compiler.load_plans's name_for)
    generate_name: str | None = None

    def role(self, name: str) -> RoleSpec | None:
        return next((r for r in self.roles if r.name == name), None)


def _eq(self, other) -> bool:
    return type(self) is type(other) and tuple.__eq__(self, other)


def _ne(self, other) -> bool:
    return not _eq(self, other)


def _hash(self) -> int:
    return hash((type(self).__name__, tuple(self)))


def by_type(*types: type) -> None:
    """Compare and hash as a dataclass does: same type, same values (a plain tuple compares values only)."""
    for cls in types:
        cls.__eq__, cls.__ne__, cls.__hash__ = _eq, _ne, _hash  # type: ignore[assignment,method-assign]


by_type(SecretRef, ConfigMapRef, FieldRef, ResourceFieldRef, Resources, Volume, Handler, Probe, Probes, Lifecycle,
         InitContainer, Scheduling, PodSettings, Elastic, PatchOp, GenericSuccess, RoleSpec, JobSpec)
