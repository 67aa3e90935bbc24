"""Bad specs: every error names file:line:column, the field path, what was wrong and what was expected."""

from __future__ import annotations

import re
import textwrap

import pytest

from trainspec.compiler import SpecErrors
from trainspec.targets import load_plans

from helpers import run_cli

BASE = """\
apiVersion: trainspec/v1
kind: TrainingJob
metadata:
  name: mnist
spec:
  framework: tensorflow
  image: tf:2.15
  command: [python, train.py]
  roles:
    ps:
      replicas: 1
    worker:
      replicas: 2
      resources: {cpu: "4", memory: 8Gi, gpu: 1}
"""


def spec_with(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new, 1)


# (id, spec text, line, column or None, field path, message fragment, expected fragment)
CASES = [
    ("unknown-top-field", BASE + "extra: 1\n", 15, 1, "extra", "unknown field 'extra'", "a known field"),
    ("typo-field-hint", spec_with("  image: tf:2.15", "  imgae: tf:2.15"), 7, 3, "spec.imgae",
     "unknown field 'imgae'", "did you mean 'image'"),
    ("wrong-api-version", spec_with("trainspec/v1", "trainspec/v2"), 1, 13, "apiVersion",
     "'trainspec/v2' is not supported", "'trainspec/v1'"),
    ("wrong-kind", spec_with("kind: TrainingJob", "kind: TFJob"), 2, 7, "kind", "'TFJob' is not supported",
     "'TrainingJob'"),
    ("missing-name", spec_with("  name: mnist\n", "  labels: {}\n"), 3, 1, "metadata",
     "neither name nor generateName is set", "exactly one of name and generateName"),
    ("name-not-dns", spec_with("name: mnist", "name: MNIST_job"), 4, 9, "metadata.name",
     "'MNIST_job' is not a DNS-1035 label", "try 'mnist-job'"),
    ("name-too-long", spec_with("name: mnist", "name: " + "a" * 60), 4, 9, "metadata.name",
     "is 65 characters", "shorten metadata.name"),
    ("bad-framework", spec_with("framework: tensorflow", "framework: tensorflw"), 6, 14, "spec.framework",
     "'tensorflw' is not allowed", "did you mean 'tensorflow'"),
    ("missing-framework", spec_with("  framework: tensorflow\n", ""), 5, 1, "spec",
     "missing required field 'framework'", ""),
    ("unknown-role", spec_with("    ps:\n", "    pss:\n"), 10, 5, "spec.roles.pss",
     "'pss' is not a tensorflow role", "did you mean 'ps'"),
    ("replicas-string", spec_with("replicas: 2", 'replicas: "two"'), 13, 17, "spec.roles.worker.replicas",
     "is a string", "an integer"),
    ("replicas-negative", spec_with("replicas: 2", "replicas: -1"), 13, 17, "spec.roles.worker.replicas",
     "-1 is too small", ">= 0"),
    ("replicas-huge", spec_with("replicas: 2", "replicas: 100001"), 13, 17, "spec.roles.worker.replicas",
     "100001 is too large", "<= 100000"),
    ("bad-cpu", spec_with('cpu: "4"', "cpu: 4 cores"), 14, 24, "spec.roles.worker.resources.cpu",
     "'4 cores' is not a Kubernetes quantity", "500m"),
    ("bad-memory", spec_with("memory: 8Gi", "memory: 8GB"), 14, 37, "spec.roles.worker.resources.memory",
     "'8GB' is not a Kubernetes quantity", "8Gi"),
    ("gpu-float", spec_with("gpu: 1", "gpu: 1.5"), 14, 47, "spec.roles.worker.resources.gpu",
     "is a number", "an integer"),
    ("two-chiefs", BASE + "    chief:\n      replicas: 2\n", 16, 17, "spec.roles.chief.replicas",
     "2 chief replicas", "at most 1"),
    ("ps-without-worker", spec_with("      replicas: 2\n      resources: {cpu: \"4\", memory: 8Gi, gpu: 1}\n",
                                    "      replicas: 0\n"), 10, 5, "spec.roles.ps",
     "parameter servers without workers", "a worker role"),
    ("command-string", spec_with("command: [python, train.py]", "command: python train.py"), 8, 12,
     "spec.command", "is a string", "write a list"),
    ("arg-number", spec_with("command: [python, train.py]", "command: [python, train.py]\n  args: [--epochs, 5]"),
     9, 20, "spec.args[1]", "is an integer", 'quote it: "5"'),
    ("env-bool", spec_with("  roles:\n", "  env: {DEBUG: yes}\n  roles:\n"), 9, 16, "spec.env.DEBUG",
     "is a boolean", "quote it"),
    ("env-list", spec_with("  roles:\n", "  env: [A=1]\n  roles:\n"), 9, 3, "spec.env", "is a list",
     "write env as a map"),
    ("env-reserved", spec_with("  roles:\n", "  env: {TRAINSPEC_ROLE: x}\n  roles:\n"), 9, 9,
     "spec.env.TRAINSPEC_ROLE", "is set by trainspec", ""),
    ("secret-ref-missing-key", spec_with("  roles:\n", "  env:\n    TOKEN: {secretKeyRef: {name: creds}}\n  roles:\n"),
     10, 13, "spec.env.TOKEN.secretKeyRef", "missing required field 'key'", ""),
    ("restart-policy", spec_with("  roles:\n", "  restartPolicy: onfailure\n  roles:\n"), 9, 18, "spec.restartPolicy",
     "'onfailure' is not allowed", "did you mean 'OnFailure'"),
    ("clean-pod-policy", spec_with("  roles:\n", "  cleanPodPolicy: Some\n  roles:\n"), 9, 19, "spec.cleanPodPolicy",
     "'Some' is not allowed", "Running, All, None"),
    ("other-framework-block", spec_with("  roles:\n", "  pytorch: {nprocPerNode: 2}\n  roles:\n"), 9, 3, "spec.pytorch",
     "a pytorch block in a tensorflow job", "only spec.tensorflow"),
    ("success-policy", spec_with("  roles:\n", "  tensorflow: {successPolicy: Chief}\n  roles:\n"), 9, 31,
     "spec.tensorflow.successPolicy", "'Chief' is not allowed", "ChiefOrWorker0"),
    ("volume-relative-mount", spec_with("  roles:\n", "  volumes:\n"
                                        "    - {name: data, mountPath: data, source: {emptyDir: {}}}\n  roles:\n"),
     10, 31, "spec.volumes[0].mountPath", "'data' is not an absolute path", "/"),
    ("volume-two-sources", spec_with("  roles:\n", "  volumes:\n    - name: d\n      mountPath: /d\n"
                                     "      source: {emptyDir: {}, hostPath: /x}\n  roles:\n"),
     12, 7, "spec.volumes[0].source", "has 2 sources", "exactly one of"),
    ("duplicate-key", spec_with("  image: tf:2.15\n", "  image: tf:2.15\n  image: tf:2.16\n"), 8, 3, "",
     "duplicate key 'image' (first at line 7)", "each key once"),
    ("yaml-syntax", spec_with("command: [python, train.py]", "command: [python, train.py"), 9, None, "",
     "YAML syntax error", "valid YAML"),
    ("template-unknown-name", spec_with("command: [python, train.py]", 'command: [python, train.py, "--r={{ rank }}"]'),
     8, 36, "spec.command[2]", "'rank' is undefined", "known names"),
    ("template-unknown-role", spec_with("command: [python, train.py]", 'command: [python, "{{ hosts.chief }}"]'),
     8, 22, "spec.command[1]", "unknown role 'chief'; roles: ps, worker", "this job has no chief role"),
    ("template-sandbox", spec_with("command: [python, train.py]", "command: [python, \"{{ ''.__class__ }}\"]"),
     8, 22, "spec.command[1]", "refused by the sandbox", "unsafe"),
    ("probe-two-actions", spec_with("      resources: {cpu: \"4\", memory: 8Gi, gpu: 1}\n",
                                    "      probes:\n        liveness: {exec: [true], tcpSocket: {port: 1}}\n"),
     15, 9, "spec.roles.worker.probes.liveness", "has 2 actions", "exactly one of"),
    ("init-container-bad-name", spec_with("      resources: {cpu: \"4\", memory: 8Gi, gpu: 1}\n",
                                          "      initContainers:\n        - {name: Fetch_Data, image: busybox}\n"),
     15, 18, "spec.roles.worker.initContainers[0].name", "'Fetch_Data' is not a valid container name", "DNS-1123"),
    ("min-available", spec_with("  roles:\n", "  scheduling: {gang: true, minAvailable: 9}\n  roles:\n"), 9, 42,
     "spec.scheduling.minAvailable", "9 is more than the job's 3 replicas", "<= 3"),
    ("label-value", spec_with("  name: mnist\n", "  name: mnist\n  labels: {team: 'a b'}\n"), 5, 18,
     "metadata.labels.team", "'a b' is not a valid label value", "63"),
    ("no-image", spec_with("  image: tf:2.15\n", ""), 9, 5, "spec.roles.ps", "role 'ps' has no image",
     "spec.image"),
    ("accelerator", spec_with("  roles:\n", "  accelerator: gpu\n  roles:\n"), 9, 16, "spec.accelerator",
     "'gpu' is not an extended resource name", "nvidia.com/gpu"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_spec_reports_position_path_and_expectation(tmp_path, case):
    name, text, line, column, path, message, expected = case
    spec = tmp_path / "job.yaml"
    spec.write_text(text)
    with pytest.raises(SpecErrors) as info:
        load_plans(str(spec))
    errors = info.value.errors
    matching = [e for e in errors if e.path == path and message in e.message]
    assert matching, f"no error at {path!r} with {message!r}; got:\n{info.value}"
    error = matching[0]
    assert error.file == str(spec)
    assert error.line == line, str(info.value)
    if column is not None:
        assert error.column == column, str(info.value)
    formatted = error.format()
    assert formatted.startswith(f"{spec}:{line}:")
    if expected:
        assert expected in formatted


def test_case_table_is_large_enough():
    assert len(CASES) >= 25


def test_all_errors_of_a_file_are_reported_at_once(tmp_path):
    text = spec_with("  image: tf:2.15", "  imgae: tf:2.15").replace('cpu: "4"', "cpu: 4 cores")
    spec = tmp_path / "job.yaml"
    spec.write_text(text)
    with pytest.raises(SpecErrors) as info:
        load_plans(str(spec))
    paths = {e.path for e in info.value.errors}
    assert {"spec.imgae", "spec.roles.worker.resources.cpu"} <= paths


def test_cli_reports_errors_exit_2_no_traceback_nothing_written(tmp_path):
    good = tmp_path / "specs" / "good.yaml"
    bad = tmp_path / "specs" / "bad.yaml"
    good.parent.mkdir()
    good.write_text(BASE)
    bad.write_text(spec_with("replicas: 2", 'replicas: "two"').replace("name: mnist", "name: other"))
    out = tmp_path / "out"
    result = run_cli("build", str(good.parent), "-o", str(out), "--target", "k8s")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert re.search(r"bad\.yaml:13:17: spec\.roles\.worker\.replicas: is a string; expected an integer",
                     result.stderr), result.stderr
    assert not out.exists(), "a failed build must not write anything"


def test_validate_exit_codes(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(BASE)
    ok = run_cli("validate", str(good))
    assert ok.returncode == 0 and "ok (mnist)" in ok.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text(textwrap.dedent("""\
        apiVersion: trainspec/v1
        kind: TrainingJob
        metadata: {name: x}
        spec: {framework: mpi, image: i, roles: {worker: {replicas: 2}}}
        """))
    result = run_cli("validate", str(good), str(bad))
    assert result.returncode == 2
    assert "an mpi job needs a 'launcher' role" in result.stderr
    assert "Traceback" not in result.stderr


def test_non_utf8_file_is_a_clear_error(tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_bytes(BASE.encode().replace(b"mnist", b"mn\xffist"))
    result = run_cli("validate", str(spec))
    assert result.returncode == 2
    assert f"{spec}:4:11: <document>: byte 0xff is not UTF-8" in result.stderr


def test_usage_errors_exit_2(tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_text(BASE)
    result = run_cli("compile", str(spec), "--target", "nomad")
    assert result.returncode == 2 and "unknown target 'nomad'" in result.stderr
    result = run_cli("compile", str(spec))
    assert result.returncode == 2 and "--target" in result.stderr
    result = run_cli("build", str(tmp_path / "missing"), "-o", str(tmp_path / "o"))
    assert result.returncode == 2 and "no such file or folder" in result.stderr
