"""Local images shared by the emulator's end-to-end tests: the test image plus a framework's wheels, or
plus the program an example's registry image would hold (committed locally: no registry, no build)."""

from __future__ import annotations

import os
import subprocess

import pytest

from emuhelpers import ROOT, layered_image, sshd_image
from helpers import unavailable

XGBOOST_IMAGE = os.environ.get("TRAINSPEC_XGBOOST_IMAGE", "trainspec-test:xgboost")
JAX_IMAGE = os.environ.get("TRAINSPEC_JAX_IMAGE", "trainspec-test:jax")

# specs/tf-args-style.yaml's program: the argument launch style, checked against the topology env.
TF_ARGS_TRAIN_PY = b'''
import argparse, os, socket, sys, time
p = argparse.ArgumentParser()
for a in ("job_name", "task_index", "ps_hosts", "worker_hosts", "output_dir"):
    p.add_argument("--" + a)
a = p.parse_args()
assert a.job_name == os.environ["TRAINSPEC_ROLE"] and a.task_index == os.environ["TRAINSPEC_INDEX"]
assert os.getcwd() == "/workspace"
me = a.ps_hosts.split(",") if a.job_name == "ps" else a.worker_hosts.split(",")
port = int(me[int(a.task_index)].rsplit(":", 1)[1])
if a.job_name == "ps":
    srv = socket.create_server(("", port))
    while True:
        srv.accept()[0].close()
for h in a.ps_hosts.split(","):
    host, p_ = h.rsplit(":", 1)
    for _ in range(100):
        try:
            socket.create_connection((host, int(p_)), timeout=2).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("cannot reach " + h)
os.makedirs(a.output_dir, exist_ok=True)
open(os.path.join(a.output_dir, a.job_name + a.task_index), "w").write("ok")
print(a.job_name, a.task_index, "reached every ps", flush=True)
'''

# torchrun as pip's console script runs it (the torch test image has the package, not the script).
TORCHRUN = b'#!/bin/sh\nexec python3 -m torch.distributed.run "$@"\n'

# specs/pytorch-elastic.yaml's /workspace/train.py: what torchrun gave this process, and the
# rendezvous store (MASTER_ADDR:MASTER_PORT, set by the agents after they met) reached.
TORCH_TRAIN_PY = b'''
import os, socket
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
node, local = int(os.environ["GROUP_RANK"]), int(os.environ["LOCAL_RANK"])
socket.create_connection((os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])), timeout=30).close()
print(f"rank {rank}/{world} (node {node}, local {local}): reached the store", flush=True)
'''

# specs/full-features.yaml's /workspace/finetune.py: torchrun's env and store, and every object the pod
# carries (Secret and ConfigMap env and volumes, the read-only claim, the init container's file).
FINETUNE_PY = b'''
import argparse, os, socket
p = argparse.ArgumentParser()
p.add_argument("--epochs")
p.add_argument("--output")
a = p.parse_args()
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
socket.create_connection((os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])), timeout=30).close()
assert os.environ["HF_TOKEN"] == "hf-token" and os.environ["WANDB_PROJECT"] == "squad", "env from objects"
assert open("/etc/finetune/lr").read() == "3e-5" and open("/etc/certs/ca.crt").read() == "test-ca"
assert os.path.isdir("/data/input") and not os.access("/data/input", os.W_OK), "data is read-only"
if os.environ["RUN_NAME"].endswith("-master-0"):
    assert os.path.exists("/scratch/vocab.ready"), "the init container's file is missing"
os.makedirs(a.output, exist_ok=True)
open(os.path.join(a.output, f"rank{rank}"), "w").write("ok")
# one write: the node's processes share the container's output
os.write(1, f"rank {rank}/{world} ({os.environ['RUN_NAME']}): secrets, configmaps and volumes in place\\n".encode())
'''


def _framework_image(test_image: str, flag: str, tag: str) -> str:
    r = subprocess.run(["bash", "scripts/build-framework-image.sh", flag, test_image], cwd=ROOT,
                       capture_output=True, text=True, timeout=1200)
    if r.returncode != 0:
        unavailable(f"cannot build {tag}: {(r.stderr or r.stdout).strip()[-300:]}")
    return tag


@pytest.fixture(scope="session")
def xgboost_image(test_image) -> str:
    return _framework_image(test_image, "--xgboost", XGBOOST_IMAGE)


@pytest.fixture(scope="session")
def jax_image(test_image) -> str:
    return _framework_image(test_image, "--jax", JAX_IMAGE)


@pytest.fixture(scope="session")
def tf_args_image(docker_client, test_image) -> str:
    """The test image plus /workspace/train.py, for the argument-style spec."""
    return layered_image(docker_client, test_image, "tf-args", {"workspace/train.py": TF_ARGS_TRAIN_PY})


@pytest.fixture(scope="session")
def mpi_image(docker_client, test_image) -> str:
    """The test image with `StrictModes no`, as mpi-operator's images: the Secret volume holding
    the ssh keys is world-writable, on a cluster and in the emulator."""
    return sshd_image(docker_client, test_image, strict=False)


@pytest.fixture(scope="session")
def torchrun_image(docker_client, torch_image) -> str:
    """The torch image plus the `torchrun` script and the programs pytorch-elastic.yaml and
    full-features.yaml name. Its PET_RDZV_CONF (torchrun's --rdzv-conf, which no controller sets) ends
    the elastic rendezvous 1 s after the last node joined instead of 30 s, and bounds a static one."""
    return layered_image(docker_client, torch_image, "torchrun", {
        "usr/local/bin/torchrun": TORCHRUN, "workspace/train.py": TORCH_TRAIN_PY,
        "workspace/finetune.py": FINETUNE_PY}, changes=["ENV PET_RDZV_CONF=last_call_timeout=1,timeout=30"],
        executable=("usr/local/bin/torchrun",))
