"""The chart's `workload: jobset`, rendered with a real Helm engine (helm-python-sdk, offline).

- `workload: jobset` renders exactly the jobset target's objects (parsed), for every example
  and for the golden charts;
- changed replicas render what recompiling the spec for `jobset` gives (replicatedJob
  replicas / parallelism / completions, the topology ConfigMap, the env);
- the rendered JobSet passes the strict JobSet CRD schema, its Jobs the Kubernetes schema;
- whatever the jobset target refuses (restartPolicy Always, pod names over 63 characters,
  per-replica text with no `$(TRAINSPEC_INDEX)` form), the chart refuses with a message.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

helm_chart = pytest.importorskip("helm_python.chart", reason="helm-python-sdk is not installed")
from helm_python import HelmError  # noqa: E402
from test_helm import EXAMPLES, _set_replicas, assert_same_objects, plan_of, render, sort_objects, write_chart  # noqa: E402

from trainspec.compiler import SpecErrors  # noqa: E402
from trainspec.targets import load_plans  # noqa: E402
from trainspec.targets.jobset import render as jobset  # noqa: E402

import schemas  # noqa: E402
from helpers import GOLDEN, SPECS, plan_text  # noqa: E402

JOBSET = {"workload": "jobset"}


def _jobset_refuses(spec: str) -> bool:
    (plan,) = load_plans(str(SPECS / spec))
    return bool(plan.target_errors.get("jobset"))


JOBSET_EXAMPLES = [spec for spec in EXAMPLES if not _jobset_refuses(spec)]
K8S_VERSION = "1.33"  # the Indexed Job's successPolicy is GA in 1.33 (as tests/targets/test_jobset.py)


def jobset_objects(plan) -> list[dict]:
    """The jobset target's objects as parsed data (through its YAML text)."""
    return sort_objects([d for d in yaml.safe_load_all(jobset.render(plan)[jobset.FILE]) if d])


def with_jobset(values: dict | None = None) -> dict:
    return {**JOBSET, **(values or {})}


def spec_plan(body: str, name: str = "job.yaml"):
    (plan,) = plan_text(textwrap.dedent(body), name=name)
    return plan


def the_jobset(docs: list[dict]) -> dict:
    (js,) = [d for d in docs if d["kind"] == "JobSet"]
    return js


# --- workload: jobset == the jobset target -------------------------------------------------------

@pytest.mark.parametrize("spec", JOBSET_EXAMPLES)
def test_jobset_workload_is_the_jobset_target(spec, tmp_path):
    plan = plan_of(spec, tmp_path)
    chart = write_chart(plan, tmp_path)
    got = render(chart, plan.namespace, JOBSET)
    assert [o["kind"] for o in got] == ["ConfigMap", "JobSet"]
    assert_same_objects(got, jobset_objects(plan))


@pytest.mark.parametrize("spec", JOBSET_EXAMPLES)
def test_golden_chart_with_jobset_renders_the_golden_jobset(spec, tmp_path):
    plan = plan_of(spec, tmp_path)
    golden = GOLDEN / plan.name
    want = sort_objects([d for d in yaml.safe_load_all((golden / "jobset.yaml").read_text()) if d])
    assert_same_objects(render(golden / "helm", plan.namespace, JOBSET), want)


def test_default_workload_is_jobs(tmp_path):
    plan = plan_of("tf-ps.yaml", tmp_path)
    chart = write_chart(plan, tmp_path)
    assert yaml.safe_load((chart / "values.yaml").read_text())["workload"] == "jobs"
    kinds = {o["kind"] for o in render(chart, plan.namespace)}
    assert kinds == {"ConfigMap", "Service", "Job"}
    assert kinds == {o["kind"] for o in render(chart, plan.namespace, {"workload": "jobs"})}


# --- the topology follows the values -------------------------------------------------------------

JOBSET_TOPOLOGY_CASES = [
    ("tf-args-style.yaml", "worker", 8),
    ("tf-ps.yaml", "ps", 0),
    ("tf-chief.yaml", "worker", 5),
    ("tf-chief.yaml", "chief", 0),  # worker 0 decides: the worker Job's own successPolicy
    ("full-features.yaml", "worker", 6),  # PyTorch workers: one-pod Jobs, replicas = N
    ("mxnet-ps.yaml", "server", 3),
    ("mpi-horovod.yaml", "worker", 4),
    ("xgboost.yaml", "worker", 5),  # one-pod Jobs: RANK from job-global-index, WORKER_ADDRS JobSet hosts
    ("jax.yaml", "worker", 3),  # PROCESS_ID $(TRAINSPEC_INDEX), NUM_PROCESSES follows
    ("paddle.yaml", "worker", 1),  # one rendezvous replica: the operator's POD_IP_DUMMY form
    ("paddle.yaml", "worker", 5),  # POD_IP: each worker's JobSet name
    ("paddle-ps.yaml", "master", 1),
    ("paddle-ps.yaml", "worker", 4),
]


