"""Spec input runs from the plan; compiled files carry the run policy (no Docker).

The run model from_plan builds must run each replica as its k8s output would
(checked against from_k8s reading that output), and the success rule, restart
policies, start order, cleanup and deadline must come back from every input.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest
import yaml

from trainspec.compiler import runpolicy
from trainspec.compiler.errors import UsageError
from trainspec.compiler.plan import Cleanup, Restart, StartAfter, SuccessRule
from trainspec.emulator.engine import startorder
from trainspec.emulator.engine.podenv import command_and_args, container_env
from trainspec.emulator.model import policy
from trainspec.emulator.readers import dispatch
from trainspec.emulator.readers.compose import from_compose
from trainspec.emulator.readers.k8s import from_k8s
from trainspec.emulator.readers.plan import from_plan
from trainspec.targets import load_plans
from trainspec.targets.compose import render as compose
from trainspec.targets.k8s import render as k8s
from trainspec.targets.k8s.scheme import SHELL

import fuzzing

HERE = Path(__file__).parents[1]  # tests/emulator
ROOT = HERE.parents[1]
# A v1.3 job on a Trainer runtime runs with the runtime's definition (--runtime, or one Kubeflow Trainer ships): its
# own tests are tests/emulator/e2e/test_trainjob_runtime_docker.py.
SPECS = sorted(p.name for p in (ROOT / "specs").glob("*.yaml") if "\n  trainjob:" not in p.read_text())
SECRETS = {"hf-credentials": {"token": b"tok"}, "internal-ca": {"ca.crt": b"CERT"},
           "mpi-horovod-ssh": {"ssh-privatekey": b"PRIV", "ssh-publickey": b"PUB"}}
CONFIGMAPS = {"tracking": {"project": b"p"}, "finetune-config": {"a.yaml": b"x: 1"}}

TF_ALL_WORKERS = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: tf-all}
spec:
  framework: tensorflow
  image: img
  command: [python, -c, "pass"]
  tensorflow: {successPolicy: AllWorkers}
  activeDeadlineSeconds: 300
  cleanPodPolicy: All
  roles:
    ps: {replicas: 1}
    worker: {replicas: 2, restartPolicy: ExitCode}
"""


def plan_of(path: Path | str):
    (plan,) = load_plans(str(path), targets=("k8s", "compose"))
    return plan


def both(name: str):
    plan = plan_of(ROOT / "specs" / name)
    mine = from_plan(plan, secrets=copy.deepcopy(SECRETS), configmaps=CONFIGMAPS, state_dir="/s")
    theirs = from_k8s(k8s.objects(plan), source="k8s.yaml", secrets=copy.deepcopy(SECRETS),
                      configmaps=CONFIGMAPS, state_dir="/s")
    return plan, mine, theirs


# Paddle's rendezvous role names each pod by its own host on the k8s target (as on jobset), by its IP in a spec run
OWN_HOST = ("POD_IP", "POD_IP_DUMMY", "PADDLE_MASTER")


def _k8s_view(view: tuple) -> tuple:
    """The k8s output's view without what only the Job controller adds (JOB_COMPLETION_INDEX, in every
    container of an Indexed Job's pod) and Paddle's own-host variables."""
    return view[:2] + ({k: v for k, v in view[2].items() if k not in OWN_HOST + ("JOB_COMPLETION_INDEX",)},) \
        + view[3:]


def _k8s_named(mine: tuple, theirs: tuple, rename) -> tuple:
    """`mine` with each env value and command word that differs from `theirs` only by host names renamed."""
    def pick(a, b):
        return rename(a) if isinstance(a, str) and a != b and rename(a) == b else a
    env = {k: pick(v, theirs[2].get(k)) for k, v in mine[2].items() if k not in OWN_HOST}
    words = tuple(part if not isinstance(part, list) or not isinstance(other, list) or len(part) != len(other)
                  else [pick(a, b) for a, b in zip(part, other)] for part, other in zip(mine[3], theirs[3]))
    files = [(t, p, rename(d.decode()).encode() if (t, p, rename(d.decode()).encode(), m) in theirs[10] else d, m)
             for t, p, d, m in mine[10]]  # the MPI hostfile names the workers
    return mine[:2] + (env, words) + mine[4:10] + (files,) + mine[11:]


