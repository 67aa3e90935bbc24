"""The trainjob target: strict Trainer v2 CRDs, the runtime it generates, and the frameworks it refuses."""

from __future__ import annotations

import textwrap

import kubernetes_validate
import pytest
import yaml

from trainspec.compiler import SpecErrors
from trainspec.compiler.plan import resolved_env
from trainspec.targets import load_plans, render, unsupported
from trainspec.targets.trainjob import render as trainjob

import operator_model
import schemas
from helpers import SPECS, compiled_docs, run_cli

K8S_VERSION = "1.33"
SUPPORTED = ("pytorch-ddp.yaml", "mpi-horovod.yaml", "jax.yaml")
# specs/xgboost.yaml gives its workers their own resources, which one `node` template cannot; this one is alike
XGBOOST = """\
    apiVersion: trainspec/v1
    kind: TrainingJob
    metadata: {name: xgb, namespace: ml}
    spec:
      framework: xgboost
      image: xgb:1
      command: [python3, train.py]
      env: {DATA: /data}
      roles:
        master: {replicas: 1, resources: {cpu: "1", memory: 2Gi}}
        worker: {replicas: 2, resources: {cpu: "1", memory: 2Gi}}
    """


def write_spec(tmp_path, body: str, name="job.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


@pytest.fixture
def xgboost_spec(tmp_path):
    return write_spec(tmp_path, XGBOOST, "xgb.yaml")


@pytest.mark.parametrize("spec", [*SUPPORTED, "xgboost"])
def test_valid_against_the_trainer_crds_and_the_job_schema(spec, xgboost_spec):
    docs = compiled_docs("trainjob", xgboost_spec if spec == "xgboost" else SPECS / spec)
    assert [d["kind"] for d in docs] == ["ConfigMap", "TrainingRuntime", "TrainJob"]
    for doc in docs[1:]:
        assert schemas.errors(doc) == [], doc["kind"]
    kubernetes_validate.validate(docs[0], K8S_VERSION, strict=True)
    for rj in docs[1]["spec"]["template"]["spec"]["replicatedJobs"]:
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"}, "spec": rj["template"]["spec"]}
        kubernetes_validate.validate(job, K8S_VERSION, strict=True)
    runtime, job = docs[1], docs[2]
    assert job["spec"]["runtimeRef"] == {"name": runtime["metadata"]["name"], "apiGroup": "trainer.kubeflow.org",
                                         "kind": "TrainingRuntime"}
    assert runtime["metadata"]["namespace"] == job["metadata"]["namespace"]
    trainers = [rj for rj in runtime["spec"]["template"]["spec"]["replicatedJobs"]
                if rj["template"]["metadata"]["labels"].get(trainjob.ANCESTOR_LABEL) == "trainer"]
    assert len(trainers) == 1
    pod = trainers[0]["template"]["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["node"]  # Trainer overrides the container named node


def _trainer_pods(docs):
    """Trainer v2 + JobSet for the torch runtime, as the product's controllers make them (emulator/readers/
    controllers/trainjob.py, jobset.py): node k of `<tj>-node-0`, env = runtime, TrainJob (upserted), PET_*."""
    return [pod.env for pod in operator_model.trainjob_pods(docs)]


def test_torch_nodes_get_the_ranks_and_hosts_of_the_k8s_target():
    (plan,) = load_plans(str(SPECS / "pytorch-ddp.yaml"))
    pods = _trainer_pods(compiled_docs("trainjob", SPECS / "pytorch-ddp.yaml"))
    replicas = list(plan.replicas())  # master, then workers: node k is replica k
    assert len(pods) == len(replicas)
    for k, (env, replica) in enumerate(zip(pods, replicas)):
        k8s = dict(resolved_env(plan, replica))
        for key in ("RANK", "WORLD_SIZE", "TRAINSPEC_NUM_MASTER", "TRAINSPEC_NUM_WORKER", "NCCL_DEBUG"):
            assert env[key] == k8s[key], (k, key)
        assert env["RANK"] == env["PET_NODE_RANK"] == str(k)
        assert env["MASTER_ADDR"] == env["PET_MASTER_ADDR"] and env["MASTER_PORT"] == env["PET_MASTER_PORT"]
        assert env["TRAINSPEC_HOSTS_MASTER"] == "pytorch-ddp-node-0-0.pytorch-ddp:29500"
        assert "TRAINSPEC_INDEX" not in env and "TRAINSPEC_ROLE" not in env  # documented: nodes, not roles


def test_jax_nodes_get_the_jaxjob_variables_for_trainer_hosts():
    (plan,) = load_plans(str(SPECS / "jax.yaml"))
    docs = compiled_docs("trainjob", SPECS / "jax.yaml")
    assert docs[1]["spec"]["mlPolicy"] == {"numNodes": 2, "jax": {}}
    node = docs[1]["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert "successPolicy" not in node  # every worker must succeed, as in a JAXJob
    pods = operator_model.trainjob_pods(docs)
    replicas = list(plan.replicas())
    assert [p.host for p in pods] == ["jax-dist-node-0-0.jax-dist", "jax-dist-node-0-1.jax-dist"]
    for k, (pod, replica) in enumerate(zip(pods, replicas)):
        env, k8s = pod.env, dict(resolved_env(plan, replica))
        for key in ("NUM_PROCESSES", "PROCESS_ID", "TRAINSPEC_ROLE", "TRAINSPEC_INDEX", "TRAINSPEC_NUM_WORKER",
                    "JAX_PLATFORMS", "PYTHONUNBUFFERED"):
            assert env[key] == k8s[key], (k, key)
        assert env["PROCESS_ID"] == env["JAX_PROCESS_ID"] == str(k)
        assert env["NUM_PROCESSES"] == env["JAX_NUM_PROCESSES"] == "2"
        assert (env["COORDINATOR_ADDRESS"], env["COORDINATOR_PORT"]) == ("jax-dist-node-0-0.jax-dist", "29500")
        assert env["JAX_COORDINATOR_ADDRESS"] == f"{env['COORDINATOR_ADDRESS']}:{env['COORDINATOR_PORT']}"
        assert env["TRAINSPEC_HOSTS_WORKER"] == "jax-dist-node-0-0.jax-dist:29500,jax-dist-node-0-1.jax-dist:29500"


def test_jax_index_templates_become_the_completion_index(tmp_path):
    path = write_spec(tmp_path, """\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: jx}
        spec:
          framework: jax
          image: jax:1
          command: [python3, train.py, "--shard={{ index }}"]
          env: {SHARD: "part-{{ index }}", PEERS: "{{ hosts.worker | join(' ') }}"}
          roles:
            worker: {replicas: 3}
        """)
    pods = operator_model.trainjob_pods(compiled_docs("trainjob", path))
    for k, pod in enumerate(pods):
        assert pod.command == ["python3", "train.py", f"--shard={k}"]
        assert pod.env["SHARD"] == f"part-{k}" and pod.env["TRAINSPEC_INDEX"] == str(k)
        assert pod.env["PEERS"] == " ".join(f"jx-node-0-{i}.jx:29500" for i in range(3))


def test_xgboost_master_is_node_0_and_ranks_follow_the_completion_index(xgboost_spec):
    (plan,) = load_plans(str(xgboost_spec))
    docs = compiled_docs("trainjob", xgboost_spec)
    assert docs[1]["spec"]["mlPolicy"] == {"numNodes": 3, "xgboost": {}}
    assert docs[1]["metadata"]["labels"][trainjob.FRAMEWORK_LABEL] == "xgboost"
    node = docs[1]["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert node["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}  # the master decides
    pods = operator_model.trainjob_pods(docs)
    replicas = list(plan.replicas())  # master, worker 0, worker 1: node k is replica k
    assert len(pods) == len(replicas) == 3
    workers = "xgb-node-0-1.xgb,xgb-node-0-2.xgb"
    for k, (pod, replica) in enumerate(zip(pods, replicas)):
        env, k8s = pod.env, dict(resolved_env(plan, replica))
        for key in ("RANK", "WORLD_SIZE", "PYTHONUNBUFFERED", "DATA", "TRAINSPEC_NUM_MASTER", "TRAINSPEC_NUM_WORKER"):
            assert env[key] == k8s[key], (k, key)
        assert env["RANK"] == env["DMLC_TASK_ID"] == str(k)
        assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == (env["DMLC_TRACKER_URI"], env["DMLC_TRACKER_PORT"]) \
            == ("xgb-node-0-0.xgb", "29500")
        assert (env["WORKER_ADDRS"], env["WORKER_PORT"]) == (workers, "29500")
        assert env["DMLC_NUM_WORKER"] == env["WORLD_SIZE"] == "3"
        assert pod.command == ["python3", "train.py"]
        assert "TRAINSPEC_INDEX" not in env and "TRAINSPEC_ROLE" not in env  # documented: nodes, not roles


def test_xgboost_roles_that_differ_and_reserved_dmlc_names_are_errors(tmp_path):
    unequal = tmp_path / "xgboost.yaml"
    unequal.write_text((SPECS / "xgboost.yaml").read_text().replace(
        '      replicas: 1\n      resources: {cpu: "1", memory: 2Gi}', "      replicas: 1", 1))
    r = run_cli("compile", str(unequal), "-t", "trainjob")
    assert r.returncode == 2 and "spec.roles.worker.resources: target trainjob:" in r.stderr, r.stderr
    assert "XGBoost master and workers from one pod template" in r.stderr and "Traceback" not in r.stderr
    assert "give the master and workers the same resources" in r.stderr  # there is no job-level resources
    (plan,) = load_plans(str(unequal))
    assert "resources differ" in (unsupported("trainjob", plan) or "")
    path = write_spec(tmp_path, XGBOOST.replace("{DATA: /data}", "{DMLC_TASK_ID: '7'}"))
    r = run_cli("compile", str(path), "-t", "trainjob")
    assert r.returncode == 2 and "spec.env.DMLC_TASK_ID: target trainjob: Trainer v2 sets" in r.stderr, r.stderr


def test_mpi_jobs_are_warned_about_the_root_ssh_key():
    (plan,) = load_plans(str(SPECS / "mpi-horovod.yaml"))
    (warning,) = plan.target_warnings["trainjob"]
    assert "0640" in str(warning) and "/home/mpiuser/.ssh" in str(warning) and "spec.framework" in str(warning)
    r = run_cli("compile", str(SPECS / "mpi-horovod.yaml"), "-t", "trainjob")
    assert r.returncode == 0 and "mpi-horovod.yaml:10:14: spec.framework: target trainjob: Trainer's MPI plugin " \
        "mounts" in r.stderr, r.stderr
    (plan,) = load_plans(str(SPECS / "pytorch-ddp.yaml"))
    assert "trainjob" not in plan.target_warnings


def test_mpi_runtime_workers_first_launcher_decides():
    docs = compiled_docs("trainjob", SPECS / "mpi-horovod.yaml")
    runtime, job = docs[1], docs[2]
    spec = runtime["spec"]
    assert spec["mlPolicy"]["mpi"]["mpiImplementation"] == "OpenMPI"
    assert spec["mlPolicy"]["numNodes"] == job["spec"]["trainer"]["numNodes"] == 2
    rjs = spec["template"]["spec"]["replicatedJobs"]
    assert [rj["name"] for rj in rjs] == ["node", "launcher"]
    assert rjs[1]["dependsOn"] == [{"name": "node", "status": "Ready"}]
    assert spec["template"]["spec"]["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["launcher"]}
    assert rjs[0]["template"]["spec"]["template"]["spec"]["containers"][0]["command"] == ["/usr/sbin/sshd", "-De"]
    assert job["spec"]["trainer"]["command"][0] == "mpirun"


@pytest.mark.parametrize("spec", ["tf-ps.yaml", "mxnet-ps.yaml"])
def test_frameworks_without_a_runtime_are_a_clear_error(spec):
    r = run_cli("compile", str(SPECS / spec), "-t", "trainjob")
    assert r.returncode == 2
    assert "spec.framework" in r.stderr and "no runtime for" in r.stderr
    assert "jobset" in r.stderr and "kubeflow" in r.stderr and "volcano" in r.stderr
    assert "Traceback" not in r.stderr


def test_differing_torch_roles_are_an_error_and_a_full_build_leaves_trainjob_out(tmp_path):
    (plan,) = load_plans(str(SPECS / "full-features.yaml"))
    with pytest.raises(SpecErrors) as exc:
        render("trainjob", plan)
    assert "spec.roles.worker.restartPolicy" in str(exc.value)
    assert "full-features.yaml:1:1:" not in str(exc.value)  # targets/trainjob/checks.py: the field's own position
    assert "restartPolicy" in (unsupported("trainjob", plan) or "") and unsupported("jobset", plan) is None
    out = tmp_path / "out"
    r = run_cli("build", str(SPECS / "full-features.yaml"), str(SPECS / "tf-ps.yaml"), "-o", str(out), "--no-cache")
    assert r.returncode == 0, r.stderr
    assert (out / "bert-finetune" / "jobset.yaml").exists()
    assert not (out / "bert-finetune" / "trainjob.yaml").exists() and not (out / "tf-ps" / "trainjob.yaml").exists()
    r = run_cli("build", str(SPECS / "tf-ps.yaml"), "-o", str(out), "--target", "trainjob", "--no-cache")
    assert r.returncode == 2 and "no runtime for tensorflow" in r.stderr


def test_intel_mpi_and_reserved_names_are_errors(tmp_path):
    path = write_spec(tmp_path, """\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: intel}
        spec:
          framework: mpi
          image: mpi:1
          command: [mpirun, hostname]
          mpi: {implementation: Intel}
          roles:
            launcher: {replicas: 1}
            worker: {replicas: 2}
        """)
    (plan,) = load_plans(str(path))
    with pytest.raises(SpecErrors, match="only OpenMPI"):
        render("trainjob", plan)
    path = write_spec(tmp_path, """\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: pet}
        spec:
          framework: pytorch
          image: torch:1
          command: [torchrun, train.py]
          env: {PET_NNODES: "4"}
          roles:
            master: {replicas: 1}
            worker: {replicas: 1}
        """, "pet.yaml")
    (plan,) = load_plans(str(path))
    with pytest.raises(SpecErrors, match="spec.env.PET_NNODES"):
        render("trainjob", plan)


def test_kueue_queue_label_on_the_trainjob_only(tmp_path):
    text = (SPECS / "pytorch-ddp.yaml").read_text()
    doc = yaml.safe_load(text)
    doc["spec"]["scheduling"] = {"queue": "team-a"}
    path = tmp_path / "q.yaml"
    path.write_text(yaml.safe_dump(doc))
    docs = compiled_docs("trainjob", path)
    assert docs[2]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    assert "kueue.x-k8s.io/queue-name" not in docs[1]["metadata"]["labels"]
    assert schemas.errors(docs[2]) == []


def test_role_dependent_text_is_an_error_at_its_field(tmp_path):
    path = write_spec(tmp_path, """\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: ptx}
        spec:
          framework: pytorch
          image: torch:1
          command: [torchrun, train.py]
          env: {A: "1", B: "{{ role }}"}
          roles:
            master: {replicas: 1}
            worker: {replicas: 2}
        """)
    r = run_cli("compile", str(path), "-t", "trainjob")
    assert r.returncode == 2 and "job.yaml:8:" in r.stderr and "spec.env.B: target trainjob:" in r.stderr, r.stderr
