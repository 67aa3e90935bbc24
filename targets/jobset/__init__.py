"""The jobset target: one JobSet (jobset.x-k8s.io/v1alpha2) and the topology ConfigMap.

render.py writes them (imported only to render); checks.py is what JobSet refuses; scheme.py
the controller's host names.
"""

from trainspec.compiler.target_rules import TargetRules

from .checks import check, limits
from .scheme import scheme_for

RULES = TargetRules("jobset", scheme_for, check, limits=limits, expands_runtime=True)
