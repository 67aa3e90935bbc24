"""`trainspec import`: Kubeflow v1 / MPIJob v2beta1 / Volcano manifests -> spec, and back again.

The manifests in tests/import_manifests/ are written in the style of the upstream
examples (training-operator examples/, mpi-operator examples/v2beta1, volcano
example/integrations).  Each imports (a); the v1 ones round-trip through
`compile` to a semantically equal manifest (b); the ones needing spec v1.1 fields
or frameworks round-trip once the compiler accepts them (c, gated on validation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from manifest_semantics import exact_diff, job_object, semantic_diff

from trainspec.cli import main
from trainspec.compiler import SpecErrors
from trainspec.importer import import_text
from trainspec.targets import load_plans

from helpers import run_cli

HERE = Path(__file__).parents[1] / "import_manifests"


@dataclass(frozen=True)
class Case:
    expect: dict  # dotted path in the imported spec -> value (None: absent)
    gated: str = ""  # why the round trip waits for the compiler (spec v1.1), "" for v1 manifests
    task_roles: dict = field(default_factory=dict)
    framework: str | None = None  # a Volcano source without a framework plugin
    expect_lost: int = 0  # fields --strict refuses
    no_round_trip: str = ""  # why there is no target to compile back to


CASES = {
    "tf-dist-mnist.yaml": Case({"spec.framework": "tensorflow", "spec.image": "kubeflow/tf-dist-mnist-test:latest",
                                "spec.roles.ps.replicas": 2, "spec.roles.worker.replicas": 4,
                                "spec.roles.ps.resources": {"cpu": "1", "memory": "2Gi"},
                                "spec.restartPolicy": "Never", "metadata.namespace": "kubeflow"}),
    "tf-chief-evaluator.yaml": Case({"spec.roles.chief.replicas": 1, "spec.roles.evaluator.replicas": 1,
                                     "spec.cleanPodPolicy": "Running", "spec.backoffLimit": 3,
                                     "spec.ttlSecondsAfterFinished": 3600, "spec.env": {"LOG_LEVEL": "info"},
                                     "spec.args": ["--model_dir=/data/output", "--train_steps=1000"],
                                     "spec.volumes": [{"name": "output", "mountPath": "/data/output",
                                                       "source": {"persistentVolumeClaim": "results"}}],
                                     "metadata.labels": {"team": "vision"}, "spec.restartPolicy": "OnFailure"}),
    "tf-mnist-with-summaries.yaml": Case({"spec.roles.worker.replicas": 1, "spec.cleanPodPolicy": "None",
                                          "spec.volumes.0.source": {"persistentVolumeClaim": "tfevent-volume"}}),
    "pytorch-ddp-v1.yaml": Case({"spec.pytorch.nprocPerNode": "2", "spec.workingDir": "/workspace",
                                 "spec.env.WANDB_API_KEY": {"secretKeyRef": {"name": "wandb", "key": "api-key"}},
                                 "spec.roles.worker.resources": {"cpu": "8", "memory": "32Gi", "gpu": 2,
                                                                 "shm": "8Gi"},
                                 "spec.volumes.0.readOnly": True, "spec.roles.worker.replicas": 3}),
    "pytorch-ddp-gpu.yaml": Case({"spec.nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-tesla-v100"},
                                  "spec.tolerations.0.key": "nvidia.com/gpu", "spec.imagePullPolicy": "Always",
                                  "spec.roles.master.resources": {"gpu": 1}, "apiVersion": "trainspec/v1.1"},
                                 gated="nodeSelector, tolerations, imagePullPolicy (spec v1.1)"),
    "pytorch-elastic.yaml": Case({"spec.pytorch.elastic": {"rdzvBackend": "c10d", "minReplicas": 1,
                                                           "maxReplicas": 2, "maxRestarts": 100},
                                  "spec.roles.master": None, "spec.roles.worker.replicas": 2},
                                 gated="pytorch.elastic, worker-only PyTorch, imagePullPolicy (spec v1.1)"),
    "mxnet-train.yaml": Case({"spec.framework": "mxnet", "spec.image": "kubeflow/mxnet-gpu:latest",
                              "spec.roles.worker.command": ["python3"], "spec.roles.worker.resources": {"gpu": 1},
                              "spec.roles.scheduler.replicas": 1}),
    "mpi-horovod.yaml": Case({"spec.framework": "mpi", "spec.roles.launcher.command": ["mpirun"],
                              "spec.roles.worker.command": None, "spec.mpi": {"slotsPerWorker": 1},
                              "spec.roles.worker.resources": {"cpu": "2", "memory": "4Gi"}}),
    "mpi-horovod-gpu-slots.yaml": Case({"spec.mpi": {"slotsPerWorker": 4}, "spec.roles.worker.command": None,
                                        "spec.roles.worker.resources": {"gpu": 4}, "spec.roles.worker.restartPolicy":
                                        "Never", "spec.roles.launcher.restartPolicy": "OnFailure"}),
    "mpi-intel-ssh.yaml": Case({"spec.mpi": {"slotsPerWorker": 1, "sshAuthMountPath": "/home/mpiuser/.ssh",
                                             "implementation": "Intel"},
                                "spec.securityContext": {"runAsUser": 1000},
                                "spec.roles.worker.args": ["-De", "-f", "/home/mpiuser/.sshd_config"],
                                "spec.roles.worker.probes.readiness.tcpSocket": {"port": 2222}},
                               gated="mpi.sshAuthMountPath, securityContext, imagePullPolicy (spec v1.1)"),
    "xgboost-iris.yaml": Case({"spec.framework": "xgboost", "spec.port": 9991, "spec.roles.master.replicas": 1,
                               "spec.roles.worker.restartPolicy": "ExitCode"},
                              gated="framework xgboost, imagePullPolicy (spec v1.1)"),
    "paddle-collective.yaml": Case({"spec.framework": "paddle", "spec.roles.worker.replicas": 2, "spec.port": 37777,
                                    "spec.args": ["-m", "paddle.distributed.launch", "run_check"]},
                                   gated="framework paddle, imagePullPolicy (spec v1.1)"),
    "jax-cpu.yaml": Case({"spec.framework": "jax", "spec.command": ["python3", "train.py"],
                          "spec.roles.worker.replicas": 2}, gated="framework jax, imagePullPolicy (spec v1.1)"),
    "volcano-tf-plugin.yaml": Case({"spec.framework": "tensorflow", "spec.roles.ps.replicas": 1,
                                    "spec.roles.worker.replicas": 2, "spec.restartPolicy": "Never",
                                    "spec.scheduling": None, "spec.roles.worker.resources": {"cpu": "2",
                                                                                             "memory": "4Gi"}},
                                   gated="patches (spec v1.1): the source's task policies"),
    "volcano-pytorch-plugin.yaml": Case({"spec.framework": "pytorch", "spec.roles.worker.workingDir": "/home",
                                         "spec.scheduling": {"minAvailable": 1},
                                         "spec.imagePullPolicy": "IfNotPresent"},
                                        gated="imagePullPolicy, patches (spec v1.1)", framework="pytorch"),
    "volcano-mpi-plugin.yaml": Case({"spec.framework": "mpi", "spec.workingDir": "/home",
                                     "spec.roles.launcher.replicas": 1, "spec.roles.worker.replicas": 2,
                                     "spec.restartPolicy": "OnFailure"},
                                    gated="taskName, containerName, patches: the source's job policies"),
    "volcano-mpi-noplugin.yaml": Case({"spec.framework": "generic", "spec.backoffLimit": 2,
                                       "spec.success": {"role": "mpimaster"},
                                       "spec.roles.mpiworker.containerName": "mpiworker",
                                       "spec.roles.mpiworker.command": ["/usr/sbin/sshd", "-D"]},
                                      framework="generic", gated="framework generic, patches: the ssh plugin"),
    "volcano-mxnet-names.yaml": Case({"spec.framework": "generic", "spec.roles.server.replicas": 1,
                                      "spec.restartPolicy": "Never", "spec.containerName": "mxnet"},
                                     framework="generic",
                                     gated="patches (spec v1.1): the source's task policies"),
    "volcano-pytorch-v11.yaml": Case({"spec.imagePullSecrets": ["regcred"], "spec.serviceAccountName": "trainer",
                                      "spec.port": 29500, "spec.backoffLimit": 5,
                                      "spec.scheduling": {"queue": "gpu-queue", "priorityClassName": "high"},
                                      "spec.env.POD_IP": {"fieldRef": {"fieldPath": "status.podIP"}},
                                      "spec.roles.master.resources": {"memory": "64Gi", "gpu": 8,
                                                                      "requests": {"cpu": "8"},
                                                                      "limits": {"cpu": "16"}},
                                      # two workers: the volcano target writes a task per replica (PET_NODE_RANK)
                                      "spec.patches.volcano.0": {"op": "add", "path": "/spec/tasks/1/template/spec/"
                                                                 "hostIPC", "value": True},
                                      "spec.patches.volcano.1": {"op": "add", "path": "/spec/tasks/2/template/spec/"
                                                                 "hostIPC", "value": True}},
                                     expect_lost=0,
                                     gated="imagePullSecrets, serviceAccountName, podAnnotations, env fieldRef, "
                                           "resources.requests/limits, patches (spec v1.1)"),
    "tf-legacy-master.yaml": Case({"spec.roles.chief.replicas": 1, "spec.restartPolicy": "ExitCode",
                                   "spec.tensorflow": {"successPolicy": "AllWorkers"}, "spec.cleanPodPolicy": "All",
                                   "spec.scheduling": {"minAvailable": 4, "queue": "research",
                                                       "priorityClassName": "high-priority"},
                                   "spec.env.BUCKET": {"configMapKeyRef": {"name": "training-config",
                                                                           "key": "bucket"}},
                                   "spec.roles.worker.env": {"TF_CPP_MIN_LOG_LEVEL": "2"},
                                   "spec.roles.chief.initContainers.0.name": "fetch-data",
                                   "spec.roles.chief.lifecycle": {"preStop": {"exec": ["sh", "-c", "sync"]}},
                                   "spec.roles.chief.probes.liveness": {"exec": ["cat", "/tmp/healthy"],
                                                                        "periodSeconds": 30},
                                   "metadata.annotations": {"owner": "vision-team"},
                                   "spec.patches.kubeflow.0": {"op": "remove", "path": "/spec/tfReplicaSpecs/Chief/"
                                                               "template/spec/priorityClassName"}},
                                  gated="patches (spec v1.1): the job's priority class is not on the pods",
                                  expect_lost=1),
    "volcano-tf-noplugin.yaml": Case({"spec.framework": "generic", "spec.roles.ps.command.0": "sh",
                                      "spec.patches.volcano.1": {"op": "add", "path": "/spec/tasks/1/dependsOn",
                                                                 "value": {"name": ["ps"]}}},
                                     gated="patches (spec v1.1): svc plugin arguments, task dependsOn",
                                     framework="generic"),
    "mpi-wait-workers.yaml": Case({"spec.mpi": {"slotsPerWorker": 8},
                                   "spec.roles.launcher.resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                                   "spec.roles.worker.resources": {"gpu": 8, "limits": {"rdma/hca": "1"}},
                                   "spec.roles.worker.securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
                                   "spec.patches.kubeflow": [
                                       {"op": "add", "path": "/spec/runLauncherAsWorker", "value": False},
                                       {"op": "add", "path": "/spec/launcherCreationPolicy",
                                        "value": "WaitForWorkersReady"}]},
                                  gated="resources.requests/limits, securityContext, patches (spec v1.1)"),
    "indexed-job.yaml": Case({"spec.framework": "generic", "spec.roles.example-workload.replicas": 3,
                              "metadata.name": "headless-svc"}, gated="framework generic"),
    "volcano-mpi-example.yaml": Case({"spec.framework": "generic", "spec.roles.mpiworker.replicas": 2,
                                      "spec.roles.mpimaster.containerName": "mpimaster"},
                                     gated="framework generic", framework="generic"),
    "volcano-fields.yaml": Case({"metadata.labels": {"volcano.sh/job-type": "Train"},
                                 "spec.roles.master.podAnnotations": {"scheduling.k8s.io/group-name": "vc-fields"},
                                 "spec.roles.worker.imagePullPolicy": "Always"},
                                gated="patches: dependsOn, topologyPolicy, plugin arguments", framework="pytorch"),
    "jax-worker-name.yaml": Case({"spec.patches.kubeflow": [{"op": "replace", "path": "/spec/jaxReplicaSpecs/Worker/"
                                                              "template/spec/containers/0/name", "value": "jax-worker"}]},
                                 gated="framework jax, patches: the container name"),
    "tf-priority.yaml": Case({"spec.scheduling": {"minAvailable": 3, "priorityClassName": "high-priority"},
                              "spec.patches.kubeflow": [{"op": "remove", "path": f"/spec/tfReplicaSpecs/{t}/template/"
                                                         "spec/priorityClassName"} for t in ("PS", "Worker")]},
                             gated="patches: the priority class is the job's only"),
    "pytorch-elastic-etcd.yaml": Case({"spec.pytorch.elastic": {"minReplicas": 1, "maxReplicas": 3, "rdzvPort": 2379,
                                                                "maxRestarts": 100},
                                       "spec.patches.kubeflow.0": {"op": "replace", "path":
                                                                   "/spec/elasticPolicy/rdzvBackend", "value": "etcd"}},
                                      gated="pytorch.elastic, patches: etcd rendezvous"),
    "jobset-pytorch-resnet.yaml": Case({"spec.roles.workers.replicas": 4, "spec.containerName": "pytorch",
                                        "spec.env.MASTER_ADDR": "pytorch-workers-0-0.pytorch-workers"},
                                       gated="framework generic"),
    "jobset-max-restarts.yaml": Case({"spec.roles.worker1.replicas": 2, "spec.roles.worker2.replicas": 2},
                                     gated="framework generic"),
    "jobset-tensorflow-mnist.yaml": Case({"spec.roles.tensorflow.replicas": 2, "spec.restartPolicy": "OnFailure"},
                                         gated="framework generic"),
    "k8s-own-output.yaml": Case({"metadata.name": "gen", "spec.framework": "generic", "spec.roles.client.replicas": 2,
                                 "metadata.labels": {"team": "a"}}, gated="framework generic"),
    "tf-dra-legacy.yaml": Case({"spec.cleanPodPolicy": "None", "spec.imagePullPolicy": "Always",
                                "spec.patches.kubeflow.1.path": "/spec/tfReplicaSpecs/Worker/template/spec/"
                                                                "resourceClaims"},
                               gated="imagePullPolicy, patches: DRA resourceClaims"),
    "jobset-startup-driver-ready.yaml": Case({"spec.roles.driver.probes.readiness": {"exec": ["echo", "ready"],
                                                                                      "initialDelaySeconds": 30},
                                              "spec.roles.workers.replicas": 4, "spec.containerName": "sleep"},
                                             gated="framework generic, patches: startupPolicy, backoffLimit"),
    "jobset-simple.yaml": Case({"spec.framework": "generic", "spec.success": {"role": "driver"},
                                "spec.roles.workers.replicas": 4, "spec.roles.driver.containerName": "driver"},
                               gated="framework generic, patches: startupPolicy, failurePolicy"),
    "openpai-v2-cifar.yaml": Case({"metadata.name": "tensorflow-cifar10", "spec.image": "openpai/pai.example.tensorflow",
                                   "spec.command.2": "cd /root/models/research/slim\npython3 train_image_classifier.py "
                                                     "--model_name=resnet20 --batch_size=32",
                                   "spec.roles.train.resources": {"cpu": "4", "memory": "8192Mi", "gpu": 1},
                                   "spec.success": {"role": "train"}, "spec.restartPolicy": "Never"},
                                  gated="framework generic", no_round_trip="no trainspec target writes OpenPAI"),
    "trainjob-torch.yaml": Case({"spec.framework": "generic", "spec.roles.node.replicas": 2,
                                 "spec.trainjob.runtime": {"name": "torch-distributed"},
                                 "spec.command": ["torchrun", "/workspace/mnist.py"]},
                                gated="trainjob.runtime (spec v1.3)"),
    "tf-unmapped.yaml": Case({"spec.scheduling": {"minAvailable": 3}, "spec.patches.kubeflow.0":
                              {"op": "add", "path": "/spec/enableDynamicWorker", "value": True}},
                             gated="patches (spec v1.1)"),
    "tf-exported.yaml": Case({"metadata.name": "tfjob-simple", "spec.roles.worker.replicas": 2,
                              "spec.patches.kubeflow.0": {"op": "add", "path": "/metadata/finalizers",
                                                          "value": ["example.com/archive-logs"]}},
                             gated="patches (spec v1.1)"),
}


def lookup(data, dotted: str):
    for part in dotted.split("."):
        if isinstance(data, list):
            data = data[int(part)] if int(part) < len(data) else None
        elif isinstance(data, dict):
            data = data.get(part)
        else:
            return None
    return data


def imported(name: str):
    if name.startswith("trainjob"):
        from helpers import reference_dir

        reference_dir()  # the shipped runtime it references
    path = HERE / name
    return import_text(path.read_text(), str(path))


def test_every_manifest_has_a_case():
    assert sorted(p.name for p in HERE.glob("*.yaml")) == sorted(CASES)
    assert len(CASES) >= 15


@pytest.mark.parametrize("name", sorted(CASES))
def test_import_writes_the_expected_spec(name):
    result = imported(name)
    spec = yaml.safe_load(result.text)
    assert spec == result.spec
    for path, value in CASES[name].expect.items():
        assert lookup(spec, path) == value, path
    # v1.1 / v1.2 only when the spec needs it
    assert spec["apiVersion"] in (("trainspec/v1.1", "trainspec/v1.2", "trainspec/v1.3") if CASES[name].gated
                                  else ("trainspec/v1",))
    assert len(result.lost) == CASES[name].expect_lost, result.lost


@pytest.mark.parametrize("name", sorted(CASES))
def test_round_trip_is_semantically_equal(name, tmp_path, capsys):
    """import, then `trainspec compile` to the source's target: the same job, semantically.

    The capability check for spec v1.1 is `trainspec validate` of the imported spec:
    until the compiler accepts the fields a gated manifest needs, its round trip is skipped.
    """
    case = CASES[name]
    result = imported(name)
    if result.target == "trainjob":
        pytest.skip("a TrainJob compiles to its own runtime: test_trainjob_with_a_shipped_runtime compares it")
    if case.no_round_trip:
        pytest.skip(case.no_round_trip)
    spec_path, out = tmp_path / "spec.yaml", tmp_path / "compiled.yaml"
    spec_path.write_text(result.text)
    if main(["validate", str(spec_path)]) != 0:
        first = capsys.readouterr().err.splitlines()[0]
        if case.gated:
            pytest.skip(f"needs {case.gated}: {first}")
        pytest.fail(f"the imported spec of a v1 manifest is invalid: {first}")
    assert main(["compile", str(spec_path), "--target", result.target, "-o", str(out)]) == 0, capsys.readouterr().err
    if result.target in ("jobset", "k8s"):
        kinds = {"jobset": "JobSet", "k8s": "Job"}
        compiled = [d for d in yaml.safe_load_all(out.read_text()) if d and d["kind"] == kinds[result.target]]
        source = [d for d in yaml.safe_load_all((HERE / name).read_text()) if d and d["kind"] == kinds[result.target]]
        assert len(compiled) == len(source)
        assert [exact_diff(a, b) for a, b in zip(source, compiled)] == [[]] * len(source)
        return
    compiled = job_object(list(yaml.safe_load_all(out.read_text())))
    source = job_object(list(yaml.safe_load_all((HERE / name).read_text())))
    assert semantic_diff(source, compiled, case.task_roles, case.framework) == []


def test_the_comparison_sees_a_difference():
    source = job_object(list(yaml.safe_load_all((HERE / "tf-dist-mnist.yaml").read_text())))
    other = yaml.safe_load(yaml.safe_dump(source))
    other["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "A", "value": "1"}, {"name": "TF_CONFIG", "value": "x"}]
    other["spec"]["tfReplicaSpecs"]["PS"]["replicas"] = 3
    diff = semantic_diff(source, other)
    assert any("PS" in d or ".ps." in d for d in diff) and any("env" in d for d in diff)
    assert not any("TF_CONFIG" in d for d in diff)


# --- comments, patches, warnings --------------------------------------------------------------

def test_choices_are_comments():
    text = imported("volcano-mpi-plugin.yaml").text
    assert "# task mpimaster imported as role launcher (mpi plugin)" in text
    assert "task mpiworker imported as role worker (mpi plugin)" in text
    text = imported("volcano-mpi-noplugin.yaml").text
    assert "framework: generic  # no framework plugin: one role per task, nothing injected" in text
    assert "mpi-operator's default" in imported("mpi-horovod-gpu-slots.yaml").text


def test_unmapped_fields_become_patches_with_one_warning_each():
    result = imported("tf-unmapped.yaml")
    ops = result.spec["spec"]["patches"]["kubeflow"]
    paths = [op["path"] for op in ops]
    assert "/spec/tfReplicaSpecs/Worker/template/spec/containers/0/stdin" in paths
    assert "/spec/tfReplicaSpecs/Worker/template/spec/containers/-" in paths
    assert "/spec/runPolicy/schedulingPolicy/scheduleTimeoutSeconds" in paths
    assert len(result.warnings) == len(ops) == 9
    assert all(w.startswith("trainspec: warning: ") and "spec.patches.kubeflow" in w for w in result.warnings)
    assert any(":17:11: spec.tfReplicaSpecs.PS.template.spec.hostNetwork" in w for w in result.warnings)


def test_strict_carries_patches_and_refuses_only_losses(tmp_path):
    """--strict is lossless, not patch-free: fields a patch carries unchanged are accepted (with their warnings)."""
    out = tmp_path / "spec.yaml"
    run = run_cli("import", str(HERE / "tf-unmapped.yaml"), "--strict", "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert len(run.stderr.strip().splitlines()) == 9 and out.exists()


def test_strict_lists_every_lost_field_and_writes_nothing(tmp_path):
    out = tmp_path / "spec.yaml"
    source = HERE / "tf-legacy-master.yaml"
    run = run_cli("import", str(source), "--strict", "-o", str(out))
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert lines == [f"{source}:16:5: spec.tfReplicaSpecs.Master: replica type Master becomes Chief: TF_CONFIG names "
                     "the task 'chief', not 'master'; expected a field the spec or a patch carries unchanged "
                     "(--strict); hint: without --strict it is left out, with a warning"]
    assert not out.exists()
    # without --strict: the same, as a warning, and a spec that validates
    run = run_cli("import", str(source), "-o", str(out))
    assert run.returncode == 0 and sum("NOT IMPORTED (lost)" in line for line in run.stderr.splitlines()) == 1
    assert run_cli("validate", str(out)).returncode == 0


def test_volcano_task_and_container_names_are_kept(tmp_path):
    """Volcano's own mpi example: the launcher reads /etc/volcano/mpiworker.host, so the names must stay."""
    result = imported("volcano-mpi-noplugin.yaml")
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(result.text)
    run = run_cli("compile", str(spec_path), "--target", "volcano")
    job = [d for d in yaml.safe_load_all(run.stdout) if d and d["kind"] == "Job"][0]
    assert [t["name"] for t in job["spec"]["tasks"]] == ["mpimaster", "mpiworker"]
    assert [t["template"]["spec"]["containers"][0]["name"] for t in job["spec"]["tasks"]] == ["mpimaster",
                                                                                               "mpiworker"]
    assert not any("TF_CONFIG" in str(t) or "OMPI" in str(t) for t in job["spec"]["tasks"])
    result = imported("volcano-mpi-plugin.yaml")
    assert result.spec["spec"]["roles"]["launcher"]["taskName"] == "mpimaster" and result.lost == ()


