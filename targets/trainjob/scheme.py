"""The trainjob target's host names: Kubeflow Trainer v2's JobSet, at Trainer's fixed port for torch and jax.

  trainjob-torch  torch and xgboost run master and workers as the `node` Job's pods:
                  `<job>-node-0-<k>.<job>:29500` (master k=0, worker i k=i+1)
  trainjob-jax    the workers are the `node` Job's pods (worker i is node i)
  trainjob-mpi    `<job>-launcher-0-0.<job>`, the workers named `node`: `<job>-node-0-<i>.<job>`
"""

from trainspec.compiler.schemes import SERVICE, NamingScheme

TRAINER_PORT = 29500  # Trainer's ContainerTrainerPort: PET_MASTER_PORT for torch

TORCH = NamingScheme("trainjob-torch", "<job>-node-0-<k>.<job>:29500 (master k=0, worker i k=i+1)",
                     lambda job, role, i: f"{job}-node-0-{0 if role == 'master' else i + 1}.{job}", TRAINER_PORT)
JAX = NamingScheme("trainjob-jax", "<job>-node-0-<i>.<job>:29500", lambda job, role, i: f"{job}-node-0-{i}.{job}",
                   TRAINER_PORT)
MPI = NamingScheme("trainjob-mpi", "<job>-launcher-0-0.<job>, <job>-node-0-<i>.<job>",
                   lambda job, role, i: f"{job}-{'node' if role == 'worker' else role}-0-{i}.{job}")

# Trainer v2 has runtimes for torch, mpi, jax and xgboost only (checks.py reports the others);
# xgboost's master + workers are numbered as torch's
SCHEMES: dict[str, NamingScheme] = {"pytorch": TORCH, "xgboost": TORCH, "jax": JAX, "mpi": MPI}


def scheme_for(framework: str) -> NamingScheme:
    return SCHEMES.get(framework, SERVICE)
