"""`apply | ps | down --cluster` against a real Kubernetes API server: TRAINSPEC_TEST_KUBECONFIG.

Without it every test here is skipped with a one-line reason, under CI too (no API server can
be installed from the package registries on the build machines). With it, the CRDs in
reference/crds are server-side applied first (field manager trainspec-tests) with the Volcano
Queue `research` the examples name, and each test
works in the namespaces the examples name (ml, default, research), removing what it made.
A kube-apiserver with etcd and no controllers is enough: nothing here waits for pods.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import yaml

from helpers import GOLDEN, SPECS, reference_dir, run_cli

KUBECONFIG = os.environ.get("TRAINSPEC_TEST_KUBECONFIG", "")
pytestmark = pytest.mark.skipif(not KUBECONFIG, reason="no API server: set TRAINSPEC_TEST_KUBECONFIG to a kubeconfig")
TARGETS = ("k8s", "kubeflow", "volcano", "jobset", "trainjob")


CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _established(crd: dict) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or ())


@pytest.fixture(scope="module")
def cluster():
    from trainspec.cluster.client import Cluster

    c = Cluster(KUBECONFIG)
    names = []
    for path in sorted((reference_dir() / "crds").rglob("*.yaml")):
        if "runtimes" in path.parts:
            continue
        for crd in yaml.load_all(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if not crd or crd.get("kind") != "CustomResourceDefinition":
                continue
            crd.pop("status", None)  # the server's to write
            name = crd["metadata"]["name"]
            c.request("PATCH", f"{CRD}/{name}", {"fieldManager": "trainspec-tests", "force": "true"}, crd,
                      content_type="application/apply-patch+yaml")
            names.append(name)
    # Established (the server serves the kind), then discovery: a group/version answers as soon as its first
    # CRD is established, so each CRD is waited for by its own condition
    deadline = time.monotonic() + 120
    for name in names:
        while not _established(c.request("GET", f"{CRD}/{name}")):
            assert time.monotonic() < deadline, f"CRD {name} not Established after 120 s"
            time.sleep(1)
    for path in ("/apis/kubeflow.org/v1", "/apis/kubeflow.org/v2beta1", "/apis/batch.volcano.sh/v1alpha1",
                 "/apis/jobset.x-k8s.io/v1alpha2", "/apis/trainer.kubeflow.org/v1alpha1",
                 "/apis/scheduling.volcano.sh/v1beta1"):
        while True:
            try:
                c.request("GET", path)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
    # the Volcano queue bert-finetune names (a missing one is an error of `apply`, as Volcano refuses the job)
    c.request("PATCH", "/apis/scheduling.volcano.sh/v1beta1/queues/research", {"fieldManager": "trainspec-tests"},
              {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "research"},
               "spec": {"weight": 1}}, content_type="application/apply-patch+yaml")
    # Namespaces stay: deleting one needs kube-controller-manager's namespace controller (a bare
    # kube-apiserver leaves it Terminating, and the next run could not apply into it).
    for ns in ("ml", "research"):
        c.request("PATCH", f"/api/v1/namespaces/{ns}", {"fieldManager": "trainspec-tests"},
                  {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
                  content_type="application/apply-patch+yaml")
    yield c
    try:
        c.request("DELETE", "/apis/scheduling.volcano.sh/v1beta1/queues/research", None,
                  {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"})
    except Exception:
        pass


def cli(*args: str):
    return run_cli(*args, env={"KUBECONFIG": KUBECONFIG})


def labelled(cluster, job: str, namespace: str = "ml") -> list[str]:
    from trainspec.cluster.kinds import OWNED_KINDS, resource_path

    out = []
    for kind in OWNED_KINDS:
        try:
            items = cluster.request("GET", resource_path(kind.api_version, kind.plural, namespace),
                                    {"labelSelector": f"trainspec.dev/job={job}"})["items"]
        except Exception:
            continue  # not served
        out += [f"{kind.kind}/{i['metadata']['name']}" for i in items]
    return sorted(out)


@pytest.mark.parametrize("target", TARGETS)
def test_every_compiled_example_passes_the_server_check(cluster, target):
    files = sorted(str(p) for p in GOLDEN.glob(f"*/{target}.yaml"))
    result = cli("apply", *files, "--dry-run=server")
    assert result.returncode == 0, result.stderr


def test_a_mutated_spec_is_rejected_at_its_line(cluster, tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text((SPECS / "tf-ps.yaml").read_text() + "  patches:\n    kubeflow:\n"
                    "      - {op: replace, path: /spec/tfReplicaSpecs/Worker/replicas, value: two}\n")
    result = cli("apply", str(spec), "--target", "kubeflow", "--dry-run=server")
    assert result.returncode == 2
    line = next(text for text in result.stderr.splitlines() if "rejected" in text)
    n = len((SPECS / "tf-ps.yaml").read_text().splitlines()) + 3
    assert line.startswith(f"{spec}:{n}:") and "spec.patches.kubeflow" in line
    assert "spec.tfReplicaSpecs.Worker.replicas" in line and "Traceback" not in result.stderr


def test_apply_prune_and_down_leave_exactly_the_right_objects(cluster, tmp_path):
    assert cli("apply", str(SPECS / "tf-ps.yaml")).returncode == 0
    before = labelled(cluster, "tf-ps")
    # spec v1.3: one Indexed Job per role and one headless Service for the job
    assert "Job/tf-ps-worker" in before and "Service/tf-ps" in before and "Job/tf-ps-evaluator" in before
    spec = tmp_path / "tf-ps.yaml"
    spec.write_text((SPECS / "tf-ps.yaml").read_text().replace("evaluator:\n      replicas: 1",
                                                              "evaluator:\n      replicas: 0"))
    # every role's pod template names the counts (TRAINSPEC_NUM_EVALUATOR), which a Job cannot change: the server
    # refuses, and the job is re-created (down, apply; or `apply --force` where the cluster commands have it)
    result = cli("apply", str(spec), "--prune")
    assert result.returncode == 2 and "field is immutable" in result.stderr
    assert "Job/tf-ps-evaluator" in labelled(cluster, "tf-ps")  # nothing pruned on error
    ps = cli("ps", "--cluster", "tf-ps", "-n", "ml")
    assert ps.returncode == 0 and "worker-2" in ps.stdout and "evaluator-0" in ps.stdout
    result = cli("down", "--cluster", "tf-ps", "-n", "ml", "--wait", "--timeout", "120")
    assert result.returncode == 0, result.stderr
    assert labelled(cluster, "tf-ps") == []


def test_a_conflict_with_another_manager_is_one_line(cluster, tmp_path):
    assert cli("apply", str(GOLDEN / "tf-ps" / "kubeflow.yaml")).returncode == 0
    try:
        tfjob = next(d for d in yaml.safe_load_all((GOLDEN / "tf-ps" / "kubeflow.yaml").read_text())
                     if d and d["kind"] == "TFJob")
        tfjob["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = 5
        cluster.request("PATCH", "/apis/kubeflow.org/v1/namespaces/ml/tfjobs/tf-ps",
                        {"fieldManager": "someone-else", "force": "true"}, tfjob,
                        content_type="application/apply-patch+yaml")
        result = cli("apply", str(GOLDEN / "tf-ps" / "kubeflow.yaml"))
        assert result.returncode == 2
        (line,) = [text for text in result.stderr.splitlines() if "warning" not in text]
        assert "conflict" in line and "someone-else" in line
    finally:
        cli("down", "--cluster", "tf-ps", "-n", "ml")


def test_a_missing_namespace_is_named(cluster):
    result = cli("apply", str(GOLDEN / "tf-ps" / "k8s.yaml"), "-n", "ml", "--dry-run=server")
    assert result.returncode == 0, result.stderr
    path = Path(GOLDEN / "tf-ps" / "k8s.yaml")
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    for d in docs:
        d["metadata"]["namespace"] = "trainspec-no-such-namespace"
    moved = Path(os.environ.get("TMPDIR", "/tmp")) / "trainspec-it-moved.yaml"
    moved.write_text(yaml.safe_dump_all(docs))
    result = cli("apply", str(moved), "--dry-run=server")
    assert result.returncode == 2 and "namespace trainspec-no-such-namespace does not exist" in result.stderr


@pytest.mark.parametrize("target", TARGETS)
def test_ps_shows_the_replicas_and_down_removes_everything_for_every_target(cluster, target):
    compiled = GOLDEN / "pytorch-ddp" / f"{target}.yaml"
    try:
        result = cli("apply", str(compiled))
        assert result.returncode == 0, result.stderr
        result = cli("ps", "--cluster", "pytorch-ddp", "-n", "ml", "--format", "json")
        assert result.returncode == 0, result.stderr
        import json

        assert [r["name"] for r in json.loads(result.stdout)["replicas"]] == ["master-0", "worker-0"]
    finally:
        result = cli("down", "--cluster", "pytorch-ddp", "-n", "ml", "--wait", "--timeout", "120")
    assert result.returncode == 0, result.stderr
    assert labelled(cluster, "pytorch-ddp") == []


def test_an_unknown_field_a_patch_adds_is_rejected_at_the_patch(cluster, tmp_path):
    spec = tmp_path / "typo.yaml"
    spec.write_text((SPECS / "tf-ps.yaml").read_text() + "  patches:\n    kubeflow:\n"
                    "      - {op: add, path: /spec/tfReplicaSpecs/Worker/replica, value: 2}\n")
    result = cli("apply", str(spec), "--target", "kubeflow", "--dry-run=server")
    assert result.returncode == 2, result.stdout  # fieldValidation=Strict: not dropped with a warning
    line = next(text for text in result.stderr.splitlines() if "rejected" in text)
    assert line.startswith(f"{spec}:") and "spec.patches.kubeflow" in line and "replica" in line


def test_a_kind_the_server_does_not_serve_names_what_to_install(cluster, tmp_path):
    text = (GOLDEN / "tf-ps" / "kubeflow.yaml").read_text().replace("apiVersion: kubeflow.org/v1\nkind: TFJob",
                                                                    "apiVersion: kubeflow.org/v9\nkind: TFJob")
    (tmp_path / "v9.yaml").write_text(text)
    result = cli("apply", str(tmp_path / "v9.yaml"), "--dry-run=server")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "kubeflow.org/v9 TFJob is not served here" in result.stderr


def test_create_namespace_in_a_dry_run_creates_nothing(cluster):
    docs = [d for d in yaml.safe_load_all((GOLDEN / "tf-ps" / "k8s.yaml").read_text()) if d]
    for d in docs:
        d["metadata"]["namespace"] = "trainspec-it-new"
    moved = Path(os.environ.get("TMPDIR", "/tmp")) / "trainspec-it-new.yaml"
    moved.write_text(yaml.safe_dump_all(docs))
    result = cli("apply", str(moved), "--dry-run=server", "--create-namespace")
    assert result.returncode == 0, result.stderr
    assert "Namespace trainspec-it-new: created (dry run: server)" in result.stdout
    from trainspec.cluster.errors import ApiFailure

    with pytest.raises(ApiFailure):
        cluster.request("GET", "/api/v1/namespaces/trainspec-it-new")
