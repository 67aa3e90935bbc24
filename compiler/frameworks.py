"""What each framework's operator injects, reproduced for targets without an operator.

Rules and formats follow shared/reference/CONVENTIONS.md (Kubeflow training
operator 1.9 / 1.8 for MXNet, mpi-operator v2beta1), except where PRODUCT.md
differs: TF_CONFIG is given to every replica (also a single worker), and the
evaluator is not listed in the cluster, as TensorFlow documents.
"""

from __future__ import annotations

import json

from .plan import EnvVar, StartAfter, SuccessRule

CONTAINER_NAME = {"tensorflow": "tensorflow", "pytorch": "pytorch", "mxnet": "mxnet", "mpi": "mpi"}
DEFAULT_RESTART = {
    "tensorflow": {},
    "pytorch": {},
    "mxnet": {},
    "mpi": {"launcher": "OnFailure", "worker": "Never"},
}
FRAMEWORK_DEFAULT_RESTART = {"tensorflow": "Never", "pytorch": "OnFailure", "mxnet": "Never", "mpi": "Never"}
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
# (targets/helm_rules.py), the emulator and the Volcano target read the plan's SuccessRule.
SUCCESS_RULES: dict[str, tuple[tuple[tuple[str, str] | None, SuccessRule], ...]] = {
    "tensorflow": ((("has", "chief"), SuccessRule("chief")),
                   (("policy", "AllWorkers"), SuccessRule("worker", "all")),
                   (None, SuccessRule("worker"))),
    "pytorch": ((None, SuccessRule("master")),),
    "mxnet": ((None, SuccessRule("scheduler")),),
    "mpi": ((None, SuccessRule("launcher")),),
}


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


def start_order(framework: str, roles: dict[str, int]) -> tuple[StartAfter, ...]:
    """Roles that must be up before another starts: mpirun reaches every worker over ssh at once."""
    if framework == "mpi" and roles.get("worker"):
        return (StartAfter("launcher", ("worker",)),)
    return ()


def framework_env(framework: str, job: str, role: str, index: int, counts: dict[str, int],
                  ports: dict[str, int], nproc: str | None, implementation: str, slots: int | None) -> list[EnvVar]:
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
        port = str(ports["master"])
        return [
            EnvVar("PYTHONUNBUFFERED", "1"),
            EnvVar("MASTER_ADDR", master),
            EnvVar("MASTER_PORT", port),
            EnvVar("WORLD_SIZE", str(total * per_node)),
            EnvVar("RANK", str(rank)),
            EnvVar("PET_MASTER_ADDR", master),
            EnvVar("PET_MASTER_PORT", port),
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
    # mpi
    env = [EnvVar("K_MPI_JOB_ROLE", role)]
    if role == "launcher":
        env += mpi_launcher_env(implementation, slots)
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
