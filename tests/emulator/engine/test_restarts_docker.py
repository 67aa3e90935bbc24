"""Whole-job restarts on a real Docker engine (issue 13: each controller's restart semantics):
JobSet failurePolicy (maxRestarts, rules) and Volcano RestartJob (maxRetry) stop every replica
and create them all afresh. Every test ends with `leak_check`."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
import yaml

from emuhelpers import norm, start, trainspec

pytestmark = pytest.mark.docker

ATTEMPT = "jobset.sigs.k8s.io/restart-attempt"

# On the first attempt index 0 listens and runs until the restart stops it; index 1 fails once it
# has reached index 0 (so both were running). Every new pod finds its emptyDir empty.
JOBSET_PROGRAM = """
import os, signal, socket, sys, time
attempt, index = os.environ["ATTEMPT"], os.environ["JOB_COMPLETION_INDEX"]
seen = os.listdir("/scratch")
open("/scratch/mark", "w").close()
if attempt == "0" and index == "0":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # stopped only when its grace period ends
    server = socket.create_server(("", 7777))
    print(f"attempt {attempt} index {index} scratch {seen}", flush=True)
    time.sleep(120)
print(f"attempt {attempt} index {index} scratch {seen}", flush=True)
if attempt == "0":
    while True:
        try:
            socket.create_connection(("rs-worker-0-0.rs", 7777), timeout=1).close()
            sys.exit(3)
        except OSError:
            time.sleep(0.2)
"""


def jobset_file(tmp_path: Path, image: str, failure_policy: dict | None, pod_failure: bool = False) -> Path:
    job: dict = {"parallelism": 2, "completions": 2, "completionMode": "Indexed", "backoffLimit": 0, "template": {
        "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
                 "volumes": [{"name": "scratch", "emptyDir": {}}],
                 "containers": [{"name": "main", "image": image, "command": ["python3", "-c", JOBSET_PROGRAM],
                                 "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}],
                                 "env": [{"name": "ATTEMPT", "valueFrom": {"fieldRef": {
                                     "fieldPath": f"metadata.labels['{ATTEMPT}']"}}}]}]}}}
    if pod_failure:
        job["podFailurePolicy"] = {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3]}}]}
    spec: dict = {"replicatedJobs": [{"name": "worker", "replicas": 1, "template": {"spec": job}}]}
    if failure_policy is not None:
        spec["failurePolicy"] = failure_policy
    path = tmp_path / "jobset.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                                    "metadata": {"name": "rs"}, "spec": spec}, sort_keys=False))
    return path


def run(tmp_path: Path, path: Path):
    r = trainspec("run", path, cwd=tmp_path, timeout=240)
    return r, norm(r.stdout + r.stderr)


def test_jobset_max_restarts_one_restarts_every_pod_fresh(tmp_path, test_image, leak_check):
    r, out = run(tmp_path, jobset_file(tmp_path, test_image, {"maxRestarts": 1}))
    assert r.returncode == 0, out
    assert "restart-attempt 1: worker-1 (Job rs-worker-0) failed (exit code 3" in out and "no rule matched" in out
    assert "attempt 1 index 0 scratch []" in out and "attempt 1 index 1 scratch []" in out  # new pods, new emptyDirs
    assert "restart-attempt 2" not in out
    assert "SUCCEEDED" in out and "after 1 whole-job restart" in out
    log0 = (next((tmp_path / ".trainspec/runs").iterdir()) / "worker-0.log").read_text()
    assert "attempt 0 index 0" in log0 and "attempt 1 index 0" in log0  # stopped mid-run, then run again


def test_jobset_max_restarts_zero_fails(tmp_path, test_image, leak_check):
    r, out = run(tmp_path, jobset_file(tmp_path, test_image, {"maxRestarts": 0}))
    assert r.returncode == 1, out
    assert "FAILED" in out and "ReachedMaxRestarts" in out and "restart-attempt 1" not in out


def test_jobset_fail_rule_on_pod_failure_policy_fails_without_restart(tmp_path, test_image, leak_check):
    policy = {"maxRestarts": 3, "rules": [{"name": "appError", "action": "FailJobSet",
                                           "onJobFailureReasons": ["PodFailurePolicy"]}]}
    r, out = run(tmp_path, jobset_file(tmp_path, test_image, policy, pod_failure=True))
    assert r.returncode == 1, out
    assert "rule appError (FailJobSet)" in out and "restart-attempt" not in out


# Worker 1 fails while the marker on the claim is missing; every pod of the second run finds it.
VOLCANO_PROGRAM = """
import os, sys, time
index = os.environ["VC_TASK_INDEX"]
first = not os.path.exists("/data/mark")
print(f"index {index} first {first}", flush=True)
if first and index == "1":
    open("/data/mark", "w").close()
    sys.exit(3)
