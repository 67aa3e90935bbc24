"""Server answers in the user's words, and a rejected field back to the spec line that wrote it.

Data: the recorded answers of a real kube-apiserver v1.36 (reference/apiserver/) and the golden
compiled objects; the Forbidden body (fake_apiserver.FORBIDDEN_403) is written down in the shape
apimachinery's `errors.NewForbidden` gives, as the recordings hold none.
"""

from __future__ import annotations

import json

import pytest
import yaml

from trainspec.cluster.discovery import missing_message, served_kinds
from trainspec.cluster.errors import (
    describe,
    locate,
    parse_field_path,
    parse_status,
    patch_for,
    pointer_path,
    real_causes,
    spec_candidates,
)
from trainspec.compiler.loader import load_file
from trainspec.compiler.model import PatchOp

from fake_apiserver import FORBIDDEN_403
from helpers import GOLDEN, SPECS, reference_dir


def answer(name: str) -> tuple[int, object]:
    data = json.loads((reference_dir() / "apiserver" / f"{name}.json").read_text())
    return data["response"]["status"], data["response"]["body"]


def golden(job: str, target: str, kind: str) -> dict:
    docs = yaml.safe_load_all((GOLDEN / job / f"{target}.yaml").read_text())
    return next(d for d in docs if d and d["kind"] == kind)


def test_an_invalid_answer_keeps_the_causes_that_matter():
    status = parse_status(*answer("create-tfjob-invalid-422"))
    assert (status.code, status.reason, status.kind, status.name) == (422, "Invalid", "TFJob", "tf-ps")
    assert len(status.causes) == 2  # the server adds "<nil>: some validation rules were not checked"
    (cause,) = real_causes(status)
    assert cause.field == "spec.tfReplicaSpecs.Worker.replicas"
    assert "must be of type integer" in cause.message


def test_a_plain_text_404_is_a_resource_not_served():
    status = parse_status(*answer("missing-crd-404"))
    assert (status.code, status.reason, status.causes) == (404, "", ())  # no Status: nothing serves the path
    assert describe(status, "TFJob ml/x") == "TFJob ml/x: the server does not serve this resource (404)"
    assert parse_status(*answer("get-deleted-404")).reason == "NotFound"  # a served kind, no such object


@pytest.mark.parametrize("name, words", [
    ("ssa-conflict-409", ["conflict", "spec.tfReplicaSpecs.Worker.replicas", "'trainspec'", "--force-conflicts"]),
    ("create-twice-409", ["already exists"]),
    ("missing-namespace-404", ["not found", "no-such-ns"]),
    ("too-large-413", ["too large", "3145728"]),
    ("configmap-too-long-422", ["Too long"]),
])
def test_each_recorded_failure_is_one_line_naming_what_to_know(name, words):
    text = describe(parse_status(*answer(name)), "TFJob ml/tf-ps")
    assert "\n" not in text and text.startswith("TFJob ml/tf-ps: ")
    for word in words:
        assert word in text


def test_forbidden_says_permission_denied_with_the_servers_reason():
    text = describe(parse_status(403, json.dumps(FORBIDDEN_403).encode()), "TFJob ml/tf-ps")
    assert text.startswith("TFJob ml/tf-ps: permission denied: ") and "cannot patch resource" in text


@pytest.mark.parametrize("text, path", [
    ("spec.tfReplicaSpecs.Worker.replicas", ("spec", "tfReplicaSpecs", "Worker", "replicas")),
    (".spec.tfReplicaSpecs.Worker.replicas", ("spec", "tfReplicaSpecs", "Worker", "replicas")),
    ("spec.template.spec.containers[0].env[2].value", ("spec", "template", "spec", "containers", 0, "env", 2, "value")),
    ("metadata.labels[trainspec.dev/job]", ("metadata", "labels", "trainspec.dev/job")),
    ("<nil>", ()), ("[]", ()),
])
def test_field_paths_as_the_server_writes_them(text, path):
    assert parse_field_path(text) == path


