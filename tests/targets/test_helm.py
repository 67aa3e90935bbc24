"""The helm target, rendered with a real Helm engine (helm-python-sdk, offline).

- default values render exactly the k8s target's objects (compared as parsed data);
- changing replicas / ports in values gives exactly what recompiling the spec with
  those replicas / ports gives (TF_CONFIG, WORLD_SIZE, DMLC_*, hostfile... included);
- `{{` in user text comes out literally; bad values fail on the schema; lint is clean.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

helm_chart = pytest.importorskip("helm_python.chart", reason="helm-python-sdk is not installed")
from helm_python import HelmError  # noqa: E402

from trainspec.compiler import runpolicy  # noqa: E402
from trainspec.targets import load_plans  # noqa: E402
from trainspec.targets.helm import render as helm  # noqa: E402
from trainspec.targets.k8s import render as k8s  # noqa: E402

from helpers import GOLDEN, SPECS, on_runtime, run_cli, runtime_excludes  # noqa: E402

EXAMPLES = sorted(p.name for p in SPECS.glob("*.yaml") if not on_runtime(p))

def write_chart(plan, root: Path) -> Path:
    for rel, text in helm.render(plan).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "helm"


def render(chart_dir: Path, namespace: str, values: dict | None = None, name: str = "release") -> list[dict]:
    with helm_chart.Chart.load(str(chart_dir)) as chart:
        manifests = chart.render(values=values, name=name, namespace=namespace)
    docs = []
    for path, text in sorted(manifests.items()):
        if path.endswith(".yaml"):
            docs.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return sort_objects(docs)


def sort_objects(docs: list[dict]) -> list[dict]:
    return sorted(docs, key=lambda o: (o["kind"], o["metadata"]["name"]))


def k8s_objects(plan) -> list[dict]:
    """The k8s target's objects as parsed data (through its YAML text, as a cluster would read them)."""
    return sort_objects([doc for doc in yaml.safe_load_all(k8s.render(plan)[k8s.FILE]) if doc])


def plan_of(spec_name: str, tmp_path: Path, edit=None):
    """The spec's plan, optionally after `edit(data)` changes the spec document."""
    path = SPECS / spec_name
    if edit is not None:
        data = yaml.safe_load(path.read_text())
        edit(data)
        path = tmp_path / spec_name
        path.write_text(yaml.safe_dump(data, sort_keys=False))
    (plan,) = load_plans(str(path))
    return plan


def assert_same_objects(got: list[dict], want: list[dict]) -> None:
    assert [(o["kind"], o["metadata"]["name"]) for o in got] == [(o["kind"], o["metadata"]["name"]) for o in want]
    for g, w in zip(got, want):
        assert g == w, f"{g['kind']} {g['metadata']['name']} differs"


def env_of(docs: list[dict], name: str) -> dict[str, dict]:
    job = next(o for o in docs if o["kind"] in ("Job", "Deployment", "StatefulSet") and o["metadata"]["name"] == name)
    return {e["name"]: e for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}


def container_of(docs: list[dict], name: str) -> dict:
    job = next(o for o in docs if o["kind"] in ("Job", "Deployment", "StatefulSet") and o["metadata"]["name"] == name)
    return job["spec"]["template"]["spec"]["containers"][0]


# --- default values == k8s ----------------------------------------------------------------------

@pytest.mark.parametrize("spec", EXAMPLES)
def test_default_render_is_the_k8s_target(spec, tmp_path):
    plan = plan_of(spec, tmp_path)
    chart = write_chart(plan, tmp_path)
    assert_same_objects(render(chart, plan.namespace), k8s_objects(plan))


@pytest.mark.parametrize("spec", EXAMPLES)
def test_golden_chart_renders_the_golden_k8s(spec, tmp_path):
    plan = plan_of(spec, tmp_path)
    golden = GOLDEN / plan.name
    want = sort_objects([d for d in yaml.safe_load_all((golden / "k8s.yaml").read_text()) if d])
    assert_same_objects(render(golden / "helm", plan.namespace), want)


@pytest.mark.parametrize("spec", EXAMPLES)
def test_chart_lints_clean_strict(spec, tmp_path):
    chart = write_chart(plan_of(spec, tmp_path), tmp_path)
    report = helm_chart.lint(str(chart), strict=True)
    assert report["errors"] == []
    problems = [m for m in report["messages"] if m["severity"] >= 2]
    assert problems == [], problems


