"""Start gates as strong and as patient as the target's controller (issue 13 item 2), without Docker:
which inputs make which gates (JobSet InOrder/dependsOn, MPIJob launcherCreationPolicy, Volcano task
dependsOn, Compose depends_on), and how a gate waits on the live status."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import yaml

from trainspec.compiler.errors import UsageError
from trainspec.emulator.engine import startorder
from trainspec.emulator.model.job import Gate
from trainspec.emulator.model.policy import FAILED, SUCCEEDED
from trainspec.emulator.model.status import RUNNING, Status
from trainspec.emulator.readers import dispatch


def pod(restart=None, readiness=None):
    container = {"name": "main", "image": "img", "command": ["python3", "-c", "pass"]}
    if readiness:
        container["readinessProbe"] = readiness
    spec = {"containers": [container]}
    if restart:
        spec["restartPolicy"] = restart
    return {"spec": spec}


def load(tmp_path: Path, doc: dict):
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return dispatch.load(str(path), state_dir=str(tmp_path / "state"))


def jobset(rjobs, **spec):
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
            "spec": {**spec, "replicatedJobs": rjobs}}


def rjob(name, replicas=1, completions=1, depends=None, **jspec):
    out = {"name": name, "replicas": replicas, "template": {"spec": {
        "completionMode": "Indexed", "completions": completions, "parallelism": completions, **jspec,
        "template": pod()}}}
    if depends:
        out["dependsOn"] = [{"name": n, "status": s} for n, s in depends]
    return out


# -- which gates each controller makes ----------------------------------------------------


def test_jobset_depends_on_complete_waits_for_each_job_to_complete(tmp_path):
    """dependsOn Complete: every Job of A completed (CONVENTIONS-V2 §1.5, depends_on.go); a Job with
    a successPolicy completes once its rule's indexes succeeded."""
    job = load(tmp_path, jobset([rjob("a", replicas=2, completions=2, successPolicy={"rules": [
        {"succeededIndexes": "1"}]}), rjob("b", depends=[("a", "Complete")])]))
    assert job.gates == {"js-b-0-0": (Gate(("js-a-0-1",), "complete", "dependsOn Complete"),
                                      Gate(("js-a-1-1",), "complete", "dependsOn Complete"))}
    ready = load(tmp_path, jobset([rjob("a", completions=3, parallelism=2), rjob("b", depends=[("a", "Ready")])]))
    # a Job is ready once min(parallelism, completions) of its pods are ready or succeeded
    assert ready.gates["js-b-0-0"] == (Gate(("js-a-0-0", "js-a-0-1", "js-a-0-2"), "ready_or_done", "dependsOn Ready",
                                            need=2),)


def test_jobset_in_order_gates_each_replicated_job_on_the_one_before(tmp_path):
    job = load(tmp_path, jobset([rjob("a"), rjob("b"), rjob("c")], startupPolicy={"startupPolicyOrder": "InOrder"}))
    assert set(job.gates) == {"js-b-0-0", "js-c-0-0"}
    assert job.gates["js-c-0-0"] == (Gate(("js-b-0-0",), "ready_or_done", "InOrder", need=1),)


@pytest.mark.parametrize("rjobs, spec, says", [
    ([rjob("a"), rjob("b", depends=[("a", "Ready")])], {"startupPolicy": {"startupPolicyOrder": "InOrder"}},
     "StartupPolicy and DependsOn APIs are mutually exclusive"),
    ([rjob("a", depends=[("b", "Ready")]), rjob("b")], {}, "the first replicatedJob cannot use dependsOn"),
    ([rjob("a"), rjob("b", depends=[("c", "Ready")]), rjob("c")], {}, "'c' is not a replicatedJob listed before"),
    ([rjob("a"), rjob("b", depends=[("a", "Running")])], {}, # the CRD's enum, in the API server's words
     'Unsupported value: "Running": supported values: "Ready", "Complete"'),
])
def test_jobset_depends_on_the_api_server_refuses(tmp_path, rjobs, spec, says):
    with pytest.raises(UsageError, match=says):
        load(tmp_path, jobset(rjobs, **spec))