"""


def volcano_file(tmp_path: Path, image: str, max_retry: int) -> Path:
    pod = {"spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "marks"}}],
                    "containers": [{"name": "main", "image": image, "command": ["python3", "-c", VOLCANO_PROGRAM],
                                    "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}}
    doc = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "vr"},
           "spec": {"maxRetry": max_retry, "plugins": {"env": []},
                    "policies": [{"event": "PodFailed", "action": "RestartJob"}],
                    "tasks": [{"name": "worker", "replicas": 2, "template": pod}]}}
    path = tmp_path / "volcano.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_volcano_restart_job_restarts_every_pod_then_succeeds(tmp_path, test_image, leak_check):
    r, out = run(tmp_path, volcano_file(tmp_path, test_image, max_retry=2))  # two runs: one restart
    assert r.returncode == 0, out
    assert "restart-attempt 1: worker-1 failed (exit code 3" in out and "the job's policy PodFailed (RestartJob)" in out
    assert "index 0 first False" in out and "index 1 first False" in out
    assert "SUCCEEDED" in out and "after 1 whole-job restart" in out


def test_volcano_max_retry_one_is_one_run(tmp_path, test_image, leak_check):
    r, out = run(tmp_path, volcano_file(tmp_path, test_image, max_retry=1))
    assert r.returncode == 1, out
    assert "retryCount reached maxRetry" in out and "restart-attempt" not in out


SERVER = """
import socket, time
time.sleep(1)  # not listening at once: only the start gate lets the client in on time
server = socket.create_server(("", 7777))
print("server listening", flush=True)
while True:
    server.accept()[0].close()
"""
CLIENT = """
import os, socket, sys
attempt = os.environ["ATTEMPT"]
socket.create_connection(("io-server-0-0.io", 7777), timeout=2).close()  # the server is ready: it listens
print(f"client attempt {attempt} reached the server", flush=True)
sys.exit(3 if attempt == "0" else 0)
"""


def test_jobset_in_order_start_gate_holds_on_the_restarted_attempt(tmp_path, test_image, leak_check):
    """startupPolicy InOrder: the client Job is created once the server's pod is ready, on every attempt."""
    def rjob(name: str, program: str, probe: bool) -> dict:
        container = {"name": "main", "image": test_image, "command": ["python3", "-c", program],
                     "env": [{"name": "ATTEMPT", "valueFrom": {"fieldRef": {
                         "fieldPath": f"metadata.labels['{ATTEMPT}']"}}}]}
        if probe:
            container["readinessProbe"] = {"tcpSocket": {"port": 7777}, "periodSeconds": 1}
        return {"name": name, "template": {"spec": {"backoffLimit": 0, "template": {"spec": {
            "restartPolicy": "Never", "terminationGracePeriodSeconds": 1, "containers": [container]}}}}}

    doc = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "io"},
           "spec": {"startupPolicy": {"startupPolicyOrder": "InOrder"}, "failurePolicy": {"maxRestarts": 1},
                    "successPolicy": {"operator": "All", "targetReplicatedJobs": ["client"]},
                    "replicatedJobs": [rjob("server", SERVER, True), rjob("client", CLIENT, False)]}}
    path = tmp_path / "jobset.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    r, out = run(tmp_path, path)
    assert r.returncode == 0, out
    assert "client attempt 0 reached the server" in out and "client attempt 1 reached the server" in out
    assert "after 1 whole-job restart" in out


TASK_A = """
import os, sys
index = os.environ["VC_TASK_INDEX"]
if not os.path.exists("/data/mark") and index == "1":
    open("/data/mark", "w").close()
    sys.exit(3)
if os.path.exists("/data/mark"):
    open(f"/data/a-{index}-after", "w").close()
print(f"a-{index} done", flush=True)
"""
TASK_B = """
import os, time
print("b start", flush=True)
while not all(os.path.exists(f"/data/a-{i}-after") for i in (0, 1)):
    time.sleep(0.2)
"""


def test_volcano_restart_task_restarts_only_that_task(tmp_path, test_image, leak_check):
    def task(name: str, replicas: int, program: str, policies: list) -> dict:
        return {"name": name, "replicas": replicas, "policies": policies, "template": {"spec": {
            "restartPolicy": "Never", "terminationGracePeriodSeconds": 1,
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "marks"}}],
            "containers": [{"name": "main", "image": test_image, "command": ["python3", "-c", program],
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}}}

    doc = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "vt"},
           "spec": {"maxRetry": 2, "plugins": {"env": []},
                    "tasks": [task("a", 2, TASK_A, [{"event": "PodFailed", "action": "RestartTask"}]),
                              task("b", 1, TASK_B, [])]}}
    path = tmp_path / "volcano.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    r, out = run(tmp_path, path)
    assert r.returncode == 0, out
    assert "restart-attempt 1: a-1 failed (exit code 3" in out and "restart the a pods (1 of 1" in out
    assert out.count("b start") == 1  # the other task's pod ran on untouched
    assert "after 1 restart of the a pods" in out


def test_sigint_during_a_restart_leaves_nothing_behind(tmp_path, test_image, leak_check):
    """Ctrl-C while the restart waits for the old pods' grace period: the run ends, nothing is recreated."""
    path = jobset_file(tmp_path, test_image, {"maxRestarts": 2})
    doc = yaml.safe_load(path.read_text())
    # index 0 ignores SIGTERM: it holds the restart for its whole grace period
    doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 8
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    proc = start("run", path, cwd=tmp_path)
    seen = []
    try:
        for line in proc.stdout:
            seen.append(line)
            if "stopping every replica" in line:
                break
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
    out = "".join(seen) + out
    assert proc.returncode == 130, out
    assert "restart-attempt 1:" in out and "creating every replica afresh" not in out and "INTERRUPTED" in out
