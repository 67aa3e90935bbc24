"""What the operators do with our output, as the product's controllers model it: which pods
they create and what those pods' programs see.

The controllers are trainspec.emulator.readers.controllers (kubeflow_v1.py, mpi_operator.py,
volcano.py; their docstrings cite CONVENTIONS.md and the upstream sources): the same code
makes the pods `trainspec run` starts from a kubeflow.yaml or volcano.yaml. This module only
plays the kubelet over the pods they create (the env list with `$(VAR)` expansion, ConfigMap
files), so the equivalence test compares, per replica, the environment under the Kubeflow
training operator / mpi-operator, under Volcano with its plugins, and in the `k8s` target.
It models what a training program relies on: pod identity, host names, env and the MPI
hostfile. Not modelled here: scheduling, restarts, status (the emulator runs those).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trainspec.compiler.plan import expand_references
from trainspec.emulator.readers import operator
from trainspec.emulator.readers.controllers import main_container

KUBEFLOW_INDEX_LABEL = "training.kubeflow.org/replica-index"
VOLCANO_INDEX_LABEL = "volcano.sh/task-index"
DEFAULT_CONTAINER = {"TFJob": "tensorflow", "PyTorchJob": "pytorch", "MXJob": "mxnet"}
SPECS_FIELD = {"TFJob": "tfReplicaSpecs", "PyTorchJob": "pytorchReplicaSpecs", "MXJob": "mxReplicaSpecs",
               "MPIJob": "mpiReplicaSpecs", "XGBoostJob": "xgbReplicaSpecs", "PaddleJob": "paddleReplicaSpecs",
               "JAXJob": "jaxReplicaSpecs"}


@dataclass
class Pod:
    """What one created pod's program sees."""

    name: str
    role: str  # lower-case replica type (Kubeflow) or the task's role (Volcano: trainspec.dev/role)
    host: str  # the DNS name peers reach it by
    env: dict[str, object]  # str values; a user's Secret/ConfigMap key as ("secret"|"configMap", name, key)
    command: list[str] | None
    args: list[str] | None
    files: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)


# --- the kubelet -----------------------------------------------------------------------------

POD_IP = "<the pod's IP>"  # status.podIP: what matters is that it is the pod's own, not its value


def _field(path: str, labels: dict[str, str], annotations: dict[str, str]) -> str:
    if path == "status.podIP":
        return POD_IP
    for prefix, source in (("metadata.labels['", labels), ("metadata.annotations['", annotations)):
        if path.startswith(prefix) and path.endswith("']"):
            key = path[len(prefix):-2]
            if key not in source:
                raise AssertionError(f"fieldRef {path}: the pod has no such key (labels {sorted(source)})")
            return source[key]
    if path in ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
                "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"):
        return f"<pod {path}>"  # the user's downward-API variables: known only in a running pod
    raise AssertionError(f"fieldRef {path} is not modelled")


def kubelet_env(container: dict, labels: dict, annotations: dict, config_maps: dict[str, dict],
                appended: list[tuple[str, str]]) -> dict[str, object]:
    """The container's environment: its env list then what the operator appended, expanded in order.

    `$(VAR)` expands from variables defined earlier (k8s.io/kubernetes third_party expansion);
    a later entry with the same name replaces the earlier one.
    """
    defined: dict[str, str] = {}
    out: dict[str, object] = {}
    entries = list(container.get("env") or []) + [{"name": n, "value": v} for n, v in appended]
    for entry in entries:
        name = entry["name"]
        if "value" in entry:
            value = expand_references(entry["value"], defined)
        else:
            source = entry["valueFrom"]
            if "fieldRef" in source:
                value = _field(source["fieldRef"]["fieldPath"], labels, annotations)
            elif "resourceFieldRef" in source:
                defined.pop(name, None)
                out[name] = ("resource", source["resourceFieldRef"]["resource"])
                continue
            elif "configMapKeyRef" in source:
                ref = source["configMapKeyRef"]
                if ref["name"] in config_maps:
                    value = config_maps[ref["name"]][ref["key"]]
                else:
                    defined.pop(name, None)
                    out[name] = ("configMap", ref["name"], ref["key"])
                    continue
            else:
                ref = source["secretKeyRef"]
                defined.pop(name, None)
                out[name] = ("secret", ref["name"], ref["key"])
                continue
        defined[name] = value
        out[name] = value
    return out


def kubelet_command(items: list[str] | None, env: dict[str, object]) -> list[str] | None:
    if items is None:
        return None
    strings = {k: v for k, v in env.items() if isinstance(v, str)}
    return [expand_references(item, strings) for item in items]


def _config_maps(docs: list[dict]) -> dict[str, dict]:
    return {d["metadata"]["name"]: d.get("data", {}) for d in docs if d.get("kind") == "ConfigMap"}


def _mounted_files(pod_spec: dict, container: dict, config_maps: dict[str, dict]) -> dict[str, str]:
    """Files the container sees from ConfigMap volumes (every key, or the `items`)."""
    files = {}
    volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
    for mount in container.get("volumeMounts", []):
        vol = volumes.get(mount["name"], {})
        cm = vol.get("configMap")
        if cm and cm["name"] in config_maps:
            data = config_maps[cm["name"]]
            for item in cm.get("items") or [{"key": k, "path": k} for k in data]:
                files[f"{mount['mountPath']}/{item['path']}"] = data[item["key"]]
    return files


# --- the controllers' pods -------------------------------------------------------------------

def _pods(docs: list[dict], is_job) -> list[Pod]:
    job = next(d for d in docs if is_job(d))
    made, _ = operator.created(docs, "<model>")  # the product's controller (a TrainJob with its runtime)
    cms = _config_maps([*docs, *made.objects])
    pods = []
    for wrapper in made.objects:
        if wrapper.get("kind") not in ("Job", "Deployment"):
            continue
        template = wrapper["spec"]["template"]
        pod_spec = template["spec"]
        labels = dict(template["metadata"]["labels"])
        container = main_container(pod_spec, DEFAULT_CONTAINER.get(job["kind"]))
        env = kubelet_env(container, labels, {}, cms, [])
        name = wrapper["metadata"]["name"]
        host = f"{pod_spec['hostname']}.{pod_spec['subdomain']}" if pod_spec.get("subdomain") else name
        pods.append(Pod(name, labels["trainspec.dev/role"], host, env, kubelet_command(container.get("command"), env),
                        kubelet_command(container.get("args"), env), _mounted_files(pod_spec, container, cms),
                        labels))
    return pods


def kubeflow_pods(docs: list[dict]) -> list[Pod]:
    return _pods(docs, lambda d: d.get("kind") in SPECS_FIELD)


def trainjob_pods(docs: list[dict]) -> list[Pod]:
    """Trainer v2: the TrainJob on its TrainingRuntime, through the JobSet it builds."""
    return _pods(docs, lambda d: d.get("kind") == "TrainJob")


def volcano_pods(docs: list[dict]) -> list[Pod]:
    return _pods(docs, lambda d: d.get("kind") == "Job"
                 and str(d.get("apiVersion", "")).startswith("batch.volcano.sh/"))
