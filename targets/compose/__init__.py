"""The compose target: a Docker Compose file (one service per replica) for one Docker host.

render.py writes it (imported only to render); service_fields.py maps spec v1.1's pod settings to
service keys where Compose has one; checks.py its file-size limit.  Hosts are the replicas' own
names (the compiler's base scheme).
"""

from trainspec.compiler.target_rules import TargetRules

from .checks import limits

RULES = TargetRules("compose", limits=limits)
