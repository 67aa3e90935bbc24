"""A workload written with `suspend: true`: what a cluster does with it.

A suspended batch Job, JobSet or TrainJob (`spec.suspend`) or Kubeflow job
(`spec.runPolicy.suspend`) creates no pods until something sets it to false.
Kueue does that on admission when the object carries the label
`kueue.x-k8s.io/queue-name` (shared/reference/CONVENTIONS-V2.md §5: Kueue's webhook
suspends a managed job and unsuspends it when admitted, jobframework/defaults.go
ApplyDefaultForSuspend). Without the label nothing resumes it on its own (Kueue
fills in the LocalQueue `default` only where one exists), and the job waits forever.

So the emulator runs a queued job as an admitted one, and says so, and refuses one
that nothing would resume, rather than starting it (kinder than the cluster) or
waiting forever.
"""

from __future__ import annotations

from typing import Any

from ...compiler.kinds import batch, jobset, trainjob
from ...compiler.kinds.kubeflow import KUBEFLOW_KIND_NAMES
from .positions import field_error

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
RUN_POLICY_KINDS = KUBEFLOW_KIND_NAMES
SPEC_KINDS = (batch.JOB.kind, jobset.JOBSET.kind, trainjob.TRAINJOB.kind)


def _suspend_field(doc: dict) -> str | None:
    """The dotted field that suspends `doc`, or None."""
    spec = doc["spec"] if isinstance(doc.get("spec"), dict) else {}
    kind = doc.get("kind")
    if kind in RUN_POLICY_KINDS and (spec.get("runPolicy") or {}).get("suspend") is True:
        return "spec.runPolicy.suspend"
    volcano = str(doc.get("apiVersion", "")).startswith("batch.volcano")  # its Job has no suspend field
    if kind in SPEC_KINDS and spec.get("suspend") is True and not volcano:
        return "spec.suspend"
    return None


def check(docs: list[Any], source: str) -> list[str]:
    """Notes for suspended workloads a queue admits; UsageError for one nothing would resume."""
    notes = []
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        where = _suspend_field(doc)
        if where is None:
            continue
        meta = doc.get("metadata") or {}
        name = f"{doc.get('kind')} {meta.get('name', '?')}"
        queue = (meta.get("labels") or {}).get(QUEUE_LABEL)
        if queue:
            notes.append(f"{name} is suspended ({where}: true) until Kueue admits it from LocalQueue {queue!r}: "
                         "run as if admitted now (a cluster starts it once the queue has quota)")
            continue
        raise field_error(source, doc, tuple(where.split(".")), f"is true and the object has no {QUEUE_LABEL} "
                          "label, so on a cluster it creates no pods until something sets it to false (Kueue only "
                          "where a LocalQueue named 'default' exists)",
                          hint=f"drop the suspend (e.g. the spec's patch that adds it), or queue the job: "
                          f"spec.scheduling.queue writes the {QUEUE_LABEL} label", label=name)
    return notes