def test_chart_files(tmp_path):
    plan = plan_of("tf-ps.yaml", tmp_path)
    files = helm.render(plan)
    assert set(files) == {"helm/Chart.yaml", "helm/values.yaml", "helm/values.schema.json",
                          "helm/templates/_helpers.tpl", "helm/templates/topology.yaml",
                          "helm/templates/services.yaml", "helm/templates/jobs.yaml", "helm/templates/NOTES.txt"}
    chart = yaml.safe_load(files["helm/Chart.yaml"])
    assert chart["apiVersion"] == "v2" and chart["name"] == "tf-ps"
    values = yaml.safe_load(files["helm/values.yaml"])
    assert values["image"] == {"repository": "python", "tag": "3.12-slim"}
    assert values["roles"]["worker"]["replicas"] == 3
    assert values["roles"]["worker"]["resources"] == {"cpu": "4", "memory": "8Gi", "gpu": 1}
    assert values["accelerator"] == "nvidia.com/gpu"
    assert "namespace" not in values
    assert helm.render(plan) == files  # deterministic


def test_notes_tell_how_to_watch(tmp_path):
    plan = plan_of("tf-ps.yaml", tmp_path)
    chart = write_chart(plan, tmp_path)
    with helm_chart.Chart.load(str(chart)) as loaded:
        notes = loaded.render(name="r", namespace="ml")["tf-ps/templates/NOTES.txt"]
    assert "kubectl -n ml get jobs,statefulsets,deployments,pods -l trainspec.dev/job=tf-ps -w" in notes
    assert "logs -f --prefix -l trainspec.dev/job=tf-ps,trainspec.dev/role=ps" in notes
    assert "worker-0 succeeds" in notes