def _as_started(view: tuple) -> tuple:
    """A k8s container's view as its program starts: under the k8s target's rank prelude (`/bin/sh -c SCRIPT
    <command...>`, targets/k8s/scheme.py), the command after it and the variables it exports, as a real /bin/sh
    gives them from the container's environment."""
    command, args = view[3]
    if not command or tuple(command[:2]) != SHELL:
        return view
    ran = subprocess.run([*command[:3], "env"], env=view[2], capture_output=True, text=True, check=True, timeout=30)
    exported = dict(line.split("=", 1) for line in ran.stdout.splitlines() if "=" in line)
    env = view[2] | {k: v for k, v in exported.items() if view[2].get(k) != v and k not in ("PWD", "SHLVL", "_")}
    return view[:2] + (env, (command[3:], args)) + view[4:]


def _container_view(c, r, namespace):
    env = container_env(c, r, namespace, "10.0.0.9")
    files = sorted((m.target, f.path, f.data, f.mode) for m in c.mounts for f in m.files)
    mounts = sorted((m.target, m.kind, m.source, m.read_only, m.size) for m in c.mounts)
    probes = [(p.kind, p.command, p.port, p.path, p.period, p.failure_threshold) if p else None
              for p in (c.liveness, c.readiness, c.startup)]
    return (c.name, c.image, env, command_and_args(c, env), c.working_dir, c.ports, c.cpu, c.memory,
            c.accelerators, mounts, files, c.post_start, c.pre_stop, probes)


@pytest.mark.parametrize("name", SPECS)
def test_a_spec_runs_as_its_k8s_output_would(name):
    """from_plan (no target) and from_k8s(k8s output) give the same replicas, env, commands,
    mounts, resources, probes, hooks and restart behaviour."""
    plan = plan_of(ROOT / "specs" / name)
    if any(i.restart_policy == "Always" for r in plan.roles for i in r.init_containers):
        for read in (lambda: from_plan(plan, secrets=copy.deepcopy(SECRETS), configmaps=CONFIGMAPS, state_dir="/s"),
                     lambda: from_k8s(k8s.objects(plan), source="k8s.yaml", secrets=copy.deepcopy(SECRETS),
                                      configmaps=CONFIGMAPS, state_dir="/s")):
            with pytest.raises(UsageError, match="native sidecar"):  # both readers refuse it alike
                read()
        return
    _plan, mine, theirs = both(name)
    rename = fuzzing.k8s_hosts(_plan)
    assert [r.name for r in mine.replicas] == [r.name for r in theirs.replicas]
    for a, b in zip(mine.replicas, theirs.replicas):
        assert (a.role, a.index, a.workload, a.restart_policy, a.backoff_limit, a.policy) == \
               (b.role, b.index, b.workload, b.restart_policy, b.backoff_limit, b.policy), a.name
        assert [(f.action, f.operator, f.values) for f in a.failure_rules] == \
               [(f.action, f.operator, f.values) for f in b.failure_rules]
        assert set(b.aliases) <= set(a.aliases) and a.labels == b.labels and a.hostname == b.hostname
        # a spec runs with the plan's host names (<job>-<role>-<i>), its k8s output with the target's
        # (<job>-<role>-<i>.<job>, spec v1.3): both resolve in their runs; the texts differ by those names only
        started = _as_started(_container_view(b.main, b, theirs.namespace))
        assert _k8s_named(_container_view(a.main, a, mine.namespace), started, rename) == _k8s_view(started), a.name
        assert [_container_view(c, a, mine.namespace) for c in a.init_containers] == \
               [_k8s_view(_container_view(c, b, theirs.namespace)) for c in b.init_containers]
    assert (mine.success, mine.clean_pod_policy, mine.backoff_limit, mine.active_deadline, mine.framework) == \
           (theirs.success, theirs.clean_pod_policy, theirs.backoff_limit, theirs.active_deadline, theirs.framework)
    assert mine.secret_missing == theirs.secret_missing == {}


