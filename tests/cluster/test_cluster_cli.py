"""`trainspec apply | ps | logs | down --cluster` end to end over real HTTP, with no cluster.

The CLI runs as a user runs it (a subprocess, KUBECONFIG in the environment) against
tests/fake_apiserver.py: a tiny server on 127.0.0.1 that keeps objects in a dict and replays
the recorded answers of a real kube-apiserver (reference/apiserver/). What it shows: the requests
the CLI makes (server-side apply, dry runs, label selectors, foreground deletion), the objects
it leaves behind, and how each failure reads. What only a real API server can show (schema, CEL
and webhook rejections of real objects, admission, finalizers) is in test_cluster_integration.py.
"""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path

import pytest
import yaml

from fake_apiserver import FORBIDDEN_403, FakeApiServer, recorded
from helpers import GOLDEN, SPECS, reference_dir, run_cli


@pytest.fixture
def fake(tmp_path):
    with FakeApiServer(reference_dir()) as server:
        yield server


def cli(fake_or_config, tmp_path: Path, *args: str, **env: str):
    config = fake_or_config if isinstance(fake_or_config, Path) else fake_or_config.kubeconfig(tmp_path)
    full = {"KUBECONFIG": str(config), "HOME": str(tmp_path), "KUBERNETES_SERVICE_HOST": "", **env}
    return run_cli(*args, env=full)


def errors(result) -> list[str]:
    assert "Traceback" not in result.stderr
    return [line for line in result.stderr.splitlines() if "warning:" not in line]


def job_objects(fake: FakeApiServer, job: str) -> list[str]:
    return sorted(f"{o['kind']}/{o['metadata']['name']}" for o in fake.objects()
                  if o["metadata"].get("labels", {}).get("trainspec.dev/job") == job)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("args", [("apply", str(SPECS / "tf-ps.yaml")), ("ps", "--cluster"),
                                  ("logs", "--cluster", "tf-ps"), ("down", "--cluster", "tf-ps")],
                         ids=lambda a: a[0])
def test_no_cluster_reachable_is_one_line_exit_2(tmp_path, args):
    config = tmp_path / "kubeconfig"
    config.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "gone",
        "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{closed_port()}"}}],
        "contexts": [{"name": "gone", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "t"}}]}))
    result = cli(config, tmp_path, *args)
    assert result.returncode == 2
    (line,) = errors(result)
    assert line.startswith("trainspec: error: cannot reach the cluster at https://127.0.0.1:")
    assert line.endswith("(context gone): connection refused")


def test_tls_to_a_server_that_does_not_speak_it_is_one_line(fake, tmp_path):
    config = tmp_path / "tls"
    config.write_text(fake.kubeconfig(tmp_path).read_text().replace("http://", "https://"))
    result = cli(config, tmp_path, "ps", "--cluster")
    assert result.returncode == 2
    assert errors(result) == [f"trainspec: error: cannot reach the cluster at https://127.0.0.1:{fake.port} "
                              "(context fake): TLS failed: wrong version number"]


def test_a_chart_folder_is_rendered_for_the_namespace_it_goes_to(fake, tmp_path):
    result = cli(fake, tmp_path, "apply", str(GOLDEN / "tf-ps" / "helm"))
    assert result.returncode == 0, result.stderr
    assert job_objects(fake, "tf-ps") and {o["metadata"]["namespace"] for o in fake.objects("trainspec.dev/job")} \
        == {"ml"}  # the context's namespace, not the render's default


def test_no_kubeconfig_and_not_in_a_pod(tmp_path):
    result = cli(tmp_path / "none", tmp_path, "ps", "--cluster")
    assert result.returncode == 2
    assert errors(result) == [f"trainspec: error: no cluster configured: no kubeconfig at {tmp_path / 'none'} and "
                              "not running in a pod (set KUBECONFIG, or --kubeconfig FILE)"]


def test_in_a_pod_without_a_service_account_token(tmp_path):
    result = cli(tmp_path / "none", tmp_path, "ps", "--cluster", KUBERNETES_SERVICE_HOST="127.0.0.1",
                 KUBERNETES_SERVICE_PORT="443")
    assert result.returncode == 2
    (line,) = errors(result)
    assert line.startswith(f"trainspec: error: no kubeconfig at {tmp_path / 'none'}, and the in-cluster service "
                           "account cannot be used: ")


def test_kubeconfig_as_a_list_of_files_is_merged_as_kubectl_does(fake, tmp_path):
    real = fake.kubeconfig(tmp_path, namespace="default")
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "clusters": [], "contexts": [],
                                     "users": []}))
    result = cli(Path(f"{other}:{real}"), tmp_path, "ps", "--cluster", "tf-ps")
    assert result.returncode == 2
    assert errors(result) == ["trainspec: error: no job 'tf-ps' in namespace default (context fake); "
                              "`trainspec ps --cluster` lists them"]  # the context's namespace, from the 2nd file