def test_compile_cli_writes_the_chart(tmp_path):
    out = tmp_path / "chart"
    result = run_cli("compile", str(SPECS / "tf-args-style.yaml"), "--target", "helm", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert (out / "Chart.yaml").is_file() and (out / "templates" / "_helpers.tpl").is_file()
    plan = plan_of("tf-args-style.yaml", tmp_path)
    assert_same_objects(render(out, plan.namespace), k8s_objects(plan))


def test_golden_files_are_current():
    result = run_cli("build", str(SPECS), "-o", str(GOLDEN), "--target", "helm", "--target", "compose", "--check",
                     *runtime_excludes())
    assert result.returncode == 0, result.stdout + result.stderr


# --- the topology follows the values ------------------------------------------------------------

def _set_replicas(role: str, count: int):
    def edit(data):
        data["spec"]["roles"][role]["replicas"] = count
    return edit


TOPOLOGY_CASES = [
    ("tf-args-style.yaml", "worker", 8),
    ("tf-args-style.yaml", "ps", 3),
    ("tf-ps.yaml", "worker", 8),
    ("tf-chief.yaml", "chief", 0),
    ("tf-multiworker.yaml", "worker", 5),
    ("tf-single.yaml", "worker", 4),
    ("pytorch-ddp.yaml", "worker", 7),
    ("full-features.yaml", "worker", 4),
    ("mxnet-ps.yaml", "worker", 5),
    ("mxnet-ps.yaml", "server", 1),
    ("mpi-horovod.yaml", "worker", 4),
]


@pytest.mark.parametrize("spec,role,count", TOPOLOGY_CASES)
def test_changing_replicas_equals_recompiling(spec, role, count, tmp_path):
    """`--set roles.<role>.replicas=N` renders what compiling the spec with N replicas gives, object for object."""
    plan = plan_of(spec, tmp_path)
    chart = write_chart(plan, tmp_path / "chart")
    got = render(chart, plan.namespace, {"roles": {role: {"replicas": count}}})
    want = k8s_objects(plan_of(spec, tmp_path, _set_replicas(role, count)))
    assert_same_objects(got, want)


def test_worker_replicas_8_updates_every_replicas_topology(tmp_path):
    plan = plan_of("tf-args-style.yaml", tmp_path)
    docs = render(write_chart(plan, tmp_path), plan.namespace, {"roles": {"worker": {"replicas": 8}}})
    (workers,) = [o for o in docs if o["kind"] == "Job" and o["metadata"]["name"] == "tf-args-worker"]
    assert (workers["spec"]["completions"], workers["spec"]["parallelism"]) == (8, 8)  # one Indexed Job
    hosts = [f"tf-args-worker-{i}.tf-args:2222" for i in range(8)]
    topology = next(o for o in docs if o["kind"] == "ConfigMap")
    assert yaml.safe_load(topology["data"]["TRAINSPEC_TF_CLUSTER"])["worker"] == hosts
    assert topology["data"]["TRAINSPEC_HOSTS_WORKER"] == ",".join(hosts)
    for name in ("tf-args-ps", "tf-args-worker"):
        env = env_of(docs, name)
        assert env["TRAINSPEC_NUM_WORKER"]["value"] == "8"
        assert env["TF_CONFIG"]["value"].startswith('{"cluster":$(TRAINSPEC_TF_CLUSTER)')
        assert f"--worker_hosts={','.join(hosts)}" in container_of(docs, name)["args"]
    assert "--task_index=$(TRAINSPEC_INDEX)" in container_of(docs, "tf-args-worker")["args"]


def test_pytorch_world_size_follows_replicas(tmp_path):
    """PyTorch workers beside a master are one Indexed Job whose rank prelude sets RANK = index + 1, also after
    --set; with no command (the image's entry point) they stay one Job per replica, RANK written in each."""
    from trainspec.targets.k8s.scheme import SHELL

    plan = plan_of("full-features.yaml", tmp_path)
    docs = render(write_chart(plan, tmp_path / "a"), plan.namespace, {"roles": {"worker": {"replicas": 5}}})
    (workers,) = [o for o in docs if o["kind"] == "Job" and o["metadata"]["name"] == "bert-finetune-worker"]
    assert (workers["spec"]["completions"], workers["spec"]["parallelism"]) == (5, 5)
    env = env_of(docs, "bert-finetune-worker")
    assert env["WORLD_SIZE"]["value"] == "12"  # (1 master + 5 workers) x nprocPerNode 2
    assert env["PET_NNODES"]["value"] == "6"
    assert "RANK" not in env and "PET_NODE_RANK" not in env  # the prelude exports them
    command = container_of(docs, "bert-finetune-worker")["command"]
    assert tuple(command[:2]) == SHELL and "PET_NODE_RANK=" in command[2]
    assert command[3:] == ["torchrun", "/workspace/finetune.py"]
    assert env["RUN_NAME"]["value"] == "bert-finetune-worker-$(TRAINSPEC_INDEX)"
    assert env_of(docs, "bert-finetune-master")["WORLD_SIZE"]["value"] == "12"

    plan = plan_of("full-features.yaml", tmp_path, lambda d: d["spec"].pop("command"))
    docs = render(write_chart(plan, tmp_path / "b"), plan.namespace, {"roles": {"worker": {"replicas": 5}}})
    env = env_of(docs, "bert-finetune-worker-4")
    assert env["RANK"]["value"] == "5" and "command" not in container_of(docs, "bert-finetune-worker-4")


def test_mxnet_and_mpi_counts_follow_replicas(tmp_path):
    plan = plan_of("mxnet-ps.yaml", tmp_path)
    docs = render(write_chart(plan, tmp_path / "mx"), plan.namespace, {"roles": {"worker": {"replicas": 6}}})
    assert env_of(docs, "mxnet-ps-scheduler")["DMLC_NUM_WORKER"]["value"] == "6"
    assert env_of(docs, "mxnet-ps-worker")["DMLC_WORKER_ID"]["value"] == "$(TRAINSPEC_INDEX)"
    assert next(o for o in docs if o["metadata"]["name"] == "mxnet-ps-worker")["spec"]["completions"] == 6
    plan = plan_of("mpi-horovod.yaml", tmp_path)
    docs = render(write_chart(plan, tmp_path / "mpi"), plan.namespace, {"roles": {"worker": {"replicas": 3}}})
    topology = next(o for o in docs if o["kind"] == "ConfigMap")
    assert topology["data"]["hostfile"] == "".join(f"mpi-horovod-worker-{i}.mpi-horovod slots=1\n" for i in range(3))


def test_changing_a_port_equals_recompiling(tmp_path):
    plan = plan_of("tf-ps.yaml", tmp_path)
    got = render(write_chart(plan, tmp_path / "chart"), plan.namespace, {"roles": {"ps": {"port": 3333}}})

    def edit(data):
        data["spec"]["roles"]["ps"]["port"] = 3333
    assert_same_objects(got, k8s_objects(plan_of("tf-ps.yaml", tmp_path, edit)))


def test_other_knobs_equal_recompiling(tmp_path):
    """Image, resources, accelerator, restart policy and env set through values."""
    plan = plan_of("tf-ps.yaml", tmp_path)
    values = {"image": {"repository": "registry.example.com/tf", "tag": "2.16"}, "accelerator": "amd.com/gpu",
              "roles": {"worker": {"resources": {"cpu": "500m", "memory": "2Gi", "gpu": 2},
                                   "restartPolicy": "Always"}}}
    got = render(write_chart(plan, tmp_path / "chart"), plan.namespace, values)

    def edit(data):
        data["spec"]["image"] = "registry.example.com/tf:2.16"
        data["spec"]["accelerator"] = "amd.com/gpu"
        data["spec"]["roles"]["worker"]["resources"] = {"cpu": "500m", "memory": "2Gi", "gpu": 2}
        data["spec"]["roles"]["worker"]["restartPolicy"] = "Always"
    assert_same_objects(got, k8s_objects(plan_of("tf-ps.yaml", tmp_path, edit)))


def test_run_policy_annotation_follows_values(tmp_path):
    """The topology ConfigMap's trainspec.dev/run-policy (what `trainspec run` reads back) is
    computed from values: job knobs, restart policies and the start order equal recompiling."""
    plan = plan_of("mpi-horovod.yaml", tmp_path)
    values = {"backoffLimit": 5, "activeDeadlineSeconds": 900, "cleanPodPolicy": "All",
              "ttlSecondsAfterFinished": 30, "roles": {"worker": {"replicas": 3, "restartPolicy": "OnFailure"}}}
    got = render(write_chart(plan, tmp_path / "chart"), plan.namespace, values)

    def edit(data):
        data["spec"].update(backoffLimit=5, activeDeadlineSeconds=900, cleanPodPolicy="All", ttlSecondsAfterFinished=30)
        data["spec"]["roles"]["worker"].update(replicas=3, restartPolicy="OnFailure")
    want = k8s_objects(plan_of("mpi-horovod.yaml", tmp_path, edit))
    assert_same_objects(got, want)
    topology = next(o for o in got if o["kind"] == "ConfigMap")
    policy = runpolicy.parse_annotation(topology["metadata"]["annotations"][runpolicy.ANNOTATION])
    assert policy.restart["worker"] == ("OnFailure", 5)
    assert [tuple(s) for s in policy.start_order] == [("launcher", ("worker",))]
    assert (policy.cleanup.pods, policy.backoff_limit, policy.deadline) == ("All", 5, 900)


def test_changing_the_name_equals_recompiling(tmp_path):
    plan = plan_of("tf-args-style.yaml", tmp_path)
    got = render(write_chart(plan, tmp_path / "chart"), plan.namespace, {"name": "renamed"})

    def edit(data):
        data["metadata"]["name"] = "renamed"
    assert_same_objects(got, k8s_objects(plan_of("tf-args-style.yaml", tmp_path, edit)))


def test_templated_args_are_data_parts(tmp_path):
    values = yaml.safe_load(helm.render(plan_of("tf-args-style.yaml", tmp_path))["helm/values.yaml"])
    assert values["roles"]["worker"]["args"] == [
        "--job_name=worker", ["--task_index=", {"var": "index"}], ["--ps_hosts=", {"hosts": "ps", "join": ","}],
        ["--worker_hosts=", {"hosts": "worker", "join": ","}], ["--output_dir=/data/output/", {"var": "job.name"}]]
    values = yaml.safe_load(helm.render(plan_of("full-features.yaml", tmp_path))["helm/values.yaml"])
    env = {e["name"]: e for e in values["roles"]["master"]["env"]}
    assert env["RUN_NAME"]["value"] == [{"var": "job.name"}, "-master-", {"var": "index"}]
    assert env["HF_TOKEN"] == {"name": "HF_TOKEN", "secretKeyRef": {"name": "hf-credentials", "key": "token"}}


def test_release_namespace_is_used(tmp_path):
    plan = plan_of("tf-args-style.yaml", tmp_path)
    docs = render(write_chart(plan, tmp_path), "other")
    assert {o["metadata"]["namespace"] for o in docs} == {"other"}


# --- templates the chart cannot recompute are pinned --------------------------------------------

PINNED_SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: pinned, namespace: ml}
spec:
  framework: tensorflow
  image: python:3.12-slim
  command: [python, train.py, "--rank={{ index + 1 }}", "--first={{ hosts.worker[0] }}", "--ns={{ job.namespace }}"]
  roles:
    ps: {replicas: 1, resources: {cpu: "1"}}
    worker: {replicas: 2, resources: {cpu: "1"}}
