"""The kubeflow target: CRD-valid (strict), the operators' conventions, no operator-injected env, golden files."""

from __future__ import annotations

import json
import textwrap

import kubernetes_validate
import pytest
import yaml

from trainspec.compiler import SpecErrors
from trainspec.targets import load_plans
from trainspec.targets.kubeflow import render as kubeflow

import schemas
from helpers import GOLDEN, ROOT, SPECS, compiled_docs, run_cli


def _kubeflow_runs(path) -> bool:
    """Whether the kubeflow target can run the example at all (framework: generic has no kind)."""
    (plan,) = load_plans(str(path))
    return "kubeflow" not in plan.unsupported


EXAMPLES = sorted(p.name for p in SPECS.glob("*.yaml") if _kubeflow_runs(p))
# Variables the operators inject themselves (CONVENTIONS §1): never in our templates.
OPERATOR_ENV = ("TF_CONFIG", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "PYTHONUNBUFFERED", "MX_CONFIG",
                "K_MPI_JOB_ROLE", "WORKER_PORT", "WORKER_ADDRS", "POD_IP_DUMMY", "NUM_PROCESSES", "PROCESS_ID")
OPERATOR_PREFIXES = ("PET_", "DMLC_", "OMPI_", "I_MPI_", "HYDRA_", "PADDLE_", "COORDINATOR_")


def docs_of(spec_path) -> list[dict]:
    return compiled_docs("kubeflow", spec_path)


def job_of(spec_name: str) -> dict:
    return docs_of(SPECS / spec_name)[1]


def replica_specs(job: dict) -> dict:
    return next(v for k, v in job["spec"].items() if k.endswith("ReplicaSpecs"))


def container(rspec: dict) -> dict:
    return rspec["template"]["spec"]["containers"][0]


def env_names(rspec: dict) -> list[str]:
    return [e["name"] for e in container(rspec).get("env", [])]