def test_the_first_file_of_kubeconfig_sets_the_context_as_with_kubectl(fake, tmp_path):
    # kubectl: the first file to set current-context wins, an empty file is skipped, and a name defined
    # twice keeps its first definition (the python client alone would take the last file's context)
    first = fake.kubeconfig(tmp_path, namespace="default")
    second = tmp_path / "second.yaml"
    second.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "elsewhere",
        "clusters": [{"name": "fake", "cluster": {"server": f"http://127.0.0.1:{closed_port()}"}},
                     {"name": "gone", "cluster": {"server": f"http://127.0.0.1:{closed_port()}"}}],
        "contexts": [{"name": "elsewhere", "context": {"cluster": "gone", "user": "u", "namespace": "x"}},
                     {"name": "fake", "context": {"cluster": "gone", "user": "u", "namespace": "x"}}],
        "users": [{"name": "u", "user": {"token": "t"}}]}))
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    result = cli(Path(f"{empty}:{first}:{second}"), tmp_path, "ps", "--cluster", "tf-ps")
    assert errors(result) == ["trainspec: error: no job 'tf-ps' in namespace default (context fake); "
                              "`trainspec ps --cluster` lists them"]
    result = cli(Path(f"{empty}:{first}:{second}"), tmp_path, "ps", "--cluster", "--context", "elsewhere")
    assert result.returncode == 2 and "(context elsewhere): connection refused" in result.stderr


def test_relative_certificate_paths_resolve_against_their_kubeconfig(tmp_path):
    from trainspec.cluster.kubeconfig import merge

    folder = tmp_path / "conf"
    folder.mkdir()
    (folder / "config").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1", "certificate-authority": "ca.crt"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"client-key": "k/key.pem", "exec": {"command": "./bin/login",
                                                                            "apiVersion": "x"}}}]}))
    merged = merge([str(folder / "config")], explicit=False).config
    assert merged["clusters"][0]["cluster"]["certificate-authority"] == str(folder / "ca.crt")
    assert merged["users"][0]["user"]["client-key"] == str(folder / "k" / "key.pem")
    assert merged["users"][0]["user"]["exec"]["command"] == str(folder / "bin" / "login")


def test_an_unknown_context_lists_the_known_ones(fake, tmp_path):
    result = cli(fake, tmp_path, "ps", "--cluster", "--context", "prod")
    assert result.returncode == 2 and "--context prod: no such context" in result.stderr and "(contexts: fake)" \
        in result.stderr


@pytest.mark.parametrize("target", ["k8s", "kubeflow", "volcano", "jobset", "trainjob"])
def test_dry_run_server_sends_every_compiled_example_and_stores_nothing(fake, tmp_path, target):
    fake.put({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "research"}})
    fake.namespaces.add("research")  # bert-finetune's
    runtime = yaml.safe_load((Path(__file__).parents[1] / "data" / "runtimes" / "torch-distributed.yaml").read_text())
    fake.put(runtime)  # the ClusterTrainingRuntime torch-on-runtime's TrainJob names (apply checks it is there)
    files = sorted(str(p) for p in GOLDEN.glob(f"*/{target}.yaml"))
    result = cli(fake, tmp_path, "apply", *files, "--dry-run=server", "--create-namespace")
    assert result.returncode == 0, result.stderr
    assert list(fake.store) == ["/apis/scheduling.volcano.sh/v1beta1/queues/research",
                                "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch-distributed"]
    patches = [r for r in fake.requests if r[0] == "PATCH"]
    assert patches and all(q.get("dryRun") == "All" and q.get("fieldManager") == "trainspec" and "force" not in q
                           for _, _, q, _ in patches)
    sent = sum(1 for f in files for d in yaml.safe_load_all(Path(f).read_text()) if d)
    accepted = [line for line in result.stdout.splitlines() if line.endswith("accepted (dry run: server)")]
    ssh = [line for line in accepted if line.startswith("Secret ") and "-ssh:" in line]  # MPI keys made for the job
    assert len(accepted) - len(ssh) == sent


