"""Every example spec means the same to its program under the k8s target, Kubeflow and Volcano.

Per replica we compare what a training program relies on: its role and index,
the roles and replica counts, the host lists (normalised: `<job>-<role>-<i>`,
`<job>-<role>-<i>.<job>` and `....<ns>.svc` name the same replica; mpi-operator's
`<job>-launcher` is launcher 0), the framework's task type / index, world size
and rank, the MPI hostfile, the command line and the user's env.

(a) k8s: the plan's own env (`resolved_env`), (b) kubeflow.yaml + the model of
the training operator / mpi-operator, (c) volcano.yaml + the model of Volcano's
plugins (tests/operator_model.py, written from CONVENTIONS.md).

Where the operators themselves differ, the difference is asserted explicitly:
  * Volcano's TF_CONFIG has no "environment" key (Kubeflow and k8s: "cloud");
  * Kubeflow 1.x and Volcano list the evaluator in TF_CONFIG's cluster; the k8s
    target leaves it out (PRODUCT.md) - clusters are compared without it;
  * Volcano's WORLD_SIZE counts pods; Kubeflow's (and k8s') is pods x nprocPerNode;
  * Volcano gives PET_NODE_RANK only where we can write it (the master; every
    replica in per-replica-task mode): its pytorch plugin's RANK is appended
    after our env and the downward API cannot add 1.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from trainspec.compiler.frameworks import env_role
from trainspec.compiler.model import ConfigMapRef, FieldRef, ResourceFieldRef, SecretRef
from trainspec.compiler.plan import resolved_env
from trainspec.targets import load_plans, render

import operator_model
from helpers import on_runtime

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted(p for p in (ROOT / "specs").glob("*.yaml") if not on_runtime(p))


def _plan(path):
    (plan,) = load_plans(str(path))
    return plan


def _docs(plan, target):
    (text,) = render(target, plan).values()
    return [d for d in yaml.safe_load_all(text) if d]


def canon(text: str, plan) -> str:
    """Host names as `<job>-<role>-<i>`; a role's kept task name (spec v1.2 taskName: Volcano's hosts) as its role."""
    names = {r.name: r.name for r in plan.roles} | {r.task: r.name for r in plan.roles}
    roles = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    job, ns = re.escape(plan.name), re.escape(plan.namespace)
    pattern = re.compile(rf"\b{job}-({roles})(?:-(\d+))?(?:\.{job})?(?:\.{ns}\.svc(?:\.cluster\.local)?)?(?![\w.-])")
    return pattern.sub(lambda m: f"{plan.name}-{names[m[1]]}-{m[2] or 0}", text)


def _user_names(plan, role: str) -> list[str]:
    names = [name for name, _ in plan.role(role).sources.env]
    return names


def _pod_ip(value: str) -> str:
    """A user's fieldRef status.podIP: the operator model gives the pod's IP, the plan `<pod status.podIP>`."""
    return "<pod status.podIP>" if value == operator_model.POD_IP else value


def view(plan, env: dict, command, args, files: dict, target: str) -> dict:
    """What the program relies on, in a form every target can be compared in."""
    c = lambda s: canon(s, plan)  # noqa: E731
    role = env["TRAINSPEC_ROLE"]
    v = {
        "job": env["TRAINSPEC_JOB"],
        "role": role,
        "index": int(env["TRAINSPEC_INDEX"]),
        "counts": {r.name: int(env[f"TRAINSPEC_NUM_{env_role(r.name)}"]) for r in plan.roles},
        "hosts": {r.name: c(env[f"TRAINSPEC_HOSTS_{env_role(r.name)}"]) for r in plan.roles},
        "command": None if command is None else [c(s) for s in command],
        "args": None if args is None else [c(s) for s in args],
        "user_env": {name: (_pod_ip(c(env[name])) if isinstance(env[name], str) else env[name])
                     for name in _user_names(plan, role)},
    }
    fw = plan.framework
    if fw == "tensorflow":
        config = json.loads(env["TF_CONFIG"])
        v["tf_task"] = config["task"]
        v["tf_cluster"] = {k: [c(h) for h in hosts] for k, hosts in config["cluster"].items() if k != "evaluator"}
    elif fw == "pytorch" and plan.elastic is not None:
        v["rank"] = int(env["PET_NODE_RANK"]) if "PET_NODE_RANK" in env else None
        v["pet"] = {k: c(env[k]) for k in ("PET_RDZV_ENDPOINT", "PET_RDZV_BACKEND", "PET_NNODES",
                                           "PET_NPROC_PER_NODE")}
    elif fw == "pytorch":
        nproc = plan.nproc_per_node or "auto"
        per_node = int(nproc) if nproc.isdigit() else 1
        world = int(env["WORLD_SIZE"])
        v["nodes"] = world if target == "volcano" else world // per_node
        v["rank"] = int(env["RANK"])
        v["master"] = f"{c(env['MASTER_ADDR'])}:{env['MASTER_PORT']}"
        v["pet"] = {k: c(env[k]) for k in ("PET_MASTER_ADDR", "PET_MASTER_PORT", "PET_NNODES", "PET_NPROC_PER_NODE")}
    elif fw == "mxnet":
        v["dmlc"] = {k: c(env[k]) for k in ("DMLC_ROLE", "DMLC_PS_ROOT_URI", "DMLC_PS_ROOT_PORT", "DMLC_NUM_SERVER",
                                            "DMLC_NUM_WORKER") }
        v["dmlc"]["DMLC_WORKER_ID"] = env.get("DMLC_WORKER_ID")
    elif fw == "xgboost":
        v["xgb"] = {k: c(env[k]) if k in env else None for k in ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK",
                                                              "PYTHONUNBUFFERED", "WORKER_PORT", "WORKER_ADDRS")}
    elif fw == "jax":
        v["jax"] = {k: c(env[k]) for k in ("PYTHONUNBUFFERED", "COORDINATOR_ADDRESS", "COORDINATOR_PORT",
                                           "NUM_PROCESSES", "PROCESS_ID")}
    elif fw == "paddle":
        v["paddle"] = {k: env.get(k) for k in ("PYTHONUNBUFFERED", "PADDLE_JOB_ID", "PADDLE_NNODES",
                                               "PADDLE_SERVER_NUM", "PADDLE_TRAINER_NUM")}
        # the rendezvous replica names itself by its pod IP (k8s: still the kubelet's $(POD_IP_DUMMY))
        master = env["PADDLE_MASTER"]
        own_ip = env.get("POD_IP_DUMMY")
        for self_ref in ("$(POD_IP_DUMMY)",) + ((own_ip,) if isinstance(own_ip, str) else ()):
            if master.startswith(self_ref + ":"):
                master = f"{plan.name}-{role}-{v['index']}" + master[len(self_ref):]
        v["paddle"]["PADDLE_MASTER"] = c(master)
    elif fw == "mpi" and role == "launcher":
        hostfile = files["/etc/mpi/hostfile"]
        v["hostfile"] = [c(line) for line in hostfile.splitlines()]
        v["mpi_env"] = {k: env.get(k) for k in ("OMPI_MCA_orte_default_hostfile", "OMPI_MCA_orte_set_default_slots",
                                                "OMPI_MCA_orte_keep_fqdn_hostnames")}
    return v


def _ref(value):
    if isinstance(value, FieldRef):
        return f"<pod {value.field_path}>"
    if isinstance(value, ResourceFieldRef):
        return ("resource", value.resource)
    if isinstance(value, SecretRef):
        return ("secret", value.name, value.key)
    if isinstance(value, ConfigMapRef):
        return ("configMap", value.name, value.key)
    return value


def k8s_views(plan) -> dict:
    out = {}
    for replica in plan.replicas():
        env = {name: _ref(value) for name, value in resolved_env(plan, replica)}
        files = {"/etc/mpi/hostfile": plan.topology.get("hostfile", "")}
        out[(replica.role, replica.index)] = (view(plan, env, replica.command, replica.args, files, "k8s"), env)
    return out


def operator_views(plan, target) -> dict:
    pods = (operator_model.kubeflow_pods if target == "kubeflow" else operator_model.volcano_pods)(_docs(plan, target))
    out = {}
    for pod in pods:
        v = view(plan, pod.env, pod.command, pod.args, pod.files, target)
        out[(v["role"], v["index"])] = (v, pod.env)
        # the template's TRAINSPEC_* agree with the operator's own idea of the pod
        assert pod.role == v["role"]
        label = pod.labels.get(operator_model.KUBEFLOW_INDEX_LABEL if target == "kubeflow"
                               else operator_model.VOLCANO_INDEX_LABEL)
        if label is not None and target == "kubeflow":
            assert int(label) == v["index"]
        assert canon(pod.host, plan) == f"{plan.name}-{v['role']}-{v['index']}", pod.host
    return out


def _drop(v: dict, *keys) -> dict:
    return {k: val for k, val in v.items() if k not in keys}


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.stem)
def test_every_replica_sees_the_same_topology(spec):
    plan = _plan(spec)
    k8s = k8s_views(plan)
    # framework: generic has no Kubeflow kind (the kubeflow target refuses it): compare k8s and volcano
    kubeflow = k8s if "kubeflow" in plan.unsupported else operator_views(plan, "kubeflow")
    volcano = operator_views(plan, "volcano")
    expected = {(r.role, r.index) for r in plan.replicas()}
    assert set(k8s) == set(kubeflow) == set(volcano) == expected  # same roles, same replica counts

    for key in sorted(expected):
        (a, env_a), (b, env_b), (c, env_c) = k8s[key], kubeflow[key], volcano[key]
        assert a == b, f"kubeflow differs from k8s for {key}"
        if plan.framework == "pytorch" and "PET_NODE_RANK" not in env_c and plan.elastic is None:
            assert key[0] == "worker"  # documented: no PET_NODE_RANK for Volcano workers (one task per role)
        assert a == c, f"volcano differs from k8s for {key}"
        if plan.framework == "pytorch" and plan.elastic is None:
            rank = str(a["rank"])
            assert env_a["PET_NODE_RANK"] == env_b["PET_NODE_RANK"] == rank
            assert env_c.get("PET_NODE_RANK", rank) == rank
        if plan.framework == "tensorflow":
            # documented operator differences in TF_CONFIG
            assert json.loads(env_a["TF_CONFIG"])["environment"] == "cloud"
            assert json.loads(env_b["TF_CONFIG"])["environment"] == "cloud"
            assert "environment" not in json.loads(env_c["TF_CONFIG"])
            has_evaluator = plan.role("evaluator") is not None and plan.total_replicas > 1
            assert "evaluator" not in json.loads(env_a["TF_CONFIG"])["cluster"]
            assert ("evaluator" in json.loads(env_b["TF_CONFIG"])["cluster"]) == has_evaluator
            assert ("evaluator" in json.loads(env_c["TF_CONFIG"])["cluster"]) == has_evaluator


def test_volcano_world_size_counts_pods_kubeflow_counts_processes():
    plan = _plan(ROOT / "specs" / "full-features.yaml")  # 3 pods x nprocPerNode 2
    kubeflow = operator_views(plan, "kubeflow")
    volcano = operator_views(plan, "volcano")
    assert kubeflow[("worker", 1)][1]["WORLD_SIZE"] == "6"
    assert volcano[("worker", 1)][1]["WORLD_SIZE"] == "3"
    assert kubeflow[("worker", 1)][1]["RANK"] == volcano[("worker", 1)][1]["RANK"] == "2"


def test_per_index_templates_reach_each_replica():
    """tf-args uses --task_index={{ index }}: Kubeflow through $(TRAINSPEC_INDEX), Volcano one task per replica."""
    plan = _plan(ROOT / "specs" / "tf-args-style.yaml")
    for target in ("kubeflow", "volcano"):
        views = operator_views(plan, target)
        for (role, index), (v, _) in views.items():
            assert f"--task_index={index}" in v["args"], (target, role, index)
            assert f"--job_name={role}" in v["args"]
    full = _plan(ROOT / "specs" / "full-features.yaml")
    for target in ("kubeflow", "volcano"):
        for (role, index), (v, _) in operator_views(full, target).items():
            assert v["user_env"]["RUN_NAME"] == f"bert-finetune-{role}-{index}"


def test_the_model_notices_a_wrong_index(monkeypatch):
    """The comparison can fail: an off-by-one TRAINSPEC_INDEX in the Kubeflow output is caught."""
    plan = _plan(ROOT / "specs" / "tf-ps.yaml")
    docs = _docs(plan, "kubeflow")
    for spec in docs[1]["spec"]["tfReplicaSpecs"].values():
        env = spec["template"]["spec"]["containers"][0]["env"]
        index = next(e for e in env if e["name"] == "TRAINSPEC_INDEX")
        index.pop("valueFrom")
        index["value"] = "0"
    pods = operator_model.kubeflow_pods(docs)
    worker1 = next(p for p in pods if p.name == "tf-ps-worker-1")
    assert worker1.env["TRAINSPEC_INDEX"] == "0"
    assert json.loads(worker1.env["TF_CONFIG"])["task"]["index"] == 1  # the two would disagree
