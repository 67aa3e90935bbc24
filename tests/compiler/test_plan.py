"""The plan is complete and target-neutral: typed settings, naming schemes, per-target checks with positions."""

from __future__ import annotations

import ast
import textwrap
from decimal import Decimal
from pathlib import Path

import pytest

from trainspec.compiler import SpecErrors
from trainspec.compiler.kube import (
    PERMANENT_EXIT_CODES,
    escape_references,
    expand_references,
    is_permanent_exit,
    parse_quantity,
)
from trainspec.compiler.plan import Cleanup, HostList, Restart, StartAfter, SuccessRule, TopologyVar
from trainspec.compiler.schemes import SERVICE, NamingScheme
from trainspec.compiler.target_rules import TargetRules
from trainspec.targets import load_plans
from trainspec.targets.jobset.scheme import JOBSET_RANKED
from trainspec.targets.kubeflow.scheme import MPI_OPERATOR
from trainspec.targets.kubeflow.scheme import scheme_for as kubeflow_scheme
from trainspec.targets.volcano.scheme import SUBDOMAIN
from trainspec.targets.volcano.scheme import scheme_for as volcano_scheme

from helpers import SPECS

TARGETS_DIR = Path(__file__).resolve().parents[2] / "targets"


def write(tmp_path, body: str, name: str = "job.yaml") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def test_job_settings_are_typed_plan_fields():
    (plan,) = load_plans(str(SPECS / "full-features.yaml"))
    assert not hasattr(plan, "spec")
    assert plan.source.endswith("full-features.yaml")
    assert plan.labels["team"] == "nlp" and plan.labels["cost-center"] == "4711"
    assert plan.accelerator == "nvidia.com/gpu"
    assert plan.backoff_limit == 4 and plan.active_deadline_seconds == 86400
    assert plan.cleanup == Cleanup("Running", 3600)
    assert plan.scheduling.queue == "research" and plan.scheduling.min_available == 3
    assert plan.nproc_per_node == "2"
    assert plan.success == SuccessRule("master") and plan.success.text == "master-0 succeeds"
    restarts = {role.name: role.restart for role in plan.roles}
    assert restarts["master"] == Restart("OnFailure", 4)
    assert restarts["worker"].policy == "ExitCode"
    assert restarts["worker"].permanent_exit_codes == PERMANENT_EXIT_CODES == range(1, 128)
    assert restarts["master"].permanent_exit_codes == range(0) and restarts["master"].in_place


@pytest.mark.parametrize(("spec", "rule"), [
    ("tf-chief.yaml", SuccessRule("chief")),
    ("tf-ps.yaml", SuccessRule("worker")),
    ("mpi-horovod.yaml", SuccessRule("launcher")),
    ("mxnet-ps.yaml", SuccessRule("scheduler")),
])
def test_success_rule_is_data(spec, rule):
    (plan,) = load_plans(str(SPECS / spec))
    assert plan.success == rule
    assert plan.success.decided_by(rule.role, 0) and not plan.success.decided_by(rule.role, 1)


def test_all_workers_success_rule(tmp_path):
    (plan,) = load_plans(write(tmp_path, """\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: all}
        spec:
          framework: tensorflow
          image: busybox
          tensorflow: {successPolicy: AllWorkers}
          roles: {worker: {replicas: 3}}
        """))
    assert plan.success == SuccessRule("worker", "all")
    assert plan.success.text == "all workers succeed" and plan.success.decided_by("worker", 2)


def test_mpi_start_order():
    (plan,) = load_plans(str(SPECS / "mpi-horovod.yaml"))
    assert plan.start_order == (StartAfter("launcher", ("worker",)),)
    (plan,) = load_plans(str(SPECS / "pytorch-ddp.yaml"))
    assert plan.start_order == ()


def test_hosts_per_naming_scheme():
    (plan,) = load_plans(str(SPECS / "mpi-horovod.yaml"))
    job = plan.name
    worker = plan.role("worker")
    assert plan.hosts(SERVICE)["worker"][0] == f"{job}-worker-0:{worker.port}"
    assert plan.hosts(MPI_OPERATOR)["launcher"] == [f"{job}-launcher.{job}:{plan.role('launcher').port}"]
    assert plan.hosts(SUBDOMAIN)["worker"][1] == f"{job}-worker-1.{job}:{worker.port}"
    assert kubeflow_scheme("mpi") is MPI_OPERATOR and kubeflow_scheme("pytorch") is SERVICE
    assert volcano_scheme("tensorflow") is SUBDOMAIN


