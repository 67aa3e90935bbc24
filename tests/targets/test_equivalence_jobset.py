"""Every example spec means the same to its program under the jobset target as under the k8s target.

Like tests/targets/test_equivalence.py (kubeflow / volcano): per replica, what a program
relies on (role, index, counts, host lists, TF_CONFIG task and cluster,
MASTER_* / WORLD_SIZE / RANK / PET_*, DMLC_*, the MPI hostfile and variables, the
command line and the user's env) from (a) the plan (`k8s`) and (b) jobset.yaml run
through a model of the JobSet and Indexed Job controllers (tests/jobset_model.py).
JobSet host names `<job>-<role>-<j>-<i>.<job>` are mapped to replica names first:
replica i of a role is pod i of its one Indexed Job, or (PyTorch workers) pod 0 of
its i-th Job.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jobset_model
import pytest
import yaml
from test_equivalence import k8s_views, view

from trainspec.targets import load_plans, render
from trainspec.targets.jobset import render as jobset
from trainspec.targets.jobset.checks import JOBSET_FRAMEWORKS

from helpers import on_runtime

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted(p for p in (ROOT / "specs").glob("*.yaml")
               if yaml.safe_load(p.read_text())["spec"]["framework"] in JOBSET_FRAMEWORKS and not on_runtime(p))


def _plan(path):
    (plan,) = load_plans(str(path))
    return plan


def _docs(plan):
    (text,) = render("jobset", plan).values()
    return [d for d in yaml.safe_load_all(text) if d]


def jobset_canon(text: str, plan) -> str:
    """`<job>-<role>-<j>-<i>.<job>` -> `<job>-<role>-<index>`."""
    tasks = {r.task: r.name for r in plan.roles}  # the replicatedJob is the role's task (spec v1.2 taskName)
    roles = "|".join(re.escape(t) for t in sorted(tasks, key=len, reverse=True))
    job = re.escape(plan.name)
    pattern = re.compile(rf"\b{job}-({roles})-(\d+)-(\d+)\.{job}(?![\w-])")

    def one(m):
        role = tasks[m[1]]
        per_job = jobset.per_job(plan, plan.role(role))
        return f"{plan.name}-{role}-{m[2] if per_job else m[3]}"

    return pattern.sub(one, text)


def jobset_views(plan) -> dict:
    out = {}

    def c(text: str) -> str:
        return jobset_canon(text, plan)

    for pod in jobset_model.jobset_pods(_docs(plan)):
        env = {k: (c(v) if isinstance(v, str) else v) for k, v in pod.env.items()}
        files = {k: c(v) for k, v in pod.files.items()}
        command = None if pod.command is None else [c(s) for s in pod.command]
        args = None if pod.args is None else [c(s) for s in pod.args]
        v = view(plan, env, command, args, files, "jobset")
        out[(v["role"], v["index"])] = (v, env)
        assert c(pod.host) == f"{plan.name}-{v['role']}-{v['index']}", pod.host  # its own name is its host
    return out


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_every_replica_sees_the_same_topology_under_jobset(spec):
    plan = _plan(spec)
    k8s = k8s_views(plan)
    js = jobset_views(plan)
    expected = {(r.role, r.index) for r in plan.replicas()}
    assert set(k8s) == set(js) == expected
    for key in sorted(expected):
        (a, env_a), (b, env_b) = k8s[key], js[key]
        assert a == b, f"jobset differs from k8s for {key}"
        if plan.framework == "pytorch" and plan.elastic is not None:  # ranks come from the rendezvous
            assert env_b["PET_NNODES"] == env_a["PET_NNODES"]
            assert env_b["PET_RDZV_ENDPOINT"] == jobset_canon(env_a["PET_RDZV_ENDPOINT"], plan)
        elif plan.framework == "pytorch":
            assert env_a["PET_NODE_RANK"] == env_b["PET_NODE_RANK"] == env_b["RANK"] == str(a["rank"])
        if plan.framework == "tensorflow":
            assert json.loads(env_b["TF_CONFIG"]) == json.loads(jobset_canon(env_a["TF_CONFIG"], plan))
        if plan.framework == "paddle":
            assert_paddle_finds_its_rendezvous(plan, key, env_b)


def assert_paddle_finds_its_rendezvous(plan, key, env: dict) -> None:
    """paddle.distributed.launch serves the rendezvous where PADDLE_MASTER's host is its node address (POD_IP,
    else the pod's IP): exactly on the rendezvous replica (master 0 in PS mode, else worker 0)."""
    rendezvous = ("master" if plan.role("master") and plan.role("master").count else "worker", 0)
    host = env["PADDLE_MASTER"].rsplit(":", 1)[0]
    node = env.get("POD_IP", "<pod status.podIP>")
    if "POD_IP" in env:  # the jobset form: the pod's own JobSet name
        assert node == f"{plan.name}-{key[0]}-{key[1]}", node
    if host == "$(POD_IP_DUMMY)" or host == env.get("POD_IP_DUMMY"):  # the operator's form
        host = "<pod status.podIP>"
    assert (host == node) == (key == rendezvous), (key, host, node)


def test_the_model_notices_a_wrong_rank():
    """The comparison can fail: RANK from the job-index label (off by one) is caught."""
    plan = _plan(ROOT / "specs" / "full-features.yaml")
    docs = _docs(plan)
    worker = next(rj for rj in docs[1]["spec"]["replicatedJobs"] if rj["name"] == "worker")
    env = worker["template"]["spec"]["template"]["spec"]["containers"][0]["env"]
    rank = next(e for e in env if e["name"] == "RANK")
    rank["valueFrom"]["fieldRef"]["fieldPath"] = "metadata.labels['jobset.sigs.k8s.io/job-index']"
    pods = {p.name: p for p in jobset_model.jobset_pods(docs)}
    assert pods["bert-finetune-worker-1-0"].env["RANK"] == "1"  # should be 2: master is rank 0
    assert pods["bert-finetune-worker-1-0"].env["PET_NODE_RANK"] == "1"


def test_the_model_notices_a_paddle_pod_ip_that_is_not_its_own_name():
    """POD_IP without the index would make every worker think it is worker 0."""
    plan = _plan(ROOT / "specs" / "paddle.yaml")
    docs = _docs(plan)
    env = docs[1]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"]
    pod_ip = next(e for e in env if e["name"] == "POD_IP")
    pod_ip["value"] = pod_ip["value"].replace("$(TRAINSPEC_INDEX)", "0")
    pods = {p.name: p for p in jobset_model.jobset_pods(docs)}
    env1 = {k: jobset_canon(v, plan) if isinstance(v, str) else v for k, v in pods["paddle-collective-worker-0-1"].env.items()}
    with pytest.raises(AssertionError):
        assert_paddle_finds_its_rendezvous(plan, ("worker", 1), env1)
