"""Every framework topology in specs/ compiles and runs to success in the emulator.

The example specs name registry images; the runs map them to the local test
image (--image), and --cpu-only drops their GPU requests. PyTorch runs a real
gloo all-reduce (torch in the image), MPI a real mpirun across 2 workers.
"""

from __future__ import annotations

import pytest

from trainspec.compiler.errors import UsageError
from trainspec.emulator.console.table import job_console
from trainspec.emulator.engine.run import Run, RunOptions
from trainspec.emulator.readers import dispatch

from emuhelpers import ROOT, norm, trainspec

pytestmark = pytest.mark.docker
SPECS = ROOT / "specs"


def _run(tmp_path, spec: str, image: str, *extra: str):
    path = SPECS / spec
    text = path.read_text()
    if "hostPath: /mnt/datasets/mnist" in text:
        # The emulator never creates a missing host folder (it used to, as root, through Docker):
        # point the dataset at one that exists.
        (tmp_path / "mnist").mkdir()
        path = tmp_path / spec
        path.write_text(text.replace("hostPath: /mnt/datasets/mnist", f"hostPath: {tmp_path / 'mnist'}"))
        extra = ("--mount-host", str(tmp_path / "mnist"), *extra)  # a host path only as the user names it
    r = trainspec("run", path, "--image", image, "--cpu-only", "--offline", *extra, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return norm(r.stdout)


@pytest.mark.parametrize("spec,decider", [
    ("tf-single.yaml", "worker-0"), ("tf-ps.yaml", "worker-0"), ("tf-chief.yaml", "chief-0"),
    ("tf-multiworker.yaml", "all workers"), ("mxnet-ps.yaml", "scheduler-0"),
])
def test_topology_runs_to_success(tmp_path, test_image, leak_check, spec, decider):
    out = _run(tmp_path, spec, test_image)
    assert "SUCCEEDED in" in out and f"({decider} succeeded)" in out
    if spec == "mxnet-ps.yaml":  # servers and workers found the scheduler through DMLC_PS_ROOT_URI
        assert "scheduler-0 | every node registered" in out


def test_tf_ps_workers_reach_every_ps(tmp_path, test_image, engine, leak_check):
    out = _run(tmp_path, "tf-ps.yaml", test_image)
    assert "worker-0 | reached every ps" in out


def test_tf_argument_style(tmp_path, tf_args_image, leak_check):
    out = _run(tmp_path, "tf-args-style.yaml", tf_args_image)
    assert "worker-0 | worker 0 reached every ps" in out
    assert (tmp_path / ".trainspec/volumes/results/tf-args/worker0").read_text() == "ok"


def test_mpi_launcher_reaches_every_worker_with_mpirun(tmp_path, mpi_image, leak_check):
    out = _run(tmp_path, "mpi-horovod.yaml", mpi_image)
    assert "launcher-0 | rank on mpi-horovod-worker-0" in out
    assert "launcher-0 | rank on mpi-horovod-worker-1" in out
    assert "Accepted publickey for root" in out  # the run's own key, through each worker's sshd


def test_pytorch_gloo_all_reduce(tmp_path, torch_image, leak_check):
    out = _run(tmp_path, "pytorch-ddp.yaml", torch_image)
    assert "master-0 | rank 0/2: all-reduce ok (3.0)" in out
    assert "worker-0 | rank 1/2: all-reduce ok (3.0)" in out


def test_full_features_spec_is_ready_to_run_once_given_its_cluster_objects(tmp_path, docker_client, test_image):
    """Everything a pod can carry: it needs the Secrets and ConfigMaps a cluster
    would hold; given them (and local images), every check before starting passes."""
    with pytest.raises(UsageError, match="--secret"):
        dispatch.load(str(SPECS / "full-features.yaml"))
    job = dispatch.load(str(SPECS / "full-features.yaml"), state_dir=str(tmp_path),
                      secret_options=["hf-credentials:token=t", "internal-ca:ca.crt=c"],
                      configmap_options=["tracking:project=p", "finetune-config:a=b"])
    run = Run(job, RunOptions(cpu_only=True, images=["busybox:1.36=" + test_image, test_image],
                              state_dir=str(tmp_path), quiet=True), job_console(job, None, None, True))
    run.prepare()
    master = job.replicas[0]
    assert master.main.startup.kind == "http" and master.main.readiness.kind == "tcp"
    assert master.main.post_start and master.main.pre_stop
    assert (tmp_path / "volumes" / "squad").is_dir()


@pytest.mark.parametrize("spec,check", [
    ("tf-ps.yaml", "worker-0 | reached every ps"),
    ("mxnet-ps.yaml", "(scheduler-0 succeeded)"),
    ("mpi-horovod.yaml", "launcher-0 | rank on mpi-horovod-worker-1"),
])
def test_compose_output_runs_too(tmp_path, test_image, leak_check, spec, check):
    compiled = tmp_path / "compose.yaml"
    c = trainspec("compile", SPECS / spec, "--target", "compose", "-o", compiled, cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    r = trainspec("run", compiled, "--image", test_image, "--cpu-only", "--offline", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert check in norm(r.stdout)


def test_compose_pytorch_all_reduce(tmp_path, torch_image, leak_check):
    compiled = tmp_path / "compose.yaml"
    assert trainspec("compile", SPECS / "pytorch-ddp.yaml", "--target", "compose", "-o", compiled,
                     cwd=tmp_path).returncode == 0
    r = trainspec("run", compiled, "--image", torch_image, "--cpu-only", "--offline", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "worker-0 | rank 1/2: all-reduce ok (3.0)" in norm(r.stdout)


def test_pytorch_env_and_rendezvous_from_a_jsonnet_spec(tmp_path, test_image, leak_check):
    r = trainspec("run", ROOT / "tests/emulator/specs/pytorch-rendezvous.jsonnet", "--tla", "workers=3", "--offline",
                  cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = norm(r.stdout)
    assert "master-0 | master heard ranks [1, 2, 3]" in out
    assert "worker-2 | rank 3 of 4, master ptcheck-master-0:23456" in out
