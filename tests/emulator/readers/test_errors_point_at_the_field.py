"""A bad manifest is refused at its field: file:line:column, the field path from the document's root, what
was expected and a hint, printed as the compiler prints a spec's errors (readers/positions.py).

Through the real CLI, as a user runs it: exit 2, one line, no traceback, and nothing started. DOCKER_HOST
points nowhere, so an error that came after the engine was contacted would read "cannot reach the Docker
daemon" instead of the line asserted; no state folder is made.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from emuhelpers import trainspec

NO_DAEMON = {"DOCKER_HOST": "unix:///nonexistent/trainspec-positions.sock"}

CONTAINER = """\
containers:
  - name: {name}
    image: busybox
    command: [sh, -c, "true"]
"""


def _pod(name: str, indent: int) -> str:
    return textwrap.indent(CONTAINER.format(name=name), " " * indent)


CASES = {
    # the shape checks, on a JobSet (before the controller expands it)
    "jobset-completions": ("job.yaml", """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: trainer
spec:
  replicatedJobs:
    - name: workers
      replicas: 2
      template:
        spec:
          completions: "abc"
          template:
            spec:
              restartPolicy: Never
""" + _pod("main", 14),
        # the JobSet CRD's structural schema, in the API server's words (compiler/apiserver)
        'job.yaml:11:24: spec.replicatedJobs[0].template.spec.completions: Invalid value: "string": '
        "spec.replicatedJobs[0].template.spec.completions in body must be of type integer; "
        "expected a value the API server accepts"),
    # the JobSet controller's refusal, with its hint
    "jobset-failure-policy": ("job.yaml", """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: trainer
spec:
  failurePolicy:
    maxRestarts: 1
    rules:
      - action: RestartJob
  replicatedJobs:
    - name: workers
      template:
        spec:
          template:
            spec:
              restartPolicy: Never
""" + _pod("main", 14),
        "job.yaml:9:17: spec.failurePolicy.rules[0].action: 'RestartJob' is not reproduced by the emulator (it "
        "needs the alpha RestartJob feature gate, off in JobSet v0.12.0); "
        "hint: use FailJobSet | RestartJobSet | RestartJobSetAndIgnoreMaxRestarts"),
    # the Volcano controller's refusal
    "volcano-depends-on": ("vcjob.yaml", """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: vj
spec:
  minAvailable: 2
  tasks:
    - name: ps
      template:
        spec:
          restartPolicy: Never
""" + _pod("main", 10) + """\
    - name: worker
      dependsOn:
        name: [chief]
      template:
        spec:
          restartPolicy: Never
""" + _pod("main", 10),
        "vcjob.yaml:18:9: spec.tasks[1].dependsOn.name: no task named 'chief'"),
    # the k8s reader on the pods the Kubeflow controller made: the position is the manifest's template
    "pytorchjob-volume": ("pytorchjob.yaml", """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pt
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
            - name: pytorch
              image: busybox
              volumeMounts: [{name: data, mountPath: /data}]
          volumes:
            - name: data
              nfs: {server: nfs.example, path: /x}
""",
        "pytorchjob.yaml:17:15: spec.pytorchReplicaSpecs.Master.template.spec.volumes[0]: volume type ['nfs'] is "
        "not supported by the emulator; hint: use persistentVolumeClaim, hostPath, emptyDir, configMap or secret"),
    # a compiled-style k8s Job, read by the k8s reader itself
    "k8s-value-from": ("k8s.yaml", """\
apiVersion: batch/v1
kind: Job
metadata:
  name: j-worker-0
  labels: {trainspec.dev/job: j}
spec:
  template:
    metadata:
      labels: {trainspec.dev/role: worker, trainspec.dev/index: "0"}
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: busybox
          env:
            - name: A
              valueFrom:
                magicRef: {}
""",
        "k8s.yaml:17:15: spec.template.spec.containers[0].env[0].valueFrom: Invalid value: \"\": must specify one "
        "of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`; "
        "expected a value the API server accepts"),
    # a model check (security fields) on a pod the Kubeflow controller made
    "pytorchjob-privileged": ("pytorchjob.yaml", """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: pt
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers:
            - name: pytorch
              image: busybox
              securityContext:
                privileged: true
""",
        "pytorchjob.yaml:14:29: spec.pytorchReplicaSpecs.Master.template.spec.containers[0].securityContext.privileged: "
        "true is not supported by the emulator (it would either be dropped, or hand the container the host); hint: "
        "the emulator runs every replica as an ordinary container; remove the field to run it locally"),
    # a TrainJob's field type
    "trainjob-num-nodes": ("trainjob.yaml", """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tj
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: two
""",
        'trainjob.yaml:8:15: spec.trainer.numNodes: Invalid value: "string": spec.trainer.numNodes in body must be '
        "of type integer; expected a value the API server accepts"),
    # a compose file: its shape, and a variable it requires (interpolation keeps the positions)
    "compose-ports": ("compose.yaml", """\