def test_apply_then_prune_after_a_replica_change_then_down(fake, tmp_path):
    fake.put({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "notes", "namespace": "ml",
                                                                    "labels": {"trainspec.dev/job": "tf-ps"}}})
    fake.put({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "other", "namespace": "ml", "labels": {
        "trainspec.dev/job": "other", "app.kubernetes.io/managed-by": "trainspec"}}})
    result = cli(fake, tmp_path, "apply", str(SPECS / "tf-ps.yaml"))
    assert result.returncode == 0, result.stderr
    assert "Job.batch ml/tf-ps-worker: created" in result.stdout  # one Indexed Job per role (issue 31)
    before = job_objects(fake, "tf-ps")
    assert "Service/tf-ps" in before and "Job/tf-ps-evaluator" in before and "ConfigMap/notes" in before
    for obj in fake.objects("trainspec.dev/job"):
        assert obj["metadata"]["labels"]["trainspec.dev/job"] in ("tf-ps", "other")

    # the same job again: nothing is written, and apply says so
    writes = len([r for r in fake.requests if r[0] == "PATCH" and "dryRun" not in r[2]])
    stored = json.dumps(fake.store, sort_keys=True)
    result = cli(fake, tmp_path, "apply", str(SPECS / "tf-ps.yaml"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "job tf-ps: unchanged: the cluster already runs this job as written"
    assert "configured" not in result.stdout and json.dumps(fake.store, sort_keys=True) == stored
    assert len([r for r in fake.requests if r[0] == "PATCH" and "dryRun" not in r[2]]) - writes == len(before) - 1

    # 3 workers -> 2: every Job's pod template changes (TF_CONFIG names the workers), which a server refuses to
    # update in place: a few lines naming the objects, the field and --force; nothing is changed
    spec = tmp_path / "tf-ps.yaml"
    # issue 31: replicas are an Indexed Job's completions, so a role that goes is what leaves an object behind
    spec.write_text((SPECS / "tf-ps.yaml").read_text().replace("evaluator:\n      replicas: 1", "evaluator:\n      replicas: 0"))
    result = cli(fake, tmp_path, "apply", str(spec), "--prune")
    assert result.returncode == 2
    lines = errors(result)
    assert 2 <= len(lines) <= 4 and all(len(line) < 300 for line in lines), lines
    assert lines[0].startswith(f"{spec}:") and "Job.batch ml/tf-ps-" in lines[0]
    assert "spec.template cannot change on an existing object (field is immutable)" in lines[0]
    assert "TF_CONFIG" not in result.stderr  # the server's echo of the whole template is cut
    assert "`trainspec apply --force` deletes and re-creates them" in lines[-1] and "nothing was changed" in lines[-1]
    assert json.dumps(fake.store, sort_keys=True) == stored and "pruned" not in result.stdout

    result = cli(fake, tmp_path, "apply", str(spec), "--prune", "--force")
    assert result.returncode == 0, result.stderr
    assert "Job.batch ml/tf-ps-worker: deleted to be re-created (spec.template cannot change)" in result.stdout
    assert "Job.batch ml/tf-ps-worker: re-created" in result.stdout
    assert "Job.batch ml/tf-ps-evaluator: pruned" in result.stdout
    assert sorted(set(before) - set(job_objects(fake, "tf-ps"))) == ["Job/tf-ps-evaluator"]
    assert "TF_CONFIG" in json.dumps(fake.store["/apis/batch/v1/namespaces/ml/jobs/tf-ps-worker"])
    deletes = [r for r in fake.requests if r[0] == "DELETE"]
    # no pods: background (a bare API server has no garbage collector to finish a foreground deletion); kubectl's
    # prune cascade is background too
    assert all(body["propagationPolicy"] == "Background" for *_, body in deletes)
    assert "tf-ps-evaluator" in deletes[-1][1]
    patches = [(r, t) for r, t in zip(fake.requests, fake.content_types) if r[0] == "PATCH"]
    assert patches and all(t == "application/apply-patch+yaml" and r[2]["fieldManager"] == "trainspec"
                           and r[2]["fieldValidation"] == "Strict" for r, t in patches)

    result = cli(fake, tmp_path, "down", "--cluster", "tf-ps", "--wait")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "tf-ps: gone"
    assert job_objects(fake, "tf-ps") == ["ConfigMap/notes"]  # not put there by trainspec: left alone
    assert job_objects(fake, "other") == ["Service/other"]
    assert "nothing to remove" in cli(fake, tmp_path, "down", "--cluster", "tf-ps").stdout


def test_force_in_a_dry_run_deletes_nothing(fake, tmp_path):
    assert cli(fake, tmp_path, "apply", str(SPECS / "tf-ps.yaml")).returncode == 0
    stored = json.dumps(fake.store, sort_keys=True)
    spec = tmp_path / "tf-ps.yaml"
    # issue 31: replicas are an Indexed Job's completions, so a role that goes is what leaves an object to prune
    spec.write_text((SPECS / "tf-ps.yaml").read_text().replace("evaluator:\n      replicas: 1", "evaluator:\n      replicas: 0"))
    result = cli(fake, tmp_path, "apply", str(spec), "--dry-run=server")
    assert result.returncode == 2 and "apply --force" in errors(result)[-1]
    assert "nothing was changed" not in result.stderr  # a dry run never changes anything
    result = cli(fake, tmp_path, "apply", str(spec), "--dry-run=server", "--force", "--prune")
    assert result.returncode == 0, result.stderr
    assert "Job.batch ml/tf-ps-worker: deleted to be re-created (spec.template cannot change) (dry run: server)" \
        in result.stdout
    assert "Job.batch ml/tf-ps-evaluator: pruned (dry run: server)" in result.stdout
    assert json.dumps(fake.store, sort_keys=True) == stored
    assert all(r[2].get("dryRun") == "All" or (r[3] or {}).get("dryRun") for r in fake.requests[-40:]
               if r[0] in ("PATCH", "DELETE"))


def test_down_is_foreground_while_pods_run_and_waits_for_the_garbage_collector(fake, tmp_path):
    assert cli(fake, tmp_path, "apply", str(GOLDEN / "tf-ps" / "kubeflow.yaml")).returncode == 0
    fake.put({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "tf-ps-worker-0", "namespace": "ml", "labels": {"trainspec.dev/job": "tf-ps"},
        "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": "tf-ps", "uid": "u"}]}})
    result = cli(fake, tmp_path, "down", "--cluster", "tf-ps", "--wait", "--timeout", "1")
    assert "TFJob.kubeflow.org ml/tf-ps: deleted (foreground)" in result.stdout
    # no garbage collector here (a bare kube-apiserver): the job stays, marked, behind its finalizer
    tfjob = fake.store["/apis/kubeflow.org/v1/namespaces/ml/tfjobs/tf-ps"]
    assert tfjob["metadata"]["finalizers"] == ["foregroundDeletion"] and tfjob["metadata"]["deletionTimestamp"]
    assert result.returncode == 1 and "still there after 1 s" in result.stderr and "Traceback" not in result.stderr


