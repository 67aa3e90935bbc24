"""Issue 32's bounds on real Docker: a restarted container gets fresh ConfigMap files while its
predecessor's copy leaves the host's tmpfs (the run's bytes there stay what its containers hold), and
a replica's saved log keeps one time record per 10 ms, not one per line. The refusals themselves
need no engine: tests/compiler/test_bounds.py."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import pytest
import yaml

from emuhelpers import spec, trainspec


def _k8s(tmp_path: Path, edit_pod) -> Path:
    src = spec("flaky.yaml", tmp_path, None, out="src.yaml")
    r = trainspec("compile", src, "--target", "k8s", "-o", "k8s.yaml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    docs = [d for d in yaml.safe_load_all((tmp_path / "k8s.yaml").read_text()) if d]
    for d in docs:
        if d.get("kind") == "Job":
            edit_pod(d["spec"]["template"]["spec"])
    path = tmp_path / "edited.yaml"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"k": "from-the-configmap"}}
    path.write_text(yaml.safe_dump_all([cm, *docs]))
    return path


@pytest.mark.docker
def test_a_restart_gets_fresh_configmap_files_and_nothing_is_left(tmp_path, test_image, leak_check):
    def edit(pod):
        pod["restartPolicy"] = "OnFailure"
        pod.setdefault("volumes", []).extend([{"name": "cfg", "configMap": {"name": "cfg"}},
                                              {"name": "marks", "emptyDir": {}}])
        main = pod["containers"][0]
        main.setdefault("volumeMounts", []).extend([{"name": "cfg", "mountPath": "/cfg"},
                                                    {"name": "marks", "mountPath": "/marks"}])
        main.pop("args", None)
        # Attempt 1 reads its file and fails; attempt 2 (a new container, with a new copy of the
        # files: the first one's is removed before it is made) reads it again, then prints empty lines.
        main["command"] = ["python3", "-c",
                           "import os, sys\n"
                           "print('value', open('/cfg/k').read())\n"
                           "if not os.path.exists('/marks/once'):\n"
                           "    open('/marks/once', 'w').close(); sys.exit(1)\n"
                           "for i in range(20000): print()\n"
                           "print('second attempt ok')"]
    before = set(glob.glob("/dev/shm/trainspec-files-*"))
    r = trainspec("run", _k8s(tmp_path, edit), "--offline", "--cpu-only", "--state-dir", tmp_path / "st", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("value from-the-configmap") == 2, r.stdout
    assert "second attempt ok" in r.stdout
    assert not set(glob.glob("/dev/shm/trainspec-files-*")) - before
    logs = [p for p in glob.glob(str(tmp_path / "st" / "runs" / "*" / "*.log")) if "supervisor" not in p]
    worker = next(p for p in logs if os.path.basename(p).startswith("worker-0"))
    # 20,000 empty lines: their times are a few records, not 20,000 (18 bytes each before)
    assert os.path.getsize(worker + ".ts") < 20_000, os.path.getsize(worker + ".ts")
    shown = trainspec("logs", "--state-dir", tmp_path / "st", "flaky", "worker-0", cwd=tmp_path)
    assert shown.returncode == 0 and "second attempt ok" in shown.stdout, shown.stderr
