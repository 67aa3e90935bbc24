"""Reading a compiled compose.yaml into the run model (no Docker)."""

from __future__ import annotations

import pytest
from emuhelpers import ROOT, trainspec

from trainspec.compiler.errors import UsageError
from trainspec.emulator import inputs
from trainspec.emulator.from_compose import interpolate


@pytest.fixture
def full_compose(tmp_path):
    out = tmp_path / "compose.yaml"
    r = trainspec("compile", ROOT / "specs" / "full-features.yaml", "--target", "compose", "-o", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return out


def test_missing_bind_sources_point_at_the_notes(full_compose):
    with pytest.raises(UsageError, match=r"bind source .*configmaps/finetune-config does not exist .*notes"):
        inputs.load(str(full_compose))


def test_init_services_hooks_healthchecks_and_policies(full_compose, tmp_path):
    (tmp_path / "configmaps" / "finetune-config").mkdir(parents=True)
    (tmp_path / "secrets" / "internal-ca").mkdir(parents=True)
    job = inputs.load(str(full_compose), state_dir=str(tmp_path / "st"))
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
    assert interpolate("${WHO}-$WHO-${NOPE:-dflt}-${NOPE}") == "me-me-dflt-"
