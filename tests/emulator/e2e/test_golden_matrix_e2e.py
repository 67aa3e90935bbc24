"""Every example in specs/ ends the same way from every file compiled from it (issue 13).

The matrix is derived from golden/: for each example, the spec itself and every form its golden folder holds
(k8s.yaml, compose.yaml, kubeflow.yaml, volcano.yaml, jobset.yaml, trainjob.yaml where the target can run the
job at all, and the helm/ chart folder when helm-python-sdk is importable) run with `trainspec run <file>
--image <registry image>=<local image> --cpu-only --offline`, and every run must give the same exit code,
SUCCEEDED/FAILED, deciding replica (the role and index the summary names: a Volcano task, a JobSet replicated
Job or a Trainer `node` group is checked against the replicas that had succeeded when the job was decided) and
the program's own proof lines. The golden files name registry images: each example maps its images to a local
one (the test image, or the test image plus a framework's wheels, or plus the program the registry image would
hold: conftest.py).

Deliberate cluster differences, asserted as such:
- trainjob.yaml: Trainer runs the replicas as one `node` group (`node-<k>`: the spec's replicas in order), and
  the run names that group as the decider (the Job's successPolicy picks the spec's deciding index). MPI's runtime mounts the SSH key with mode 0640,
  which OpenSSH refuses as root (CONVENTIONS-V2 §3.4): the MPI example fails there, as on a cluster.
- k8s.yaml and the chart: no controller stops the parameter servers or the MPI workers after success; the run
  says so ("would keep running", naming whatever still ran), and no other form does.
- pytorch-cluster.yaml carries a native sidecar (an init container with restartPolicy Always), which the
  emulator does not run: every form refuses it before anything starts (exit 2).

Known bugs (BUGS: run as strict xfails, so the fix turns them into failures until removed from the table):
none today.

Not in the matrix (test_every_golden_job_is_in_the_matrix keeps this list honest):
- paddle.yaml (golden/paddle-collective) and paddle-ps.yaml: the command is `python -m
  paddle.distributed.launch`, Paddle's own launcher, which no stand-in can honestly replace; the Paddle image
  (scripts/build-framework-image.sh --paddle, ~850 MB) is not built in CI. Their environment is checked in
  e2e/test_v1_frameworks_e2e.py, and a real all-reduce through the launcher there when the image exists.
- torch-on-runtime.yaml (spec v1.3, on the cluster's torch-distributed ClusterTrainingRuntime): its pods are the
  runtime's template with the spec laid over it (golden: expanded on the definition Kubeflow Trainer v2.3.0 ships,
  whose image is CUDA's), and it is `suspend: true` (a queue admits it). A spec and its compiled TrainJob on a
  given runtime, and on the shipped one, run in e2e/test_trainjob_runtime_docker.py.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from emuhelpers import ROOT, norm, trainspec

pytestmark = [pytest.mark.docker, pytest.mark.slow]
SPECS = ROOT / "specs"
GOLDEN = ROOT / "golden"
FILE_FORMS = ("k8s", "compose", "kubeflow", "volcano", "jobset", "trainjob")
HELM = importlib.util.find_spec("helm_python") is not None
MNIST = "/mnt/datasets/mnist"  # tf-chief's hostPath: the emulator never creates a missing host folder


@dataclass(frozen=True)
class Example:
    spec: str
    image: str                          # the fixture giving the local image for the spec's own image
    decider: tuple[str, int | str]      # (role, index), or (role, "all")
    proofs: tuple[str, ...] = ()        # regexes over the normalised output (replica names as the spec's)
    lingers: str | None = None          # a role a plain k8s cluster leaves running after success
    images: tuple[tuple[str, str], ...] = ()  # other registry images -> fixture
    secrets: dict = field(default_factory=dict)      # name -> {key: value}
    configmaps: dict = field(default_factory=dict)
    refused: str | None = None          # every form refuses the job before starting it, saying this

    @property
    def doc(self) -> dict:
        return _spec_doc(self.spec)

    @property
    def job(self) -> str:
        return self.doc["metadata"]["name"]


@functools.cache
def _spec_doc(spec: str) -> dict:
    """A spec, read once: collection asks each example's job name for every form it has."""
    return yaml.load((SPECS / spec).read_text(), Loader=yaml.CSafeLoader)