def test_a_kubeflow_replica_count_maps_to_the_roles_replicas_line():
    tfjob = golden("tf-ps", "kubeflow", "TFJob")
    spec = SPECS / "tf-ps.yaml"
    (doc,) = load_file(str(spec))
    field = parse_field_path(real_causes(parse_status(*answer("create-tfjob-invalid-422")))[0].field)
    where = locate(str(spec), doc.positions, spec_candidates(tfjob, field))
    assert where is not None and where.path == "spec.roles.worker.replicas"
    line = spec.read_text().splitlines()[where.line - 1]
    assert line.strip() == "replicas: 3" and line.index("3") + 1 == where.column


@pytest.mark.parametrize("target, kind, field, expected", [
    # a container field the spec writes once for the job: the job's line
    ("kubeflow", "TFJob", "spec.tfReplicaSpecs.PS.template.spec.containers[0].image", "spec.image"),
    ("kubeflow", "TFJob", "spec.tfReplicaSpecs.Worker.template.spec.containers[0].resources.limits",
     "spec.roles.worker.resources"),
    ("kubeflow", "TFJob", "spec.tfReplicaSpecs.Worker.template.spec.containers[0].env[9].value", "spec.env.LOG_LEVEL"),
    # a variable trainspec injects: the env the spec writes is the nearest thing
    ("kubeflow", "TFJob", "spec.tfReplicaSpecs.Worker.template.spec.containers[0].env[0].value", "spec.env"),
    ("volcano", "Job", "spec.tasks[1].replicas", "spec.roles.worker.replicas"),
    ("jobset", "JobSet", "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources",
     "spec.roles.ps.resources"),
    ("k8s", "Job", "spec.template.spec.containers[0].command", "spec.command"),
    ("kubeflow", "TFJob", "metadata.name", "metadata.name"),
    ("kubeflow", "TFJob", "spec.runPolicy.backoffLimit", "metadata.name"),  # no role: the job itself
])
def test_fields_of_each_target_map_to_the_spec_field_that_wrote_them(target, kind, field, expected):
    obj = golden("tf-ps", target, kind)
    (doc,) = load_file(str(SPECS / "tf-ps.yaml"))
    path = parse_field_path(field)
    where = locate("tf-ps.yaml", doc.positions, spec_candidates(obj, path))
    assert where is not None and where.path == expected, (field, where)


def test_a_field_a_patch_wrote_points_at_the_patch():
    ops = (PatchOp({"op": "add", "path": "/spec/runPolicy/schedulingPolicy"}, ("spec", "patches", "kubeflow", 0), 40, 9),)
    assert patch_for(ops, ("spec", "runPolicy", "schedulingPolicy", "queue")).line == 40
    assert patch_for(ops, ("spec", "runPolicy", "backoffLimit")) is None
    assert pointer_path("/metadata/labels/a~1b") == ("metadata", "labels", "a/b")


def test_discovery_of_kubeflow_v1_and_the_missing_crd_message():
    kinds = served_kinds(answer("discovery-kubeflow-v1")[1])
    assert kinds["PyTorchJob"] == ("pytorchjobs", True) and "pytorchjobs/status" not in {p for p, _ in kinds.values()}
    assert {"TFJob", "PyTorchJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob"} <= set(kinds)
    del kinds["MXJob"]  # as a training operator 1.9 serves it: MXJob went in 1.9
    assert missing_message("kubeflow.org/v1", "PyTorchJob", None, True) == \
        "kubeflow.org/v1 PyTorchJob is not served here: install the Kubeflow training operator, or compile --target jobset"
    text = missing_message("kubeflow.org/v1", "MXJob", kinds, False)
    assert text.startswith("kubeflow.org/v1 MXJob is not served here (kubeflow.org/v1 serves ")
    assert text.endswith("or compile the spec with --target k8s")


