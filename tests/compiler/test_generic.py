"""Spec v1.2: framework: generic, spec.success, and the kept upstream names (taskName, containerName).

Plan and every target, each output checked against its real schema (strict Kubernetes OpenAPI, the
JobSet / Volcano / Kubeflow CRDs, the Compose Specification)."""

from __future__ import annotations

import textwrap

import kubernetes_validate
import pytest
import yaml

from trainspec.compiler import SpecErrors
from trainspec.compiler.plan import resolved_env
from trainspec.targets import render

import schemas
from helpers import SPECS, plan_text, run_cli

K8S_VERSION = "1.33"

GENERIC = """\
apiVersion: trainspec/v1.2
kind: TrainingJob
metadata: {name: gen}
spec:
  framework: generic
  image: busybox
  command: [sh, -c, "echo {{ role }} {{ index }} of {{ hosts.server | join(',') }}"]
"""


def spec_file(tmp_path, text: str, name: str = "job.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def plan_of(text: str, targets=None):
    (plan,) = plan_text(textwrap.dedent(text), targets)
    return plan


def docs(target: str, plan) -> list[dict]:
    return [d for text in render(target, plan).values() for d in yaml.safe_load_all(text) if d]


def errors_of(text: str, targets=None) -> str:
    with pytest.raises(SpecErrors) as info:
        plan_text(textwrap.dedent(text), targets)
    return str(info.value)


TWO_ROLES = GENERIC + """\
  roles:
    server: {replicas: 2}
    client-a: {replicas: 3}
"""


# --- validation ----------------------------------------------------------------------------------

def test_roles_are_named_freely_and_keep_the_written_order(tmp_path):
    plan = plan_of(TWO_ROLES)
    assert [r.name for r in plan.roles] == ["server", "client-a"]
    assert plan.framework == "generic" and plan.container_name == "main"
    assert all(r.restart_policy == "Never" and r.port == 8080 for r in plan.roles)


@pytest.mark.parametrize("body,message", [
    ("  roles: {Server: {replicas: 1}}\n", "'Server' is not a valid role name"),
    ("  roles: {a: {replicas: 0}, b: {replicas: 0}}\n", "0 replicas in all"),
    ("  success: {role: nope}\n  roles: {server: {replicas: 1}}\n", "'nope' is not a role of this job"),
    ("  success: {role: b}\n  roles: {a: {replicas: 1}, b: {replicas: 0}}\n", "role 'b' has 0 replicas"),
    ("  success: {role: a, policy: Some}\n  roles: {a: {replicas: 1}}\n", "'Some'"),
    ("  roles: {a: {replicas: 1, taskName: b}, b: {replicas: 1}}\n", "task name 'b' is also role 'a'"),
    ("  roles: {a: {replicas: 1, taskName: Bad_Name}}\n", "'Bad_Name' is not a valid taskName"),
    ("  containerName: x\n  roles: {a: {replicas: 1, initContainers: [{name: x, image: busybox}]}}\n",
     "init container 'x' has the main container's name"),
    ("  roles: {a: {replicas: 1, initContainers: [{name: main, image: busybox}]}}\n",
     "init container 'main' has the main container's name"),
])
def test_bad_generic_specs_are_positioned_errors(tmp_path, body, message):
    path = spec_file(tmp_path, GENERIC + body)
    result = run_cli("validate", str(path))
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "job.yaml:" in result.stderr and "Traceback" not in result.stderr


def test_success_is_for_generic_jobs_only(tmp_path):
    text = (SPECS / "tf-ps.yaml").read_text().replace("  roles:\n", "  success: {role: worker}\n  roles:\n", 1)
    message = errors_of(text)
    assert "spec.success" in message and "only in a generic job" in message


def test_v1_and_v11_specs_may_use_the_names(tmp_path):
    text = (SPECS / "tf-ps.yaml").read_text().replace("apiVersion: trainspec/v1\n", "apiVersion: trainspec/v1.1\n")
    text = text.replace("    ps:\n", "    ps:\n      taskName: pserver\n", 1)
    plan = plan_of(text, targets=("volcano",))
    assert plan.role("ps").task == "pserver"


# --- the plan ------------------------------------------------------------------------------------

def test_no_framework_variables_only_trainspec_ones(tmp_path):
    plan = plan_of(TWO_ROLES)
    replica = plan.role("client-a").replicas[2]
    env = dict(resolved_env(plan, replica))
    assert set(env) == {"TRAINSPEC_JOB", "TRAINSPEC_ROLE", "TRAINSPEC_INDEX", "TRAINSPEC_NUM_SERVER",
                        "TRAINSPEC_HOSTS_SERVER", "TRAINSPEC_NUM_CLIENT_A", "TRAINSPEC_HOSTS_CLIENT_A"}
    assert env["TRAINSPEC_HOSTS_SERVER"] == "gen-server-0:8080,gen-server-1:8080"
    assert replica.command[2] == "echo client-a 2 of gen-server-0:8080,gen-server-1:8080"


@pytest.mark.parametrize("success,scope,role,text", [
    ("", "all", "", "all replicas succeed"),
    ("  success: {role: server}\n", "all", "server", "all servers succeed"),
    ("  success: {role: server, policy: AnyReplica}\n", "any", "server", "any server succeeds"),
])
def test_success_rule(tmp_path, success, scope, role, text):
    plan = plan_of(GENERIC + success + "  roles:\n    server: {replicas: 2}\n    client: {replicas: 1}\n")
    assert (plan.success.role, plan.success.scope, plan.success.text) == (role, scope, text)
    assert plan.success.decided_by("server", 1) and plan.success.decided_by("client", 0) == (role == "")


# --- the targets ---------------------------------------------------------------------------------

def test_k8s_is_valid_and_names_the_container(tmp_path):
    plan = plan_of(TWO_ROLES.replace("  image: busybox\n", "  image: busybox\n  containerName: app\n"))
    out = docs("k8s", plan)
    for doc in out:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    jobs = [d for d in out if d["kind"] == "Job"]  # one Indexed Job per role (spec v1.3): 2 servers, 3 clients
    assert [(j["metadata"]["name"], j["spec"]["completions"]) for j in jobs] == [("gen-server", 2), ("gen-client-a", 3)]
    assert {j["spec"]["template"]["spec"]["containers"][0]["name"] for j in jobs} == {"app"}
    policy = yaml.safe_load(out[0]["metadata"]["annotations"]["trainspec.dev/run-policy"])
    assert policy["success"] == {"role": "", "scope": "all", "index": 0}


def test_jobset_uses_task_names_for_replicated_jobs_and_hosts(tmp_path):
    text = TWO_ROLES.replace("    server: {replicas: 2}\n", "    server: {replicas: 2, taskName: ps}\n")
    plan = plan_of(text + "  success: {role: server, policy: AnyReplica}\n")
    topology, js = docs("jobset", plan)
    assert schemas.errors(js) == []
    rjobs = {rj["name"]: rj for rj in js["spec"]["replicatedJobs"]}
    assert list(rjobs) == ["ps", "client-a"]
    assert js["spec"]["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["ps"]}
    assert rjobs["ps"]["template"]["spec"]["successPolicy"] == {"rules": [{"succeededCount": 1}]}
    assert "successPolicy" not in rjobs["client-a"]["template"]["spec"]
    assert topology["data"]["TRAINSPEC_HOSTS_SERVER"] == "gen-ps-0-0.gen:8080,gen-ps-0-1.gen:8080"
    client = rjobs["client-a"]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert client["command"][2] == "echo client-a $(TRAINSPEC_INDEX) of gen-ps-0-0.gen:8080,gen-ps-0-1.gen:8080"
    assert not any(e["name"].startswith(("K_MPI", "TF_", "MASTER")) for e in client["env"])


def test_jobset_default_success_is_every_replicated_job(tmp_path):
    js = docs("jobset", plan_of(TWO_ROLES))[1]
    assert js["spec"]["successPolicy"] == {"operator": "All"}
    assert "startupPolicy" not in js["spec"]


def test_volcano_tasks_hosts_and_success_follow_task_names(tmp_path):
    text = TWO_ROLES.replace("    server: {replicas: 2}\n", "    server: {replicas: 2, taskName: mpimaster}\n")
    plan = plan_of(text + "  success: {role: server}\n")
    topology, job = docs("volcano", plan)
    assert schemas.errors(job) == []
    tasks = {t["name"]: t for t in job["spec"]["tasks"]}
    assert list(tasks) == ["mpimaster", "client-a"]
    assert {"event": "TaskCompleted", "action": "CompleteJob"} in tasks["mpimaster"]["policies"]
    assert job["spec"]["plugins"] == {"env": [], "svc": ["--publish-not-ready-addresses"]}
    assert topology["data"]["TRAINSPEC_HOSTS_SERVER"] == ("gen-mpimaster-0.gen:8080,gen-mpimaster-1.gen:8080")


def test_volcano_any_replica_of_several_is_refused(tmp_path):
    message = errors_of(TWO_ROLES + "  success: {role: server, policy: AnyReplica}\n", ("volcano",))
    assert "spec.success.policy" in message and "target volcano" in message


@pytest.mark.parametrize("target", ["kubeflow", "trainjob"])
def test_kubeflow_and_trainjob_refuse_generic_naming_the_targets(tmp_path, target):
    result = run_cli("compile", str(spec_file(tmp_path, TWO_ROLES)), "--target", target)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"target {target}" in result.stderr and "k8s, jobset, volcano, compose or helm" in result.stderr


def test_build_leaves_kubeflow_and_trainjob_out(tmp_path):
    spec = spec_file(tmp_path, TWO_ROLES)
    result = run_cli("build", str(spec), "-o", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "out" / "gen").iterdir()) == [
        "compose.yaml", "helm", "jobset.yaml", "k8s.yaml", "volcano.yaml"]


def test_compose_records_the_success_rule(tmp_path):
    plan = plan_of(TWO_ROLES + "  success: {role: client-a, policy: AnyReplica}\n")
    (compose,) = docs("compose", plan)
    policy = compose["x-trainspec"]["runPolicy"]["success"]
    assert policy == {"role": "client-a", "scope": "any", "index": 0}
    assert sorted(compose["services"]) == ["client-a-0", "client-a-1", "client-a-2", "server-0", "server-1"]


# --- kept names on the other frameworks -----------------------------------------------------------

MPI = """\
apiVersion: trainspec/v1.2
kind: TrainingJob
metadata: {name: mpi}
spec:
  framework: mpi
  image: mpioperator/mpi-pi
  command: [sh, -c, "mpirun --hostfile /etc/volcano/mpiworker.host hostname"]
  roles:
    launcher: {replicas: 1, taskName: mpimaster}
    worker: {replicas: 2, taskName: mpiworker, containerName: mpi-worker}
"""


def test_volcano_mpi_keeps_the_upstream_task_names(tmp_path):
    plan = plan_of(MPI)
    topology, job = docs("volcano", plan)
    assert schemas.errors(job) == []
    assert [t["name"] for t in job["spec"]["tasks"]] == ["mpimaster", "mpiworker"]
    assert job["spec"]["plugins"]["mpi"] == ["--master=mpimaster", "--worker=mpiworker", "--port=22"]
    assert topology["data"]["hostfile"] == "mpi-mpiworker-0.mpi slots=1\nmpi-mpiworker-1.mpi slots=1\n"
    containers = {t["name"]: t["template"]["spec"]["containers"][0]["name"] for t in job["spec"]["tasks"]}
    assert containers == {"mpimaster": "mpi", "mpiworker": "mpi-worker"}
    # mpi-operator takes the first container, whatever its name: the kubeflow target keeps it
    (mpijob,) = [d for d in docs("kubeflow", plan) if d["kind"] == "MPIJob"]
    assert schemas.errors(mpijob) == []
    worker = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    assert worker["name"] == "mpi-worker"


def test_volcano_tensorflow_plugin_names_the_tasks(tmp_path):
    text = (SPECS / "tf-ps.yaml").read_text().replace("    ps:\n", "    ps:\n      taskName: pserver\n", 1)
    job = docs("volcano", plan_of(text, targets=("volcano",)))[1]
    assert "--ps=pserver" in job["spec"]["plugins"]["tensorflow"]
    assert "pserver" in [t["name"] for t in job["spec"]["tasks"]]


def test_kubeflow_refuses_a_container_the_operator_would_not_find(tmp_path):
    text = (SPECS / "jax.yaml").read_text().replace("  roles:\n", "  containerName: jax-worker\n  roles:\n", 1)
    message = errors_of(text, ("kubeflow",))
    assert "spec.containerName" in message and "'jax'" in message and "target kubeflow" in message
    # the other targets keep the name
    plan = plan_of(text, targets=("jobset", "k8s"))
    js = docs("jobset", plan)[1]
    assert js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["name"] == \
        "jax-worker"


def test_plain_kubernetes_warns_of_roles_left_running(tmp_path):
    plan = plan_of(TWO_ROLES + "  success: {role: server}\n", targets=("k8s",))
    (warning,) = plan.target_warnings["k8s"]
    assert "client-a replicas still running when all servers succeed" in str(warning)
    assert not plan_of(TWO_ROLES, targets=("k8s",)).target_warnings  # every replica must finish


def test_trainjob_refuses_another_container_name(tmp_path):
    text = (SPECS / "jax.yaml").read_text().replace("  roles:\n", "  containerName: jax-worker\n  roles:\n", 1)
    message = errors_of(text, ("trainjob",))
    assert "target trainjob" in message and "'node'" in message


def test_a_dashed_role_in_a_template_is_told_how_to_write_it(tmp_path):
    text = GENERIC.replace("hosts.server | join(',')", "hosts.client-a") + "  roles:\n    client-a: {replicas: 1}\n"
    result = run_cli("validate", str(spec_file(tmp_path, text)))
    assert result.returncode == 2 and "hosts['client-a']" in result.stderr
