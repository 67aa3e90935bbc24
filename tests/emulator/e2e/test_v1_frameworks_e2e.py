"""XGBoost, JAX and Paddle examples run in the emulator with real programs.

xgboost.yaml: XGBoost's own collective tracker (RabitTracker on the master, RANK 0)
and an all-reduce plus a few boosting rounds across master + 2 workers, reached
through MASTER_ADDR / MASTER_PORT as the XGBoostJob controller injects them.
jax.yaml: jax.distributed.initialize() across 2 processes on CPU, from
COORDINATOR_ADDRESS / COORDINATOR_PORT / NUM_PROCESSES / PROCESS_ID.
The images are the test image plus the CPU wheels (scripts/build-framework-image.sh).
paddle.yaml's environment (worker 0's own pod IP in PADDLE_MASTER) is checked with
the test image: a program prints what it got.  A real Paddle collective all-reduce
through paddle.distributed.launch runs when the (large) image
`scripts/build-framework-image.sh --paddle` makes is present; CI does not build it.
"""

from __future__ import annotations

import os

import pytest
import yaml

from emuhelpers import ROOT, norm, trainspec

pytestmark = pytest.mark.docker
SPECS = ROOT / "specs"
PADDLE_IMAGE = os.environ.get("TRAINSPEC_PADDLE_IMAGE", "trainspec-test:paddle")


