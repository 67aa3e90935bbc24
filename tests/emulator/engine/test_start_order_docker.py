"""Start gates on the real Docker engine: a gated replica waits as long as the cluster's controller
would (no give-up after 15 s), says why it waits, and never starts when what it waits for fails
(issue 13 item 2). Every test ends with `leak_check`."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import yaml

from emuhelpers import norm, start, trainspec

pytestmark = pytest.mark.docker


def container(image: str, script: str, readiness: list[str] | None = None) -> dict:
    c = {"name": "main", "image": image, "command": ["python3", "-u", "-c", script]}
    if readiness:
        c["readinessProbe"] = {"exec": {"command": readiness}, "periodSeconds": 1}
    return c


def rjob(name: str, image: str, script: str, depends: list[tuple[str, str]] | None = None,
         readiness: list[str] | None = None) -> dict:
    out = {"name": name, "replicas": 1, "template": {"spec": {
        "completions": 1, "parallelism": 1, "backoffLimit": 0,
        "template": {"spec": {"restartPolicy": "Never", "containers": [container(image, script, readiness)]}}}}}
    if depends:
        out["dependsOn"] = [{"name": n, "status": s} for n, s in depends]
    return out


def write(tmp: Path, doc: dict) -> Path:
    path = tmp / "job.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def jobset(tmp: Path, *rjobs: dict, **spec) -> Path:
    return write(tmp, {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "gates"},
                       "spec": {**spec, "replicatedJobs": list(rjobs)}})


def run(path: Path, tmp: Path):
    r = trainspec("run", path, "--cpu-only", "--offline", cwd=tmp, timeout=240)
    return r, norm(r.stdout)


A_DONE = "import time; time.sleep(2); print('A done'); exit(int('{code}'))"


def test_depends_on_complete_starts_b_after_a_completed(tmp_path, test_image, engine, leak_check):
    path = jobset(tmp_path, rjob("a", test_image, A_DONE.format(code=0)),
                  rjob("b", test_image, "print('B starts')", depends=[("a", "Complete")]))
    r, out = run(path, tmp_path)
    assert r.returncode == 0, out + r.stderr
    assert "trainspec: b-0 Pending (waiting for a-0 (dependsOn Complete: not complete))" in out
    assert out.index("a-0 | A done") < out.index("b-0 | B starts")
    assert "SUCCEEDED" in out


def test_depends_on_complete_never_starts_b_when_a_fails(tmp_path, test_image, leak_check):
    path = jobset(tmp_path, rjob("a", test_image, A_DONE.format(code=3)),
                  rjob("b", test_image, "print('B starts')", depends=[("a", "Complete")]))
    r, out = run(path, tmp_path)
    assert r.returncode == 1, out + r.stderr
    assert "a-0 | A done" in out and "B starts" not in out
    assert "job gates FAILED" in out and "a-0 failed" in out  # no failurePolicy: the first failed Job fails it
    assert "b-0 Pending -> Terminated (the run stopped before it started)" in out


def test_in_order_waits_past_15_seconds_for_readiness(tmp_path, test_image, leak_check):
    """The server is ready only after ~20 s: the client's Job is created only then (InOrder)."""
    server = ("import pathlib, time; time.sleep(20); pathlib.Path('/tmp/ready').touch(); "
              "print('server ready'); time.sleep(120)")
    path = jobset(tmp_path, rjob("server", test_image, server, readiness=["test", "-f", "/tmp/ready"]),
                  rjob("client", test_image, "print('client starts')"),
                  startupPolicy={"startupPolicyOrder": "InOrder"}, successPolicy={"operator": "All", "targetReplicatedJobs": ["client"]})
    r, out = run(path, tmp_path)
    assert r.returncode == 0, out + r.stderr
    assert "trainspec: client-0 Pending (waiting for server-0 (InOrder: not ready))" in out
    assert out.index("server-0 | server ready") < out.index("trainspec: server-0 ready") \
        < out.index("client-0 | client starts")


def mpijob(tmp: Path, image: str) -> Path:
    """Workers whose readinessProbe never passes; the launcher waits for them (WaitForWorkersReady)."""
    worker = {"replicas": 2, "template": {"spec": {"containers": [
        container(image, "import time; time.sleep(300)", readiness=["false"])]}}}
    launcher = {"replicas": 1, "template": {"spec": {"containers": [container(image, "print('launcher starts')")]}}}
    return write(tmp, {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "gates"},
                       "spec": {"launcherCreationPolicy": "WaitForWorkersReady",
                                "runPolicy": {"activeDeadlineSeconds": 10, "cleanPodPolicy": "Running"},
                                "mpiReplicaSpecs": {"Launcher": launcher, "Worker": worker}}})


WAITING = "launcher-0 Pending (waiting for worker-0, worker-1 (launcherCreationPolicy WaitForWorkersReady: not ready))"


def test_a_gate_that_never_opens_ends_at_the_job_deadline(tmp_path, test_image, leak_check):
    r, out = run(mpijob(tmp_path, test_image), tmp_path)
    assert r.returncode == 1, out + r.stderr
    assert WAITING in out
    assert "job gates FAILED" in out and "DeadlineExceeded: activeDeadlineSeconds 10" in out
    assert "launcher starts" not in out


def test_ctrl_c_while_a_replica_waits_cleans_up(tmp_path, test_image, leak_check):
    proc = start("run", mpijob(tmp_path, test_image), "--cpu-only", "--offline", cwd=tmp_path)
    seen = []
    try:
        for line in proc.stdout:
            seen.append(line)
            if "waiting for worker-0" in line:
                proc.send_signal(signal.SIGINT)
                break
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, "".join(seen) + out
    assert "INTERRUPTED" in out and "launcher starts" not in out


def test_compose_service_healthy_fails_when_the_dependency_exits_first(tmp_path, test_image, leak_check):
    """docker compose up: a dependency that exits before it is healthy fails the dependent
    ("dependency failed to start: container ... exited (0)"); it never starts."""
    doc = {"name": "hc", "services": {
        "ps-0": {"image": test_image, "command": ["python3", "-u", "-c", "print('ps leaves')"],
                 "healthcheck": {"test": ["CMD", "test", "-f", "/tmp/ready"], "interval": "1s", "retries": 30}},
        "worker-0": {"image": test_image, "command": ["python3", "-u", "-c", "print('worker starts')"],
                     "depends_on": {"ps-0": {"condition": "service_healthy"}}}}}
    path = tmp_path / "compose.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    r, out = run(path, tmp_path)
    assert r.returncode == 1, out + r.stderr
    assert "worker starts" not in out
    assert "worker-0 failed (dependency failed to start: ps-0 exited (0)" in out


def test_detach_returns_while_the_launcher_waits_and_ps_says_why(tmp_path, test_image, leak_check):
    """`run --detach` returns once every replica started or waits for its gate; `ps` shows why."""
    r = trainspec("run", mpijob(tmp_path, test_image), "--cpu-only", "--offline", "--detach", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    try:
        ps = trainspec("ps", "gates", cwd=tmp_path)
        assert "waiting for worker-0, worker-1 (launcherCreationPolicy WaitForWorkersReady: not ready)" in ps.stdout, \
            ps.stdout + ps.stderr
    finally:
        down = trainspec("down", "gates", "-t", "0", cwd=tmp_path)
    assert down.returncode == 0, down.stdout + down.stderr
