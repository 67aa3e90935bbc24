"""GPU passthrough. There is no GPU here: the device requests sent to Docker are
checked on created containers, and the errors where the daemon has no NVIDIA
runtime are checked for real. A real-GPU run happens only where nvidia-smi works."""

from __future__ import annotations

import io
import shutil
import subprocess

import pytest

from trainspec.compiler.errors import UsageError
from trainspec.emulator.console.table import job_console
from trainspec.emulator.engine.run import Run, RunOptions
from trainspec.emulator.readers import dispatch

from emuhelpers import run_containers, spec, trainspec

pytestmark = pytest.mark.docker


def _gpu_spec(tmp_path, per_worker: int = 2):
    def edit(doc):
        doc["spec"]["env"]["MODE"] = "fail-once"
        doc["spec"]["accelerator"] = "nvidia.com/gpu"
        doc["spec"]["roles"] = {"ps": {"replicas": 1, "resources": {"cpu": "1", "memory": "256Mi"}},
                                "worker": {"replicas": 2, "resources": {"cpu": "1", "gpu": per_worker}}}
    return spec("flaky.yaml", tmp_path, edit, out="gpu.yaml")


def test_device_requests_give_each_replica_its_own_gpus(tmp_path, docker_client, test_image, leak_check):
    job = dispatch.load(str(_gpu_spec(tmp_path)), state_dir=str(tmp_path / ".trainspec"))
    run = Run(job, RunOptions(gpus="0,1,2,3,4", assume_gpu_runtime=True, offline=True,
                              state_dir=str(tmp_path / ".trainspec"), quiet=True), job_console(job, None, None, True))
    try:
        created = run.create_all()
        seen = {}
        for name, cid in created.items():
            attrs = docker_client.api.inspect_container(cid)
            env = dict(e.split("=", 1) for e in attrs["Config"]["Env"])
            requests = attrs["HostConfig"].get("DeviceRequests") or []
            seen[name] = (requests, env["NVIDIA_VISIBLE_DEVICES"])
        assert seen["ps-0"] == ([], "void")  # no GPU for the parameter server, not even by default
        for name, ids in (("worker-0", ["0", "1"]), ("worker-1", ["2", "3"])):
            requests, visible = seen[name]
            assert requests == [{"Driver": "nvidia", "Count": 0, "DeviceIDs": ids, "Capabilities": [["gpu"]],
                                 "Options": {}}]
            assert visible == ",".join(ids)
        attrs = docker_client.api.inspect_container(created["worker-0"])
        assert attrs["HostConfig"]["NanoCpus"] == 10**9
    finally:
        run.teardown()


def test_no_nvidia_runtime_is_refused_before_anything_exists(tmp_path, docker_client, test_image, leak_check):
    if "nvidia" in (docker_client.info().get("Runtimes") or {}):
        pytest.skip("this daemon has an NVIDIA runtime")
    r = trainspec("run", _gpu_spec(tmp_path), "--offline", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "asks for 4 GPUs but this Docker daemon has no NVIDIA runtime" in r.stderr and "--cpu-only" in r.stderr
    assert run_containers(docker_client, "flaky", tmp_path) == []


def test_failed_gpu_start_is_explained_and_cleaned_up(tmp_path, docker_client, test_image, leak_check):
    """Trusting a runtime that is not there: Docker creates the container and
    refuses to start it; the emulator says why and leaves nothing behind."""
    if shutil.which("nvidia-smi"):
        pytest.skip("a GPU runtime may work here")
    r = trainspec("run", _gpu_spec(tmp_path), "--offline", "--gpus", "0,1,2,3", cwd=tmp_path,
                  env={"TRAINSPEC_ASSUME_GPU_RUNTIME": "1"})
    assert r.returncode == 2, r.stdout + r.stderr
    assert "no NVIDIA GPU runtime" in r.stderr and 'could not select device driver' in r.stderr
    assert "Traceback" not in r.stderr
    assert run_containers(docker_client, "flaky", tmp_path) == []


def test_more_gpus_than_allowed_is_an_error(tmp_path, docker_client, test_image, leak_check):
    r = trainspec("run", _gpu_spec(tmp_path), "--offline", "--gpus", "0,1,2", cwd=tmp_path,
                  env={"TRAINSPEC_ASSUME_GPU_RUNTIME": "1"})
    assert r.returncode == 2
    assert "asks for 4 GPUs (worker-0: 2, worker-1: 2) but only 3 may be used" in r.stderr
    r = trainspec("run", _gpu_spec(tmp_path), "--offline", "--gpus", "none", cwd=tmp_path)
    assert r.returncode == 2 and "--gpus none allows none" in r.stderr


def test_cpu_only_runs_a_gpu_job_without_gpus(tmp_path, test_image, leak_check):
    r = trainspec("run", _gpu_spec(tmp_path), "--offline", "--cpu-only", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "--cpu-only: GPU requests dropped (worker: 2 each)" in r.stdout


def _nvidia_works() -> bool:
    if not shutil.which("nvidia-smi"):
        return False
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True, check=False).returncode == 0


@pytest.mark.gpu
@pytest.mark.skipif(not _nvidia_works(), reason="no working nvidia-smi on this machine")
def test_real_gpus_are_visible_and_disjoint(tmp_path, test_image, leak_check):
    def edit(doc):
        doc["spec"]["command"] = ["sh", "-c", "nvidia-smi -L && nvidia-smi -L | wc -l | grep -qx 1"]
        doc["spec"]["roles"] = {"worker": {"replicas": 1, "resources": {"gpu": 1}}}
    r = trainspec("run", spec("flaky.yaml", tmp_path, edit, out="real-gpu.yaml"), "--gpus", "0", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "GPU 0" in r.stdout



@pytest.mark.parametrize("opts,want", [
    ({"share_gpus": True}, {"worker-0": ["0", "1"], "worker-1": ["0", "1"]}),   # shared, each sees both
    ({"gpus_per_replica": 1}, {"worker-0": ["0"], "worker-1": ["1"]}),          # fewer each, disjoint
])
def test_more_gpus_than_the_machine_has_only_when_told(tmp_path, docker_client, test_image, leak_check, opts, want):
    """2 workers x 2 GPUs on a 2-GPU machine: an error by default; --share-gpus or
    --gpus-per-replica fit it, with a note, and the device requests say what each got."""
    state = str(tmp_path / ".trainspec")
    job = dispatch.load(str(_gpu_spec(tmp_path)), state_dir=state)
    with pytest.raises(UsageError, match="--gpus-per-replica N.*--share-gpus"):
        Run(job, RunOptions(gpus="0,1", assume_gpu_runtime=True, offline=True, state_dir=state, quiet=True),
            job_console(job, None, None, True)).prepare()
    out = io.StringIO()
    job = dispatch.load(str(_gpu_spec(tmp_path)), state_dir=state)
    run = Run(job, RunOptions(gpus="0,1", assume_gpu_runtime=True, offline=True, state_dir=state, **opts),
              job_console(job, out, None, False))
    try:
        created = run.create_all()
        for name, ids in want.items():
            attrs = docker_client.api.inspect_container(created[name])
            assert attrs["HostConfig"]["DeviceRequests"][0]["DeviceIDs"] == ids
        note = out.getvalue()
        assert ("replicas share them" in note) if opts.get("share_gpus") else ("worker: 2 -> 1 each" in note)
    finally:
        run.teardown()
