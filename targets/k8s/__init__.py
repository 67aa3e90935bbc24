"""The k8s target: plain Kubernetes objects that run the job with no operator installed.

render.py writes them (`render(plan)`, imported only to render); checks.py says what a plain
cluster leaves running.  Its hosts are the per-replica Services (the compiler's base scheme).
"""

from trainspec.compiler.target_rules import TargetRules

from .checks import limits, plain_kubernetes_caveat, runtime_checks

RULES = TargetRules("k8s", checks=runtime_checks, warnings=plain_kubernetes_caveat, limits=limits,
                    expands_runtime=True)
