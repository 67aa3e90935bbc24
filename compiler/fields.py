"""The spec's fields as one table: the validator reads it, `trainspec schema` turns it into JSON Schema.

Each mapping of the spec (`spec`, a role, `resources`, a probe...) is a `Mapping`
with one `Field` per key.  The validator takes from here which keys a mapping
allows and requires, the enums and the integer bounds; compiler/schema.py writes
the same table as JSON Schema for editors.  Rules that JSON Schema cannot say
(replica counts per framework, generated-name lengths, label-key prefixes) stay
in the validator; the schema is never stricter than the validator.

Adding a field is one `Field(...)` line in its mapping below (and the code that
reads its value in validate.py).  Types:

- scalars: `string` (non-empty unless `empty=True`; `pattern`, `max_length`, `enum`), `any`,
  `integer` (`minimum`, `maximum`), `boolean`, `quantity` (a Kubernetes quantity: a
  string or a non-negative number), `port` (1-65535 or a port name), `nproc`.
- `strings`: a list of strings; `env`: NAME -> string or a secret/configMap reference;
  `roles`: role name -> role (names per framework from model.ROLE_ORDER).
- `object` of=MAPPING: one nested mapping (`of=""`: any mapping, passed through);
  `list` of=MAPPING, a scalar type or "object" (any mapping): a list of those;
  `map` of=MAPPING, a scalar type or "object": string keys (`keys`: their pattern) to those.

Examples: `Field("imagePullPolicy", "string", "...", enum=("Always", "IfNotPresent", "Never"))`,
`Field("nodeSelector", "map", "...", of="string")`, `Field("requests", "map", "...", of="quantity")`,
`Field("tolerations", "list", "...", of="toleration")` with a `Mapping("toleration", ...)` beside
the others, `Field("affinity", "object", "...")` (passed through as written).
"""

# No `from __future__ import annotations`: NamedTuple would compile each string annotation.
from typing import NamedTuple

from .kinds.trainjob import CLUSTER_TRAINING_RUNTIME, GROUP, TRAINING_RUNTIME
from .kube import CONFIG_KEY, DNS1035_LABEL, DNS1123_LABEL, DNS1123_SUBDOMAIN, LABEL_VALUE, RESOURCE_NAME
from .model import (
    CLEAN_POD_POLICIES,
    FRAMEWORKS,
    GENERIC_SUCCESS_POLICIES,
    IMAGE_PULL_POLICIES,
    MAX_REPLICAS,
    MPI_IMPLEMENTATIONS,
    RDZV_BACKENDS,
    RESTART_POLICIES,
    TF_SUCCESS_POLICIES,
)

API_VERSION = "trainspec/v1.3"
# v1.1, v1.2 and v1.3 are additive: their fields are accepted under every version
API_VERSIONS = ("trainspec/v1", "trainspec/v1.1", "trainspec/v1.2", "trainspec/v1.3")
KIND = "TrainingJob"
INT32_MAX = 2**31 - 1
ABSOLUTE_PATH = "^/"
# metadata.generateName: a DNS-1035 label's start; it may end with '-' (the API server checks the prefix with its
# trailing '-' masked: apimachinery ValidateObjectMeta -> nameFn(generateName, prefix=true))
GENERATE_NAME = "^[a-z][-a-z0-9]*$"
# An extended resource name with its domain prefix (nvidia.com/gpu): RESOURCE_NAME with the prefix required.
ACCELERATOR = RESOURCE_NAME.pattern.replace("/)?", "/)", 1)


# NamedTuples, not dataclasses: the validator imports this table, and a NamedTuple class
# costs a fraction of a dataclass's to create (compile start-up stays as it was).
class Field(NamedTuple):
    name: str
    type: str
    doc: str = ""
    required: bool = False
    enum: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    pattern: str = ""  # strings (and map values); ECMA-262 and Python alike
    max_length: int | None = None
    empty: bool = False  # a string may be ""
    of: str = ""  # object/list/map: a Mapping's name or a scalar type
    keys: str = ""  # map: pattern of the keys


class Mapping(NamedTuple):
    name: str
    doc: str
    fields: tuple[Field, ...]
    exactly_one: tuple[str, ...] = ()  # of these keys, exactly one is set (a probe's action, a volume's source)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.required)

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)

    def enum(self, name: str) -> tuple[str, ...]:
        return self.field(name).enum

    def bounds(self, name: str) -> tuple[int | None, int | None]:
        item = self.field(name)
        return item.minimum, item.maximum


