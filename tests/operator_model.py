"""A small model of what the operators do with our output: which pods they create and what those pods' programs see.

Written from shared/reference/CONVENTIONS.md (sections named below), so the
equivalence test can compare, per replica, the environment under the Kubeflow
training operator / mpi-operator, under Volcano with its plugins, and in the
`k8s` target.  It models only what a training program relies on: pod
identity, host names, env (with the kubelet's `$(VAR)` expansion) and the MPI
hostfile.  Not modelled: scheduling, restarts, status.

Kubeflow (§1):
  * one pod per replica, `<job>-<rt>-<i>`, reachable through its own headless
    Service `<job>-<rt>-<i>` (short name in the namespace, or `.<ns>.svc`) (§1.0);
  * pod labels `training.kubeflow.org/replica-type` (lower case) and
    `training.kubeflow.org/replica-index` (§1.0);
  * env is appended to the default-named container (`tensorflow`, `pytorch`,
    `mxnet`; mpi-operator: container 0), after the template's own env:
    - TFJob: TF_CONFIG, only when Σ replicas != 1; every replica type listed,
      hosts `<job>-<rt>-<i>.<ns>.svc:<port>`, `"environment":"cloud"` (§1.1);
    - PyTorchJob: PYTHONUNBUFFERED, MASTER_ADDR/PET_MASTER_ADDR `<job>-master-0`,
      MASTER_PORT/PET_MASTER_PORT, WORLD_SIZE = Σ replicas × int(nprocPerNode)
      (non-int counts 1), RANK/PET_NODE_RANK (worker: index + 1),
      PET_NPROC_PER_NODE, PET_NNODES = Σ replicas (§1.2);
    - MXJob: MX_CONFIG, DMLC_PS_ROOT_URI `<job>-scheduler-0`, DMLC_PS_ROOT_PORT,
      DMLC_NUM_SERVER, DMLC_NUM_WORKER, DMLC_ROLE, DMLC_USE_KUBERNETES,
      DMLC_WORKER_ID on workers (§1.3);
    - MPIJob v2beta1: pods `<job>-launcher` / `<job>-worker-<i>` with subdomain
      `<job>`; K_MPI_JOB_ROLE; the launcher gets OMPI_MCA_* (OpenMPI) and the
      hostfile `/etc/mpi/hostfile` with `<job>-worker-<i>.<job>.<ns>.svc slots=N`;
      workers without a command run `/usr/sbin/sshd -De` (§1.4).
Volcano (§2):
  * pods `<job>-<task>-<i>`, labels `volcano.sh/task-spec` and `volcano.sh/task-index`;
  * host = `<hostname or pod name>.<subdomain or job>` (svc plugin, helpers.MakeDomainName);
  * env plugin: VK_TASK_INDEX, VC_TASK_INDEX;
  * svc plugin: VC_<TASK>_HOSTS (comma list, no port) and VC_<TASK>_NUM for every task,
    and the file /etc/volcano/<task>.host;
  * tensorflow plugin (args --ps/--worker/--chief/--evaluator/--port): TF_CONFIG in
    every container, cluster keyed ps, worker, chief, evaluator (omitting empty
    ones), hosts `<host>:<port>`, task type from the task name, **no environment
    key**; skipped for a job of one task with one replica;
  * pytorch plugin (--master/--worker/--port): MASTER_ADDR = the master task's
    pod 0 host, MASTER_PORT, WORLD_SIZE = master + worker **pods**, RANK
    (master 0, worker index + 1);
  * mpi plugin (--master/--worker/--port): MPI_HOST (worker hosts) on the master task.
  * no plugin for XGBoost, Paddle or JAX: the template's env is all.
Kubeflow v1 XGBoostJob / PaddleJob / JAXJob (CONVENTIONS-V2.md §4), appended likewise:
  * XGBoostJob (container xgboost, port xgboostjob-port 9999): MASTER_PORT, MASTER_ADDR
    `<job>-master-0`, WORLD_SIZE = Σ, RANK (worker: index + masters), PYTHONUNBUFFERED;
    if Σ > 1: WORKER_PORT, WORKER_ADDRS `<job>-worker-0..Σ-2`;
  * PaddleJob (container paddle, port `master` 36543): PYTHONUNBUFFERED, PADDLE_JOB_ID,
    PADDLE_NNODES = Σ; the rendezvous replica (master 0, else worker 0) gets POD_IP_DUMMY
    (fieldRef status.podIP) and PADDLE_MASTER=$(POD_IP_DUMMY):port, the others
    `<job>-<rt>-0:port`; with a master, PADDLE_SERVER_NUM=1 / PADDLE_TRAINER_NUM=1;
  * JAXJob (container jax, port jaxjob-port 6666): PYTHONUNBUFFERED, COORDINATOR_PORT,
    COORDINATOR_ADDRESS `<job>-worker-0`, NUM_PROCESSES = Σ, PROCESS_ID = index.
The pod IP is modelled as `10.0.<n>.<i>` (a distinct value per pod).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from trainspec.compiler.plan import expand_references

KUBEFLOW_INDEX_LABEL = "training.kubeflow.org/replica-index"
VOLCANO_INDEX_LABEL = "volcano.sh/task-index"
DEFAULT_CONTAINER = {"TFJob": "tensorflow", "PyTorchJob": "pytorch", "MXJob": "mxnet", "XGBoostJob": "xgboost",
                     "PaddleJob": "paddle", "JAXJob": "jax"}
DEFAULT_PORT = {"TFJob": 2222, "PyTorchJob": 23456, "MXJob": 9091, "XGBoostJob": 9999, "PaddleJob": 36543,
                "JAXJob": 6666}
PORT_NAME = {"TFJob": "tfjob-port", "PyTorchJob": "pytorchjob-port", "MXJob": "mxjob-port", "MPIJob": "mpijob-port",
             "XGBoostJob": "xgboostjob-port", "PaddleJob": "master", "JAXJob": "jaxjob-port"}
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

def _field(path: str, labels: dict[str, str], annotations: dict[str, str], pod_ip: str = "") -> str:
    if path == "status.podIP" and pod_ip:
        return pod_ip
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
                appended: list, pod_ip: str = "") -> dict[str, object]:
    """The container's environment: its env list then what the operator appended, expanded in order.

    `$(VAR)` expands from variables defined earlier (k8s.io/kubernetes third_party expansion);
    a later entry with the same name replaces the earlier one.
    """
    defined: dict[str, str] = {}
    out: dict[str, object] = {}
    entries = list(container.get("env") or []) + [a if isinstance(a, dict) else {"name": a[0], "value": a[1]}
                                                  for a in appended]
    for entry in entries:
        name = entry["name"]
        if "value" in entry:
            value = expand_references(entry["value"], defined)
        else:
            source = entry["valueFrom"]
            if "fieldRef" in source:
                value = _field(source["fieldRef"]["fieldPath"], labels, annotations, pod_ip)
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
    """Files the container sees from ConfigMap volumes we emitted (with `items`)."""
    files = {}
    volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
    for mount in container.get("volumeMounts", []):
        vol = volumes.get(mount["name"], {})
        cm = vol.get("configMap")
        if cm and cm["name"] in config_maps:
            for item in cm.get("items", []):
                files[f"{mount['mountPath']}/{item['path']}"] = config_maps[cm["name"]][item["key"]]
    return files


# --- Kubeflow training operator 1.9 / 1.8 (MXJob) and mpi-operator v2beta1 -----------------------

def _port(kind: str, rspec: dict) -> int:
    container = _default_container(kind, rspec["template"]["spec"])
    for port in container.get("ports", []):
        if port.get("name") == PORT_NAME[kind]:
            return port["containerPort"]
    return DEFAULT_PORT.get(kind, 22)


def _default_container(kind: str, pod_spec: dict) -> dict:
    name = DEFAULT_CONTAINER.get(kind)
    for container in pod_spec["containers"]:
        if container["name"] == name:
            return container
    return pod_spec["containers"][0]


def kubeflow_pods(docs: list[dict]) -> list[Pod]:
    job = next(d for d in docs if d.get("kind") in SPECS_FIELD)
    kind, name, ns = job["kind"], job["metadata"]["name"], job["metadata"].get("namespace", "default")
    specs = job["spec"][SPECS_FIELD[kind]]
    counts = {rt.lower(): rs.get("replicas", 1) for rt, rs in specs.items()}
    total = sum(counts.values())
    ports = {rt.lower(): _port(kind, rs) for rt, rs in specs.items()}
    cms = _config_maps(docs)
    pods = []
    for rtype, rspec in specs.items():
        rt = rtype.lower()
        template = rspec["template"]
        for i in range(counts[rt]):
            labels = dict(template.get("metadata", {}).get("labels", {}))
            labels.update({"training.kubeflow.org/job-name": name, "training.kubeflow.org/replica-type": rt})
            if not (kind == "MPIJob" and rt == "launcher"):
                labels[KUBEFLOW_INDEX_LABEL] = str(i)
            if kind == "MPIJob":
                pod_name = f"{name}-launcher" if rt == "launcher" else f"{name}-worker-{i}"
                host = f"{pod_name}.{name}"
            else:
                pod_name = host = f"{name}-{rt}-{i}"
            container = _default_container(kind, template["spec"])
            appended: list[tuple[str, str]] = []
            files: dict[str, str] = {}
            if kind == "TFJob" and total != 1:
                cluster = {r: [f"{name}-{r}-{j}.{ns}.svc:{ports[r]}" for j in range(n)]
                           for r, n in sorted(counts.items())}
                appended.append(("TF_CONFIG", json.dumps(
                    {"cluster": cluster, "task": {"type": rt, "index": i}, "environment": "cloud"},
                    separators=(",", ":"))))
            elif kind == "PyTorchJob":
                nproc = job["spec"].get("nprocPerNode", "auto")
                per_node = int(nproc) if nproc.isdigit() else 1
                appended.append(("PYTHONUNBUFFERED", "1"))
                if "master" in counts:
                    rank = str(i if rt == "master" else i + 1)
                    master, port = f"{name}-master-0", str(ports["master"])
                    appended += [("MASTER_PORT", port), ("MASTER_ADDR", master),
                                 ("WORLD_SIZE", str(total * per_node)), ("RANK", rank),
                                 ("PET_MASTER_PORT", port), ("PET_MASTER_ADDR", master), ("PET_NODE_RANK", rank)]
                elastic = job["spec"].get("elasticPolicy")
                if elastic is None:
                    appended += [("PET_NPROC_PER_NODE", nproc), ("PET_NNODES", str(total))]
                else:  # pytorch/elastic.go: the rendezvous on worker-0, PET_NNODES = min:max
                    workers = counts.get("worker", 0)
                    port = elastic.get("rdzvPort", ports.get("worker"))
                    appended += [("PET_NPROC_PER_NODE", nproc),
                                 ("PET_RDZV_ENDPOINT", f"{name}-worker-0:{port}"),
                                 ("PET_RDZV_BACKEND", elastic.get("rdzvBackend", "c10d")),
                                 ("PET_NNODES", f"{elastic.get('minReplicas', workers)}:"
                                                f"{elastic.get('maxReplicas', workers)}")]
                    if "maxRestarts" in elastic:
                        appended.append(("PET_MAX_RESTARTS", str(elastic["maxRestarts"])))
            elif kind == "MXJob":
                cluster = {r: [{"url": f"{name}-{r}-{j}", "port": ports[r]} for j in range(n)]
                           for r, n in sorted(counts.items())}
                appended += [("MX_CONFIG", json.dumps({"cluster": cluster, "labels": {},
                                                       "task": {"type": rt, "index": i}}, separators=(",", ":"))),
                             ("DMLC_PS_ROOT_PORT", str(ports.get("scheduler", 9091))),
                             ("DMLC_PS_ROOT_URI", f"{name}-scheduler-0"),
                             ("DMLC_NUM_SERVER", str(counts.get("server", 0))),
                             ("DMLC_NUM_WORKER", str(counts.get("worker", 0))),
                             ("DMLC_ROLE", rt), ("DMLC_USE_KUBERNETES", "1")]
                if rt == "worker":
                    appended.append(("DMLC_WORKER_ID", str(i)))
            elif kind == "MPIJob":
                appended.append(("K_MPI_JOB_ROLE", rt))
                if rt == "launcher":
                    slots = job["spec"].get("slotsPerWorker", 1)
                    impl = job["spec"].get("mpiImplementation", "OpenMPI")
                    workers = [f"{name}-worker-{j}.{name}.{ns}.svc" for j in range(counts.get("worker", 0))]
                    if impl == "OpenMPI":
                        files["/etc/mpi/hostfile"] = "".join(f"{h} slots={slots}\n" for h in workers)
                        appended += [("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
                                     ("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"),
                                     ("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
                                     ("OMPI_MCA_orte_set_default_slots", str(slots))]
                    else:
                        files["/etc/mpi/hostfile"] = "".join(f"{h}:{slots}\n" for h in workers)
            elif kind in V1_ENV:
                appended += V1_ENV[kind](name, rt, i, counts, ports)
            pod_ip = f"10.0.{len(pods)}.{i}"
            env = kubelet_env(container, labels, {}, cms, appended, pod_ip)
            command = container.get("command")
            if kind == "MPIJob" and rt == "worker" and command is None:
                command = ["/usr/sbin/sshd", "-De"]
            files.update(_mounted_files(template["spec"], container, cms))
            pods.append(Pod(pod_name, rt, host, env, kubelet_command(command, env),
                            kubelet_command(container.get("args"), env), files, labels))
    return pods


def _xgboost_env(name: str, rt: str, i: int, counts: dict, ports: dict) -> list:
    total = sum(counts.values())
    rank = i + (counts.get("master", 0) if rt == "worker" else 0)
    env = [("MASTER_PORT", str(ports["master"])), ("MASTER_ADDR", f"{name}-master-0"), ("WORLD_SIZE", str(total)),
           ("RANK", str(rank)), ("PYTHONUNBUFFERED", "1")]
    if total > 1:
        env += [("WORKER_PORT", str(ports["worker"])),
                ("WORKER_ADDRS", ",".join(f"{name}-worker-{j}" for j in range(total - 1)))]
    return env


def _paddle_env(name: str, rt: str, i: int, counts: dict, ports: dict) -> list:
    env: list = [("PYTHONUNBUFFERED", "1"), ("PADDLE_JOB_ID", name), ("PADDLE_NNODES", str(sum(counts.values())))]
    rendezvous = "master" if "master" in counts else "worker"
    port = ports[rendezvous]
    if rt == rendezvous and i == 0:
        env += [{"name": "POD_IP_DUMMY", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                ("PADDLE_MASTER", f"$(POD_IP_DUMMY):{port}")]
    else:
        env.append(("PADDLE_MASTER", f"{name}-{rendezvous}-0:{port}"))
    if "master" in counts:
        env.append(("PADDLE_SERVER_NUM", "1") if rt == "master" else ("PADDLE_TRAINER_NUM", "1"))
    return env


def _jax_env(name: str, rt: str, i: int, counts: dict, ports: dict) -> list:
    return [("PYTHONUNBUFFERED", "1"), ("COORDINATOR_PORT", str(ports["worker"])),
            ("COORDINATOR_ADDRESS", f"{name}-worker-0"), ("NUM_PROCESSES", str(sum(counts.values()))),
            ("PROCESS_ID", str(i))]


V1_ENV = {"XGBoostJob": _xgboost_env, "PaddleJob": _paddle_env, "JAXJob": _jax_env}


# --- Volcano batch/v1alpha1 with its plugins -------------------------------------------------

def _flags(args: list[str], defaults: dict[str, str]) -> dict[str, str]:
    """Go `flag` parsing of `--name=value` arguments over the plugin's defaults."""
    out = dict(defaults)
    for arg in args:
        key, _, value = arg.lstrip("-").partition("=")
        out[key] = value
    return out


