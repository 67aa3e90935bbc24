"""Limits a cluster (or Linux, or Compose) enforces (issue 15): refused at compile time with the
number that breaks them, at the field that causes them, instead of failing at run time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from trainspec.compiler import SpecErrors, limits, plan_limits
from trainspec.targets import TARGETS, load_plans, render, rules
from trainspec.targets.compose import checks as compose_checks

from helpers import run_cli


def _spec(tmp_path, framework: str = "tensorflow", workers: int = 2, extra: dict | None = None,
          name: str = "big") -> str:
    roles = {"worker": {"replicas": workers}} if framework == "tensorflow" else \
        {"master": {"replicas": 1}, "worker": {"replicas": workers}}
    doc = {"apiVersion": "trainspec/v1", "kind": "TrainingJob", "metadata": {"name": name},
           "spec": {"framework": framework, "image": "busybox", "command": ["python", "train.py"], "roles": roles}}
    for key, value in (extra or {}).items():
        target = doc
        *parents, last = key.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = value
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def _check_error(path: str, target: str) -> str:
    (plan,) = load_plans(path)
    with pytest.raises(SpecErrors) as info:
        plan.check(target)
    return str(info.value)


def _position(path: str, key: str) -> str:
    """`file:line:col` of the value of the first line containing `key:`."""
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if f"{key}:" in line:
            return f"{path}:{number}:{line.index(key + ':') + len(key) + 3}"
    raise AssertionError(key)


def _load_error(path: str) -> str:
    with pytest.raises(SpecErrors) as info:
        load_plans(path)
    return str(info.value)


def test_tf_config_over_max_arg_strlen_is_a_validation_error(tmp_path):
    """Linux's limit holds for every target (and `trainspec run`), so `load_plans` reports it."""
    path = _spec(tmp_path, workers=6000)
    text = _load_error(path)
    assert text.startswith(_position(path, "replicas") + ": spec.roles.worker.replicas: "), text
    assert "TF_CONFIG of big-worker-5999 is" in text and "over Linux's 131072 bytes" in text
    assert "expected at most about 57" in text and "no target avoids this" in text
    assert text.count("\n") == 0  # one error for the replica count, naming the other variables
    result = run_cli("validate", path)
    assert result.returncode == 2 and "TF_CONFIG" in result.stderr and "Traceback" not in result.stderr


def test_tf_config_just_under_the_limit_compiles(tmp_path):
    (plan,) = load_plans(_spec(tmp_path, workers=5700))
    assert plan_limits.exec_string_problems(plan) == []
    env = dict(limits_resolved(plan))
    assert len(("TF_CONFIG=" + env["TF_CONFIG"]).encode()) + 1 <= limits.MAX_ARG_STRLEN


def limits_resolved(plan):
    from trainspec.compiler.plan import resolved_env

    return resolved_env(plan, plan.roles[0].replicas[-1])


def test_host_list_over_max_arg_strlen_is_refused(tmp_path):
    path = _spec(tmp_path, "pytorch", workers=7000)
    text = _load_error(path)
    assert "with 7000 worker replicas, TRAINSPEC_HOSTS_WORKER" in text and "at most about" in text


def test_long_literal_env_value_is_refused_at_its_field(tmp_path):
    path = _spec(tmp_path, extra={"spec.env": {"BLOB": "x" * (130 * 1024)}})
    text = _load_error(path)
    assert text.startswith(_position(path, "BLOB") + ": spec.env.BLOB: "), text
    assert "environment variable BLOB of big-worker-0 is 133126 bytes" in text
    ok = _spec(tmp_path, extra={"spec.env": {"BLOB": "x" * (128 * 1024 - 7)}}, name="ok")
    (plan,) = load_plans(ok)
    assert rules("k8s").limits(plan) == []


def test_multibyte_text_counts_in_bytes(tmp_path):
    path = _spec(tmp_path, extra={"spec.roles.worker.args": ["é" * 70_000]})
    text = _load_error(path)
    assert "spec.roles.worker.args[0]: " in text and "args[0] of big-worker-0 is 140001 bytes" in text


