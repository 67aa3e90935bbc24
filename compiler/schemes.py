"""Host naming schemes: the DNS names replicas reach each other by.

The spec's `{{ hosts.<role> }}` must name the hosts the target really creates, and
those differ per target (PRODUCT.md, shared/reference/CONVENTIONS.md).  A scheme is a
function (job, role, index) -> host name.  Each target owns its scheme(s), in its
folder (targets/<name>/scheme.py), and hands the planner the one it uses for a
framework (`TargetRules.scheme`, compiler/target_rules.py); the planner renders the
spec's templates once per distinct scheme of the targets it plans for.

Only the base scheme is here, because the plan's own replicas use it (`Replica.host`):

  service       one headless Service per replica, `<job>-<role>-<i>`
                (the k8s target, the Kubeflow training operator, Helm, Compose)

This module is plain data (no Jinja): targets import it.
"""

from collections.abc import Callable
from typing import NamedTuple

# The scheme of the plan's own replicas (Replica.host) and of the per-replica rendering.
BASE = "service"


class NamingScheme(NamedTuple):
    name: str  # the key of RolePlan.renders
    pattern: str  # for docs and messages
    host: Callable[[str, str, int], str]  # (job, role, index) -> the DNS name peers use
    port: int | None = None  # a port the scheme's system fixes for every host (None: the role's port)
    # (job, role, task, index) -> host, for schemes whose names derive from the target's per-role object
    # name (a Volcano task, a JobSet replicatedJob): spec v1.2's taskName (the role's name when unset)
    named: Callable[[str, str, str, int], str] | None = None

    def address_host(self, job: str, role: str, task: str, index: int) -> str:
        """The host of replica `index` of `role`, whose task (replicatedJob) is named `task`."""
        return self.named(job, role, task, index) if self.named is not None else self.host(job, role, index)


SERVICE = NamingScheme(BASE, "<job>-<role>-<i>", lambda job, role, i: f"{job}-{role}-{i}")


def service_scheme(framework: str) -> NamingScheme:
    """The scheme of a target that names every replica by its own Service, whatever the framework."""
    return SERVICE
