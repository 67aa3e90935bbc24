"""The k8s target: strict Kubernetes schemas, linear size, deterministic bytes, $(VAR) safety."""

from __future__ import annotations

import re
import subprocess
import sys

import kubernetes_validate
import pytest
import yaml

from trainspec.compiler.plan import expand_references, resolved_env
from trainspec.compiler.schemes import SERVICE
from trainspec.targets import load_plans
from trainspec.targets.k8s import render as k8s
from trainspec.targets.k8s.scheme import INDEXED

from helpers import ROOT, SPECS, run_cli

EXAMPLES = sorted(p.name for p in SPECS.glob("*.yaml"))


@pytest.mark.parametrize("spec", EXAMPLES)
@pytest.mark.parametrize("version", ["1.30", "1.31"])
def test_k8s_output_is_valid_kubernetes_strict(spec, version):
    for plan in load_plans(str(SPECS / spec)):
        text = k8s.render(plan)[k8s.FILE]
        docs = list(yaml.safe_load_all(text))
        assert docs
        for doc in docs:
            kubernetes_validate.validate(doc, version, strict=True)


def _kubelet_env(doc: dict, config_maps: dict, index: int = 0) -> dict[str, str]:
    """What the kubelet would put in the main container of pod `index` (dependent variables expanded;
    the completion index / pod ordinal the downward API gives that pod)."""
    container = doc["spec"]["template"]["spec"]["containers"][0]
    values: dict[str, str] = {}
    for entry in container.get("env", []):
        if "value" in entry:
            values[entry["name"]] = expand_references(entry["value"], values)
        elif "configMapKeyRef" in entry["valueFrom"]:
            ref = entry["valueFrom"]["configMapKeyRef"]
            if ref["name"] in config_maps:
                values[entry["name"]] = config_maps[ref["name"]][ref["key"]]
        elif entry["valueFrom"].get("fieldRef", {}).get("fieldPath") in INDEX_PATHS:
            values[entry["name"]] = str(index)
    return values


INDEX_PATHS = ("metadata.annotations['batch.kubernetes.io/job-completion-index']",
               "metadata.labels['apps.kubernetes.io/pod-index']")
# Paddle's rendezvous role of several replicas: each names itself by its host (as on the jobset target)
OWN_HOST = ("POD_IP", "PADDLE_MASTER")


def _workload_of(plan, workloads: dict, replica) -> dict:
    """The replica's own object (a role that one template cannot serve) or its role's Indexed Job."""
    base = f"{plan.name}-{plan.role(replica.role).task}"
    return workloads.get(f"{base}-{replica.index}") or workloads[base]


@pytest.mark.parametrize("spec", EXAMPLES)
def test_manifest_env_after_kubelet_expansion_is_the_plan_env(spec):
    """Each pod's environment, as the kubelet expands it for its index, is the plan's for that replica
    with the hosts the k8s target names (`<job>-<role>-<i>.<job>`, scheme.py)."""
    for plan in load_plans(str(SPECS / spec)):
        docs = list(yaml.safe_load_all(k8s.render(plan)[k8s.FILE]))
        config_maps = {d["metadata"]["name"]: d["data"] for d in docs if d["kind"] == "ConfigMap"}
        workloads = {d["metadata"]["name"]: d for d in docs if d["kind"] in ("Job", "StatefulSet", "Deployment")}
        services = {r: h for r, hs in plan.hosts(SERVICE).items() for h in hs}
        indexed = {r: h for r, hs in plan.hosts(INDEXED).items() for h in hs}
        old = [h.rsplit(":", 1)[0] for hs in plan.hosts(SERVICE).values() for h in hs]
        new = [h.rsplit(":", 1)[0] for hs in plan.hosts(INDEXED).values() for h in hs]
        assert services.keys() == indexed.keys()
        rename = dict(zip(old, new, strict=True))
        pattern = re.compile("|".join(sorted(map(re.escape, rename), key=len, reverse=True)) + r"(?![\w.-])")
        for replica in plan.replicas():
            role = plan.role(replica.role)
            user = {var.name: var.value for var in role.renders[INDEXED.name].of(replica.index).env
                    if var.value is not None}
            expected = {k: user.get(k, pattern.sub(lambda m, r=rename: r[m.group(0)], v))
                        for k, v in resolved_env(plan, replica) if isinstance(v, str)}
            got = _kubelet_env(_workload_of(plan, workloads, replica), config_maps, replica.index)
            if plan.framework == "paddle":
                got = {k: v for k, v in got.items() if k not in OWN_HOST}
                expected = {k: v for k, v in expected.items() if k not in OWN_HOST}
            assert got == expected, replica.name


