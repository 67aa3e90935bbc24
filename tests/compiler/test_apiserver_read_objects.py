"""Issue 33: compiler/apiserver's `refusals`, the one checker import and the emulator run on the objects they
read, on the cases a real kube-apiserver (v1.36.2, dry-run create) answered differently from it before this
stop.  Each case says what the server answered; tests/importer/test_import_shapes.py asks the server itself.
"""

from __future__ import annotations

import copy

import pytest

from trainspec.compiler.apiserver import refusals
from trainspec.compiler.apiserver.findings import go_value

JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
       "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
           "spec": {"clusterIP": "None", "selector": {"app": "a"}}}
PYTORCH = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "p"},
           "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "restartPolicy": "OnFailure", "template": {
               "spec": {"containers": [{"name": "pytorch", "image": "x"}]}}}}}}
RUNTIME = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime", "metadata": {"name": "r"},
           "spec": {"template": {"spec": {"replicatedJobs": []}}}}


def _with(doc: dict, change) -> dict:
    out = copy.deepcopy(doc)
    change(out)
    return out


def _pod(doc: dict) -> dict:
    return doc["spec"]["template"]["spec"]


# name -> (object, the refused field's path, or None: the server takes it)
CASES = {
    # taken: the server stores `{name: v, emptyDir: {}}` (SetDefaults_Volume) and a null cpu as "0"
    "volume-without-source": (_with(JOB, lambda d: _pod(d).update(volumes=[{"name": "v"}])), None),
    "null-volume-source": (_with(JOB, lambda d: _pod(d).update(
        volumes=[{"name": "v", "persistentVolumeClaim": None}])), None),
    "null-quantity": (_with(JOB, lambda d: _pod(d)["containers"][0].update(
        resources={"requests": {"cpu": None}})), None),
    # taken: a built-in kind's null is its zero value (a nil list)
    "null-failure-rules": (_with(JOB, lambda d: d["spec"].update(podFailurePolicy={"rules": None})), None),
    # taken: a custom resource's null field is pruned
    "cr-null-field": (_with(PYTORCH, lambda d: d["spec"]["pytorchReplicaSpecs"]["Master"].update(replicas=None)),
                      None),
    # refused: "containers[0].name: Required value" (null decodes as an empty container)
    "null-container": (_with(JOB, lambda d: _pod(d)["containers"].append(None)),
                       ("spec", "template", "spec", "containers", 1, "name")),
    # refused: "metadata.name: Required value: name or generateName is required"
    "cr-without-name": (_with(PYTORCH, lambda d: d.update(metadata={"labels": {"a": "b"}})), ("metadata", "name")),
    # refused: "spec.ports: Required value" (not headless)
    "service-without-ports": (_with(SERVICE, lambda d: d["spec"].pop("clusterIP")), ("spec", "ports")),
    # refused: "spec.clusterIPs[0]: Invalid value: "x": must be a valid IP address"
    "service-cluster-ip": (_with(SERVICE, lambda d: d["spec"].update(
        clusterIP="x", ports=[{"port": 80}])), ("spec", "clusterIPs", 0)),
    # refused: "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode"
    "per-index-not-indexed": (_with(JOB, lambda d: d["spec"].update(backoffLimitPerIndex=1)),
                              ("spec", "backoffLimitPerIndex")),
    # refused: "succeededCount: Invalid value: 7: must be less than or equal to 3 (the number of indexes ...)"
    "success-count-over-indexes": (_with(JOB, lambda d: d["spec"].update(
        completionMode="Indexed", completions=10,
        successPolicy={"rules": [{"succeededIndexes": "0,2-3", "succeededCount": 7}]})),
        ("spec", "successPolicy", "rules", 0, "succeededCount")),
    # refused: "succeededIndexes: Invalid value: "x": error parsing succeededIndexes: ..."
    "success-indexes-unparsed": (_with(JOB, lambda d: d["spec"].update(
        completionMode="Indexed", completions=10, successPolicy={"rules": [{"succeededIndexes": "x"}]})),
        ("spec", "successPolicy", "rules", 0, "succeededIndexes")),
    # refused: "volumes[0].downwardAPI.path: Required value" (the source's path, as upstream reports it)
    "downward-item-without-path": (_with(JOB, lambda d: _pod(d).update(volumes=[{"name": "v", "downwardAPI": {
        "items": [{"fieldRef": {"fieldPath": "metadata.name"}}]}}])),
        ("spec", "template", "spec", "volumes", 0, "downwardAPI", "path")),
    "downward-item-without-ref": (_with(JOB, lambda d: _pod(d).update(volumes=[{"name": "v", "downwardAPI": {
        "items": [{"path": "name"}]}}])), ("spec", "template", "spec", "volumes", 0, "downwardAPI")),
    # refused: "volumes[0].csi.driver: Required value"
    "csi-without-driver": (_with(JOB, lambda d: _pod(d).update(volumes=[{"name": "v", "csi": {}}])),
                           ("spec", "template", "spec", "volumes", 0, "csi", "driver")),
    # refused: exported metadata the server would not take back
    "empty-finalizer": (_with(PYTORCH, lambda d: d["metadata"].update(finalizers=[None])),
                        ("metadata", "finalizers")),
    "owner-without-uid": (_with(PYTORCH, lambda d: d["metadata"].update(ownerReferences=[
        {"apiVersion": "v1", "kind": "Pod", "name": "p"}])), ("metadata", "ownerReferences", "uid")),
    "bad-creation-time": (_with(PYTORCH, lambda d: d["metadata"].update(creationTimestamp="x")),
                          ("metadata", "creationTimestamp")),
    # taken: the JobSet webhook names a nameless failure rule before the CRD requires a name
    "jobset-rule-named-by-webhook": ({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                                      "metadata": {"name": "js"}, "spec": {
                                          "failurePolicy": {"rules": [{"action": "FailJobSet"}]},
                                          "replicatedJobs": [{"name": "w", "template": {"spec": {"template": {
                                              "spec": {"containers": [{"name": "c", "image": "x"}]}}}}}]}},
                                     None),
    # refused: "spec.template: Invalid value: 0: spec.template in body should have at least 1 properties"
    "cr-min-properties": (_with(RUNTIME, lambda d: d["spec"].update(template={"a": 1})), ("spec", "template")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_checker_answers_as_the_server_did(name):
    doc, refused = CASES[name]
    found = refusals(doc)
    if refused is None:
        assert found == []
    else:
        assert refused in [path for path, _ in found], found


def test_a_refused_value_never_carries_a_terminal_escape():
    # Go's strconv.Quote, as the server quotes a value: control characters escaped, never passed through
    assert go_value("a\x1b[2J\r\"b\\") == '"a\\x1b[2J\\r\\"b\\\\"'
    doc = _with(JOB, lambda d: d["metadata"].update(name="x\x1b[2Jy"))
    (_, message), = refusals(doc)
    assert "\x1b" not in message and "\\x1b" in message
