"""The volcano target: CRD-valid (strict), tasks, plugins, policies, per-replica tasks, golden files."""

from __future__ import annotations

import json
import textwrap

import kubernetes_validate
import pytest
import yaml

from trainspec.compiler import SpecErrors
from trainspec.targets import load_plans
from trainspec.targets.volcano import render as volcano

import schemas
from helpers import GOLDEN, SPECS, compiled_docs, on_runtime, run_cli, runtime_excludes

EXAMPLES = sorted(p.name for p in SPECS.glob("*.yaml") if not on_runtime(p))
GENERIC_EXAMPLES = [name for name in EXAMPLES if yaml.safe_load((SPECS / name).read_text())["spec"]["framework"] == "generic"]


def docs_of(spec_path) -> list[dict]:
    return compiled_docs("volcano", spec_path)


def job_of(spec_name: str) -> dict:
    return docs_of(SPECS / spec_name)[1]


def tasks(job: dict) -> dict:
    return {t["name"]: t for t in job["spec"]["tasks"]}


def env_of(task: dict) -> dict:
    return {e["name"]: e for e in task["template"]["spec"]["containers"][0]["env"]}


def write_spec(tmp_path, body: str, name="job.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


@pytest.mark.parametrize("spec", EXAMPLES)
def test_valid_against_the_crd_schema_strict(spec):
    docs = docs_of(SPECS / spec)
    assert [d["kind"] for d in docs] == ["ConfigMap", "Job"]
    assert docs[1]["apiVersion"] == "batch.volcano.sh/v1alpha1"
    assert schemas.errors(docs[1]) == []
    kubernetes_validate.validate(docs[0], "1.30", strict=True)


def test_schema_check_is_strict():
    job = job_of("tf-ps.yaml")
    job["spec"]["tasks"][0]["maxRetries"] = 3
    job["spec"]["policies"][0]["action"] = 7
    found = schemas.errors(job)
    assert any("maxRetries" in e for e in found) and any("action" in e for e in found), found


@pytest.mark.parametrize("spec,expected", [
    ("tf-chief.yaml", ["chief", "ps", "worker", "evaluator"]),
    ("tf-ps.yaml", ["ps", "worker", "evaluator"]),
    ("pytorch-ddp.yaml", ["master", "worker"]),
    ("mxnet-ps.yaml", ["scheduler", "server", "worker"]),
    ("mpi-horovod.yaml", ["launcher", "worker"]),
])
def test_one_task_per_role_and_gang_size(spec, expected):
    job = job_of(spec)
    assert list(tasks(job)) == expected
    (plan,) = load_plans(str(SPECS / spec))
    assert job["spec"]["minAvailable"] == plan.total_replicas
    assert [t["replicas"] for t in job["spec"]["tasks"]] == [r.count for r in plan.roles]
    assert job["spec"]["schedulerName"] == "volcano"


def test_scheduling_retries_and_ttl():
    job = job_of("full-features.yaml")["spec"]
    assert (job["minAvailable"], job["queue"], job["priorityClassName"], job["maxRetry"],
            job["ttlSecondsAfterFinished"]) == (3, "research", "high", 4, 3600)
    master = tasks(job_of("full-features.yaml"))
    for task in master.values():
        assert task["template"]["spec"]["activeDeadlineSeconds"] == 86400  # per pod: Volcano has no job deadline
    assert "queue" not in job_of("tf-ps.yaml")["spec"]  # the webhook's default queue


@pytest.mark.parametrize("spec,plugin,args", [
    ("tf-ps.yaml", "tensorflow", ["--ps=ps", "--worker=worker", "--evaluator=evaluator", "--port=2222"]),
    ("tf-chief.yaml", "tensorflow", ["--ps=ps", "--worker=worker", "--chief=chief", "--evaluator=evaluator",
                                     "--port=2222"]),
    ("pytorch-ddp.yaml", "pytorch", ["--master=master", "--worker=worker", "--port=23456"]),
    ("mpi-horovod.yaml", "mpi", ["--master=launcher", "--worker=worker", "--port=22"]),
])
def test_framework_plugin_names_our_roles_and_port(spec, plugin, args):
    plugins = job_of(spec)["spec"]["plugins"]
    assert plugins[plugin] == args
    assert plugins["env"] == [] and plugins["svc"] == ["--publish-not-ready-addresses"]
    assert ("ssh" in plugins) == (plugin == "mpi")


def test_mxnet_has_no_plugin_so_we_write_dmlc():
    job = job_of("mxnet-ps.yaml")
    assert set(job["spec"]["plugins"]) == {"env", "svc"}
    worker = env_of(tasks(job)["worker"])
    assert worker["DMLC_PS_ROOT_URI"]["value"] == "mxnet-ps-scheduler-0.mxnet-ps"
    assert (worker["DMLC_ROLE"]["value"], worker["DMLC_NUM_SERVER"]["value"], worker["DMLC_NUM_WORKER"]["value"]) == \
        ("worker", "2", "2")
    assert worker["DMLC_WORKER_ID"]["valueFrom"] == {
        "fieldRef": {"fieldPath": "metadata.labels['volcano.sh/task-index']"}}
    assert "DMLC_WORKER_ID" not in env_of(tasks(job)["server"])


def test_no_env_that_the_plugins_inject():
    for spec in ("tf-ps.yaml", "pytorch-ddp.yaml", "mpi-horovod.yaml"):
        for task in job_of(spec)["spec"]["tasks"]:
            names = set(env_of(task))
            assert not names & {"TF_CONFIG", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "MPI_HOST",
                                "VC_TASK_INDEX"}, (spec, names)
            assert env_of(task)["TRAINSPEC_INDEX"]["valueFrom"] == {
                "fieldRef": {"fieldPath": "metadata.labels['volcano.sh/task-index']"}}


def test_completion_and_failure_policies():
    def policies(task):
        return [(p.get("event"), p.get("exitCode"), p["action"]) for p in task.get("policies", [])]

    assert job_of("tf-ps.yaml")["spec"]["policies"] == [{"event": "PodEvicted", "action": "RestartJob"}]
    cases = {"tf-chief.yaml": "chief", "tf-ps.yaml": "worker", "pytorch-ddp.yaml": "master",
             "mxnet-ps.yaml": "scheduler", "mpi-horovod.yaml": "launcher"}
    for spec, decider in cases.items():
        for name, task in tasks(job_of(spec)).items():
            has = ("TaskCompleted", None, "CompleteJob") in policies(task)
            assert has == (name == decider), (spec, name)
    # Never: a failed pod ends the job
    mpi = tasks(job_of("mpi-horovod.yaml"))
    assert ("PodFailed", None, "TerminateJob") in policies(mpi["worker"])
    assert mpi["worker"]["template"]["spec"]["restartPolicy"] == "Never"
    assert mpi["launcher"]["template"]["spec"]["restartPolicy"] == "OnFailure"
    # ExitCode on every role: once at the job level; 1-127 fail, anything else restarts (up to maxRetry)
    chief = job_of("tf-chief.yaml")["spec"]
    rules = [(p.get("event"), p.get("exitCode"), p["action"]) for p in chief["policies"]]
    assert rules[0] == ("PodEvicted", None, "RestartJob")
    assert rules[1:128] == [(None, code, "TerminateJob") for code in range(1, 128)]
    assert rules[128:] == [("PodFailed", None, "RestartJob")]
    assert chief["maxRetry"] == 2
    # ExitCode on one role only: on that role's tasks (full-features runs torchrun: one task per replica)
    full = tasks(job_of("full-features.yaml"))
    worker_rules = policies(full["worker-1"])
    assert (None, 1, "TerminateJob") in worker_rules and (None, 127, "TerminateJob") in worker_rules
    assert (None, 128, "TerminateJob") not in worker_rules and worker_rules[-1] == ("PodFailed", None, "RestartJob")
    assert full["worker-1"]["template"]["spec"]["restartPolicy"] == "Never"
    assert full["master-0"]["template"]["spec"]["restartPolicy"] == "OnFailure"


def test_torchrun_workers_get_their_node_rank():
    """torchrun reads PET_NODE_RANK only; the pytorch plugin sets RANK, and index + 1 cannot come from the
    task index: a job whose workers run torchrun gets one task per replica, each with its node rank."""
    full = tasks(job_of("full-features.yaml"))
    assert list(full) == ["master-0", "worker-0", "worker-1"]
    ranks = {name: env_of(task)["PET_NODE_RANK"]["value"] for name, task in full.items()}
    assert ranks == {"master-0": "0", "worker-0": "1", "worker-1": "2"}
    assert "pytorch" in job_of("pytorch-ddp.yaml")["spec"]["plugins"]  # python, not torchrun: RANK is enough


def _forced_split(tmp_path, spec_name: str):
    """The example with `{{ index + 0 }}`: the same text per replica, but arithmetic the
    task index cannot reproduce at runtime, so the job needs one task per replica."""
    text = (SPECS / spec_name).read_text().replace("{{ index }}", "{{ index + 0 }}")
    path = tmp_path / spec_name
    path.write_text(text)
    return path


def test_example_with_per_replica_args_keeps_one_task_per_role():
    job = job_of("tf-args-style.yaml")
    assert list(tasks(job)) == ["ps", "worker"]
    assert "tensorflow" in job["spec"]["plugins"]
    args = tasks(job)["worker"]["template"]["spec"]["containers"][0]["args"]
    assert "--task_index=$(TRAINSPEC_INDEX)" in args
    assert "--ps_hosts=tf-args-ps-0.tf-args:2222,tf-args-ps-1.tf-args:2222" in args  # Volcano's host names


def test_per_replica_templates_make_one_task_per_replica(tmp_path):
    path = _forced_split(tmp_path, "tf-args-style.yaml")
    job = docs_of(path)[1]
    names = list(tasks(job))
    assert names == ["ps-0", "ps-1", "worker-0", "worker-1", "worker-2", "worker-3"]
    assert "tensorflow" not in job["spec"]["plugins"]  # the plugin finds roles by task name
    worker2 = tasks(job)["worker-2"]
    assert worker2["replicas"] == 1
    assert worker2["template"]["spec"]["hostname"] == "tf-args-worker-2"  # host stays tf-args-worker-2.tf-args
    assert worker2["template"]["metadata"]["labels"]["trainspec.dev/index"] == "2"
    args = worker2["template"]["spec"]["containers"][0]["args"]
    assert "--task_index=2" in args
    assert "--ps_hosts=tf-args-ps-0.tf-args:2222,tf-args-ps-1.tf-args:2222" in args  # Volcano's host names
    env = env_of(worker2)
    assert env["TRAINSPEC_INDEX"] == {"name": "TRAINSPEC_INDEX", "value": "2"}
    assert env["TF_CONFIG"]["value"] == '{"cluster":$(TRAINSPEC_TF_CLUSTER),"task":{"type":"worker","index":2}}'
    cm = docs_of(path)[0]
    assert json.loads(cm["data"]["TRAINSPEC_TF_CLUSTER"])["worker"][3] == "tf-args-worker-3.tf-args:2222"
    success = [t["name"] for t in job["spec"]["tasks"] if any(p.get("action") == "CompleteJob"
                                                               for p in t.get("policies", []))]
    assert success == ["worker-0"]  # TF without a chief: worker-0 decides


def test_pytorch_per_replica_tasks_get_rank_and_node_rank(tmp_path):
    job = docs_of(_forced_split(tmp_path, "full-features.yaml"))[1]  # RUN_NAME uses {{ index + 0 }}
    assert list(tasks(job)) == ["master-0", "worker-0", "worker-1"]
    assert "pytorch" not in job["spec"]["plugins"]
    worker1 = {k: v.get("value") for k, v in env_of(tasks(job)["worker-1"]).items()}
    assert (worker1["RANK"], worker1["PET_NODE_RANK"], worker1["WORLD_SIZE"], worker1["PET_NNODES"]) == \
        ("2", "2", "3", "3")
    assert worker1["MASTER_ADDR"] == worker1["PET_MASTER_ADDR"] == "bert-finetune-master-0.bert-finetune"
    assert worker1["RUN_NAME"] == "bert-finetune-worker-1"


def test_mpi_hostfile_is_mounted_on_the_launcher():
    cm, job = docs_of(SPECS / "mpi-horovod.yaml")
    assert cm["data"]["hostfile"] == ("mpi-horovod-worker-0.mpi-horovod slots=1\n"
                                      "mpi-horovod-worker-1.mpi-horovod slots=1\n")
    launcher = tasks(job)["launcher"]["template"]["spec"]
    assert {"name": "mpi-job-config", "mountPath": "/etc/mpi"} in launcher["containers"][0]["volumeMounts"]
    assert env_of(tasks(job)["launcher"])["OMPI_MCA_orte_default_hostfile"]["value"] == "/etc/mpi/hostfile"
    assert "volumes" not in tasks(job)["worker"]["template"]["spec"]


def test_single_pod_tf_job_gets_tf_config_in_the_plugin_format():
    env = env_of(tasks(job_of("tf-single.yaml"))["worker"])
    assert json.loads(env["TF_CONFIG"]["value"]) == {"cluster": {"worker": ["tf-single-worker-0.tf-single:2222"]},
                                                     "task": {"type": "worker", "index": 0}}


def test_tf_roles_with_different_ports_are_an_error(tmp_path):
    path = write_spec(tmp_path, """\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: ports}
        spec:
          framework: tensorflow
          image: busybox
          command: [train]
          roles:
            ps: {replicas: 1, port: 3333}
            worker: {replicas: 2}
        """)
    (plan,) = load_plans(str(path))
    with pytest.raises(SpecErrors) as info:
        volcano.render(plan)
    assert info.value.errors[0].path == "spec.roles" and "same port" in info.value.errors[0].message


def test_labels_on_objects_and_templates():
    cm, job = docs_of(SPECS / "tf-ps.yaml")
    for obj in (cm, job):
        assert obj["metadata"]["labels"]["trainspec.dev/job"] == "tf-ps"
        assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "trainspec"
    for task in job["spec"]["tasks"]:
        labels = task["template"]["metadata"]["labels"]
        assert labels["trainspec.dev/role"] == task["name"] == labels["app.kubernetes.io/component"]
        assert "trainspec.dev/index" not in labels  # Volcano labels the index (volcano.sh/task-index)


def test_golden_files_are_up_to_date():
    result = run_cli("build", str(SPECS), "-o", str(GOLDEN), "--target", "volcano", "--check", *runtime_excludes())
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    on_a_runtime = {p.stem for p in SPECS.glob("*.yaml") if on_runtime(p)}  # each example's job is named as its file
    assert all((GOLDEN / d.name / "volcano.yaml").is_file() for d in GOLDEN.iterdir()
               if d.is_dir() and d.name not in on_a_runtime)


def test_same_bytes_across_processes(tmp_path):
    outputs = []
    for seed in ("0", "4242"):
        out = tmp_path / seed
        # the kubeflow target has no kind for framework: generic (spec v1.2): build the others
        specs = [str(SPECS / name) for name in EXAMPLES if name not in GENERIC_EXAMPLES]
        result = run_cli("build", *specs, "-o", str(out), "--target", "volcano", "--target", "kubeflow",
                         env={"PYTHONHASHSEED": seed})
        assert result.returncode == 0, result.stderr
        outputs.append({p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    jobs_files = [p for p in outputs[0] if p.name != ".trainspec.build"]  # the build's marker is not a job file
    assert outputs[0] == outputs[1] and len(jobs_files) == 2 * (len(EXAMPLES) - len(GENERIC_EXAMPLES))


def _index_spec(tmp_path, arg: str) -> str:
    spec = tmp_path / "idx.yaml"
    spec.write_text(
        "apiVersion: trainspec/v1\nkind: TrainingJob\nmetadata: {name: idx}\n"
        "spec:\n  framework: tensorflow\n  image: img\n  command: [python, train.py]\n"
        f"  args: [\"{arg}\"]\n"
        "  roles: {ps: {replicas: 1}, worker: {replicas: 3}}\n")
    return str(spec)


def test_per_replica_text_keeps_one_task_per_role_when_the_index_can_be_read_at_runtime(tmp_path):
    text = run_cli("compile", _index_spec(tmp_path, "--shard={{ index }}"), "--target", "volcano").stdout
    job = [d for d in yaml.safe_load_all(text) if d and d["kind"] == "Job"][0]
    by_name = tasks(job)
    assert sorted(by_name) == ["ps", "worker"] and by_name["worker"]["replicas"] == 3
    container = by_name["worker"]["template"]["spec"]["containers"][0]
    assert container["args"] == ["--shard=$(TRAINSPEC_INDEX)"]
    assert "tensorflow" in job["spec"]["plugins"]
    assert "one task per replica" not in text


def test_per_replica_text_that_cannot_be_rebuilt_splits_tasks_and_says_so(tmp_path):
    text = run_cli("compile", _index_spec(tmp_path, "--shard={{ index * 2 }}"), "--target", "volcano").stdout
    job = [d for d in yaml.safe_load_all(text) if d and d["kind"] == "Job"][0]
    assert sorted(tasks(job)) == ["ps-0", "worker-0", "worker-1", "worker-2"]
    assert tasks(job)["worker-2"]["template"]["spec"]["containers"][0]["args"] == ["--shard=4"]
    assert text.splitlines()[1].startswith("# one task per replica")
