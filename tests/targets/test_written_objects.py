"""The objects each target writes are checked as the API server checks them (compiler/apiserver via
targets/written.py), after patches and env merges, and a refusal lands on the spec: the patch op's
line for a patched field, the spec field that fills it otherwise."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from trainspec.compiler import SpecErrors
from trainspec.compiler.apiserver import check_objects
from trainspec.targets import load_plans, render

from helpers import ROOT, reference_dir, run_cli

BASE = {"apiVersion": "trainspec/v1.2", "kind": "TrainingJob", "metadata": {"name": "diff"},
        "spec": {"framework": "pytorch", "image": "registry.example.com/train:1", "command": ["python", "t.py"],
                 "roles": {"master": {"replicas": 1}, "worker": {"replicas": 2}}}}


def _write(tmp_path, spec: dict):
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def _patched(tmp_path, target: str, ops: list[dict]):
    spec = json.loads(json.dumps(BASE))
    spec["spec"]["patches"] = {target: ops}
    return _write(tmp_path, spec)


def _refusal(path, target: str, version: str = "1.36") -> str:
    with pytest.raises(SpecErrors) as refused:
        (plan,) = load_plans(str(path), targets=(target,), kube_version=version)
        render(target, plan)
    return str(refused.value)


POD = {"k8s": "/2/spec/template/spec", "jobset": "/spec/replicatedJobs/0/template/spec/template/spec",
       "volcano": "/spec/tasks/0/template/spec", "kubeflow": "/spec/pytorchReplicaSpecs/Master/template/spec"}


@pytest.mark.parametrize("target", sorted(POD))
@pytest.mark.parametrize("field,value,message", [
    ("topologySpreadConstraints", [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
     "maxSkew: Invalid value: 0: must be greater than zero"),
    ("dnsConfig", {"searches": [f"s{i}" for i in range(33)]}, "must not have more than 32 search paths"),
    ("readinessGates", [{"conditionType": "/bad"}], "prefix part must be non-empty"),
    ("schedulingGates", [{"name": "example.com/g"}, {"name": "example.com/g"}], "Duplicate value"),
    ("os", {"name": "plan9"}, 'Unsupported value: "plan9"'),
])
def test_a_patched_pod_field_is_refused_at_the_patch_op(tmp_path, capsys, target, field, value, message):
    """k8s: the Job is refused.  An operator's resource is taken (the server does not validate the pod
    template inside it) but its pods would not be: a warning, at the same place."""
    path = _patched(tmp_path, target, [{"op": "add", "path": f"{POD[target]}/{field}", "value": value}])
    if target == "k8s":
        text = _refusal(path, target)
    elif field == "schedulingGates":  # a list-map in the CRD's schema: the resource itself is refused
        text = _refusal(path, target)
    else:
        (plan,) = load_plans(str(path), targets=(target,), kube_version="1.36")
        render(target, plan)
        text = capsys.readouterr().err.removeprefix("trainspec: warning: ")
        assert "the operator's pods would be refused" in text, text
    assert message in text and "spec.patches." + target + "[0]" in text, text
    rows = path.read_text().splitlines()
    at = next(i for i, row in enumerate(rows) if f"{POD[target]}/{field}" in row)
    line = max(i for i, row in enumerate(rows[:at + 1], 1) if row.lstrip().startswith("- "))
    assert text.startswith(f"{path}:{line}:"), text  # the op's own line


@pytest.mark.parametrize("field,value,message", [
    ("ports/-", {"containerPort": 0, "protocol": "TCP"}, "containerPort: Required value"),
    ("ports/-", {"containerPort": 80, "protocol": "ICMP"}, 'Unsupported value: "ICMP"'),
    ("name", "Upper", "a lowercase RFC 1123 label"),
    ("terminationMessagePolicy", "Sometimes", "Unsupported value"),
    ("livenessProbe", {"tcpSocket": {"port": 80}, "exec": {"command": ["true"]}},
     "may not specify more than 1 handler type"),
    ("livenessProbe", {"periodSeconds": 3}, "must specify a handler type"),
    ("readinessProbe", {"grpc": {"port": 0}}, "grpc.port: Invalid value: 0"),
    ("lifecycle", {"preStop": {"sleep": {"seconds": 99999}}}, "sleep.seconds"),
    ("securityContext", {"allowPrivilegeEscalation": False, "privileged": True}, "`privileged` to true"),
    ("securityContext", {"allowPrivilegeEscalation": False, "capabilities": {"add": ["CAP_SYS_ADMIN"]}},
     "CAP_SYS_ADMIN"),
    ("resources", {"limits": {"requests.example.com/x": "1"}}, "extended resource name standard"),
    ("resources", {"limits": {"example.com/" + "p" * 250 + "/x": "1"}}, "Invalid value"),
])
def test_a_patched_container_field_on_k8s(tmp_path, field, value, message):
    path = _patched(tmp_path, "k8s", [{"op": "add", "path": f"{POD['k8s']}/containers/0/{field}", "value": value}])
    assert message in _refusal(path, "k8s")


def test_volumes_and_mounts(tmp_path):
    volume = {"name": "s", "secret": {"secretName": "s", "defaultMode": 1000,
                                      "items": [{"key": "k", "path": "/abs"}, {"key": "k", "path": "a/../b"}]}}
    mounts = [{"name": "s", "mountPath": "/m", "subPath": "/abs"},
              {"name": "s", "mountPath": "/n", "subPath": "a", "subPathExpr": "b"},
              {"name": "s", "mountPath": "/o", "mountPropagation": "Sideways"},
              {"name": "s", "mountPath": "/p", "recursiveReadOnly": "Enabled"}]
    path = _patched(tmp_path, "k8s", [{"op": "add", "path": f"{POD['k8s']}/volumes", "value": [volume]},
                                      {"op": "add", "path": f"{POD['k8s']}/containers/0/volumeMounts",
                                       "value": mounts}])
    text = _refusal(path, "k8s")
    for message in ("defaultMode: Invalid value: 1000", "must be a relative path", "must not contain '..'",
                    "subPathExpr and subPath are mutually exclusive", 'Unsupported value: "Sideways"',
                    "may only be specified when readOnly is true"):
        assert message in text, message


def test_jobset_crd_enums_and_cel(tmp_path):
    path = _patched(tmp_path, "jobset", [{"op": "add", "path": "/spec/startupPolicy",
                                          "value": {"startupPolicyOrder": "Sometimes"}}])
    assert 'startupPolicyOrder: Unsupported value: "Sometimes"' in _refusal(path, "jobset")
    path = _patched(tmp_path, "jobset", [{"op": "add", "path": "/spec/successPolicy",
                                          "value": {"operator": "Most"}}])
    assert 'Unsupported value: "Most"' in _refusal(path, "jobset")
    path = _patched(tmp_path, "jobset", [{"op": "add", "path": "/spec/startupPolicy",
                                          "value": {"startupPolicyOrder": "InOrder"}},
                                         {"op": "add", "path": "/spec/replicatedJobs/1/dependsOn",
                                          "value": [{"name": "master", "status": "Ready"}]}])
    assert "StartupPolicy and DependsOn APIs are mutually exclusive" in _refusal(path, "jobset")  # CEL


@pytest.mark.parametrize("target", ["volcano", "trainjob", "jobset", "kubeflow", "k8s"])
@pytest.mark.parametrize("name", ["PYTHONUNBUFFERED", "PET_NPROC_PER_NODE"])
def test_a_user_variable_replaces_the_injected_one(tmp_path, target, name):
    spec = json.loads(json.dumps(BASE))
    spec["spec"]["env"] = {name: "mine"}
    path = _write(tmp_path, spec)
    try:
        (plan,) = load_plans(str(path), targets=(target,), kube_version="1.36")
    except SpecErrors as exc:  # Trainer refuses some names in a TrainJob's env: said at the variable
        assert target == "trainjob" and f"spec.env.{name}" in str(exc), str(exc)
        return
    docs = [d for text in render(target, plan).values() for d in yaml.safe_load_all(text) if d]
    envs = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("env"), list):
                envs.append(node["env"])
            for item in node.values():
                walk(item)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(docs)
    assert envs
    for env in envs:
        values = [e.get("value") for e in env if e.get("name") == name]
        assert len(values) <= 1, env
        if values and any(e.get("name") == "TRAINSPEC_JOB" for e in env):
            assert values == ["mine"], env


def test_an_unpatched_finding_points_at_the_spec_field(tmp_path, capsys):
    """Nothing patched: the finding goes back to the spec field that fills it (here the Kubeflow v1 CRD's
    older pod schema does not know a field the spec sets: the server drops it, and says so)."""
    spec = json.loads(json.dumps(BASE))
    spec["spec"]["podSecurityContext"] = {"seLinuxChangePolicy": "Recursive"}
    path = _write(tmp_path, spec)
    (plan,) = load_plans(str(path), targets=("kubeflow",), kube_version="1.36")
    render("kubeflow", plan)
    text = capsys.readouterr().err
    line = next(i for i, row in enumerate(path.read_text().splitlines(), 1) if "podSecurityContext" in row)
    assert "unknown field" in text and f"{path}:{line}:" in text and "spec.podSecurityContext" in text, text


def test_the_checks_are_generic_over_the_jobs_written():
    """An Indexed Job per role (any number of them) is checked as well as one Job per replica."""
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x-worker"},
           "spec": {"completionMode": "Indexed", "completions": 3, "parallelism": 3,
                    "successPolicy": {"rules": [{"succeededCount": 4}]},
                    "template": {"spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "c", "image": "i",
                                                          "env": [{"name": "A", "value": "1"}]}]}}}}
    found = check_objects([job, job], (1, 36))
    assert {f.doc for f in found} == {0, 1}
    assert all("must be less than or equal to 3" in f.message for f in found)
    ok = json.loads(json.dumps(job))
    ok["spec"]["successPolicy"]["rules"][0]["succeededCount"] = 1
    assert check_objects([ok], (1, 36)) == []


def test_the_golden_specs_write_only_objects_the_server_takes():
    for spec in sorted((ROOT / "specs").glob("*.yaml")):
        for plan in load_plans(str(spec), skip_unsupported=True):
            for target in ("k8s", "kubeflow", "volcano", "jobset", "trainjob"):
                if target not in plan.unsupported:
                    render(target, plan)  # raises SpecErrors on any refusal


def test_the_crd_schemas_are_what_the_script_makes_of_the_upstream_crds():
    folder = reference_dir() / "crds"
    sys.path.insert(0, str(ROOT / "scripts"))
    import gen_crd_schemas

    made = {gen_crd_schemas.file_name(k): v for k, v in gen_crd_schemas.main(folder).items()}
    made["core.json"] = gen_crd_schemas.core()
    shipped = {p.name: json.loads(p.read_text()) for p in (ROOT / "compiler" / "apiserver" / "crds").glob("*.json")}
    assert made == shipped


def test_a_k8s_compile_loads_no_crd_schema_and_no_cel(tmp_path):
    path = _write(tmp_path, BASE)
    code = ("import sys; from trainspec.cli import main\n"
            f"try: main(['compile', {str(path)!r}, '-t', 'k8s'])\nexcept SystemExit: pass\n"
            "from trainspec.compiler.apiserver import schemas\n"
            "assert 'cel' not in sys.modules and schemas.schema.cache_info().currsize == 0, sys.modules.get('cel')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr


def test_the_cli_reports_a_patched_refusal_in_the_usual_shape(tmp_path):
    path = _patched(tmp_path, "k8s", [{"op": "add", "path": f"{POD['k8s']}/topologySpreadConstraints",
                                       "value": [{"maxSkew": 0, "topologyKey": "zone",
                                                  "whenUnsatisfiable": "DoNotSchedule"}]}])
    result = run_cli("compile", str(path), "-t", "k8s", "--kube-version", "1.36")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "spec.patches.k8s[0]: target k8s: the API server refuses" in result.stderr
    assert "; expected " in result.stderr and "; hint: " in result.stderr
    validate = run_cli("validate", str(path), "--kube-version", "1.36")
    assert validate.returncode == 2 and "must be greater than zero" in validate.stderr


def test_every_check_names_its_upstream_source():
    import inspect

    from trainspec.compiler.apiserver import batch, core, crd, meta, pod

    for module in (pod, core, meta, batch, crd):
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ == module.__name__:
                assert (function.__doc__ or "").strip(), f"{module.__name__}.{name}"
