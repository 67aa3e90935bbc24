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
from trainspec.targets.k8s.scheme import INDEXED, SHELL

from helpers import ROOT, SPECS, on_runtime, run_cli

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
    return values | _prelude_exports(container.get("command"), values)


def _prelude_exports(command: list[str] | None, env: dict[str, str]) -> dict[str, str]:
    """What a rank prelude (scheme.py) exports before it execs the command: run by a real /bin/sh, with the
    command the kubelet expanded, and the environment the container starts with."""
    if not command or tuple(command[:2]) != SHELL:
        return {}
    argv = [expand_references(word, env) for word in command[:3]]
    result = subprocess.run([*argv, "env"], env=env, capture_output=True, text=True, check=True, timeout=30)
    out = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    return {k: v for k, v in out.items() if env.get(k) != v and k not in ("PWD", "SHLVL", "_")}


INDEX_PATHS = ("metadata.annotations['batch.kubernetes.io/job-completion-index']",
               "metadata.labels['apps.kubernetes.io/pod-index']")
# Paddle's rendezvous role of several replicas: each names itself by its host (as on the jobset target)
OWN_HOST = ("POD_IP", "PADDLE_MASTER")


def _workload_of(plan, workloads: dict, replica) -> dict:
    """The replica's own object (a role that one template cannot serve) or its role's Indexed Job."""
    base = f"{plan.name}-{plan.role(replica.role).task}"
    return workloads.get(f"{base}-{replica.index}") or workloads[base]


# a job on a Trainer runtime: its k8s output is the runtime's expansion (PET_*...), not the plan's roles
# (tests/compiler/test_runtime_expansion.py, test_shipped_runtimes.py)
@pytest.mark.parametrize("spec", [s for s in EXAMPLES if not on_runtime(SPECS / s)])
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


# --- issue 31: every framework's k8s output grows with roles, not replicas ------------------------------

FRAMEWORK_ROLES = {"tensorflow": {"ps": 2, "worker": None}, "pytorch": {"master": 1, "worker": None},
                   "mxnet": {"scheduler": 1, "server": 2, "worker": None}, "mpi": {"launcher": 1, "worker": None},
                   "xgboost": {"master": 1, "worker": None}, "paddle": {"master": 1, "worker": None},
                   "jax": {"worker": None}, "generic": {"coordinator": 1, "trainer": None}}


def _framework_job(tmp_path, framework: str, workers: int, command: bool = True) -> str:
    roles = {role: {"replicas": workers if n is None else n} for role, n in FRAMEWORK_ROLES[framework].items()}
    spec = {"apiVersion": "trainspec/v1.2", "kind": "TrainingJob", "metadata": {"name": "scale"},
            "spec": {"framework": framework, "image": "img:1", "roles": roles}}
    if command:
        spec["spec"]["command"] = ["python", "train.py"]
    path = tmp_path / f"{framework}-{workers}-{command}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return str(path)


@pytest.mark.parametrize("framework", sorted(FRAMEWORK_ROLES))
def test_a_1024_worker_job_is_at_most_2_objects_per_role_plus_2_and_linear(tmp_path, framework):
    """Issue 31's Done-when at the default --kube-version: <= 2 objects per role + 2 (here: one per role + the
    ConfigMap and the Service), and bytes per replica at 1,024 workers at most 1.2x those at 16."""
    sizes = []
    for workers in (16, 1024):
        (plan,) = load_plans(_framework_job(tmp_path, framework, workers))
        assert plan.kube_version == (1, 30)  # the default
        text = k8s.render(plan)[k8s.FILE]
        docs = [d for d in yaml.safe_load_all(text) if d]
        roles = [r for r in plan.roles if r.count]
        assert len(docs) <= 2 * len(roles) + 2, [d["metadata"]["name"] for d in docs]
        assert len(docs) == len(roles) + 2
        sizes.append(len(text.encode()) / plan.total_replicas)
    assert sizes[1] <= 1.2 * sizes[0], sizes


@pytest.mark.parametrize("framework", ["pytorch", "xgboost"])
def test_ranked_workers_are_one_indexed_job_under_a_rank_prelude(tmp_path, framework):
    """PyTorch / XGBoost worker i has RANK i + 1 from one pod template: a /bin/sh prelude execs the command."""
    from trainspec.targets.k8s.scheme import RANK_VARIABLES, strip_rank_prelude

    (plan,) = load_plans(_framework_job(tmp_path, framework, 4))
    docs = [d for d in yaml.safe_load_all(k8s.render(plan)[k8s.FILE]) if d]
    (worker,) = [d for d in docs if d["metadata"]["name"] == "scale-worker"]
    assert worker["spec"]["completions"] == 4 and worker["spec"]["completionMode"] == "Indexed"
    container = worker["spec"]["template"]["spec"]["containers"][0]
    assert strip_rank_prelude(container["command"], framework) == ["python", "train.py"]
    assert not {e["name"] for e in container["env"]} & set(RANK_VARIABLES[framework])  # nothing to contradict
    for index in range(4):
        env = _kubelet_env(worker, {}, index)
        assert {name: env[name] for name in RANK_VARIABLES[framework]} == dict.fromkeys(
            RANK_VARIABLES[framework], str(index + 1))
    master = next(d for d in docs if d["metadata"]["name"] == "scale-master")
    assert master["spec"]["template"]["spec"]["containers"][0]["command"] == ["python", "train.py"]