"""


def test_unsupported_templates_are_pinned(tmp_path):
    spec = tmp_path / "pinned.yaml"
    spec.write_text(PINNED_SPEC)
    (plan,) = load_plans(str(spec))
    chart = write_chart(plan, tmp_path)
    values = yaml.safe_load((chart / "values.yaml").read_text())
    command = values["roles"]["worker"]["command"]
    assert command[2] == [{"byIndex": ["--rank=1", "--rank=2"], "pin": "ps=1:2222,worker=2:2222"}]
    assert command[4] == ["--ns=", {"var": "job.namespace"}]
    assert_same_objects(render(chart, "ml"), k8s_objects(plan))
    with pytest.raises(HelmError, match="cannot recompute"):
        render(chart, "ml", {"roles": {"worker": {"replicas": 3}}})
    # Roles whose strings do not depend on the topology keep following the values.
    assert len([o for o in render(chart, "other") if o["kind"] == "Job"]) == 3


# --- no template injection ----------------------------------------------------------------------

INJECTION_SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata:
  name: inject
  namespace: ml
  annotations: {note: "{{ .Release.Name }} {{ '{{' }} not a template"}
spec:
  framework: pytorch
  image: python:3.12-slim
  command: [sh, -c, "echo {{ '{{' }} .Release.Name }} {{ '{{' }}- fail \\"boom\\" }} $(HOME) $$ {{ index }}"]
  args: ["{{ '{{' }} include \\"trainspec.labels\\" . }}"]
  env:
    TEMPLATE: "{{ '{{' }} .Release.Name }}"
    MIXED: "{{ '{{' }}{{ role }}}}"
  roles:
    master:
      replicas: 1
      initContainers:
        - {name: init, image: busybox, command: [sh, -c, "echo {{ .Release.Name }} $(X)"]}
      probes:
        liveness: {exec: [sh, -c, "test {{ .Values }}"]}
    worker: {replicas: 1}
"""