def test_templates_render_once_per_scheme_with_a_shared_form(tmp_path):
    (plan,) = load_plans(write(tmp_path, """\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: sh}
        spec:
          framework: pytorch
          image: busybox
          command: [sh, -c, 'echo {{ index }} {{ hosts.master | join(",") }}']
          roles: {master: {replicas: 1}, worker: {replicas: 2}}
        """))
    worker = plan.role("worker")
    assert set(worker.renders) == {"service", "subdomain", "jobset-ranked", "trainjob-torch"}
    service, subdomain = worker.renders["service"], worker.renders["subdomain"]
    assert not service.uniform and service.of(1).command[2] == "echo 1 sh-master-0:23456"
    assert subdomain.of(1).command[2] == "echo 1 sh-master-0.sh:23456"
    assert worker.renders["jobset-ranked"].of(1).command[2] == "echo 1 sh-master-0-0.sh:23456"
    assert worker.renders["trainjob-torch"].of(1).command[2] == "echo 1 sh-node-0-0.sh:29500"  # Trainer's port
    assert plan.hosts(JOBSET_RANKED)["worker"] == ["sh-worker-0-0.sh:23456", "sh-worker-1-0.sh:23456"]
    assert service.shared.command[2] == "echo $(TRAINSPEC_INDEX) sh-master-0:23456"
    text = worker.sources.command[2]
    assert text.templated and text.path == ("spec", "command", 2)
    assert text.parts == ("echo ", TopologyVar("index"), " ", HostList("master", ","))
    assert text.names == frozenset({"index", "hosts"})


def test_a_new_scheme_plugs_in(tmp_path):
    """A scheme is what a target hands the planner: the compiler renders the spec's templates with it."""
    from trainspec.compiler import load_plans as plan_file

    scheme = NamingScheme("test-jobset", "<job>-<role>-0-<i>.<job>", lambda job, role, i: f"{job}-{role}-0-{i}.{job}")
    (plan,) = plan_file(write(tmp_path, """\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: js}
        spec:
          framework: pytorch
          image: busybox
          command: [sh, -c, '{{ hosts.worker | join(" ") }}']
          roles: {master: {replicas: 1}, worker: {replicas: 2}}
        """), (TargetRules("test", lambda framework: scheme),))
    assert set(plan.role("master").renders) == {"service", "test-jobset"}
    assert plan.role("master").renders["test-jobset"].of(0).command[2] == "js-worker-0-0.js:23456 js-worker-0-1.js:23456"
    assert plan.hosts(scheme)["master"] == ["js-master-0-0.js:23456"]
    assert plan.targets == ("test",)


MPI_EXIT_CODE = """\
    apiVersion: trainspec/v1
    kind: TrainingJob
    metadata: {name: mpi-exit}
    spec:
      framework: mpi
      image: mpioperator/openmpi:0.6.0
      command: [mpirun, hostname]
      restartPolicy: ExitCode
      roles:
        launcher: {replicas: 1}
        worker:
          replicas: 2
          args: ["--one={{ index + 1 }}"]
    """


def test_target_checks_are_raised_at_load_with_positions(tmp_path):
    path = write(tmp_path, MPI_EXIT_CODE)
    load_plans(path, targets=("k8s", "volcano"))  # they can express it
    (plan,) = load_plans(path)  # every target: the problems are kept for kubeflow's render
    # JobSet and Trainer share one pod template per role too; Trainer has an MPI runtime
    assert set(plan.target_errors) == {"kubeflow", "jobset", "trainjob"} and plan.unsupported == {}
    with pytest.raises(SpecErrors) as info:
        load_plans(path, targets=("kubeflow",))
    where = {(e.path, e.line, e.column) for e in info.value.errors}
    assert ("spec.restartPolicy", 8, 18) in where
    assert ("spec.roles.worker.args[0]", 13, 14) in where
    assert all(e.message.startswith("target kubeflow: ") for e in info.value.errors)
    for target in ("jobset", "trainjob"):
        with pytest.raises(SpecErrors) as info:
            load_plans(path, targets=(target,))
        assert [(e.path, e.line, e.column) for e in info.value.errors] == [("spec.roles.worker.args[0]", 13, 14)]
        assert info.value.errors[0].message.startswith(f"target {target}: ")


