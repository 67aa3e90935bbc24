"""What each framework's operator injects, reproduced for targets without an operator.

Rules and formats follow shared/reference/CONVENTIONS.md (Kubeflow training
operator 1.9 / 1.8 for MXNet, mpi-operator v2beta1), except where PRODUCT.md
differs: TF_CONFIG is given to every replica (also a single worker), and the
evaluator is not listed in the cluster, as TensorFlow documents.  XGBoost,
Paddle and JAX follow CONVENTIONS-V2.md §4 (training operator release-1.9,
pkg/controller.v1/{xgboost,paddlepaddle,jax}): see `operator_env`.
"""

from __future__ import annotations

import json

from .model import GENERIC, GENERIC_CONTAINER
from .plan import EnvVar, FieldRef, StartAfter, SuccessRule

CONTAINER_NAME = {"tensorflow": "tensorflow", "pytorch": "pytorch", "mxnet": "mxnet", "mpi": "mpi",
                  "xgboost": "xgboost", "paddle": "paddle", "jax": "jax", GENERIC: GENERIC_CONTAINER}
# Kinds whose operator requires its default container name (the training operator's webhooks, and it
# injects the env and finds the port there: CONVENTIONS.md §1.0); mpi-operator takes the first container.
OPERATOR_CONTAINER_FRAMEWORKS = ("tensorflow", "pytorch", "mxnet", "xgboost", "paddle", "jax")
DEFAULT_RESTART: dict[str, dict[str, str]] = {
    "tensorflow": {},
    "pytorch": {},
    "mxnet": {},
    "mpi": {"launcher": "OnFailure", "worker": "Never"},
    "xgboost": {},
    "paddle": {},
    "jax": {},
    GENERIC: {},
}
FRAMEWORK_DEFAULT_RESTART = {"tensorflow": "Never", "pytorch": "OnFailure", "mxnet": "Never", "mpi": "Never",
                             "xgboost": "Never", "paddle": "OnFailure", "jax": "Never", GENERIC: "Never"}
# Frameworks whose operator (Kubeflow v1) injects `operator_env`'s variables.
OPERATOR_ENV_FRAMEWORKS = ("xgboost", "paddle", "jax")
POD_IP_VAR = "POD_IP_DUMMY"  # paddle: the rendezvous replica announces its own pod IP
MPI_HOSTFILE_PATH = "/etc/mpi/hostfile"
MPI_SSH_PATH = "/root/.ssh"
MPI_WORKER_COMMAND = ("/usr/sbin/sshd", "-De")
TF_CLUSTER_KEY = "TRAINSPEC_TF_CLUSTER"
HOSTFILE_KEY = "hostfile"


def hosts_key(role: str) -> str:
    return f"TRAINSPEC_HOSTS_{env_role(role)}"


def env_role(role: str) -> str:
    return role.upper().replace("-", "_")


# Volcano's tensorflow plugin marshals a Go struct: its fields' order, not sorted keys.
TF_STRUCT_ORDER = ("ps", "worker", "chief", "evaluator")


def tf_cluster(addresses: dict[str, list[str]], evaluator: bool = False, struct_order: bool = False) -> str:
    """The TF_CONFIG cluster as compact JSON: role -> ["host:port", ...], roles without replicas left out.

    Keys sorted (Go's json.Marshal of a map: the training operator), or in the Volcano
    plugin's struct order.  `evaluator`: list the evaluator too (the operators do;
    PRODUCT.md and TensorFlow's docs do not, so the plan's own cluster leaves it out).
    """
    roles = [r for r in TF_STRUCT_ORDER if r in addresses] if struct_order else sorted(addresses)
    cluster = {role: addresses[role] for role in roles if addresses[role] and (evaluator or role != "evaluator")}
    return json.dumps(cluster, separators=(",", ":"))


def tf_config(cluster: str, role: str, index: int, environment: bool = True) -> str:
    """TF_CONFIG around a cluster given as JSON text (or a `$(VAR)` reference that expands to it)."""
    task = json.dumps({"type": role, "index": index}, separators=(",", ":"))
    return f'{{"cluster":{cluster},"task":{task}' + (',"environment":"cloud"}' if environment else "}")