def write_spec(tmp_path, body: str, name="job.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


@pytest.mark.parametrize("spec", EXAMPLES)
def test_valid_against_the_crd_schema_strict(spec):
    docs = docs_of(SPECS / spec)
    kinds = [d["kind"] for d in docs]
    assert kinds[0] == "ConfigMap" and len(docs) == 2
    assert schemas.has_schema(docs[1])
    assert schemas.errors(docs[1]) == []
    kubernetes_validate.validate(docs[0], "1.30", strict=True)


def test_schema_check_is_strict_and_typed():
    job = job_of("tf-ps.yaml")
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    job["spec"]["runPolicy"]["backoffLimit"] = "three"
    found = schemas.errors(job)
    assert any("imagePullPolicyy" in e for e in found), found
    assert any("backoffLimit" in e for e in found), found


@pytest.mark.parametrize("spec,kind,api,types,container_name,port", [
    ("tf-chief.yaml", "TFJob", "kubeflow.org/v1", ["Chief", "PS", "Worker", "Evaluator"], "tensorflow", "tfjob-port"),
    ("tf-ps.yaml", "TFJob", "kubeflow.org/v1", ["PS", "Worker", "Evaluator"], "tensorflow", "tfjob-port"),
    ("pytorch-ddp.yaml", "PyTorchJob", "kubeflow.org/v1", ["Master", "Worker"], "pytorch", "pytorchjob-port"),
    ("mxnet-ps.yaml", "MXJob", "kubeflow.org/v1", ["Scheduler", "Server", "Worker"], "mxnet", "mxjob-port"),
    ("mpi-horovod.yaml", "MPIJob", "kubeflow.org/v2beta1", ["Launcher", "Worker"], "mpi", "mpijob-port"),
    ("xgboost.yaml", "XGBoostJob", "kubeflow.org/v1", ["Master", "Worker"], "xgboost", "xgboostjob-port"),
    ("paddle.yaml", "PaddleJob", "kubeflow.org/v1", ["Worker"], "paddle", "master"),
    ("paddle-ps.yaml", "PaddleJob", "kubeflow.org/v1", ["Master", "Worker"], "paddle", "master"),
    ("jax.yaml", "JAXJob", "kubeflow.org/v1", ["Worker"], "jax", "jaxjob-port"),
])
def test_kind_replica_types_container_and_port(spec, kind, api, types, container_name, port):
    job = job_of(spec)
    assert (job["apiVersion"], job["kind"]) == (api, kind)
    specs = replica_specs(job)
    assert list(specs) == types
    for rspec in specs.values():
        c = container(rspec)
        assert c["name"] == container_name  # the operator injects env only into the default-named container
        assert [p["name"] for p in c["ports"]] == [port]


@pytest.mark.parametrize("spec", EXAMPLES)
def test_no_operator_injected_env_but_trainspec_env(spec):
    job = job_of(spec)
    single_tf = job["kind"] == "TFJob" and sum(r["replicas"] for r in replica_specs(job).values()) == 1
    for rtype, rspec in replica_specs(job).items():
        names = env_names(rspec)
        for name in names:
            if name == "TF_CONFIG" and single_tf:
                continue  # the operator gives none to a single replica; the spec promises one
            assert name not in OPERATOR_ENV and not name.startswith(OPERATOR_PREFIXES), (rtype, name)
        assert names[:3] == ["TRAINSPEC_JOB", "TRAINSPEC_ROLE", "TRAINSPEC_INDEX"]
        index = container(rspec)["env"][2]
        if job["kind"] == "MPIJob" and rtype == "Launcher":
            assert index == {"name": "TRAINSPEC_INDEX", "value": "0"}
        else:
            assert index["valueFrom"] == {"fieldRef": {
                "fieldPath": "metadata.labels['training.kubeflow.org/replica-index']"}}
        for role in replica_specs(job):
            assert f"TRAINSPEC_NUM_{role.upper()}" in names and f"TRAINSPEC_HOSTS_{role.upper()}" in names


def test_single_replica_tfjob_gets_tf_config_in_the_operator_format():
    job = job_of("tf-single.yaml")
    env = {e["name"]: e.get("value") for e in container(job["spec"]["tfReplicaSpecs"]["Worker"])["env"]}
    assert json.loads(env["TF_CONFIG"]) == {"cluster": {"worker": ["tf-single-worker-0.default.svc:2222"]},
                                            "task": {"type": "worker", "index": 0}, "environment": "cloud"}


def test_host_lists_name_the_services_the_operator_creates():
    cm, job = docs_of(SPECS / "tf-ps.yaml")
    assert cm["metadata"]["name"] == "tf-ps-topology"
    assert cm["data"]["TRAINSPEC_HOSTS_PS"] == "tf-ps-ps-0:2222,tf-ps-ps-1:2222"
    cm, job = docs_of(SPECS / "mpi-horovod.yaml")  # mpi-operator: hostname + subdomain <job>
    assert cm["data"]["TRAINSPEC_HOSTS_WORKER"] == \
        "mpi-horovod-worker-0.mpi-horovod:22,mpi-horovod-worker-1.mpi-horovod:22"
    assert cm["data"]["TRAINSPEC_HOSTS_LAUNCHER"] == "mpi-horovod-launcher.mpi-horovod:22"


def test_restart_policies_per_replica_spec_and_run_policy():
    job = job_of("tf-chief.yaml")
    assert {k: v["restartPolicy"] for k, v in job["spec"]["tfReplicaSpecs"].items()} == {
        "Chief": "ExitCode", "PS": "ExitCode", "Worker": "ExitCode", "Evaluator": "ExitCode"}
    assert "restartPolicy" not in job["spec"]["tfReplicaSpecs"]["Chief"]["template"]["spec"]  # the operator sets it
    assert job["spec"]["runPolicy"] == {"cleanPodPolicy": "All", "ttlSecondsAfterFinished": 600,
                                        "activeDeadlineSeconds": 3600, "backoffLimit": 2}
    full = job_of("full-features.yaml")
    assert {k: v["restartPolicy"] for k, v in full["spec"]["pytorchReplicaSpecs"].items()} == {
        "Master": "OnFailure", "Worker": "ExitCode"}
    assert full["spec"]["runPolicy"]["schedulingPolicy"] == {"minAvailable": 3, "queue": "research",
                                                             "priorityClass": "high"}
    assert full["spec"]["nprocPerNode"] == "2"
    multi = job_of("tf-multiworker.yaml")
    assert multi["spec"]["successPolicy"] == "AllWorkers"
    assert "successPolicy" not in job_of("tf-ps.yaml")["spec"]  # ChiefOrWorker0 is the operator's default ""


def test_everything_the_pod_template_carries_is_carried_over():
    full = job_of("full-features.yaml")
    master = full["spec"]["pytorchReplicaSpecs"]["Master"]["template"]
    pod, c = master["spec"], master["spec"]["containers"][0]
    assert pod["schedulerName"] == "volcano" and pod["priorityClassName"] == "high"
    assert [i["name"] for i in pod["initContainers"]] == ["fetch-vocab"]
    assert set(c["lifecycle"]) == {"postStart", "preStop"}
    assert {"livenessProbe", "readinessProbe", "startupProbe"} <= set(c)
    assert c["resources"]["limits"]["nvidia.com/gpu"] == 2
    assert {v["name"] for v in pod["volumes"]} == {"data", "output", "scratch", "config", "certs", "dshm"}
    env = {e["name"]: e for e in c["env"]}
    assert env["HF_TOKEN"]["valueFrom"] == {"secretKeyRef": {"name": "hf-credentials", "key": "token"}}
    assert env["WANDB_PROJECT"]["valueFrom"] == {"configMapKeyRef": {"name": "tracking", "key": "project"}}
    labels = master["metadata"]["labels"]
    assert labels["trainspec.dev/job"] == "bert-finetune" and labels["trainspec.dev/role"] == "master"
    assert labels["app.kubernetes.io/managed-by"] == "trainspec" and labels["team"] == "nlp"
    assert "trainspec.dev/index" not in labels  # one template serves every replica (the operator labels the index)
    assert full["metadata"]["labels"]["app.kubernetes.io/name"] == "bert-finetune"


def test_mpijob_v2beta1_fields_and_no_ssh_secret():
    docs = docs_of(SPECS / "mpi-horovod.yaml")
    assert [d["kind"] for d in docs] == ["ConfigMap", "MPIJob"]  # mpi-operator generates <job>-ssh itself
    spec = docs[1]["spec"]
    assert (spec["slotsPerWorker"], spec["mpiImplementation"], spec["sshAuthMountPath"]) == (1, "OpenMPI", "/root/.ssh")
    assert spec["runPolicy"]["cleanPodPolicy"] == "None"  # mpi-operator's validation requires one
    launcher, worker = spec["mpiReplicaSpecs"]["Launcher"], spec["mpiReplicaSpecs"]["Worker"]
    assert container(launcher)["command"][0] == "mpirun"
    assert container(worker)["command"] == ["/usr/sbin/sshd", "-De"]
    assert (launcher["restartPolicy"], worker["restartPolicy"]) == ("OnFailure", "Never")


def test_mxjob_says_which_operator_serves_it():
    (plan,) = load_plans(str(SPECS / "mxnet-ps.yaml"))
    text = kubeflow.render(plan)[kubeflow.FILE]
    assert text.splitlines()[1] == "# " + kubeflow.MXJOB_NOTE
    assert "<= 1.8" in text.splitlines()[1]
    assert yaml.safe_load_all(text) and job_of("mxnet-ps.yaml")["spec"]["jobMode"] == "MXTrain"


def test_per_index_template_becomes_a_runtime_reference_that_expands_exactly():
    job = job_of("tf-args-style.yaml")
    args = container(job["spec"]["tfReplicaSpecs"]["Worker"])["args"]
    assert "--task_index=$(TRAINSPEC_INDEX)" in args
    assert "--job_name=worker" in args


def test_per_index_template_that_cannot_be_rebuilt_at_runtime_is_an_error(tmp_path):
    path = write_spec(tmp_path, """\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: shifted}
        spec:
          framework: tensorflow
          image: busybox
          command: [sh, -c, "train"]
          args: ["--one_based={{ index + 1 }}", "--first={% if index == 0 %}yes{% else %}no{% endif %}"]
          roles:
            worker: {replicas: 2}
        """)
    (plan,) = load_plans(str(path))
    with pytest.raises(SpecErrors) as info:
        kubeflow.render(plan)
    (error,) = info.value.errors
    assert (error.line, error.column, error.path) == (8, 10, "spec.args[0]")
    assert "TRAINSPEC_INDEX" in error.hint
    result = run_cli("compile", str(path), "--target", "kubeflow")
    assert result.returncode == 2 and "spec.args[0]" in result.stderr and "Traceback" not in result.stderr
    path.write_text(path.read_text().replace("{{ index + 1 }}", "{{ index }}"))
    (plan,) = load_plans(str(path))
    with pytest.raises(SpecErrors) as info:
        kubeflow.render(plan)
    assert info.value.errors[0].path == "spec.args[1]"  # {% if index == 0 %} renders "no" for the template


def test_dollar_text_next_to_the_index_survives(tmp_path):
    path = write_spec(tmp_path, """\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: dollars}
        spec:
          framework: pytorch
          image: busybox
          command: [sh, -c, 'echo "$HOME"-{{ index }}$ $(date)']
          roles:
            master: {replicas: 1}
            worker: {replicas: 3}
        """)
    from trainspec.compiler.plan import expand_references

    (plan,) = load_plans(str(path))
    job = yaml.safe_load_all(kubeflow.render(plan)[kubeflow.FILE])
    job = [d for d in job if d][1]
    text = container(job["spec"]["pytorchReplicaSpecs"]["Worker"])["command"][2]
    for replica in plan.role("worker").replicas:
        assert expand_references(text, {"TRAINSPEC_INDEX": str(replica.index)}) == replica.command[2]


def test_mpi_operator_rejects_exit_code_restart(tmp_path):
    path = write_spec(tmp_path, """\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: mpi-exit}
        spec:
          framework: mpi
          image: mpioperator/openmpi:0.6.0
          command: [mpirun, hostname]
          restartPolicy: ExitCode
          roles:
            launcher: {replicas: 1}
            worker: {replicas: 2}
        """)
    (plan,) = load_plans(str(path))
    with pytest.raises(SpecErrors) as info:
        kubeflow.render(plan)
    assert info.value.errors[0].path == "spec.restartPolicy" and info.value.errors[0].line == 8


def test_output_is_linear_in_replicas(tmp_path):
    sizes = []
    for n in (100, 1000):
        path = write_spec(tmp_path, f"""\
            apiVersion: trainspec/v1
            kind: TrainingJob
            metadata: {{name: big}}
            spec:
              framework: tensorflow
              image: busybox
              command: [python, train.py, "--index={{{{ index }}}}"]
              roles:
                ps: {{replicas: 2}}
                worker: {{replicas: {n}}}
            """, name=f"big{n}.yaml")
        (plan,) = load_plans(str(path))
        text = kubeflow.render(plan)[kubeflow.FILE]
        assert text.count("big-worker-7:2222") == 1  # the host list is written once, in the ConfigMap
        sizes.append(len(text))
    assert sizes[1] - sizes[0] < 900 * len("big-worker-999:2222,") * 1.1


def test_golden_files_are_up_to_date():
    result = run_cli("build", *(str(SPECS / name) for name in EXAMPLES), "-o", str(GOLDEN), "--target", "kubeflow",
                     "--check")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    jobs = {load_plans(str(SPECS / name))[0].name for name in EXAMPLES}
    assert all((GOLDEN / job / "kubeflow.yaml").is_file() for job in jobs)


def test_same_bytes_every_time():
    (plan,) = load_plans(str(SPECS / "full-features.yaml"))
    assert kubeflow.render(plan) == kubeflow.render(load_plans(str(SPECS / "full-features.yaml"))[0])
    assert ROOT.joinpath("golden", "bert-finetune", "kubeflow.yaml").read_text() == kubeflow.render(plan)[kubeflow.FILE]