def test_output_objects_grow_with_roles_not_replicas(tmp_path):
    """Issue 31: a ConfigMap and a headless Service per job, one Indexed Job per role; pods named as
    replicas always were, under the job's Service."""
    text = _big_tf_job(tmp_path, 1024)
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("ConfigMap", "big-topology"), ("Service", "big"), ("Job", "big-ps"), ("Job", "big-worker")]
    worker = docs[3]["spec"]
    assert (worker["completionMode"], worker["completions"], worker["parallelism"]) == ("Indexed", 1024, 1024)
    assert worker["template"]["spec"]["subdomain"] == "big" and docs[1]["spec"]["clusterIP"] == "None"
    assert docs[0]["data"]["TRAINSPEC_HOSTS_WORKER"].split(",")[1023] == "big-worker-1023.big:2222"


def test_dollar_text_survives_kubelet_expansion(tmp_path):
    spec = tmp_path / "job.yaml"
    tricky = ["$(HOME)", "$$(X)", "a$$b", "cost $5", "$", "$(unterminated", "echo $((1+2))"]
    spec.write_text(f"""\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {{name: dollars}}
spec:
  framework: pytorch
  image: pt:1
  command: {tricky!r}
  env: {{HOME: /root, X: x, PRICE: "$(HOME) $$"}}
  roles: {{master: {{replicas: 1}}}}
""")
    (plan,) = load_plans(str(spec))
    docs = list(yaml.safe_load_all(k8s.render(plan)[k8s.FILE]))
    job = next(d for d in docs if d["kind"] == "Job")
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = _kubelet_env(job, {})
    assert [expand_references(a, env) for a in container["command"]] == tricky
    assert env["PRICE"] == "$(HOME) $$"


