"""The compose target: a Docker Compose file (one service per replica) for one Docker host.

render.py writes it (imported only to render); service_fields.py maps spec v1.1's pod settings to
service keys where Compose has one.  Hosts are the replicas' own names (the compiler's base scheme).
"""

from functools import partial

from trainspec.compiler.limits import problems
from trainspec.compiler.target_rules import TargetRules

RULES = TargetRules("compose", limits=partial(problems, target="compose"))
