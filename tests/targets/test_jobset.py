"""The jobset target: strict JobSet CRD + Kubernetes Job schema, the JobSet conventions, size per role, errors."""

from __future__ import annotations

import textwrap

import kubernetes_validate
import pytest

from trainspec.compiler import SpecErrors
from trainspec.targets import load_plans, render
from trainspec.targets.jobset import render as jobset
from trainspec.targets.jobset.checks import JOBSET_FRAMEWORKS

import schemas
from helpers import SPECS, compiled_docs, run_cli


def _framework(path) -> str:
    import yaml

    return yaml.safe_load(path.read_text())["spec"]["framework"]


def _on_runtime(path) -> bool:
    """A v1.3 job on a Trainer runtime: the jobset target writes it only with --runtime
    (tests/compiler/test_runtime_expansion.py)."""
    import yaml

    return "trainjob" in yaml.safe_load(path.read_text())["spec"]


ALL_EXAMPLES = sorted(SPECS.glob("*.yaml"))
EXAMPLES = [p.name for p in ALL_EXAMPLES if _framework(p) in JOBSET_FRAMEWORKS and not _on_runtime(p)]
K8S_VERSION = "1.33"  # the Indexed Job's successPolicy is GA in 1.33 (CONVENTIONS-V2 §2)


def docs_of(spec_path) -> list[dict]:
    return compiled_docs("jobset", spec_path)


def jobset_of(spec_name: str) -> dict:
    return docs_of(SPECS / spec_name)[1]


def rjobs(js: dict) -> dict[str, dict]:
    return {rj["name"]: rj for rj in js["spec"]["replicatedJobs"]}


def write_spec(tmp_path, body: str, name="job.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


@pytest.mark.parametrize("spec", EXAMPLES)
def test_valid_against_the_jobset_crd_and_the_kubernetes_job_schema(spec):
    docs = docs_of(SPECS / spec)
    assert [d["kind"] for d in docs] == ["ConfigMap", "JobSet"]
    assert schemas.errors(docs[1]) == []
    kubernetes_validate.validate(docs[0], K8S_VERSION, strict=True)
    for rj in docs[1]["spec"]["replicatedJobs"]:
        # the embedded Job template, as the Job the controller will create
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"x-{rj['name']}-0"},
               "spec": rj["template"]["spec"]}
        kubernetes_validate.validate(job, K8S_VERSION, strict=True)


def test_schema_checks_are_strict():
    js = jobset_of("tf-ps.yaml")
    js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["imagee"] = "x"
    js["spec"]["ttlSecondsAfterFinished"] = "soon"
    found = schemas.errors(js)
    assert any("imagee" in e for e in found), found
    assert any("ttlSecondsAfterFinished" in e for e in found), found
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"},
           "spec": js["spec"]["replicatedJobs"][0]["template"]["spec"]}
    with pytest.raises(kubernetes_validate.ValidationError, match="imagee"):
        kubernetes_validate.validate(job, K8S_VERSION, strict=True)


@pytest.mark.parametrize("spec,order,in_order,decider", [
    ("tf-ps.yaml", ["ps", "worker", "evaluator"], True, "worker"),
    ("tf-chief.yaml", ["ps", "chief", "worker", "evaluator"], True, "chief"),
    ("tf-multiworker.yaml", ["worker", "evaluator"], False, "worker"),
    ("pytorch-ddp.yaml", ["master", "worker"], False, "master"),
    ("mxnet-ps.yaml", ["scheduler", "server", "worker"], True, "scheduler"),
    ("mpi-horovod.yaml", ["worker", "launcher"], True, "launcher"),
    ("paddle.yaml", ["worker"], False, "worker"),
    ("paddle-ps.yaml", ["master", "worker"], False, "master"),
])
def test_order_startup_and_success(spec, order, in_order, decider):
    js = jobset_of(spec)
    assert list(rjobs(js)) == order
    assert ("startupPolicy" in js["spec"]) == in_order
    if in_order:
        assert js["spec"]["startupPolicy"] == {"startupPolicyOrder": "InOrder"}
    assert js["spec"]["successPolicy"] == {"operator": "All", "targetReplicatedJobs": [decider]}
    assert js["spec"]["network"] == {"enableDNSHostnames": True, "subdomain": js["metadata"]["name"],
                                     "publishNotReadyAddresses": True}


