"""A spec v1.3 job on a Trainer runtime, given the runtime's definition (--runtime), as plain Kubernetes
objects: what the JobSet controller would create from the JobSet the Trainer controller makes of it.

compiler/runtimes.py `expand` gives that JobSet (Trainer's part, with its sources); its replicatedJobs
become the child Jobs JobSet creates, as kubernetes-sigs/jobset v0.12.0 does (jobset_controller.go
constructJob, placement.go GenJobName, labelAndAnnotateObject; shared/reference/CONVENTIONS-V2.md §1):
  * Job `<js>-<rj>-<j>` for each of a replicatedJob's `replicas`, its template as written (Indexed),
    labels and pod labels `jobset.sigs.k8s.io/{jobset-name, replicatedjob-name, job-index}`;
  * the pods' subdomain the JobSet's name (network.enableDNSHostnames, the default), so pod i of a Job
    is `<js>-<rj>-<j>-<i>.<js>` (PET_MASTER_ADDR is node 0's), through the headless Service `<js>`
    (publishNotReadyAddresses, selecting `jobset.sigs.k8s.io/jobset-name`);
  * JOB_COMPLETION_INDEX is the Indexed Job's own.
What a plain cluster does not do (no JobSet controller): the JobSet's failure and success policies, so
a failed node does not stop the others — the header says so, as for any k8s output.
"""

from __future__ import annotations

import copy

from trainspec.compiler.plan import JobPlan

PREFIX = "jobset.sigs.k8s.io/"


def objects(plan: JobPlan) -> list[dict]:
    from ..jobset.render import on_runtime_objects

    js, *extra = on_runtime_objects(plan)
    name = js["metadata"]["name"]
    ns = js["metadata"].get("namespace")
    labels = dict(js["metadata"].get("labels") or {})
    meta = {"name": name, **({"namespace": ns} if ns else {}), "labels": labels}
    out: list[dict] = [*extra, {"apiVersion": "v1", "kind": "Service", "metadata": copy.deepcopy(meta),
                                "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                                         "selector": {PREFIX + "jobset-name": name}}}]
    network = (js["spec"].get("network") or {})
    subdomain = network.get("subdomain") or name
    for rjob in js["spec"]["replicatedJobs"]:
        for j in range(int(rjob.get("replicas", 1))):
            job_labels = {**labels, PREFIX + "jobset-name": name, PREFIX + "replicatedjob-name": rjob["name"],
                          PREFIX + "job-index": str(j)}
            template = copy.deepcopy(rjob["template"])
            spec = template.setdefault("spec", {})
            spec.setdefault("completionMode", "Indexed")
            pod = spec.setdefault("template", {})
            pod_meta = pod.setdefault("metadata", {})
            pod_meta["labels"] = {**(pod_meta.get("labels") or {}), **job_labels}
            pod_spec = pod.setdefault("spec", {})
            pod_spec.setdefault("restartPolicy", "OnFailure")  # JobSet's webhook default
            if network.get("enableDNSHostnames", True):
                pod_spec["subdomain"] = subdomain
            job_meta = {"name": f"{name}-{rjob['name']}-{j}", **({"namespace": ns} if ns else {}),
                        "labels": {**((template.get("metadata") or {}).get("labels") or {}), **job_labels}}
            out.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta, "spec": spec})
    return out
