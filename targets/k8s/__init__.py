"""The k8s target: plain Kubernetes objects that run the job with no operator installed.

render.py writes them (`render(plan)`, imported only to render); checks.py says what a plain
cluster leaves running.  Its hosts are the per-replica Services (the compiler's base scheme).
"""

from trainspec.compiler.limits import kubernetes_limits
from trainspec.compiler.target_rules import TargetRules

from .checks import plain_kubernetes_caveat, runtime_checks

RULES = TargetRules("k8s", checks=runtime_checks, warnings=plain_kubernetes_caveat, limits=kubernetes_limits,
                    expands_runtime=True)