@pytest.mark.parametrize("spec,role,count", JOBSET_TOPOLOGY_CASES)
def test_changing_replicas_equals_recompiling_for_jobset(spec, role, count, tmp_path):
    plan = plan_of(spec, tmp_path)
    chart = write_chart(plan, tmp_path / "chart")
    got = render(chart, plan.namespace, with_jobset({"roles": {role: {"replicas": count}}}))
    assert_same_objects(got, jobset_objects(plan_of(spec, tmp_path, _set_replicas(role, count))))


def test_changing_a_port_equals_recompiling_for_jobset(tmp_path):
    plan = plan_of("mxnet-ps.yaml", tmp_path)
    got = render(write_chart(plan, tmp_path / "chart"), plan.namespace,
                 with_jobset({"roles": {"scheduler": {"port": 9999}}}))

    def edit(data):
        data["spec"]["roles"]["scheduler"]["port"] = 9999
    assert_same_objects(got, jobset_objects(plan_of("mxnet-ps.yaml", tmp_path, edit)))


def test_worker_replicas_8_updates_the_replicated_job_and_the_topology(tmp_path):
    plan = plan_of("tf-args-style.yaml", tmp_path)
    docs = render(write_chart(plan, tmp_path), plan.namespace, with_jobset({"roles": {"worker": {"replicas": 8}}}))
    rjobs = {rj["name"]: rj for rj in the_jobset(docs)["spec"]["replicatedJobs"]}
    worker = rjobs["worker"]
    assert worker["replicas"] == 1
    assert (worker["template"]["spec"]["parallelism"], worker["template"]["spec"]["completions"]) == (8, 8)
    hosts = [f"tf-args-worker-0-{i}.tf-args:2222" for i in range(8)]
    topology = next(o for o in docs if o["kind"] == "ConfigMap")
    assert yaml.safe_load(topology["data"]["TRAINSPEC_TF_CLUSTER"])["worker"] == hosts
    assert topology["data"]["TRAINSPEC_HOSTS_WORKER"] == ",".join(hosts)
    container = worker["template"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    assert env["TRAINSPEC_NUM_WORKER"]["value"] == "8"
    task = '"task":{"type":"worker","index":$(TRAINSPEC_INDEX)},"environment":"cloud"}'
    assert env["TF_CONFIG"]["value"].endswith(task)
    assert "--task_index=$(TRAINSPEC_INDEX)" in container["args"]
    assert f"--worker_hosts={','.join(hosts)}" in container["args"]


def test_pytorch_workers_stay_one_pod_jobs(tmp_path):
    plan = plan_of("full-features.yaml", tmp_path)
    docs = render(write_chart(plan, tmp_path), plan.namespace, with_jobset({"roles": {"worker": {"replicas": 5}}}))
    worker = {rj["name"]: rj for rj in the_jobset(docs)["spec"]["replicatedJobs"]}["worker"]
    assert worker["replicas"] == 5 and worker["template"]["spec"]["parallelism"] == 1
    env = {e["name"]: e for e in worker["template"]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["WORLD_SIZE"]["value"] == str(6 * 2)  # (1 master + 5 workers) x nprocPerNode 2
    assert env["RANK"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.labels['jobset.sigs.k8s.io/job-global-index']"


# --- valid for the cluster -----------------------------------------------------------------------

@pytest.mark.parametrize("spec", JOBSET_EXAMPLES)
def test_rendered_jobset_passes_the_strict_crd_and_job_schemas(spec, tmp_path):
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    plan = plan_of(spec, tmp_path)
    role = "worker" if plan.role("worker") is not None else plan.roles[-1].name  # generic: roles named freely
    docs = render(write_chart(plan, tmp_path), plan.namespace, with_jobset({"roles": {role: {"replicas": 3}}}))
    js = the_jobset(docs)
    assert schemas.errors(js) == []
    for doc in docs:
        if doc["kind"] == "ConfigMap":
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    for rj in js["spec"]["replicatedJobs"]:
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": f"x-{rj['name']}-0"},
               "spec": rj["template"]["spec"]}
        kubernetes_validate.validate(job, K8S_VERSION, strict=True)


@pytest.mark.parametrize("spec", ["tf-ps.yaml", "full-features.yaml", "mpi-horovod.yaml"])
def test_chart_lints_clean_strict_with_jobset(spec, tmp_path):
    chart = write_chart(plan_of(spec, tmp_path), tmp_path)
    report = helm_chart.lint(str(chart), JOBSET, strict=True)
    assert report["errors"] == []
    problems = [m for m in report["messages"] if m["severity"] >= 2]
    assert problems == [], problems


def test_notes_watch_the_jobset(tmp_path):
    plan = plan_of("tf-ps.yaml", tmp_path)
    with helm_chart.Chart.load(str(write_chart(plan, tmp_path))) as loaded:
        notes = loaded.render(JOBSET, name="r", namespace="ml")["tf-ps/templates/NOTES.txt"]
    assert "kubectl -n ml get jobsets,jobs,pods -l trainspec.dev/job=tf-ps -w" in notes


# --- per-replica text: exact, or refused ---------------------------------------------------------

ESCAPES_SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: esc, namespace: ml}
spec:
  framework: tensorflow
  image: python:3.12-slim
  command: [sh, -c, "echo $(HOME) $$ x${{ index }} $${{ index }}/{{ replicas }} {{ hosts.worker | join(' ') }}"]
  env:
    SHOUT: "{{ job.name | upper }}"
    RANKED: "r$({{ index }})"
  roles:
    ps: {replicas: 2}
    worker: {replicas: 3}
"""


def test_dollars_around_the_index_come_out_as_the_jobset_target_writes_them(tmp_path):
    plan = spec_plan(ESCAPES_SPEC)
    chart = write_chart(plan, tmp_path / "chart")
    values = yaml.safe_load((chart / "values.yaml").read_text())
    shout = next(e for e in values["roles"]["ps"]["env"] if e["name"] == "SHOUT")["value"]
    assert shout[0]["jobset"] == "ESC"  # a filter: kept as compiled, with the jobset text beside it
    assert_same_objects(render(chart, "ml", JOBSET), jobset_objects(plan))
    # the parts still follow the values; the pinned filter text refuses another topology
    with pytest.raises(HelmError, match="cannot recompute"):
        render(chart, "ml", with_jobset({"roles": {"worker": {"replicas": 4}}}))


PINNED_SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: pinned, namespace: ml}
spec:
  framework: tensorflow
  image: python:3.12-slim
  command: [python, train.py, "--rank={{ index + 1 }}"]
  roles:
    ps: {replicas: 1}
    worker: {replicas: 2}
"""


def test_text_with_no_index_form_is_refused_as_the_jobset_target_refuses_it(tmp_path):
    plan = spec_plan(PINNED_SPEC)
    with pytest.raises(SpecErrors, match="TRAINSPEC_INDEX"):
        jobset.render(plan)
    chart = write_chart(plan, tmp_path / "chart")
    render(chart, "ml")  # workload jobs: per-replica Jobs express it
    with pytest.raises(HelmError, match="one JobSet pod template cannot express"):
        render(chart, "ml", JOBSET)


ALWAYS_SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: always, namespace: ml}
spec:
  framework: tensorflow
  image: python:3.12
  command: [python, train.py]
  restartPolicy: Always
  roles:
    worker: {replicas: 2}
