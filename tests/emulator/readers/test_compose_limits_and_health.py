"""Compose input: pids limits honoured (issue 32), healthcheck intervals and timeouts of 0 are
Docker's defaults (never a loop of `exec`s with no delay)."""

from __future__ import annotations

import pytest
import yaml

from trainspec.compiler.errors import SpecErrors, UsageError
from trainspec.emulator.readers import dispatch


def _load(tmp_path, **service):
    doc = {"x-trainspec": {"job": "c"}, "services": {"job": {"image": "busybox", "command": ["true"], **service}}}
    (tmp_path / "compose.yaml").write_text(yaml.safe_dump(doc))
    return dispatch.load(str(tmp_path / "compose.yaml"), state_dir=str(tmp_path / "st"))


def test_pids_limit_either_spelling(tmp_path):
    assert _load(tmp_path, pids_limit=64).replicas[0].main.pids == 64
    assert _load(tmp_path, deploy={"resources": {"limits": {"pids": 65}}}).replicas[0].main.pids == 65
    assert _load(tmp_path, pids_limit=66, deploy={"resources": {"limits": {"pids": 66}}}).replicas[0].main.pids == 66
    assert _load(tmp_path, pids_limit=-1).replicas[0].main.pids is None   # the run's default applies
    assert _load(tmp_path).replicas[0].main.pids is None


def test_distinct_pids_limits_are_refused_at_the_field(tmp_path):
    with pytest.raises((SpecErrors, UsageError)) as info:
        _load(tmp_path, pids_limit=10, deploy={"resources": {"limits": {"pids": 20}}})
    text = str(info.value)
    assert "compose.yaml:" in text and "pids_limit 10 and deploy.resources.limits.pids 20 differ" in text
    with pytest.raises((SpecErrors, UsageError), match="whole number"):
        _load(tmp_path, pids_limit="many")


@pytest.mark.parametrize(("interval", "timeout", "period", "limit"), [
    (0, 0, 30.0, 30.0), ("0s", "0s", 30.0, 30.0), (None, None, 30.0, 30.0), ("5s", "2s", 5.0, 2.0),
    ("1m30s", "10s", 90.0, 10.0), ("1us", "1us", 0.001, 0.001)])
def test_healthcheck_zero_means_dockers_default(tmp_path, interval, timeout, period, limit):
    check = {"test": ["CMD", "true"]}
    if interval is not None:
        check["interval"] = interval
    if timeout is not None:
        check["timeout"] = timeout
    probe = _load(tmp_path, healthcheck=check).replicas[0].main.readiness
    assert probe is not None and probe.period == period and probe.timeout == limit