def _container(image: str, templated: bool = True) -> tuple[Field, ...]:
    """The fields a job, a role and an init container share."""
    note = " (`{{ }}` templates)" if templated else ""
    return (
        Field("image", "string", image),
        Field("command", "strings", "command" + note),
        Field("args", "strings", "arguments" + note),
        Field("workingDir", "string", "absolute working directory", pattern=ABSOLUTE_PATH),
        Field("env", "env", "NAME: value, or NAME: {secretKeyRef|configMapKeyRef: {name, key}}"),
    )


_PORT = Field("port", "integer", "the port the replicas listen on (default: the framework's)", minimum=1,
              maximum=65535)
# Spec v1.1's pod and container settings, written on the job (every role) or on a role.
_POD = (
    Field("imagePullPolicy", "string", "Always | IfNotPresent | Never", enum=IMAGE_PULL_POLICIES),
    Field("serviceAccountName", "string", "the pods' ServiceAccount", pattern=DNS1123_SUBDOMAIN.pattern,
          max_length=253),
    Field("nodeSelector", "map", "node labels the pods must match", of="string", keys=RESOURCE_NAME.pattern,
          pattern=LABEL_VALUE.pattern, max_length=63, empty=True),
    Field("tolerations", "list", "taints the pods tolerate", of="toleration"),
    Field("affinity", "object", "a Kubernetes Affinity (passed through)"),
    Field("securityContext", "object", "the main container's Kubernetes SecurityContext (passed through)"),
    Field("podSecurityContext", "object", "the pods' Kubernetes PodSecurityContext (passed through)"),
    Field("podLabels", "map", "labels of the pods only (not of the other objects)", of="string",
          keys=RESOURCE_NAME.pattern, pattern=LABEL_VALUE.pattern, max_length=63, empty=True),
    Field("podAnnotations", "map", "annotations of the pods only", of="string", keys=RESOURCE_NAME.pattern,
          empty=True),
)
# The downward API's resource fields (resourceFieldRef.resource).
DOWNWARD_RESOURCES = ("limits.cpu", "limits.memory", "limits.ephemeral-storage", "requests.cpu", "requests.memory",
                      "requests.ephemeral-storage")
PATCH_TARGETS = ("k8s", "kubeflow", "volcano", "compose", "jobset", "trainjob")
PATCH_OPS = ("add", "remove", "replace", "move", "copy", "test")

_CONTAINER_NAME = ("the main container's name (default: the framework's: tensorflow, pytorch, ..., "
                   "generic: main); a DNS-1123 label")
_RESTART = Field("restartPolicy", "string", "Never | OnFailure | Always | ExitCode (default: the framework's)",
                 enum=RESTART_POLICIES)

