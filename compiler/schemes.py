"""Host naming schemes: the DNS names replicas reach each other by, per target.

The spec's `{{ hosts.<role> }}` must name the hosts the target really creates, and
those differ (PRODUCT.md, shared/reference/CONVENTIONS.md):

  service       one headless Service per replica, `<job>-<role>-<i>`
                (the k8s target, the Kubeflow training operator, Helm, Compose)
  mpi-operator  pods with hostname `<job>-launcher` / `<job>-worker-<i>` and
                subdomain `<job>`: `<job>-launcher.<job>`, `<job>-worker-<i>.<job>`
  subdomain     pod hostname `<job>-<task>-<i>` + subdomain `<job>` (Volcano's svc plugin)

A scheme is a function (job, role, index) -> host name.  The planner renders the
spec's templates once per scheme some target of the framework needs
(`schemes_for`), so a new target adds its scheme with `register` and its
entry in `TARGET_SCHEMES`; e.g. JobSet's `<job>-<role>-0-<i>.<job>`:

    register(NamingScheme("jobset", "<job>-<role>-0-<i>.<job>", lambda job, role, i: f"{job}-{role}-0-{i}.{job}"))
    TARGET_SCHEMES["jobset"] = "jobset"

This module is plain data (no Jinja): targets may import it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

# The scheme of the plan's own replicas (Replica.host) and of the per-replica rendering.
BASE = "service"


class NamingScheme(NamedTuple):
    name: str
    pattern: str  # for docs and messages
    host: Callable[[str, str, int], str]  # (job, role, index) -> the DNS name peers use


SCHEMES: dict[str, NamingScheme] = {}


def register(scheme: NamingScheme) -> NamingScheme:
    SCHEMES[scheme.name] = scheme
    return scheme


register(NamingScheme(BASE, "<job>-<role>-<i>", lambda job, role, i: f"{job}-{role}-{i}"))
register(NamingScheme("mpi-operator", "<job>-launcher.<job>, <job>-worker-<i>.<job>",
                      lambda job, role, i: f"{job}-launcher.{job}" if role == "launcher" else f"{job}-{role}-{i}.{job}"))
register(NamingScheme("subdomain", "<job>-<role>-<i>.<job>", lambda job, role, i: f"{job}-{role}-{i}.{job}"))

# target -> its scheme, or {framework: scheme, "*": default}.
TARGET_SCHEMES: dict[str, str | dict[str, str]] = {
    "k8s": BASE,
    "kubeflow": {"mpi": "mpi-operator", "*": BASE},
    "volcano": "subdomain",
    "helm": BASE,
    "compose": BASE,
}


def scheme_for(target: str, framework: str) -> str:
    """The naming scheme `target` uses for a job of `framework` (the base scheme for unknown targets)."""
    entry = TARGET_SCHEMES.get(target, BASE)
    if isinstance(entry, str):
        return entry
    return entry.get(framework, entry.get("*", BASE))


def schemes_for(framework: str, targets: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The schemes `targets` (None: every known target) need for `framework`, the base scheme first."""
    out = [BASE]
    for target in TARGET_SCHEMES if targets is None else targets:
        scheme = scheme_for(target, framework)
        if scheme not in out:
            out.append(scheme)
    return tuple(out)


def targets_using(scheme: str, framework: str) -> tuple[str, ...]:
    return tuple(t for t in TARGET_SCHEMES if scheme_for(t, framework) == scheme)
