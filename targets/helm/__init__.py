"""The helm target: a chart whose default render is exactly the k8s target's objects (or the jobset
target's, `values.workload: jobset`).

render.py writes values.yaml and its schema (imported only to render); chart/ holds the templates,
whose rule code chart_rules.py generates from the compiler's tables and the jobset target's;
pod_values.py the spec v1.1 pod knobs.  It warns as the k8s target does (the same objects).
"""

from trainspec.compiler.target_rules import TargetRules

from ..k8s.checks import helm_limits, plain_kubernetes_caveat

RULES = TargetRules("helm", warnings=plain_kubernetes_caveat, limits=helm_limits)