def volcano_pods(docs: list[dict]) -> list[Pod]:
    job = next(d for d in docs if d.get("kind") == "Job" and d["apiVersion"].startswith("batch.volcano.sh/"))
    name, ns = job["metadata"]["name"], job["metadata"].get("namespace", "default")
    spec = job["spec"]
    tasks = spec["tasks"]
    plugins = spec.get("plugins", {})
    cms = _config_maps(docs)

    def host(task: dict, i: int) -> str:  # helpers.MakeDomainName
        pod_spec = task["template"]["spec"]
        hostname = pod_spec.get("hostname") or f"{name}-{task['name']}-{i}"
        return f"{hostname}.{pod_spec.get('subdomain') or name}"

    task_hosts = {t["name"]: [host(t, i) for i in range(t["replicas"])] for t in tasks}
    svc_env = {}
    svc_files = {}
    if "svc" in plugins:
        for t in tasks:
            key = t["name"].upper().replace("-", "_")
            svc_env[f"VC_{key}_HOSTS"] = ",".join(task_hosts[t["name"]])
            svc_env[f"VC_{key}_NUM"] = str(t["replicas"])
            svc_files[f"/etc/volcano/{t['name']}.host"] = "\n".join(task_hosts[t["name"]])

    pods = []
    for t in tasks:
        template = t["template"]
        for i in range(t["replicas"]):
            pod_name = f"{name}-{t['name']}-{i}"
            labels = dict(template.get("metadata", {}).get("labels", {}))
            labels.update({"volcano.sh/job-name": name, "volcano.sh/task-spec": t["name"],
                           VOLCANO_INDEX_LABEL: str(i), "volcano.sh/job-namespace": ns})
            appended: list[tuple[str, str]] = []
            if "env" in plugins:
                appended += [("VK_TASK_INDEX", str(i)), ("VC_TASK_INDEX", str(i))]
            appended += sorted(svc_env.items())
            if "tensorflow" in plugins and not (len(tasks) == 1 and tasks[0]["replicas"] == 1):
                flags = _flags(plugins["tensorflow"], {"ps": "ps", "worker": "worker", "chief": "chief",
                                                       "evaluator": "evaluator", "port": "2222"})
                cluster = {}
                for key in ("ps", "worker", "chief", "evaluator"):
                    hosts = [f"{h}:{flags['port']}" for h in task_hosts.get(flags[key], [])]
                    if hosts:
                        cluster[key] = hosts
                task_type = next((k for k in ("chief", "worker", "ps", "evaluator") if flags[k] == t["name"]),
                                 t["name"])
                appended.append(("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": task_type,
                                                                                        "index": i}},
                                                         separators=(",", ":"))))
            if "pytorch" in plugins:
                flags = _flags(plugins["pytorch"], {"master": "master", "worker": "worker", "port": "23456"})
                if flags["master"] in task_hosts:
                    world = sum(x["replicas"] for x in tasks if x["name"] in (flags["master"], flags["worker"]))
                    appended += [("MASTER_ADDR", task_hosts[flags["master"]][0]), ("MASTER_PORT", flags["port"]),
                                 ("WORLD_SIZE", str(world))]
                    if t["name"] == flags["worker"]:
                        appended.append(("RANK", str(i + 1)))
                    elif t["name"] == flags["master"]:
                        appended.append(("RANK", "0"))
            if "mpi" in plugins:
                flags = _flags(plugins["mpi"], {"master": "master", "worker": "worker", "port": "22"})
                if t["name"] == flags["master"]:
                    appended.append(("MPI_HOST", ",".join(task_hosts.get(flags["worker"], []))))
            container = template["spec"]["containers"][0]
            env = kubelet_env(container, labels, {}, cms, appended, f"10.1.{len(pods)}.{i}")
            files = dict(svc_files)
            files.update(_mounted_files(template["spec"], container, cms))
            role = labels.get("trainspec.dev/role", t["name"])
            pods.append(Pod(pod_name, role, host(t, i), env, kubelet_command(container.get("command"), env),
                            kubelet_command(container.get("args"), env), files, labels))
    return pods
