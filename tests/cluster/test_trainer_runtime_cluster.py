"""`apply` of a TrainJob (a spec v1.3 job on a runtime) against a real API server: TRAINSPEC_TEST_KUBECONFIG.

With the named ClusterTrainingRuntime on the server, `--dry-run=server` passes; without it, apply names the
missing runtime and what to do (a bare API server has no Trainer webhook to refuse it).  The runtime this
module installs (tests/data/runtimes/torch-distributed.yaml, under a name of its own) is removed after;
no namespace is created or deleted but `ml`, which the other integration tests keep too.
"""

from __future__ import annotations

import os
import time

import pytest
import yaml

from helpers import SPECS, reference_dir, run_cli

KUBECONFIG = os.environ.get("TRAINSPEC_TEST_KUBECONFIG", "")
pytestmark = pytest.mark.skipif(not KUBECONFIG, reason="no API server: set TRAINSPEC_TEST_KUBECONFIG to a kubeconfig")
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
RUNTIMES = "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"
NAME = "trainspec-test-torch"  # not Kubeflow's name: never collides with a runtime someone else installed
RUNTIME_FILE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "runtimes", "torch-distributed.yaml")


@pytest.fixture(scope="module")
def cluster():
    from trainspec.cluster.client import Cluster

    c = Cluster(KUBECONFIG)
    crds = reference_dir() / "crds" / "trainer"
    names = []
    for path in sorted(crds.glob("*.yaml")):
        for crd in yaml.safe_load_all(path.read_text()):
            if crd and crd.get("kind") == "CustomResourceDefinition":
                crd.pop("status", None)
                c.request("PATCH", f"{CRD}/{crd['metadata']['name']}", {"fieldManager": "trainspec-tests",
                                                                        "force": "true"}, crd,
                          content_type="application/apply-patch+yaml")
                names.append(crd["metadata"]["name"])
    deadline = time.monotonic() + 120
    for name in names:
        while not any(x.get("type") == "Established" and x.get("status") == "True"
                      for x in (c.request("GET", f"{CRD}/{name}").get("status") or {}).get("conditions") or ()):
            assert time.monotonic() < deadline
            time.sleep(1)
    while True:
        try:
            c.request("GET", "/apis/trainer.kubeflow.org/v1alpha1")
            break
        except Exception:
            assert time.monotonic() < deadline
            time.sleep(1)
    c.request("PATCH", "/api/v1/namespaces/ml", {"fieldManager": "trainspec-tests"},
              {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}},
              content_type="application/apply-patch+yaml")
    yield c
    _delete_runtime(c)


def _delete_runtime(c) -> None:
    try:
        c.request("DELETE", f"{RUNTIMES}/{NAME}")
    except Exception:
        pass  # not there


def _spec(tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_text((SPECS / "torch-on-runtime.yaml").read_text().replace("name: torch-distributed", f"name: {NAME}"))
    return spec


def cli(*args: str):
    return run_cli(*args, env={"KUBECONFIG": KUBECONFIG})


def test_a_missing_runtime_is_named(cluster, tmp_path):
    _delete_runtime(cluster)
    r = cli("apply", str(_spec(tmp_path)), "--target", "trainjob", "--dry-run=server")
    assert r.returncode == 2
    assert f"TrainJob torch-on-runtime runs on ClusterTrainingRuntime '{NAME}', which the cluster does not have" \
        in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_with_the_runtime_installed_the_server_check_passes(cluster, tmp_path):
    runtime = yaml.safe_load(open(RUNTIME_FILE).read())
    runtime["metadata"]["name"] = NAME
    cluster.request("PATCH", f"{RUNTIMES}/{NAME}", {"fieldManager": "trainspec-tests", "force": "true"}, runtime,
                    content_type="application/apply-patch+yaml")
    try:
        r = cli("apply", str(_spec(tmp_path)), "--target", "trainjob", "--dry-run=server")
        assert r.returncode == 0, r.stderr
        assert "TrainJob.trainer.kubeflow.org ml/torch-on-runtime: accepted (dry run: server)" in r.stdout
    finally:
        _delete_runtime(cluster)


@pytest.mark.parametrize("target", ["jobset", "k8s"])
def test_the_expanded_runtime_passes_the_server_check(cluster, target):
    """--runtime: the JobSet the Trainer controller would make (jobset), or the JobSet controller's Jobs and
    Service (k8s), as the real API server validates them."""
    r = cli("apply", str(SPECS / "torch-on-runtime.yaml"), "--target", target, "--runtime", RUNTIME_FILE,
            "--dry-run=server")
    assert r.returncode == 0, r.stderr
    assert "accepted (dry run: server)" in r.stdout and "Traceback" not in r.stderr


@pytest.mark.parametrize("target", ["jobset", "k8s"])
def test_the_shipped_runtime_expanded_passes_the_server_check(cluster, target):
    """No --runtime: expanded on the torch-distributed Kubeflow Trainer ships (said in a note); the JobSet or Jobs
    name no runtime, so the cluster need not have it."""
    r = cli("apply", str(SPECS / "torch-on-runtime.yaml"), "--target", target, "--dry-run=server")
    assert r.returncode == 0, r.stderr
    assert "accepted (dry run: server)" in r.stdout and "Traceback" not in r.stderr
    assert r.stderr.count("trainspec: note: ") == 1
    assert "ClusterTrainingRuntime 'torch-distributed': Kubeflow Trainer v2.3.0's shipped definition" in r.stderr


def test_a_shipped_runtime_is_still_one_the_cluster_must_have_for_a_trainjob(cluster, tmp_path):
    """trainspec's copy of a shipped runtime is no install: a TrainJob on one the server lacks is refused, with
    Kubeflow's own install command."""
    try:
        cluster.request("GET", f"{RUNTIMES}/jax-distributed")
        pytest.skip("this API server has jax-distributed installed (not by these tests)")
    except Exception:
        pass
    spec = tmp_path / "job.yaml"
    spec.write_text((SPECS / "torch-on-runtime.yaml").read_text().replace("name: torch-distributed",
                                                                           "name: jax-distributed"))
    r = cli("apply", str(spec), "--target", "trainjob", "--dry-run=server")
    assert r.returncode == 2
    assert "TrainJob torch-on-runtime runs on ClusterTrainingRuntime 'jax-distributed', which the cluster does not " \
        "have: install the runtime (Kubeflow Trainer's runtimes: `kubectl apply --server-side -k " \
        "\"https://github.com/kubeflow/trainer.git/manifests/overlays/runtimes?ref=v2.3.0\"`)" in r.stderr, r.stderr
    assert "note:" not in r.stderr  # the trainjob target does not expand it
