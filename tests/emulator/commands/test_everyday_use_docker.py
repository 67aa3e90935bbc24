"""Everyday use on a real Docker engine: a run found by its job name from any folder
(`logs`, `down`, `ps --format json`), `gc --all` kept to its state folder, `--set` and
`--claim` on a real run, everything missing reported at once, `--pull` failing clearly."""

from __future__ import annotations

import json

import pytest

from emuhelpers import norm, run_containers, spec, trainspec, wait_for

pytestmark = pytest.mark.docker


def _flaky(tmp_path, mode: str, edit=None):
    def change(doc):
        doc["spec"]["env"]["MODE"] = mode
        if edit:
            edit(doc)
    return spec("flaky.yaml", tmp_path, change)


def test_a_job_is_found_from_any_folder(tmp_path, docker_client, test_image, leak_check):
    """Reading (`logs`, `ps RUN`) finds a run from any folder; `ps` lists, and `down JOB` stops,
    only this folder's runs unless --all, and each says when another folder's run exists (issue 19)."""
    def rename(doc):  # a job name no other test's run has
        doc["metadata"]["name"] = "anyfolder"
    r = trainspec("run", _flaky(tmp_path, "sleep", rename), "--offline", "--detach", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    run_id = r.stdout.strip()
    wait_for(lambda: (tmp_path / ".trainspec/volumes/flaky-out/running").exists(), what="the worker to run")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    here = json.loads(trainspec("ps", "--format", "json", cwd=tmp_path).stdout)
    assert run_id in [row["run_id"] for row in here]
    ps = trainspec("ps", cwd=elsewhere)
    assert run_id not in ps.stdout and "started from other folders not listed" in ps.stderr, ps.stdout + ps.stderr
    ps = trainspec("ps", "--all", "--format", "json", cwd=elsewhere)
    rows = {row["run_id"]: row for row in json.loads(ps.stdout)}
    assert rows[run_id]["job"] == "anyfolder" and rows[run_id]["status"] == "Running", ps.stdout
    assert rows[run_id]["state_dir"] == str(tmp_path / ".trainspec")
    table = trainspec("ps", "--all", cwd=elsewhere).stdout
    assert "FOLDER" in table and str(tmp_path) in table, table
    one = json.loads(trainspec("ps", "anyfolder", "--format", "json", cwd=elsewhere).stdout)
    assert one["run_id"] == run_id and one["replicas"][0]["display"] == "worker-0"
    logs = trainspec("logs", "anyfolder", "worker-0", "-t", cwd=elsewhere)
    assert logs.returncode == 0 and "Z mode sleep, first attempt" in logs.stdout, logs.stdout + logs.stderr
    gc = trainspec("gc", "--all", cwd=elsewhere)  # another folder's live run is not this gc's business
    assert run_id not in gc.stdout and "nothing to remove" in gc.stdout, gc.stdout
    refused = trainspec("down", "anyfolder", "-t", "0", cwd=elsewhere)
    assert refused.returncode == 2 and "--all" in refused.stderr and str(tmp_path) in refused.stderr, refused.stderr
    assert [c for c in run_containers(docker_client, "anyfolder", tmp_path) if c.status == "running"]
    # a run of the same job from this folder: `down JOB` stops it and names the one left elsewhere
    mine = trainspec("run", _flaky(elsewhere, "sleep", rename), "--offline", "--detach", cwd=elsewhere)
    assert mine.returncode == 0, mine.stdout + mine.stderr
    wait_for(lambda: (elsewhere / ".trainspec/volumes/flaky-out/running").exists(), what="the second run")
    down = trainspec("down", "anyfolder", "-t", "0", cwd=elsewhere)
    assert down.returncode == 0 and mine.stdout.strip() in down.stdout and run_id not in down.stdout, down.stdout
    assert f"left 1 run(s) of anyfolder started from other folders running: {run_id}" in down.stderr, down.stderr
    assert run_containers(docker_client, "anyfolder", elsewhere) == []
    assert [c for c in run_containers(docker_client, "anyfolder", tmp_path) if c.status == "running"]
    down = trainspec("down", "anyfolder", "-t", "0", "--all", cwd=elsewhere)
    assert down.returncode == 0 and run_id in down.stdout, down.stdout + down.stderr
    assert run_containers(docker_client, "anyfolder", tmp_path) == []


def test_set_and_claim_on_a_real_run(tmp_path, test_image, engine, leak_check):
    out = tmp_path / "results"
    out.mkdir()
    r = trainspec("run", _flaky(tmp_path, "fail-once"), "--offline", "--set", "env.MODE=ok",
                  "--claim", f"flaky-out={out}:rw", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "worker-0 | mode ok, first attempt" in norm(r.stdout)
    assert (out / "attempted").read_text() == "x"                 # the claim is the host folder
    assert not (tmp_path / ".trainspec/volumes/flaky-out").exists()
    r = trainspec("run", _flaky(tmp_path, "ok"), "--offline", "--claim", "flaky-out=/etc", cwd=tmp_path)
    assert r.returncode == 2 and "refusing to mount host system paths" in r.stderr, r.stderr


def test_everything_missing_is_reported_at_once(tmp_path, test_image, leak_check):
    def edit(doc):
        doc["spec"]["env"]["TOKEN"] = {"secretKeyRef": {"name": "creds", "key": "token"}}
        doc["spec"]["env"]["CFG"] = {"configMapKeyRef": {"name": "settings", "key": "a"}}
    r = trainspec("run", _flaky(tmp_path, "ok", edit), "--offline", "--set", "image=trainspec-test:not-built-here",
                  cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "3 things a cluster would have are missing" in r.stderr
    assert "--secret creds" in r.stderr and "--configmap settings" in r.stderr
    assert "trainspec-test:not-built-here" in r.stderr and "--pull" in r.stderr
    assert "Traceback" not in r.stderr


def test_pull_that_fails_says_why_and_starts_nothing(tmp_path, test_image, leak_check):
    # a registry on loopback where nothing listens: the pull fails at once, no traffic leaves the machine
    r = trainspec("run", _flaky(tmp_path, "ok"), "--offline", "--pull", "--set", "image=127.0.0.1:9/nowhere/x:1",
                  cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "--pull: pulling 127.0.0.1:9/nowhere/x:1" in r.stdout and "could not pull" in r.stdout
    assert "not present locally: 127.0.0.1:9/nowhere/x:1" in r.stderr