def mpi_hostfile(hosts: list[str], slots: int, implementation: str) -> str:
    if implementation == "OpenMPI":
        return "".join(f"{host} slots={slots}\n" for host in hosts)
    return "".join(f"{host}:{slots}\n" for host in hosts)


# The operators' success rules, as data: per framework, the first entry whose condition holds.
# (condition, rule); a condition is ("has", role): the job has replicas of role, ("policy", p): the
# tensorflow successPolicy is p, or None: always.  The Helm chart's copy is generated from this table
# (targets/helm/chart_rules.py), the emulator and the Volcano target read the plan's SuccessRule.
SUCCESS_RULES: dict[str, tuple[tuple[tuple[str, str] | None, SuccessRule], ...]] = {
    "tensorflow": ((("has", "chief"), SuccessRule("chief")),
                   (("policy", "AllWorkers"), SuccessRule("worker", "all")),
                   (None, SuccessRule("worker"))),
    # no master: an elastic (worker-only) job; the operator: every worker, or under elastic any one
    # (we wait for every worker: torchrun's agents finish together)
    "pytorch": ((("has", "master"), SuccessRule("master")), (None, SuccessRule("worker", "all"))),
    "mxnet": ((None, SuccessRule("scheduler")),),
    "mpi": ((None, SuccessRule("launcher")),),
    "xgboost": ((None, SuccessRule("master")),),
    # paddle: PS mode completes when every master has (expected == 0), collective mode when every worker has
    "paddle": ((("has", "master"), SuccessRule("master", "all")), (None, SuccessRule("worker", "all"))),
    "jax": ((None, SuccessRule("worker", "all")),),
    # generic: spec.success says (`generic_success`); unsaid, every replica of every role (role "")
    GENERIC: ((None, SuccessRule("", "all")),),
}


def generic_success(success) -> SuccessRule:
    """spec.success of a generic job (model.GenericSuccess or None) as the plan's rule."""
    if success is None:
        return SuccessRule("", "all")
    return SuccessRule(success.role, "any" if success.policy == "AnyReplica" else "all")


def success_rule(framework: str, roles: dict[str, int], success_policy: str | None) -> SuccessRule:
    """The job's success rule (Kubeflow training operator / mpi-operator semantics)."""
    for condition, rule in SUCCESS_RULES[framework]:
        if condition is None or (condition[0] == "has" and roles.get(condition[1])) or \
                (condition[0] == "policy" and success_policy == condition[1]):
            return rule
    raise AssertionError(f"no success rule for {framework}")  # every table ends with an unconditional rule


# Roles that serve the others and do not exit when the job's decider succeeds (a TF
# parameter server joins forever, MXNet servers wait for the scheduler's shutdown, mpi-operator's
# workers run `sshd -De`): only a controller (Kubeflow, Volcano, JobSet) stops them.
LINGERING_ROLES: dict[str, tuple[str, ...]] = {
    "tensorflow": ("ps",),
    "mxnet": ("server",),
    "mpi": ("worker",),
}


# Roles that must be up before another starts: mpirun reaches every worker over ssh at once.
# A table (not code) so the chart's run policy is generated from it (targets/helm/chart_rules.py).
START_AFTER: dict[str, tuple[StartAfter, ...]] = {"mpi": (StartAfter("launcher", ("worker",)),)}


def start_order(framework: str, roles: dict[str, int]) -> tuple[StartAfter, ...]:
    """START_AFTER's rules for `framework`, each waiting only for the roles that have replicas."""
    out = []
    for rule in START_AFTER.get(framework, ()):
        after = tuple(r for r in rule.after if roles.get(r))
        if after:
            out.append(StartAfter(rule.role, after))
    return tuple(out)