def test_volcano_policies_are_replaced_whole_not_doubled():
    """A task's PodFailed policy is the source's only: trainspec's own PodFailed -> TerminateJob is not kept beside it."""
    text = (HERE / "volcano-tf-plugin.yaml").read_text()
    result = import_text(text, "m.yaml")
    from trainspec.importer.verify import compile_text, job_objects

    job = [d for d in job_objects(compile_text(result.text, "volcano")) if d["kind"] == "Job"][0]
    source = yaml.safe_load(text)
    for compiled, task in zip(job["spec"]["tasks"], source["spec"]["tasks"]):
        events = [p.get("event") for p in compiled.get("policies") or []]
        assert len(events) == len(set(events))
        assert compiled.get("policies") == task.get("policies")
    assert job["spec"].get("policies") == source["spec"].get("policies")


def test_strict_accepts_a_fully_mapped_manifest(tmp_path):
    out = tmp_path / "spec.yaml"
    run = run_cli("import", str(HERE / "pytorch-ddp-v1.yaml"), "--strict", "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert yaml.safe_load(out.read_text())["spec"]["framework"] == "pytorch"


def test_kubelet_references_are_patched_not_rewritten():
    manifest = (HERE / "tf-dist-mnist.yaml").read_text().replace(
        "--train_steps=100]", "--ps=$(PS_HOSTS)]", 1)
    result = import_text(manifest, "m.yaml")
    ops = result.spec["spec"]["patches"]["kubeflow"]
    assert ops == [{"op": "replace", "path": "/spec/tfReplicaSpecs/PS/template/spec/containers/0/command",
                    "value": ["python", "/var/tf_dist_mnist/dist_mnist.py", "--ps=$(PS_HOSTS)"]}]


def test_template_syntax_in_the_manifest_stays_literal(tmp_path):
    manifest = (HERE / "tf-dist-mnist.yaml").read_text().replace("--train_steps=100", "\"--fmt={{x}}\"")
    result = import_text(manifest, "m.yaml")
    spec_path = tmp_path / "s.yaml"
    spec_path.write_text(result.text)
    (plan,) = load_plans(str(spec_path))
    assert plan.roles[0].replicas[0].command[-1] == "--fmt={{x}}"


# --- the command line ---------------------------------------------------------------------------

def test_stdin_and_stdout():
    run = run_cli("import", "-", "-o", "-", input=(HERE / "jax-cpu.yaml").read_text())
    assert run.returncode == 0, run.stderr
    assert yaml.safe_load(run.stdout)["spec"]["framework"] == "jax"


def test_several_jobs_need_job_name(tmp_path):
    both = tmp_path / "both.yaml"
    both.write_text((HERE / "jax-cpu.yaml").read_text() + "---\n" + (HERE / "mxnet-train.yaml").read_text())
    run = run_cli("import", str(both))
    assert run.returncode == 2
    assert "2 jobs in this file" in run.stderr and "jaxjob-simple, mxnet-job" in run.stderr
    run = run_cli("import", str(both), "--job", "mxnet-job")
    assert run.returncode == 0 and yaml.safe_load(run.stdout)["spec"]["framework"] == "mxnet"
    run = run_cli("import", str(both), "--job", "nope")
    assert run.returncode == 2 and "no job named 'nope'" in run.stderr


@pytest.mark.parametrize("text, message", [
    ("kind: TFJob\n  spec: [\n", "YAML syntax error"),
    ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n", "no job to import: found apps/v1/Deployment"),
    ("", "the manifest is empty"),
    ("just some text\n", "no job to import"),
    ("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: x}\nspec: {tfReplicaSpecs: {Foo: {}}}\n",
     "replica type 'Foo' is not supported"),
    ("apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {name: x}\nspec: {}\n",
     "MPIJob kubeflow.org/v1 is the retired mpi-operator API; expected kubeflow.org/v2beta1; hint: upgrade to"),
    ("apiVersion: kubeflow.org/v1beta2\nkind: TFJob\nmetadata: {name: x}\nspec: {}\n",
     "TFJob kubeflow.org/v1beta2 is a legacy training-operator API; expected kubeflow.org/v1"),
    ("apiVersion: kubeflow.org/v1alpha1\nkind: MPIJob\nmetadata: {name: x}\nspec: {}\n", "retired mpi-operator"),
    ("apiVersion: batch.Volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: x}\nspec: {}\n",
     "did you mean apiVersion: batch.volcano.sh/v1alpha1?"),
    ("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: x}\nspec: {}\n", "RayJob (ray.io/v1): Ray is not supported"),
    ("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: x}\nspec:\n  plugins: {ray: []}\n  tasks:\n"
     "    - {name: head, template: {spec: {containers: [{name: c, image: i}]}}}\n", "Ray is not supported"),
    ("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: x}\nspec:\n  tasks:\n"
     "    - {name: a, template: {spec: {containers: [{name: c, image: i}]}}}\n"
     "    - {name: a, template: {spec: {containers: [{name: c, image: i}]}}}\n",
     "two tasks share a name"),
])
def test_bad_input_is_a_clear_error(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    out = tmp_path / "out.yaml"
    run = run_cli("import", str(path), "-o", str(out))
    assert run.returncode == 2
    assert message in run.stderr
    assert run.stderr.startswith(f"{path}:") or run.stderr.startswith("trainspec: error")
    assert "Traceback" not in run.stderr
    assert not out.exists()


def _paths(data, path=()):
    yield path
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        yield from _paths(value, path + (key,))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tf-legacy-master.yaml", "pytorch-ddp-v1.yaml", "volcano-mpi-noplugin.yaml",
                                  "jobset-simple.yaml", "openpai-v2-cifar.yaml", "trainjob-torch.yaml",
                                  "indexed-job.yaml", "volcano-fields.yaml", "k8s-own-output.yaml",
                                  "volcano-mpi-example.yaml", "indexed/gke-finetune-gemma-l4.yaml",
                                  "indexed/kueue-sample-job-nonindexed.yaml"])
