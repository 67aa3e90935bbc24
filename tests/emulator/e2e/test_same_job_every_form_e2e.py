"""The same held-out job ends the same way whichever file it is given.

tests/emulator/specs/heldout-tf.yaml (TF, one ps, two workers reaching it through TF_CONFIG,
restartPolicy Never) runs from the spec, its k8s.yaml, compose.yaml, kubeflow.yaml, volcano.yaml,
jobset.yaml and Helm chart: each controller's pods, names and injected env are the emulator's
(emulator/readers/controllers/). FAIL_CODE 0 succeeds in
every form; worker-0 exiting 3 fails in every form. Every example's golden files run in
test_golden_matrix_e2e.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from emuhelpers import HERE, ROOT, norm, sshd_image, trainspec

pytestmark = pytest.mark.docker
SPEC = HERE / "specs" / "heldout-tf.yaml"


def _spec(tmp: Path, code: int) -> Path:
    path = tmp / "heldout.yaml"
    path.write_text(SPEC.read_text().replace('FAIL_CODE: "0"', f'FAIL_CODE: "{code}"'))
    return path


def _input(tmp: Path, form: str, code: int) -> Path:
    spec = _spec(tmp, code)
    if form == "spec":
        return spec
    out = tmp / (form if form == "helm" else f"{form}.yaml")
    c = trainspec("compile", spec, "--target", form, "-o", out, cwd=tmp)
    assert c.returncode == 0, c.stderr
    return out


FORMS = ["spec", "k8s", "compose", "kubeflow", "volcano", "jobset",
         pytest.param("helm", marks=pytest.mark.skipif(
             __import__("importlib").util.find_spec("helm_python") is None, reason="helm-python-sdk missing"))]


@pytest.mark.parametrize("form", FORMS)
def test_held_out_job_succeeds_from_every_form(tmp_path, test_image, leak_check, form):
    path = _input(tmp_path, form, 0)
    r = trainspec("run", path, "--image", test_image, "--cpu-only", "--offline", cwd=tmp_path, timeout=300)
    out = norm(r.stdout)
    assert r.returncode == 0, out + r.stderr
    assert "SUCCEEDED in" in out
    assert "worker-0 | worker 0 reached" in out  # worker-0 decides: worker-1 may be stopped first


@pytest.mark.parametrize("form", FORMS)
def test_held_out_job_fails_from_every_form(tmp_path, test_image, leak_check, form):
    path = _input(tmp_path, form, 3)
    r = trainspec("run", path, "--image", test_image, "--cpu-only", "--offline", cwd=tmp_path, timeout=300)
    out = norm(r.stdout)
    assert r.returncode == 1, out + r.stderr
    assert "FAILED" in out and "worker-0 failed" in out


def test_pytorch_kubeflow_all_reduce(tmp_path, torch_image, leak_check):
    """MASTER_ADDR/RANK/WORLD_SIZE as the training operator injects them: a real gloo all-reduce."""
    r = trainspec("run", ROOT / "golden/pytorch-ddp/kubeflow.yaml", "--image", torch_image, "--cpu-only",
                  "--offline", cwd=tmp_path, timeout=300)
    out = norm(r.stdout)
    assert r.returncode == 0, out + r.stderr
    assert "worker-0 | rank 1/2: all-reduce ok (3.0)" in out


def test_trainjob_pytorch_all_reduce(tmp_path, torch_image, leak_check):
    """TrainJob + TrainingRuntime → JobSet: the torch plugin's PET_* and the trainer's overrides."""
    r = trainspec("run", ROOT / "golden/pytorch-ddp/trainjob.yaml", "--image", torch_image, "--cpu-only",
                  "--offline", cwd=tmp_path, timeout=300)
    out = norm(r.stdout)
    assert r.returncode == 0, out + r.stderr
    assert "node-1 | rank 1/2: all-reduce ok (3.0)" in out


def test_trainjob_mpi_as_root_fails_like_the_cluster(tmp_path, docker_client, test_image, leak_check):
    """Trainer's MPI plugin mounts id_rsa with mode 0640 (CONVENTIONS-V2 §3.4): OpenSSH running as root, the key
    file's owner, refuses a group-readable key, so mpirun as root cannot reach the nodes — as on a cluster."""
    image = sshd_image(docker_client, test_image, strict=False)  # sshd accepts; the ssh client refuses the key
    r = trainspec("run", ROOT / "golden/mpi-horovod/trainjob.yaml", "--image", image, "--cpu-only",
                  "--offline", "--restart-backoff", "0.2", cwd=tmp_path, timeout=300)
    out = norm(r.stdout)
    assert r.returncode == 1, out + r.stderr
    assert "Permissions 0640 for '/root/.ssh/id_rsa' are too open" in out


