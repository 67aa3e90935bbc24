"""The run policy from every input, on a real Docker engine (issue 13 items 2 and 3, issue 12 item 4)."""

from __future__ import annotations

import pytest

from emuhelpers import ROOT, norm, trainspec

pytestmark = pytest.mark.docker

# worker-0 succeeds at once; worker-1 fails a little later. AllWorkers: the job fails (the compose
# file used to be read with worker-0's rule and reported SUCCEEDED).
ALL_WORKERS = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: tf-all}
spec:
  framework: tensorflow
  image: IMAGE
  command: [sh, -c, 'if [ "$TRAINSPEC_INDEX" = 1 ]; then sleep 2; echo worker-1 fails; exit 3; fi; echo ok']
  tensorflow: {successPolicy: AllWorkers}
  roles:
    worker: {replicas: 2}
"""


@pytest.fixture
def all_workers(tmp_path, test_image):
    spec = tmp_path / "tf-all.yaml"
    spec.write_text(ALL_WORKERS.replace("IMAGE", test_image))
    for target in ("k8s", "compose"):
        r = trainspec("compile", spec, "--target", target, "-o", tmp_path / f"{target}.yaml", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    return spec


@pytest.mark.parametrize("which", ["spec", "k8s.yaml", "compose.yaml"])
def test_all_workers_job_with_a_failing_worker_fails_from_every_input(tmp_path, all_workers, leak_check, which):
    path = all_workers if which == "spec" else tmp_path / which
    r = trainspec("run", path, "--offline", cwd=tmp_path, timeout=180)
    out = norm(r.stdout)
    assert r.returncode == 1, out + r.stderr
    assert "job tf-all FAILED" in out and "worker-1 failed (exit code 3" in out, out


def test_plain_k8s_says_which_replicas_would_outlive_the_job(tmp_path, test_image, leak_check):
    """tf-ps from k8s.yaml: after worker-0 succeeds, the ps (servers that never exit) would keep
    running on a cluster — forever, since the spec sets no activeDeadlineSeconds."""
    spec = (ROOT / "specs" / "tf-ps.yaml").read_text()
    (tmp_path / "tf-ps.yaml").write_text(spec)
    assert trainspec("compile", tmp_path / "tf-ps.yaml", "--target", "k8s", "-o", tmp_path / "k8s.yaml",
                     cwd=tmp_path).returncode == 0
    r = trainspec("run", tmp_path / "k8s.yaml", "--image", test_image, "--cpu-only", "--offline", cwd=tmp_path,
                  timeout=300)
    out = norm(r.stdout)
    assert r.returncode == 0, out + r.stderr
    assert "would keep running after the job succeeded, forever (no activeDeadlineSeconds)" in out, out
    assert "ps-0" in out.split("would keep running")[0].rsplit("\n", 1)[-1]
    # the same spec run directly runs as the operator does: nothing outlives the job
    r = trainspec("run", tmp_path / "tf-ps.yaml", "--image", test_image, "--cpu-only", "--offline", cwd=tmp_path,
                  timeout=300)
    assert r.returncode == 0 and "would keep running" not in r.stdout, r.stdout + r.stderr


MPI_NO_RETRY = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: mpi-order}
spec:
  framework: mpi
  image: IMAGE
  command: [sh, -c, 'echo launcher up']
  roles:
    launcher: {replicas: 1, restartPolicy: Never}
    worker:
      replicas: 2
      command: [/usr/sbin/sshd, -De]
      initContainers:
        - name: slow
          command: [sh, -c, 'sleep 6']
"""


def _first(out: str, replica: str, text: str) -> int:
    return next(i for i, line in enumerate(out.splitlines()) if f"trainspec: {replica} " in line and text in line)


def test_start_order_only_when_asked_and_a_note_when_the_launcher_is_early(tmp_path, test_image, leak_check):
    """Workers that take 6 s to run (an init container): without an order (k8s semantics) the
    launcher starts first and a note says so; with --start-order it waits for them to run."""
    spec = tmp_path / "mpi-order.yaml"
    spec.write_text(MPI_NO_RETRY.replace("IMAGE", test_image))
    r = trainspec("run", spec, "--offline", cwd=tmp_path, timeout=180)
    out = norm(r.stdout)
    assert r.returncode == 0, out + r.stderr
    assert "launcher-0 started before" in out and "the job asks for launcher after worker" in out, out
    r = trainspec("run", spec, "--offline", "--start-order", cwd=tmp_path, timeout=180)
    out = norm(r.stdout)
    assert r.returncode == 0, out + r.stderr
    assert "started before" not in out, out
    # the launcher's start waited for both workers' (the workers' lines come first)
    assert _first(out, "worker-1", "-> Running") < _first(out, "launcher-0", "-> Running"), out