@pytest.mark.parametrize("name", SPECS)
def test_run_policy_round_trips_through_every_compiled_format(name):
    plan = plan_of(ROOT / "specs" / name)
    want = runpolicy.RunPolicy(plan.success, {r.name: r.restart for r in plan.roles}, plan.start_order,
                               plan.cleanup, plan.backoff_limit, plan.active_deadline_seconds)
    assert runpolicy.decode(runpolicy.encode(plan)) == want
    topology = k8s.topology_config_map(plan)
    assert runpolicy.parse_annotation(topology["metadata"]["annotations"][runpolicy.ANNOTATION]) == want
    doc = yaml.safe_load(compose.render(plan)[compose.FILE])
    assert runpolicy.decode(doc["x-trainspec"][runpolicy.COMPOSE_KEY]) == want
    assert all(svc.get("init") is True for svc in doc["services"].values())


@pytest.mark.parametrize("bad,message", [
    ({"success": {"role": "w", "scope": "some"}}, "success.scope"),
    ({"success": {"role": ""}}, "success.role"),
    ({"success": {"role": "w"}, "restart": {"w": {"policy": "Sometimes"}}}, "restart.w.policy"),
    ({"success": {"role": "w"}, "cleanup": {"pods": "Most"}}, "cleanup.pods"),
    ({"success": {"role": "w"}, "deadline": -1}, "deadline"),
    ({"success": {"role": "w"}, "version": 9}, "version 9"),
    ({"success": {"role": "w"}, "startOrder": [{"role": "l", "after": "w"}]}, "startOrder\\[0\\].after"),
])
def test_malformed_run_policy_names_the_field(bad, message):
    with pytest.raises(runpolicy.RunPolicyError, match=message):
        runpolicy.decode(bad)


def test_a_bad_annotation_is_a_clear_error():
    plan = plan_of(ROOT / "specs" / "tf-ps.yaml")
    objects = k8s.objects(plan)
    objects[0]["metadata"]["annotations"][runpolicy.ANNOTATION] = "{not json"
    with pytest.raises(UsageError, match="tf-ps-topology metadata.annotations.trainspec.dev/run-policy: not JSON"):
        from_k8s(objects, source="k8s.yaml")


def _tf_all(tmp_path):
    spec = tmp_path / "tf-all.yaml"
    spec.write_text(TF_ALL_WORKERS)
    plan = plan_of(spec)
    (tmp_path / "k8s.yaml").write_text(k8s.render(plan)[k8s.FILE])
    (tmp_path / "compose.yaml").write_text(compose.render(plan)[compose.FILE])
    return spec


@pytest.mark.parametrize("which", ["spec", "k8s.yaml", "compose.yaml"])
def test_all_workers_rule_from_every_input(tmp_path, which):
    """Issue 13: compose.yaml decided TF success with the wrong rule (it read a key never written)."""
    spec = _tf_all(tmp_path)
    job = dispatch.load(str(spec if which == "spec" else tmp_path / which), state_dir=str(tmp_path / "s"))
    assert job.success == SuccessRule("worker", "all")
    assert [r.display for r in policy.deciders(job)[0]] == ["worker-0", "worker-1"]
    names = {r.display: r.name for r in job.replicas}
    phases = {n: "Running" for n in names.values()}
    phases[names["worker-0"]] = "Succeeded"
    assert policy.decide(job, phases, {}) is None  # worker-0 alone is not enough
    phases[names["worker-1"]] = "Failed"
    assert policy.decide(job, phases, {}).outcome == "Failed"
    workers = [r for r in job.replicas if r.role == "worker"]
    assert all(r.policy == "ExitCode" and r.failure_rules[0].values == list(range(1, 128)) for r in workers)
    assert job.clean_pod_policy == "All" and job.active_deadline == 300


