"""What each cluster controller creates from its manifest, as plain Kubernetes objects.

One module per controller (kubeflow_v1.py: the Kubeflow training operator's v1
kinds; mpi_operator.py: MPIJob v2beta1; volcano.py: Volcano's Job controller and
its plugins; jobset.py: JobSet and the Indexed Job controller; trainjob.py:
Kubeflow Trainer v2, TrainJob + TrainingRuntime to a JobSet). Each turns the custom resource into the pods the
controller would create (one `batch/v1` Job wrapper per pod, so the emulator's
k8s reader reads them: from_k8s.py), the Services, ConfigMaps and Secrets it
makes, and the job-level rules it applies (`Created`): who decides success,
the job's backoff and deadline, whole-job restarts, what is removed at the end. The env a
controller injects is appended after the template's own, in its order, so the
kubelet's `$(VAR)` expansion sees it as on a cluster.

tests/operator_model.py reads the same modules: one model of the controllers.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ....compiler.errors import UsageError
from ...model.job import ControllerSuccess, Gate, JobRestart, RestartRule
from .. import positions
from ..positions import field_error

__all__ = ["ControllerSuccess", "Gate", "JobRestart", "RestartRule"]

# exit codes a Kubeflow ExitCode policy treats as permanent (TO train_util.go IsRetryableExitCode: >= 128 retried).
# Kept apart from compiler/kube.py's PERMANENT_EXIT_CODES on purpose: the compiler writes podFailurePolicy
# rules from its table, and the emulator's controller reads the operator's rule on its own, so a wrong
# compiler table shows as a difference between a compiled k8s run and a kubeflow run, not as agreement.
PERMANENT_EXIT_CODES = list(range(1, 128))
UNLIMITED = 1_000_000  # "no backoffLimit" (Kubeflow runPolicy unset): restarts are not counted
# On a pod's Job wrapper: the Job of several pods it belongs to (from_k8s.py reads it into Replica.job_owner)
OWNER = "trainspec.dev/job-owner"


@dataclass
class Created:
    """What a controller made of one manifest."""

    job: str
    namespace: str
    framework: str | None
    objects: list[dict]            # Job wrappers (one per pod), Services, ConfigMaps, Secrets
    success: ControllerSuccess
    clean_pod_policy: str = "None"
    backoff_limit: int | None = None
    active_deadline: float | None = None
    ssh_secrets: list[str] = field(default_factory=list)   # Secrets the controller generates (a fresh key per run)
    # pod -> what the controller waits for before it creates it (JobSet InOrder and dependsOn,
    # MPIJob launcherCreationPolicy, Volcano task dependsOn): startorder.py waits as long as it would
    gates: dict[str, list[Gate]] = field(default_factory=dict)
    # the controller's whole-job restart (JobSet failurePolicy, Volcano RestartJob); run by restarts.py
    restart: JobRestart | None = None
    # what the user should know about how it was read (a Trainer runtime's shipped definition used)
    notes: list[str] = field(default_factory=list)


# What a kind's controller is, as the kinds registry names it (compiler/kinds/: `READERS.controller`):
# `controller(doc)` is the `Make` that acts on `doc`, or None for an object it does not own; a Make takes the
# object, its file, the file's other objects and the --runtime files (a TrainJob finds its runtime in them).
Make = Callable[[dict, str, list[Any], tuple[Any, ...]], "Created"]


def fail(source: str, node: Any, path: tuple, message: str, *, expected: str = "", hint: str = "",
         label: str = "") -> Exception:
    """The controller refuses what the operator would, in the compiler's error shape: at the line and
    column of `path` under the manifest's value `node`, with its field path from the document's root
    (positions.py); `label` names the object when the value has no position (a chart's rendering)."""
    return field_error(source, node, path, message, expected, hint, label)


def meta(doc: dict) -> tuple[str, str]:
    m = doc.get("metadata") or {}
    return str(m.get("name") or ""), str(m.get("namespace") or "default")


def append_env(container: dict, pairs: list[tuple[str, Any]]) -> None:
    """Append the controller's variables after the container's own (a str value or a valueFrom dict)."""
    env = container.setdefault("env", [])
    for name, value in pairs:
        env.append({"name": name, "valueFrom": value} if isinstance(value, dict) else {"name": name, "value": value})


def pod_wrapper(job: str, name: str, role: str, index: int, template: dict, *, restart: str,
                backoff_limit: int, failure_codes: list[int] | None = None, hostname: str | None = None,
                subdomain: str | None = None, labels: dict[str, str] | None = None,
                annotations: dict[str, str] | None = None, namespace: str = "default",
                owner: str | None = None, job_fields: dict[str, Any] | None = None) -> dict:
    """One pod the controller creates, as the k8s reader's `batch/v1` Job of one pod.

    Annotations are copied into the labels too: the emulator's downward API reads labels
    (Kubernetes writes the completion index as both since PodIndexLabel, GA 1.32). `owner`: the
    Job of several pods this one belongs to (a JobSet's Indexed Job), whose backoffLimit counts the
    failures of all of them (jobcount.py); None: a Job of its own, or a pod the controller makes
    itself. `job_fields`: more of that Job's spec the reader honours (backoffLimitPerIndex,
    maxFailedIndexes, podFailurePolicy).
    """
    tmpl = positions.copy(template or {})
    tm = tmpl.setdefault("metadata", {})
    pod_labels = {**(tm.get("labels") or {}), **(annotations or {}), **(labels or {})}
    pod_labels.update({"trainspec.dev/job": job, "trainspec.dev/role": role, "trainspec.dev/index": str(index)})
    tm["labels"] = pod_labels
    pod = tmpl.setdefault("spec", {})
    for c in [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]:
        for e in c.get("env") or []:
            ref = ((e.get("valueFrom") or {}).get("fieldRef") or {})
            if str(ref.get("fieldPath", "")).startswith("metadata.annotations["):
                ref["fieldPath"] = "metadata.labels[" + ref["fieldPath"][len("metadata.annotations["):]
    pod["restartPolicy"] = restart
    if hostname:
        pod["hostname"] = hostname
    if subdomain:
        pod["subdomain"] = subdomain
    spec: dict[str, Any] = {"backoffLimit": backoff_limit, "template": tmpl}
    if failure_codes:
        spec["podFailurePolicy"] = {"rules": [{"action": "FailJob",
                                               "onExitCodes": {"operator": "In", "values": failure_codes}}]}
    spec.update(copy.deepcopy(job_fields or {}))
    job_meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": {"trainspec.dev/job": job}}
    if owner:
        job_meta["annotations"] = {OWNER: owner}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta, "spec": spec}


def main_container(pod_spec: dict, name: str | None) -> dict:
    containers = pod_spec.get("containers") or []
    for c in containers:
        if c.get("name") == name:
            return c
    if not containers:
        raise UsageError("a pod template has no containers")
    return containers[0]


def port_of(container: dict, port_name: str, default: int) -> int:
    for p in container.get("ports") or []:
        if p.get("name") == port_name and "containerPort" in p:
            return int(p["containerPort"])
    return default


def ensure_port(container: dict, port_name: str, port: int) -> None:
    """The operators add their named port to the default container when it is missing."""
    ports = container.setdefault("ports", [])
    if not any(p.get("name") == port_name for p in ports):
        ports.append({"name": port_name, "containerPort": port, "protocol": "TCP"})


def ssh_secret(name: str, namespace: str, keys: dict[str, bytes]) -> dict:
    import base64

    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace},
            "data": {k: base64.b64encode(v).decode() for k, v in keys.items()}}


def kind_of(doc: Any) -> tuple[str, str]:
    if not isinstance(doc, dict):
        return "", ""
    return str(doc.get("apiVersion") or ""), str(doc.get("kind") or "")
