"""The helm target: a chart whose default render is exactly the k8s target's objects (or the jobset
target's, `values.workload: jobset`).

render.py writes values.yaml and its schema (imported only to render); chart/ holds the templates,
whose rule code chart_rules.py generates from the compiler's tables and the jobset target's;
pod_values.py the spec v1.1 pod knobs.  It names hosts, checks and warns as the k8s target does (the
same objects).
"""

from trainspec.compiler.target_rules import TargetRules

from ..k8s.checks import check, helm_limits, warnings
from ..k8s.scheme import scheme_for

RULES = TargetRules("helm", scheme_for, check, warnings=warnings, limits=helm_limits)