def test_hand_written_manifests_fall_back_to_the_frameworks_table():
    docs = list(yaml.safe_load_all((HERE / "fixtures" / "tf-ps.yaml").read_text()))
    job = from_k8s(docs, source="tf-ps.yaml")
    assert job.success == SuccessRule("worker") and job.start_order == () and not job.controller


# -- start order -----------------------------------------------------------------

def test_start_order_is_only_as_strong_as_the_targets(tmp_path):
    spec = ROOT / "specs" / "mpi-horovod.yaml"
    plan = plan_of(spec)
    (tmp_path / "k8s.yaml").write_text(k8s.render(plan)[k8s.FILE])
    (tmp_path / "compose.yaml").write_text(compose.render(plan)[compose.FILE])
    workers = ("mpi-horovod-worker-0", "mpi-horovod-worker-1")
    state = str(tmp_path / "s")
    from_spec = dispatch.load(str(spec), state_dir=state)
    assert from_spec.start_after == {} and from_spec.start_order == (StartAfter("launcher", ("worker",)),)
    ordered = dispatch.load(str(spec), state_dir=state, start_order=True)
    assert ordered.start_after == {"mpi-horovod-launcher-0": workers}
    from_k8s_file = dispatch.load(str(tmp_path / "k8s.yaml"), state_dir=state)
    assert from_k8s_file.start_after == {} and from_k8s_file.start_order == from_spec.start_order
    from_compose_file = dispatch.load(str(tmp_path / "compose.yaml"), state_dir=state)
    assert from_compose_file.start_after == {"mpi-horovod-launcher-0": workers}
    # TF has no start order: nobody waits, from any input
    assert dispatch.load(str(ROOT / "specs" / "tf-ps.yaml"), state_dir=state, start_order=True).start_after == {}


class _FakeRunner:
    def __init__(self):
        import threading

        self.started = threading.Event()
        self.stop_ev = threading.Event()
        self.wait_for = []


def _St(phase="Pending", ready=False):
    from trainspec.emulator.model.status import Status

    return Status(phase=phase, ready=ready)


def test_a_launcher_that_starts_before_its_workers_gets_a_note():
    job = from_plan(plan_of(ROOT / "specs" / "mpi-horovod.yaml"), secrets=copy.deepcopy(SECRETS))
    runners = {r.name: _FakeRunner() for r in job.replicas}
    status = {r.name: _St() for r in job.replicas}
    status["mpi-horovod-worker-0"].phase = "Running"
    notes: list[str] = []
    startorder.wire(job, runners, status, notes.append)
    launcher = runners["mpi-horovod-launcher-0"]
    assert all(g.wait(5) for g in launcher.wait_for)  # never blocks
    assert len(notes) == 1 and notes[0].startswith("launcher-0 started before worker-1 was running")
    assert all(not runners[n].wait_for for n in runners if "worker" in n)


def test_an_enforced_order_waits_for_started_and_ready():
    job = from_plan(plan_of(ROOT / "specs" / "mpi-horovod.yaml"), secrets=copy.deepcopy(SECRETS), start_order=True)
    job.start_after_ready = frozenset({"mpi-horovod-worker-1"})
    runners = {r.name: _FakeRunner() for r in job.replicas}
    status = {r.name: _St() for r in job.replicas}
    notes: list[str] = []
    startorder.wire(job, runners, status, notes.append)
    gates = runners["mpi-horovod-launcher-0"].wait_for
    assert not any(g.wait(0.3) for g in gates)  # nothing started: each times out
    for name in runners:
        status[name].phase = "Init"
    assert not any(g.wait(0.3) for g in gates)  # init containers running: not started yet
    for name in runners:
        status[name].phase = "Running"
    assert gates[0].wait(1) and not gates[1].wait(0.3)  # worker-1 started but is not ready
    status["mpi-horovod-worker-1"].ready = True
    assert all(g.wait(1) for g in gates) and notes == []