MAPPINGS: dict[str, Mapping] = {m.name: m for m in (
    Mapping("TrainingJob", "A trainspec distributed-training job (spec v1.3).", (
        Field("apiVersion", "string", "trainspec/v1.3 (or trainspec/v1.2, trainspec/v1.1, trainspec/v1)",
              required=True,
              enum=API_VERSIONS),
        Field("kind", "string", "always TrainingJob", required=True, enum=(KIND,)),
        Field("metadata", "object", "name, namespace, labels, annotations", required=True, of="metadata"),
        Field("spec", "object", "the job", required=True, of="spec"),
    )),
    Mapping("metadata", "The job's name and the labels and annotations of every generated object.", (
        Field("name", "string", "job name: a DNS-1035 label; generated names are <name>-<role>-<index>",
              pattern=DNS1035_LABEL.pattern, max_length=63),
        Field("generateName", "string", "instead of name (v1.3): a prefix; each `apply` names the job <prefix> plus "
              "5 random characters (as the API server would), `build` names it by the prefix without its "
              "trailing '-'", pattern=GENERATE_NAME, max_length=63),
        Field("namespace", "string", "Kubernetes namespace (default: default)", pattern=DNS1123_LABEL.pattern,
              max_length=63),
        Field("labels", "map", "copied onto every generated object", of="string", keys=RESOURCE_NAME.pattern,
              pattern=LABEL_VALUE.pattern, max_length=63, empty=True),
        Field("annotations", "map", "copied onto every generated object", of="string",
              keys=RESOURCE_NAME.pattern, empty=True),
    ), exactly_one=("name", "generateName")),
    Mapping("spec", "The job: framework, defaults of every role, and the roles.", (
        Field("framework", "string", "chooses the roles, the injected variables and the operator kinds",
              required=True, enum=FRAMEWORKS),
        *_container("every role's image (default)"),
        Field("volumes", "list", "mounted in every role's main and init containers", of="volume"),
        Field("accelerator", "string", "the extended resource resources.gpu maps to (default: nvidia.com/gpu)",
              pattern=ACCELERATOR),
        _RESTART,
        Field("backoffLimit", "integer", "retries before the job is failed", minimum=0, maximum=INT32_MAX),
        Field("activeDeadlineSeconds", "integer", "seconds the job may run", minimum=1, maximum=INT32_MAX),
        Field("ttlSecondsAfterFinished", "integer", "seconds before a finished job is deleted", minimum=0,
              maximum=INT32_MAX),
        Field("cleanPodPolicy", "string", "which pods are stopped when the job ends", enum=CLEAN_POD_POLICIES),
        Field("scheduling", "object", "gang scheduling, queue, priority, scheduler", of="scheduling"),
        _PORT,
        Field("tensorflow", "object", "TensorFlow options (only in a tensorflow job)", of="tensorflow"),
        Field("pytorch", "object", "PyTorch options (only in a pytorch job)", of="pytorch"),
        Field("mxnet", "object", "MXNet options (only in an mxnet job)", of="mxnet"),
        Field("mpi", "object", "MPI options (only in an mpi job)", of="mpi"),
        Field("xgboost", "object", "XGBoost options (none yet; only in an xgboost job)", of="xgboost"),
        Field("paddle", "object", "Paddle options (none yet; only in a paddle job)", of="paddle"),
        Field("jax", "object", "JAX options (none yet; only in a jax job)", of="jax"),
        Field("roles", "roles", "role name -> role; the names depend on the framework", required=True),
        *_POD,
        Field("imagePullSecrets", "list", "Secret names for pulling the images", of="string",
              pattern=DNS1123_SUBDOMAIN.pattern, max_length=253),
        Field("patches", "object", "target -> RFC 6902 JSON-patch operations on its output", of="patches"),
        Field("containerName", "string", _CONTAINER_NAME, pattern=DNS1123_LABEL.pattern, max_length=63),
        Field("success", "object", "which role decides success (only in a generic job; default: every replica "
              "of every role)", of="success"),
        Field("trainjob", "object", "v1.3: run on a Kubeflow Trainer runtime the cluster already has (the trainjob "
              "target writes only the TrainJob)", of="trainjob"),
    )),
    Mapping("trainjob", "v1.3: the Kubeflow Trainer v2 runtime the job runs on, and the TrainJob fields trainer "
            "cannot carry.", (
        Field("runtime", "object", "the ClusterTrainingRuntime or TrainingRuntime (runtimeRef)", required=True,
              of="trainjobRuntime"),
        Field("initializer", "object", "Trainer's initializer (dataset, model), carried as written",
              of="trainjobInitializer"),
        Field("numNodesFromRuntime", "boolean", "leave trainer.numNodes out: the runtime's mlPolicy.numNodes "
              "decides (the replicas are then what trainspec checks the spec with)"),
        Field("numProcPerNode", "integer", "trainer.numProcPerNode: processes per node (a pytorch job may say "
              "spec.pytorch.nprocPerNode instead)", minimum=1, maximum=INT32_MAX),
        Field("runtimePatches", "list", "Trainer's runtimePatches ({manager, trainingRuntimeSpec}), carried as "
              "written: what trainer cannot carry (scheduling, volumes, sidecars)", of="object"),
        Field("suspend", "boolean", "create the TrainJob suspended (Kueue unsuspends it on admission)"),
        Field("managedBy", "string", "the TrainJob's controller",
              enum=("trainer.kubeflow.org/trainjob-controller", "kueue.x-k8s.io/multikueue")),
        Field("podTemplateOverrides", "list", "Trainer v2.1's podTemplateOverrides, carried as written (removed "
              "in Trainer v2.2: use runtimePatches)", of="object"),
        Field("labels", "map", "Trainer v2.0/v2.1's TrainJob spec.labels (removed in v2.2)", of="string",
              empty=True),
        Field("annotations", "map", "Trainer v2.0/v2.1's TrainJob spec.annotations (removed in v2.2)",
              of="string", empty=True),
    )),
    Mapping("trainjobRuntime", "A Trainer runtime by name (TrainJob runtimeRef).", (
        Field("name", "string", "the runtime's name", required=True, pattern=DNS1123_SUBDOMAIN.pattern,
              max_length=253),
        Field("kind", "string", f"{CLUSTER_TRAINING_RUNTIME.kind} (default) or {TRAINING_RUNTIME.kind} (in the job's "
              "namespace)", enum=(CLUSTER_TRAINING_RUNTIME.kind, TRAINING_RUNTIME.kind)),
        Field("apiGroup", "string", f"{GROUP} (the default)", enum=(GROUP,)),
    )),
    Mapping("trainjobInitializer", "Trainer's initializer: the dataset and model steps of the runtime.", (
        Field("dataset", "object", "storageUri, env, secretRef (passed through)"),
        Field("model", "object", "storageUri, env, secretRef (passed through)"),
    )),
    Mapping("success", "framework: generic: the role whose replicas decide the job's success.", (
        Field("role", "string", "a role of the job", required=True, pattern=DNS1123_LABEL.pattern, max_length=63),
        Field("policy", "string", "AllReplicas (default): every replica of the role exits 0; AnyReplica: one does",
              enum=GENERIC_SUCCESS_POLICIES),
    )),
    Mapping("tensorflow", "TensorFlow options.", (
        Field("successPolicy", "string", "when the job succeeds", enum=TF_SUCCESS_POLICIES),
    )),
    Mapping("pytorch", "PyTorch options.", (
        Field("nprocPerNode", "nproc", "torchrun processes per replica: an integer, auto, cpu or gpu"),
        Field("elastic", "object", "elastic torchrun: the workers' range and the rendezvous", of="elastic"),
    )),
    Mapping("elastic", "Elastic PyTorch (torchrun --nnodes=MIN:MAX).", (
        Field("minReplicas", "integer", "fewest workers", minimum=1, maximum=100_000),
        Field("maxReplicas", "integer", "most workers", minimum=1, maximum=100_000),
        Field("rdzvBackend", "string", "rendezvous backend (default: c10d)", enum=RDZV_BACKENDS),
        Field("rdzvPort", "integer", "rendezvous port", minimum=1, maximum=65535),
        Field("maxRestarts", "integer", "torchrun --max-restarts", minimum=0, maximum=INT32_MAX),
    )),
    Mapping("mxnet", "MXNet options (none in v1).", ()),
    Mapping("xgboost", "XGBoost options (none yet).", ()),
    Mapping("paddle", "Paddle options (none yet).", ()),
    Mapping("jax", "JAX options (none yet).", ()),
    Mapping("mpi", "MPI options.", (
        Field("slotsPerWorker", "integer", "MPI slots per worker (default: the worker's gpu, else 1)", minimum=1,
              maximum=1024),
        Field("implementation", "string", "the MPI implementation (default: OpenMPI)", enum=MPI_IMPLEMENTATIONS),
        Field("sshAuthMountPath", "string", "where the ssh keys are mounted (default: /root/.ssh)",
              pattern=ABSOLUTE_PATH),
    )),
    Mapping("role", "One role: its replica count and overrides of the job's defaults.", (
        Field("replicas", "integer", "number of replicas", required=True, minimum=0, maximum=MAX_REPLICAS),
        *_container("this role's image"),
        _RESTART,
        Field("resources", "object", "cpu, memory, gpu, shm per replica", of="resources"),
        Field("initContainers", "list", "run in order before the main container", of="initContainer"),
        Field("lifecycle", "object", "postStart and preStop hooks", of="lifecycle"),
        Field("probes", "object", "liveness, readiness and startup probes", of="probes"),
        Field("port", "integer", "this role's port", minimum=1, maximum=65535),
        *_POD,
        Field("priorityClassName", "string", "this role's PriorityClass (overrides scheduling.priorityClassName)",
              pattern=DNS1123_SUBDOMAIN.pattern, max_length=253),
        Field("volumes", "list", "mounted in this role's containers, beside the job's", of="volume"),
        Field("taskName", "string", "the Volcano task / JobSet replicatedJob name, and the host names built "
              "from it (default: the role's name); a DNS-1123 label, unique in the job",
              pattern=DNS1123_LABEL.pattern, max_length=63),
        Field("containerName", "string", _CONTAINER_NAME + " (overrides spec.containerName)",
              pattern=DNS1123_LABEL.pattern, max_length=63),
    )),
    Mapping("resources", "Resources per replica (requested and limited).", (
        Field("cpu", "quantity", 'CPU, e.g. "500m" or 4'),
        Field("memory", "quantity", "memory, e.g. 8Gi"),
        Field("gpu", "integer", "accelerators (spec.accelerator) per replica", minimum=0, maximum=1024),
        Field("shm", "quantity", "size of /dev/shm, e.g. 2Gi"),
        Field("requests", "map", "other requests: resource name -> quantity", of="quantity",
              keys=RESOURCE_NAME.pattern),
        Field("limits", "map", "other limits: resource name -> quantity", of="quantity", keys=RESOURCE_NAME.pattern),
    )),
    Mapping("volume", "A volume mounted in every container of every role.", (
        Field("name", "string", "a DNS-1123 label", required=True, pattern=DNS1123_LABEL.pattern, max_length=63),
        Field("mountPath", "string", "absolute path in the container", required=True, pattern=ABSOLUTE_PATH),
        Field("readOnly", "boolean", "mount read-only"),
        Field("source", "object", "exactly one source", required=True, of="volumeSource"),
    )),
    Mapping("volumeSource", "Where a volume's data comes from: exactly one source.", (
        Field("persistentVolumeClaim", "string", "claim name", pattern=DNS1123_SUBDOMAIN.pattern, max_length=253),
        Field("hostPath", "string", "absolute path on the node", pattern=ABSOLUTE_PATH),
        Field("emptyDir", "object", "an empty folder for the pod's lifetime", of="emptyDir"),
        Field("configMap", "string", "ConfigMap name", pattern=DNS1123_SUBDOMAIN.pattern, max_length=253),
        Field("secret", "string", "Secret name", pattern=DNS1123_SUBDOMAIN.pattern, max_length=253),
    ), exactly_one=("persistentVolumeClaim", "hostPath", "emptyDir", "configMap", "secret")),
    Mapping("emptyDir", "An emptyDir volume.", (
        Field("medium", "string", '"" (disk) or Memory', enum=("", "Memory"), empty=True),
        Field("sizeLimit", "quantity", "size limit, e.g. 1Gi"),
    )),
    Mapping("initContainer", "A container run before the main one (not templated).", (
        Field("name", "string", "a DNS-1123 label, unique in the role", required=True,
              pattern=DNS1123_LABEL.pattern, max_length=63),
        *_container("image (default: the role's)", templated=False),
        Field("resources", "object", "cpu, memory, gpu, shm", of="resources"),
        Field("restartPolicy", "string", "Always: a native sidecar, running beside the main container",
              enum=("Always",)),
    )),
    Mapping("scheduling", "Gang scheduling and placement.", (
        Field("gang", "boolean", "start all replicas together or none"),
        Field("minAvailable", "integer", "replicas that must start together (at most the job's total)",
              minimum=0, maximum=MAX_REPLICAS),
        Field("queue", "string", "scheduler queue (at most 63 characters where it is Kueue's label: k8s, helm, "
              "jobset, trainjob)", pattern=DNS1123_SUBDOMAIN.pattern, max_length=253),
        Field("priorityClassName", "string", "PriorityClass", pattern=DNS1123_SUBDOMAIN.pattern, max_length=253),
        Field("schedulerName", "string", "scheduler (e.g. volcano; at most 63 characters for the volcano target)"),
    )),
    Mapping("probes", "The main container's probes.", (
        Field("liveness", "object", "restart the replica when it fails", of="probe"),
        Field("readiness", "object", "ready to serve", of="probe"),
        Field("startup", "object", "started (the other probes wait)", of="probe"),
    )),
    Mapping("probe", "A probe: exactly one of exec, httpGet, tcpSocket, and its timing (0: Kubernetes' default).", (
        Field("exec", "strings", "command run in the container; success is exit code 0"),
        Field("httpGet", "object", "an HTTP GET that must answer 200-399", of="httpGet"),
        Field("tcpSocket", "object", "a TCP port that must accept connections", of="tcpSocket"),
        Field("initialDelaySeconds", "integer", "", minimum=0, maximum=INT32_MAX),
        Field("periodSeconds", "integer", "", minimum=0, maximum=INT32_MAX),
        Field("timeoutSeconds", "integer", "", minimum=0, maximum=INT32_MAX),
        Field("successThreshold", "integer", "1 for liveness and startup probes", minimum=0, maximum=INT32_MAX),
        Field("failureThreshold", "integer", "", minimum=0, maximum=INT32_MAX),
    ), exactly_one=("exec", "httpGet", "tcpSocket")),
    Mapping("lifecycle", "Container hooks.", (
        Field("postStart", "object", "after the container starts", of="hook"),
        Field("preStop", "object", "before the container is stopped", of="hook"),
    )),
    Mapping("hook", "A hook: exactly one of exec, httpGet.", (
        Field("exec", "strings", "command run in the container"),
        Field("httpGet", "object", "an HTTP GET", of="httpGet"),
    ), exactly_one=("exec", "httpGet")),
    Mapping("httpGet", "An HTTP GET against the replica.", (
        Field("path", "string", "URL path, e.g. /healthz", pattern=ABSOLUTE_PATH),
        Field("port", "port", "a number or a port name", required=True),
        Field("scheme", "string", "HTTP or HTTPS", enum=("HTTP", "HTTPS")),
        Field("host", "string", "host name or IP (default: the replica)"),
    )),
    Mapping("tcpSocket", "A TCP connection to the replica.", (
        Field("port", "port", "a number or a port name", required=True),
        Field("host", "string", "host name or IP (default: the replica)"),
    )),
    Mapping("envRef", "An environment value from a Secret, a ConfigMap or the pod: exactly one reference.", (
        Field("secretKeyRef", "object", "a key of a Secret", of="keyRef"),
        Field("configMapKeyRef", "object", "a key of a ConfigMap", of="keyRef"),
        Field("fieldRef", "object", "a field of the pod (downward API)", of="fieldRef"),
        Field("resourceFieldRef", "object", "a request or limit of a container (downward API)",
              of="resourceFieldRef"),
    ), exactly_one=("secretKeyRef", "configMapKeyRef", "fieldRef", "resourceFieldRef")),
    Mapping("fieldRef", "A field of the pod: metadata.name, status.podIP, metadata.labels['<key>'], ...", (
        Field("fieldPath", "string", "the field", required=True),
        Field("apiVersion", "string", "v1", enum=("v1",)),
    )),
    Mapping("resourceFieldRef", "A container's request or limit.", (
        Field("resource", "string", "limits.cpu, requests.memory, ...", required=True, enum=DOWNWARD_RESOURCES),
        Field("containerName", "string", "the container (default: this one)", empty=True),
        Field("divisor", "quantity", "unit of the value, e.g. 1m or 1Mi"),
    )),
    Mapping("toleration", "A Kubernetes Toleration.", (
        Field("key", "string", "the taint key (empty: every key)", empty=True),
        Field("operator", "string", "Exists or Equal", empty=True),
        Field("value", "string", "the taint value", empty=True),
        Field("effect", "string", "NoSchedule, PreferNoSchedule or NoExecute (empty: every effect)", empty=True),
        Field("tolerationSeconds", "integer", "how long a NoExecute taint is tolerated"),
    )),
    Mapping("patches", "RFC 6902 JSON-patch operations per target, applied to its output last.",
            tuple(Field(target, "list", f"operations on the {target} output", of="patchOp")
                  for target in PATCH_TARGETS)),
    Mapping("patchOp", "One RFC 6902 operation.", (
        Field("op", "string", "add, remove, replace, move, copy or test", required=True, enum=PATCH_OPS),
        Field("path", "string", "a JSON pointer into the target's object", required=True, pattern="^(/|$)",
              empty=True),
        Field("value", "any", "the value (add, replace, test)"),
        Field("from", "string", "a JSON pointer (move, copy)", pattern="^(/|$)", empty=True),
    )),
    Mapping("keyRef", "A key of a Secret or ConfigMap.", (
        Field("name", "string", "object name", required=True, pattern=DNS1123_SUBDOMAIN.pattern, max_length=253),
        Field("key", "string", "data key", required=True, pattern=CONFIG_KEY.pattern, max_length=253),
    )),
)}

# The framework blocks of `spec` (spec.<framework>), each a mapping of the same name.
FRAMEWORK_BLOCKS: dict[str, tuple[str, ...]] = {name: MAPPINGS[name].names for name in FRAMEWORKS
                                                if name in MAPPINGS}  # generic has no options block

TOP = MAPPINGS["TrainingJob"]
METADATA = MAPPINGS["metadata"]
SPEC = MAPPINGS["spec"]
ROLE = MAPPINGS["role"]