def framework_env(framework: str, job: str, role: str, index: int, counts: dict[str, int],
                  ports: dict[str, int], nproc: str | None, implementation: str, slots: int | None,
                  elastic=None, lists: dict[tuple[str, int], str] | None = None) -> list[EnvVar]:
    if framework == "tensorflow":
        return [
            EnvVar(TF_CLUSTER_KEY, topology=TF_CLUSTER_KEY),
            EnvVar("TF_CONFIG", expand=tf_config(f"$({TF_CLUSTER_KEY})", role, index)),
        ]
    if framework == "pytorch":
        nproc_text = nproc or "auto"
        per_node = int(nproc_text) if nproc_text.isdigit() else 1
        total = sum(counts.values())
        rank = index if role == "master" else index + 1
        master = f"{job}-master-0"
        port = str(ports.get("master", 0))
        head = [EnvVar("MASTER_ADDR", master), EnvVar("MASTER_PORT", port), EnvVar("WORLD_SIZE", str(total * per_node)),
                EnvVar("RANK", str(rank)), EnvVar("PET_MASTER_ADDR", master), EnvVar("PET_MASTER_PORT", port)]
        if elastic is not None or not counts.get("master"):
            master_env = head + [EnvVar("PET_NODE_RANK", str(rank))] if counts.get("master") else []
            return pytorch_elastic_env(elastic, f"{job}-worker-0", counts, ports, nproc, master_env)
        return [EnvVar("PYTHONUNBUFFERED", "1")] + head + [
            EnvVar("PET_NNODES", str(total)),
            EnvVar("PET_NODE_RANK", str(rank)),
            EnvVar("PET_NPROC_PER_NODE", nproc_text),
        ]
    if framework == "mxnet":
        env = [
            EnvVar("DMLC_ROLE", role),
            EnvVar("DMLC_PS_ROOT_URI", f"{job}-scheduler-0"),
            EnvVar("DMLC_PS_ROOT_PORT", str(ports["scheduler"])),
            EnvVar("DMLC_NUM_SERVER", str(counts.get("server", 0))),
            EnvVar("DMLC_NUM_WORKER", str(counts.get("worker", 0))),
            EnvVar("DMLC_USE_KUBERNETES", "1"),
        ]
        if role == "worker":
            env.append(EnvVar("DMLC_WORKER_ID", str(index)))
        return env
    if framework == GENERIC:
        return []  # only what every replica gets (TRAINSPEC_*) and the target's own conventions
    if framework in OPERATOR_ENV_FRAMEWORKS:
        return operator_env(framework, role, index, counts, ports, lambda r, i: f"{job}-{r}-{i}", job, lists)
    # mpi
    env = [EnvVar("K_MPI_JOB_ROLE", role)]
    if role == "launcher":
        env += mpi_launcher_env(implementation, slots)
    return env


def pytorch_elastic_env(elastic, rdzv_host: str, counts: dict[str, int], ports: dict[str, int], nproc: str | None,
                        master_env: list[EnvVar] | None) -> list[EnvVar]:
    """What the training operator gives a PyTorchJob with an elasticPolicy (pytorch/elastic.go, envvar.go):
    PET_RDZV_* for torchrun's rendezvous on worker-0, PET_NNODES=min:max; the master's variables
    (`master_env`) only when the job has a master."""
    workers = counts.get("worker", 0)
    low = elastic.min_replicas if elastic and elastic.min_replicas is not None else workers
    high = elastic.max_replicas if elastic and elastic.max_replicas is not None else workers
    port = elastic.rdzv_port if elastic and elastic.rdzv_port else ports.get("worker", 0)
    env = [EnvVar("PYTHONUNBUFFERED", "1")] + list(master_env or ())
    env += [EnvVar("PET_NPROC_PER_NODE", nproc or "auto"),
            EnvVar("PET_RDZV_ENDPOINT", f"{rdzv_host}:{port}"),
            EnvVar("PET_RDZV_BACKEND", elastic.rdzv_backend if elastic else "c10d"),
            EnvVar("PET_NNODES", f"{low}:{high}")]
    if elastic is not None and elastic.max_restarts is not None:
        env.append(EnvVar("PET_MAX_RESTARTS", str(elastic.max_restarts)))
    return env


