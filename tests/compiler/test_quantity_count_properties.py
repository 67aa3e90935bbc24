"""No exit 3 from any quantity or replica count (issue 24, priority A): property tests.

Every quantity the spec can hold (cpu, memory, shm, requests/limits, emptyDir sizeLimit, downward-API
divisors), well-formed or not, huge or tiny, either validates or is a positioned spec error; and every
replica count within each framework's limits, zero included, compiles for every target or is a spec
error (a target's own limit).  Derandomized: the same examples every run."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainspec.compiler import SpecErrors
from trainspec.compiler.kube import parse_quantity
from trainspec.compiler.model import ROLE_LIMITS
from trainspec.targets import render

from helpers import plan_text

TARGETS = ("k8s", "kubeflow", "volcano", "jobset", "trainjob", "compose", "helm")
SUFFIXES = ("", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
SETTINGS = settings(max_examples=60, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

numbers = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.decimals(allow_nan=False, allow_infinity=False, places=4).map(str),
    st.tuples(st.integers(0, 10**6), st.sampled_from(["e", "E"]), st.integers(-(10**12), 10**12))
    .map(lambda t: f"{t[0]}{t[1]}{t[2]}"),
)
quantities = st.one_of(
    st.tuples(numbers, st.sampled_from(SUFFIXES)).map("".join),
    st.text(max_size=40),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.just("1e999999999"), st.just("9" * 5000), st.just("1E"), st.just("0.000000001n"),
)


def _spec(framework: str, roles: dict, resources: dict | None = None, env: dict | None = None) -> str:
    spec = {"apiVersion": "trainspec/v1.1", "kind": "TrainingJob", "metadata": {"name": "prop"},
            "spec": {"framework": framework, "image": "r.example.com/t:1", "command": ["python", "t.py"],
                     "env": env or {}, "roles": {name: {"replicas": count, "resources": resources or {}}
                                                for name, count in roles.items()}}}
    return yaml.safe_dump(spec, sort_keys=False)


def _load(text: str, targets=None):
    return plan_text(text, targets)


@SETTINGS
@given(value=quantities, field=st.sampled_from(["cpu", "memory", "shm", "requests", "limits", "divisor"]))
def test_any_quantity_validates_or_is_a_spec_error(value, field):
    resources: dict = {}
    env: dict = {}
    if field in ("cpu", "memory", "shm"):
        resources[field] = value
    elif field == "divisor":
        env["MEM"] = {"resourceFieldRef": {"resource": "limits.memory", "divisor": value}}
    else:
        resources[field] = {"example.com/dev": value, "memory": value}
    try:
        plans = _load(_spec("pytorch", {"master": 1, "worker": 1}, resources, env))
    except SpecErrors as exc:
        assert all(error.line >= 1 and error.path for error in exc.errors), str(exc)
        return
    (plan,) = plans
    for role in plan.roles:  # what validate let through is a quantity parse_quantity reads quickly
        for _name, text in role.resources.requests + role.resources.limits:
            parse_quantity(text)


@SETTINGS
@given(data=st.data(), framework=st.sampled_from(sorted(ROLE_LIMITS)))
def test_any_replica_count_compiles_for_every_target_or_is_a_spec_error(data, framework):
    roles = {}
    for name, (low, high) in ROLE_LIMITS[framework].items():
        roles[name] = data.draw(st.integers(low, min(high if high is not None else 6, 6)), label=name)
    text = _spec(framework, roles)
    try:
        _load(text)
    except SpecErrors:
        return
    for target in TARGETS:
        try:
            (plan,) = _load(text, targets=(target,))
        except SpecErrors as exc:  # a target that cannot carry it says so at a field
            assert all(error.line >= 1 for error in exc.errors), str(exc)
            continue
        files = render(target, plan)
        assert files and all(files.values()), (target, roles)


def test_every_role_that_may_have_zero_replicas_compiles_with_zero_for_every_target():
    """xgboost with `worker.replicas: 0` raised IndexError in the volcano target (exit 3)."""
    for framework, limits in ROLE_LIMITS.items():
        for zero in (name for name, (low, _) in limits.items() if low == 0):
            roles = {name: (0 if name == zero else max(low, 1)) for name, (low, _) in limits.items()}
            text = _spec(framework, roles)
            try:
                _load(text)
            except SpecErrors:
                continue
            for target in TARGETS:
                try:
                    (plan,) = _load(text, targets=(target,))
                except SpecErrors:
                    continue
                assert render(target, plan), (framework, roles, target)


def test_a_huge_exponent_is_refused_before_any_arithmetic():
    import time

    started = time.monotonic()
    for value in ("1e999999999", "1E-999999999", "9" * 100_000, "1e31"):
        try:
            _load(_spec("pytorch", {"master": 1, "worker": 1}, {"cpu": value}))
        except SpecErrors as exc:
            assert "spec.roles" in str(exc)
        else:
            raise AssertionError(f"{value[:20]} accepted")
    assert time.monotonic() - started < 5
