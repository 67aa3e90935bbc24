"""A manifest for a cluster controller (Kubeflow, MPI operator, Volcano, JobSet, Trainer v2) read into the run model.

The controller's module (controllers/) makes the objects it would create on a
cluster — one pod per replica with the env it injects, its ConfigMaps and
Secrets — and its job rules; the k8s reader (from_k8s.py) reads those pods as it
reads a compiled k8s.yaml, and the controller's success rule, backoff, deadline
and cleanup replace the ones a k8s.yaml carries in annotations.
"""

from __future__ import annotations

from typing import Any

from ...compiler import kinds
from ...compiler.errors import UsageError
from ...compiler.runtimes import Runtime
from ..model.job import JobModel
from .controllers import Created, Make


def controller(doc: Any) -> Make | None:
    """The controller that acts on this document, or None for an object it does not own: the kinds
    registry says which entry the document is and where that entry's controller lives (compiler/kinds/)."""
    name = kinds.source_of(doc)
    if name is None:
        return None
    found = kinds.reader(name, "controller")
    return None if found is None else found(doc)


def is_operator_input(docs: list[Any]) -> bool:
    return any(controller(d) is not None for d in docs)


def created(docs: list[Any], source: str, job: str | None = None,
            runtimes: tuple[Runtime, ...] = ()) -> tuple[Created, list[dict]]:
    """The one custom resource's Created, and the file's other objects (ConfigMaps, Secrets...)."""
    owned = [d for d in docs if controller(d) is not None]
    if job is not None:
        owned = [d for d in owned if ((d.get("metadata") or {}).get("name")) == job]
        if not owned:
            raise UsageError(f"{source}: no job named {job!r}")
    if len(owned) > 1:
        names = ", ".join(f"{d.get('kind')} {(d.get('metadata') or {}).get('name')}" for d in owned)
        raise UsageError(f"{source} holds {len(owned)} jobs ({names}); choose one with --job NAME")
    doc = owned[0]
    make = controller(doc)
    assert make is not None
    others = [d for d in docs if isinstance(d, dict) and controller(d) is None
              and d.get("kind") in ("ConfigMap", "Secret", "Service")]
    try:
        made = make(doc, source, docs, runtimes)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        # A field of the wrong shape (a list where a map goes, "two" replicas): what the API server's
        # schema would refuse. Said as a usage error, with the object, never a traceback.
        what = f"{doc.get('kind')} {(doc.get('metadata') or {}).get('name')}"
        raise UsageError(f"{source}: {what}: a field has the wrong type or shape ({type(exc).__name__}: {exc}); "
                         f"check it against the {doc.get('apiVersion')} {doc.get('kind')} schema") from None
    return made, others


def from_operator(docs: list[Any], source: str, state_dir: str = ".trainspec", job: str | None = None,
                  secrets: dict[str, dict[str, bytes]] | None = None,
                  configmaps: dict[str, dict[str, bytes]] | None = None,
                  runtimes: tuple[Runtime, ...] = ()) -> JobModel:
    from .k8s import from_k8s
    from .secrets import add_ssh_secrets, ssh_keypair

    made, others = created(docs, source, job, runtimes)
    objects = made.objects + others
    secrets = dict(secrets or {})
    for name in made.ssh_secrets:
        if name not in secrets:
            secrets[name] = ssh_keypair()
    add_ssh_secrets(objects, secrets)
    model = from_k8s(objects, source=source, state_dir=state_dir, job=made.job, secrets=secrets,
                     configmaps=configmaps)
    model.namespace = made.namespace
    model.framework = made.framework
    model.controller = True  # the operator stops the rest once its rule is met (from_k8s says plain k8s)
    model.success = None  # the controller's own rule decides (controller_success), not a SuccessRule
    model.controller_success = made.success
    model.clean_pod_policy = made.clean_pod_policy
    model.backoff_limit = made.backoff_limit
    model.active_deadline = made.active_deadline
    model.restart = made.restart
    model.gates = {pod: tuple(gates) for pod, gates in made.gates.items()}  # the controller creates them later
    model.notes += made.notes
    return model
