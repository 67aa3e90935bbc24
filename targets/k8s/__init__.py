"""The k8s target: plain Kubernetes objects that run the job with no operator installed.

render.py writes them (`render(plan)`, imported only to render); checks.py says what a plain
cluster leaves running and what names it refuses.  Its hosts are the Indexed Jobs' pods under the
job's headless Service (scheme.py).
"""

from trainspec.compiler.target_rules import TargetRules

from .checks import checks, limits, warnings
from .scheme import scheme_for

RULES = TargetRules("k8s", scheme_for, checks, warnings=warnings, limits=limits, expands_runtime=True)