services:
  worker:
    image: busybox
    ports: "8080"
""",
        "compose.yaml:4:12: services.worker.ports: is a string '8080'; expected a list"),
    "compose-port-range": ("compose.yaml", """\
services:
  worker:
    image: busybox
    ports: ["8000-8010:8000-8010"]
""",
        "compose.yaml:4:13: services.worker.ports[0]: port ranges ('8000-8010:8000-8010') are not supported by the "
        "emulator; hint: list the ports one by one"),
    "compose-variable": ("compose.yaml", """\
services:
  worker:
    image: busybox
    command: [sh, -c, "echo ${GREETING:?say hello}"]
""",
        "compose.yaml:4:23: services.worker.command[2]: required variable GREETING is missing a value: say hello; "
        "hint: pass -e GREETING (from your environment), -e GREETING=VALUE or --env-file FILE"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_manifest_is_refused_at_its_field(tmp_path: Path, case: str):
    name, text, said = CASES[case]
    (tmp_path / name).write_text(text)
    r = trainspec("run", name, cwd=tmp_path, env=NO_DAEMON)
    assert r.returncode == 2, r.stderr
    assert r.stderr == said + "\n"
    assert not (tmp_path / ".trainspec").exists()  # nothing started, no run recorded


def test_a_values_file_error_is_at_its_line(tmp_path: Path):
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: x\nversion: 0.1.0\n")
    (tmp_path / "mine.yaml").write_text("roles:\n  worker:\n    replicas: [2\n")
    r = trainspec("run", "chart", "-f", "mine.yaml", cwd=tmp_path, env=NO_DAEMON)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("mine.yaml:4:1: <document>: YAML syntax error: "), r.stderr
    assert r.stderr.endswith("; expected valid YAML; hint: check indentation and quoting near this position\n")
    (tmp_path / "mine.yaml").write_text("- roles\n")
    r = trainspec("run", "chart", "-f", "mine.yaml", cwd=tmp_path, env=NO_DAEMON)
    assert (r.returncode, r.stderr) == (2, "mine.yaml:1:1: <document>: is list; expected a map of keys; "
                                           "hint: -f names a values file\n")


def test_a_secret_env_file_error_is_at_its_line_and_never_shows_it(tmp_path: Path):
    (tmp_path / "k8s.yaml").write_text(CASES["k8s-value-from"][1].replace("magicRef: {}", "secretKeyRef: {name: s, key: A}"))
    (tmp_path / "s.env").write_text("A=1\n# a comment\nhunter2\n")
    r = trainspec("run", "k8s.yaml", "--secret", "s=s.env", cwd=tmp_path, env=NO_DAEMON)
    assert (r.returncode, r.stderr) == (2, "s.env:3:1: <document>: a line without '=' (not shown); expected KEY=VALUE; "
                                           "hint: --secret s reads a directory of key files or a KEY=VALUE env file\n")


def test_run_prints_a_spec_error_as_validate_does(tmp_path: Path):
    """One error shape: the same bad spec, the same line from `validate` and from `run`."""
    (tmp_path / "job.yaml").write_text("""\
apiVersion: trainspec/v1
kind: TrainingJob
metadata:
  name: job
spec:
  framework: pytorch
  image: busybox
  command: [python, train.py]
  roles:
    worker:
      replicas: many
""")
    validated = trainspec("validate", "job.yaml", cwd=tmp_path)
    ran = trainspec("run", "job.yaml", cwd=tmp_path, env=NO_DAEMON)
    assert validated.returncode == ran.returncode == 2
    assert ran.stderr == validated.stderr and ran.stderr.startswith("job.yaml:11:17: spec.roles.worker.replicas: ")


def test_an_error_without_a_position_keeps_its_hint_apart(tmp_path: Path):
    """No line to point at (a folder): the message, then `; hint:` as the compiler renders it."""
    (tmp_path / "empty").mkdir()
    r = trainspec("run", "empty", cwd=tmp_path, env=NO_DAEMON)
    assert (r.returncode, r.stderr) == (2, "trainspec: error: empty is a directory without Chart.yaml; hint: name "
                                           "a spec, a compiled file (k8s, compose, kubeflow, volcano, jobset, "
                                           "trainjob) or a Helm chart folder\n")