def test_down_of_a_job_with_no_pods_leaves_nothing_even_without_a_garbage_collector(fake, tmp_path):
    assert cli(fake, tmp_path, "apply", str(GOLDEN / "tf-ps" / "kubeflow.yaml")).returncode == 0
    result = cli(fake, tmp_path, "down", "--cluster", "tf-ps", "--wait", "--timeout", "5")
    assert result.returncode == 0, result.stderr
    assert "deleted (background)" in result.stdout and job_objects(fake, "tf-ps") == []


def test_a_rejected_field_is_reported_at_the_spec_line(fake, tmp_path):
    fake.fail("PATCH", "/tfjobs/", *recorded(reference_dir(), "create-tfjob-invalid-422"))
    result = cli(fake, tmp_path, "apply", str(SPECS / "tf-ps.yaml"), "--target", "kubeflow", "--dry-run=server")
    assert result.returncode == 2
    (line,) = errors(result)
    assert line.startswith(f"{SPECS / 'tf-ps.yaml'}:52:17: spec.roles.worker.replicas: the server rejected "
                           "TFJob.kubeflow.org ml/tf-ps: spec.tfReplicaSpecs.Worker.replicas: Invalid value")


# Server-side apply's schema check answers in the message only (code 500 before Kubernetes 1.28, then 400),
# as k8s.io/apimachinery's managedfields/internal/structuredmerge.go words it.
TYPED_PATCH_500 = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "code": 500,
                   "message": "failed to create typed patch object (ml/tf-ps; kubeflow.org/v1, Kind=TFJob): "
                              ".spec.tfReplicaSpecs.Worker.replicas: expected numeric (int or float), got string"}


@pytest.mark.parametrize("answer", ["create-tfjob-invalid-422", TYPED_PATCH_500], ids=["422-causes", "ssa-typed"])
def test_a_rejected_field_a_patch_wrote_is_reported_at_the_patch(fake, tmp_path, answer):
    spec = tmp_path / "bad.yaml"
    text = (SPECS / "tf-ps.yaml").read_text()
    # a value the offline check accepts (a patch it refuses never reaches the server: test_cluster_integration's
    # mutated spec), so the server's answer about the patched field is what is mapped back to the patch op
    spec.write_text(text + "  patches:\n    kubeflow:\n"
                    "      - {op: replace, path: /spec/tfReplicaSpecs/Worker/replicas, value: 2}\n")
    status, body = recorded(reference_dir(), answer) if isinstance(answer, str) else (500, answer)
    fake.fail("PATCH", "/tfjobs/", status, body)  # what a server says to that object
    result = cli(fake, tmp_path, "apply", str(spec), "--target", "kubeflow", "--dry-run=server")
    assert result.returncode == 2
    (line,) = errors(result)
    assert line.startswith(f"{spec}:{len(text.splitlines()) + 3}:9: spec.patches.kubeflow: the server rejected ")


def test_a_rejection_of_a_compiled_file_points_at_its_line(fake, tmp_path):
    fake.fail("PATCH", "/tfjobs/", *recorded(reference_dir(), "create-tfjob-invalid-422"))
    result = cli(fake, tmp_path, "apply", str(GOLDEN / "tf-ps" / "kubeflow.yaml"))
    assert result.returncode == 2
    (line,) = errors(result)
    replicas = (GOLDEN / "tf-ps" / "kubeflow.yaml").read_text().splitlines().index("      replicas: 3") + 1
    assert line.startswith(f"{GOLDEN / 'tf-ps' / 'kubeflow.yaml'}:{replicas}:17: spec.tfReplicaSpecs.Worker.replicas: "
                           "the server rejected TFJob.kubeflow.org ml/tf-ps: spec.tfReplicaSpecs.Worker.replicas")


@pytest.mark.parametrize("status, body, expected", [
    (409, "ssa-conflict-409", "conflict: spec.tfReplicaSpecs.Worker.replicas is owned by field manager 'trainspec'"),
    (403, FORBIDDEN_403, "permission denied: tfjobs.kubeflow.org \"tf-ps\" is forbidden"),
    (413, "too-large-413", "too large for the API server"),
], ids=["conflict", "forbidden", "too-large"])
def test_server_refusals_are_one_line_exit_2(fake, tmp_path, status, body, expected):
    if isinstance(body, str):
        status, body = recorded(reference_dir(), body)
    fake.fail("PATCH", "/tfjobs/", status, body)
    result = cli(fake, tmp_path, "apply", str(SPECS / "tf-ps.yaml"), "-t", "kubeflow")
    assert result.returncode == 2
    (line,) = errors(result)
    # a conflict names the field: at the spec line that wrote it; the others at the spec file
    prefix = f"{SPECS / 'tf-ps.yaml'}:52:17: spec.roles.worker.replicas" if status == 409 \
        else f"trainspec: error: {SPECS / 'tf-ps.yaml'}"
    assert line.startswith(f"{prefix}: TFJob.kubeflow.org ml/tf-ps: ")
    assert expected in line


def test_forbidden_listing_for_ps_is_one_line(fake, tmp_path):
    assert cli(fake, tmp_path, "apply", str(SPECS / "tf-ps.yaml"), "-t", "kubeflow").returncode == 0
    fake.fail("GET", "/jobs$", 403, FORBIDDEN_403)  # may not list Jobs (batch, Volcano): the TFJob is still found
    result = cli(fake, tmp_path, "ps", "--cluster", "tf-ps")
    assert result.returncode == 0 and result.stdout.startswith("job tf-ps  TFJob tf-ps")
    fake.fail("GET", "/[a-z]+jobs$", 403, FORBIDDEN_403)  # every job kind hidden
    result = cli(fake, tmp_path, "ps", "--cluster", "tf-ps")
    assert result.returncode == 2
    (line,) = errors(result)
    assert line.startswith("trainspec: error: listing Job, TFJob, PyTorchJob, ") and \
        " in ml: permission denied: " in line


