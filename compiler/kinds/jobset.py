"""JobSet (jobset.x-k8s.io/v1alpha2), as targets/jobset writes it and the importer, the emulator and
Trainer v2's runtimes read it."""

from __future__ import annotations

from typing import Any

from . import OperatorKind, Readers, matching

GROUP = "jobset.x-k8s.io"
API_VERSION = f"{GROUP}/v1alpha2"
JOBSET = OperatorKind("JobSet", API_VERSION, "jobsets", provider="JobSet (jobset.x-k8s.io)", instead="k8s")
KINDS: tuple[OperatorKind, ...] = (JOBSET,)
# Where its readers live (compiler/kinds/__init__.py: Readers).
READERS = Readers("trainspec.importer.jobset:import_job",
                  "trainspec.emulator.readers.controllers.jobset:controller",
                  "trainspec.cluster.status:jobset_expected")


def matches(doc: Any) -> bool:
    return matching(KINDS, doc)


# jobset pkg/webhooks/jobset_webhook.go defaultRuleNameFmt
DEFAULT_RULE_NAME = "failurePolicyRule{}"


def admitted(doc: dict) -> dict:
    """`doc` as the JobSet mutating webhook (jobSetWebhook.Default) leaves it, which the API server applies
    before it validates the object against the CRD's schema: a failure rule's name (which the schema
    requires), the success and startup policies, Indexed completion, OnFailure pods and DNS hostnames.
    A new mapping: `doc` is not changed."""
    import copy

    spec = doc.get("spec")
    if not isinstance(spec, dict):
        return doc
    out = copy.deepcopy(doc)
    spec = out["spec"]
    if spec.get("successPolicy") is None:
        spec["successPolicy"] = {"operator": "All"}
    if spec.get("startupPolicy") is None:
        spec["startupPolicy"] = {"startupPolicyOrder": "AnyOrder"}
    rjobs = spec.get("replicatedJobs")
    for rjob in rjobs if isinstance(rjobs, list) else ():
        job = rjob.get("template") if isinstance(rjob, dict) else None
        job = job.get("spec") if isinstance(job, dict) else None
        if not isinstance(job, dict):
            continue
        if job.get("completionMode") is None:
            job["completionMode"] = "Indexed"
        pod = job.get("template")
        pod = pod.get("spec") if isinstance(pod, dict) else None
        if isinstance(pod, dict) and pod.get("restartPolicy") in (None, ""):  # a wrong type is the schema's to refuse
            pod["restartPolicy"] = "OnFailure"
    if spec.get("network") is None:
        spec["network"] = {}
    network = spec["network"]
    if isinstance(network, dict):
        for field in ("enableDNSHostnames", "publishNotReadyAddresses"):
            if network.get(field) is None:
                network[field] = True
    policy = spec.get("failurePolicy")
    rules = policy.get("rules") if isinstance(policy, dict) else None
    for n, rule in enumerate(rules if isinstance(rules, list) else ()):
        if isinstance(rule, dict) and rule.get("name") in (None, ""):
            rule["name"] = DEFAULT_RULE_NAME.format(n)
    return out
