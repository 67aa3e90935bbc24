"""The Python API (docs/api.md): the CLI's results byte for byte, typed errors with positions,
import, and a local run on the real Docker engine."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import trainspec

from helpers import MINIMAL, ROOT, SPECS, neutral_cwd, run_cli

IMPORTS = ROOT / "tests" / "import_manifests"
SPEC_FILES = sorted(p for p in SPECS.iterdir() if p.suffix in (".yaml", ".yml", ".json", ".jsonnet"))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """`trainspec build specs/ -o OUT`: what the API must give byte for byte."""
    out = tmp_path_factory.mktemp("build") / "out"
    done = run_cli("build", str(SPECS), "-o", str(out), "--no-cache")
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("spec", SPEC_FILES, ids=lambda p: p.name)
def test_compile_gives_what_build_writes_for_every_example_and_target(spec, built):
    jobs = trainspec.load(spec)
    assert jobs
    for job in jobs:
        written = {str(p.relative_to(built / job.name)): p.read_text(encoding="utf-8")
                   for p in (built / job.name).rglob("*") if p.is_file()}
        compiled: dict[str, str] = {}
        for target in trainspec.TARGETS:
            try:
                compiled.update(job.compile(target))
            except trainspec.SpecError as exc:  # a target that cannot run this job: build left it out
                assert exc.problems and all(isinstance(p, trainspec.Problem) for p in exc.problems)
                assert not any(rel == f"{target}.yaml" or rel.startswith(f"{target}/") for rel in written), target
        assert compiled == written


def test_compile_output_is_the_compile_command_s_stdout():
    spec = SPECS / "tf-ps.yaml"
    (job,) = trainspec.load(str(spec))
    for target in ("k8s", "kubeflow", "volcano", "compose"):
        done = run_cli("compile", str(spec), "--target", target)
        assert done.returncode == 0, done.stderr
        assert "".join(job.compile(target).values()) == done.stdout


def test_objects_are_the_compiled_documents_as_data():
    (job,) = trainspec.load(SPECS / "tf-ps.yaml")
    objects = job.objects("kubeflow")
    assert [o["kind"] for o in objects if o["kind"] == "TFJob"] == ["TFJob"]
    assert objects == [d for d in yaml.safe_load_all("".join(job.compile("kubeflow").values())) if d is not None]
    (compose,) = job.objects("compose")
    assert "services" in compose
    with pytest.raises(trainspec.UsageError, match="chart"):
        job.objects("helm")


def test_a_mapping_and_text_plan_without_a_file(tmp_path):
    data = yaml.safe_load(MINIMAL.replace("NAME", "inmem"))
    (from_data,) = trainspec.load(data)
    (from_text,) = trainspec.loads(MINIMAL.replace("NAME", "inmem"))
    path = tmp_path / "inmem.yaml"
    path.write_text(MINIMAL.replace("NAME", "inmem"))
    (from_file,) = trainspec.load(path)
    assert (from_data.name, from_data.framework, from_data.namespace) == ("inmem", "pytorch", "default")
    assert from_data.source == "<mapping>" and from_text.source == "<string>"
    # the source file's name is in the output's headers; the rest is the same bytes
    assert trainspec.loads(path.read_text(), name=str(path))[0].compile("k8s") == from_file.compile("k8s")
    two = trainspec.load([data, dict(data, metadata={"name": "other"})])
    assert [job.name for job in two] == ["inmem", "other"]
    # the same plan but for where its positions come from (a mapping has none; JobPlan.locator)
    assert from_data.plan._replace(locator=None) == \
        trainspec.loads(yaml.safe_dump(data), name="<mapping>")[0].plan._replace(locator=None)


def test_validate_returns_every_problem_with_its_position(tmp_path):
    assert trainspec.validate(SPECS / "tf-ps.yaml") == []
    bad = tmp_path / "bad.yaml"
    bad.write_text(MINIMAL.replace("NAME", "bad").replace("framework: pytorch", "framework: pytorch\n  restartPolicy: Sometimes")
                   .replace("replicas: 1}, worker", "replicas: -1}, worker"))
    problems = trainspec.validate(bad)
    assert [(p.file, p.line, p.column, p.path) for p in problems] == [
        (str(bad), 6, 18, "spec.restartPolicy"), (str(bad), 8, 30, "spec.roles.master.replicas")]
    assert all(p.message and p.expected for p in problems)
    # the same problems, in the same words, as `trainspec validate` prints them
    done = run_cli("validate", str(bad))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [p.format() for p in problems]
    missing = trainspec.validate(tmp_path / "nowhere.yaml")
    assert [(p.line, p.column, p.message) for p in missing] == [(1, 1, "no such file")]
    (problem,) = trainspec.validate({"apiVersion": "trainspec/v1", "kind": "TrainingJob", "metadata": {"name": "x"},
                                     "spec": {"framework": "pytorch", "image": "i", "roles": {"master": {}}}})
    assert (problem.file, problem.line, problem.column) == ("<mapping>", 1, 1)


def test_validate_reports_a_patch_that_does_not_apply():
    data = yaml.safe_load(MINIMAL.replace("NAME", "patched"))
    data["apiVersion"] = "trainspec/v1.1"
    data["spec"]["patches"] = {"k8s": [{"op": "remove", "path": "/spec/nothing/here"}]}
    problems = trainspec.validate(data)
    assert problems and all("spec.patches.k8s" in p.path for p in problems), problems


def test_load_raises_spec_error_with_problems(tmp_path):
    with pytest.raises(trainspec.SpecError) as info:
        trainspec.loads("apiVersion: trainspec/v1\nkind: TrainingJob\nmetadata: {name: Bad_Name}\n")
    assert isinstance(info.value, trainspec.Error)
    assert {p.path for p in info.value.problems} >= {"metadata.name", "spec"}
    assert all(p.file == "<string>" and p.line >= 1 for p in info.value.problems)
    with pytest.raises(trainspec.SpecError, match="duplicate key"):
        trainspec.loads("a: 1\na: 2\n")
    with pytest.raises(trainspec.UsageError, match="unknown target 'nomad'"):
        trainspec.loads(MINIMAL.replace("NAME", "x"))[0].compile("nomad")
    with pytest.raises(trainspec.UsageError, match="cannot load a int"):
        trainspec.load(3)  # type: ignore[arg-type]


def test_a_target_that_cannot_run_the_job_is_a_spec_error():
    (job,) = trainspec.load(SPECS / "tf-ps.yaml")
    with pytest.raises(trainspec.SpecError) as info:
        job.compile("trainjob")
    assert any("trainjob" in p.message or "trainjob" in p.hint or "Trainer" in p.message for p in info.value.problems)


def test_warnings_are_what_build_prints():
    (job,) = trainspec.load(SPECS / "tf-ps.yaml")
    (warning,) = job.warnings("k8s")
    assert warning.path == "spec.roles.ps" and "activeDeadlineSeconds" in warning.expected
    assert job.warnings("kubeflow") == []


def test_jsonnet_options_are_keywords(tmp_path):
    spec = tmp_path / "job.jsonnet"
    spec.write_text("function(name) " + yaml.safe_load(MINIMAL.replace("NAME", "x")).__repr__()
                    .replace("'x'", "name").replace("'", '"'))
    (job,) = trainspec.load(spec, tla={"name": "from-tla"})
    assert job.name == "from-tla"


def test_every_error_trainspec_raises_derives_from_error():
    from trainspec.cli import main  # noqa: F401 - the CLI's modules are importable beside the API
    from trainspec.cluster.errors import ApiFailure, ClusterError
    from trainspec.compiler.errors import SpecErrors, UsageError
    from trainspec.compiler.runpolicy import RunPolicyError
    from trainspec.compiler.template_limits import LimitExceeded
    from trainspec.compiler.templating import TemplateError
    from trainspec.emulator.model.errors import FieldError
    from trainspec.emulator.readers.interpolation import InterpolationError
    from trainspec.emulator.readers.positions import FieldErrors
    from trainspec.output import OutputError

    for error in (SpecErrors, UsageError, RunPolicyError, LimitExceeded, TemplateError, FieldError, FieldErrors,
                  InterpolationError, OutputError, ClusterError, ApiFailure):
        assert issubclass(error, trainspec.Error), error
    assert trainspec.SpecError is SpecErrors and trainspec.UsageError is UsageError
    assert issubclass(RunPolicyError, ValueError)  # what callers caught before


def test_import_manifest_gives_the_spec_as_data_and_its_losses(tmp_path):
    result = trainspec.import_manifest(IMPORTS / "tf-legacy-master.yaml")
    assert result.spec["kind"] == "TrainingJob" and result.spec["spec"]["framework"] == "tensorflow"
    (loss,) = result.losses
    assert (loss.line, loss.column, loss.path) == (16, 5, "spec.tfReplicaSpecs.Master")
    assert result.target == "kubeflow"
    # the text is what `trainspec import` writes, and it loads
    out = tmp_path / "spec.yaml"
    assert run_cli("import", str(IMPORTS / "tf-legacy-master.yaml"), "-o", str(out)).returncode == 0
    assert out.read_text() == result.text
    assert trainspec.loads(result.text)[0].name == result.spec["metadata"]["name"]
    with pytest.raises(trainspec.SpecError) as info:
        trainspec.import_manifest(IMPORTS / "tf-legacy-master.yaml", strict=True)
    assert [p.path for p in info.value.problems] == ["spec.tfReplicaSpecs.Master"]
    assert trainspec.import_manifest(IMPORTS / "pytorch-ddp-v1.yaml", strict=True).losses == ()


PROBE = """
import sys
import time
import trainspec
print(repr(sorted(sys.modules)))
jobs = trainspec.load({spec!r})
jobs[0].compile("k8s")
print(repr(sorted(sys.modules)))
"""


def test_import_trainspec_loads_no_heavy_module():
    done = subprocess.run([sys.executable, "-c", PROBE.format(spec=str(SPECS / "pytorch-ddp.yaml"))],
                          capture_output=True, text=True, cwd=neutral_cwd(), check=True)
    after_import, after_compile = (set(ast.literal_eval(line)) for line in done.stdout.splitlines())
    heavy = ("docker", "kubernetes", "jinja2", "_jsonnet", "jsonnet", "ruamel", "yaml", "requests")
    assert not [m for m in after_import if m.split(".")[0] in heavy]
    assert not [m for m in after_import if m.startswith("trainspec.")]  # only the package's own __init__
    assert not [m for m in after_compile if m.split(".")[0] in ("docker", "kubernetes", "ruamel", "requests")]
    assert not [m for m in after_compile if m.startswith(("trainspec.emulator", "trainspec.localrun", "trainspec.cli"))]


def test_the_api_is_typed():
    assert (ROOT / "cli" / "py.typed").is_file()  # shipped in the wheel: setup.py takes every non-.py file
    assert set(trainspec.__all__) <= set(dir(trainspec))
    for name in trainspec.__all__:
        assert getattr(trainspec, name) is not None


RUN_SPEC = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: apirun}
spec:
  framework: pytorch
  image: trainspec-test:py3
  command: [python3, -c, "import os; print('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'])"]
  roles: {master: {replicas: 1}, worker: {replicas: 1}}
"""

