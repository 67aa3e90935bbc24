"""A small model of what the JobSet and Indexed Job controllers make of a JobSet, per pod.

Written from shared/reference/CONVENTIONS-V2.md (§1.2-1.4 JobSet v0.12.0, §2
Indexed Job), in the manner of tests/operator_model.py:
  * replicatedJob r with `replicas` R stamps Jobs `<js>-<r>-<j>`, j < R;
  * an Indexed Job with `completions` C makes pods with index i < C, hostname
    `<js>-<r>-<j>-<i>`, subdomain `network.subdomain` (default: the JobSet name),
    so the pod is reachable as `<js>-<r>-<j>-<i>.<subdomain>`;
  * pod labels and annotations: the template's, plus `jobset.sigs.k8s.io/*`
    (jobset-name, replicatedjob-name, replicatedjob-replicas, job-index,
    job-global-index = j + the replicas of earlier replicatedJobs, global-replicas,
    restart-attempt), and the completion index as the annotation (and, with
    PodIndexLabel, GA 1.32, the label) `batch.kubernetes.io/job-completion-index`;
  * JobSet injects no env; the Job controller appends JOB_COMPLETION_INDEX.
Not modelled: start order, success, failure, restarts.
"""

from __future__ import annotations

from operator_model import (
    Pod,
    _config_maps,
    _mounted_files,
    kubelet_command,
    kubelet_env,
)

INDEX_KEY = "batch.kubernetes.io/job-completion-index"
PREFIX = "jobset.sigs.k8s.io/"


def jobset_pods(docs: list[dict]) -> list[Pod]:
    js = next(d for d in docs if d.get("kind") == "JobSet")
    name = js["metadata"]["name"]
    network = js["spec"].get("network", {})
    assert network.get("enableDNSHostnames"), "without DNS hostnames no pod has a stable name"
    subdomain = network.get("subdomain") or name
    cms = _config_maps(docs)
    rjobs = js["spec"]["replicatedJobs"]
    total = sum(rj.get("replicas", 1) for rj in rjobs)
    pods: list[Pod] = []
    earlier = 0
    for rj in rjobs:
        replicas = rj.get("replicas", 1)
        job_spec = rj["template"]["spec"]
        assert job_spec.get("completionMode") == "Indexed"
        completions = job_spec["completions"]
        assert job_spec.get("parallelism", completions) == completions, "every replica runs at once"
        template = job_spec["template"]
        for j in range(replicas):
            job = f"{name}-{rj['name']}-{j}"
            keys = {"jobset-name": name, "replicatedjob-name": rj["name"], "replicatedjob-replicas": str(replicas),
                    "job-index": str(j), "job-global-index": str(earlier + j), "global-replicas": str(total),
                    "restart-attempt": "0"}
            for i in range(completions):
                labels = dict(template.get("metadata", {}).get("labels", {}))
                annotations = dict(template.get("metadata", {}).get("annotations", {}))
                for key, value in keys.items():
                    labels[PREFIX + key] = annotations[PREFIX + key] = value
                labels[INDEX_KEY] = annotations[INDEX_KEY] = str(i)
                container = template["spec"]["containers"][0]
                env = kubelet_env(container, labels, annotations, cms, [("JOB_COMPLETION_INDEX", str(i))])
                files = _mounted_files(template["spec"], container, cms)
                role = labels.get("trainspec.dev/role", rj["name"])
                pods.append(Pod(f"{job}-{i}", role, f"{job}-{i}.{subdomain}", env,
                                kubelet_command(container.get("command"), env),
                                kubelet_command(container.get("args"), env), files, labels))
        earlier += replicas
    return pods
