"""`build` killed with SIGKILL at any moment leaves every job folder as it was, or complete."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest
import yaml

from helpers import run_cli

SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {{name: job-{i}}}
spec:
  framework: tensorflow
  image: img:{version}
  roles: {{ps: {{replicas: 2}}, worker: {{replicas: 16}}}}
"""


def _write_specs(folder, version: int, count: int = 12) -> None:
    for i in range(count):
        (folder / f"job-{i}.yaml").write_text(SPEC.format(i=i, version=version))


def _versions(out) -> set[str]:
    """The image version each job folder holds; fails on a torn or missing file."""
    seen = set()
    for job in sorted(p for p in out.iterdir() if not p.name.startswith(".")):
        text = (job / "k8s.yaml").read_text()
        docs = list(yaml.safe_load_all(text))
        images = {d["spec"]["template"]["spec"]["containers"][0]["image"] for d in docs if d["kind"] == "Job"}
        assert len(images) == 1, f"{job} mixes versions: {images}"
        seen |= images
    return seen


@pytest.mark.slow
def test_sigkill_during_build_never_tears_a_job_folder(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    out = tmp_path / "out"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    _write_specs(specs, 1)
    assert run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env).returncode == 0
    rng = random.Random(3)
    for version in range(2, 6):
        _write_specs(specs, version)
        proc = subprocess.Popen([sys.executable, "-m", "trainspec", "build", str(specs), "-o", str(out),
                                 "--target", "k8s", "--no-cache"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.1, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert len([p for p in out.iterdir() if not p.name.startswith(".")]) == 12
        assert _versions(out) <= {f"img:{v}" for v in range(1, version + 1)}
    assert run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env).returncode == 0
    assert _versions(out) == {"img:5"}
    leftovers = [p for p in out.rglob(".trainspec-*")]
    assert not leftovers, leftovers