EXAMPLES = [
    Example("tf-single.yaml", "test_image", ("worker", 0), (r"^worker-0 \| single worker, cluster",)),
    Example("tf-ps.yaml", "test_image", ("worker", 0),
            (r"^worker-0 \| reached every ps$",), lingers="ps"),
    Example("tf-chief.yaml", "test_image", ("chief", 0), (r"^chief-0 \| reached every ps$",), lingers="ps"),
    Example("tf-multiworker.yaml", "test_image", ("worker", "all"),
            (r"^worker-0 \| task worker 0 workers 3$", r"^worker-2 \| task worker 2 workers 3$")),
    Example("mxnet-ps.yaml", "test_image", ("scheduler", 0), (r"^scheduler-0 \| every node registered$",)),
    Example("tf-args-style.yaml", "tf_args_image", ("worker", 0),
            (r"^worker-0 \| worker 0 reached every ps$",), lingers="ps"),
    # JobSet names the workers' hosts <job>-worker-0-<i>
    Example("mpi-horovod.yaml", "mpi_image", ("launcher", 0),
            (r"^launcher-0 \| rank on mpi-horovod-worker(-0)?-0$", r"^launcher-0 \| rank on mpi-horovod-worker(-0)?-1$"),
            lingers="worker"),
    Example("pytorch-ddp.yaml", "torch_image", ("master", 0),
            (r"^master-0 \| rank 0/2: all-reduce ok \(3\.0\)$", r"^worker-0 \| rank 1/2: all-reduce ok \(3\.0\)$")),
    Example("xgboost.yaml", "xgboost_image", ("master", 0),
            tuple(rf"^{r} \| rank {i}/3: all-reduce ok \(6\.0\), 3 trees$"
                  for i, r in enumerate(("master-0", "worker-0", "worker-1")))),
    Example("jax.yaml", "jax_image", ("worker", "all"),
            tuple(rf"^worker-{i} \| process {i}/2: allgather ok \[0, 1\]$" for i in (0, 1))),
    # which node gets which rank is the rendezvous's choice
    Example("pytorch-elastic.yaml", "torchrun_image", ("worker", "all"),
            tuple(rf"^worker-\d \| rank {i}/3 \(node {i}, local 0\): reached the store$" for i in range(3))),
    Example("full-features.yaml", "torchrun_image", ("master", 0),
            (r"^master-0 \| rank [01]/6 \(bert-finetune-master-0\): secrets, configmaps and volumes in place$",),
            images=(("busybox:1.36", "test_image"),),
            secrets={"hf-credentials": {"token": "hf-token"}, "internal-ca": {"ca.crt": "test-ca"}},
            configmaps={"tracking": {"project": "squad"}, "finetune-config": {"lr": "3e-5"}}),
    Example("pytorch-cluster.yaml", "test_image", ("master", 0),
            refused="native sidecar(s) log-shipper (initContainers with restartPolicy Always)"),
]
# see the docstring; generic-coord (spec v1.2) runs in every form in e2e/test_generic_framework_docker.py (its kept
# task name `master` is what the volcano and jobset summaries name, not the spec's role `coordinator`)
NOT_RUN = {"paddle-collective": "paddle.yaml", "paddle-ps": "paddle-ps.yaml", "generic-coord": "generic-coordinator.yaml",
           "torch-on-runtime": "torch-on-runtime.yaml"}
# Known bugs: run, and expected to end unlike the spec (strict: the fix makes the case fail until removed here).
BUGS: dict[tuple[str, str], str] = {}