def test_a_missing_crd_names_what_to_install_or_which_target_to_use(tmp_path):
    with FakeApiServer(reference_dir(), crd_groups=()) as fake:
        result = cli(fake, tmp_path, "apply", str(SPECS / "pytorch-ddp.yaml"), "-t", "kubeflow", "--dry-run=server")
        assert result.returncode == 2
        assert errors(result) == [f"trainspec: error: {SPECS / 'pytorch-ddp.yaml'}: job pytorch-ddp: kubeflow.org/v1 "
                                  "PyTorchJob is not served here: install the Kubeflow training operator, or compile "
                                  "--target jobset"]
        result = cli(fake, tmp_path, "apply", str(GOLDEN / "pytorch-ddp" / "jobset.yaml"))
        assert "jobset.x-k8s.io/v1alpha2 JobSet is not served here: install JobSet (jobset.x-k8s.io), or compile the " \
               "spec with --target k8s" in result.stderr
        assert fake.store == {} and not [r for r in fake.requests if r[0] == "PATCH"]


def test_a_missing_namespace_is_an_error_unless_asked_to_create_it(tmp_path):
    with FakeApiServer(reference_dir(), namespaces=("default",)) as fake:
        result = cli(fake, tmp_path, "apply", str(SPECS / "tf-ps.yaml"))
        assert result.returncode == 2
        assert errors(result) == [f"trainspec: error: {SPECS / 'tf-ps.yaml'}: job tf-ps: namespace ml does not exist: "
                                  "create it, or pass --create-namespace"]
        assert fake.store == {}
        result = cli(fake, tmp_path, "apply", str(SPECS / "tf-ps.yaml"), "--create-namespace")
        assert result.returncode == 0, result.stderr
        assert "ml" in fake.namespaces and len(job_objects(fake, "tf-ps")) == 5


def test_a_missing_kueue_local_queue_or_volcano_queue(fake, tmp_path):
    docs = [d for d in yaml.safe_load_all((GOLDEN / "tf-ps" / "k8s.yaml").read_text()) if d]
    for d in docs:
        if d["kind"] == "Job":
            d["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "team-a"
    (tmp_path / "k8s.yaml").write_text(yaml.safe_dump_all(docs))
    result = cli(fake, tmp_path, "apply", str(tmp_path / "k8s.yaml"), "--dry-run=server")
    assert result.returncode == 0  # without Kueue the label does nothing: the job runs, and the user is told
    assert "warning: Kueue LocalQueue ml/team-a is named by the job, but Kueue (kueue.x-k8s.io/v1beta1) is not " \
        "served here: the job runs without queueing" in result.stderr
    docs = [d for d in yaml.safe_load_all((GOLDEN / "tf-ps" / "volcano.yaml").read_text()) if d]
    docs[-1]["spec"]["queue"] = "research"
    (tmp_path / "volcano.yaml").write_text(yaml.safe_dump_all(docs))
    result = cli(fake, tmp_path, "apply", str(tmp_path / "volcano.yaml"), "--dry-run=server")
    assert result.returncode == 2
    assert "Volcano Queue research does not exist: the job would wait for it forever" in result.stderr
    fake.put({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "research"}})
    assert cli(fake, tmp_path, "apply", str(tmp_path / "volcano.yaml"), "--dry-run=server").returncode == 0


def test_a_kueue_local_queue_is_looked_up_in_the_version_the_server_prefers(fake, tmp_path):
    fake.kinds.append(("kueue.x-k8s.io/v1beta2", "LocalQueue", "localqueues", True))  # Kueue 0.15+
    docs = [d for d in yaml.safe_load_all((GOLDEN / "tf-ps" / "k8s.yaml").read_text()) if d]
    for d in docs:
        if d["kind"] == "Job":
            d["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "team-a"
    (tmp_path / "k8s.yaml").write_text(yaml.safe_dump_all(docs))
    result = cli(fake, tmp_path, "apply", str(tmp_path / "k8s.yaml"), "--dry-run=server")
    assert result.returncode == 2 and "Kueue LocalQueue ml/team-a does not exist" in result.stderr
    fake.put({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
              "metadata": {"name": "team-a", "namespace": "ml"}})
    result = cli(fake, tmp_path, "apply", str(tmp_path / "k8s.yaml"), "--dry-run=server")
    assert result.returncode == 0 and "warning" not in result.stderr


def test_secrets_from_memory_and_an_mpi_ssh_key_made_once(fake, tmp_path):
    result = cli(fake, tmp_path, "apply", str(SPECS / "mpi-horovod.yaml"), "--secret", "extra:token=@env:TOKEN",
                 TOKEN="s3cr3t-value")
    assert result.returncode == 0, result.stderr
    assert "s3cr3t-value" not in result.stdout + result.stderr
    secrets = {o["metadata"]["name"]: o for o in fake.objects() if o["kind"] == "Secret"}
    assert base64.b64decode(secrets["extra"]["data"]["token"]) == b"s3cr3t-value"
    key = secrets["mpi-horovod-ssh"]["data"]
    assert set(key) >= {"ssh-privatekey", "ssh-publickey"}
    assert cli(fake, tmp_path, "apply", str(SPECS / "mpi-horovod.yaml")).returncode == 0
    assert {o["metadata"]["name"]: o for o in fake.objects() if o["kind"] == "Secret"}["mpi-horovod-ssh"]["data"] == key
    assert not list(tmp_path.rglob("*token*")) and not list(tmp_path.rglob("*ssh*"))


def labelled_pod(name: str, role: str, index: int, phase: str = "Running") -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ml", "creationTimestamp": "2026-11-26T02:57:50Z",
                         "labels": {"trainspec.dev/job": "tf-ps", "trainspec.dev/role": role,
                                    "trainspec.dev/index": str(index)}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "tensorflow", "image": "x"}]},
            "status": {"phase": phase, "startTime": "2026-11-26T02:58:00Z", "containerStatuses": [
                {"name": "tensorflow", "restartCount": 1, "ready": True, "image": "x", "imageID": "",
                 "state": {"running": {}}}]}}