def test_a_target_that_cannot_run_a_job_is_recorded_and_skipped_only_on_request(tmp_path):
    path = write(tmp_path, MPI_EXIT_CODE.replace("restartPolicy: ExitCode", "mpi: {implementation: Intel}")
                 .replace('args: ["--one={{ index + 1 }}"]', "args: [sshd]"))
    (plan,) = load_plans(path)
    assert "only OpenMPI" in plan.unsupported["trainjob"] and "jobset" not in plan.unsupported
    with pytest.raises(SpecErrors) as info:
        load_plans(path, targets=("k8s", "trainjob"))
    assert [(e.path, e.line) for e in info.value.errors] == [("spec.mpi.implementation", 8)]
    (plan,) = load_plans(path, targets=("k8s", "trainjob"), skip_unsupported=True)
    assert plan.target_errors["trainjob"]  # kept: `trainspec compile -t trainjob` still reports it


def test_kubernetes_rules():
    assert parse_quantity("500m") == Decimal("0.5") and parse_quantity("8Gi") == 8 * 2**30
    assert parse_quantity("1e3") == 1000 and parse_quantity("100u") == Decimal("0.0001") and parse_quantity(2) == 2
    for bad in ("lots", "8GB", "", True):
        with pytest.raises(ValueError):
            parse_quantity(bad)
    for text in ("a$(B)c", "$$", "$$(X)", "$(", "$"):
        assert expand_references(escape_references(text), {"B": "b", "X": "x"}) == text
    assert is_permanent_exit(1) and is_permanent_exit(127) and not is_permanent_exit(137) and not is_permanent_exit(0)


# Which modules the targets may import is a contract (pyproject.toml [tool.importlinter], "Targets read
# only the plan"; tests/project/test_import_contracts.py); what they read of the plan is checked here.
@pytest.mark.parametrize("module", sorted(str(p.relative_to(TARGETS_DIR)) for p in TARGETS_DIR.rglob("*.py")))
def test_targets_never_reach_back_to_the_spec(module):
    tree = ast.parse((TARGETS_DIR / module).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            assert node.attr != "spec" or not (isinstance(node.value, ast.Name) and node.value.id == "plan"), module


def test_a_plan_for_some_targets_renders_only_their_schemes(tmp_path):
    path = write(tmp_path, MPI_EXIT_CODE)
    (plan,) = load_plans(path, targets=("k8s",))
    # the plan's own names (service) and the k8s target's (subdomain, spec v1.3: as volcano's)
    assert set(plan.role("worker").renders) == {"service", "subdomain"} and plan.target_errors == {}
    plan.check("k8s")
    with pytest.raises(ValueError, match="not volcano"):
        plan.check("volcano")
    (plan,) = load_plans(path, targets=("volcano",))
    assert set(plan.role("worker").renders) == {"service", "subdomain"}


def test_chart_rules_are_generated_from_the_compiler_tables():
    from trainspec.compiler.frameworks import SUCCESS_RULES
    from trainspec.targets.helm import render as helm
    from trainspec.targets.helm.chart_rules import chart_frameworks

    (plan,) = load_plans(str(SPECS / "tf-chief.yaml"))
    files = helm.render(plan)
    assert not any("trainspec:" in text and "generated from" in text for text in files.values())
    helpers = files["helm/templates/_helpers.tpl"]
    for framework in chart_frameworks("tensorflow"):
        for _, rule in SUCCESS_RULES[framework]:
            assert f'$rule = "{rule.text}"' in helpers
    # a later framework's rules are in its own charts only (chart_rules.BUILTIN)
    assert '"all masters succeed"' not in helpers
    (paddle,) = load_plans(str(SPECS / "paddle-ps.yaml"))
    paddle_files = helm.render(paddle)
    assert '$rule = "all masters succeed"' in paddle_files["helm/templates/_helpers.tpl"]
    assert 'PADDLE_MASTER' in paddle_files["helm/templates/jobs.yaml"]
    assert "until 127 -}}" in files["helm/templates/jobs.yaml"]  # PERMANENT_EXIT_CODES = 1..127
    # k8s scheme.py RANKED_ROLES, and the Job successPolicy of the compiled --kube-version (kube_rules)
    assert '$rankedRoles := dict "pytorch" (list "worker") -}}' in files["helm/templates/jobs.yaml"]
    from trainspec.compiler.kube_rules import applies

    on = "true" if applies("job-success-policy", plan.kube_version) else "false"
    assert f"$jobSuccessPolicy := {on} -}}}}" in files["helm/templates/jobs.yaml"]
    with pytest.raises(AssertionError, match="marker"):
        from trainspec.targets.helm.chart_rules import fill

        fill("jobs.yaml", "no marker here")
