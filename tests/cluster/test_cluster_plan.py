"""What `apply` sends and in what order, and what `--prune` / `down --cluster` may delete: pure decisions."""

from __future__ import annotations

import pytest
import yaml

from trainspec.cluster.errors import ClusterError
from trainspec.cluster.plan import delete_order, key, ordered, prepared, prune_set, queues, secret_objects

from helpers import GOLDEN


def docs(job: str, target: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((GOLDEN / job / f"{target}.yaml").read_text()) if d]


def test_objects_are_labelled_namespaced_and_ordered_before_workloads():
    objects = prepared(docs("pytorch-ddp", "trainjob") + secret_objects({"s": {"k": b"v"}}, "pytorch-ddp", "ml"),
                       "pytorch-ddp", "ml", False)
    kinds = [o["kind"] for o in objects]
    assert kinds.index("Secret") < kinds.index("TrainingRuntime") < kinds.index("TrainJob")
    assert kinds.index("ConfigMap") < kinds.index("TrainJob")
    for o in objects:
        assert o["metadata"]["labels"]["trainspec.dev/job"] == "pytorch-ddp"
        assert o["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "trainspec"
        assert o["metadata"]["namespace"] == "ml"
    services = [o for o in prepared(docs("tf-ps", "k8s"), "tf-ps", "ml", False) if o["kind"] in ("Service", "Job")]
    # issue 31: one headless Service for the job, one Indexed Job per role (ps, worker, evaluator)
    assert [o["kind"] for o in services] == ["Service"] + ["Job"] * 3


def test_a_secret_is_data_in_memory_and_base64():
    (secret,) = secret_objects({"hf": {"token": b"s3cr3t"}}, "j", "ml")
    assert secret["data"] == {"token": "czNjcjN0"} and secret["metadata"]["labels"]["trainspec.dev/job"] == "j"


def test_an_explicit_namespace_that_differs_from_the_objects_is_an_error():
    with pytest.raises(ClusterError, match="in namespace 'ml' but -n other"):
        prepared(docs("tf-ps", "k8s"), "tf-ps", "other", True)
    assert {o["metadata"]["namespace"] for o in prepared(docs("tf-ps", "k8s"), "tf-ps", "other", False)} == {"ml"}


def test_an_object_of_another_job_is_refused():
    other = docs("tf-ps", "k8s")[:1]
    with pytest.raises(ClusterError, match="labelled trainspec.dev/job=tf-ps, not pytorch-ddp"):
        prepared(other, "pytorch-ddp", "ml", False)


def live(obj: dict, **meta) -> dict:
    out = dict(obj, metadata=dict(obj["metadata"], **meta))
    return out


def test_prune_removes_what_the_job_no_longer_produces_and_nothing_else():
    three = prepared(docs("tf-ps", "k8s"), "tf-ps", "ml", False)
    applied = [o for o in three if o["metadata"]["name"] != "tf-ps-evaluator"]  # the evaluator role removed
    other_job = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x", "namespace": "ml", "labels": {
        "trainspec.dev/job": "other", "app.kubernetes.io/managed-by": "trainspec"}}}
    hand_made = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "notes", "namespace": "ml",
                                                                      "labels": {"trainspec.dev/job": "tf-ps"}}}
    child = live(three[-1], name="tf-ps-evaluator-child", ownerReferences=[{"kind": "JobSet", "name": "tf-ps"}])
    going = live(three[-2], name="tf-ps-old", deletionTimestamp="2026-11-26T02:00:00Z")
    old_service = dict(three[1], metadata=dict(three[1]["metadata"], name="tf-ps-worker-2"))  # a v1.2 per-replica one
    pruned = prune_set(three + [other_job, hand_made, child, going, old_service], applied, "tf-ps")
    assert sorted(key(o).show() for o in pruned) == ["Job.batch ml/tf-ps-evaluator", "Service ml/tf-ps-worker-2"]
    assert [o["kind"] for o in pruned] == ["Job", "Service"]  # the workload first


def test_down_deletes_the_jobs_own_objects_workloads_first():
    objects = prepared(docs("pytorch-ddp", "jobset"), "pytorch-ddp", "ml", False)
    assert [o["kind"] for o in delete_order(objects, "pytorch-ddp")] == ["JobSet", "ConfigMap"]
    assert delete_order(objects, "other") == []


def test_queues_a_job_waits_in():
    k8s = prepared(docs("tf-ps", "k8s"), "tf-ps", "ml", False)
    k8s[-1]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "team-a"
    assert queues(k8s) == [("LocalQueue", "ml", "team-a")]
    vc = docs("tf-ps", "volcano")
    vc[-1]["spec"]["queue"] = "research"
    assert queues(vc) == [("Queue", "", "research")]


def test_order_is_stable_within_a_rank():
    objs = [{"kind": "Service", "metadata": {"name": n}} for n in "cab"]
    assert [o["metadata"]["name"] for o in ordered(objs)] == ["c", "a", "b"]


def test_only_a_training_jobs_own_kinds_in_its_own_namespace_are_sent():
    from trainspec.cluster.plan import prepared, refused

    job = prepared(docs("tf-ps", "k8s") + secret_objects({"s": {"k": b"v"}}, "tf-ps", "ml"), "tf-ps", "ml", False)
    hostile = prepared([
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "b"}},
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
         "metadata": {"name": "w"}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "kube-system"}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"}},  # a patch may add one
    ], "tf-ps", "ml", False)
    assert refused(job, "ml", frozenset()) == []
    found = {o["metadata"]["name"]: why for o, why in refused(hostile, "ml", frozenset())}
    assert found == {"b": "a cluster-scoped object is not part of a training job",
                     "w": "a cluster-scoped object is not part of a training job",
                     "r": "not a kind a training job is made of", "s": "outside the job's namespace ml"}
    # cluster-scoped kinds get no namespace, even with no server to ask
    assert {o["metadata"]["name"]: o["metadata"].get("namespace") for o in hostile} == {
        "b": None, "w": None, "r": "ml", "s": "kube-system", "data": "ml"}
    allowed = frozenset({"clusterrolebinding", "role.rbac.authorization.k8s.io", "secret"})
    assert [o["metadata"]["name"] for o, _ in refused(hostile, "ml", allowed)] == ["w"]