def _forms(job: str) -> list[str]:
    forms = ["spec"] + [f for f in FILE_FORMS if (GOLDEN / job / f"{f}.yaml").is_file()]
    return forms + (["helm"] if (GOLDEN / job / "helm").is_dir() else [])


def _cases():
    for ex in EXAMPLES:
        for form in _forms(ex.job):
            marks = [pytest.mark.skipif(not HELM, reason="helm-python-sdk missing")] if form == "helm" else []
            if (ex.job, form) in BUGS:
                marks.append(pytest.mark.xfail(strict=True, reason=BUGS[ex.job, form]))
            yield pytest.param(ex, form, id=f"{ex.job}-{form}", marks=marks)


def _input(ex: Example, form: str, tmp: Path) -> Path:
    """A copy of the form's file (or chart folder) beside what it asks for: tf-chief's host folder made, and
    for compose the ConfigMap and Secret folders its notes name."""
    src = SPECS / ex.spec if form == "spec" else GOLDEN / ex.job / (form if form == "helm" else f"{form}.yaml")
    dst = tmp / "in" / src.name
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        dst.parent.mkdir()
        shutil.copy(src, dst)
    for path in [dst] if dst.is_file() else dst.rglob("*"):
        if path.is_file() and MNIST in path.read_text():
            (tmp / "mnist").mkdir(exist_ok=True)
            path.write_text(path.read_text().replace(MNIST, str(tmp / "mnist")))
    if form == "compose":
        for kind, objects in (("secrets", ex.secrets), ("configmaps", ex.configmaps)):
            for name, data in objects.items():
                (dst.parent / kind / name).mkdir(parents=True)
                for key, value in data.items():
                    (dst.parent / kind / name / key).write_text(value)
    return dst


def _compose_env(ex: Example, path: Path) -> dict[str, str]:
    """Compose reads env from Secrets and ConfigMaps as `${VAR:?...}`: the values, exported as its notes say."""
    values = {(kind, name, key): v for kind, objects in (("Secret", ex.secrets), ("ConfigMap", ex.configmaps))
              for name, data in objects.items() for key, v in data.items()}
    env = {}
    for note in yaml.safe_load(path.read_text())["x-trainspec"].get("notes") or []:
        m = re.match(r"(\w+): from Kubernetes (Secret|ConfigMap) (\S+) key (\S+);", note)
        if m:
            env[m.group(1)] = values[(m.group(2), m.group(3), m.group(4))]
    return env


def _options(ex: Example, form: str, request) -> list[str]:
    image = request.getfixturevalue(ex.image)
    opts = ["--cpu-only", "--offline", "--restart-backoff", "0.2", "--image", f"{ex.doc['spec']['image']}={image}"]
    for registry, fixture in ex.images:
        opts += ["--image", f"{registry}={request.getfixturevalue(fixture)}"]
    if form != "compose":
        opts += [f"--secret={n}:{k}={v}" for n, d in ex.secrets.items() for k, v in d.items()]
        opts += [f"--configmap={n}:{k}={v}" for n, d in ex.configmaps.items() for k, v in d.items()]
    return opts


def _trainjob_names(ex: Example, out: str) -> str:
    """Trainer's `node-<k>` pods as the spec's replicas: its roles in order, the launcher apart."""
    names = [f"{role}-{i}" for role, r in ex.doc["spec"]["roles"].items() if role != "launcher"
             for i in range(r.get("replicas", 1))]
    return re.sub(r"^(trainspec: )?node-(\d+)\b", lambda m: (m.group(1) or "") + names[int(m.group(2))], out,
                  flags=re.M)


def _who(name: str) -> tuple[str, int | str | None]:
    """`worker-0` -> (worker, 0); `all workers` -> (worker, all); a group (`task worker`, a replicated
    Job `worker`, Trainer's `node`) -> (worker, None)."""
    name = name.removeprefix("task ")
    if m := re.fullmatch(r"all (\S+)s", name):
        return m.group(1), "all"
    if m := re.fullmatch(r"(\S+)-(\d+)", name):
        return m.group(1), int(m.group(2))
    return name, None