def test_one_indexed_job_per_role_with_its_replicas():
    (plan,) = load_plans(str(SPECS / "tf-ps.yaml"))
    js = jobset_of("tf-ps.yaml")
    for role in plan.roles:
        rj = rjobs(js)[role.name]
        assert rj["replicas"] == 1
        spec = rj["template"]["spec"]
        assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", role.count,
                                                                                       role.count)
    hosts = jobset.jobset_hosts(plan)
    assert hosts["worker"][2] == "tf-ps-worker-0-2.tf-ps:2222"


def test_tf_worker_zero_decides_through_the_jobs_own_success_policy():
    worker = rjobs(jobset_of("tf-ps.yaml"))["worker"]["template"]["spec"]
    assert worker["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}
    chief = rjobs(jobset_of("tf-chief.yaml"))
    assert all("successPolicy" not in rj["template"]["spec"] for rj in chief.values())


def test_pytorch_workers_are_one_pod_jobs_ranked_by_global_index():
    rj = rjobs(jobset_of("full-features.yaml"))["worker"]
    spec = rj["template"]["spec"]
    assert rj["replicas"] == 2 and spec["completions"] == spec["parallelism"] == 1
    env = {e["name"]: e for e in spec["template"]["spec"]["containers"][0]["env"]}
    assert env["RANK"]["valueFrom"]["fieldRef"]["fieldPath"] == \
        "metadata.labels['jobset.sigs.k8s.io/job-global-index']"
    assert env["PET_NODE_RANK"]["value"] == "$(RANK)"


def test_exit_code_restart_deadline_ttl_and_kueue():
    js = jobset_of("full-features.yaml")  # worker ExitCode, backoff 4, deadline, ttl, queue
    assert js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "research"
    assert js["spec"]["ttlSecondsAfterFinished"] == 3600
    assert js["spec"]["failurePolicy"]["rules"][0]["onJobFailureReasons"] == ["PodFailurePolicy"]
    worker = rjobs(js)["worker"]["template"]["spec"]
    assert worker["template"]["spec"]["restartPolicy"] == "Never"  # podFailurePolicy needs Never
    rule = worker["podFailurePolicy"]["rules"][0]
    assert rule["action"] == "FailJob" and list(rule["onExitCodes"]["values"]) == list(range(1, 128))
    assert worker["backoffLimit"] == 4 and worker["activeDeadlineSeconds"] == 86400
    master = rjobs(js)["master"]["template"]["spec"]
    assert master["template"]["spec"]["restartPolicy"] == "OnFailure" and "podFailurePolicy" not in master
    for rj in js["spec"]["replicatedJobs"]:  # Kueue reads the label on the top-level object only
        assert "kueue.x-k8s.io/queue-name" not in rj["template"]["metadata"]["labels"]
        assert "kueue.x-k8s.io/queue-name" not in rj["template"]["spec"]["template"]["metadata"]["labels"]
    assert rjobs(jobset_of("tf-single.yaml"))["worker"]["template"]["spec"]["backoffLimit"] == 0  # Never


def test_k8s_workloads_carry_the_kueue_queue_label():
    docs = compiled_docs("k8s", SPECS / "full-features.yaml")
    for doc in docs:
        labels = doc["metadata"]["labels"]
        assert (labels.get("kueue.x-k8s.io/queue-name") == "research") == (doc["kind"] in ("Job", "Deployment"))


SCALED = """\
    apiVersion: trainspec/v1
    kind: TrainingJob
    metadata: {name: scaled}
    spec:
      framework: tensorflow
      image: python:3.12
      command: [python, -c, "print(1)"]
      args: ["--task={{ index }}", "--ps={{ hosts.ps | join(',') }}"]
      roles:
        ps: {replicas: 2}
        worker: {replicas: %d}
    """


def test_output_size_grows_with_roles_not_replicas(tmp_path):
    sizes = {}
    for n in (16, 4096):
        (plan,) = load_plans(str(write_spec(tmp_path, SCALED % n, f"s{n}.yaml")))
        text = render("jobset", plan)["jobset.yaml"]
        # the host lists live once in the ConfigMap; everything else is per role
        _, rest = text.split("kind: JobSet", 1)
        sizes[n] = len(rest)
    assert abs(sizes[4096] - sizes[16]) < 64, sizes


def test_per_replica_text_through_the_completion_index():
    js = jobset_of("tf-args-style.yaml")
    container = rjobs(js)["worker"]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert "--task_index=$(TRAINSPEC_INDEX)" in container["args"]
    index = next(e for e in container["env"] if e["name"] == "TRAINSPEC_INDEX")
    assert index["valueFrom"]["fieldRef"]["fieldPath"] == \
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def test_inexpressible_per_replica_text_is_a_spec_error_at_its_field(tmp_path):
    path = write_spec(tmp_path, """\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: offby}
        spec:
          framework: tensorflow
          image: python:3.12
          command: [python, train.py]
          roles:
            worker:
              replicas: 3
              args: ["--rank={{ index + 1 }}"]
        """)
    r = run_cli("compile", str(path), "-t", "jobset")
    assert r.returncode == 2, r.stderr
    assert "job.yaml:11:" in r.stderr and "spec.roles.worker.args[0]" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_restart_always_is_a_spec_error(tmp_path):
    path = write_spec(tmp_path, """\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: always}
        spec:
          framework: tensorflow
          image: python:3.12
          command: [python, train.py]
          restartPolicy: Always
          roles:
            worker: {replicas: 2}
        """)
    (plan,) = load_plans(str(path))
    with pytest.raises(SpecErrors) as exc:
        render("jobset", plan)
    assert "spec.restartPolicy" in str(exc.value) and "k8s target" in str(exc.value)


def test_long_job_names_are_refused_before_the_webhook_would(tmp_path):
    name = "n" * 50
    path = write_spec(tmp_path, f"""\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {{name: {name}}}
        spec:
          framework: tensorflow
          image: python:3.12
          command: [python, train.py]
          roles:
            worker: {{replicas: 2}}
        """)
    (plan,) = load_plans(str(path))
    with pytest.raises(SpecErrors) as exc:
        render("jobset", plan)
    assert "metadata.name" in str(exc.value) and "63" in str(exc.value)


def test_the_worker_zero_rule_needs_the_job_success_policy_api():
    """Why the README says Kubernetes >= 1.33 (GA; beta and on by default from 1.31, absent before 1.30)."""
    worker = rjobs(jobset_of("tf-ps.yaml"))["worker"]
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"}, "spec": worker["template"]["spec"]}
    kubernetes_validate.validate(job, K8S_VERSION, strict=True)
    with pytest.raises(kubernetes_validate.ValidationError, match="successPolicy"):
        kubernetes_validate.validate(job, "1.29", strict=True)


def test_a_full_build_leaves_jobset_out_for_restart_always(tmp_path):
    path = tmp_path / "always.yaml"
    path.write_text(textwrap.dedent("""\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: always}
        spec:
          framework: pytorch
          image: torch:1
          command: [torchrun, train.py]
          restartPolicy: Always
          roles: {master: {replicas: 1}, worker: {replicas: 2}}
        """))
    out = tmp_path / "out"
    r = run_cli("build", str(path), "-o", str(out), "--no-cache")
    assert r.returncode == 0, r.stderr
    assert (out / "always" / "k8s.yaml").exists() and (out / "always" / "kubeflow.yaml").exists()
    assert not (out / "always" / "jobset.yaml").exists() and not (out / "always" / "trainjob.yaml").exists()
    r = run_cli("build", str(path), "-o", str(out), "-t", "jobset", "--no-cache")
    assert r.returncode == 2 and "always.yaml:8:" in r.stderr and "spec.restartPolicy: target jobset:" in r.stderr


def test_every_example_framework_is_written():
    assert {_framework(p) for p in ALL_EXAMPLES} <= set(JOBSET_FRAMEWORKS)


def _paddle_env(spec: str, roles: dict | None = None, tmp_path=None) -> dict[str, list[tuple]]:
    """role -> the Paddle variables of its one pod template, in order."""
    path = SPECS / spec
    if roles is not None:
        import yaml

        doc = yaml.safe_load(path.read_text())
        doc["spec"]["roles"] = roles
        path = tmp_path / spec
        path.write_text(yaml.safe_dump(doc))
    names = ("PYTHONUNBUFFERED", "PADDLE_JOB_ID", "PADDLE_NNODES", "POD_IP_DUMMY", "POD_IP", "PADDLE_MASTER",
             "PADDLE_SERVER_NUM", "PADDLE_TRAINER_NUM")
    out = {}
    for name, rj in rjobs(docs_of(path)[1]).items():
        env = rj["template"]["spec"]["template"]["spec"]["containers"][0]["env"]
        out[name] = [(e["name"], e.get("value", e.get("valueFrom"))) for e in env if e["name"] in names]
    return out


def test_paddle_rendezvous_role_names_itself_by_its_jobset_host():
    """One template for 3 workers: POD_IP (launch's node address) is each pod's own JobSet name, PADDLE_MASTER
    worker 0's name everywhere, so worker 0 alone finds itself in PADDLE_MASTER (the operator gives it its pod IP
    there instead, which one template cannot give worker 0 alone)."""
    base = [("PYTHONUNBUFFERED", "1"), ("PADDLE_JOB_ID", "paddle-collective"), ("PADDLE_NNODES", "3")]
    assert _paddle_env("paddle.yaml") == {"worker": base + [
        ("POD_IP", "paddle-collective-worker-0-$(TRAINSPEC_INDEX).paddle-collective"),
        ("PADDLE_MASTER", "paddle-collective-worker-0-0.paddle-collective:36543")]}
    ps = _paddle_env("paddle-ps.yaml")
    base = [("PYTHONUNBUFFERED", "1"), ("PADDLE_JOB_ID", "paddle-ps"), ("PADDLE_NNODES", "4")]
    master = ("PADDLE_MASTER", "paddle-ps-master-0-0.paddle-ps:36543")
    assert ps == {"master": base + [("POD_IP", "paddle-ps-master-0-$(TRAINSPEC_INDEX).paddle-ps"), master,
                                    ("PADDLE_SERVER_NUM", "1")],
                  "worker": base + [master, ("PADDLE_TRAINER_NUM", "1")]}  # never the rendezvous: its own IP


def test_paddle_single_rendezvous_replica_gets_the_operators_pod_ip_form(tmp_path):
    pod_ip = ("POD_IP_DUMMY", {"fieldRef": {"fieldPath": "status.podIP"}})
    env = _paddle_env("paddle.yaml", {"worker": {"replicas": 1}}, tmp_path)
    assert env["worker"][3:] == [pod_ip, ("PADDLE_MASTER", "$(POD_IP_DUMMY):36543")]
    env = _paddle_env("paddle-ps.yaml", {"master": {"replicas": 1}, "worker": {"replicas": 3}}, tmp_path)
    assert env["master"][3:] == [pod_ip, ("PADDLE_MASTER", "$(POD_IP_DUMMY):36543"), ("PADDLE_SERVER_NUM", "1")]
    assert env["worker"][3:] == [("PADDLE_MASTER", "paddle-ps-master-0-0.paddle-ps:36543"),
                                 ("PADDLE_TRAINER_NUM", "1")]


@pytest.mark.parametrize("roles,refused", [
    ("worker: {replicas: 2, env: {POD_IP: {fieldRef: {fieldPath: status.podIP}}}}", True),
    ("master: {replicas: 2, env: {POD_IP: 10.0.0.1}}, worker: {replicas: 1}", True),
    ("master: {replicas: 1, env: {POD_IP: 10.0.0.1}}, worker: {replicas: 2, env: {POD_IP: 10.0.0.2}}", False),
    ("worker: {replicas: 1, env: {POD_IP: 10.0.0.1}}", False),
])
def test_a_users_pod_ip_on_a_paddle_rendezvous_role_is_a_spec_error(tmp_path, roles, refused):
    path = write_spec(tmp_path, f"""\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {{name: pip}}
        spec:
          framework: paddle
          image: img
          roles: {{{roles}}}
        """)
    (plan,) = load_plans(str(path))
    if not refused:
        jobset.render(plan)
        return
    with pytest.raises(SpecErrors) as info:
        jobset.render(plan)
    text = str(info.value)
    assert "job.yaml:7:" in text and "target jobset: POD_IP is paddle.distributed.launch's node address" in text
    assert render("kubeflow", plan)  # the operator's form carries the pod IP in PADDLE_MASTER: POD_IP is free
