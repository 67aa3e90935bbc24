"""Spec v1.3 `metadata.generateName`, through the CLI: validation, build, apply (client dry run), import.

The real-server run (apply, ps, down with the generated name) is in tests/cluster/test_cluster_integration.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from helpers import ROOT, run_cli

MANIFESTS = Path(__file__).parents[1] / "import_manifests" / "generatename"
OPERATOR_TARGETS = ("kubeflow", "jobset", "volcano", "trainjob")
ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apiserver/pkg/storage/names: the API server's suffix letters

SPEC = """\
apiVersion: trainspec/v1.3
kind: TrainingJob
metadata:
  {meta}
spec:
  framework: pytorch
  image: pytorch/pytorch:2.3.0
  command: [python, train.py]
  roles:
    master: {{replicas: 1}}
    worker: {{replicas: 2}}
"""


def _spec(tmp_path: Path, meta: str, name: str = "job.yaml") -> Path:
    path = tmp_path / name
    path.write_text(SPEC.format(meta=meta))
    return path


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


@pytest.mark.parametrize(("meta", "where", "said"), [
    ("generateName: Mnist_", "4:17", "'Mnist_' is not a valid generateName"),
    ("generateName: '-'", "4:17", "'-' is not a valid generateName"),
    ("generateName: 1mnist-", "4:17", "not a valid generateName"),
    ("generateName: " + "a" * 64, "4:17", "not a valid generateName"),
    ("name: mnist\n  generateName: mnist-", "5:3", "metadata.generateName: set together with metadata.name"),
    ("namespace: ml", "3:1", "metadata: neither name nor generateName is set"),
    # the longest name `apply` can make: the prefix cut to 58 characters and 5 more, then -worker-1
    ("generateName: " + "a" * 55 + "-", "4:17", "metadata.generateName: generated name"),
])
def test_a_bad_generate_name_is_one_positioned_error(tmp_path, meta, where, said):
    path = _spec(tmp_path, meta)
    run = run_cli("validate", str(path))
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert f"{path}:{where}: " in run.stderr and said in run.stderr, run.stderr


def test_the_longest_prefix_that_fits_is_accepted(tmp_path):
    # 58 + 5 random + "-worker-1" must stay within 63: a prefix of 49 characters is the longest
    assert run_cli("validate", str(_spec(tmp_path, "generateName: " + "a" * 48 + "-"))).returncode == 0
    run = run_cli("validate", str(_spec(tmp_path, "generateName: " + "a" * 49 + "-", "long.yaml")))
    assert run.returncode == 2 and "shorten metadata.generateName to at most 49 characters" in run.stderr


@pytest.mark.parametrize("target", (*OPERATOR_TARGETS, "k8s", "compose"))
def test_build_names_every_object_from_the_prefix_and_the_job_object_carries_it(tmp_path, target):
    """The files are those of `name: mnist` (every name agrees), plus generateName on the object named as the
    job: the same bytes every build, and `import` reads the prefix back."""
    with_prefix = run_cli("compile", str(_spec(tmp_path, "generateName: mnist-")), "--target", target)
    named = run_cli("compile", str(_spec(tmp_path, "name: mnist", "named.yaml")), "--target", target)
    assert with_prefix.returncode == 0 and named.returncode == 0, with_prefix.stderr + named.stderr
    docs = _docs(with_prefix.stdout)
    carrying = [d for d in docs if "generateName" in (d.get("metadata") or {})]
    if target in OPERATOR_TARGETS:
        job = docs[-1]
        assert job in carrying and job["metadata"]["name"] == "mnist"
        assert all(d["metadata"]["generateName"] == "mnist-" and d["metadata"]["name"] == "mnist" for d in carrying)
    elif target == "k8s":  # spec v1.3's k8s shape: the job's one headless Service is the object named as the job
        assert [(d["kind"], d["metadata"]["name"], d["metadata"]["generateName"]) for d in carrying] == \
            [("Service", "mnist", "mnist-")]
    else:
        assert carrying == []  # no object is named as the job: nothing to carry it
    for d in carrying:
        del d["metadata"]["generateName"]
    assert docs == _docs(named.stdout)


def test_build_names_the_folder_by_the_prefix_without_its_dash(tmp_path):
    out = tmp_path / "out"
    run = run_cli("build", str(_spec(tmp_path, "generateName: mnist-")), "-o", str(out))
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["mnist"]
    kubeflow = _docs((out / "mnist" / "kubeflow.yaml").read_text())
    assert kubeflow[-1]["metadata"]["generateName"] == "mnist-"
    again = tmp_path / "again"
    assert run_cli("build", str(tmp_path / "job.yaml"), "-o", str(again)).returncode == 0
    assert (again / "mnist" / "kubeflow.yaml").read_bytes() == (out / "mnist" / "kubeflow.yaml").read_bytes()


def _applied_names(stdout: str) -> list[str]:
    return [line.split(":")[0].split("/", 1)[1] for line in stdout.splitlines() if "would be applied" in line]


@pytest.mark.parametrize("target", ("kubeflow", "k8s"))
def test_apply_gives_each_run_a_new_name_every_object_agrees_on(tmp_path, target):
    spec = _spec(tmp_path, "generateName: mnist-")
    runs = [run_cli("apply", str(spec), "--target", target, "--dry-run=client") for _ in range(2)]
    names = []
    for run in runs:
        assert run.returncode == 0, run.stderr
        found = re.search(r"job (mnist-[a-z0-9]{5}): named from metadata.generateName 'mnist-' "
                          r"\(ps/logs/down --cluster \1\)", run.stderr)
        assert found, run.stderr
        name = found.group(1)
        assert set(name[len("mnist-"):]) <= set(ALPHABET)
        objects = _applied_names(run.stdout)
        assert objects and all(o.split("/")[-1].startswith(name) for o in objects), objects
        names.append(name)
    assert names[0] != names[1]


def test_apply_hosts_and_topology_follow_the_generated_name(tmp_path):
    """What apply sends is the spec compiled with the generated name: the ConfigMap TRAINSPEC_HOSTS_* reads and
    the host names in it are the run's, not the prefix's."""
    spec = _spec(tmp_path, "generateName: mnist-")
    run = run_cli("apply", str(spec), "--target", "kubeflow", "--dry-run=client")
    name = re.search(r"job (mnist-[a-z0-9]{5})", run.stderr).group(1)  # type: ignore[union-attr]
    assert f"ConfigMap default/{name}-topology: would be applied" in run.stdout
    assert f"PyTorchJob.kubeflow.org default/{name}: would be applied" in run.stdout


def test_the_schema_takes_exactly_one_of_name_and_generate_name(tmp_path):
    import jsonschema

    schema = json.loads((ROOT / "schema" / "trainspec.schema.json").read_text())
    good = yaml.safe_load(SPEC.format(meta="generateName: mnist-"))
    jsonschema.validate(good, schema)
    for meta in ("name: mnist\n  generateName: mnist-", "namespace: ml"):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(yaml.safe_load(SPEC.format(meta=meta)), schema)
    assert run_cli("schema").stdout.strip() == (ROOT / "schema" / "trainspec.schema.json").read_text().strip()


@pytest.mark.parametrize(("manifest", "target", "prefix"), [
    ("kueue-jobset-sample.yaml", "jobset", "sleep-job-"),
    ("kubeflow-tfjob.yaml", "kubeflow", "tfjob"),
])
def test_import_keeps_generate_name_under_strict_and_compiles_back_to_it(tmp_path, manifest, target, prefix):
    spec = tmp_path / "spec.yaml"
    run = run_cli("import", str(MANIFESTS / manifest), "--strict", "-o", str(spec))
    assert run.returncode == 0, run.stderr
    data = yaml.safe_load(spec.read_text())
    assert data["apiVersion"] == "trainspec/v1.3"
    assert data["metadata"]["generateName"] == prefix and "name" not in data["metadata"]
    compiled = run_cli("compile", str(spec), "--target", target)
    assert compiled.returncode == 0, compiled.stderr
    job = _docs(compiled.stdout)[-1]
    source = next(d for d in _docs((MANIFESTS / manifest).read_text()))
    assert job["kind"] == source["kind"] and job["metadata"]["generateName"] == prefix
    # and the compiled file imports back to the same spec metadata
    out = tmp_path / "compiled.yaml"
    out.write_text(compiled.stdout)
    back = run_cli("import", str(out), "--strict")
    assert back.returncode == 0, back.stderr
    again = yaml.safe_load(back.stdout)["metadata"]
    assert again == {**data["metadata"], "namespace": data["metadata"].get("namespace", "default")} or again == \
        data["metadata"]  # the compiled file writes the default namespace out


def test_a_batch_job_keeps_its_generate_name_and_strict_names_only_other_losses(tmp_path):
    manifest = MANIFESTS / "kueue-sample-job.yaml"
    run = run_cli("import", str(manifest))
    assert run.returncode == 0, run.stderr
    assert yaml.safe_load(run.stdout)["metadata"]["generateName"] == "sample-job-"
    strict = run_cli("import", str(manifest), "--strict")
    assert "generateName" not in strict.stderr and "Traceback" not in strict.stderr


def test_a_live_object_named_by_the_server_imports_with_its_generate_name(tmp_path):
    """Read back from a cluster, a job created from generateName has both: the spec keeps the prefix."""
    text = (MANIFESTS / "kubeflow-tfjob.yaml").read_text().replace("  generateName: tfjob\n",
                                                                   "  generateName: tfjob\n  name: tfjobx7k2p\n")
    path = tmp_path / "live.yaml"
    path.write_text(text)
    run = run_cli("import", str(path), "--strict")
    assert run.returncode == 0, run.stderr
    assert yaml.safe_load(run.stdout)["metadata"]["generateName"] == "tfjob"
    # a name not made of the prefix is the job's name: the API server ignored generateName
    path.write_text(text.replace("name: tfjobx7k2p", "name: other"))
    run = run_cli("import", str(path))
    assert run.returncode == 0 and yaml.safe_load(run.stdout)["metadata"]["name"] == "other"
