"""The validated spec v1, as typed data.  Field names follow the public spec."""

from __future__ import annotations

from dataclasses import dataclass, field

FRAMEWORKS = ("tensorflow", "pytorch", "mxnet", "mpi", "xgboost", "paddle", "jax")

# Roles in the order every target lists them: servers before their clients.
ROLE_ORDER: dict[str, tuple[str, ...]] = {
    "tensorflow": ("chief", "ps", "worker", "evaluator"),
    "pytorch": ("master", "worker"),
    "mxnet": ("scheduler", "server", "worker"),
    "mpi": ("launcher", "worker"),
    "xgboost": ("master", "worker"),
    "paddle": ("master", "worker"),
    "jax": ("worker",),
}

# The Kubeflow v1 defaults (CONVENTIONS-V2.md §4 for xgboost, paddle, jax).
DEFAULT_PORT = {"tensorflow": 2222, "pytorch": 23456, "mxnet": 9091, "mpi": 22, "xgboost": 9999, "paddle": 36543,
                "jax": 6666}

RESTART_POLICIES = ("Never", "OnFailure", "Always", "ExitCode")
IMAGE_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
RDZV_BACKENDS = ("c10d",)
CLEAN_POD_POLICIES = ("Running", "All", "None")
MPI_IMPLEMENTATIONS = ("OpenMPI", "Intel", "MPICH")
TF_SUCCESS_POLICIES = ("ChiefOrWorker0", "AllWorkers")
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
}


@dataclass(frozen=True)
class SecretRef:
    name: str
    key: str


@dataclass(frozen=True)
class ConfigMapRef:
    name: str
    key: str


@dataclass(frozen=True)
class FieldRef:
    """Downward API: a field of the pod (metadata.name, status.podIP, ...)."""

    field_path: str


@dataclass(frozen=True)
class ResourceFieldRef:
    """Downward API: a container's request or limit (limits.cpu, requests.memory, ...)."""

    resource: str
    container_name: str | None = None
    divisor: str | None = None


# An env value in the spec: a (template) string, or a reference.
EnvSource = "str | SecretRef | ConfigMapRef | FieldRef | ResourceFieldRef"


@dataclass(frozen=True)
class Resources:
    cpu: str | None = None
    memory: str | None = None
    gpu: int = 0
    shm: str | None = None  # size of /dev/shm (a Memory emptyDir); DataLoader needs more than Docker's 64M
    requests: tuple[tuple[str, str], ...] = ()  # v1.1: any resource name -> quantity, besides the shorthand
    limits: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Volume:
    name: str
    mount_path: str
    read_only: bool
    kind: str  # persistentVolumeClaim | hostPath | emptyDir | configMap | secret
    source: str = ""  # claim, path, configMap or secret name; "" for emptyDir
    medium: str = ""  # emptyDir: "" or "Memory"
    size_limit: str | None = None


@dataclass(frozen=True)
class Handler:
    """A probe or hook action: exactly one of exec, http_get, tcp_socket."""

    exec: tuple[str, ...] | None = None
    http_get: dict | None = None  # {path, port, scheme?, host?}
    tcp_socket: dict | None = None  # {port, host?}


@dataclass(frozen=True)
class Probe:
    handler: Handler
    initial_delay_seconds: int | None = None
    period_seconds: int | None = None
    timeout_seconds: int | None = None
    success_threshold: int | None = None
    failure_threshold: int | None = None


@dataclass(frozen=True)
class Probes:
    liveness: Probe | None = None
    readiness: Probe | None = None
    startup: Probe | None = None


@dataclass(frozen=True)
class Lifecycle:
    post_start: Handler | None = None
    pre_stop: Handler | None = None


@dataclass(frozen=True)
class InitContainer:
    name: str
    image: str | None
    command: tuple[str, ...] | None
    args: tuple[str, ...] | None
    working_dir: str | None
    env: tuple[tuple[str, object], ...]
    resources: Resources
    restart_policy: str | None = None  # "Always": a native sidecar (Kubernetes >= 1.29)


@dataclass(frozen=True)
class Scheduling:
    gang: bool = False
    min_available: int | None = None
    queue: str | None = None
    priority_class_name: str | None = None
    scheduler_name: str | None = None


@dataclass(frozen=True)
class PodSettings:
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


@dataclass(frozen=True)
class Elastic:
    """pytorch.elastic: torchrun's elastic rendezvous (Kubeflow PyTorchJob elasticPolicy)."""

    min_replicas: int | None = None
    max_replicas: int | None = None
    rdzv_backend: str = "c10d"
    rdzv_port: int | None = None
    max_restarts: int | None = None


@dataclass(frozen=True)
class PatchOp:
    """One RFC 6902 operation of spec.patches.<target>, with where it was written."""

    op: dict
    path: tuple
    line: int
    column: int


@dataclass(frozen=True)
class RoleSpec:
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
    pod: PodSettings = field(default_factory=PodSettings)


@dataclass(frozen=True)
class JobSpec:
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
    roles: tuple[RoleSpec, ...] = field(default_factory=tuple)
    pod: PodSettings = field(default_factory=PodSettings)
    image_pull_secrets: tuple[str, ...] = ()
    elastic: Elastic | None = None  # pytorch
    ssh_auth_mount_path: str = "/root/.ssh"  # mpi
    patches: dict[str, tuple[PatchOp, ...]] = field(default_factory=dict)

    def role(self, name: str) -> RoleSpec | None:
        return next((r for r in self.roles if r.name == name), None)