def test_a_field_of_the_wrong_shape_is_an_error_not_a_crash(name):
    """Every field replaced by a value of another shape: a clean import or SpecErrors, never a traceback."""
    import copy

    docs = list(yaml.safe_load_all((HERE / name).read_text()))
    base = docs[-1]  # the job (the documents before it: a Service, a runtime, the k8s output's other objects)
    for path in [p for p in _paths(base) if p]:
        for odd in (None, 5, [{"name": 3}]):
            data = copy.deepcopy(base)
            node = data
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = odd
            try:
                import_text(yaml.safe_dump_all(docs[:-1] + [data]), "m.yaml")
            except SpecErrors:
                pass


def test_wrong_shapes_are_listed_with_positions():
    text = (HERE / "tf-dist-mnist.yaml").read_text().replace("replicas: 2", "replicas: two").replace(
        "requests: {cpu: \"1\", memory: 2Gi}", "requests: [1]")
    with pytest.raises(SpecErrors) as info:
        import_text(text, "m.yaml")
    # the CRD's structural schema, in the API server's words (compiler/apiserver), each at its line and column
    assert [e.format() for e in info.value.errors] == [
        'm.yaml:9:17: spec.tfReplicaSpecs.PS.replicas: Invalid value: "string": spec.tfReplicaSpecs.PS.replicas '
        'in body must be of type integer; expected a value the API server accepts',
        "m.yaml:18:17: spec.tfReplicaSpecs.PS.template.spec.containers[0].resources.requests: Invalid value: "
        '"array": spec.tfReplicaSpecs.PS.template.spec.containers[0].resources.requests in body must be of type '
        "object; expected a value the API server accepts"]


