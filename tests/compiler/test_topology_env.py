"""What each replica sees, per topology: framework variables and TRAINSPEC_* exactly as documented."""

from __future__ import annotations

import json

import pytest

from trainspec.compiler.plan import resolved_env
from trainspec.targets import load_plans

from helpers import SPECS


def env_of(plan, name: str) -> dict:
    replica = next(r for r in plan.replicas() if r.name == name)
    return dict(resolved_env(plan, replica))


def plan_for(spec: str):
    (plan,) = load_plans(str(SPECS / spec))
    return plan


def test_tf_ps_tf_config_per_replica():
    plan = plan_for("tf-ps.yaml")
    cluster = {"ps": ["tf-ps-ps-0:2222", "tf-ps-ps-1:2222"],
               "worker": ["tf-ps-worker-0:2222", "tf-ps-worker-1:2222", "tf-ps-worker-2:2222"]}
    for role, count in (("ps", 2), ("worker", 3), ("evaluator", 1)):
        for index in range(count):
            env = env_of(plan, f"tf-ps-{role}-{index}")
            config = json.loads(env["TF_CONFIG"])
            assert config == {"cluster": cluster, "task": {"type": role, "index": index}, "environment": "cloud"}
            assert env["TRAINSPEC_ROLE"] == role and env["TRAINSPEC_INDEX"] == str(index)
            assert env["TRAINSPEC_HOSTS_PS"] == "tf-ps-ps-0:2222,tf-ps-ps-1:2222"
            assert env["TRAINSPEC_NUM_WORKER"] == "3" and env["TRAINSPEC_NUM_EVALUATOR"] == "1"
            assert env["TRAINSPEC_HOSTS_EVALUATOR"] == "tf-ps-evaluator-0:2222"
            assert env["TRAINSPEC_JOB"] == "tf-ps"
            assert env["LOG_LEVEL"] == "info"


def test_tf_chief_cluster_lists_chief_and_excludes_evaluator():
    plan = plan_for("tf-chief.yaml")
    config = json.loads(env_of(plan, "tf-chief-evaluator-0")["TF_CONFIG"])
    assert config["cluster"] == {"chief": ["tf-chief-chief-0:2222"], "ps": ["tf-chief-ps-0:2222"],
                                 "worker": ["tf-chief-worker-0:2222", "tf-chief-worker-1:2222"]}
    assert config["task"] == {"type": "evaluator", "index": 0}
    assert json.loads(env_of(plan, "tf-chief-chief-0")["TF_CONFIG"])["task"] == {"type": "chief", "index": 0}
    assert plan.success_role == "chief"


def test_tf_single_worker_still_gets_tf_config():
    plan = plan_for("tf-single.yaml")
    config = json.loads(env_of(plan, "tf-single-worker-0")["TF_CONFIG"])
    assert config == {"cluster": {"worker": ["tf-single-worker-0:2222"]}, "task": {"type": "worker", "index": 0},
                      "environment": "cloud"}


def test_tf_argument_launch_style():
    plan = plan_for("tf-args-style.yaml")
    worker1 = next(r for r in plan.replicas() if r.name == "tf-args-worker-1")
    assert worker1.args == (
        "--job_name=worker", "--task_index=1",
        "--ps_hosts=tf-args-ps-0:2222,tf-args-ps-1:2222",
        "--worker_hosts=" + ",".join(f"tf-args-worker-{i}:2222" for i in range(4)),
        "--output_dir=/data/output/tf-args")


@pytest.mark.parametrize("name,rank", [("pytorch-ddp-master-0", 0), ("pytorch-ddp-worker-0", 1)])
def test_pytorch_env(name, rank):
    env = env_of(plan_for("pytorch-ddp.yaml"), name)
    assert env["MASTER_ADDR"] == env["PET_MASTER_ADDR"] == "pytorch-ddp-master-0"
    assert env["MASTER_PORT"] == env["PET_MASTER_PORT"] == "23456"
    assert env["WORLD_SIZE"] == "2" and env["PET_NNODES"] == "2"
    assert env["RANK"] == env["PET_NODE_RANK"] == str(rank)
    assert env["PET_NPROC_PER_NODE"] == "1"
    assert env["PYTHONUNBUFFERED"] == "1"