# The master (the deciding replica) ends only after the worker has printed and hung up, so both logs hold
# their line whatever the machine's load; the worker may still be stopped by the run after that (as the
# operator stops it once the master succeeds).
HANDSHAKE = ("import os, socket; print('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'], flush=True)\n"
             "if os.environ['RANK'] == '0':\n"
             "    s = socket.create_server(('', int(os.environ['MASTER_PORT']))); c, _ = s.accept(); c.recv(1)\n"
             "else:\n"
             "    import time\n"
             "    for _ in range(600):\n"
             "        try: socket.create_connection((os.environ['MASTER_ADDR'], int(os.environ['MASTER_PORT']))).close(); break\n"
             "        except OSError: time.sleep(0.2)\n")


@pytest.mark.docker
def test_run_starts_the_job_on_docker_and_reports_it(test_image, tmp_path):
    spec = tmp_path / "apirun.yaml"
    doc = yaml.safe_load(RUN_SPEC)
    doc["spec"]["command"] = ["python3", "-c", HANDSHAKE]
    spec.write_text(yaml.safe_dump(doc))
    run = trainspec.run(spec, offline=True, engine="docker", gpus="none", state_dir=tmp_path / ".trainspec")
    assert run.job == "apirun" and run.id.startswith("apirun-")
    assert run.wait(timeout=300) == 0
    status = run.status()
    assert status.status == "Succeeded"
    phases = {r.name: (r.phase, r.exit_code) for r in status.replicas}
    assert phases["master-0"] == ("Succeeded", 0)
    assert phases["worker-0"] in (("Succeeded", 0), ("Terminated", 143))
    logs = run.logs()
    assert logs["master-0"].splitlines() == ["rank 0 of 2"] and logs["worker-0"].splitlines() == ["rank 1 of 2"]
    assert run.down() == 0  # ended already: nothing left to stop


