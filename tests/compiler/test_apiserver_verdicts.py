"""The API server's verdicts on spec mutations (tests/data/apiserver_verdicts.yaml), checked against
`trainspec validate` and every target's output, per Kubernetes version (compiler/kube_rules.py).

Each verdict is written down from the upstream validation code and its tests (the data names them):
validate must refuse what the server refuses, with the server's wording, and accept what it accepts,
and every target must then compile the accepted spec (or refuse it where the data says that target
cannot carry it)."""

from __future__ import annotations

import copy

import pytest
import yaml

from trainspec.compiler import SpecErrors
from trainspec.compiler.kube_rules import KUBE_VERSIONS
from trainspec.targets import load_plans, render

from helpers import ROOT

DATA = yaml.safe_load((ROOT / "tests" / "data" / "apiserver_verdicts.yaml").read_text())
TARGETS = ("k8s", "kubeflow", "volcano", "jobset", "trainjob", "compose", "helm")


def _value(value):
    """A value, or a generated one: {repeat: X, times: N} is a list; {repeat300k: X} a 300 KiB string."""
    if isinstance(value, dict) and set(value) == {"repeat", "times"}:
        return [value["repeat"]] * value["times"]
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)).startswith("repeat"):
        key, text = next(iter(value.items()))
        return text * (int(key[len("repeat"):-1]) * 1024)
    if isinstance(value, dict):
        return {k: _value(v) for k, v in value.items()}
    return value


def _spec(case: dict) -> dict:
    spec = copy.deepcopy(DATA["bases"][case["base"]])
    writes = []
    for path, value in case["set"]:  # "*" in a path: every role of the base
        roles = spec["spec"]["roles"] if "*" in path else {"": None}
        writes += [([role if key == "*" else key for key in path], value) for role in roles]
    for path, value in writes:
        node = spec
        for key in path[:-1]:
            node = node.setdefault(key, {})
        if value is None:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = _value(value)
    return spec


def _holds(case: dict, version: str) -> bool:
    """Whether the case's verdict holds at `version` (else the opposite one does)."""
    spec = case.get("versions")
    if not spec:
        return True
    low, _, high = spec.partition("..")
    key = [int(p) for p in version.split(".")]
    return (not low or key >= [int(p) for p in low.split(".")]) and (not high or key <= [int(p) for p in
                                                                                          high.split(".")])


def _versions(case: dict) -> tuple[str, ...]:
    return KUBE_VERSIONS if case.get("versions") else (KUBE_VERSIONS[0], KUBE_VERSIONS[-1])


def _messages(exc: SpecErrors) -> str:
    return "\n".join(error.format() for error in exc.errors)


CASES = [(case, version) for case in DATA["cases"] for version in _versions(case)]


def test_every_case_names_its_upstream_source():
    names = [case["name"] for case in DATA["cases"]]
    assert len(names) == len(set(names))
    for case in DATA["cases"]:
        assert case.get("source"), case["name"]
        assert case["verdict"] in ("accept", "refuse"), case["name"]
        if case["verdict"] == "refuse" or case.get("versions"):
            assert case.get("message"), case["name"]


@pytest.mark.parametrize("case,version", CASES, ids=[f"{c['name']}@{v}" for c, v in CASES])
def test_validate_and_every_target_agree_with_the_api_server(case, version, tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(_spec(case), sort_keys=False))
    accept = (case["verdict"] == "accept") == _holds(case, version)
    only = tuple(case.get("targets") or ())
    if not accept and not only:
        with pytest.raises(SpecErrors) as refused:
            load_plans(str(path), kube_version=version)
        assert case["message"] in _messages(refused.value), _messages(refused.value)
        for error in refused.value.errors:  # positioned, with a hint or an expectation
            assert error.line >= 1 and (error.expected or error.hint)
        return
    load_plans(str(path), kube_version=version)  # validate accepts it
    refused_by = case.get("refused_by") or {}  # target -> its own refusal, whatever the version
    for target in TARGETS:
        if target in refused_by:
            with pytest.raises(SpecErrors) as refused:
                load_plans(str(path), targets=(target,), kube_version=version)
                render(target, load_plans(str(path), targets=(target,), kube_version=version)[0])
            assert refused_by[target] in _messages(refused.value), (target, _messages(refused.value))
            continue
        if target in only and not accept:
            with pytest.raises(SpecErrors) as refused:
                load_plans(str(path), targets=(target,), kube_version=version)
            expected = (case.get("target_messages") or {}).get(target, case["message"])
            assert expected in _messages(refused.value), (target, _messages(refused.value))
            assert f"target {target}" in _messages(refused.value)
            continue
        (plan,) = load_plans(str(path), targets=(target,), kube_version=version)
        files = render(target, plan)
        assert files and all(files.values()), target
        if target == "k8s":
            _schema_accepts(files, version)
        if target == "helm":
            _values_fit_the_chart_schema(files)


def _schema_accepts(files: dict[str, str], version: str) -> None:
    """The k8s objects pass the OpenAPI schema of that Kubernetes version (kubernetes-validate, strict)."""
    import kubernetes_validate

    # the first objects of each file: a 2,000-replica job's others differ only by index (and YAML is slow)
    docs = [doc for text in files.values() for doc in yaml.safe_load_all("\n---\n".join(text.split("\n---\n")[:8]))
            if doc]
    kinds = {}
    for doc in docs:  # one of each kind: a 2,000-replica job's objects differ only by index
        kinds.setdefault(doc["kind"], doc)
    for doc in kinds.values():
        kubernetes_validate.validate(doc, version, strict=True)


def _values_fit_the_chart_schema(files: dict[str, str]) -> None:
    import json

    import jsonschema

    values = next(yaml.safe_load(text) for name, text in files.items() if name.endswith("values.yaml"))
    schema = next(json.loads(text) for name, text in files.items() if name.endswith("values.schema.json"))
    jsonschema.validate(values, schema)


def test_docs_list_every_rule_and_the_version_range():
    from trainspec.compiler.kube_rules import RULES

    text = (ROOT / "docs" / "validation.md").read_text()
    for rule in RULES:
        assert f"`{rule.name}`" in text, rule.name
    assert f"{KUBE_VERSIONS[0]} to {KUBE_VERSIONS[-1]}" in text


def test_kube_version_on_the_command_line(tmp_path):
    """--kube-version chooses the rules; an unsupported one is a usage error (exit 2, one line)."""
    from helpers import run_cli

    spec = tmp_path / "job.yaml"
    case = {"base": "pytorch", "set": [[["spec", "env", "1FOO"], "x"]]}
    spec.write_text(yaml.safe_dump(_spec(case), sort_keys=False))
    old = run_cli("validate", str(spec))
    assert old.returncode == 2 and "--kube-version 1.32" in old.stderr and "Traceback" not in old.stderr
    assert run_cli("validate", str(spec), "--kube-version", "1.32").returncode == 0
    assert run_cli("compile", str(spec), "-t", "k8s", "--kube-version", "v1.34.2").returncode == 0
    bad = run_cli("validate", str(spec), "--kube-version", "1.29")
    assert bad.returncode == 2 and "1.30..1.36" in bad.stderr and "Traceback" not in bad.stderr