def test_pytorch_world_size_counts_processes_like_the_operator():
    plan = plan_for("full-features.yaml")  # 3 nodes x nprocPerNode 2
    env = env_of(plan, "bert-finetune-worker-1")
    assert env["WORLD_SIZE"] == "6" and env["PET_NNODES"] == "3" and env["RANK"] == "2"
    assert env["RUN_NAME"] == "bert-finetune-worker-1"
    assert env["LOG_LEVEL"] == "warning", "a role's env overrides the job's"


def test_mxnet_env():
    plan = plan_for("mxnet-ps.yaml")
    for role, count in (("scheduler", 1), ("server", 2), ("worker", 2)):
        for index in range(count):
            env = env_of(plan, f"mxnet-ps-{role}-{index}")
            assert env["DMLC_ROLE"] == role
            assert env["DMLC_PS_ROOT_URI"] == "mxnet-ps-scheduler-0"
            assert env["DMLC_PS_ROOT_PORT"] == "9091"
            assert env["DMLC_NUM_SERVER"] == "2" and env["DMLC_NUM_WORKER"] == "2"
            assert env["DMLC_USE_KUBERNETES"] == "1"
            assert env.get("DMLC_WORKER_ID") == (str(index) if role == "worker" else None)


def test_mpi_hostfile_and_launcher_env():
    plan = plan_for("mpi-horovod.yaml")
    assert plan.topology["hostfile"] == "mpi-horovod-worker-0 slots=1\nmpi-horovod-worker-1 slots=1\n"
    launcher = env_of(plan, "mpi-horovod-launcher-0")
    assert launcher["OMPI_MCA_orte_default_hostfile"] == "/etc/mpi/hostfile"
    assert launcher["OMPI_MCA_orte_set_default_slots"] == "1"
    assert launcher["K_MPI_JOB_ROLE"] == "launcher"
    worker = next(r for r in plan.replicas() if r.name == "mpi-horovod-worker-0")
    assert worker.command == ("/usr/sbin/sshd", "-De"), "workers run sshd when the spec gives them no command"
    assert env_of(plan, "mpi-horovod-worker-0")["K_MPI_JOB_ROLE"] == "worker"


def test_mpi_slots_default_to_worker_gpus(tmp_path):
    spec = tmp_path / "mpi.yaml"
    spec.write_text("""\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: hvd}
spec:
  framework: mpi
  image: hvd:1
  command: [mpirun, python, train.py]
  mpi: {implementation: Intel}
  roles:
    launcher: {replicas: 1}
    worker: {replicas: 3, resources: {gpu: 4}}
""")
    (plan,) = load_plans(str(spec))
    assert plan.topology["hostfile"] == "".join(f"hvd-worker-{i}:4\n" for i in range(3))
    env = env_of(plan, "hvd-launcher-0")
    assert env["I_MPI_HYDRA_HOST_FILE"] == "/etc/mpi/hostfile" and env["I_MPI_PERHOST"] == "4"


def test_user_env_overrides_a_framework_variable(tmp_path):
    spec = tmp_path / "pt.yaml"
    spec.write_text("""\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: pt}
spec:
  framework: pytorch
  image: pt:1
  env: {MASTER_PORT: "29500"}
  roles: {master: {replicas: 1}, worker: {replicas: 0}}
""")
    (plan,) = load_plans(str(spec))
    names = [name for name, _ in resolved_env(plan, next(plan.replicas()))]
    assert names.count("MASTER_PORT") == 1
    assert dict(resolved_env(plan, next(plan.replicas())))["MASTER_PORT"] == "29500"
