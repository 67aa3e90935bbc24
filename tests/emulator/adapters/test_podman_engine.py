"""What Podman does its own way, through the adapter, on a real Podman: GPUs as CDI devices
(nvidia.com/gpu=N, each replica its own) and a clear error when no CDI spec exists; a Docker image name
found as Podman's localhost/NAME, and a missing one said in Podman's words; its socket's error.

There is no GPU here: a CDI spec whose devices only set an env variable stands in for NVIDIA's
(written to /var/run/cdi for the test, only where no nvidia.com/gpu spec exists), so what the run
sent to the engine is checked on what Podman made of it in the containers."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from emuhelpers import norm, spec, trainspec
from helpers import unavailable

pytestmark = [pytest.mark.docker, pytest.mark.podman]


def _gpu_spec(tmp_path: Path) -> Path:
    def edit(doc):
        doc["spec"]["accelerator"] = "nvidia.com/gpu"
        doc["spec"]["command"] = ["sh", "-c", "echo gpus: $(env | grep -o '^FAKE_CDI_GPU_[0-9]*' | sort | xargs)"]
        doc["spec"]["roles"] = {"ps": {"replicas": 1}, "worker": {"replicas": 2, "resources": {"gpu": 2}}}
        doc["spec"]["restartPolicy"] = "Never"
    return spec("flaky.yaml", tmp_path, edit, out="gpu.yaml")


@pytest.fixture
def no_gpu_cdi_spec(podman_client):
    from trainspec.emulator.adapters.podman_engine import cdi_specs

    if cdi_specs():
        pytest.skip("this host has a CDI spec for nvidia.com/gpu (real GPUs): not replaced by a test's")


@pytest.fixture
def fake_cdi_spec(no_gpu_cdi_spec):
    if os.geteuid() != 0:
        unavailable("writing a CDI spec to /var/run/cdi needs root")
    path = Path("/var/run/cdi") / f"trainspec-test-{os.getpid()}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    devices = "".join(f'  - name: "{i}"\n    containerEdits: {{env: ["FAKE_CDI_GPU_{i}=1"]}}\n' for i in range(4))
    path.write_text(f'cdiVersion: "0.5.0"\nkind: nvidia.com/gpu\ndevices:\n{devices}')
    yield path
    path.unlink()


def test_gpus_reach_podman_as_cdi_devices_one_set_per_replica(tmp_path, podman_test_image, fake_cdi_spec,
                                                               leak_check):
    r = trainspec("run", _gpu_spec(tmp_path), "--engine", "podman", "--gpus", "0,1,2,3", "--offline", cwd=tmp_path)
    out = norm(r.stdout)
    assert r.returncode == 0, out + r.stderr
    # nvidia.com/gpu=0 and =1 for worker-0, =2 and =3 for worker-1, none for the parameter server
    assert "worker-0 | gpus: FAKE_CDI_GPU_0 FAKE_CDI_GPU_1" in out
    assert "worker-1 | gpus: FAKE_CDI_GPU_2 FAKE_CDI_GPU_3" in out
    assert re.search(r"^ps-0 \| gpus: *$", out, re.M), out


def test_a_gpu_id_the_cdi_spec_lacks_is_a_clear_error(tmp_path, podman_test_image, fake_cdi_spec, leak_check):
    r = trainspec("run", _gpu_spec(tmp_path), "--engine", "podman", "--gpus", "0,1,2,7", "--offline", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Podman's CDI spec does not define the GPUs" in r.stderr and "nvidia-ctk cdi list" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_no_cdi_spec_is_refused_before_anything_exists(tmp_path, podman_test_image, no_gpu_cdi_spec, leak_check):
    r = trainspec("run", _gpu_spec(tmp_path), "--engine", "podman", "--gpus", "0,1,2,3", "--offline", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith("trainspec: error: the job asks for 4 GPUs but Podman finds no CDI spec for "
                               "nvidia.com/gpu"), r.stderr
    assert "nvidia-ctk cdi generate" in r.stderr and "--cpu-only" in r.stderr
    assert not (tmp_path / ".trainspec" / "runs").exists() or not any((tmp_path / ".trainspec" / "runs").iterdir())


def test_a_docker_image_is_podmans_localhost_name_and_a_missing_one_says_how_to_load_it(tmp_path, podman_client, podman_test_image, leak_check):
    # `podman load` stored it as localhost/NAME, and no other name: every run of the `engine` fixture's
    # Podman half names NAME (flaky.yaml, tf-check.yaml...) and finds it
    assert [t for t in podman_client.images.get(f"localhost/{podman_test_image}").tags
            if t.endswith(podman_test_image)] == [f"localhost/{podman_test_image}"]
    r = trainspec("run", spec("flaky.yaml", tmp_path), "--engine", "podman", "--offline", "--image",
                  "trainspec-test:not-loaded", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "not present locally: trainspec-test:not-loaded" in r.stderr
    assert "`docker save trainspec-test:not-loaded | podman load`" in r.stderr and "localhost/" in r.stderr


def test_no_podman_socket_says_how_to_start_one(tmp_path):
    r = trainspec("run", spec("flaky.yaml", tmp_path), "--engine", "podman", cwd=tmp_path,
                  env={"CONTAINER_HOST": f"unix://{tmp_path}/none.sock"})
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith(f"trainspec: error: cannot reach Podman at unix://{tmp_path}/none.sock")
    assert "podman system service --time=0 unix:///run/podman/podman.sock" in r.stderr
    assert "systemctl --user start podman.socket" in r.stderr and "Traceback" not in r.stderr


def test_podman_containers_get_the_limits_and_a_fork_beyond_them_fails(tmp_path, podman_client, podman_test_image,
                                                                      leak_check):
    """Issue 32 on Podman (its compatible API): compose pids_limit honoured, the default memory limit
    set, and a fork beyond the limit fails inside the container."""
    import yaml

    fork = ("import os, sys, time\n"
            "for i in range(200):\n"
            "    try:\n"
            "        pid = os.fork()\n"
            "    except OSError:\n"
            "        print('fork failed after', i, flush=True); sys.exit(0)\n"
            "    if pid == 0:\n"
            "        time.sleep(30); os._exit(0)\n"
            "sys.exit(1)\n")
    doc = {"x-trainspec": {"job": "plimits"},
           "services": {"job": {"image": podman_test_image, "command": ["python", "-c", fork], "pids_limit": 30}}}
    (tmp_path / "compose.yaml").write_text(yaml.safe_dump(doc))
    r = trainspec("run", "compose.yaml", "--engine", "podman", "--offline", "--keep", cwd=tmp_path)
    try:
        assert r.returncode == 0 and "fork failed after" in r.stdout, r.stdout + r.stderr
        [c] = podman_client.containers.list(all=True, filters={"label": [
            "trainspec.dev/job=plimits", f"trainspec.dev/state-dir={tmp_path / '.trainspec'}"]})
        host_config = podman_client.api.inspect_container(c.id)["HostConfig"]
        assert host_config["PidsLimit"] == 30 and host_config["Memory"] > 0
    finally:
        trainspec("down", "plimits", "--engine", "podman", "-t", "0", cwd=tmp_path)
