"""The k8s target: strict Kubernetes schemas, linear size, deterministic bytes, $(VAR) safety."""

from __future__ import annotations

import subprocess
import sys

import kubernetes_validate
import pytest
import yaml

from trainspec.compiler.plan import expand_references, resolved_env
from trainspec.targets import load_plans
from trainspec.targets.k8s import render as k8s

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


def _kubelet_env(doc: dict, config_maps: dict) -> dict[str, str]:
    """What the kubelet would put in the main container's environment (dependent variables expanded)."""
    container = doc["spec"]["template"]["spec"]["containers"][0]
    values: dict[str, str] = {}
    for entry in container.get("env", []):
        if "value" in entry:
            values[entry["name"]] = expand_references(entry["value"], values)
        elif "configMapKeyRef" in entry["valueFrom"]:
            ref = entry["valueFrom"]["configMapKeyRef"]
            if ref["name"] in config_maps:
                values[entry["name"]] = config_maps[ref["name"]][ref["key"]]
    return values


@pytest.mark.parametrize("spec", EXAMPLES)
def test_manifest_env_after_kubelet_expansion_is_the_plan_env(spec):
    for plan in load_plans(str(SPECS / spec)):
        docs = list(yaml.safe_load_all(k8s.render(plan)[k8s.FILE]))
        config_maps = {d["metadata"]["name"]: d["data"] for d in docs if d["kind"] == "ConfigMap"}
        workloads = {d["metadata"]["name"]: d for d in docs if d["kind"] in ("Job", "Deployment")}
        assert set(workloads) == {r.name for r in plan.replicas()}
        for replica in plan.replicas():
            expected = {k: v for k, v in resolved_env(plan, replica) if isinstance(v, str)}
            assert _kubelet_env(workloads[replica.name], config_maps) == expected


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
    assert docs["rp-ps-0"]["kind"] == "Deployment"
    assert docs["rp-ps-0"]["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    chief = docs["rp-chief-0"]["spec"]
    assert chief["template"]["spec"]["restartPolicy"] == "Never" and chief["backoffLimit"] == 5
    rule = chief["podFailurePolicy"]["rules"][0]
    assert rule["action"] == "FailJob" and rule["onExitCodes"]["values"] == list(range(1, 128))
    worker = docs["rp-worker-0"]["spec"]
    assert worker["template"]["spec"]["restartPolicy"] == "OnFailure" and worker["backoffLimit"] == 5
    evaluator = docs["rp-evaluator-0"]["spec"]
    assert evaluator["template"]["spec"]["restartPolicy"] == "Never" and evaluator["backoffLimit"] == 0


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
            role, index = doc["metadata"]["name"].split("-")[-2:]
            assert pod["trainspec.dev/role"] == role and pod["trainspec.dev/index"] == index
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
    # 900 more workers; one host:port per worker in the ConfigMap and one Job+Service each.
    per_worker_small = len(small) / 104
    per_worker_large = len(large) / 1004
    assert per_worker_large < per_worker_small * 1.25, (per_worker_small, per_worker_large)
    assert large.count("big-worker-999:2222") == 2, "the host list is written once (plus the TF cluster)"


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
