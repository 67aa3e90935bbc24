"""XGBoost, Paddle and JAX: each replica's environment exactly as the Kubeflow v1 controllers
inject it (shared/reference/CONVENTIONS-V2.md §4), in their order, and the spec rules."""

from __future__ import annotations

import textwrap

import pytest

from trainspec.compiler.errors import SpecErrors
from trainspec.compiler.plan import FieldRef, resolved_env
from trainspec.targets import load_plans

from helpers import SPECS

INJECTED = ("MASTER_PORT", "MASTER_ADDR", "WORLD_SIZE", "RANK", "PYTHONUNBUFFERED", "WORKER_PORT", "WORKER_ADDRS",
            "PADDLE_JOB_ID", "PADDLE_NNODES", "POD_IP_DUMMY", "PADDLE_MASTER", "PADDLE_SERVER_NUM",
            "PADDLE_TRAINER_NUM", "COORDINATOR_PORT", "COORDINATOR_ADDRESS", "NUM_PROCESSES", "PROCESS_ID")


def injected(spec: str) -> dict[str, list]:
    """replica name -> the framework variables it gets, in order."""
    (plan,) = load_plans(str(SPECS / spec))
    return {r.name: [(n, v) for n, v in resolved_env(plan, r) if n in INJECTED] for r in plan.replicas()}


def test_xgboost_master_rank_0_workers_index_plus_1_and_worker_addrs():
    env = injected("xgboost.yaml")
    workers = "xgboost-dist-worker-0,xgboost-dist-worker-1"  # Σ-1 = 2 names (CONVENTIONS-V2 §4)
    for name, rank in (("xgboost-dist-master-0", "0"), ("xgboost-dist-worker-0", "1"), ("xgboost-dist-worker-1", "2")):
        assert env[name] == [("MASTER_PORT", "9999"), ("MASTER_ADDR", "xgboost-dist-master-0"), ("WORLD_SIZE", "3"),
                             ("RANK", rank), ("PYTHONUNBUFFERED", "1"), ("WORKER_PORT", "9999"),
                             ("WORKER_ADDRS", workers)]


def test_xgboost_single_master_gets_no_worker_vars(tmp_path):
    path = tmp_path / "one.yaml"
    path.write_text((SPECS / "xgboost.yaml").read_text().replace("replicas: 2", "replicas: 0"))
    (plan,) = load_plans(str(path))
    (master,) = [r for r in plan.replicas() if r.role == "master"]
    names = [n for n, _ in resolved_env(plan, master)]
    assert "WORLD_SIZE" in names and "WORKER_ADDRS" not in names and "WORKER_PORT" not in names
    assert plan.success.text == "master-0 succeeds"


def test_paddle_collective_worker_0_announces_its_pod_ip():
    env = injected("paddle.yaml")
    base = [("PYTHONUNBUFFERED", "1"), ("PADDLE_JOB_ID", "paddle-collective"), ("PADDLE_NNODES", "3")]
    assert env["paddle-collective-worker-0"] == base + [("POD_IP_DUMMY", FieldRef("status.podIP")),
                                                        ("PADDLE_MASTER", "$(POD_IP_DUMMY):36543")]
    for i in (1, 2):
        assert env[f"paddle-collective-worker-{i}"] == base + [("PADDLE_MASTER", "paddle-collective-worker-0:36543")]
    (plan,) = load_plans(str(SPECS / "paddle.yaml"))
    assert plan.success.text == "all workers succeed"
    assert {r.restart_policy for r in plan.roles} == {"OnFailure"}


def test_paddle_ps_master_0_is_the_rendezvous_and_no_trainer_id():
    env = injected("paddle-ps.yaml")
    base = [("PYTHONUNBUFFERED", "1"), ("PADDLE_JOB_ID", "paddle-ps"), ("PADDLE_NNODES", "4")]
    assert env["paddle-ps-master-0"] == base + [("POD_IP_DUMMY", FieldRef("status.podIP")),
                                                ("PADDLE_MASTER", "$(POD_IP_DUMMY):36543"), ("PADDLE_SERVER_NUM", "1")]
    assert env["paddle-ps-master-1"] == base + [("PADDLE_MASTER", "paddle-ps-master-0:36543"),
                                                ("PADDLE_SERVER_NUM", "1")]
    for i in (0, 1):
        assert env[f"paddle-ps-worker-{i}"] == base + [("PADDLE_MASTER", "paddle-ps-master-0:36543"),
                                                       ("PADDLE_TRAINER_NUM", "1")]
    (plan,) = load_plans(str(SPECS / "paddle-ps.yaml"))
    assert plan.success.text == "all masters succeed"


def test_jax_coordinator_is_worker_0_short_name_without_port():
    env = injected("jax.yaml")
    for i in (0, 1):
        assert env[f"jax-dist-worker-{i}"] == [("PYTHONUNBUFFERED", "1"), ("COORDINATOR_PORT", "6666"),
                                               ("COORDINATOR_ADDRESS", "jax-dist-worker-0"), ("NUM_PROCESSES", "2"),
                                               ("PROCESS_ID", str(i))]
    (plan,) = load_plans(str(SPECS / "jax.yaml"))
    assert plan.container_name == "jax" and plan.roles[0].restart_policy == "Never"
    assert plan.success.text == "all workers succeed"


@pytest.mark.parametrize("framework,roles,message", [
    ("xgboost", "master: {replicas: 2}, worker: {replicas: 1}", "2 master replicas in a xgboost job"),
    ("xgboost", "worker: {replicas: 2}", "needs a 'master' role"),
    ("jax", "master: {replicas: 1}, worker: {replicas: 1}", "'master' is not a jax role"),
    ("paddle", "ps: {replicas: 1}, worker: {replicas: 1}", "'ps' is not a paddle role"),
    ("paddle", "master: {replicas: 1}", "needs a 'worker' role"),
    ("paddle", "master: {replicas: 0}, worker: {replicas: 2}", "0 master replicas in a paddle job"),
])
def test_spec_errors(tmp_path, framework, roles, message):
    path = tmp_path / "bad.yaml"
    path.write_text(textwrap.dedent(f"""\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {{name: bad}}
        spec:
          framework: {framework}
          image: img
          roles: {{{roles}}}
        """))
    with pytest.raises(SpecErrors) as info:
        load_plans(str(path))
    text = str(info.value)
    assert message in text, text
    assert "bad.yaml:" in text
