"""A spec v1.3 job on a Trainer runtime (spec.trainjob), and a TrainJob, run locally on a given runtime
(`trainspec run --runtime FILE`) or on one Kubeflow Trainer ships (no --runtime): the pods are the JobSet the Trainer controller makes of the runtime's
template and the TrainJob, with the torch plugin's PET_* variables (kubeflow/trainer
pkg/runtime/framework/plugins/torch/torch.go), on the real Docker engine."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from emuhelpers import trainspec

pytestmark = pytest.mark.docker

DATA = Path(__file__).resolve().parents[2] / "data"
SPEC = DATA / "torch-on-test-runtime.yaml"
RUNTIME = DATA / "runtimes" / "torch-distributed.yaml"


def _pet_lines(out: str) -> dict[str, dict[str, str]]:
    """node-i -> the variables its container printed."""
    found = {}
    for line in out.splitlines():
        m = re.match(r"(node-\d) \| (PET_NNODES=.*)", line)
        if m:
            found[m.group(1)] = dict(pair.split("=", 1) for pair in m.group(2).split())
    return found


def _check_nodes(out: str) -> None:
    pets = _pet_lines(out)
    assert set(pets) == {"node-0", "node-1"}, out
    for i in (0, 1):
        assert pets[f"node-{i}"] == {"PET_NNODES": "2", "PET_NODE_RANK": str(i), "PET_MASTER_ADDR": "pet-node-0-0.pet",
                                     "PET_MASTER_PORT": "29500", "PET_NPROC_PER_NODE": "1", "GREETING": "hello"}, out
    assert "master got node-1" in out  # node 1 reached node 0 at PET_MASTER_ADDR:PET_MASTER_PORT


def test_a_spec_on_torch_distributed_runs_with_the_controllers_variables(test_image, tmp_path):
    r = trainspec("run", SPEC, "--runtime", RUNTIME, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    _check_nodes(r.stdout + r.stderr)


def test_the_python_api_runs_a_spec_on_a_runtime_as_the_command_does(test_image, tmp_path):
    import trainspec as api  # `trainspec` here is the command (emuhelpers)

    run = api.run(SPEC, runtimes=[str(RUNTIME)], offline=True, gpus="none", state_dir=tmp_path / ".trainspec")
    assert run.wait(timeout=300) == 0
    logs = run.logs()
    text = "\n".join(f"{name} | {line}" for name, out in logs.items() for line in out.splitlines())
    _check_nodes(text)
    assert run.down() == 0


def test_the_compiled_trainjob_runs_on_the_runtime_folder(test_image, tmp_path):
    tj = tmp_path / "trainjob.yaml"
    r = trainspec("compile", SPEC, "--target", "trainjob", "-o", tj, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = trainspec("run", tj, "--runtime", RUNTIME.parent, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    _check_nodes(r.stdout + r.stderr)


def test_without_the_runtime_the_error_names_it_and_how_to_give_it(tmp_path):
    spec = tmp_path / "spec.yaml"  # on a runtime Kubeflow Trainer does not ship: the cluster's own
    spec.write_text(SPEC.read_text().replace("name: torch-distributed", "name: my-torch"))
    r = trainspec("run", spec, cwd=tmp_path)
    assert r.returncode == 2
    assert "ClusterTrainingRuntime 'my-torch'" in r.stderr
    assert "--runtime FILE|DIR" in r.stderr and "kubectl get clustertrainingruntime my-torch" in r.stderr
    assert "torch-distributed" in r.stderr  # the names known without --runtime
    assert "Traceback" not in r.stderr


def test_without_the_runtime_a_spec_on_torch_distributed_runs_on_the_shipped_one(test_image, tmp_path):
    r = trainspec("run", SPEC, cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    _check_nodes(out)
    assert out.count("Kubeflow Trainer v2.3.0's shipped definition") == 1, out
    assert f"note: {SPEC}:" in out and "spec.trainjob.runtime: ClusterTrainingRuntime 'torch-distributed'" in out


UPSTREAM_TRAINJOB = Path(__file__).resolve().parents[2] / "import_manifests" / "trainjobs" / "01-multi-node.yaml"


def test_an_upstream_trainjob_on_torch_distributed_runs_without_runtime(torchrun_image, tmp_path):
    """Kubeflow Trainer's own example (examples/yaml/01-multi-node.yaml, unchanged): three nodes of torchrun
    with gloo, on the shipped torch-distributed (its CUDA image swapped for the local torch image)."""
    r = trainspec("run", UPSTREAM_TRAINJOB, "--image", torchrun_image, cwd=tmp_path, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "TrainJob multi-node-example: ClusterTrainingRuntime 'torch-distributed': Kubeflow Trainer v2.3.0's " \
        "shipped definition" in out
    for rank in range(3):
        assert re.search(rf"^node-{rank} \| RANK: {rank}$", out, re.M), out
    assert len(re.findall(r"^node-\d \| WORLD_SIZE: 3$", out, re.M)) == 3, out


def test_a_bad_runtime_file_is_an_error_at_its_line(tmp_path):
    bad = tmp_path / "rt.yaml"
    doc = yaml.safe_load(RUNTIME.read_text())
    del doc["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["metadata"]
    bad.write_text(yaml.safe_dump(doc, sort_keys=False))
    r = trainspec("run", SPEC, "--runtime", bad, cwd=tmp_path)
    assert r.returncode == 2
    assert re.search(rf"{re.escape(str(bad))}:\d+:\d+: spec\.template\.spec\.replicatedJobs: no replicatedJob", r.stderr), r.stderr
    assert "Traceback" not in r.stderr


def test_the_k8s_form_runs_with_the_same_variables(test_image, tmp_path):
    """--target k8s --runtime: the JobSet controller's Jobs and Service, run as a plain cluster would."""
    out = tmp_path / "k8s.yaml"
    r = trainspec("compile", SPEC, "--target", "k8s", "--runtime", RUNTIME, "-o", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = trainspec("run", out, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    text = re.sub(r"^node-0-(\d) \|", r"node-\1 |", r.stdout + r.stderr, flags=re.M)  # pods of Job pet-node-0
    _check_nodes(text)


MPI_RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: mpi-distributed}
spec:
  mlPolicy:
    numNodes: 1
    mpi: {mpiImplementation: OpenMPI, numProcPerNode: 1, sshAuthMountPath: /root/.ssh}
  template:
    spec:
      replicatedJobs:
        - name: launcher
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  containers: [{name: node, image: trainspec-test:py3}]
        - name: node
          template:
            spec:
              template:
                spec:
                  containers: [{name: node, image: trainspec-test:py3, command: [sleep, "1"]}]
"""
MPI_TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: mp}
spec:
  runtimeRef: {name: mpi-distributed}
  trainer:
    numNodes: 2
    command: [sh, -c, "cat /etc/mpi/hostfile; ls /root/.ssh; env | grep OMPI_ | sort"]
"""


def test_a_trainjob_on_a_given_mpi_cluster_runtime_gets_the_hostfile_and_key(test_image, tmp_path):
    """mpi.go: the hostfile ConfigMap at /etc/mpi/hostfile, the ssh key Secret (made fresh for the run) at
    sshAuthMountPath, OMPI_MCA_* on the launcher."""
    (tmp_path / "rt.yaml").write_text(MPI_RUNTIME)
    (tmp_path / "tj.yaml").write_text(MPI_TRAINJOB)
    r = trainspec("run", "tj.yaml", "--runtime", "rt.yaml", cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "launcher-0 | mp-node-0-0.mp slots=1" in out and "launcher-0 | mp-node-0-1.mp slots=1" in out
    assert "launcher-0 | authorized_keys" in out and "launcher-0 | id_rsa" in out
    assert "launcher-0 | OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile" in out
