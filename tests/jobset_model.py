"""What the JobSet and Indexed Job controllers make of a JobSet, per pod: the product's
controller (trainspec.emulator.readers.controllers.jobset, written from CONVENTIONS-V2.md §1.2-1.4
JobSet v0.12.0 and §2 Indexed Job), with the kubelet played by tests/operator_model.py.

  * replicatedJob r with `replicas` R stamps Jobs `<js>-<r>-<j>`, j < R;
  * an Indexed Job with `completions` C makes pods with index i < C, hostname
    `<js>-<r>-<j>-<i>`, subdomain `network.subdomain` (default: the JobSet name),
    so the pod is reachable as `<js>-<r>-<j>-<i>.<subdomain>`;
  * pod labels and annotations: the template's, plus `jobset.sigs.k8s.io/*` and the
    completion index `batch.kubernetes.io/job-completion-index`;
  * JobSet injects no env; the Job controller appends JOB_COMPLETION_INDEX.
The emulator runs the same pods (and applies the success/failure rules, not compared here).
"""

from __future__ import annotations

from operator_model import Pod, _pods


def jobset_pods(docs: list[dict]) -> list[Pod]:
    js = next(d for d in docs if d.get("kind") == "JobSet")
    assert (js["spec"].get("network") or {}).get("enableDNSHostnames"), "without DNS hostnames no pod has a stable name"
    for rj in js["spec"]["replicatedJobs"]:
        job_spec = rj["template"]["spec"]
        assert job_spec.get("completionMode") == "Indexed"
        assert job_spec.get("parallelism", job_spec["completions"]) == job_spec["completions"], \
            "every replica runs at once"
    return _pods(docs, lambda d: d.get("kind") == "JobSet")