def test_ps_and_logs_of_a_job_on_the_cluster(fake, tmp_path):
    assert cli(fake, tmp_path, "apply", str(SPECS / "tf-ps.yaml")).returncode == 0
    fake.put(labelled_pod("tf-ps-worker-0-abcde", "worker", 0))
    fake.put(labelled_pod("tf-ps-ps-1-fghij", "ps", 1))
    fake.logs["tf-ps-worker-0-abcde"] = "".join(f"step {i}\n" for i in range(5))
    fake.logs["tf-ps-ps-1-fghij"] = "serving\n"

    result = cli(fake, tmp_path, "ps", "--cluster")
    assert result.returncode == 0 and "tf-ps" in result.stdout and "Job" in result.stdout
    result = cli(fake, tmp_path, "ps", "--cluster", "tf-ps", "--format", "json")
    state = json.loads(result.stdout)
    by_name = {r["name"]: r for r in state["replicas"]}
    assert len(by_name) == 6
    assert (by_name["worker-0"]["phase"], by_name["worker-0"]["restarts"], by_name["worker-0"]["node"]) == \
        ("Running", 1, "node-1")
    assert by_name["worker-1"]["reason"] == "no pod"
    table = cli(fake, tmp_path, "ps", "--cluster", "tf-ps").stdout
    assert table.splitlines()[1].split() == ["REPLICA", "ROLE", "INDEX", "STATUS", "READY", "RESTARTS", "EXIT", "NODE",
                                             "AGE", "DETAIL"]

    result = cli(fake, tmp_path, "logs", "--cluster", "tf-ps", "--tail", "2", "--color", "never")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["ps-1     | serving", "worker-0 | step 3", "worker-0 | step 4"]
    result = cli(fake, tmp_path, "logs", "--cluster", "tf-ps", "worker-0", "--tail", "1")
    assert result.stdout == "step 4\n"  # one replica named: its lines as they are
    log_query = [q for m, p, q, _ in fake.requests if p.endswith("/log")][-1]
    assert log_query["container"] == "tensorflow" and log_query["tailLines"] == "1"
    result = cli(fake, tmp_path, "logs", "--cluster", "tf-ps", "chief")
    assert result.returncode == 2 and "no replica 'chief'" in result.stderr


def test_ps_of_a_job_that_is_not_there(fake, tmp_path):
    result = cli(fake, tmp_path, "ps", "--cluster", "nope", "-n", "default")
    assert result.returncode == 2
    assert errors(result) == ["trainspec: error: no job 'nope' in namespace default (context fake); "
                              "`trainspec ps --cluster` lists them"]


def test_client_dry_run_needs_no_cluster(tmp_path):
    result = cli(tmp_path / "none", tmp_path, "apply", str(SPECS / "tf-ps.yaml"), "--dry-run=client")
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == "ConfigMap ml/tf-ps-topology: would be applied (dry run: client)"
    assert result.stdout.splitlines()[-1] == "Job.batch ml/tf-ps-evaluator: would be applied (dry run: client)"


@pytest.mark.parametrize("args, message", [
    (("apply", "-"), "not standard input"),
    (("apply", "specs/tf-ps.yaml", "--target", "compose"), "--target compose: apply puts Kubernetes objects"),
    (("apply", "golden/tf-ps/k8s.yaml", "--target", "k8s"), "is compiled output, not a spec"),
    (("apply", "no-such.yaml"), "no-such.yaml: no such file or folder"),
    (("apply", "BINARY"), "is not UTF-8"),
])
def test_bad_apply_input_is_one_line_exit_2(tmp_path, args, message):
    from helpers import ROOT

    if "BINARY" in args:
        (tmp_path / "blob.yaml").write_bytes(bytes(range(256)))
        args = tuple(str(tmp_path / "blob.yaml") if a == "BINARY" else a for a in args)
    result = run_cli(*args, cwd=ROOT, env={"KUBECONFIG": str(tmp_path / "none")})
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_bash_completion_knows_apply_and_its_targets(tmp_path):
    import shutil
    import subprocess

    if not shutil.which("bash"):
        pytest.skip("no bash")
    script = tmp_path / "trainspec.bash"
    script.write_text(run_cli("completion", "bash").stdout)
    probe = (f"source {script}; COMP_WORDS=(trainspec ap); COMP_CWORD=1; _shtab_trainspec; echo \"${{COMPREPLY[@]}}\";"
             " COMP_WORDS=(trainspec apply --target ''); COMP_CWORD=3; _shtab_trainspec; echo \"${COMPREPLY[@]}\"")
    out = subprocess.run(["bash", "-c", probe], check=False, capture_output=True, text=True).stdout.splitlines()
    assert out == ["apply", "k8s kubeflow volcano jobset trainjob"]