# -- what a plain cluster leaves running --------------------------------------------

def test_plain_kubernetes_leaves_servers_running_after_success(tmp_path):
    plan = plan_of(ROOT / "specs" / "tf-ps.yaml")
    path = tmp_path / "k8s.yaml"
    path.write_text(k8s.render(plan)[k8s.FILE])
    job = dispatch.load(str(path), state_dir=str(tmp_path / "s"))
    phases = {r.name: ("Running" if r.role == "ps" else "Succeeded") for r in job.replicas}
    note = policy.left_running(job, phases)
    assert note.startswith("on a cluster, ps-0, ps-1 would keep running") and "forever" in note
    job.active_deadline = 600.0
    assert "until activeDeadlineSeconds (600s" in policy.left_running(job, phases)
    assert policy.left_running(job, {n: "Succeeded" for n in phases}) is None
    # an operator (spec input runs as the operators do) or compose stops them
    assert policy.left_running(dispatch.load(str(ROOT / "specs" / "tf-ps.yaml"), state_dir="/s"), phases) is None


def test_compose_reads_restart_backoff_per_role(tmp_path):
    spec = _tf_all(tmp_path)
    doc = yaml.safe_load((tmp_path / "compose.yaml").read_text())
    doc["x-trainspec"]["runPolicy"]["restart"]["worker"]["backoffLimit"] = 2
    job = from_compose(doc, str(tmp_path / "compose.yaml"), str(tmp_path / "s"))
    assert {r.backoff_limit for r in job.replicas if r.role == "worker"} == {2}
    assert spec.exists() and json.dumps(runpolicy.encode(plan_of(spec)))  # the plan encodes as JSON
    assert Restart("ExitCode").permanent_exit_codes == range(1, 128) and Cleanup().pods is None


def test_start_order_flag_is_for_specs_only(tmp_path):
    plan = plan_of(ROOT / "specs" / "mpi-horovod.yaml")
    (tmp_path / "k8s.yaml").write_text(k8s.render(plan)[k8s.FILE])
    with pytest.raises(UsageError, match="--start-order is for a spec"):
        dispatch.load(str(tmp_path / "k8s.yaml"), start_order=True)


def test_fallback_without_a_framework():
    docs = list(yaml.safe_load_all((HERE / "fixtures" / "tf-ps.yaml").read_text()))
    workers = [r for r in from_k8s(docs, source="tf-ps.yaml").replicas]
    assert policy.fallback_rule(None, workers, None) == SuccessRule("worker", "all")
    assert policy.fallback_rule(None, [r for r in workers if r.role == "ps"], None) is None
    assert policy.fallback_rule("tensorflow", workers, "AllWorkers") == SuccessRule("worker", "all")


SECURE = """apiVersion: trainspec/v1.1
kind: TrainingJob
metadata: {name: sec}
spec:
  framework: pytorch
  image: img
  command: [python3, train.py]
  podSecurityContext: {runAsGroup: 200}
  SECURITY
  roles: {master: {replicas: 1}}
"""


def test_a_spec_run_honours_or_refuses_security_fields_like_its_k8s_output(tmp_path):
    """Issue 15: from the plan too, security fields are honoured (user, read-only root) or refused."""
    path = tmp_path / "sec.yaml"
    path.write_text(SECURE.replace("SECURITY", "securityContext: {runAsUser: 1234, readOnlyRootFilesystem: true}"))
    (plan,) = load_plans(str(path), targets=("k8s",))
    main = from_plan(plan).replicas[0].main
    theirs = from_k8s([d for t in k8s.render(plan).values() for d in yaml.safe_load_all(t) if d]).replicas[0].main
    assert main.security == theirs.security
    assert (main.security.user, main.security.read_only_root) == ("1234:200", True)
    path.write_text(SECURE.replace("SECURITY", "securityContext: {privileged: true}"))
    (plan,) = load_plans(str(path), targets=("k8s",))
    with pytest.raises(UsageError, match="privileged: true is not supported"):
        from_plan(plan)