JAX = """
import os, socket, time
me, n = int(os.environ["PROCESS_ID"]), int(os.environ["NUM_PROCESSES"])
addr, port = os.environ["COORDINATOR_ADDRESS"], int(os.environ["COORDINATOR_PORT"])
if me == 0:
    server = socket.create_server(("", port))
    for _ in range(n - 1):
        conn = server.accept()[0]
        print("coordinator heard process", conn.recv(8).decode(), flush=True)
        conn.close()
else:
    for _ in range(300):
        try:
            socket.create_connection((addr, port), timeout=2).sendall(str(me).encode())
            break
        except OSError:
            time.sleep(0.1)
    else:
        raise SystemExit("cannot reach the coordinator " + addr)
"""


def test_hand_written_jaxjob_reaches_its_coordinator(tmp_path, test_image, leak_check):
    """A kind the compiler does not emit yet (CONVENTIONS-V2 §4): COORDINATOR_ADDRESS/PORT, PROCESS_ID, and
    success when every worker succeeded."""
    doc = {"apiVersion": "kubeflow.org/v1", "kind": "JAXJob", "metadata": {"name": "jx"}, "spec": {
        "jaxReplicaSpecs": {"Worker": {"replicas": 3, "template": {"spec": {"containers": [
            {"name": "jax", "image": test_image, "command": ["python3", "-c", JAX]}]}}}}}}
    path = tmp_path / "jax.yaml"
    path.write_text(yaml.safe_dump(doc))
    r = trainspec("run", path, "--offline", cwd=tmp_path, timeout=300)
    out = norm(r.stdout)
    assert r.returncode == 0, out + r.stderr
    assert "worker-0 | coordinator heard process" in out and "(all workers succeeded)" in out


def test_volcano_min_available_tolerates_a_failed_pod(tmp_path, test_image, leak_check):
    """No policy acts on w-1's failure: the job runs on, and with 2 of 3 pods succeeded it completes."""
    task = {"name": "w", "replicas": 3, "template": {"spec": {"restartPolicy": "Never", "containers": [
        {"name": "main", "image": test_image, "command": ["sh", "-c", 'sleep 1; [ "$VC_TASK_INDEX" != 1 ]']}]}}}
    doc = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "tol"},
           "spec": {"minAvailable": 2, "plugins": {"env": []}, "tasks": [task]}}
    path = tmp_path / "volcano.yaml"
    path.write_text(yaml.safe_dump(doc))
    r = trainspec("run", path, "--offline", cwd=tmp_path, timeout=300)
    out = norm(r.stdout)
    assert r.returncode == 0, out + r.stderr
    assert "every pod finished, 2 succeeded (minAvailable 2)" in out


def _pytorch_two_workers(tmp: Path) -> Path:
    data = yaml.safe_load((ROOT / "specs" / "pytorch-ddp.yaml").read_text())
    data["spec"]["roles"]["worker"]["replicas"] = 2
    data["spec"]["command"][2] += ('print(f"node rank {os.environ[\'PET_NODE_RANK\']} of rank '
                                   '{os.environ[\'RANK\']}", flush=True)\n')
    path = tmp / "pytorch-3.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize("form", ["spec", "k8s", pytest.param("helm", marks=pytest.mark.skipif(
    __import__("importlib").util.find_spec("helm_python") is None, reason="helm-python-sdk missing"))])
def test_pytorch_master_and_two_workers_from_one_indexed_job_all_reduce(tmp_path, torch_image, leak_check, form):
    """Issue 31: the workers are one Indexed Job whose /bin/sh rank prelude sets RANK and PET_NODE_RANK = index + 1
    (targets/k8s/scheme.py); run for real, the gloo all-reduce of ranks 0-2 ends as from the spec."""
    spec = _pytorch_two_workers(tmp_path)
    path = spec
    if form != "spec":
        path = tmp_path / (form if form == "helm" else f"{form}.yaml")
        c = trainspec("compile", spec, "--target", form, "-o", path, cwd=tmp_path)
        assert c.returncode == 0, c.stderr
    if form == "k8s":
        workers = [d for d in yaml.safe_load_all(path.read_text()) if d and d["kind"] == "Job"
                   and d["metadata"]["name"].startswith("pytorch-ddp-worker")]
        assert [(d["metadata"]["name"], d["spec"]["completions"]) for d in workers] == [("pytorch-ddp-worker", 2)]
        assert workers[0]["spec"]["template"]["spec"]["containers"][0]["command"][0] == "/bin/sh"
    r = trainspec("run", path, "--image", f"pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime={torch_image}",
                  "--cpu-only", "--offline", cwd=tmp_path, timeout=300)
    out = norm(r.stdout)
    assert r.returncode == 0, out + r.stderr
    for name, rank in (("master-0", 0), ("worker-0", 1), ("worker-1", 2)):
        assert f"{name} | rank {rank}/3: all-reduce ok (6.0)" in out, out
        assert f"{name} | node rank {rank} of rank {rank}" in out, out