@pytest.mark.parametrize("framework", ["pytorch", "xgboost"])
def test_ranked_workers_with_no_command_stay_a_job_each_and_compile_says_so(tmp_path, framework):
    """The image's entry point: nothing for the prelude to exec, so a one-pod Job per replica (RANK written in
    each), and a warning at the role naming the fix; the output stays linear, one Job more per replica."""
    path = _framework_job(tmp_path, framework, 3, command=False)
    result = run_cli("compile", path, "--target", "k8s")
    assert result.returncode == 0, result.stderr
    (warning,) = [line for line in result.stderr.splitlines() if "one-pod Jobs" in line]
    assert warning.startswith(f"trainspec: warning: {path}:") and "spec.roles.worker: target k8s:" in warning
    assert "set command to the image's entry point to get one Indexed Job" in warning
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    workers = [d for d in docs if d["metadata"]["name"].startswith("scale-worker")]
    assert [d["metadata"]["name"] for d in workers] == [f"scale-worker-{i}" for i in range(3)]
    for i, job in enumerate(workers):
        container = job["spec"]["template"]["spec"]["containers"][0]
        assert "command" not in container
        assert {e["name"]: e.get("value") for e in container["env"]}["RANK"] == str(i + 1)
    with_command = run_cli("compile", _framework_job(tmp_path, framework, 3), "--target", "k8s")
    assert "one-pod Jobs" not in with_command.stderr


def test_a_rank_variable_the_spec_sets_keeps_the_specs_value(tmp_path):
    """The user's RANK wins (as on every target): the prelude sets only PET_NODE_RANK; both set: no prelude."""
    spec = yaml.safe_load(open(_framework_job(tmp_path, "pytorch", 3)))
    spec["spec"]["env"] = {"RANK": "7"}
    path = tmp_path / "user-rank.yaml"
    path.write_text(yaml.safe_dump(spec))
    (plan,) = load_plans(str(path))
    (worker,) = [d for d in yaml.safe_load_all(k8s.render(plan)[k8s.FILE]) if d and d["metadata"]["name"] ==
                 "scale-worker"]
    env = _kubelet_env(worker, {}, 2)
    assert (env["RANK"], env["PET_NODE_RANK"]) == ("7", "3")
    spec["spec"]["env"] = {"RANK": "7", "PET_NODE_RANK": "7"}
    path.write_text(yaml.safe_dump(spec))
    (plan,) = load_plans(str(path))
    (worker,) = [d for d in yaml.safe_load_all(k8s.render(plan)[k8s.FILE]) if d and d["metadata"]["name"] ==
                 "scale-worker"]
    assert worker["spec"]["template"]["spec"]["containers"][0]["command"] == ["python", "train.py"]


def test_the_prelude_survives_kubelet_expansion_and_execs_the_exact_argv(tmp_path):
    """`$$` is the kubelet's escape (k8s third_party/forked/golang/expansion): expanded, the script is the shell
    text; run by a real /bin/sh it execs command + args with every word intact ($, spaces, quotes, `$(X)`)."""
    from trainspec.targets.k8s.scheme import RANK_SCRIPT, rank_script

    script = rank_script(("RANK",))
    assert expand_references(script, {"TRAINSPEC_INDEX": "5", "RANK": "x"}) == RANK_SCRIPT.format(
        exports="RANK=$((TRAINSPEC_INDEX + 1))")
    tricky = ["a b", "$HOME", "'q'", '"dq"', "$(X)", "", "-c"]
    spec = yaml.safe_load(open(_framework_job(tmp_path, "xgboost", 2)))
    spec["spec"]["command"] = ["printf", "[%s]\\n", "--"]
    spec["spec"]["args"] = tricky
    path = tmp_path / "argv.yaml"
    path.write_text(yaml.safe_dump(spec))
    (plan,) = load_plans(str(path))
    (worker,) = [d for d in yaml.safe_load_all(k8s.render(plan)[k8s.FILE]) if d and d["metadata"]["name"] ==
                 "scale-worker"]
    container = worker["spec"]["template"]["spec"]["containers"][0]
    env = {"TRAINSPEC_INDEX": "1", "PATH": "/usr/bin:/bin", "X": "expanded"}
    argv = [expand_references(w, env) for w in container["command"] + container["args"]]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True, timeout=30).stdout
    assert out.splitlines() == [f"[{word}]" for word in ["--", *tricky]]