"""


def test_restart_always_is_refused(tmp_path):
    plan = spec_plan(ALWAYS_SPEC)
    with pytest.raises(SpecErrors, match="Always"):
        jobset.render(plan)
    chart = write_chart(plan, tmp_path / "chart")
    assert {o["kind"] for o in render(chart, "ml")} >= {"StatefulSet"}  # the k8s target's, for Always
    with pytest.raises(HelmError, match=r"roles\.worker\.restartPolicy: workload jobset .* cannot use restartPolicy"):
        render(chart, "ml", JOBSET)
    # and a value set to Always on a chart compiled without it
    chart = write_chart(plan_of("tf-ps.yaml", tmp_path), tmp_path / "tfps")
    with pytest.raises(HelmError, match=r"roles\.ps\.restartPolicy: workload jobset"):
        render(chart, "ml", with_jobset({"roles": {"ps": {"restartPolicy": "Always"}}}))


PADDLE_POD_IP_SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: pip, namespace: ml}
spec:
  framework: paddle
  image: python:3.12
  command: [python, -m, paddle.distributed.launch, train.py]
  roles:
    worker: {replicas: 2, env: {POD_IP: {fieldRef: {fieldPath: status.podIP}}}}
"""


def test_a_users_pod_ip_on_a_paddle_rendezvous_role_is_refused(tmp_path):
    """workload jobset names the rendezvous role's pods by their JobSet hosts in POD_IP: a user's POD_IP there
    is refused as by the jobset target, in the spec and as a value."""
    plan = spec_plan(PADDLE_POD_IP_SPEC)
    with pytest.raises(SpecErrors, match="POD_IP is paddle.distributed.launch's node address"):
        jobset.render(plan)
    chart = write_chart(plan, tmp_path / "chart")
    render(chart, "ml")  # workload jobs: the operator's form, the pod IP in PADDLE_MASTER
    with pytest.raises(HelmError, match=r"roles\.worker\.env: workload jobset: POD_IP is paddle"):
        render(chart, "ml", JOBSET)
    chart = write_chart(plan_of("paddle-ps.yaml", tmp_path), tmp_path / "ps")
    pod_ip = {"env": [{"name": "POD_IP", "value": "10.0.0.1"}]}
    render(chart, "default", with_jobset({"roles": {"worker": pod_ip}}))  # PS workers are never the rendezvous
    with pytest.raises(HelmError, match=r"roles\.master\.env: workload jobset: POD_IP"):
        render(chart, "default", with_jobset({"roles": {"master": pod_ip}}))