def test_restart_policies_map_to_workloads(tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_text("""\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: rp}
spec:
  framework: tensorflow
  image: tf:1
  backoffLimit: 5
  roles:
    chief: {replicas: 1, restartPolicy: ExitCode}
    ps: {replicas: 1, restartPolicy: Always}
    worker: {replicas: 1, restartPolicy: OnFailure}
    evaluator: {replicas: 1, restartPolicy: Never}
""")
    (plan,) = load_plans(str(spec))
    docs = {d["metadata"]["name"]: d for d in yaml.safe_load_all(k8s.render(plan)[k8s.FILE])
            if d["kind"] != "Service"}
    ps = docs["rp-ps"]
    assert ps["kind"] == "StatefulSet" and ps["spec"]["serviceName"] == "rp"  # pods rp-ps-<i>, restarted always
    assert ps["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    assert ps["spec"]["podManagementPolicy"] == "Parallel"
    chief = docs["rp-chief"]["spec"]
    # ExitCode: retriable codes per index (the backoff each replica's own Job had), permanent ones fail the Job
    assert chief["template"]["spec"]["restartPolicy"] == "Never" and chief["backoffLimitPerIndex"] == 5
    rule = chief["podFailurePolicy"]["rules"][0]
    assert rule["action"] == "FailJob" and rule["onExitCodes"]["values"] == list(range(1, 128))
    worker = docs["rp-worker"]["spec"]
    assert worker["template"]["spec"]["restartPolicy"] == "OnFailure" and worker["backoffLimit"] == 5
    evaluator = docs["rp-evaluator"]["spec"]
    assert evaluator["template"]["spec"]["restartPolicy"] == "Never" and evaluator["backoffLimitPerIndex"] == 0
    assert "backoffLimit" not in evaluator  # per index: one replica's failure does not fail the others


def test_every_object_and_pod_has_the_labels(tmp_path):
    (plan,) = load_plans(str(SPECS / "tf-ps.yaml"))
    for doc in yaml.safe_load_all(k8s.render(plan)[k8s.FILE]):
        labels = doc["metadata"]["labels"]
        assert labels["app.kubernetes.io/managed-by"] == "trainspec"
        assert labels["trainspec.dev/job"] == "tf-ps" and labels["team"] == "vision"
        for key in ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/part-of"):
            assert labels[key] == "tf-ps"
        if doc["kind"] == "Job":
            pod = doc["spec"]["template"]["metadata"]["labels"]
            role = doc["metadata"]["name"].split("-")[-1]
            assert pod["trainspec.dev/role"] == role and "trainspec.dev/index" not in pod  # one template per role
            assert pod["app.kubernetes.io/component"] == role


def _big_tf_job(tmp_path, workers: int) -> str:
    spec = tmp_path / f"big{workers}.yaml"
    spec.write_text(f"""\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {{name: big}}
spec:
  framework: tensorflow
  image: tf:1
  roles: {{ps: {{replicas: 4}}, worker: {{replicas: {workers}}}}}
""")
    (plan,) = load_plans(str(spec))
    return k8s.render(plan)[k8s.FILE]


def test_output_grows_linearly_with_replicas(tmp_path):
    small, large = _big_tf_job(tmp_path, 100), _big_tf_job(tmp_path, 1000)
    # 900 more workers: one host:port each in the ConfigMap's lists, no object per worker
    per_worker_small = len(small) / 104
    per_worker_large = len(large) / 1004
    assert per_worker_large < per_worker_small * 1.2, (per_worker_small, per_worker_large)
    assert large.count("big-worker-999.big:2222") == 2, "the host list is written once (plus the TF cluster)"


def test_same_spec_same_bytes_across_processes(tmp_path):
    outputs = []
    for seed in ("0", "12345"):
        out = tmp_path / f"out{seed}"
        # --runtime: specs/torch-on-runtime.yaml names a Trainer runtime, whose definition the k8s target needs
        result = run_cli("build", str(SPECS), "-o", str(out), "--target", "k8s", "--runtime",
                         str(SPECS.parent / "tests" / "data" / "runtimes"), env={"PYTHONHASHSEED": seed})
        assert result.returncode == 0, result.stderr
        outputs.append({p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    assert outputs[0] == outputs[1] and outputs[0]


def test_compile_path_imports_no_docker_or_kubernetes_client():
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "trainspec", "compile",
                             str(SPECS / "tf-ps.yaml"), "--target", "k8s"],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    modules = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "yaml" in modules, "the import-time report was read"
    heavy = {m for m in modules if m.split(".")[0] in ("docker", "kubernetes", "kubernetes_validate")}
    assert not heavy, heavy


@pytest.mark.parametrize("version, rule", [("1.30", None), ("1.31", {"succeededIndexes": "0"}),
                                           ("1.36", {"succeededIndexes": "0"})])
def test_worker_0_decides_through_the_jobs_success_policy_from_1_31(version, rule):
    """TF ps + workers, no chief: worker 0 decides.  From 1.31 (JobSuccessPolicy on by default) the worker Job succeeds
    with index 0; on 1.30 the Job waits for every worker and the rule is only the run-policy annotation's."""
    (plan,) = load_plans(str(SPECS / "tf-ps.yaml"), kube_version=version)
    docs = [d for d in yaml.safe_load_all(k8s.render(plan)[k8s.FILE]) if d]
    worker = next(d for d in docs if d["metadata"]["name"].endswith("-worker"))
    assert worker["spec"].get("successPolicy") == (None if rule is None else {"rules": [rule]})
    assert '"success":{"index":0,"role":"worker","scope":"one"}' in docs[0]["metadata"]["annotations"][
        "trainspec.dev/run-policy"]
    for doc in docs:
        kubernetes_validate.validate(doc, version, strict=True)
