"""Hostile inputs found by the security review of issue 23 (written from scratch, not copies of
test_untrusted_files_never_reach_the_host.py): each was run, a silent drop or an internal error, before its fix.

Fast: every case is refused while the file is read, before any engine call (no Docker needed).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from trainspec.compiler.errors import UsageError
from trainspec.emulator.readers import dispatch as inputs


def _job(container: dict | None = None, pod: dict | None = None) -> dict:
    labels = {"trainspec.dev/job": "j", "trainspec.dev/role": "worker", "trainspec.dev/index": "0"}
    ctr = {"name": "c", "image": "busybox", "command": ["true"], **(container or {})}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "labels": {"trainspec.dev/job": "j"}},
            "spec": {"template": {"metadata": {"labels": labels},
                                  "spec": {"restartPolicy": "Never", "containers": [ctr], **(pod or {})}}}}


def _load(tmp: Path, docs, name: str = "k8s.yaml"):
    path = tmp / name
    if isinstance(docs, list):
        path.write_text(yaml.safe_dump_all(docs))
    else:
        path.write_text(yaml.safe_dump(docs))
    return inputs.load(str(path), state_dir=str(tmp / "st"), check_missing=False)


def _refused(tmp: Path, docs, name: str = "k8s.yaml") -> str:
    with pytest.raises(UsageError) as err:
        _load(tmp, docs, name)
    return str(err.value)


EMPTY_DIR = {"volumes": [{"name": "v", "emptyDir": {}}]}


@pytest.mark.parametrize("container, pod, says", [
    # was exit 3 (TypeError): an env entry without a name
    ({"env": [{"value": "x"}]}, None, "env[0].name: Required value"),
    # was dropped without a word: hostPort with no containerPort (the API server requires it)
    ({"ports": [{"hostPort": 18555}]}, None, "containerPort: Required value"),
    # reached Docker after the run's network was made
    ({"volumeMounts": [{"name": "v", "mountPath": "x/../../y"}]}, EMPTY_DIR, "expected an absolute path"),
    ({"volumeMounts": [{"name": "v"}]}, EMPTY_DIR, "mountPath: Required value"),
    # was dropped: mount propagation between host and container (Bidirectional: the server's rule first)
    ({"volumeMounts": [{"name": "v", "mountPath": "/x", "mountPropagation": "Bidirectional"}]}, EMPTY_DIR,
     "Bidirectional mount propagation is available only to privileged containers"),
    ({"volumeMounts": [{"name": "v", "mountPath": "/x", "mountPropagation": "Bidirectional"}],
      "securityContext": {"privileged": True}}, EMPTY_DIR, "mountPropagation: 'Bidirectional' is not supported"),
    ({"volumeMounts": [{"name": "v", "mountPath": "/x", "mountPropagation": "HostToContainer"}]}, EMPTY_DIR,
     "mountPropagation: 'HostToContainer' is not supported"),
    # was ignored (the whole claim mounted); `$(X)` = `../..` is the classic escape on a node
    ({"volumeMounts": [{"name": "v", "mountPath": "/x", "subPathExpr": "$(X)"}], "env": [{"name": "X", "value": "../.."}]},
     EMPTY_DIR, "subPathExpr is not supported"),
])
def test_k8s_fields_a_cluster_refuses_are_refused(tmp_path, container, pod, says):
    assert says in _refused(tmp_path, _job(container, pod))


def test_mpijob_ssh_mount_path_must_be_absolute(tmp_path):
    tmpl = {"spec": {"containers": [{"name": "c", "image": "b"}]}}
    doc = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "m"},
           "spec": {"sshAuthMountPath": ["x"], "mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": tmpl},
                                                                   "Worker": {"replicas": 1, "template": tmpl}}}}
    assert 'spec.sshAuthMountPath: Invalid value: "array"' in _refused(tmp_path, doc)  # the CRD's type
    doc["spec"]["sshAuthMountPath"] = "x"
    assert "spec.sshAuthMountPath: is a string 'x'; expected an absolute path" in _refused(tmp_path, doc)  # local


def _compose(service: dict | None = None, top: dict | None = None) -> dict:
    return {"services": {"w": {"image": "busybox", "command": ["true"], **(service or {})}}, **(top or {})}


@pytest.mark.parametrize("service, top, says", [
    # were run as ONE container without a word
    ({"deploy": {"replicas": 3}}, None, "deploy.replicas: 3 containers of one service are not run"),
    ({"scale": 2}, None, "scale: 2 containers"),
    ({"deploy": {"replicas": 0}}, None, "deploy.replicas: 0 containers"),
    ({"scale": 100000}, None, "at most 1000"),
    ({"deploy": {"replicas": "x"}}, None, "expected an integer"),
    # an unknown dependency: docker compose refuses it
    ({"depends_on": ["nope"]}, None, "'nope' is not a service"),
    # a host network by an external name, another driver: was replaced by the run's bridge silently
    ({"networks": ["hn"]}, {"networks": {"hn": {"name": "host", "external": True}}}, "networks.hn.external"),
    (None, {"networks": {"n": {"driver": "macvlan", "driver_opts": {"parent": "eth0"}}}}, "networks.n.driver"),
    # bind propagation and volume subpath: were dropped
    ({"volumes": [{"type": "bind", "source": ".", "target": "/d", "bind": {"propagation": "rshared"}}]}, None,
     "bind propagation 'rshared'"),
    ({"volumes": ["./:/d:ro,rslave"]}, None, "bind propagation 'rslave'"),
    ({"volumes": [{"type": "volume", "source": "v", "target": "/d", "volume": {"subpath": "../.."}}]},
     {"volumes": {"v": {}}}, "volume.subpath"),
    # a long-syntax mount with no target reached Docker after the network was made
    ({"volumes": [{"type": "tmpfs"}]}, None, "target None is not an absolute path"),
    ({"volumes": [5]}, None, "expected a string or a mapping"),
])
def test_compose_fields_that_were_dropped_or_reached_docker_are_refused(tmp_path, service, top, says):
    assert says in _refused(tmp_path, _compose(service, top), "compose.yaml")


def test_one_replica_and_a_bridge_network_still_run(tmp_path):
    job = _load(tmp_path, _compose({"deploy": {"replicas": 1}, "networks": ["n"]},
                                   {"networks": {"n": {"driver": "bridge"}}}), "compose.yaml")
    assert len(job.replicas) == 1


# -- secrets ---------------------------------------------------------------------------------

def _secret_job(secret_data: dict, env: list) -> list:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": secret_data}
    return [secret, _job({"env": env})]


def test_a_binary_secret_in_env_is_refused_by_name_never_shown(tmp_path):
    import base64
    data = {"bin": base64.b64encode(b"\xff\xfeBINSEKRET\x01").decode()}
    said = _refused(tmp_path, _secret_job(data, [{"name": "B", "valueFrom": {"secretKeyRef": {"name": "s",
                                                                                           "key": "bin"}}}]))
    # was: "cannot read (UnicodeDecodeError ...)"
    assert "env 'B' from a Secret is not UTF-8 text" in said
    assert "BINSEKRET" not in said and "\\xff" not in said


def test_the_masker_hides_a_secret_in_its_base64_forms_too():
    import base64

    from trainspec.emulator.model.masking import masker
    mask = masker([b"S3KR1T-ALPHA-77"])
    for printed in (base64.b64encode(b"S3KR1T-ALPHA-77").decode(),          # the Secret's own `data`
                    base64.b64encode(b"S3KR1T-ALPHA-77\n").decode(),        # `echo $TOKEN | base64`
                    base64.urlsafe_b64encode(b"S3KR1T-ALPHA-77").decode().rstrip("=")):
        assert mask(f"token is {printed}!") == "token is ******!", printed
    assert mask("nothing here") == "nothing here"


# -- charts ------------------------------------------------------------------------------------

def test_a_chart_whose_template_loops_forever_is_refused_not_the_machines_memory(tmp_path):
    pytest.importorskip("helm_python")
    chart = tmp_path / "bomb"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: bomb\nversion: 0.1.0\n")
    # was: the in-process Helm engine allocated until the machine ran out of memory
    (chart / "templates" / "j.yaml").write_text(
        "{{- range $i := until 100000000 }}\n---\nkind: ConfigMap\napiVersion: v1\n"
        "metadata: {name: c{{ $i }}}\n{{- end }}\n")
    with pytest.raises(UsageError) as err:
        inputs.load(str(chart), state_dir=str(tmp_path / "st"), check_missing=False)
    assert "rendering the chart" in str(err.value) and "GiB of memory" in str(err.value)


def test_a_chart_helm_error_is_still_reported(tmp_path):
    pytest.importorskip("helm_python")
    chart = tmp_path / "bad"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: bad\nversion: 0.1.0\n")
    (chart / "templates" / "j.yaml").write_text("{{ fail \"chart says no\" }}\n")
    with pytest.raises(UsageError) as err:
        inputs.load(str(chart), state_dir=str(tmp_path / "st"), check_missing=False)
    assert "chart says no" in str(err.value)
