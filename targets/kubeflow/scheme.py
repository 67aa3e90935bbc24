"""The kubeflow target's host names: the training operator's per-replica Services, except MPIJob.

  service       `<job>-<role>-<i>` (TFJob, PyTorchJob, ...: the operator's Service per replica)
  mpi-operator  pods with hostname `<job>-launcher` / `<job>-worker-<i>` and subdomain `<job>`:
                `<job>-launcher.<job>`, `<job>-worker-<i>.<job>`
"""

from trainspec.compiler.schemes import SERVICE, NamingScheme

MPI_OPERATOR = NamingScheme("mpi-operator", "<job>-launcher.<job>, <job>-worker-<i>.<job>",
                            lambda job, role, i: f"{job}-launcher.{job}" if role == "launcher"
                            else f"{job}-{role}-{i}.{job}")


def scheme_for(framework: str) -> NamingScheme:
    return MPI_OPERATOR if framework == "mpi" else SERVICE
