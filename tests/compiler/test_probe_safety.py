"""Probe host, port and path (issue 15): validated with positions, never reaching a shell as code.

The compose target turns tcpSocket/httpGet probes into a CMD-SHELL healthcheck.  A host
must arrive in the probing program as one argument (not as shell or Python text) and a
path must never change the URL's authority, even when the plan did not come through the
validator (a defense in depth: the target is a function of the plan, not of the spec).
"""

from __future__ import annotations

import json
import subprocess
import uuid

import pytest
import yaml

from trainspec.compiler import SpecErrors
from trainspec.compiler.model import Handler
from trainspec.targets.compose import render as compose

from helpers import plan_text

SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: probes}
spec:
  framework: pytorch
  image: python:3.12-slim
  command: [python, train.py]
  roles:
    master:
      replicas: 1
      probes:
        readiness: PROBE
"""

HOSTILE_HOSTS = ["x; touch /tmp/pwned", "$(touch /tmp/pwned)", "`touch /tmp/pwned`", "a'b", 'a"b', "a b",
                 "evil.example/x?", "user@evil.example", "localhost:22", "-x", "a\nb"]


def _load(probe: str):
    return plan_text(SPEC.replace("PROBE", probe), name="spec.yaml")


def _error(probe: str) -> str:
    with pytest.raises(SpecErrors) as info:
        _load(probe)
    return str(info.value)


@pytest.mark.parametrize("host", HOSTILE_HOSTS)
@pytest.mark.parametrize("kind", ["tcpSocket", "httpGet"])
def test_bad_probe_host_is_a_spec_error_at_its_position(kind, host):
    probe = f"{{{kind}: {{port: 8080, host: {json.dumps(host)}}}}}"
    text = _error(probe)
    assert f"spec.roles.master.probes.readiness.{kind}.host:" in text
    assert "is not a host name or IP address" in text
    column = len("        readiness: ") + probe.index("host: ") + len("host: ") + 1
    assert text.startswith(f"spec.yaml:12:{column}: ")


@pytest.mark.parametrize("path", ["@evil.example/health", "health", "//x y", "/a\tb", "/a\x7f"])
def test_bad_http_path_is_a_spec_error(path):
    text = _error(f"{{httpGet: {{port: 8080, path: {json.dumps(path)}}}}}")
    assert "spec.roles.master.probes.readiness.httpGet.path:" in text and "is not a URL path" in text


@pytest.mark.parametrize("host", ["localhost", "db.example.com", "10.0.0.7", "::1", "fe80::1", "DB.Example.COM"])
def test_good_probe_hosts_pass(tmp_path, host):
    (plan,) = _load(f"{{tcpSocket: {{port: 8080, host: '{host}'}}}}")
    assert plan.roles[0].probes.readiness.handler.tcp_socket["host"] == host


@pytest.mark.parametrize("path", ["/", "/healthz", "//evil.example/x", "/a@b", "/%40x?y=1#z"])
def test_probe_url_authority_is_fixed(path):
    from urllib.parse import urlsplit

    for raw in (path, path.lstrip("/"), "@evil.example" + path, "\\@evil.example" + path):
        url = compose.probe_url("HTTP", "localhost", 8080, raw)
        assert urlsplit(url).netloc == "localhost:8080", url
    assert compose.probe_url("HTTPS", "::1", 443, "/x") == "https://[::1]:443/x"


def _healthcheck_with(plan, handler: Handler) -> str:
    """The compose healthcheck for a plan whose readiness probe is `handler`, as Compose passes it to sh."""
    role = plan.roles[0]
    probe = role.probes.readiness._replace(handler=handler)  # model and plan types are NamedTuples
    role = role._replace(probes=role.probes._replace(readiness=probe))
    plan = plan._replace(roles=(role,))
    doc = yaml.safe_load(compose.render(plan)[compose.FILE])
    test = doc["services"]["master-0"]["healthcheck"]["test"]
    assert test[0] == "CMD-SHELL"
    return test[1].replace("$$", "$")  # Compose interpolation of an escaped string


def _docker_sh(script: str) -> subprocess.CompletedProcess:
    name = f"trainspec-probe-{uuid.uuid4().hex[:8]}"
    try:
        return subprocess.run(["docker", "run", "--rm", "--name", name, "--network", "none", "trainspec-test:py3",
                               "sh", "-c", script], check=False, capture_output=True, text=True, timeout=120)
    finally:
        subprocess.run(["docker", "rm", "-f", name], check=False, capture_output=True)


@pytest.mark.docker
@pytest.mark.parametrize("kind", ["tcp_socket", "http_get"])
def test_unvalidated_hostile_host_runs_nothing_in_a_real_container(tmp_path, kind):
    (plan,) = _load("{tcpSocket: {port: 8080}}")
    checks = []
    for host in ["x; touch /tmp/pwned", "$(touch /tmp/pwned)", "`touch /tmp/pwned`", "x' ; touch /tmp/pwned; '",
                 'x"); import os; os.system("touch /tmp/pwned"); ("']:
        handler = Handler(tcp_socket={"port": 8080, "host": host}) if kind == "tcp_socket" else \
            Handler(http_get={"port": 8080, "host": host, "path": "/x"})
        checks.append(_healthcheck_with(plan, handler))
    script = "; ".join(f"( {check} ) >/dev/null 2>&1" for check in checks) + "; test ! -e /tmp/pwned && echo clean"
    result = _docker_sh(script)
    assert result.stdout.strip() == "clean", result.stdout + result.stderr


@pytest.mark.docker
def test_probes_still_work_in_a_real_container(tmp_path):
    (plan,) = _load("{tcpSocket: {port: 8080}}")
    tcp = _healthcheck_with(plan, Handler(tcp_socket={"port": 8080}))
    http = _healthcheck_with(plan, Handler(http_get={"port": 8080, "host": "127.0.0.1", "path": "/"}))
    bash_only = tcp.split(" || ", 1)[1]
    down = _docker_sh(f"{tcp} && echo up || echo down")
    assert down.stdout.strip() == "down", down.stderr
    served = _docker_sh("cd /tmp && (python3 -m http.server 8080 >/dev/null 2>&1 &) && sleep 1.5; "
                        f"({tcp}) && ({bash_only}) && ({http}) && echo up || echo down")
    assert served.stdout.strip() == "up", served.stderr
