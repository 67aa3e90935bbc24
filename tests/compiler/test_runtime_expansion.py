"""--runtime FILE|DIR: a spec v1.3 job on a Trainer runtime compiles to the JobSet the Trainer controller
creates (compiler/runtimes.py, kubeflow/trainer pkg/runtime/framework/plugins/{jobset,torch,mpi,jax,xgboost}),
valid against the JobSet CRD and the Job schema; bad or missing runtimes are errors at their place."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from trainspec.compiler.runtimes import COMPLETION_INDEX, expand

import schemas
from helpers import SPECS, run_cli

DATA = Path(__file__).resolve().parents[1] / "data"
RUNTIME = DATA / "runtimes" / "torch-distributed.yaml"
K8S_VERSION = "1.33"


def _compile(spec: Path, *extra: str) -> list[dict]:
    r = run_cli("compile", str(spec), "--target", "jobset", *extra)
    assert r.returncode == 0, r.stderr
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def _env(container: dict) -> dict:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def test_a_spec_on_torch_distributed_compiles_to_the_controllers_jobset():
    docs = _compile(SPECS / "torch-on-runtime.yaml", "--runtime", str(RUNTIME))
    assert [d["kind"] for d in docs] == ["JobSet"]
    js = docs[0]
    assert schemas.errors(js) == []
    [rjob] = js["spec"]["replicatedJobs"]
    assert rjob["replicas"] == 1 and rjob["template"]["spec"]["parallelism"] == 3  # master + 2 workers = numNodes
    assert rjob["template"]["spec"]["completions"] == 3
    kubernetes_validate.validate({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x-node-0"},
                                  "spec": rjob["template"]["spec"]}, K8S_VERSION, strict=True)
    pod = rjob["template"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"node-type": "training"}  # the spec's runtimePatches, laid over the runtime
    [node] = pod["containers"]
    assert node["name"] == "node" and node["image"] == "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
    assert node["command"][0] == "torchrun"
    assert node["resources"]["requests"] == {"cpu": "2", "memory": "4Gi"}
    env = _env(node)
    assert list(env)[:1] == ["NCCL_DEBUG"]  # the TrainJob env, then PET_* (torch.go UpsertEnvVars order)
    assert env["PET_NNODES"] == "3" and env["PET_NPROC_PER_NODE"] == "1"
    assert env["PET_NODE_RANK"] == {"fieldRef": {"fieldPath": COMPLETION_INDEX}}
    assert env["PET_MASTER_ADDR"] == "torch-on-runtime-node-0-0.torch-on-runtime" and env["PET_MASTER_PORT"] == "29500"
    assert {"containerPort": 29500, "protocol": "TCP"} in node["ports"]
    assert js["metadata"]["labels"]["trainspec.dev/job"] == "torch-on-runtime"  # ps/down find it
    assert js["spec"]["suspend"] is True  # the TrainJob's suspend


def test_a_runtime_folder_and_the_same_bytes_twice():
    first = run_cli("compile", str(SPECS / "torch-on-runtime.yaml"), "-t", "jobset", "--runtime", str(RUNTIME.parent))
    second = run_cli("compile", str(SPECS / "torch-on-runtime.yaml"), "-t", "jobset", "--runtime", str(RUNTIME))
    assert first.returncode == 0 and first.stdout == second.stdout


def test_nproc_auto_is_the_cpus_per_node_without_gpus(tmp_path):
    """torch.go: numProcPerNode "auto" with no GPU in resourcesPerNode is max(1, CPU requests)."""
    tj = {"metadata": {"name": "t"}, "spec": {"trainer": {"numNodes": 2, "resourcesPerNode": {
        "requests": {"cpu": "3"}}}}}
    made = expand(tj, yaml.safe_load(RUNTIME.read_text()))
    node = made.jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert _env(node)["PET_NPROC_PER_NODE"] == "3"
    tj["spec"]["trainer"]["resourcesPerNode"] = {"limits": {"nvidia.com/gpu": 2}}
    node = expand(tj, yaml.safe_load(RUNTIME.read_text())).jobset["spec"]["replicatedJobs"][0]["template"]["spec"][
        "template"]["spec"]["containers"][0]
    assert _env(node)["PET_NPROC_PER_NODE"] == "auto"


MPI_RUNTIME = textwrap.dedent("""\
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata: {name: deepspeed-distributed}
    spec:
      mlPolicy:
        numNodes: 1
        mpi: {mpiImplementation: DeepSpeed, numProcPerNode: 1, sshAuthMountPath: /home/mpiuser/.ssh, runLauncherAsNode: true}
      template:
        spec:
          replicatedJobs:
            - name: launcher
              template:
                metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
                spec:
                  template:
                    spec:
                      containers: [{name: node, image: deepspeed:latest}]
            - name: node
              template:
                spec:
                  template:
                    spec:
                      containers: [{name: node, image: deepspeed:latest, command: [/usr/sbin/sshd, -De]}]
    """)


def test_mpi_runtime_hostfile_and_launcher_worker_split():
    """mpi.go: runLauncherAsNode puts the launcher first in the hostfile and the node Job has numNodes - 1."""
    tj = {"metadata": {"name": "ds", "namespace": "ml"},
          "spec": {"trainer": {"numNodes": 3, "numProcPerNode": 2, "env": [{"name": "A", "value": "1"}]}}}
    made = expand(tj, yaml.safe_load(MPI_RUNTIME))
    rjobs = {r["name"]: r for r in made.jobset["spec"]["replicatedJobs"]}
    assert rjobs["node"]["template"]["spec"]["parallelism"] == 2
    [cm] = made.objects
    assert cm["metadata"] == {"name": "ds-mpi-hostfile", "namespace": "ml"}
    assert cm["data"]["hostfile"] == ("ds-launcher-0-0.ds slots=2\nds-node-0-0.ds slots=2\nds-node-0-1.ds slots=2\n")
    launcher = rjobs["launcher"]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert list(_env(launcher)) == ["OMPI_MCA_orte_default_hostfile", "OMPI_MCA_orte_keep_fqdn_hostnames",
                                    "OMPI_MCA_orte_set_default_slots", "OMPI_MCA_plm_rsh_args", "A"]
    assert {"name": "mpi-ssh-auth", "mountPath": "/home/mpiuser/.ssh"} in launcher["volumeMounts"]
    assert made.ssh_secret == "ds-mpi-ssh-auth" and made.mpi


@pytest.mark.parametrize("policy, names", [
    ({"jax": {}}, ["JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "JAX_COORDINATOR_ADDRESS", "A"]),
    ({"xgboost": {}}, ["A", "DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER"]),
])
def test_jax_and_xgboost_policies(policy, names):
    runtime = yaml.safe_load(RUNTIME.read_text())
    runtime["spec"]["mlPolicy"] = {"numNodes": 2, **policy}
    made = expand({"metadata": {"name": "j"}, "spec": {"trainer": {"env": [{"name": "A", "value": "1"}]}}}, runtime)
    node = made.jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert list(_env(node)) == names
    env = _env(node)
    assert env.get("JAX_COORDINATOR_ADDRESS", "j-node-0-0.j:29500") == "j-node-0-0.j:29500"
    assert env.get("DMLC_NUM_WORKER", "2") == "2"


def test_a_bad_runtime_file_is_an_error_at_its_line_and_nothing_is_written(tmp_path):
    out = tmp_path / "out.yaml"
    r = run_cli("compile", str(SPECS / "torch-on-runtime.yaml"), "-t", "jobset", "--runtime",
                str(DATA / "bad-runtimes" / "bad-no-trainer.yaml"), "-o", str(out))
    assert r.returncode == 2 and not out.exists()
    assert re.search(r"bad-no-trainer\.yaml:10:7: spec\.template\.spec\.replicatedJobs: no replicatedJob's Job "
                     r"template is labelled trainer\.kubeflow\.org/trainjob-ancestor-step: trainer", r.stderr), r.stderr
    r = run_cli("validate", str(SPECS / "torch-on-runtime.yaml"), "--runtime", str(DATA / "bad-runtimes"))
    assert r.returncode == 2 and "bad-no-trainer.yaml:10:7:" in r.stderr


def _on(tmp_path: Path, name: str) -> Path:
    """The example spec on the ClusterTrainingRuntime `name` (not one Kubeflow Trainer ships: the cluster's own)."""
    spec = tmp_path / "spec.yaml"
    spec.write_text((SPECS / "torch-on-runtime.yaml").read_text().replace("name: torch-distributed", f"name: {name}"))
    return spec


def test_a_runtime_not_among_those_given_is_named(tmp_path):
    other = tmp_path / "rt.yaml"
    doc = yaml.safe_load(RUNTIME.read_text())
    doc["metadata"]["name"] = "mpi-distributed"
    other.write_text(yaml.safe_dump(doc))
    r = run_cli("validate", str(_on(tmp_path, "my-torch")), "--runtime", str(other))
    assert r.returncode == 2
    assert re.search(r"spec\.yaml:\d+:\d+: spec\.trainjob\.runtime: ClusterTrainingRuntime "
                     r"'my-torch' is not among the --runtime files' runtimes \(ClusterTrainingRuntime "
                     r"mpi-distributed\) nor the ones Kubeflow Trainer ships", r.stderr), r.stderr


def test_a_shipped_runtime_not_among_those_given_is_the_shipped_one(tmp_path):
    other = tmp_path / "rt.yaml"
    other.write_text(RUNTIME.read_text().replace("name: torch-distributed", "name: my-torch"))
    r = run_cli("validate", str(SPECS / "torch-on-runtime.yaml"), "--runtime", str(other))
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("trainspec: note: ") == 1
    assert "ClusterTrainingRuntime 'torch-distributed': Kubeflow Trainer v2.3.0's shipped definition" in r.stderr


def test_without_the_runtime_jobset_and_k8s_say_how_to_give_it(tmp_path):
    spec = _on(tmp_path, "my-torch")
    for target in ("jobset", "k8s"):
        r = run_cli("compile", str(spec), "-t", target)
        assert r.returncode == 2
        assert "--runtime FILE|DIR" in r.stderr and "kubectl get clustertrainingruntime my-torch" in r.stderr
        assert "ClusterTrainingRuntime 'my-torch'" in r.stderr and "note:" not in r.stderr
        # the names that need no --runtime, for a user who meant one of them
        assert "deepspeed-distributed, jax-distributed, mlx-distributed, torch-distributed, xgboost-distributed" \
            in r.stderr


def test_a_namespaced_training_runtime_is_never_a_shipped_one(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text((SPECS / "torch-on-runtime.yaml").read_text().replace("kind: ClusterTrainingRuntime",
                                                                           "kind: TrainingRuntime"))
    r = run_cli("compile", str(spec), "-t", "jobset")
    assert r.returncode == 2
    assert "TrainingRuntime 'torch-distributed'" in r.stderr and "kubectl get trainingruntime torch-distributed" \
        in r.stderr


def test_build_with_the_runtime_writes_the_jobset(tmp_path):
    r = run_cli("build", str(SPECS / "torch-on-runtime.yaml"), "-o", str(tmp_path), "-t", "jobset", "-t", "trainjob",
                "--runtime", str(RUNTIME), "--no-cache")
    assert r.returncode == 0, r.stderr
    js = yaml.safe_load((tmp_path / "torch-on-runtime" / "jobset.yaml").read_text())
    assert js["kind"] == "JobSet" and js["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] == 3
    assert (tmp_path / "torch-on-runtime" / "trainjob.yaml").exists()


def test_an_edited_runtime_is_recompiled_by_build(tmp_path):
    runtime = tmp_path / "rt.yaml"
    runtime.write_text(RUNTIME.read_text())
    out = tmp_path / "out"
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    args = ("build", str(SPECS / "torch-on-runtime.yaml"), "-o", str(out), "-t", "jobset", "--runtime", str(runtime))
    assert run_cli(*args, env=env).returncode == 0
    runtime.write_text(RUNTIME.read_text().replace("numNodes: 1", "numNodes: 1\n    mpi: {}").replace(
        "    torch: {}\n", ""))
    r = run_cli(*args, env=env)
    assert r.returncode == 0, r.stderr
    assert "OMPI_MCA_orte_default_hostfile" in (out / "torch-on-runtime" / "jobset.yaml").read_text()


def test_migrate_a_pytorchjob_onto_torch_distributed_says_what_the_runtime_changes(tmp_path):
    manifest = Path(__file__).resolve().parents[1] / "import_manifests" / "pytorch-ddp-v1.yaml"
    out = tmp_path / "tj.yaml"
    r = run_cli("migrate", str(manifest), "--to", "trainjob", "--runtime", str(RUNTIME), "-o", str(out))
    assert r.returncode == 0, r.stderr
    [tj] = [d for d in yaml.safe_load_all(out.read_text()) if d]  # the TrainJob only: the runtime is the cluster's
    assert tj["kind"] == "TrainJob" and tj["spec"]["runtimeRef"] == {"name": "torch-distributed",
                                                                    "kind": "ClusterTrainingRuntime"}
    assert tj["spec"]["trainer"]["numNodes"] == 4 and tj["spec"]["trainer"]["numProcPerNode"] == 2
    changes = [line for line in r.stderr.splitlines() if line.startswith("trainspec: changes on trainjob:")]
    assert any("MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE" in c and "PET_NNODES=4, PET_NPROC_PER_NODE=2, "
               "PET_NODE_RANK (the Job completion index), PET_MASTER_ADDR=resnet-ddp-node-0-0.resnet-ddp, "
               "PET_MASTER_PORT=29500" in c for c in changes), r.stderr
    assert any("container `node`" in c and "4 nodes" in c for c in changes), r.stderr
    assert any("torchrun reads PET_" in c for c in changes), r.stderr
    lost = [line for line in r.stderr.splitlines() if line.startswith("trainspec: lost:")]
    assert any("spec.volumes" in line for line in lost) and any("workingDir" in line for line in lost)
    strict = run_cli("migrate", str(manifest), "--to", "trainjob", "--runtime", str(RUNTIME), "--strict",
                     "-o", str(tmp_path / "strict.yaml"))
    assert strict.returncode == 2 and not (tmp_path / "strict.yaml").exists()


def test_migrate_a_script_without_torchrun_is_told_it_loses_rank(tmp_path):
    manifest = tmp_path / "pj.yaml"
    manifest.write_text(textwrap.dedent("""\
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: plain}
        spec:
          pytorchReplicaSpecs:
            Master:
              replicas: 1
              template:
                spec:
                  containers: [{name: pytorch, image: img:1, command: [python3, train.py]}]
            Worker:
              replicas: 1
              template:
                spec:
                  containers: [{name: pytorch, image: img:1, command: [python3, train.py]}]
        """))
    r = run_cli("migrate", str(manifest), "--to", "trainjob", "--runtime", str(RUNTIME))
    assert r.returncode == 0, r.stderr
    assert "the command is not torchrun" in r.stderr and "PET_NNODES=2" in r.stderr


def test_k8s_with_the_runtime_writes_the_jobset_controllers_jobs_and_service():
    r = run_cli("compile", str(SPECS / "torch-on-runtime.yaml"), "--target", "k8s", "--runtime", str(RUNTIME))
    assert r.returncode == 0, r.stderr
    docs = [d for d in yaml.safe_load_all(r.stdout) if d]
    assert [d["kind"] for d in docs] == ["Service", "Job"]
    for doc in docs:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    service, job = docs
    assert service["metadata"]["name"] == "torch-on-runtime" and service["spec"]["clusterIP"] == "None"
    assert job["metadata"]["name"] == "torch-on-runtime-node-0"  # JobSet's <js>-<rjob>-<j>
    assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["parallelism"] == 3
    pod = job["spec"]["template"]
    assert pod["spec"]["subdomain"] == "torch-on-runtime"
    assert pod["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-name"] == "torch-on-runtime"
    assert service["spec"]["selector"] == {"jobset.sigs.k8s.io/jobset-name": "torch-on-runtime"}
    assert _env(pod["spec"]["containers"][0])["PET_MASTER_ADDR"] == "torch-on-runtime-node-0-0.torch-on-runtime"


def test_import_with_runtime_files_checks_them_and_the_spec_expands_on_them(tmp_path):
    manifest = Path(__file__).resolve().parents[1] / "import_manifests" / "trainjobs" / "01-multi-node.yaml"
    bad = run_cli("import", str(manifest), "--runtime", str(DATA / "bad-runtimes"))
    assert bad.returncode == 2 and "bad-no-trainer.yaml:10:7: spec.template.spec.replicatedJobs" in bad.stderr
    other = tmp_path / "other.yaml"
    other.write_text(RUNTIME.read_text().replace("name: torch-distributed", "name: other"))
    mine = tmp_path / "01-multi-node.yaml"  # on a runtime Kubeflow Trainer does not ship
    mine.write_text(manifest.read_text().replace("name: torch-distributed", "name: my-torch"))
    missing = run_cli("import", str(mine), "--runtime", str(other))
    assert missing.returncode == 2
    assert re.search(r"01-multi-node\.yaml:8:3: spec\.runtimeRef: runtime ClusterTrainingRuntime 'my-torch' "
                     r"is not in MANIFEST, the --runtime files \(ClusterTrainingRuntime other\) nor the ones Kubeflow "
                     r"Trainer ships", missing.stderr), missing.stderr
    shipped = run_cli("import", str(manifest), "--strict", "--runtime", str(other))
    assert shipped.returncode == 0, shipped.stderr  # torch-distributed: the one Trainer ships
    spec = tmp_path / "spec.yaml"
    r = run_cli("import", str(manifest), "--strict", "--runtime", str(RUNTIME), "-o", str(spec))
    assert r.returncode == 0, r.stderr
    [js] = _compile(spec, "--runtime", str(RUNTIME))
    node = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert _env(node)["PET_NNODES"] == "3" and js["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] == 3


def test_an_mpi_spec_on_a_runtime_gives_its_command_to_the_launcher(tmp_path):
    """The job's command is the launcher's (the node runs the runtime's sshd): jobset and k8s compile it as
    the TrainJob would run; a worker's own command is still an error, at the worker."""
    (tmp_path / "rt.yaml").write_text(MPI_RUNTIME)
    name = yaml.safe_load(MPI_RUNTIME)["metadata"]["name"]
    spec = tmp_path / "spec.yaml"
    spec.write_text(textwrap.dedent(f"""\
        apiVersion: trainspec/v1.3
        kind: TrainingJob
        metadata: {{name: ds}}
        spec:
          framework: mpi
          image: deepspeed:latest
          command: [mpirun, python3, train.py]
          env: {{LOG_LEVEL: info}}
          trainjob:
            runtime: {{name: {name}, kind: ClusterTrainingRuntime}}
          roles:
            launcher: {{replicas: 1}}
            worker: {{replicas: 2}}
        """))
    docs = _compile(spec, "--runtime", str(tmp_path / "rt.yaml"))
    jobset = next(d for d in docs if d["kind"] == "JobSet")
    rjobs = {r["name"]: r["template"]["spec"]["template"]["spec"]["containers"][0]
             for r in jobset["spec"]["replicatedJobs"]}
    assert rjobs["launcher"]["command"] == ["mpirun", "python3", "train.py"]
    assert rjobs["node"]["command"] == ["/usr/sbin/sshd", "-De"]
    spec.write_text(spec.read_text().replace("worker: {replicas: 2}",
                                             "worker: {replicas: 2, command: [sleep, '1']}"))
    bad = run_cli("compile", str(spec), "--target", "jobset", "--runtime", str(tmp_path / "rt.yaml"))
    assert bad.returncode == 2 and "spec.roles.worker" in bad.stderr and "Traceback" not in bad.stderr


def test_migrate_of_a_trainjob_to_jobset_expands_the_given_runtime_else_the_shipped_one(tmp_path):
    manifest = Path(__file__).resolve().parents[1] / "import_manifests" / "trainjobs" / "01-multi-node.yaml"
    shipped = run_cli("migrate", str(manifest), "--to", "jobset", "-o", str(tmp_path / "shipped.yaml"))
    assert shipped.returncode == 0, shipped.stderr
    assert f"trainspec: note: {manifest}: ClusterTrainingRuntime 'torch-distributed': Kubeflow Trainer v2.3.0's " \
        "shipped definition" in shipped.stderr
    given = run_cli("migrate", str(manifest), "--to", "jobset", "--runtime", str(RUNTIME), "-o", str(tmp_path / "given.yaml"))
    assert given.returncode == 0, given.stderr
    assert "note:" not in given.stderr

    def image(name: str) -> str:
        (js,) = [d for d in yaml.safe_load_all((tmp_path / name).read_text()) if d]
        return js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["image"]

    # the TrainJob sets no image: the runtime's, the one given winning over the one Trainer ships
    assert image("shipped.yaml") == "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"
    assert image("given.yaml") == "trainspec-test:py3"
