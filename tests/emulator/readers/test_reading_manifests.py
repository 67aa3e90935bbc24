"""Reading manifests into the run model, and the rules applied to it (no Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from trainspec.compiler.errors import SpecErrors, UsageError
from trainspec.compiler.kube import parse_quantity
from trainspec.emulator.engine.podenv import command_and_args, container_env
from trainspec.emulator.host import gpus
from trainspec.emulator.model import policy
from trainspec.emulator.readers import dispatch, secrets
from trainspec.emulator.readers.k8s import from_k8s

from emuhelpers import trainspec as trainspec_cli

HERE = Path(__file__).parents[1]  # tests/emulator
ROOT = HERE.parents[1]
FIXTURE = HERE / "fixtures" / "tf-ps.yaml"


def load_spec(name: str, **kw):
    return dispatch.load(str(ROOT / "specs" / name), state_dir="/state", **kw)


def test_fixture_reads_roles_env_and_order():
    job = from_k8s(list(yaml.safe_load_all(FIXTURE.read_text())), source="tf-ps.yaml")
    assert job.name == "tfps" and job.framework == "tensorflow"
    assert [r.display for r in job.replicas] == ["ps-0", "ps-1", "worker-0", "worker-1"]  # servers first
    w1 = job.replicas[3]
    env = container_env(w1.main, w1, job.namespace, "10.0.0.5")
    assert env["TF_CONFIG"].startswith('{"cluster":{"ps":["tfps-ps-0:2222"')
    assert env["TF_CONFIG"].endswith('"task":{"type":"worker","index":1},"environment":"cloud"}')
    assert env["ESCAPED"] == "$(TRAINSPEC_ROLE)"
    assert w1.main.cpu == parse_quantity("500m") and w1.main.memory == 256 * 2**20
    # the Service's name is an alias of the one replica it selects
    ps0 = job.replicas[0]
    assert "tfps-ps-0.default.svc.cluster.local" in ps0.aliases
    assert [m.kind for m in w1.main.mounts] == ["files"]
    assert w1.main.mounts[0].files[0].path == "check.py"


def test_compiled_spec_gives_operator_env_and_policy():
    job = load_spec("pytorch-ddp.yaml")
    assert job.framework == "pytorch"
    _master, worker = job.replicas
    env = container_env(worker.main, worker, job.namespace, "10.1.1.3")
    assert env["MASTER_ADDR"] == "pytorch-ddp-master-0"
    assert env["RANK"] == "1" and env["WORLD_SIZE"] == "2"
    assert worker.main.accelerators == {"nvidia.com/gpu": 1}
    assert worker.restart_policy == "OnFailure" and worker.backoff_limit == 2
    assert any(m.kind == "tmpfs" and m.target == "/dev/shm" for m in worker.main.mounts)


def test_mpi_gets_a_fresh_ssh_key_and_the_hostfile():
    job = load_spec("mpi-horovod.yaml")
    launcher = next(r for r in job.replicas if r.role == "launcher")
    assert job.replicas[-1] is launcher  # workers (sshd) start first
    files = {f"{m.target}/{f.path}": f for m in launcher.main.mounts if m.kind == "files" for f in m.files}
    assert files["/root/.ssh/id_rsa"].data.startswith(b"-----BEGIN OPENSSH PRIVATE KEY-----")
    assert files["/root/.ssh/authorized_keys"].data == files["/root/.ssh/id_rsa.pub"].data
    assert files["/root/.ssh/id_rsa"].mode == 0o600
    assert b"mpi-horovod-worker-1" in files["/etc/mpi/hostfile"].data
    other = load_spec("mpi-horovod.yaml")
    other_key = next(f.data for r in other.replicas for m in r.main.mounts for f in m.files if f.path == "id_rsa")
    assert other_key != files["/root/.ssh/id_rsa"].data  # one key per run


def test_missing_secret_and_configmap_are_reported_with_a_hint():
    with pytest.raises(UsageError,
                       match=r"Secrets not in .*'hf-credentials' \(used by roles\.master\.env\.HF_TOKEN\).*--secret"):
        load_spec("full-features.yaml")
    with pytest.raises(UsageError, match=r"ConfigMaps not in .*'tracking' \(used by .*--configmap NAME"):
        load_spec("full-features.yaml", secret_options=["hf-credentials:token=x", "internal-ca:ca.crt=y"])


def test_secret_and_configmap_options(tmp_path):
    (tmp_path / "ca").mkdir()
    (tmp_path / "ca" / "ca.crt").write_text("CERT")
    envfile = tmp_path / "tracking.env"
    envfile.write_text("# comment\nproject=squad\n")
    job = load_spec("full-features.yaml",
                    secret_options=["hf-credentials:token=s3cr3t", f"internal-ca={tmp_path / 'ca'}"],
                    configmap_options=[f"tracking={envfile}", f"finetune-config={tmp_path / 'ca'}"])
    assert not job.secret_missing
    master = job.replicas[0]
    env = container_env(master.main, master, job.namespace)
    assert env["HF_TOKEN"] == "s3cr3t" and env["WANDB_PROJECT"] == "squad"
    certs = next(m for m in master.main.mounts if m.target == "/etc/certs")
    assert certs.secret and certs.files[0].data == b"CERT"
    with pytest.raises(UsageError, match="expected NAME=PATH, NAME:KEY=@FILE, .* or NAME:KEY=VALUE"):
        secrets.parse_key_options(["nonsense"], "--secret")


def test_secret_values_need_not_be_on_the_command_line(tmp_path, monkeypatch):
    """`--secret NAME:KEY=@FILE`, `NAME:KEY=@env:VAR` and `NAME=@PATH`: the value never is in argv."""
    (tmp_path / "tok").write_bytes(b"from-file\n")
    (tmp_path / "s.env").write_text("a=1\n")
    monkeypatch.setenv("MY_TOKEN", "from-env")
    got = secrets.parse_key_options([f"s:file=@{tmp_path / 'tok'}", "s:env=@env:MY_TOKEN", "s:lit=@@at",
                                    f"t=@{tmp_path / 's.env'}"], "--secret")
    assert got == {"s": {"file": b"from-file\n", "env": b"from-env", "lit": b"@at"}, "t": {"a": b"1"}}
    with pytest.raises(UsageError, match="environment variable NOPE_UNSET is not set"):
        secrets.parse_key_options(["s:k=@env:NOPE_UNSET"], "--secret")
    with pytest.raises(UsageError, match="cannot read"):
        secrets.parse_key_options([f"s:k=@{tmp_path / 'missing'}"], "--secret")


@pytest.mark.parametrize("doc_patch,message", [
    ({"volumes": [{"name": "v", "nfs": {"server": "x"}}]}, "volume type \\['nfs'\\] is not supported"),
    ({"containers": []}, "has no containers"),
])
def test_unsupported_input_is_a_clear_error(doc_patch, message):
    docs = list(yaml.safe_load_all(FIXTURE.read_text()))
    pod = docs[3]["spec"]["template"]["spec"]
    pod.update(doc_patch)
    if "volumes" in doc_patch:
        pod["containers"][0]["volumeMounts"] = [{"name": "v", "mountPath": "/v"}]
    with pytest.raises(UsageError, match=message):
        from_k8s(docs, source="x.yaml")


def test_two_jobs_need_a_choice():
    docs = list(yaml.safe_load_all(FIXTURE.read_text()))
    other = yaml.safe_load(yaml.safe_dump(docs[3]).replace("tfps", "other"))
    other["spec"]["template"]["spec"]["containers"][0].pop("env")
    with pytest.raises(UsageError, match="holds 2 jobs .*--job NAME"):
        from_k8s(docs + [other], source="x.yaml")
    assert from_k8s(docs + [other], source="x.yaml", job="other").name == "other"


def test_not_a_manifest_and_bad_yaml(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("a: [1\n")
    with pytest.raises(SpecErrors, match="x.yaml:2:1: .*YAML syntax error"):
        dispatch.load(str(p))
    p.write_text("kind: Deployment\nmetadata: {name: web}\n")
    with pytest.raises(UsageError, match="no trainspec workloads"):
        dispatch.load(str(p))
    with pytest.raises(UsageError, match="no such file"):
        dispatch.load(str(tmp_path / "missing.yaml"))


def test_command_expansion_like_the_kubelet():
    job = load_spec("tf-args-style.yaml")
    w = next(r for r in job.replicas if r.display == "worker-1")
    env = container_env(w.main, w, job.namespace)
    cmd, args = command_and_args(w.main, env)
    assert cmd[0] == "python"
    assert "--task_index=1" in args and any(a.startswith("--ps_hosts=tf-args-ps-0:2222") for a in args)


# -- success rules ---------------------------------------------------------------

@pytest.mark.parametrize("spec,decider", [
    ("tf-ps.yaml", ["worker-0"]), ("tf-chief.yaml", ["chief-0"]), ("pytorch-ddp.yaml", ["master-0"]),
    ("mxnet-ps.yaml", ["scheduler-0"]), ("mpi-horovod.yaml", ["launcher-0"]),
    ("tf-multiworker.yaml", ["worker-0", "worker-1", "worker-2"]),
])
def test_who_decides_success(spec, decider):
    job = load_spec(spec)
    assert [r.display for r in policy.deciders(job)[0]] == decider


def test_decide_success_and_failure():
    job = load_spec("tf-ps.yaml")
    names = {r.display: r.name for r in job.replicas}
    phases = {n: "Running" for n in names.values()}
    assert policy.decide(job, phases, {}) is None
    phases[names["worker-1"]] = "Succeeded"
    assert policy.decide(job, phases, {}) is None
    phases[names["worker-0"]] = "Succeeded"
    assert policy.decide(job, phases, {}).outcome == "Succeeded"
    phases[names["ps-1"]] = "Failed"
    d = policy.decide(job, phases, {names["ps-1"]: "exit code 1"})
    assert d.outcome == "Failed" and "ps-1" in d.reason and "exit code 1" in d.reason


# -- GPUs ------------------------------------------------------------------------

def test_gpus_are_disjoint_and_too_many_is_an_error():
    job = load_spec("tf-ps.yaml")  # 3 workers x 1 GPU
    assert gpus.assign(job, ["0", "1", "2", "3"]) == {
        "tf-ps-worker-0": ["0"], "tf-ps-worker-1": ["1"], "tf-ps-worker-2": ["2"]}
    with pytest.raises(UsageError, match="asks for 3 GPUs .* only 2 may be used .*--cpu-only"):
        gpus.assign(job, ["0", "1"])
    assert gpus.parse_gpus_option("none") == [] and gpus.parse_gpus_option("all") is None
    assert gpus.parse_gpus_option("2,3") == ["2", "3"]
    with pytest.raises(UsageError):
        gpus.parse_gpus_option("1,1")


def test_two_gpus_per_worker_go_in_pairs():
    job = load_spec("tf-ps.yaml")
    for r in job.replicas:
        if r.role == "worker":
            r.main.accelerators = {"nvidia.com/gpu": 2}
    got = gpus.assign(job, [str(i) for i in range(6)])
    assert got["tf-ps-worker-0"] == ["0", "1"] and got["tf-ps-worker-1"] == ["2", "3"]


def test_cpu_only_drops_and_other_vendors_are_refused():
    job = load_spec("tf-ps.yaml")
    for r in job.replicas:
        if r.role == "worker":
            r.main.accelerators = {"huawei.com/Ascend910": 1}
    with pytest.raises(UsageError, match="huawei.com/Ascend910.*--cpu-only"):
        gpus.check_accelerator_names(job)
    assert "worker: 1 each" in gpus.drop_gpus(job)
    assert gpus.requested(job) == {}


@pytest.mark.parametrize("q,want", [("500m", "0.5"), ("2", "2"), ("1Gi", str(2**30)), ("1e3", "1000"),
                                    ("128M", "128000000"), (4, "4")])
def test_quantities(q, want):
    assert parse_quantity(q) == parse_quantity(want)


def test_bad_quantity():
    with pytest.raises(ValueError):
        parse_quantity("lots")


def test_the_compile_path_does_not_import_docker():
    import subprocess
    import sys

    code = ("import sys, argparse; from trainspec.emulator.commands import register; "
            "p = argparse.ArgumentParser(); register(p.add_subparsers()); "
            "from trainspec.emulator.readers import dispatch, k8s, plan; from trainspec.emulator.model import job, policy; "
            "from trainspec.emulator.host import gpus; from trainspec.emulator.engine import podenv; "
            "assert 'docker' not in sys.modules, 'docker imported'")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr


def test_exec_probe_commands_expand_like_the_prober():
    """kubelet: exec probes see $(VAR) from the static env (valueFrom counts as ""); hooks are not expanded."""
    pod_spec = {"restartPolicy": "Never", "containers": [{
        "name": "main", "image": "img",
        "env": [{"name": "A", "value": "a"}, {"name": "S", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "livenessProbe": {"exec": {"command": ["test", "$(A)", "$(S)", "$$(A)", "$(UNKNOWN)"]}},
        "lifecycle": {"postStart": {"exec": {"command": ["echo", "$(A)"]}}},
    }]}
    labels = {"trainspec.dev/job": "j", "trainspec.dev/role": "worker", "trainspec.dev/index": "0"}
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j-worker-0", "labels": labels},
           "spec": {"backoffLimit": 0, "template": {"metadata": {"labels": labels}, "spec": pod_spec}}}
    container = from_k8s([job], source="inline").replicas[0].main
    assert container.liveness.command == ["test", "a", "", "$(A)", "$(UNKNOWN)"]
    assert container.post_start == ["echo", "$(A)"]


@pytest.mark.parametrize("edit,message", [
    (lambda pod: pod["volumes"].append(dict(pod["volumes"][0])), "used twice"),
    (lambda pod: pod["containers"][0]["volumeMounts"].append(dict(pod["containers"][0]["volumeMounts"][0])),
     "mount path"),
    (lambda pod: pod["containers"][0]["ports"].append({"name": "a-very-long-port-name", "containerPort": 1}),
     "over 15 characters"),
    (lambda pod: pod.setdefault("initContainers", []).append({"name": "side", "image": "i", "restartPolicy": "Always"}),
     "native sidecar"),
])
def test_pods_the_api_server_rejects_are_refused(edit, message):
    """Issue 11 item 2: what the API server would reject is refused before anything runs."""
    docs = list(yaml.safe_load_all(FIXTURE.read_text()))
    pod = next(d for d in docs if d.get("kind") == "Job")["spec"]["template"]["spec"]
    pod.setdefault("volumes", [{"name": "v", "emptyDir": {}}])
    pod["containers"][0].setdefault("volumeMounts", [{"name": pod["volumes"][0]["name"], "mountPath": "/v"}])
    pod["containers"][0].setdefault("ports", [])
    edit(pod)
    with pytest.raises(UsageError, match=message):
        from_k8s(docs, source="tf-ps.yaml")
def test_compiled_files_get_the_compilers_yaml_limits(tmp_path):
    """An alias bomb or deep nesting in a compiled file is a clear error at once, not a hang or
    a RecursionError (the emulator reads them with the compiler's loader)."""
    bomb = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    bomb += [f"a{i}: &a{i} [*a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}, *a{i-1}]"
             for i in range(1, 12)]
    p = tmp_path / "bomb.yaml"
    p.write_text("\n".join(bomb) + "\n")
    with pytest.raises(SpecErrors, match="expands to more than"):
        dispatch.load(str(p))
    p.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(SpecErrors, match="nesting"):
        dispatch.load(str(p))
    r = trainspec_cli("run", p, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "nesting" in r.stderr, r.stderr