def mpi_launcher_env(implementation: str, slots: int | None) -> list[EnvVar]:
    """What mpi-operator gives the launcher for its MPI implementation (the hostfile and slots)."""
    slots_text = str(slots or 1)
    if implementation == "OpenMPI":
        return [
            EnvVar("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
            EnvVar("OMPI_MCA_orte_default_hostfile", MPI_HOSTFILE_PATH),
            EnvVar("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
            EnvVar("OMPI_MCA_orte_set_default_slots", slots_text),
        ]
    if implementation == "Intel":
        return [EnvVar("I_MPI_HYDRA_HOST_FILE", MPI_HOSTFILE_PATH), EnvVar("I_MPI_PERHOST", slots_text)]
    return [EnvVar("HYDRA_HOST_FILE", MPI_HOSTFILE_PATH)]


def host_list(host, role: str, count: int, lists: dict[tuple[str, int], str] | None) -> str:
    """`host(role, 0), ..., host(role, count - 1)` joined by commas, taken from (and kept in) `lists`
    when given: every replica of a job carries the same list, so building it once per job is what
    keeps that job's env linear in its size rather than quadratic."""
    if lists is not None and (role, count) in lists:
        return lists[(role, count)]
    text = ",".join(host(role, i) for i in range(count))
    if lists is not None:
        lists[(role, count)] = text
    return text


def operator_env(framework: str, role: str, index: int, counts: dict[str, int], ports: dict[str, int],
                 host, job: str, lists: dict[tuple[str, int], str] | None = None) -> list[EnvVar]:
    """What the Kubeflow v1 XGBoostJob / PaddleJob / JAXJob controller appends to a replica's env,
    in its order (CONVENTIONS-V2.md §4).  `host(role, index)` names a replica (the operator's
    `<job>-<role>-<i>`; Volcano's svc-plugin names there); `job` is the job's name; `lists`: the
    joined host lists built so far for this job and naming (`host_list`), shared across its replicas.

    xgboost (controller.v1/xgboost/xgboost.go SetPodEnv): RANK is the index, plus the master
    count on workers; WORKER_* only when the job has more than one replica, listing
    Σ-1 worker names (the master count is 1).
    paddle (controller.v1/paddlepaddle/envvar.go): the rendezvous replica is master 0 (PS mode)
    or worker 0 (collective mode, no master role); it gets its own pod IP, the others its name.
    jax (controller.v1/jax/envvar.go): the coordinator is worker 0, its short name without port.
    """
    total = sum(counts.values())
    if framework == "xgboost":
        rank = index + (counts.get("master", 0) if role == "worker" else 0)
        env = [EnvVar("MASTER_PORT", str(ports["master"])), EnvVar("MASTER_ADDR", host("master", 0)),
               EnvVar("WORLD_SIZE", str(total)), EnvVar("RANK", str(rank)), EnvVar("PYTHONUNBUFFERED", "1")]
        if total > 1:
            env += [EnvVar("WORKER_PORT", str(ports["worker"])),
                    EnvVar("WORKER_ADDRS", host_list(host, "worker", total - 1, lists))]
        return env
    if framework == "paddle":
        env = [EnvVar("PYTHONUNBUFFERED", "1"), EnvVar("PADDLE_JOB_ID", job), EnvVar("PADDLE_NNODES", str(total))]
        ps = counts.get("master", 0) > 0
        rendezvous = "master" if ps else "worker"
        port = ports[rendezvous]
        if role == rendezvous and index == 0:
            env += [EnvVar(POD_IP_VAR, field=FieldRef("status.podIP")),
                    EnvVar("PADDLE_MASTER", expand=f"$({POD_IP_VAR}):{port}")]
        else:
            env.append(EnvVar("PADDLE_MASTER", f"{host(rendezvous, 0)}:{port}"))
        if ps:
            env.append(EnvVar("PADDLE_SERVER_NUM" if role == "master" else "PADDLE_TRAINER_NUM", "1"))
        return env
    # jax
    return [EnvVar("PYTHONUNBUFFERED", "1"), EnvVar("COORDINATOR_PORT", str(ports["worker"])),
            EnvVar("COORDINATOR_ADDRESS", host("worker", 0)), EnvVar("NUM_PROCESSES", str(total)),
            EnvVar("PROCESS_ID", str(index))]