# --- migrate ------------------------------------------------------------------------------------

def test_migrate_to_another_target_says_what_is_lost(tmp_path):
    out = tmp_path / "jobset.yaml"
    run = run_cli("migrate", str(HERE / "tf-unmapped.yaml"), "--to", "jobset", "-o", str(out))
    assert run.returncode == 0, run.stderr
    lost = [line for line in run.stderr.splitlines() if line.startswith("trainspec: lost: ")]
    assert len(lost) == 9 and all("not carried to jobset" in line for line in lost)
    assert any(":34:15: spec.tfReplicaSpecs.Worker.template.spec.containers[1]:" in line for line in lost)
    assert any(line.startswith("trainspec: changes on jobset: restart:") for line in run.stderr.splitlines())
    kinds = [d["kind"] for d in yaml.safe_load_all(out.read_text()) if d]
    assert "JobSet" in kinds


def test_migrate_strict_refuses_any_loss_and_writes_nothing(tmp_path):
    out = tmp_path / "jobset.yaml"
    run = run_cli("migrate", str(HERE / "tf-unmapped.yaml"), "--to", "jobset", "--strict", "-o", str(out))
    assert run.returncode == 2 and not out.exists() and "Traceback" not in run.stderr
    assert "on jobset: restart:" in run.stderr and "spec.runPolicy.suspend" in run.stderr
    # the source's own target loses nothing
    run = run_cli("migrate", str(HERE / "tf-unmapped.yaml"), "--to", "kubeflow", "--strict", "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert [d["kind"] for d in yaml.safe_load_all(out.read_text()) if d][-1] == "TFJob"


def test_migrate_to_a_target_that_cannot_run_the_framework_is_a_clear_error():
    run = run_cli("migrate", str(HERE / "tf-dist-mnist.yaml"), "--to", "trainjob")
    assert run.returncode == 2 and "Trainer v2 has no runtime for tensorflow" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_import_validates(name, tmp_path):
    """Without --strict, whatever is lost, the spec written validates (import compiles it before writing)."""
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(imported(name).text)
    assert main(["validate", str(spec_path)]) == 0


# --- TrainJob -----------------------------------------------------------------------------------

def test_trainjob_names_its_runtime_with_or_without_its_file(tmp_path):
    """Spec v1.3: the spec names the runtime, as the TrainJob does; nothing of the runtime is needed or lost
    (tests/importer/test_trainjob_on_runtime.py compiles real TrainJobs back)."""
    empty = tmp_path / "noref"
    empty.mkdir()
    out = tmp_path / "spec.yaml"
    run = run_cli("import", str(HERE / "trainjob-torch.yaml"), "--strict", "-o", str(out),
                  env={"TRAINSPEC_REFERENCE": str(empty)})
    assert run.returncode == 0, run.stderr
    spec = yaml.safe_load(out.read_text())
    assert spec["spec"]["trainjob"] == {"runtime": {"name": "torch-distributed"}}
    assert spec["spec"]["env"] == {"EPOCHS": "3"}
    assert spec["spec"]["roles"]["node"] == {"replicas": 2, "resources": {"limits": {"nvidia.com/gpu": 1}}}
    run = run_cli("compile", str(out), "--target", "trainjob")
    assert run.returncode == 0, run.stderr
    (job,) = [d for d in yaml.safe_load_all(run.stdout) if d]
    assert job["spec"]["trainer"]["numNodes"] == 2 and job["spec"]["trainer"]["image"].endswith("pytorch-mnist:v1")


def test_trainjob_fields_of_older_trainer_are_carried_and_unknown_ones_refused(tmp_path):
    text = (HERE / "trainjob-torch.yaml").read_text().replace(
        "  trainer:\n", "  podTemplateOverrides:\n    - targetJobs: [{name: node}]\n      spec: {nodeSelector: {a: b}}\n"
        "  trainer:\n", 1)
    result = import_text(text, "m.yaml", strict=True)
    assert result.spec["spec"]["trainjob"]["podTemplateOverrides"][0]["spec"] == {"nodeSelector": {"a": "b"}}
    with pytest.raises(SpecErrors) as info:
        import_text(text.replace("  trainer:\n", "  somethingNew: 1\n  trainer:\n", 1), "m.yaml", strict=True)
    assert "somethingNew has no spec field" in info.value.errors[0].format()


# --- OpenPAI ------------------------------------------------------------------------------------

def test_openpai_v1_json():
    """After microsoft/pai's v1 job config (examples/tensorflow): JSON, task roles as a list."""
    result = imported("openpai-v1-tf.json")
    spec = result.spec["spec"]
    assert result.spec["metadata"]["name"] == "tensorflow-distributed" and result.lost == ()
    assert spec["framework"] == "generic" and spec["scheduling"] == {"queue": "research"} and spec["backoffLimit"] == 1
    assert spec["env"]["PAI_DATA_DIR"] == "hdfs://10.0.0.1:9000/Data/cifar10"
    assert spec["roles"]["ps-server"] == {"replicas": 2, "command": [
        "sh", "-c", "python tf_cnn_benchmarks.py --job_name=ps --data_dir=$PAI_DATA_DIR"],
        "resources": {"cpu": "2", "memory": "8192Mi"}}
    assert spec["roles"]["worker"]["resources"] == {"cpu": "2", "memory": "16384Mi", "gpu": 4}
    assert spec["success"] == {"role": "worker"}


def test_openpai_runtime_variables_and_secrets_are_losses(tmp_path):
    text = (HERE / "openpai-v2-cifar.yaml").read_text().replace(
        "--batch_size=<% $parameters.batchsize %>", "--hosts=$PAI_TASK_ROLE_train_HOST_LIST --key=<% $secrets.key %>")
    path = tmp_path / "pai.yaml"
    path.write_text(text)
    run = run_cli("import", str(path), "--strict")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "$PAI_TASK_ROLE_train_HOST_LIST, which OpenPAI's runtime sets" in run.stderr
    assert "<% $secrets.key %> is not written into a spec" in run.stderr
    run = run_cli("import", str(path))
    assert run.returncode == 0 and run.stderr.count("NOT IMPORTED (lost)") == 2


# --- batch/v1 Jobs --------------------------------------------------------------------------------

def test_the_k8s_targets_own_output_round_trips(tmp_path):
    """specs/ compiled to k8s, imported --strict, compiled again: the same file (a generic job)."""
    spec = tmp_path / "gen.yaml"
    spec.write_text("apiVersion: trainspec/v1.2\nkind: TrainingJob\nmetadata: {name: gen, labels: {team: a}}\n"
                    "spec:\n  framework: generic\n  image: busybox\n  command: [sh, -c, 'echo $TRAINSPEC_INDEX']\n"
                    "  roles:\n    server: {replicas: 1, resources: {cpu: '1'}}\n    client: {replicas: 2}\n")
    first = run_cli("compile", str(spec), "--target", "k8s")
    assert first.returncode == 0, first.stderr
    compiled = tmp_path / "k8s.yaml"
    compiled.write_text(first.stdout)
    imported_spec = tmp_path / "imported.yaml"
    run = run_cli("import", str(compiled), "--strict", "-o", str(imported_spec))
    assert run.returncode == 0 and run.stderr == "", run.stderr
    again = run_cli("compile", str(imported_spec), "--target", "k8s")
    assert again.stdout.split("\n", 1)[1] == first.stdout.split("\n", 1)[1]  # all but the header naming the source


@pytest.mark.parametrize("framework", ["pytorch", "xgboost"])
def test_ranked_workers_round_trip_without_their_rank_prelude(tmp_path, framework):
    """Issue 31: a ranked worker role's command under the k8s target's rank prelude imports as the role's own
    command (the prelude is the target's, never the user's) and compiles back to the same file, under --strict."""
    spec = tmp_path / "ranked.yaml"
    spec.write_text(f"apiVersion: trainspec/v1\nkind: TrainingJob\nmetadata: {{name: ranked}}\nspec:\n"
                    f"  framework: {framework}\n  image: busybox\n  command: [sh, -c, 'echo $RANK']\n"
                    "  args: [--epochs, '2']\n  roles:\n    master: {replicas: 1}\n    worker: {replicas: 3}\n")
    first = run_cli("compile", str(spec), "--target", "k8s")
    assert first.returncode == 0, first.stderr
    assert "export RANK=" in first.stdout
    compiled = tmp_path / "k8s.yaml"
    compiled.write_text(first.stdout)
    imported_spec = tmp_path / "imported.yaml"
    run = run_cli("import", str(compiled), "--strict", "-o", str(imported_spec))
    assert run.returncode == 0 and "warning" not in run.stderr, run.stderr
    data = yaml.safe_load(imported_spec.read_text())["spec"]
    assert data["command"] == ["sh", "-c", "echo $RANK"] and data["args"] == ["--epochs", "2"]
    assert "/bin/sh" not in imported_spec.read_text()
    again = run_cli("compile", str(imported_spec), "--target", "k8s")
    assert again.stdout.split("\n", 1)[1] == first.stdout.split("\n", 1)[1]  # all but the header naming the source


def test_a_command_like_the_prelude_but_not_it_is_the_users(tmp_path):
    """Only the prelude the k8s target writes is taken away: a user's own `/bin/sh -c ...` imports as written."""
    from trainspec.targets.k8s.scheme import strip_rank_prelude

    assert strip_rank_prelude(["/bin/sh", "-c", 'export RANK=1; exec "$0" "$@"', "python"], "pytorch") is None
    assert strip_rank_prelude(["/bin/sh", "-c", "echo hi"], "pytorch") is None
    assert strip_rank_prelude(["sh", "-c", 'export RANK=$$((TRAINSPEC_INDEX + 1)); exec "$0" "$@"', "x"],
                              "xgboost") is None
    assert strip_rank_prelude(["/bin/sh", "-c", 'export RANK=$$((TRAINSPEC_INDEX + 1)); exec "$0" "$@"', "x"],
                              "tensorflow") is None
    assert strip_rank_prelude(["/bin/sh", "-c", 'export RANK=$$((TRAINSPEC_INDEX + 1)); exec "$0" "$@"', "x", "y"],
                              "xgboost") == ["x", "y"]


def test_templated_per_replica_values_of_k8s_output_are_a_loss(tmp_path):
    compiled = tmp_path / "k8s.yaml"
    compiled.write_text(run_cli("compile", str(Path(__file__).parents[2] / "specs" / "tf-args-style.yaml"),
                                "--target", "k8s").stdout)
    run = run_cli("import", str(compiled), "--strict")
    # spec v1.3: one template per role, the per-replica part in kubelet $(TRAINSPEC_INDEX) text spec text cannot hold
    assert run.returncode == 2 and "uses $(VAR), which the kubelet expands" in run.stderr


def test_a_foreign_indexed_job_imports_strictly_with_its_names_as_patches():
    """The Job example-job's pods live under headless-svc: the spec is named as the Service (the pods' subdomain),
    and patches name the Job and select its pods as the source did (tests/importer/test_import_indexed.py: the whole set)."""
    result = imported("indexed-job.yaml")
    assert result.spec["spec"]["roles"] == {"example-workload": {"replicas": 3}}
    assert result.spec["spec"]["command"][2].startswith("for i in 0 1 2; do until ping")
    assert result.lost == ()
    ops = {op["path"]: op.get("value") for op in result.spec["spec"]["patches"]["k8s"]}
    assert ops["/2/metadata/name"] == "example-job" and ops["/1/spec/selector"] == {"job-name": "example-job"}


def test_an_indexed_job_named_service_dash_role_imports_losslessly_and_compiles_back(tmp_path):
    """Issue 31: an Indexed Job `<svc>-<role>` under the headless Service `<svc>` is what the k8s target writes:
    strict import keeps its names, pods, image, command and GPUs; a setting the spec cannot hold is still a loss."""
    source = tmp_path / "job.yaml"
    source.write_text("""\
apiVersion: v1
kind: Service
metadata: {name: train}
spec: {clusterIP: None, selector: {job-name: train-workers}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train-workers}
spec:
  completions: 4
  parallelism: 4
  completionMode: Indexed
  backoffLimitPerIndex: 0
  template:
    spec:
      subdomain: train
      restartPolicy: Never
      containers:
      - name: worker
        image: python:3.12
        command: [python, -c, "print(1)"]
        resources: {limits: {nvidia.com/gpu: 1}}
""")
    result = run_cli("import", "--strict", str(source), "-o", str(tmp_path / "spec.yaml"))
    assert result.returncode == 0, result.stderr
    compiled = run_cli("compile", str(tmp_path / "spec.yaml"), "--target", "k8s")
    (job,) = [d for d in yaml.safe_load_all(compiled.stdout) if d and d["kind"] == "Job"]
    assert job["metadata"]["name"] == "train-workers" and job["spec"]["completions"] == 4
    pod = job["spec"]["template"]["spec"]
    assert pod["subdomain"] == "train" and pod["containers"][0]["image"] == "python:3.12"
    assert pod["containers"][0]["command"] == ["python", "-c", "print(1)"]
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1
    retried = source.read_text().replace("backoffLimitPerIndex: 0", "backoffLimit: 3")
    source.write_text(retried)
    result = run_cli("import", "--strict", str(source))  # a Job setting the spec has no field for: a k8s patch
    assert result.returncode == 0 and "spec.backoffLimit" in result.stderr and "imported as a patch" in result.stderr
    ops = yaml.safe_load(result.stdout)["spec"]["patches"]["k8s"]
    assert {"op": "add", "path": "/2/spec/backoffLimit", "value": 3} in ops


@pytest.mark.parametrize("name", sorted(p.name for p in HERE.iterdir() if p.suffix in (".yaml", ".json")))
def test_what_import_and_compile_produce_fits_the_crd_schemas(name):
    """Every accepted import, compiled to its target (patches applied): each custom resource passes its CRD's
    served schema, strictly (unknown fields rejected), as the API server's schema validation would."""
    from trainspec.importer.verify import compile_text

    from helpers import reference_dir
    from schemas import errors, has_schema

    reference_dir()
    result = imported(name)
    files = compile_text(result.text, result.target)
    docs = [d for text in files.values() for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    checked = [d for d in docs if has_schema(d)]
    assert checked or result.target == "k8s"
    for doc in checked:
        assert errors(doc) == [], (doc["kind"], errors(doc)[:3])


def test_round_trip_report_over_the_manifests():
    """The measure of issue 20 on this set: >= 85% of in-scope jobs round-trip under --strict, none differ."""
    from roundtrip_report import classify

    from helpers import reference_dir

    reference_dir()
    verdicts = [classify(p)[0] for p in sorted(HERE.iterdir()) if p.suffix in (".yaml", ".json")]
    in_scope = [v for v in verdicts if v in ("same", "refused", "DIFFERENT")]
    assert verdicts.count("DIFFERENT") == 0
    assert verdicts.count("same") >= 0.85 * len(in_scope)


def test_migrate_says_a_command_reads_what_the_target_does_not_provide(tmp_path):
    """Volcano's mpi example to jobset: the launcher reads /etc/volcano/mpiworker.host, which no JobSet has."""
    run = run_cli("migrate", str(HERE / "volcano-mpi-example.yaml"), "--to", "jobset", "-o", str(tmp_path / "o.yaml"))
    assert run.returncode == 0
    assert "changes on jobset: role mpimaster reads /etc/volcano/... (the host files of Volcano's svc plugin)" \
        in run.stderr
    run = run_cli("migrate", str(HERE / "volcano-mpi-example.yaml"), "--to", "volcano", "--strict")
    assert run.returncode == 0 and run.stderr.count("trainspec: ") == run.stderr.count("imported as a patch") == 0
    assert [t["name"] for t in [d for d in yaml.safe_load_all(run.stdout) if d and d["kind"] == "Job"][0]["spec"][
        "tasks"]] == ["mpimaster", "mpiworker"]


def test_volcano_tasks_named_ps_and_worker_without_the_plugin_gain_no_tf_config():
    from trainspec.importer.verify import compile_text, job_objects

    result = imported("volcano-tf-noplugin.yaml")
    assert result.spec["spec"]["framework"] == "generic"
    job = [d for d in job_objects(compile_text(result.text, "volcano")) if d["kind"] == "Job"][0]
    names = [e["name"] for t in job["spec"]["tasks"] for c in t["template"]["spec"]["containers"] for e in c["env"]]
    assert "TF_CONFIG" not in names and "tensorflow" not in job["spec"]["plugins"]  # (its own script sets one)