def mpijob(**spec):
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "m"}, "spec": {
        **spec, "mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": pod()},
                                    "Worker": {"replicas": 2, "template": pod()}}}}


def test_mpijob_launcher_creation_policy(tmp_path):
    waits = load(tmp_path, mpijob(launcherCreationPolicy="WaitForWorkersReady"))
    assert waits.gates == {"m-launcher": (Gate(("m-worker-0", "m-worker-1"), "ready",
                                               "launcherCreationPolicy WaitForWorkersReady"),)}
    assert load(tmp_path, mpijob()).gates == {}  # AtStartup: the launcher may start before the workers listen
    with pytest.raises(UsageError, match="'Later' is not AtStartup or WaitForWorkersReady"):
        load(tmp_path, mpijob(launcherCreationPolicy="Later"))


def volcano(*tasks):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "v"},
            "spec": {"tasks": list(tasks)}}


def test_volcano_task_depends_on(tmp_path):
    ps = {"name": "ps", "replicas": 2, "minAvailable": 1, "template": pod()}
    chief = {"name": "chief", "replicas": 1, "template": pod()}
    worker = {"name": "worker", "replicas": 1, "template": pod(), "dependsOn": {"name": ["ps", "chief"]}}
    job = load(tmp_path, volcano(ps, chief, worker))
    # each named task: minAvailable of its pods (the webhook's default: replicas) Running and ready
    assert job.gates == {"v-worker-0": (Gate(("v-ps-0", "v-ps-1"), "ready", "dependsOn ps", need=1),
                                        Gate(("v-chief-0",), "ready", "dependsOn chief", need=1))}
    anyone = load(tmp_path, volcano(ps, chief, {**worker, "dependsOn": {"name": ["ps", "chief"], "iteration": "any"}}))
    assert [g.why for g in anyone.gates["v-worker-0"][0].any_of] == ["dependsOn ps", "dependsOn chief"]
    assert load(tmp_path, volcano(ps, chief)).gates == {}
    with pytest.raises(UsageError, match="no task named 'pss'"):
        load(tmp_path, volcano(ps, {**worker, "dependsOn": {"name": ["pss"]}}))


# -- how a gate waits ------------------------------------------------------------------


class Runner:
    def __init__(self):
        self.started = threading.Event()
        self.stop_ev = threading.Event()
        self.wait_for = []
        self.said: list[str] = []

    def waiting(self, detail: str) -> None:
        self.said.append(detail)


def gate_of(gate: Gate, status: dict[str, Status], runner: Runner | None = None):
    display = {name: name.replace("js-", "") for name in status}
    return startorder._Gate(gate, runner or Runner(), status, display)


def test_a_gate_waits_until_it_holds_and_says_why():
    status = {"js-a-0": Status(), "js-a-1": Status()}
    runner = Runner()
    gate = gate_of(Gate(("js-a-0", "js-a-1"), "ready_or_done", "InOrder"), status, runner)
    assert not gate.wait(0.3)
    assert runner.said == ["waiting for a-0, a-1 (InOrder: not ready)"]
    status["js-a-0"].phase, status["js-a-0"].ready = RUNNING, True
    status["js-a-1"].phase = RUNNING  # running, but its readinessProbe has not passed
    assert not gate.wait(0.3) and runner.said[-1] == "waiting for a-1 (InOrder: not ready)"
    status["js-a-1"].phase = SUCCEEDED  # a Job's ready count includes its succeeded pods
    assert gate.wait(0.3)


def test_a_gate_with_no_timeout_waits_until_the_run_stops():
    status = {"js-a-0": Status(phase=RUNNING)}
    runner = Runner()
    gate = gate_of(Gate(("js-a-0",), "complete", "dependsOn Complete"), status, runner)
    result: list[bool] = []
    waiter = threading.Thread(target=lambda: result.append(gate.wait()))
    waiter.start()
    waiter.join(0.5)
    assert waiter.is_alive()  # no time limit: a cluster's controller keeps waiting
    runner.stop_ev.set()  # the job was decided, or Ctrl-C
    waiter.join(5)
    assert result == [False] and gate.failed is None
    status["js-a-0"].phase = FAILED
    assert not gate_of(Gate(("js-a-0",), "complete", "dependsOn Complete"), status).wait(0.3)  # never opens


