"""The kubeflow target: the training operator's TFJob, PyTorchJob, ... and the mpi-operator's MPIJob.

render.py writes them (imported only to render); checks.py is what the operators refuse;
scheme.py their host names.  The kinds themselves are rows of compiler/kinds/kubeflow.py.
"""

from trainspec.compiler.target_rules import TargetRules

from .checks import check, limits
from .scheme import scheme_for

RULES = TargetRules("kubeflow", scheme_for, check, limits=limits)