def test_pod_names_the_webhook_would_refuse_are_refused(tmp_path):
    chart = write_chart(plan_of("tf-ps.yaml", tmp_path), tmp_path)
    name = "n" * 50  # n...-worker-0-2-abcde: 65 characters, while n...-worker-2 fits the jobs workload
    render(chart, "ml", {"name": name})
    with pytest.raises(HelmError, match="longer than 63 characters"):
        render(chart, "ml", with_jobset({"name": name}))


def test_workload_is_an_enum(tmp_path):
    chart = write_chart(plan_of("tf-ps.yaml", tmp_path), tmp_path)
    with pytest.raises(HelmError, match="workload"):
        render(chart, "ml", {"workload": "deployment"})


# --- generated specs: the chart's jobset workload agrees with the jobset target -----------------

def render_go_like(chart_dir: Path, namespace: str, values: dict) -> list[dict]:
    """As `render`, read as go-yaml reads it (generated text holds scalars PyYAML alone would retype)."""
    import fuzzing

    with helm_chart.Chart.load(str(chart_dir)) as chart:
        manifests = chart.render(values=values, name="release", namespace=namespace)
    return sort_objects([d for path, text in sorted(manifests.items()) if path.endswith(".yaml")
                         for d in fuzzing.parse_all(text)])


def test_generated_specs_render_the_jobset_target_or_are_refused_alike(tmp_path_factory):
    """For generated valid specs (tests/fuzzing.py), `workload: jobset` renders exactly the jobset
    target's objects, and fails exactly when the jobset target refuses the job."""
    fuzzing = pytest.importorskip("fuzzing")
    from hypothesis import HealthCheck, given, settings

    root = tmp_path_factory.mktemp("gen")
    seen = {"rendered": 0, "refused": 0}

    @settings(max_examples=30, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(doc=fuzzing.valid_specs())
    def check(doc):
        folder = root / str(sum(seen.values()))
        folder.mkdir()
        path = folder / "job.yaml"
        path.write_text(fuzzing.to_text(doc, ".yaml"), encoding="utf-8")
        outcome = fuzzing.load_outcome(str(path))
        if isinstance(outcome, SpecErrors):
            return
        for plan in outcome:
            chart = write_chart(plan, folder / plan.name)
            try:
                text = jobset.render(plan)[jobset.FILE]
            except SpecErrors:
                seen["refused"] += 1
                with pytest.raises(HelmError):
                    render_go_like(chart, plan.namespace, JOBSET)
                continue
            seen["rendered"] += 1
            want = sort_objects(fuzzing.parse_all(text))
            got = render_go_like(chart, plan.namespace, JOBSET)
            assert [(o["kind"], o["metadata"]["name"]) for o in got] == \
                [(o["kind"], o["metadata"]["name"]) for o in want]
            for g, w in zip(got, want):
                assert g == w, f"{g['kind']}: {fuzzing.first_difference(g, w)}"

    check()
    assert seen["rendered"] > 0, seen