def test_no_template_injection(tmp_path):
    spec = tmp_path / "inject.yaml"
    spec.write_text(INJECTION_SPEC)
    (plan,) = load_plans(str(spec))
    chart = write_chart(plan, tmp_path)
    docs = render(chart, "ml", name="SHOULD-NOT-APPEAR")
    assert_same_objects(docs, k8s_objects(plan))
    report = helm_chart.lint(str(chart), strict=True)
    assert report["errors"] == [] and all(m["severity"] < 2 for m in report["messages"]), report
    text = yaml.safe_dump(docs)
    assert "SHOULD-NOT-APPEAR" not in text
    master = container_of(docs, "inject-master")
    assert master["command"][2] == 'echo {{ .Release.Name }} {{- fail "boom" }} $$(HOME) $$$ 0'
    assert master["args"] == ['{{ include "trainspec.labels" . }}']
    env = env_of(docs, "inject-master")
    assert env["TEMPLATE"]["value"] == "{{ .Release.Name }}"
    assert env["MIXED"]["value"] == "{{master}}"
    job = next(o for o in docs if o["metadata"]["name"] == "inject-master" and o["kind"] == "Job")
    # metadata is not topology-templated: the annotation is exactly as written in the spec
    assert job["metadata"]["annotations"]["note"] == "{{ .Release.Name }} {{ '{{' }} not a template"
    init = job["spec"]["template"]["spec"]["initContainers"][0]
    assert init["command"][2] == "echo {{ .Release.Name }} $$(X)"
    # Values set at install time are data too.
    docs = render(chart, "ml", {"roles": {"worker": {"command": ["{{ .Release.Name }}"],
                                                     "env": [{"name": "X", "value": "{{ .Values }}"}]}},
                                "labels": {"team": "a"}}, name="SHOULD-NOT-APPEAR")
    assert container_of(docs, "inject-worker")["command"] == ["{{ .Release.Name }}"]
    assert env_of(docs, "inject-worker")["X"]["value"] == "{{ .Values }}"


# --- the schema rejects bad values --------------------------------------------------------------