def test_annotations_over_256_kib_are_refused_for_kubernetes_targets(tmp_path):
    path = _spec(tmp_path, extra={"metadata.annotations": {f"example.com/a{i}": "v" * 1000 for i in range(300)}})
    text = _check_error(path, "volcano")
    assert text.startswith(_position(path, "annotations").rsplit(":", 1)[0])
    assert "metadata.annotations: " in text and "more than 262144 bytes" in text and "compose has no such" in text
    (plan,) = load_plans(path)
    assert rules("compose").limits(plan) == []


def test_topology_config_map_over_1_mib(tmp_path, monkeypatch):
    (plan,) = load_plans(_spec(tmp_path, "pytorch", workers=200))
    size = sum(len(v) for v in plan.topology.values())
    monkeypatch.setattr(plan_limits, "CONFIG_MAP_MAX_BYTES", size - 1)  # the checks' copy of the number
    (problem,) = rules("k8s").limits(plan)
    assert f"holds {size} bytes of data" in problem.message and "kubeflow and volcano keep only" in problem.hint
    assert rules("compose").limits(plan) == []


def test_topology_config_map_at_real_size(tmp_path, monkeypatch):
    """The k8s topology ConfigMap of a 30,000-replica TensorFlow job is over 1 MiB (such a job is
    refused earlier, for its environment: the check is a second line)."""
    assert "MAX_ARG_STRLEN" in _load_error(_spec(tmp_path, workers=30_000))
    monkeypatch.setattr(plan_limits, "report", lambda plan, sink: None)
    (plan,) = load_plans(_spec(tmp_path, workers=30_000))
    (problem,) = plan_limits.config_map_size(plan)  # the k8s target's: the whole topology
    assert "over the 1048576 bytes (1 MiB)" in problem.message
    assert plan_limits.config_map_size(plan, limits.HOST_LISTS) == []  # kubeflow's and volcano's: host lists only


def test_compose_refuses_a_file_over_64_mib_before_rendering(tmp_path):
    path = _spec(tmp_path, workers=1100)
    text = _check_error(path, "compose")
    assert "compose.yaml would be about" in text and "over the 64 MiB" in text
    assert "expected at most about 10" in text and "compile this job for k8s" in text
    (plan,) = load_plans(path)
    assert rules("k8s").limits(plan) == []


def test_compose_size_estimate_is_close(tmp_path):
    (plan,) = load_plans(_spec(tmp_path, workers=300))
    actual = sum(len(text.encode()) for text in render("compose", plan).values())
    estimate = compose_checks.size_estimate(plan)
    assert 0.9 * actual <= estimate <= 1.2 * actual, (estimate, actual)


def test_cli_compile_and_build_exit_2_and_write_nothing(tmp_path):
    path = _spec(tmp_path, workers=1100)
    out = tmp_path / "compose.yaml"
    result = run_cli("compile", path, "-t", "compose", "-o", str(out))
    assert result.returncode == 2 and "Traceback" not in result.stderr and "over the 64 MiB" in result.stderr
    assert not out.exists()
    build = run_cli("build", path, "-o", str(tmp_path / "out"), "--target", "k8s", "--target", "compose")
    assert build.returncode == 2 and "over the 64 MiB" in build.stderr
    assert not (tmp_path / "out" / "big").exists()
    assert run_cli("compile", path, "-t", "k8s", "-o", str(tmp_path / "k8s.yaml")).returncode == 0


def test_checks_are_quiet_for_the_example_specs():
    from helpers import SPECS

    for spec in sorted(SPECS.glob("*.yaml")):
        for plan in load_plans(str(spec)):
            for target in TARGETS:  # each target's own limits too (compose file size, TrainJob CRD, Volcano size)
                assert rules(target).limits(plan) == [], (spec, target)
    assert json.dumps(compose_checks.COMPOSE_MAX_BYTES) == str(64 << 20)
