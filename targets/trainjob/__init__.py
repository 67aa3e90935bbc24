"""The trainjob target: a Kubeflow Trainer v2 TrainJob and the TrainingRuntime it runs on.

render.py writes them (imported only to render); runtimes.py maps frameworks onto Trainer's ML
policies; checks.py is what those runtimes cannot carry, its CRD's limits and a warning for MPI
under root; scheme.py Trainer's host names.
"""

from trainspec.compiler.target_rules import TargetRules

from .checks import check, limits, trainer_mpi_root_key
from .scheme import scheme_for

RULES = TargetRules("trainjob", scheme_for, check, trainer_mpi_root_key, limits, cluster_runtime=True)