def test_ps_watch_prints_the_table_again_until_interrupted(fake, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    assert cli(fake, tmp_path, "apply", str(SPECS / "tf-ps.yaml"), "-t", "kubeflow").returncode == 0
    env = dict(os.environ, KUBECONFIG=str(fake.kubeconfig(tmp_path)), HOME=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "trainspec", "ps", "--cluster", "tf-ps", "--watch"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and sum(1 for r in fake.requests if r[1].endswith("/pods")) < 2:
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert out.count("job tf-ps  TFJob tf-ps") >= 2 and "Traceback" not in err


def test_cluster_scoped_kinds_are_applied_without_a_namespace(fake, tmp_path):
    # discovery says which kinds are cluster-scoped: a PriorityClass or ClusterTrainingRuntime in a compiled
    # file goes to its cluster-wide path with no metadata.namespace, and `down` finds it again
    docs = [d for d in yaml.safe_load_all((GOLDEN / "tf-ps" / "k8s.yaml").read_text()) if d]
    docs += [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "train-high"},
              "value": 1000},
             {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
              "metadata": {"name": "torch-shared", "labels": {"trainspec.dev/job": "tf-ps"}}, "spec": {}}]
    compiled = tmp_path / "with-cluster-scoped.yaml"
    compiled.write_text(yaml.safe_dump_all(docs))
    result = cli(fake, tmp_path, "apply", str(compiled))  # not what a training job is made of: named, refused
    assert result.returncode == 2 and not [r for r in fake.requests if r[0] == "PATCH"]
    assert [line.split(": refused")[0].split(": ", 1)[1] for line in errors(result)] == [
        "ClusterTrainingRuntime.trainer.kubeflow.org torch-shared", "PriorityClass.scheduling.k8s.io train-high"]
    result = cli(fake, tmp_path, "apply", str(compiled), "--allow-kind", "PriorityClass",
                 "--allow-kind", "clustertrainingruntime.trainer.kubeflow.org")
    assert result.returncode == 0, result.stderr
    patches = {path: body for method, path, _, body in fake.requests if method == "PATCH"}
    for path in ("/apis/scheduling.k8s.io/v1/priorityclasses/train-high",
                 "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch-shared"):
        assert "namespace" not in patches[path]["metadata"]
    result = cli(fake, tmp_path, "down", "--cluster", "tf-ps")
    assert result.returncode == 0, result.stderr
    assert "ClusterTrainingRuntime.trainer.kubeflow.org torch-shared: deleted" in result.stdout
    assert result.stdout.count("torch-shared") == 1


def test_the_servers_warnings_are_shown_once(fake, tmp_path):
    fake.warnings = ['kubeflow.org/v1 TFJob is deprecated; use "trainer.kubeflow.org/v1alpha1" TrainJob']
    result = cli(fake, tmp_path, "apply", str(GOLDEN / "tf-ps" / "kubeflow.yaml"))
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines().count('trainspec: warning: kubeflow.org/v1 TFJob is deprecated; use '
                                           '"trainer.kubeflow.org/v1alpha1" TrainJob') == 1


@pytest.mark.parametrize("target", ["k8s", "kubeflow", "volcano", "jobset", "trainjob"])
def test_ps_shows_the_replicas_of_a_job_with_no_pods_yet_for_every_target(fake, tmp_path, target):
    # the replicas come from the job object (a TrainJob's from the runtime it names) before any pod exists
    assert cli(fake, tmp_path, "apply", str(GOLDEN / "pytorch-ddp" / f"{target}.yaml")).returncode == 0
    result = cli(fake, tmp_path, "ps", "--cluster", "pytorch-ddp", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert [r["name"] for r in json.loads(result.stdout)["replicas"]] == ["master-0", "worker-0"]


def test_a_trainjob_on_a_runtime_the_cluster_lacks_names_it(fake, tmp_path):
    """The runtime is read before the dry run (the real-server test is tests/cluster/test_trainer_runtime_cluster.py)."""
    fake.namespaces.add("ml")
    tj = str(GOLDEN / "torch-on-runtime" / "trainjob.yaml")
    result = cli(fake, tmp_path, "apply", tj, "--dry-run=server")
    assert result.returncode == 2
    assert "TrainJob torch-on-runtime runs on ClusterTrainingRuntime 'torch-distributed', which the cluster does " \
        "not have: install the runtime" in result.stderr, result.stderr
    assert not [r for r in fake.requests if r[0] == "PATCH"]  # nothing sent
    fake.put(yaml.safe_load((Path(__file__).parents[1] / "data" / "runtimes" / "torch-distributed.yaml").read_text()))
    result = cli(fake, tmp_path, "apply", tj, "--dry-run=server")
    assert result.returncode == 0, result.stderr
    assert "TrainJob.trainer.kubeflow.org ml/torch-on-runtime: accepted (dry run: server)" in result.stdout


HOSTILE = [
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
     "metadata": {"name": "ci-admin", "labels": {"trainspec.dev/job": "tf-ps"}},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
     "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "ml"}]},
    {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
     "metadata": {"name": "inject"}, "webhooks": []},
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "planted", "namespace": "kube-system"},
     "stringData": {"k": "v"}},
]


