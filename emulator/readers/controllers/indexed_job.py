"""A hand-written Job of several pods in a k8s.yaml, as the pods the Job controller creates.

The k8s reader (from_k8s.py) runs one pod per Job, as the compiler writes them. An Indexed Job
(`completionMode: Indexed`, completions N) becomes N pods here, as the Job controller makes them
(kubernetes pkg/controller/job/indexed_job_utils.go, job_controller.go): index i has the label
and annotation `batch.kubernetes.io/job-completion-index`, JOB_COMPLETION_INDEX in every container
that lacks it, and the hostname `<job>-<i>` unless the template sets one; all N share the Job's
backoffLimit (jobcount.py, through the owner annotation pod_wrapper writes), backoffLimitPerIndex,
maxFailedIndexes, podFailurePolicy and activeDeadlineSeconds. The Job completes when every index
succeeded (the run's rule for a plain Job: every replica). Not reproduced: `parallelism` below
`completions` (every index runs at once) and the Job's `successPolicy` (the run's success rule, from
the k8s target's run-policy annotation, decides instead). A StatefulSet (the k8s target's role of
restartPolicy Always) becomes its `replicas` pods the same way (`expand_stateful_set`): pod i named
and hostnamed `<name>-<i>` under the subdomain `serviceName`, its ordinal in the label
`apps.kubernetes.io/pod-index`, restarted always. A NonIndexed Job of several
pods (interchangeable pods, `completions` of which must succeed) is refused.
"""

from __future__ import annotations

from .. import positions
from . import append_env, fail, pod_wrapper
from .jobset import INDEX_KEY

JOB_FIELDS = ("backoffLimitPerIndex", "maxFailedIndexes", "podFailurePolicy", "activeDeadlineSeconds")


def expand(doc: dict, job: str, source: str) -> list[dict]:
    """The one-pod Jobs the k8s reader reads for `doc` (a Job of trainspec job `job`): `[doc]` for a Job of one pod."""
    spec = doc.get("spec") or {}
    if doc.get("kind") == "StatefulSet" and isinstance(spec, dict):
        return expand_stateful_set(doc, job)
    if doc.get("kind") != "Job" or not isinstance(spec, dict):
        return [doc]
    completions = int(spec.get("completions", spec.get("parallelism", 1)) or 0)
    parallelism = int(spec.get("parallelism", 1))
    if completions <= 1 and parallelism <= 1 and spec.get("completionMode") != "Indexed":
        return [doc]  # a Job of one pod (an Indexed one of one pod still gets its index and hostname)
    meta = doc.get("metadata") or {}
    name, ns = str(meta.get("name") or ""), str(meta.get("namespace") or "default")
    if spec.get("completionMode") != "Indexed":
        raise fail(source, doc, ("spec", "completionMode"), f"a NonIndexed Job of several pods (completions "
                   f"{completions}, parallelism {parallelism}) is not reproduced by the emulator",
                   expected="Indexed",
                   hint="use completionMode: Indexed, or one Job per pod as `trainspec compile --target k8s` writes",
                   label=f"Job {name}")
    template = spec.get("template") or {}
    labels = {str(k): str(v) for k, v in ((template.get("metadata") or {}).get("labels") or {}).items()}
    role = labels.get("trainspec.dev/role") or labels.get("app.kubernetes.io/component") \
        or (name[len(job) + 1:] if name.startswith(job + "-") else name)
    first = int(labels.get("trainspec.dev/index", 0)) * completions  # a Job per role: index i of it
    restart = str((template.get("spec") or {}).get("restartPolicy") or "Never")
    fields = {k: spec[k] for k in JOB_FIELDS if k in spec}
    backoff = int(spec.get("backoffLimit", 6 if "backoffLimitPerIndex" not in spec else 2**31 - 1))
    pods: list[dict] = []
    for i in range(completions):
        pod = positions.copy(template)
        pod_spec = pod.setdefault("spec", {})
        for c in [*(pod_spec.get("initContainers") or []), *(pod_spec.get("containers") or [])]:
            if not any(e.get("name") == "JOB_COMPLETION_INDEX" for e in c.get("env") or []):
                append_env(c, [("JOB_COMPLETION_INDEX",
                                {"fieldRef": {"fieldPath": f"metadata.labels['{INDEX_KEY}']"}})])
        pods.append(pod_wrapper(job, f"{name}-{i}", role, first + i, pod, restart=restart, backoff_limit=backoff,
                                hostname=pod_spec.get("hostname") or f"{name}-{i}", labels={INDEX_KEY: str(i)},
                                namespace=ns, owner=name, job_fields=fields))
    return pods


POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def expand_stateful_set(doc: dict, job: str) -> list[dict]:
    """A StatefulSet's pods as the k8s reader's one-pod Deployments (restartPolicy Always): pod i is `<name>-<i>`,
    its hostname the pod name and its subdomain the StatefulSet's `serviceName` (kubernetes
    pkg/controller/statefulset/stateful_set_utils.go newStatefulSetPod, updateIdentity)."""
    spec = doc.get("spec") or {}
    meta = doc.get("metadata") or {}
    name, ns = str(meta.get("name") or ""), str(meta.get("namespace") or "default")
    template = spec.get("template") or {}
    labels = {str(k): str(v) for k, v in ((template.get("metadata") or {}).get("labels") or {}).items()}
    role = labels.get("trainspec.dev/role") or (name[len(job) + 1:] if name.startswith(job + "-") else name)
    out = []
    for i in range(int(spec.get("replicas", 1))):
        pod = positions.copy(template)
        tm = pod.setdefault("metadata", {})
        tm["labels"] = {**labels, POD_INDEX_LABEL: str(i), "trainspec.dev/job": job, "trainspec.dev/role": role,
                        "trainspec.dev/index": str(i)}
        pod_spec = pod.setdefault("spec", {})
        pod_spec["hostname"] = f"{name}-{i}"
        if spec.get("serviceName"):
            pod_spec["subdomain"] = spec["serviceName"]
        pod_spec["restartPolicy"] = "Always"
        out.append({"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": f"{name}-{i}", "namespace": ns, "labels": {"trainspec.dev/job": job}},
                    "spec": {"replicas": 1, "template": pod}})
    return out
