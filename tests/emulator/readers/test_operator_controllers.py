"""The controllers' pods and rules (emulator/readers/controllers/), from hand-written manifests (no Docker)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from trainspec.compiler.errors import SpecErrors, UsageError
from trainspec.emulator.engine.podenv import container_env
from trainspec.emulator.model import policy
from trainspec.emulator.model.job import Gate
from trainspec.emulator.model.ports import Port
from trainspec.emulator.readers import dispatch, helm

from emuhelpers import trainspec as trainspec_cli

HERE = Path(__file__).parents[1]  # tests/emulator
ROOT = HERE.parents[1]


def pod(containers_env=None, restart=None, name="main", command=("python3", "-c", "pass")):
    spec = {"containers": [{"name": name, "image": "img", "command": list(command),
                            "env": containers_env or []}]}
    if restart:
        spec["restartPolicy"] = restart
    return {"spec": spec}


def load(tmp_path: Path, *docs: dict, **kw):
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump_all(list(docs), sort_keys=False))
    return dispatch.load(str(path), state_dir=str(tmp_path / "state"), **kw)


def env_of(job, display: str) -> dict[str, str]:
    r = next(r for r in job.replicas if r.display == display)
    return container_env(r.main, r, job.namespace, "10.1.2.3")


def decide(job, succeeded=(), failed=()):
    phases = {r.name: policy.SUCCEEDED for r in job.replicas if r.display in succeeded}
    phases.update({r.name: policy.FAILED for r in job.replicas if r.display in failed})
    return policy.decide(job, phases, {})


def kubeflow(kind: str, field: str, specs: dict, **spec) -> dict:
    return {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": "j", "namespace": "ns"},
            "spec": {**spec, field: specs}}


def test_xgboost_job(tmp_path):
    job = load(tmp_path, kubeflow("XGBoostJob", "xgbReplicaSpecs", {
        "Master": {"replicas": 1, "template": pod(name="xgboost")},
        "Worker": {"replicas": 2, "template": pod(name="xgboost")}}))
    assert [r.display for r in job.replicas] == ["master-0", "worker-0", "worker-1"]
    w1 = env_of(job, "worker-1")
    assert (w1["MASTER_ADDR"], w1["MASTER_PORT"], w1["WORLD_SIZE"], w1["RANK"]) == ("j-master-0", "9999", "3", "2")
    assert w1["WORKER_ADDRS"] == "j-worker-0,j-worker-1" and env_of(job, "master-0")["RANK"] == "0"
    assert job.replicas[0].main.ports[0][0] == 9999  # the operator's default port
    assert job.replicas[0].restart_policy == "Never" and job.replicas[0].backoff_limit == 0
    assert decide(job, succeeded=["worker-0", "worker-1"]) is None
    assert decide(job, succeeded=["master-0"]).outcome == policy.SUCCEEDED


def test_paddle_job_collective_and_ps(tmp_path):
    job = load(tmp_path, kubeflow("PaddleJob", "paddleReplicaSpecs", {
        "Worker": {"replicas": 2, "template": pod(name="paddle")}}))
    w0, w1 = env_of(job, "worker-0"), env_of(job, "worker-1")
    assert w0["PADDLE_MASTER"] == "10.1.2.3:36543"  # $(POD_IP_DUMMY) from status.podIP
    assert w1["PADDLE_MASTER"] == "j-worker-0:36543" and w1["PADDLE_NNODES"] == "2" and "PADDLE_TRAINER_ID" not in w1
    assert job.replicas[0].restart_policy == "OnFailure"
    assert decide(job, succeeded=["worker-0"]) is None and decide(job, succeeded=["worker-0", "worker-1"])
    ps = load(tmp_path, kubeflow("PaddleJob", "paddleReplicaSpecs", {
        "Master": {"template": pod(name="paddle")}, "Worker": {"replicas": 1, "template": pod(name="paddle")}}))
    assert env_of(ps, "master-0")["PADDLE_SERVER_NUM"] == "1" and env_of(ps, "worker-0")["PADDLE_TRAINER_NUM"] == "1"
    assert env_of(ps, "worker-0")["PADDLE_MASTER"] == "j-master-0:36543"


def test_jax_job_appends_after_the_user_env(tmp_path):
    job = load(tmp_path, kubeflow("JAXJob", "jaxReplicaSpecs", {
        "Worker": {"replicas": 3, "template": pod([{"name": "PROCESS_ID", "value": "mine"}], name="jax")}}))
    w2 = env_of(job, "worker-2")
    assert (w2["COORDINATOR_ADDRESS"], w2["COORDINATOR_PORT"], w2["NUM_PROCESSES"]) == ("j-worker-0", "6666", "3")
    assert w2["PROCESS_ID"] == "2"  # appended after the template's: the operator's value wins
    assert job.replicas[0].labels["training.kubeflow.org/job-role"] == "master"
    assert decide(job, succeeded=["worker-0"]) is None
    assert decide(job, succeeded=["worker-0", "worker-1", "worker-2"]).outcome == policy.SUCCEEDED


def test_kubeflow_restart_policies_and_run_policy(tmp_path):
    job = load(tmp_path, kubeflow("TFJob", "tfReplicaSpecs", {
        "PS": {"replicas": 1, "restartPolicy": "Always", "template": pod(name="tensorflow")},
        "Worker": {"replicas": 2, "restartPolicy": "ExitCode", "template": pod(name="tensorflow")}},
        successPolicy="AllWorkers", runPolicy={"backoffLimit": 4, "activeDeadlineSeconds": 60,
                                               "cleanPodPolicy": "All"}))
    ps, w0 = job.replicas[0], job.replicas[1]
    assert ps.workload == "Deployment" and ps.policy == "Always"
    assert w0.policy == "ExitCode" and w0.backoff_limit == 4
    assert w0.failure_rules[0].matches(1) and not w0.failure_rules[0].matches(137)
    assert (job.backoff_limit, job.active_deadline, job.clean_pod_policy) == (4, 60.0, "All")
    assert decide(job, succeeded=["worker-0"]) is None  # AllWorkers
    assert decide(job, succeeded=["worker-0", "worker-1"]).reason == "all workers succeeded"
    assert decide(job, succeeded=["worker-0"], failed=["worker-1"]).outcome == policy.FAILED


def test_mpi_job_launcher_hostfile_and_ssh(tmp_path):
    doc = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "m"},
           "spec": {"slotsPerWorker": 2, "mpiImplementation": "Intel", "mpiReplicaSpecs": {
               "Launcher": {"template": pod(command=("mpirun", "hostname"))},
               "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "w", "image": "img"}]}}}}}}
    job = load(tmp_path, doc)
    launcher = next(r for r in job.replicas if r.role == "launcher")
    worker = next(r for r in job.replicas if r.display == "worker-1")
    assert worker.main.command == ["/usr/sbin/sshd", "-De"] and "m-worker-1.m" in worker.aliases
    env = env_of(job, "launcher-0")
    assert (env["I_MPI_HYDRA_HOST_FILE"], env["I_MPI_PERHOST"], env["NVIDIA_VISIBLE_DEVICES"]) == \
        ("/etc/mpi/hostfile", "2", "")
    hostfile = next(m for m in launcher.main.mounts if m.target == "/etc/mpi").files[0]
    assert hostfile.data.decode() == "m-worker-0.m.default.svc:2\nm-worker-1.m.default.svc:2\n"
    ssh = next(m for m in worker.main.mounts if m.target == "/root/.ssh")
    assert {f.path for f in ssh.files} == {"id_rsa", "id_rsa.pub", "authorized_keys"} and ssh.secret
    assert job.secrets["m-ssh"]["ssh-privatekey"].startswith(b"-----BEGIN OPENSSH PRIVATE KEY")
    assert decide(job, succeeded=["launcher-0"]).reason == "launcher-0 succeeded"


def volcano(tasks, **spec):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "v"},
            "spec": {**spec, "tasks": tasks}}


def test_volcano_plugins_and_policies(tmp_path):
    job = load(tmp_path, volcano([
        {"name": "master", "replicas": 1, "template": pod(restart="Never"),
         "policies": [{"event": "TaskCompleted", "action": "CompleteJob"}]},
        {"name": "worker", "replicas": 2, "template": pod(restart="Never"),
         "policies": [{"exitCode": 3, "action": "TerminateJob"}, {"event": "PodFailed", "action": "RestartJob"}]}],
        maxRetry=5, plugins={"pytorch": ["--port=29500"], "env": []}))
    w1 = env_of(job, "worker-1")
    assert (w1["MASTER_ADDR"], w1["MASTER_PORT"], w1["WORLD_SIZE"], w1["RANK"]) == ("v-master-0.v", "29500", "3", "2")
    assert w1["VC_TASK_INDEX"] == "1" and w1["VC_WORKER_HOSTS"] == "v-worker-0.v,v-worker-1.v"  # svc added
    worker = next(r for r in job.replicas if r.display == "worker-1")
    # PodFailed → RestartJob: the pod fails for good at once and the whole job restarts, maxRetry-1 times
    assert worker.backoff_limit == 0 and job.restart.max_restarts == 4
    assert worker.failure_rules[0].matches(3) and not worker.failure_rules[0].matches(1)
    volcano_files = next(m for m in worker.main.mounts if m.target == "/etc/volcano").files
    assert {f.path: f.data for f in volcano_files}["worker.host"] == b"v-worker-0.v\nv-worker-1.v"
    master = next(r for r in job.replicas if r.role == "master")
    assert master.backoff_limit == 0  # no PodFailed policy on its task beyond the job's: fails at once
    assert decide(job, succeeded=["worker-0", "worker-1"]) is None
    assert decide(job, succeeded=["master-0"]).reason == "task master succeeded"


def test_volcano_min_success_and_default(tmp_path):
    job = load(tmp_path, volcano([{"name": "w", "replicas": 3, "template": pod(restart="OnFailure")}], minSuccess=2))
    assert decide(job, succeeded=["w-0"]) is None and decide(job, succeeded=["w-0", "w-2"]).outcome == "Succeeded"
    every = load(tmp_path, volcano([{"name": "w", "replicas": 2, "template": pod()}]))
    assert every.replicas[0].workload == "Deployment"  # a pod's default restartPolicy is Always
    assert decide(every, succeeded=["w-0"]) is None


def jobset(rjobs, **spec):
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
            "spec": {**spec, "replicatedJobs": rjobs}}


def rjob(name, replicas, completions, **jspec):
    return {"name": name, "replicas": replicas, "template": {"spec": {
        "completionMode": "Indexed", "completions": completions, "parallelism": completions, **jspec,
        "template": pod([{"name": "RANK", "valueFrom": {"fieldRef": {
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}])}}}


def test_jobset_names_index_env_and_success(tmp_path):
    job = load(tmp_path, jobset([rjob("driver", 1, 1), rjob("node", 2, 2, successPolicy={
        "rules": [{"succeededIndexes": "0"}]})], network={"subdomain": "net"},
        successPolicy={"operator": "Any", "targetReplicatedJobs": ["node"]}))
    assert [r.name for r in job.replicas] == ["js-driver-0-0", "js-node-0-0", "js-node-0-1", "js-node-1-0",
                                              "js-node-1-1"]
    r = job.replicas[4]
    assert r.display == "node-3" and r.hostname == "js-node-1-1" and "js-node-1-1.net" in r.aliases
    env = env_of(job, "node-3")
    assert env["RANK"] == "1" and env["JOB_COMPLETION_INDEX"] == "1"
    assert r.restart_policy == "OnFailure" and r.backoff_limit == 6  # webhook and batch defaults
    assert decide(job, succeeded=["node-1"]) is None
    assert decide(job, succeeded=["node-2"]).outcome == policy.SUCCEEDED  # Any: job 1's index 0
    assert decide(job, succeeded=["driver-0"]) is None


def test_compiled_jobset(tmp_path):
    path = tmp_path / "jobset.yaml"
    c = trainspec_cli("compile", HERE / "specs/heldout-tf.yaml", "--target", "jobset", "-o", path, cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    job = dispatch.load(str(path), state_dir=str(tmp_path))
    assert [r.display for r in job.replicas] == ["ps-0", "worker-0", "worker-1"]
    assert job.controller_success.groups == [["heldout-worker-0-0"]]  # the worker Job's succeededIndexes "0"
    assert "heldout-ps-0-0.heldout" in job.replicas[0].aliases


def test_two_jobs_need_job_option(tmp_path):
    a, b = volcano([{"name": "w", "template": pod()}]), volcano([{"name": "w", "template": pod()}])
    b["metadata"]["name"] = "other"
    with pytest.raises(UsageError, match="--job NAME"):
        load(tmp_path, a, b)
    assert load(tmp_path, a, b, job="other").name == "other"


def test_helm_set_values():
    values: dict = {"roles": {"worker": {"replicas": 1}}}
    helm.apply_set(values, "roles.worker.replicas=3,flag=true,list={a,b},items[1].x=null,s=1.5")
    assert values == {"roles": {"worker": {"replicas": 3}}, "flag": True, "list": ["a", "b"],
                      "items": [None, {"x": None}], "s": "1.5"}
    with pytest.raises(UsageError, match="expected path=value"):
        helm.apply_set({}, "novalue")


def test_helm_chart_runs_with_set_and_values_file(tmp_path):
    pytest.importorskip("helm_python.chart", reason="helm-python-sdk is not installed")
    values = tmp_path / "v.yaml"
    values.write_text("roles:\n  worker:\n    replicas: 2\n")
    job = dispatch.load(str(ROOT / "golden/tf-ps/helm"), state_dir=str(tmp_path), values_files=[str(values)],
                      set_options=["roles.ps.replicas=1"])
    assert sorted(r.display for r in job.replicas) == ["evaluator-0", "ps-0", "worker-0", "worker-1"]
    with pytest.raises(UsageError, match="Helm could not render"):
        dispatch.load(str(ROOT / "golden/tf-ps/helm"), set_options=["roles.worker.replicas=-1"])


def test_helm_without_the_extra_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "helm_python", None)
    with pytest.raises(UsageError, match=r"pip install 'trainspec\[helm\]'"):
        dispatch.load(str(ROOT / "golden/tf-ps/helm"), state_dir=str(tmp_path))
    with pytest.raises(UsageError, match="for a Helm chart folder"):
        dispatch.load(str(ROOT / "golden/tf-ps/k8s.yaml"), values_files=["values.yaml"])


def test_trainjob_on_its_runtime(tmp_path):
    """numNodes and the trainer's image/command/env override the runtime; the torch plugin's PET_* come last."""
    docs = list(yaml.safe_load_all((ROOT / "golden/pytorch-ddp/trainjob.yaml").read_text()))
    tj = next(d for d in docs if d and d["kind"] == "TrainJob")
    tj["spec"]["trainer"].update(numNodes=3, image="other:1", env=[{"name": "MASTER_PORT", "value": "1234"}])
    job = load(tmp_path, *[d for d in docs if d])
    assert [r.display for r in job.replicas] == ["node-0", "node-1", "node-2"]
    env = env_of(job, "node-2")
    assert (env["PET_NNODES"], env["PET_NODE_RANK"], env["PET_MASTER_ADDR"], env["PET_MASTER_PORT"]) == \
        ("3", "2", "pytorch-ddp-node-0-0.pytorch-ddp", "29500")
    assert env["MASTER_PORT"] == "1234"  # upserted in place
    assert job.replicas[0].main.image == "other:1" and Port(29500) in job.replicas[0].main.ports
    assert job.controller_success.groups == [["pytorch-ddp-node-0-0"]]


def test_trainjob_mpi_hostfile_and_key(tmp_path):
    job = dispatch.load(str(ROOT / "golden/mpi-horovod/trainjob.yaml"), state_dir=str(tmp_path))
    launcher = next(r for r in job.replicas if r.role == "launcher")
    hostfile = next(m for m in launcher.main.mounts if m.target == "/etc/mpi").files[0]
    assert hostfile.data == b"mpi-horovod-node-0-0.mpi-horovod slots=1\nmpi-horovod-node-0-1.mpi-horovod slots=1\n"
    key = next(m for m in launcher.main.mounts if m.target == "/root/.ssh")
    assert {f.path: f.mode for f in key.files} == {"id_rsa": 0o640, "id_rsa.pub": 0o644, "authorized_keys": 0o644}
    assert "mpi-horovod-mpi-ssh-auth" in job.secrets


def test_trainjob_jax_plugin_env_before_the_trainjob_env(tmp_path):
    """mlPolicy.jax: JAX_* on every node from the completion index, the TrainJob env after them (CONVENTIONS-V2 §3.3)."""
    docs = [d for d in yaml.safe_load_all((ROOT / "golden/jax-dist/trainjob.yaml").read_text()) if d]
    job = load(tmp_path, *docs)
    assert [r.display for r in job.replicas] == ["node-0", "node-1"]
    for k, replica in enumerate(job.replicas):
        env = env_of(job, replica.display)
        assert (env["JAX_NUM_PROCESSES"], env["JAX_PROCESS_ID"], env["JAX_COORDINATOR_ADDRESS"]) == \
            ("2", str(k), "jax-dist-node-0-0.jax-dist:29500")
        assert (env["PROCESS_ID"], env["COORDINATOR_ADDRESS"], env["TRAINSPEC_INDEX"]) == \
            (str(k), "jax-dist-node-0-0.jax-dist", str(k))
        names = [e.name for e in replica.main.env]
        assert names.index("JAX_COORDINATOR_ADDRESS") < names.index("JAX_PLATFORMS")
        assert Port(29500) in replica.main.ports
    assert job.controller_success.groups == [["jax-dist-node-0-0", "jax-dist-node-0-1"]]


def test_trainjob_xgboost_plugin_env(tmp_path):
    """mlPolicy.xgboost: DMLC_* from the completion index, DMLC_NUM_WORKER = nodes x GPUs; node 0 decides."""
    from trainspec.targets import load_plans, render

    spec = yaml.safe_load((ROOT / "specs/xgboost.yaml").read_text())
    spec["spec"]["roles"]["master"]["resources"] = spec["spec"]["roles"]["worker"]["resources"]
    path = tmp_path / "xgb.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    (plan,) = load_plans(str(path))
    docs = [d for d in yaml.safe_load_all(render("trainjob", plan)["trainjob.yaml"]) if d]
    job = load(tmp_path, *docs)
    assert [r.display for r in job.replicas] == ["node-0", "node-1", "node-2"]
    for k, replica in enumerate(job.replicas):
        env = env_of(job, replica.display)
        assert (env["DMLC_TRACKER_URI"], env["DMLC_TRACKER_PORT"], env["DMLC_TASK_ID"], env["DMLC_NUM_WORKER"]) == \
            ("xgboost-dist-node-0-0.xgboost-dist", "29500", str(k), "3")
        assert (env["MASTER_ADDR"], env["MASTER_PORT"], env["RANK"], env["WORLD_SIZE"]) == \
            ("xgboost-dist-node-0-0.xgboost-dist", "29500", str(k), "3")
        assert env["WORKER_ADDRS"] == "xgboost-dist-node-0-1.xgboost-dist,xgboost-dist-node-0-2.xgboost-dist"
    assert job.controller_success.groups == [["xgboost-dist-node-0-0"]]
    assert job.controller  # the Job's successPolicy ends the workers: no plain-Kubernetes leftover report
    runtime = next(d for d in docs if d["kind"] == "TrainingRuntime")
    container = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"][0]
    container["resources"] = {"limits": {"nvidia.com/gpu": 2}}
    job = load(tmp_path, *docs)
    assert env_of(job, "node-1")["DMLC_NUM_WORKER"] == "6"  # Trainer counts nodes x GPUs


def test_trainjob_needs_its_runtime(tmp_path):
    docs = [d for d in yaml.safe_load_all((ROOT / "golden/pytorch-ddp/trainjob.yaml").read_text())
            if d and d["kind"] != "TrainingRuntime"]
    with pytest.raises(UsageError, match="TrainingRuntime 'pytorch-ddp' is not in the file"):
        load(tmp_path, *docs)


@pytest.mark.parametrize("bad,said", [({"replicas": "two"}, r'spec.tfReplicaSpecs.Worker.replicas: Invalid value: '
                                                              r'"string": .* must be of type integer'),
                                      ({"template": ["not", "a", "map"]},
                                       r'spec.tfReplicaSpecs.Worker.template: Invalid value: "array": .* must be of '
                                       "type object")])
def test_malformed_manifest_is_a_usage_error(tmp_path, bad, said):
    # issue 23: the field's path and the type expected (the CRD's schema, compiler/apiserver), before the
    # controller reads it
    spec = {"replicas": 1, "template": pod(name="tensorflow"), **bad}
    with pytest.raises(SpecErrors, match=rf"job.yaml:\d+:\d+: {said}"):
        load(tmp_path, kubeflow("TFJob", "tfReplicaSpecs", {"Worker": spec}))


def test_volcano_failed_pod_without_policy_counts_against_min_available(tmp_path):
    task = {"name": "w", "replicas": 3, "template": pod(restart="Never")}
    job = load(tmp_path, volcano([task], minAvailable=2))
    assert decide(job, failed=["w-1"]) is None  # no policy acts on PodFailed: the job goes on
    assert decide(job, succeeded=["w-0"], failed=["w-1"]) is None
    done = decide(job, succeeded=["w-0", "w-2"], failed=["w-1"])
    assert done.outcome == policy.SUCCEEDED and "minAvailable 2" in done.reason
    strict = load(tmp_path, volcano([task]))  # minAvailable defaults to every pod
    assert decide(strict, succeeded=["w-0", "w-2"], failed=["w-1"]).outcome == policy.FAILED
    terminate = load(tmp_path, volcano([{**task, "policies": [{"event": "PodFailed", "action": "TerminateJob"}]}]))
    assert decide(terminate, failed=["w-1"]).outcome == policy.FAILED


def test_jobset_in_order_and_depends_on_ready_gate_the_start(tmp_path):
    """JobSet startupPolicy InOrder: replicatedJob k+1 after every pod of k is ready (CONVENTIONS-V2 §1.5);
    Trainer's MPI runtime: the launcher dependsOn the node Job Ready (§3.6)."""
    job = dispatch.load(str(ROOT / "golden/mpi-horovod/jobset.yaml"), state_dir=str(tmp_path))
    workers = ("mpi-horovod-worker-0-0", "mpi-horovod-worker-0-1")
    # one Job of two pods: ready once 2 (min(parallelism, completions)) are ready or succeeded
    assert job.gates == {"mpi-horovod-launcher-0-0": (Gate(workers, "ready_or_done", "InOrder", need=2),)}
    assert job.start_after == {}  # a controller's gates, not Compose's
    job = dispatch.load(str(ROOT / "golden/mpi-horovod/trainjob.yaml"), state_dir=str(tmp_path))
    assert job.gates == {"mpi-horovod-launcher-0-0": (
        Gate(("mpi-horovod-node-0-0", "mpi-horovod-node-0-1"), "ready_or_done", "dependsOn Ready", need=2),)}
    job = dispatch.load(str(ROOT / "golden/pytorch-ddp/jobset.yaml"), state_dir=str(tmp_path))
    assert job.gates == {}  # no startupPolicy: every Job at once, as the controller creates them


def test_volcano_xgboost_golden_gets_the_xgboostjob_variables_from_the_pytorch_plugin(tmp_path):
    """golden/xgboost-dist/volcano.yaml keeps one task per role: Volcano's pytorch plugin gives RANK
    (worker i is i + 1), MASTER_ADDR, MASTER_PORT and WORLD_SIZE as the XGBoostJob controller does."""
    docs = [d for d in yaml.safe_load_all((ROOT / "golden/xgboost-dist/volcano.yaml").read_text()) if d]
    job = load(tmp_path, *docs)
    seen = {}
    for display in ("master-0", "worker-0", "worker-1"):
        env = env_of(job, display)
        seen[display] = (env["RANK"], env["MASTER_ADDR"], env["MASTER_PORT"], env["WORLD_SIZE"])
        assert env["WORKER_ADDRS"] == "xgboost-dist-worker-0.xgboost-dist,xgboost-dist-worker-1.xgboost-dist"
    master = ("xgboost-dist-master-0.xgboost-dist", "9999", "3")
    assert seen == {"master-0": ("0", *master), "worker-0": ("1", *master), "worker-1": ("2", *master)}
