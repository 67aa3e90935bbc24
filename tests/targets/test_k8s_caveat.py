"""Plain k8s never hides that servers outlive the job (issue 12 item 4): validate and compile
warn at the role's position, the k8s output says so in its header; controller targets do not."""

from __future__ import annotations

import json

import pytest

from helpers import SPECS, run_cli


def _position(path, key: str) -> str:
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip().startswith(f"{key}:"):
            return f"{path}:{number}:{line.index(key) + 1}"
    raise AssertionError(key)


@pytest.mark.parametrize("spec, role", [("tf-ps.yaml", "ps"), ("mxnet-ps.yaml", "server"),
                                        ("mpi-horovod.yaml", "worker")])
def test_validate_warns_once_at_the_lingering_role(spec, role):
    result = run_cli("validate", str(SPECS / spec))
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1, result.stderr
    assert f"spec.roles.{role}: target k8s: on a plain cluster nothing stops the {role} replicas" in warnings[0]
    assert "hint: compile for jobset, kubeflow or volcano" in warnings[0]
    assert warnings[0].startswith(f"trainspec: warning: {SPECS / spec}:")


def test_warning_position_is_the_role(tmp_path):
    spec = tmp_path / "ps.yaml"
    spec.write_text((SPECS / "tf-ps.yaml").read_text())
    result = run_cli("validate", "--format", "json", str(spec))
    (warning,) = json.loads(result.stdout)
    assert warning["severity"] == "warning" and warning["path"] == "spec.roles.ps"
    line = spec.read_text().splitlines()[warning["line"] - 1]
    assert line.strip().startswith("ps:") or line.strip().startswith("replicas")


def test_targets_with_a_controller_and_a_deadline_do_not_warn(tmp_path):
    for target in ("kubeflow", "volcano"):
        result = run_cli("compile", str(SPECS / "tf-ps.yaml"), "--target", target)
        assert result.returncode == 0 and "warning" not in result.stderr, (target, result.stderr)
    assert "warning" in run_cli("compile", str(SPECS / "tf-ps.yaml"), "--target", "k8s").stderr
    spec = tmp_path / "deadline.yaml"
    spec.write_text((SPECS / "tf-ps.yaml").read_text().replace("spec:\n", "spec:\n  activeDeadlineSeconds: 600\n", 1))
    result = run_cli("compile", str(spec), "--target", "k8s")
    assert result.returncode == 0 and "warning" not in result.stderr, result.stderr
    assert "they run until activeDeadlineSeconds (600s)" in result.stdout.splitlines()[1]


def test_k8s_header_names_the_roles_and_the_targets_that_end_the_job():
    header = (SPECS.parent / "golden" / "tf-ps" / "k8s.yaml").read_text().splitlines()[1]
    assert header.startswith("# Caveat: no controller stops the ps replicas when worker-0 succeeds; they run forever")
    assert "jobset, kubeflow and volcano" in header
    assert "Caveat" not in (SPECS.parent / "golden" / "pytorch-ddp" / "k8s.yaml").read_text()
