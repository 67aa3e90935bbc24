"""How each trainspec framework maps onto a Kubeflow Trainer v2 ML policy: data the trainjob target's
checks and renderer both read."""

from typing import NamedTuple


class TrainerRuntime(NamedTuple):
    """How one trainspec framework maps onto a Kubeflow Trainer v2 ML policy (read by render.py and checks.py)."""

    policy: str  # mlPolicy key and trainer.kubeflow.org/framework label
    node_roles: tuple[str, ...]  # spec roles whose replicas are the `node` Job's pods, in rank order
    trainer_role: str  # the spec role whose container spec.trainer overrides (ancestor `trainer`)
    reserved_env: tuple[str, ...] = ()  # names Trainer's webhook rejects in trainer.env
    implementations: tuple[str, ...] = ()  # MPI implementations Trainer implements


# framework -> runtime.  Frameworks whose node_roles are all on one `node` Job (torch, jax, xgboost) run
# every node from one pod template: the first role's replica 0 is node 0 (master, coordinator, tracker).
TRAINER_RUNTIMES: dict[str, TrainerRuntime] = {
    "pytorch": TrainerRuntime("torch", ("master", "worker"), "master",
                              ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR",
                               "PET_MASTER_PORT")),
    "mpi": TrainerRuntime("mpi", ("worker",), "launcher",
                          ("OMPI_MCA_orte_default_hostfile", "OMPI_MCA_orte_keep_fqdn_hostnames",
                           "OMPI_MCA_orte_set_default_slots", "OMPI_MCA_plm_rsh_args"), ("OpenMPI",)),
    "jax": TrainerRuntime("jax", ("worker",), "worker"),  # JAX_*: no reserved-name check in Trainer
    "xgboost": TrainerRuntime("xgboost", ("master", "worker"), "master",
                              ("DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER")),
}
TRAINER_OTHER_TARGETS = "jobset, kubeflow, volcano, k8s, helm or compose"
NODE_FRAMEWORKS = {"pytorch": "PyTorch", "xgboost": "XGBoost"}  # master + workers as one `node` Job