@pytest.mark.parametrize("dry_run", ["none", "server", "client"])
def test_apply_refuses_objects_a_training_job_is_not_made_of(fake, tmp_path, dry_run):
    text = (GOLDEN / "tf-ps" / "k8s.yaml").read_text()
    compiled = tmp_path / "k8s.yaml"
    compiled.write_text(text + "---\n" + yaml.safe_dump_all(HOSTILE))
    result = cli(fake, tmp_path, "apply", str(compiled), f"--dry-run={dry_run}")
    assert result.returncode == 2 and result.stdout == ""
    lines = errors(result)
    first = len(text.splitlines()) + 2  # each refusal points at its document's `kind:`
    refusals = {line.split(": refused")[0].rsplit(": ", 1)[1]: line for line in lines}
    # the cluster-scoped ones are never shown under a namespace
    assert sorted(refusals) == ["ClusterRoleBinding.rbac.authorization.k8s.io ci-admin",
                                "MutatingWebhookConfiguration.admissionregistration.k8s.io inject",
                                "Secret kube-system/planted"]
    binding = refusals["ClusterRoleBinding.rbac.authorization.k8s.io ci-admin"]
    assert binding.startswith(f"{compiled}:") and int(binding.split(":")[1]) >= first
    assert "--allow-kind ClusterRoleBinding" in binding
    assert "outside the job's namespace ml" in refusals["Secret kube-system/planted"]
    assert not [r for r in fake.requests if r[0] in ("PATCH", "DELETE")]


def test_an_object_a_patch_adds_is_refused_at_the_patch(fake, tmp_path):
    spec = tmp_path / "tf-ps.yaml"
    text = (SPECS / "tf-ps.yaml").read_text()
    spec.write_text(text + "  patches:\n    k8s:\n      - op: add\n        path: /-\n        value: "
                    + json.dumps(HOSTILE[0]) + "\n")
    result = cli(fake, tmp_path, "apply", str(spec), "--dry-run=client")
    assert result.returncode == 2
    (line,) = errors(result)
    assert line.startswith(f"{spec}:{len(text.splitlines()) + 3}:9: spec.patches.k8s: ClusterRoleBinding")
    result = cli(fake, tmp_path, "apply", str(spec), "--dry-run=client", "--allow-kind", "ClusterRoleBinding")
    assert result.returncode == 0, result.stderr
    assert "ClusterRoleBinding.rbac.authorization.k8s.io ci-admin: would be applied (dry run: client)" \
        in result.stdout.splitlines()


@pytest.mark.parametrize("retry_after", [None, 1], ids=["503", "429-retry-after"])
def test_storage_reinitializing_is_retried(fake, tmp_path, retry_after):
    # right after a CRD is created again its watch cache is not ready: the server answers "storage is
    # (re)initializing" for a while; apply, ps and down ask again, a bounded number of times
    fake.reinitializing("PATCH", "/tfjobs/", 2, retry_after)
    result = cli(fake, tmp_path, "apply", str(GOLDEN / "tf-ps" / "kubeflow.yaml"))
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if "retrying" in line]
    assert len(notes) == 2 and "storage is (re)initializing" in notes[0] and errors(result) == []
    fake.reinitializing("GET", "/tfjobs$", 1, retry_after)
    result = cli(fake, tmp_path, "ps", "--cluster", "tf-ps")
    assert result.returncode == 0, result.stderr
    assert "worker-2" in result.stdout


def test_ps_shows_the_kinds_it_could_list_and_names_the_one_it_could_not(fake, tmp_path):
    assert cli(fake, tmp_path, "apply", str(GOLDEN / "tf-ps" / "kubeflow.yaml")).returncode == 0
    assert cli(fake, tmp_path, "apply", str(GOLDEN / "pytorch-ddp" / "k8s.yaml")).returncode == 0
    # never ready: the retries run out (Retry-After 0 keeps the test short; the count is what is checked)
    fake.reinitializing("GET", "/tfjobs$", 1000, retry_after=0)
    asked = len(fake.requests)
    result = cli(fake, tmp_path, "ps", "--cluster")
    assert result.returncode == 2
    assert "pytorch-ddp" in result.stdout and "TFJob" not in result.stdout
    (line,) = errors(result)
    assert line == ("trainspec: error: listing TFJob.kubeflow.org in ml: storage is (re)initializing "
                    "(not in the table above)")
    assert len([r for r in fake.requests[asked:] if r[1].endswith("/tfjobs")]) == 11  # once, then 10 retries


def test_a_failure_that_is_not_transient_is_not_retried(fake, tmp_path):
    fake.fail("PATCH", "/tfjobs/", *recorded(reference_dir(), "create-tfjob-invalid-422"))
    result = cli(fake, tmp_path, "apply", str(GOLDEN / "tf-ps" / "kubeflow.yaml"))
    assert result.returncode == 2 and "retrying" not in result.stderr
    assert len([r for r in fake.requests if r[0] == "PATCH" and "/tfjobs/" in r[1]]) == 1