def _run(tmp_path, target: str | None, spec: str, image: str) -> str:
    source = SPECS / spec
    if target is not None:
        source = tmp_path / f"{target}.yaml"
        c = trainspec("compile", SPECS / spec, "--target", target, "-o", source, cwd=tmp_path)
        assert c.returncode == 0, c.stderr
    r = trainspec("run", source, "--image", image, "--cpu-only", "--offline", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return norm(r.stdout)


@pytest.mark.parametrize("target", [None, "compose"])
def test_xgboost_collective_tracker_with_two_workers(tmp_path, xgboost_image, leak_check, target):
    out = _run(tmp_path, target, "xgboost.yaml", xgboost_image)
    for rank, replica in enumerate(("master-0", "worker-0", "worker-1")):
        assert f"{replica} | rank {rank}/3: all-reduce ok (6.0), 3 trees" in out
    assert "(master-0 succeeded)" in out


@pytest.mark.parametrize("target", [None, "compose"])
def test_jax_distributed_initialize_two_processes(tmp_path, jax_image, leak_check, target):
    out = _run(tmp_path, target, "jax.yaml", jax_image)
    for i in (0, 1):
        assert f"worker-{i} | process {i}/2: allgather ok [0, 1]" in out
    assert "(all workers succeeded)" in out


def test_trainjob_jax_and_xgboost_run_on_trainer_hosts(tmp_path, jax_image, xgboost_image, leak_check):
    """The trainjob target's runtimes: JAX workers and the XGBoost master + workers as Trainer's `node` pods,
    from the variables the runtime writes (xgboost.yaml gives only its workers resources, which one node
    template cannot: here the master gets the same)."""
    out = _run(tmp_path, "trainjob", "jax.yaml", jax_image)
    for i in (0, 1):
        assert f"node-{i} | process {i}/2: allgather ok [0, 1]" in out
    doc = yaml.safe_load((SPECS / "xgboost.yaml").read_text())
    doc["spec"]["roles"]["master"]["resources"] = doc["spec"]["roles"]["worker"]["resources"]
    spec = tmp_path / "xgb.yaml"
    spec.write_text(yaml.safe_dump(doc, sort_keys=False))
    source = tmp_path / "xgb-trainjob.yaml"
    assert trainspec("compile", spec, "--target", "trainjob", "-o", source, cwd=tmp_path).returncode == 0
    r = trainspec("run", source, "--image", xgboost_image, "--cpu-only", "--offline", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out = norm(r.stdout)
    for rank in range(3):
        assert f"node-{rank} | rank {rank}/3: all-reduce ok (6.0), 3 trees" in out
    assert "(node succeeded)" in out and "would keep running" not in r.stdout + r.stderr


PADDLE_PROBE = """\
import os, socket
me = os.environ["TRAINSPEC_INDEX"]
master = os.environ["PADDLE_MASTER"]
host, port = master.rsplit(":", 1)
ip = socket.gethostbyname(host)
own = socket.gethostbyname(socket.gethostname())
print(f"worker {me}: master {'is me' if ip == own else 'elsewhere'} at port {port}, "
      f"literal ip {host == ip}, nnodes {os.environ['PADDLE_NNODES']}", flush=True)
"""


@pytest.mark.parametrize("target", [None, "compose"])
def test_paddle_collective_environment(tmp_path, test_image, leak_check, target):
    """Worker 0 gets its own pod IP as the rendezvous address, the others worker 0's name."""
    spec = tmp_path / "paddle.yaml"
    doc = yaml.safe_load((SPECS / "paddle.yaml").read_text())
    doc["spec"]["command"] = ["python3", "-c", PADDLE_PROBE]
    spec.write_text(yaml.safe_dump(doc))
    source = spec
    if target is not None:
        source = tmp_path / "compose.yaml"
        assert trainspec("compile", spec, "--target", target, "-o", source, cwd=tmp_path).returncode == 0
    r = trainspec("run", source, "--image", test_image, "--cpu-only", "--offline", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out = norm(r.stdout)
    assert "worker-0 | worker 0: master is me at port 36543, literal ip True, nnodes 3" in out
    for i in (1, 2):
        assert f"worker-{i} | worker {i}: master elsewhere at port 36543, literal ip False, nnodes 3" in out


PADDLE_TRAIN = """\
import os, sys
open("/tmp/train.py", "w").write('''
import paddle, paddle.distributed as dist
dist.init_parallel_env()
x = paddle.to_tensor([float(dist.get_rank() + 1)])
dist.all_reduce(x)
print(f"rank {dist.get_rank()}/{dist.get_world_size()}: all-reduce {float(x.numpy()[0])}", flush=True)
''')
os.execvp(sys.executable, [sys.executable, "-m", "paddle.distributed.launch", "--log_dir", "/tmp/log", "/tmp/train.py"])
"""

PADDLE_PS = """\
import os, sys
open("/tmp/train.py", "w").write('''
import os
os.environ["FLAGS_enable_pir_api"] = "0"  # fleet's parameter-server path needs the legacy static graph
import numpy as np
import paddle
paddle.enable_static()
import paddle.distributed.fleet as fleet
fleet.init()
out = open("/proc/1/fd/1", "w")  # the pod's log: launch writes its children's output to --log_dir
if fleet.is_server():
    servers = os.environ["PADDLE_PSERVERS_IP_PORT_LIST"]
    print(f"server {fleet.server_index()}/{fleet.server_num()}: {servers}", file=out, flush=True)
else:
    total = fleet.util.all_reduce(np.array([fleet.worker_index() + 1]), "sum", "worker")
    print(f"trainer {fleet.worker_index()}/{fleet.worker_num()}: all-reduce {int(total[0])}", file=out, flush=True)
''')
os.execvp(sys.executable, [sys.executable, "-m", "paddle.distributed.launch", "--log_dir", "/tmp/log", "/tmp/train.py"])
"""


def _paddle_image(docker_client) -> str:
    import docker.errors

    try:
        docker_client.images.get(PADDLE_IMAGE)
    except docker.errors.ImageNotFound:
        pytest.skip(f"{PADDLE_IMAGE} is not built (scripts/build-framework-image.sh --paddle; ~850 MB)")
    return PADDLE_IMAGE


def _paddle_run(tmp_path, image: str, spec_name: str, program: str, roles: dict, target: str | None) -> str:
    spec = tmp_path / spec_name
    doc = yaml.safe_load((SPECS / spec_name).read_text())
    doc["spec"]["command"] = ["python3", "-c", program]
    doc["spec"]["roles"] = roles
    spec.write_text(yaml.safe_dump(doc))
    source = spec
    if target is not None:
        source = tmp_path / f"{target}.yaml"
        c = trainspec("compile", spec, "--target", target, "-o", source, cwd=tmp_path)
        assert c.returncode == 0, c.stderr
    r = trainspec("run", source, "--image", image, "--cpu-only", "--offline", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return norm(r.stdout)


def test_paddle_collective_all_reduce_through_paddle_launch(tmp_path, docker_client, leak_check):
    """paddle.distributed.launch finds its rendezvous from PADDLE_MASTER / PADDLE_NNODES alone:
    worker 0 serves it on its own pod IP, the other worker reaches it by name."""
    out = _paddle_run(tmp_path, _paddle_image(docker_client), "paddle.yaml", PADDLE_TRAIN,
                      {"worker": {"replicas": 2}}, None)
    assert "worker-0 | rank 0/2: all-reduce 3.0" in out and "worker-1 | rank 1/2: all-reduce 3.0" in out
    assert "(all workers succeeded)" in out


def test_paddle_collective_all_reduce_from_jobset_yaml(tmp_path, docker_client, leak_check):
    """The jobset target: one template for both workers, so each names itself by its JobSet host
    (POD_IP) and PADDLE_MASTER is worker 0's name everywhere; worker 0 recognises itself by it and
    serves the rendezvous; the gloo endpoints are host names."""
    out = _paddle_run(tmp_path, _paddle_image(docker_client), "paddle.yaml", PADDLE_TRAIN,
                      {"worker": {"replicas": 2}}, "jobset")
    assert "worker-0 | rank 0/2: all-reduce 3.0" in out and "worker-1 | rank 1/2: all-reduce 3.0" in out
    # worker 0 is rank 0: launch ranks its KV master first; it served launch's KV store under its JobSet name, and worker 1 reached it there
    assert "worker-1 | [" in out and "HTTP Request: POST http://paddle-collective-worker-0-0.paddle-collective:36543/" in out
    assert "job paddle-collective succeeded: worker succeeded" in out


def test_paddle_ps_rendezvous_and_trainer_all_reduce_from_jobset_yaml(tmp_path, docker_client, leak_check):
    """PS mode from jobset.yaml: two masters in one template name themselves by their JobSet hosts, master 0
    serves launch's rendezvous and the trainers' gloo store under its name; each pod runs one server and one
    trainer (PADDLE_SERVER_NUM / PADDLE_TRAINER_NUM = 1, as the PaddleJob controller gives them), and the 3
    trainers all-reduce over gloo.  (The CPU wheel has no brpc parameter-server runtime: no PS training here.)"""
    roles = {"master": {"replicas": 2, "restartPolicy": "Never"}, "worker": {"replicas": 1, "restartPolicy": "Never"}}
    out = _paddle_run(tmp_path, _paddle_image(docker_client), "paddle-ps.yaml", PADDLE_PS, roles, "jobset")
    # launch ranks the rendezvous pod (its KV master) first, the others in random order
    assert "master-0 | trainer 0/3: all-reduce 6" in out
    assert {f"{r} | trainer {k}/3: all-reduce 6" in out for r in ("master-1", "worker-0") for k in (1, 2)} == {True, False}
    assert sum(f"trainer {k}/3: all-reduce 6" in out for k in (1, 2)) == 2
    servers = "paddle-ps-master-0-0.paddle-ps:"  # the rendezvous role's endpoints are its JobSet names
    assert f"master-0 | server 0/3: {servers}" in out and ",paddle-ps-master-0-1.paddle-ps:" in out
    assert "job paddle-ps succeeded: master succeeded" in out
