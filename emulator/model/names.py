"""Names from the input checked as Kubernetes (or Docker Compose) would, before any engine call.

A job, workload, role or container name becomes a Docker container, network or volume name,
a hostname and a DNS alias, and is printed. The API server refuses a Job named `TF_PS` or one
holding a control character; so does the emulator, before Docker sees it (and an escape
sequence in a name never reaches the terminal as one: the message shows it escaped).
"""

from __future__ import annotations

import re

from ...compiler.errors import UsageError
from ...termsafe import neutralise
from .job import JobModel

DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# Compose: a service or project name (compose-spec: `^[a-zA-Z0-9._-]+$`, Docker's names start alphanumeric).
COMPOSE_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]{0,252}")


def check_names(job: JobModel) -> None:
    kube = job.kubelet_files   # every Kubernetes input; compose keeps Compose's rules
    label = DNS1123_LABEL if kube else COMPOSE_NAME
    subdomain = DNS1123_SUBDOMAIN if kube else COMPOSE_NAME
    rule = ("a DNS-1123 label (lower-case letters, digits, '-', at most 63)" if kube
            else "letters, digits, '_', '.', '-', starting with a letter or digit")
    _one(job.name, subdomain, "job name", job.source, rule)
    if kube:
        _one(job.namespace, DNS1123_LABEL, "namespace", job.source, rule)
    for r in job.replicas:
        _one(r.name, subdomain, "workload name", job.source, rule)
        _one(r.role, label, f"role of {r.name}", job.source, rule)
        _one(r.hostname, DNS1123_LABEL if kube else COMPOSE_NAME, f"hostname of {r.name}", job.source, rule)
        for alias in r.aliases:
            _one(alias, subdomain if kube else COMPOSE_NAME, f"a DNS name of {r.name}", job.source, rule)
        for c in [*r.init_containers, r.main]:
            _one(c.name, label, f"container name in {r.name}", job.source, rule)


def _one(name: str, pattern: re.Pattern[str], what: str, source: str, rule: str) -> None:
    if not isinstance(name, str) or not pattern.fullmatch(name):
        raise UsageError(f"{what} {neutralise(repr(name), False)} is not a valid name", where=source,
                         expected=f"{rule} (the API server refuses it too)")