BAD_VALUES = [
    ("tf-ps.yaml", {"roles": {"worker": {"replicas": "eight"}}}, "replicas"),
    ("tf-ps.yaml", {"roles": {"worker": {"replicas": -1}}}, "replicas"),
    ("tf-ps.yaml", {"roles": {"worker": {"replicas": 100001}}}, "replicas"),
    ("pytorch-ddp.yaml", {"roles": {"master": {"replicas": 2}}}, "replicas"),
    ("mpi-horovod.yaml", {"roles": {"launcher": {"replicas": 0}}}, "replicas"),
    ("tf-ps.yaml", {"roles": {"worker": {"resources": {"memory": "lots"}}}}, "memory"),
    ("tf-ps.yaml", {"roles": {"worker": {"resources": {"gpu": 1.5}}}}, "gpu"),
    ("tf-ps.yaml", {"roles": {"master": {"replicas": 1}}}, "master"),
    ("tf-ps.yaml", {"image": {"repository": 5}}, "repository"),
    ("tf-ps.yaml", {"roles": {"ps": {"restartPolicy": "Sometimes"}}}, "restartPolicy"),
    ("tf-ps.yaml", {"framework": "pytorch"}, "framework"),
    ("tf-ps.yaml", {"roles": {"worker": {"env": [{"name": "X", "value": {"var": "secret"}}]}}}, "env"),
]


@pytest.mark.parametrize("spec,values,where", BAD_VALUES)
def test_bad_values_fail_on_the_schema(spec, values, where, tmp_path):
    chart = write_chart(plan_of(spec, tmp_path), tmp_path)
    with pytest.raises(HelmError) as info:
        render(chart, "default", values)
    assert where in str(info.value)


def test_template_checks_what_a_schema_cannot(tmp_path):
    chart = write_chart(plan_of("tf-ps.yaml", tmp_path), tmp_path)
    with pytest.raises(HelmError, match="parameter servers without workers"):
        render(chart, "default", {"roles": {"worker": {"replicas": 0}}})
    with pytest.raises(HelmError, match="63"):
        render(chart, "default", {"name": "a" * 55})


@pytest.mark.parametrize("spec", ["tf-multiworker.yaml", "generic-coordinator.yaml", "tf-ps.yaml"])
def test_job_success_policy_follows_the_kube_version_and_replicas(spec, tmp_path):
    """From Kubernetes 1.31 the deciding replica is the Job's successPolicy (k8s target): the chart writes it for
    the version compiled for, and only while its role's Job has several pods."""
    (plan,) = load_plans(str(SPECS / spec), kube_version="1.31")
    chart = write_chart(plan, tmp_path / "chart")
    docs = render(chart, plan.namespace)
    assert_same_objects(docs, k8s_objects(plan))
    role = plan.success.role
    if spec == "tf-ps.yaml":  # ChiefOrWorker0 without a chief: worker 0 decides: a Job successPolicy, gone with one worker
        job = next(o for o in docs if o["metadata"]["name"] == f"{plan.name}-worker")
        assert job["spec"]["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}
        one = render(chart, plan.namespace, {"roles": {role: {"replicas": 1}}})
        assert "successPolicy" not in next(o for o in one if o["metadata"]["name"] == f"{plan.name}-worker")["spec"]


def _ranked_edit(no_command: bool, user_env: dict):
    def edit(data: dict) -> None:
        if no_command:  # True: no command; "empty": `command: []`, the image's entry point too (Kubernetes)
            data["spec"].pop("command", None)
            if no_command == "empty":
                data["spec"]["command"] = []
        data["spec"].setdefault("env", {}).update(user_env)
        data["spec"]["roles"]["worker"]["replicas"] = 3
    return edit


@pytest.mark.parametrize("spec", ["xgboost.yaml", "full-features.yaml"])
@pytest.mark.parametrize("no_command, user_env", [(False, {}), (True, {}), ("empty", {}), (False, {"RANK": "7"}),
                                                  (False, {"RANK": "7", "PET_NODE_RANK": "7"})])
def test_ranked_workers_render_as_the_k8s_target(spec, no_command, user_env, tmp_path):
    """The rank prelude (or, with no command, a Job per replica) and the user's own RANK: chart == k8s target."""
    plan = plan_of(spec, tmp_path, _ranked_edit(no_command, user_env))
    want = k8s_objects(plan)
    assert_same_objects(render(write_chart(plan, tmp_path / "chart"), plan.namespace), want)
    workers = [o for o in want if o["metadata"]["name"].startswith(f"{plan.name}-worker")]
    assert len(workers) == (3 if no_command else 1)
