"""`trainspec run` on a real Docker engine: topology, env, volumes, policies, faults, cleanup."""

from __future__ import annotations

import json
import signal
import time

import pytest

from emuhelpers import HERE, SPECS, norm, run_containers, spec, start, trainspec, wait_for

pytestmark = pytest.mark.docker


def test_handwritten_k8s_fixture_runs_to_success(tmp_path, test_image, leak_check):
    r = trainspec("run", HERE / "fixtures" / "tf-ps.yaml", "--offline", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = norm(r.stdout)
    assert "worker-0 | worker-0: tfps-ps-0:2222 says ps-0" in out
    assert "worker-0 | worker-0: tfps-ps-1:2222 says ps-1" in out
    assert "job tfps SUCCEEDED" in out and "(worker-0 succeeded)" in out
    run_dir = next((tmp_path / ".trainspec" / "runs").iterdir())
    assert "says ps-1" in (run_dir / "worker-0.log").read_text()
    state = json.loads((run_dir / "state.json").read_text())
    assert state["status"] == "Succeeded" and state["finished"]


def test_tf_env_dns_init_hooks_and_output_volume(tmp_path, test_image, engine, leak_check):
    r = trainspec("run", SPECS / "tf-check.yaml", "--offline", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = norm(r.stdout)
    assert "chief-0 | chief-0: env ok, every peer name resolves" in out
    assert "chief-0 | chief-0: tfcheck-ps-1:2222 answered ps-1" in out
    assert "ps-0 ready" in out and "ps-1 ready" in out  # tcpSocket readiness probes passed
    # the PVC is a host folder that outlives the run; the ps ran their preStop hooks when stopped
    out_dir = tmp_path / ".trainspec" / "volumes" / "tfcheck-out"
    assert (out_dir / "chief.txt").read_text() == "chief done\n"
    assert (out_dir / "prestop-ps-0").read_text() == "stopped\n" and (out_dir / "prestop-ps-1").exists()


def _flaky(tmp_path, mode: str, **spec_fields):
    def edit(doc):
        doc["spec"]["env"]["MODE"] = mode
        doc["spec"].update(spec_fields)
    return spec("flaky.yaml", tmp_path, edit)


def test_on_failure_restarts_until_success(tmp_path, test_image, engine, leak_check):
    r = trainspec("run", _flaky(tmp_path, "fail-once"), "--offline", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "exit code 3; restarting" in r.stdout
    assert "worker-0  Succeeded  -      1" in r.stdout  # one restart in the summary


def test_never_fails_the_job_on_the_first_failure(tmp_path, test_image, leak_check):
    r = trainspec("run", _flaky(tmp_path, "fail-once", restartPolicy="Never"), "--offline", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "job flaky FAILED" in r.stdout and "exit code 3; restartPolicy Never" in r.stdout


def test_backoff_limit_ends_the_retries(tmp_path, test_image, leak_check):
    r = trainspec("run", _flaky(tmp_path, "fail", backoffLimit=2), "--offline", "--restart-backoff", "0.2",
                  cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "BackoffLimitExceeded" in r.stdout
    # OnFailure: the Job fails when its restarts reach backoffLimit, so 2 tries run
    assert r.stdout.count("mode fail,") == 2


def test_exit_code_policy_does_not_retry_application_errors(tmp_path, test_image, engine, leak_check):
    r = trainspec("run", _flaky(tmp_path, "fail", restartPolicy="ExitCode", backoffLimit=3), "--offline",
                  cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.count("mode fail,") == 1 and "not retryable" in r.stdout


def test_failing_liveness_probe_restarts_the_container(tmp_path, test_image, leak_check):
    def edit(doc):
        doc["spec"]["env"]["MODE"] = "liveness"
        doc["spec"]["roles"]["worker"]["probes"] = {
            "liveness": {"exec": ["cat", "/tmp/alive"], "initialDelaySeconds": 1, "periodSeconds": 1,
                         "failureThreshold": 2}}
    r = trainspec("run", spec("flaky.yaml", tmp_path, edit), "--offline", "--grace", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "liveness probe failed" in r.stdout
    assert "mode liveness, later attempt" in r.stdout


def test_http_readiness_probe(tmp_path, test_image, leak_check):
    def edit(doc):
        doc["spec"]["env"]["MODE"] = "serve"
        doc["spec"]["roles"]["worker"]["probes"] = {"readiness": {"httpGet": {"path": "/", "port": 8080},
                                                                  "periodSeconds": 1}}
    r = trainspec("run", spec("flaky.yaml", tmp_path, edit), "--offline", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "worker-0 ready" in norm(r.stdout)


def test_replica_that_fails_during_init(tmp_path, docker_client, test_image, leak_check):
    def edit(doc):
        doc["spec"]["restartPolicy"] = "Never"
        doc["spec"]["roles"]["worker"]["initContainers"] = [
            {"name": "fetch", "image": "trainspec-test:py3", "command": ["sh", "-c", "echo no data; exit 4"]}]
    r = trainspec("run", spec("flaky.yaml", tmp_path, edit), "--offline", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    out = norm(r.stdout)
    assert "worker-0:fetch | no data" in out
    # v1.3 k8s shape (issue 31): Never is the role's Indexed Job's backoffLimitPerIndex 0, and the message says both
    assert ("worker-0 failed (init container fetch exited 4; restartPolicy Never: its index failed "
            "(backoffLimitPerIndex 0))") in out
    assert "mode " not in out  # the main container never started


def test_container_name_collision_is_a_clear_error(tmp_path, docker_client, test_image, leak_check):
    squatter = docker_client.containers.create(test_image, "true", name="flaky-abc123-worker-0")
    try:
        r = trainspec("run", _flaky(tmp_path, "fail-once"), "--offline", "--run-id", "flaky-abc123", cwd=tmp_path)
    finally:
        squatter.remove(force=True)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "a container named flaky-abc123-worker-0 already exists" in r.stderr
    assert "Traceback" not in r.stderr


def test_active_deadline_fails_the_job(tmp_path, test_image, leak_check):
    t0 = time.time()
    r = trainspec("run", _flaky(tmp_path, "sleep", activeDeadlineSeconds=2), "--offline", "--grace", "1",
                  cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "DeadlineExceeded" in r.stdout
    assert time.time() - t0 < 30


@pytest.mark.parametrize("policy,rc,restarted", [("OnFailure", 0, True), ("ExitCode", 0, True),
                                                  ("Never", 1, False)])
def test_replica_killed_mid_run(tmp_path, docker_client, test_image, leak_check, policy, rc, restarted):
    path = _flaky(tmp_path, "sleep", restartPolicy=policy, backoffLimit=2)
    proc = start("run", path, "--offline", cwd=tmp_path)
    try:
        wait_for(lambda: (tmp_path / ".trainspec/volumes/flaky-out/running").exists(), what="the worker to run")
        (container,) = [c for c in run_containers(docker_client, "flaky", tmp_path) if c.status == "running"]
        container.kill()  # SIGKILL: exit code 137, a retryable failure for ExitCode
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == rc, out
    assert ("mode sleep, later attempt" in out) == restarted
    assert "exit code 137" in out


@pytest.mark.parametrize("sig,rc", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signals_stop_and_clean_up(tmp_path, docker_client, test_image, leak_check, sig, rc):
    proc = start("run", _flaky(tmp_path, "sleep"), "--offline", cwd=tmp_path)
    try:
        wait_for(lambda: (tmp_path / ".trainspec/volumes/flaky-out/running").exists(), what="the worker to run")
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == rc, out
    assert "INTERRUPTED" in out
    assert run_containers(docker_client, "flaky", tmp_path) == []


def test_sigkilled_cli_leaves_what_gc_removes(tmp_path, engine, test_image, leak_check, monkeypatch):
    docker_client = engine.client
    proc = start("run", _flaky(tmp_path, "sleep"), "--offline", cwd=tmp_path)
    try:
        wait_for(lambda: (tmp_path / ".trainspec/volumes/flaky-out/running").exists(), what="the worker to run")
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert run_containers(docker_client, "flaky", tmp_path), "SIGKILL gives no chance to clean up"
    monkeypatch.delenv("TRAINSPEC_ENGINE")  # gc finds the engine from the killed run's record
    ps = trainspec("ps", cwd=tmp_path)
    assert "orphaned" in ps.stdout and "flaky-" in ps.stdout, ps.stdout
    gc = trainspec("gc", cwd=tmp_path)
    assert gc.returncode == 0 and "removed 1 container(s), 1 network(s)" in gc.stdout, gc.stdout + gc.stderr
    assert run_containers(docker_client, "flaky", tmp_path) == []


def test_gc_leaves_live_runs_alone(tmp_path, docker_client, test_image, leak_check):
    proc = start("run", _flaky(tmp_path, "sleep"), "--offline", cwd=tmp_path)
    try:
        wait_for(lambda: (tmp_path / ".trainspec/volumes/flaky-out/running").exists(), what="the worker to run")
        gc = trainspec("gc", cwd=tmp_path)
        assert "flaky-" not in gc.stdout
        assert [c for c in run_containers(docker_client, "flaky", tmp_path) if c.status == "running"]
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    finally:
        proc.kill()


def test_missing_image_fails_fast_with_its_name(tmp_path, docker_client, test_image, leak_check):
    def edit(doc):
        doc["spec"]["image"] = "registry.example.com/nowhere/train:9.9"
    t0 = time.time()
    r = trainspec("run", spec("flaky.yaml", tmp_path, edit), "--offline", cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "registry.example.com/nowhere/train:9.9" in r.stderr and "never pulls" in r.stderr
    assert "Traceback" not in r.stderr and time.time() - t0 < 20


def test_no_docker_daemon_is_a_clear_error(tmp_path):
    r = trainspec("run", SPECS / "flaky.yaml", cwd=tmp_path, env={"DOCKER_HOST": f"unix://{tmp_path}/none.sock"})
    assert r.returncode == 2
    assert r.stderr.startswith("trainspec: error: cannot reach the Docker daemon") and "Traceback" not in r.stderr


def test_secrets_reach_the_container_but_no_saved_file(tmp_path, test_image, leak_check):
    value = "s3cr3t-value-7f1c"

    def edit(doc):
        doc["spec"]["env"]["TOKEN"] = {"secretKeyRef": {"name": "creds", "key": "token"}}
        doc["spec"]["volumes"].append({"name": "creds", "mountPath": "/etc/creds", "readOnly": True,
                                       "source": {"secret": "creds"}})
        doc["spec"]["command"] = ["python3", "-c",
                                  "import os; v = open('/etc/creds/token').read(); "
                                  f"assert os.environ['TOKEN'] == v == '{value}'; print('secret ok')"]
    path = spec("flaky.yaml", tmp_path, edit)
    r = trainspec("run", path, "--offline", cwd=tmp_path)
    assert r.returncode == 2 and "--secret creds" in r.stderr, r.stderr
    r = trainspec("run", path, "--offline", "--secret", f"creds:token={value}", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "worker-0 | secret ok" in norm(r.stdout)
    for f in (tmp_path / ".trainspec").rglob("*"):
        if f.is_file():
            assert value not in f.read_text(errors="replace"), f


def test_detach_ps_logs_down(tmp_path, engine, test_image, leak_check, monkeypatch):
    docker_client = engine.client
    path = _flaky(tmp_path, "sleep")
    r = trainspec("run", path, "--offline", "--detach", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    run_id = r.stdout.strip()
    assert run_id.startswith("flaky-")
    wait_for(lambda: (tmp_path / ".trainspec/volumes/flaky-out/running").exists(), what="the worker to run")
    monkeypatch.delenv("TRAINSPEC_ENGINE")  # no engine named from here on: the run's record names it
    ps = trainspec("ps", cwd=tmp_path)
    assert run_id in ps.stdout and "Running" in ps.stdout and "alive" in ps.stdout, ps.stdout
    one = trainspec("ps", run_id, cwd=tmp_path)
    assert "worker-0" in one.stdout and "Running" in one.stdout, one.stdout
    logs = wait_for(lambda: (lambda o: o if "first attempt" in o else None)(
        trainspec("logs", "flaky", "worker-0", cwd=tmp_path).stdout), what="log lines")
    assert logs.startswith("mode sleep, first attempt")
    down = trainspec("down", run_id, cwd=tmp_path)
    assert down.returncode == 0, down.stdout + down.stderr
    assert run_containers(docker_client, "flaky", tmp_path) == []
    state = json.loads((tmp_path / ".trainspec/runs" / run_id / "state.json").read_text())
    assert state["status"] == "Interrupted" and state["finished"] and state["engine"] == engine.name


def test_two_runs_of_one_job_do_not_collide(tmp_path, docker_client, test_image, leak_check):
    ids = []
    for _ in range(2):
        r = trainspec("run", _flaky(tmp_path, "hang"), "--offline", "--detach", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        ids.append(r.stdout.strip())
    assert ids[0] != ids[1]
    nets = {n.name for n in docker_client.networks.list(
        filters={"label": ["trainspec.dev/job=flaky", f"trainspec.dev/state-dir={tmp_path / '.trainspec'}"]})}
    assert nets == set(ids)
    running = [c for c in run_containers(docker_client, "flaky", tmp_path) if c.status == "running"]
    assert len(running) == 2
    down = trainspec("down", "flaky", cwd=tmp_path)  # a job name: every run of it
    assert down.stdout.count("removed") == 2, down.stdout
    assert run_containers(docker_client, "flaky", tmp_path) == []


def test_keep_leaves_the_run_for_inspection_until_down(tmp_path, docker_client, test_image, leak_check):
    r = trainspec("run", _flaky(tmp_path, "fail-once", restartPolicy="Never"), "--offline", "--keep", cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "--keep: containers and network of flaky-" in r.stdout
    (container,) = run_containers(docker_client, "flaky", tmp_path)
    assert container.status == "exited" and container.attrs["State"]["ExitCode"] == 3
    assert "flaky-" not in trainspec("gc", cwd=tmp_path).stdout  # a kept run is not garbage
    run_id = container.labels["trainspec.dev/run-id"]
    down = trainspec("down", run_id, cwd=tmp_path)
    assert "removed 1 container(s), 1 network(s)" in down.stdout, down.stdout
    assert run_containers(docker_client, "flaky", tmp_path) == []


@pytest.mark.parametrize("clean,ps_left_running", [("None", True), ("Running", False)])
def test_clean_pod_policy_decides_what_keeps_running(tmp_path, docker_client, test_image, leak_check, clean,
                                                    ps_left_running):
    def edit(doc):
        doc["spec"]["env"]["MODE"] = "ok"
        doc["spec"]["cleanPodPolicy"] = clean
        doc["spec"]["roles"] = {"ps": {"replicas": 1, "env": {"MODE": "hang"}}, "worker": {"replicas": 1}}
    r = trainspec("run", spec("flaky.yaml", tmp_path, edit), "--offline", "--keep", cwd=tmp_path)
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        if ps_left_running:  # no start order: under load the worker may finish before ps-0 is up
            wait_for(lambda: [c.status for c in run_containers(docker_client, "flaky", tmp_path, replica="ps-0")]
                     == ["running"], 30, "ps-0 running")
        ps = run_containers(docker_client, "flaky", tmp_path, replica="ps-0")
        assert [c.status == "running" for c in ps] == [ps_left_running]
    finally:
        trainspec("down", "flaky", cwd=tmp_path)


def test_a_created_pod_still_starts_after_the_job_decides_under_clean_pod_policy_none(
        tmp_path, docker_client, test_image, leak_check):
    # ps-0's pod exists (its init container is running) when worker-0 succeeds: on a cluster the
    # kubelet goes on and starts it, and cleanPodPolicy None leaves it running; it is not killed.
    def edit(doc):
        doc["spec"]["env"]["MODE"] = "ok"
        doc["spec"]["cleanPodPolicy"] = "None"
        doc["spec"]["roles"] = {
            "ps": {"replicas": 1, "env": {"MODE": "hang"},
                   "initContainers": [{"name": "slow", "image": test_image, "command": ["sleep", "4"]}]},
            "worker": {"replicas": 1}}
    r = trainspec("run", spec("flaky.yaml", tmp_path, edit), "--offline", "--keep", cwd=tmp_path)
    try:
        assert r.returncode == 0, r.stdout + r.stderr
        wait_for(lambda: [c.status for c in run_containers(docker_client, "flaky", tmp_path, replica="ps-0")
                          if "init" not in c.name] == ["running"], 30, "ps-0 running")
    finally:
        trainspec("down", "flaky", cwd=tmp_path)


def test_logs_follow_until_the_run_ends(tmp_path, test_image, leak_check):
    r = trainspec("run", _flaky(tmp_path, "fail-once"), "--offline", "--detach", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    logs = trainspec("logs", r.stdout.strip(), "-f", cwd=tmp_path, timeout=60)
    assert logs.returncode == 0
    out = norm(logs.stdout)
    assert "worker-0 | mode fail-once, first attempt" in out and "worker-0 | done" in out


def _fixture_with_host_ports(tmp_path, ports):
    import yaml

    docs = list(yaml.safe_load_all((HERE / "fixtures" / "tf-ps.yaml").read_text()))
    workloads = [d for d in docs if d["kind"] == "Job"]
    for doc, port in zip(workloads, ports):
        doc["spec"]["template"]["spec"]["containers"][0]["ports"][0]["hostPort"] = port
    path = tmp_path / "ports.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def test_host_port_collisions_are_refused_before_starting(tmp_path, test_image, leak_check):
    import socket

    r = trainspec("run", _fixture_with_host_ports(tmp_path, [18222, 18222]), cwd=tmp_path)
    assert r.returncode == 2 and "ps-1 and ps-0 both publish host port 18222" in r.stderr, r.stderr
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = trainspec("run", _fixture_with_host_ports(tmp_path, [port]), cwd=tmp_path)
    # a hostPort without hostIP is published on 127.0.0.1 (issue 32): that address is the one checked
    assert r.returncode == 2 and f"publishes host port {port} on 127.0.0.1, which is already in use" in r.stderr, \
        r.stderr
