"""The volcano target: one Volcano Job (batch.volcano.sh/v1alpha1) with its plugins and policies.

render.py writes it (imported only to render); checks.py is what Volcano cannot express and its
size limit; scheme.py the svc plugin's host names.
"""

from trainspec.compiler.target_rules import TargetRules

from .checks import check, limits
from .scheme import scheme_for

RULES = TargetRules("volcano", scheme_for, check, limits=limits)