def test_an_admission_webhook_refusal_is_not_called_a_permission_problem():
    # controller-runtime's admission.Denied: code 403, reason Forbidden, the webhook's words in the message
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403, "reason": "Forbidden",
            "message": 'admission webhook "vjobset.kb.io" denied the request: successPolicy targets a missing job'}
    text = describe(parse_status(403, body), "JobSet ml/j")
    assert text == 'JobSet ml/j: rejected: admission webhook "vjobset.kb.io" denied the request: successPolicy ' \
        "targets a missing job"


def test_a_webhook_refusal_that_names_a_field_points_at_the_spec():
    from trainspec.cluster.commands.apply import _rejection_lines
    from trainspec.cluster.sources import Bundle

    jobset = golden("tf-ps", "jobset", "JobSet")
    assert jobset["spec"]["replicatedJobs"][1]["name"] == "worker"
    (doc,) = load_file(str(SPECS / "tf-ps.yaml"))
    bundle = Bundle("tf-ps", [jobset], str(SPECS / "tf-ps.yaml"), "jobset", doc.positions, ())
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403, "reason": "Forbidden",
            "message": 'admission webhook "vjobset.kb.io" denied the request: spec.replicatedJobs[1].replicas: '
                       "Invalid value: 0: must be greater than 0"}
    (line,) = _rejection_lines(bundle, jobset, parse_status(403, body))
    assert line.startswith(f"{SPECS / 'tf-ps.yaml'}:52:17: spec.roles.worker.replicas: the server rejected JobSet.")
    assert line.endswith("spec.replicatedJobs[1].replicas: Invalid value: 0: must be greater than 0")


@pytest.mark.parametrize("message, fields", [
    # SSA's schema check (k8s.io/apimachinery managedfields structuredmerge.go), one field and several
    ("failed to create typed patch object (ml/tf-ps; kubeflow.org/v1, Kind=TFJob): "
     ".spec.tfReplicaSpecs.Worker.replicas: expected numeric (int or float), got string",
     [(".spec.tfReplicaSpecs.Worker.replicas", "expected numeric (int or float), got string")]),
    ("failed to create typed patch object (ml/j; batch/v1, Kind=Job): errors:\n"
     "  .spec.template.spec.containers[name=\"main\"].env[name=\"A\"].value: expected string, got &value.valueUnstructured{Value:1}\n"
     "  .spec.bogus: field not declared in schema",
     [('.spec.template.spec.containers[name="main"].env[name="A"].value',
       "expected string, got &value.valueUnstructured{Value:1}"), (".spec.bogus", "field not declared in schema")]),
    ('admission webhook "v.kb.io" denied the request: spec.replicatedJobs[1].replicas: must be > 0',
     [("spec.replicatedJobs[1].replicas", "must be > 0")]),
    # fieldValidation=Strict (sent with every apply): unknown and duplicate fields, a 400 BadRequest
    ('.spec.tfReplicaSpecs: strict decoding error: unknown field "spec.tfReplicaSpecs.Worker.replica", '
     'duplicate field "spec.runPolicy"',
     [("spec.tfReplicaSpecs.Worker.replica", "unknown field (not in the schema)"),
      ("spec.runPolicy", "duplicate field")]),
    ("something else entirely", []),
])
def test_field_errors_found_in_a_message(message, fields):
    from trainspec.cluster.errors import message_causes

    assert [(c.field, c.message) for c in message_causes(message)] == fields


def test_an_ssa_list_key_maps_to_the_env_variable():
    job = golden("tf-ps", "k8s", "Job")
    (doc,) = load_file(str(SPECS / "tf-ps.yaml"))
    field = parse_field_path('.spec.template.spec.containers[name="tensorflow"].env[name="LOG_LEVEL"].value')
    where = locate("tf-ps.yaml", doc.positions, spec_candidates(job, field))
    assert where is not None and where.path == "spec.env.LOG_LEVEL"