@pytest.mark.docker
def test_down_stops_a_running_job(test_image, docker_client, tmp_path):
    spec = tmp_path / "apirun.yaml"
    spec.write_text(RUN_SPEC.replace("import os; print('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'])",
                                     "import time; print('up', flush=True); time.sleep(600)"))
    run = trainspec.run(spec, offline=True, gpus="none", state_dir=tmp_path / ".trainspec")
    deadline = time.time() + 120
    while run.status().status != "Running" or not all(r.phase == "Running" for r in run.status().replicas):
        assert time.time() < deadline, run.status()
        time.sleep(0.2)
    assert run.down(timeout=120) == 130
    assert run.status().status == "Interrupted"
    left = docker_client.containers.list(all=True, filters={"label": f"trainspec.dev/run-id={run.id}"})
    assert left == []


def test_run_refuses_bad_input_before_starting(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(MINIMAL.replace("NAME", "Bad_Name"))
    with pytest.raises(trainspec.SpecError):
        trainspec.run(bad)
    with pytest.raises(trainspec.UsageError, match="engine"):
        trainspec.run(SPECS / "pytorch-ddp.yaml", engine="kubernetes")


EXITING = """
import sys, time
import trainspec
run = trainspec.run(sys.argv[1], offline=True, gpus="none", state_dir=sys.argv[2], output=sys.stderr)
deadline = time.time() + 120
while run.status().status != "Running" and time.time() < deadline:
    time.sleep(0.2)
print(run.id, run.status().status, flush=True)
"""


@pytest.mark.docker
def test_a_run_still_going_when_python_exits_is_stopped(test_image, docker_client, tmp_path):
    spec = tmp_path / "apirun.yaml"
    spec.write_text(RUN_SPEC.replace("import os; print('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'])",
                                     "import time; time.sleep(600)"))
    done = subprocess.run([sys.executable, "-c", EXITING, str(spec), str(tmp_path / ".trainspec")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    run_id, status = done.stdout.split()
    assert status == "Running"
    assert docker_client.containers.list(all=True, filters={"label": f"trainspec.dev/run-id={run_id}"}) == []
    assert docker_client.networks.list(filters={"label": f"trainspec.dev/run-id={run_id}"}) == []


def test_json_text_is_read_as_json_from_loads_and_standard_input():
    """JSON's escapes are not all YAML's (a surrogate pair is an error in YAML): JSON text is read as JSON."""
    data = yaml.safe_load(MINIMAL.replace("NAME", "rocket"))
    data["spec"]["env"] = {"GREETING": "\U0001f680"}
    text = json.dumps(data)  # ensure_ascii: "\ud83d\ude80"
    assert "\\ud83d" in text
    (job,) = trainspec.loads(text)
    env = [c["env"] for o in job.objects("k8s") if o["kind"] == "Job" for c in o["spec"]["template"]["spec"]["containers"]]
    assert {"name": "GREETING", "value": "\U0001f680"} in env[0]
    done = run_cli("compile", "-", "--target", "k8s", input=text)
    assert done.returncode == 0, done.stderr
    assert done.stdout == trainspec.loads(text, name="<stdin>")[0].compile("k8s")["k8s.yaml"]
    problems = trainspec.validate(json.loads(text.replace('"pt:1"', "5")))
    assert problems[0].format() == '<mapping>:1:1: spec.image: is an integer; expected a string; hint: quote it: "5"'


def test_a_job_on_a_shipped_runtime_says_so_in_its_notes_and_a_given_runtime_does_not(tmp_path):
    (job,) = trainspec.load(SPECS / "torch-on-runtime.yaml")
    [note] = job.notes
    assert "torch-distributed" in note.message and "shipped" in note.message
    assert job.compile("jobset")
    runtime = tmp_path / "rt.yaml"
    from trainspec.compiler.runtimes import SHIPPED_DIR
    runtime.write_text((Path(SHIPPED_DIR) / "torch_distributed.yaml").read_text())
    (given,) = trainspec.load(SPECS / "torch-on-runtime.yaml", runtimes=[runtime])
    assert given.notes == []
    assert given.compile("jobset") == job.compile("jobset")