def _decision(job: str, out: str) -> tuple[str, str, list[str]]:
    """(SUCCEEDED|FAILED, the replica or group the summary names, the replicas that had succeeded
    when the job was decided)."""
    m = re.search(rf"^job {job} (SUCCEEDED|FAILED) in [\d.]+s \((.+?) (succeeded|failed)\b.*\)$", out, re.M)
    assert m, f"no summary line:\n{out}"
    decided = out.index(f"trainspec: job {job} {m.group(1).lower()}:")
    done = re.findall(r"^trainspec: (\S+) \S+ -> Succeeded", out[:decided], re.M)
    return m.group(1), m.group(2), done


@pytest.mark.parametrize("ex,form", list(_cases()))
def test_every_form_ends_like_the_spec(tmp_path, request, leak_check, ex: Example, form: str):
    path = _input(ex, form, tmp_path)
    env = _compose_env(ex, path) if form == "compose" else None
    # Host paths (tf-chief's dataset, compose's Secret/ConfigMap folders) only as the user names them (issue 23);
    # compose interpolation sees only the variables passed with -e.
    named = ["--mount-host", str(tmp_path)] + [a for name in env or {} for a in ("-e", name)]
    r = trainspec("run", path, *_options(ex, form, request), *named, cwd=tmp_path, timeout=300, env=env)
    out = norm(r.stdout)
    if ex.refused:
        assert r.returncode == 2, out + r.stderr
        assert ex.refused in r.stderr and "Traceback" not in r.stderr
        return
    mpi_trainjob = form == "trainjob" and ex.doc["spec"]["framework"] == "mpi"
    if mpi_trainjob:  # the runtime's 0640 key, refused by OpenSSH under root, as on a cluster
        assert r.returncode == 1, out + r.stderr
        assert "FAILED" in out and "launcher-0 failed" in out
        assert "Permissions 0640 for '/root/.ssh/id_rsa' are too open" in out
        return
    assert r.returncode == 0, out + r.stderr
    if form == "trainjob":
        out = _trainjob_names(ex, out)
    outcome, name, done = _decision(ex.job, out)
    assert outcome == "SUCCEEDED", out
    role, index = _who(name)
    want_role, want_index = ex.decider
    # Trainer names its one group `node` (the spec's replicas in order: _trainjob_names)
    assert role == ("node" if form == "trainjob" else want_role), name
    if index is None:  # a group: the replicas the spec's rule needs had succeeded when it was decided
        count = ex.doc["spec"]["roles"][want_role].get("replicas", 1)
        want = [f"{want_role}-{i}" for i in (range(count) if want_index == "all" else [want_index])]
        assert set(want) <= set(done), (name, want, done)
    else:
        assert index == want_index, name
    for proof in ex.proofs:
        assert re.search(proof, out, re.M), f"{proof!r} not in:\n{out}"
    note = "would keep running after the job succeeded"
    if form not in ("k8s", "helm"):
        assert note not in r.stderr + r.stdout
    elif ex.lingers:  # (replicas still running at success are named too: which ones is timing)
        assert note in r.stderr + r.stdout and f"{ex.lingers}-0" in r.stderr + r.stdout, r.stderr


def test_every_golden_job_is_in_the_matrix():
    """A new example, golden job or form cannot be left out silently."""
    run = {ex.job for ex in EXAMPLES}
    assert {p.name for p in GOLDEN.iterdir() if p.is_dir()} == run | set(NOT_RUN)
    assert {p.name for p in SPECS.glob("*.yaml")} == {ex.spec for ex in EXAMPLES} | set(NOT_RUN.values())
    for job in run:
        assert {p.name for p in (GOLDEN / job).iterdir()} <= {f"{f}.yaml" for f in FILE_FORMS} | {"helm"}, job