def test_a_namespace_being_deleted_is_not_called_a_permission_problem():
    # the shape of k8s.io/apiserver's NamespaceLifecycle admission refusal (errors.NewForbidden with the
    # NamespaceTerminating cause)
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "code": 403,
            "reason": "Forbidden",
            "message": 'jobs.batch "tf-ps-worker-0" is forbidden: unable to create new content in namespace ml '
                       "because it is being terminated",
            "details": {"name": "tf-ps-worker-0", "group": "batch", "kind": "jobs", "causes": [
                {"reason": "NamespaceTerminating", "message": "namespace ml is being terminated",
                 "field": "metadata.namespace"}]}}
    line = describe(parse_status(403, body), "Job.batch ml/tf-ps-worker-0")
    assert line.startswith("Job.batch ml/tf-ps-worker-0: namespace ml is being deleted") and "permission" not in line


# What a kube-apiserver says when a Job's pod template changes (ValidateImmutableField): the new value echoed,
# thousands of bytes for a pod template (older servers: Go's %#v, as here; v1.36: JSON, below).
IMMUTABLE_422 = {
    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Invalid", "code": 422,
    "message": 'Job.batch "tf-ps-worker-0" is invalid: spec.template: Invalid value: core.PodTemplateSpec{'
               'ObjectMeta:v1.ObjectMeta{Name:"", Labels:map[string]string{"a":"b: c"}}, Spec:core.PodSpec{'
               'Containers:[]core.Container{core.Container{Name:"tensorflow", Args:[]string{"--x: y"}}}}}: '
               "field is immutable",
    "details": {"name": "tf-ps-worker-0", "group": "batch", "kind": "Job", "causes": [
        {"reason": "FieldValueInvalid", "field": "spec.template",
         "message": 'Invalid value: core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{Name:"", Labels:map[string]'
                    'string{"a":"b: c"}}, Spec:core.PodSpec{Containers:[]core.Container{core.Container{'
                    'Name:"tensorflow", Args:[]string{"--x: y"}}}}}: field is immutable'}]}}


@pytest.mark.parametrize("message, cut", [
    (IMMUTABLE_422["details"]["causes"][0]["message"], "field is immutable"),
    # as kube-apiserver v1.36.2 wrote it (JSON of the new template, shortened; the real one was 2,040 bytes)
    ('Invalid value: {"labels":{"batch.kubernetes.io/job-name":"x","job-name":"x"},"Spec":{"Volumes":null,'
     '"Containers":[{"Name":"c","Image":"busybox","Command":null,"Args":["b: c"]}],"HostnameOverride":null,'
     '"SchedulingGroup":null}}: field is immutable', "field is immutable"),
    ('Invalid value: "two": spec.tfReplicaSpecs.Worker.replicas in body must be of type integer: "string"',
     'Invalid value: "two": spec.tfReplicaSpecs.Worker.replicas in body must be of type integer: "string"'),
    ('Invalid value: []string{"None"}: may not change once set', 'Invalid value: []string{"None"}: may not change '
                                                                  'once set'),
    ("Required value", "Required value"),
    ("spec.template: " + "x" * 500, "spec.template: " + "x" * 224 + "…"),
])
def test_the_servers_reason_is_cut_to_the_reason(message, cut):
    from trainspec.cluster.errors import cut_reason

    assert cut_reason(message) == cut


def test_an_immutable_field_is_told_apart_from_other_rejections():
    from trainspec.cluster.errors import immutable_fields

    assert immutable_fields(parse_status(422, IMMUTABLE_422)) == ("spec.template",)
    assert immutable_fields(parse_status(*answer("create-tfjob-invalid-422"))) == ()  # a bad value: --force won't do
    mixed = json.loads(json.dumps(IMMUTABLE_422))
    mixed["details"]["causes"].append({"reason": "FieldValueRequired", "field": "spec.x", "message": "Required value"})
    assert immutable_fields(parse_status(422, mixed)) == ()  # re-creating would be refused too
    assert len(describe(parse_status(422, IMMUTABLE_422), "Job.batch ml/tf-ps-worker-0")) < 300