def test_need_and_any_of():
    status = {n: Status() for n in ("js-p-0", "js-p-1", "js-c-0")}
    some = Gate(("js-p-0", "js-p-1"), "ready", "dependsOn p", need=1)
    either = Gate((), "ready", "dependsOn", any_of=(some, Gate(("js-c-0",), "ready", "dependsOn c")))
    runner = Runner()
    assert not gate_of(either, status, runner).wait(0.2)
    assert runner.said == ["waiting for 1 of p-0, p-1 (dependsOn p: not ready) or c-0 (dependsOn c: not ready)"]
    status["js-c-0"].phase, status["js-c-0"].ready = RUNNING, True
    assert gate_of(either, status).wait(0.2) and not gate_of(some, status).wait(0.2)
    status["js-p-1"].phase, status["js-p-1"].ready = RUNNING, True
    assert gate_of(some, status).wait(0.2)


@pytest.mark.parametrize("change, says", [
    ({"phase": FAILED, "exit_code": 1}, "dependency failed to start: ps-0 exited (1)"),
    ({"phase": SUCCEEDED, "exit_code": 0}, "dependency failed to start: ps-0 exited (0)"),
    ({"phase": RUNNING, "unhealthy": True}, "dependency failed to start: ps-0 is unhealthy"),
])
def test_compose_service_healthy_gives_up_as_compose_does(change, says):
    """docker compose up: 'dependency failed to start: container X is unhealthy / exited (N)'."""
    status = {"js-ps-0": Status()}
    gate = gate_of(Gate(("js-ps-0",), "healthy", "depends_on service_healthy", creates=False), status)
    for key, value in change.items():
        setattr(status["js-ps-0"], key, value)
    assert not gate.wait(5) and gate.failed.startswith(says)


def test_compose_and_start_order_inputs_make_gates_that_start_not_create(tmp_path):
    from trainspec.emulator.model.job import JobModel

    job = JobModel("j", "default", None, None, "None", None, None, [], {}, {}, kubelet_files=False,
                   start_after={"w": ("ps", "db")}, start_after_ready=frozenset({"db"}))
    assert startorder.enforced_gates(job, "w") == (Gate(("ps",), "started", "depends_on", creates=False),
                                                  Gate(("db",), "healthy", "depends_on service_healthy",
                                                       creates=False))


def test_compose_keeps_waiting_while_the_dependency_restarts():
    status = {"js-ps-0": Status(restarts=1, exit_code=1)}  # Pending: between two attempts ("restarting")
    gate = gate_of(Gate(("js-ps-0",), "healthy", "depends_on service_healthy", creates=False), status)
    assert not gate.wait(0.3) and gate.failed is None


def test_compose_start_period_failures_do_not_make_it_unhealthy(tmp_path):
    doc = {"name": "hc", "services": {"ps-0": {"image": "img", "healthcheck": {
        "test": ["CMD", "true"], "interval": "2s", "retries": 3, "start_period": "10s"}}}}
    path = tmp_path / "compose.yaml"
    path.write_text(yaml.safe_dump(doc))
    job = dispatch.load(str(path), state_dir=str(tmp_path / "state"))
    assert job.replicas[0].main.readiness.failure_threshold == 3 + 5


def test_a_replicated_job_of_no_jobs_holds_nothing_back(tmp_path):
    job = load(tmp_path, jobset([rjob("a", replicas=0), rjob("b")], startupPolicy={"startupPolicyOrder": "InOrder"},
                                successPolicy={"operator": "All", "targetReplicatedJobs": ["b"]}))
    assert job.gates == {}  # no Job of a to wait for: b's Jobs are created at once
