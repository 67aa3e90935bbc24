"""framework: generic (spec v1.2) runs from the spec and from every form it compiles to.

Two roles named freely (`coordinator`, `trainer`), no framework variables: the trainers reach the
coordinator through `{{ hosts.coordinator }}` and TRAINSPEC_HOSTS_*; the coordinator keeps the Volcano
task name `head` (taskName) and the container is `app` (containerName).  On Volcano the svc plugin's
/etc/volcano/<task>.host and VC_<TASK>_HOSTS name the kept task.  A failing trainer fails the job
whichever form is run (the default rule: every replica of every role must succeed).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from emuhelpers import norm, trainspec

pytestmark = pytest.mark.docker

SPEC = """\
apiVersion: trainspec/v1.2
kind: TrainingJob
metadata: {name: gen2}
spec:
  framework: generic
  image: python:3.12-slim
  containerName: app
  port: 7100
  env:
    COORDINATOR: "{{ hosts.coordinator | join(',') }}"
    TRAINER_FAIL: "0"
  command:
    - python3
    - -c
    - |
      import os, socket, sys, time
      role, index = os.environ["TRAINSPEC_ROLE"], int(os.environ["TRAINSPEC_INDEX"])
      host, port = os.environ["COORDINATOR"].rsplit(":", 1)
      if os.path.exists("/etc/volcano"):  # Volcano's svc plugin: the files of the kept task names
          hosts = sorted(f for f in os.listdir("/etc/volcano") if f.endswith(".host"))
          print(role, index, "volcano files", hosts, os.environ.get("VC_HEAD_HOSTS"), flush=True)
      if role == "coordinator":
          server = socket.create_server(("", int(port)))
          for _ in range(int(os.environ["TRAINSPEC_NUM_TRAINER"])):
              conn = server.accept()[0]
              print("hello from", conn.recv(64).decode(), flush=True)
              conn.close()
          sys.exit(0)
      for attempt in range(240):
          try:
              with socket.create_connection((host, int(port)), timeout=2) as conn:
                  conn.sendall(f"trainer-{index}".encode())
              break
          except OSError:
              time.sleep(0.5)
      else:
          raise SystemExit("cannot reach " + host)
      sys.exit(int(os.environ["TRAINER_FAIL"]) if index == 1 else 0)
  roles:
    coordinator:
      replicas: 1
      taskName: head
    trainer:
      replicas: 2
"""

FORMS = ["spec", "k8s", "compose", "volcano", "jobset",
         pytest.param("helm", marks=pytest.mark.skipif(importlib.util.find_spec("helm_python") is None,
                                                       reason="helm-python-sdk missing"))]


def _input(tmp: Path, form: str, fail: int) -> Path:
    spec = tmp / "gen2.yaml"
    spec.write_text(SPEC.replace('TRAINER_FAIL: "0"', f'TRAINER_FAIL: "{fail}"'))
    if form == "spec":
        return spec
    out = tmp / (form if form == "helm" else f"{form}.yaml")
    c = trainspec("compile", spec, "--target", form, "-o", out, cwd=tmp)
    assert c.returncode == 0, c.stderr
    return out


@pytest.mark.parametrize("form", FORMS)
def test_generic_job_succeeds_from_every_form(tmp_path, test_image, leak_check, form):
    r = trainspec("run", _input(tmp_path, form, 0), "--image", test_image, "--cpu-only", "--offline", cwd=tmp_path,
                  timeout=300)
    out = norm(r.stdout)
    assert r.returncode == 0, out + r.stderr
    assert "SUCCEEDED in" in out
    assert "hello from trainer-0" in out and "hello from trainer-1" in out
    if form == "volcano":
        assert "volcano files ['head.host', 'trainer.host'] gen2-head-0.gen2" in out


@pytest.mark.parametrize("form", ["spec", "volcano", "jobset"])
def test_a_failing_trainer_fails_the_generic_job(tmp_path, test_image, leak_check, form):
    r = trainspec("run", _input(tmp_path, form, 3), "--image", test_image, "--cpu-only", "--offline", cwd=tmp_path,
                  timeout=300)
    out = norm(r.stdout)
    assert r.returncode == 1, out + r.stderr
    assert "FAILED" in out


ANY = """\
apiVersion: trainspec/v1.2
kind: TrainingJob
metadata: {name: anyjob}
spec:
  framework: generic
  image: python:3.12-slim
  command: [python3, -c, "import os, time; time.sleep(0 if os.environ['TRAINSPEC_INDEX'] == '1' else 3600)"]
  success: {role: searcher, policy: AnyReplica}
  roles:
    searcher: {replicas: 3}
"""


@pytest.mark.parametrize("form", ["spec", "k8s", "compose", "jobset"])
def test_any_replica_decides(tmp_path, test_image, leak_check, form):
    """AnyReplica: searcher-1 exits 0 while the others run on; the job succeeds (jobset: the Indexed Job's
    successPolicy succeededCount 1)."""
    spec = tmp_path / "any.yaml"
    spec.write_text(ANY)
    path = spec
    if form != "spec":
        path = tmp_path / f"{form}.yaml"
        assert trainspec("compile", spec, "--target", form, "-o", path, cwd=tmp_path).returncode == 0
    r = trainspec("run", path, "--image", test_image, "--cpu-only", "--offline", cwd=tmp_path, timeout=200)
    out = norm(r.stdout)
    assert r.returncode == 0, out + r.stderr
    assert "SUCCEEDED in" in out
