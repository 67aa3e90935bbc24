"""Reading a compiled compose.yaml into the run model (no Docker)."""

from __future__ import annotations

import pytest

from trainspec.compiler.errors import UsageError
from trainspec.emulator.readers import dispatch
from trainspec.emulator.readers.interpolation import InterpolationError, interpolate

from emuhelpers import ROOT, trainspec


@pytest.fixture
def full_compose(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf-test-token")  # its compose.yaml requires them: ${HF_TOKEN:?...}
    monkeypatch.setenv("WANDB_PROJECT", "p")
    out = tmp_path / "compose.yaml"
    r = trainspec("compile", ROOT / "specs" / "full-features.yaml", "--target", "compose", "-o", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return out


def test_missing_bind_sources_point_at_the_notes(full_compose):
    with pytest.raises(UsageError, match=r"bind source .*configmaps/finetune-config does not exist .*notes"):
        dispatch.load(str(full_compose), env_options=["HF_TOKEN", "WANDB_PROJECT"])


def test_init_services_hooks_healthchecks_and_policies(full_compose, tmp_path):
    (tmp_path / "configmaps" / "finetune-config").mkdir(parents=True)
    (tmp_path / "secrets" / "internal-ca").mkdir(parents=True)
    job = dispatch.load(str(full_compose), state_dir=str(tmp_path / "st"), env_options=["HF_TOKEN", "WANDB_PROJECT"])
    assert job.name == "bert-finetune" and job.framework == "pytorch" and job.active_deadline == 86400
    assert [r.display for r in job.replicas] == ["master-0", "worker-0", "worker-1"]
    master, worker = job.replicas[0], job.replicas[1]
    assert [c.name for c in master.init_containers] == ["master-0-init-fetch-vocab"]
    assert master.main.post_start == ["sh", "-c", "echo started > /tmp/started"]
    assert master.main.readiness is not None and master.main.readiness.period == 10
    assert master.restart_policy == "OnFailure" and master.backoff_limit == 4
    assert worker.policy == "ExitCode" and worker.failure_rules[0].matches(1)
    assert not worker.failure_rules[0].matches(137)
    assert master.main.accelerators == {"nvidia.com/gpu": 2}
    shm = next(m for m in master.main.mounts if m.target == "/dev/shm")
    assert shm.kind == "tmpfs" and shm.size == 8 * 2**30
    assert "bert-finetune-master-0.research.svc.cluster.local" in master.aliases
    assert not master.main.expand  # compose values are not Kubernetes-expanded


def test_compose_interpolation(monkeypatch):
    monkeypatch.setenv("WHO", "me")
    monkeypatch.delenv("NOPE", raising=False)
    assert interpolate("$$HOME and $${X}") == "$HOME and ${X}"
    assert interpolate("${WHO}-$WHO-${NOPE:-dflt}-${NOPE}", {"WHO": "me"}) == "me-me-dflt-"
    assert interpolate("${WHO}") == ""  # never the process's environment unless passed


def test_compose_interpolation_operators():
    env = {"SET": "v", "EMPTY": ""}
    assert interpolate("${SET:-d} ${EMPTY:-d} ${UNSET:-d}", env) == "v d d"
    assert interpolate("${SET-d} ${EMPTY-d} ${UNSET-d}", env) == "v  d"
    assert interpolate("${SET:+r} ${EMPTY:+r} ${UNSET:+r} ${EMPTY+r}", env) == "r   r"
    assert interpolate("${UNSET:-${SET}x} ${UNSET:-$${SET}}", env) == "vx ${SET}"
    assert interpolate("${SET:?no} ${EMPTY?no}", env) == "v "
    with pytest.raises(InterpolationError, match="required variable EMPTY is missing a value: give EMPTY"):
        interpolate("${EMPTY:?give EMPTY}", env, "services.a.environment.X")
    with pytest.raises(InterpolationError, match="required variable UNSET"):
        interpolate("${UNSET?}", env)
    for bad in ("cost: 5$", "$ {X}", "${X", "${1X}", "${X:x}"):
        with pytest.raises(InterpolationError, match="invalid interpolation"):
            interpolate(bad, env)


def test_a_required_variable_fails_before_anything_starts(tmp_path, monkeypatch):
    """Our own compose target writes ${VAR:?message} for every secret reference: with VAR unset,
    the run is refused with the message (no container, exit 2), not run with the literal text."""
    monkeypatch.delenv("TOKEN", raising=False)
    f = tmp_path / "compose.yaml"
    f.write_text("services:\n  worker-0:\n    image: trainspec-test:py3\n"
                 "    environment:\n      TOKEN: '${TOKEN:?TOKEN must be set: the value of Secret s key t}'\n")
    with pytest.raises(UsageError, match=r"services.worker-0.environment.TOKEN: required variable TOKEN .*"
                                         "TOKEN must be set: the value of Secret s key t"):
        dispatch.load(str(f), state_dir=str(tmp_path / "st"))
    r = trainspec("run", f, "--state-dir", tmp_path / "st", cwd=tmp_path, env={"TOKEN": ""})
    assert r.returncode == 2 and "required variable TOKEN" in r.stderr, r.stderr
    (tmp_path / ".env").write_text("TOKEN=from-dotenv\n")
    job = dispatch.load(str(f), state_dir=str(tmp_path / "st"))
    assert [(e.name, e.value) for e in job.replicas[0].main.env] == [("TOKEN", "from-dotenv")]
    monkeypatch.setenv("TOKEN", "from-env")  # the environment is not read ...
    job = dispatch.load(str(f), state_dir=str(tmp_path / "st"))
    assert job.replicas[0].main.env[0].value == "from-dotenv"
    job = dispatch.load(str(f), state_dir=str(tmp_path / "st"), env_options=["TOKEN"])  # ... unless passed, and wins
    assert job.replicas[0].main.env[0].value == "from-env"


def test_native_sidecar_services_are_refused_like_every_other_input(tmp_path):
    """pytorch-cluster's log shipper (an init container with restartPolicy Always) is a `restart: always`
    service beside each worker: refused, as from the spec and every manifest, not read as a second replica."""
    with pytest.raises(UsageError, match=r"services\.worker-0-init-log-shipper: native sidecar\(s\) log-shipper "
                                         r"\(initContainers with restartPolicy Always\)"):
        dispatch.load(str(ROOT / "golden" / "pytorch-cluster" / "compose.yaml"), state_dir=str(tmp_path))


def test_variables_are_substituted_before_the_file_is_checked(tmp_path):
    """As Compose does: the checks see the value a variable gives, not the `${...}` written."""
    path = tmp_path / "compose.yaml"
    path.write_text('services:\n  worker-0:\n    image: "${IMG:?set IMG}"\n    command: [sh, -c, "true"]\n')
    job = dispatch.load(str(path), env_options=["IMG=busybox:1.36"], state_dir=str(tmp_path / "s"), check_missing=False)
    assert job.replicas[0].main.image == "busybox:1.36"
    with pytest.raises(UsageError, match=r"compose.yaml:3:12: services.worker-0.image: required variable IMG is "
                                         r"missing a value: set IMG"):
        dispatch.load(str(path), state_dir=str(tmp_path / "s"), check_missing=False)
