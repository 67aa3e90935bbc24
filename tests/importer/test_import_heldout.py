"""Issue 20's measure on held-out upstream manifests (tests/import_manifests/heldout/, each naming its
repository and path), and the bugs that set found: silent differences, refusals of what a target can say.

The measure (tests/roundtrip_report.py): >= 85% of in-scope jobs round-trip under --strict, none is
accepted by --strict and then differs; every accepted import compiles to output its CRD schema accepts.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from manifest_semantics import exact_diff, semantic_diff

from trainspec.compiler import SpecErrors
from trainspec.importer import import_text
from trainspec.importer.verify import compile_text

from helpers import run_cli

HERE = Path(__file__).parents[1] / "import_manifests"
HELDOUT = HERE / "heldout"
DOCS = sorted(p.name for p in HELDOUT.iterdir() if p.suffix in (".yaml", ".json"))


def test_the_held_out_set_is_real_and_large_enough():
    assert len(DOCS) >= 30
    for name in DOCS:
        text = (HELDOUT / name).read_text()
        assert name.endswith(".json") or text.startswith("# "), f"{name} does not name its upstream source"


def test_round_trip_measure_over_the_held_out_set():
    from roundtrip_report import classify

    from helpers import reference_dir

    reference_dir()
    verdicts = {name: classify(HELDOUT / name) for name in DOCS}
    different = {n: why for n, (v, why) in verdicts.items() if v == "DIFFERENT"}
    assert different == {}
    in_scope = [v for v, _ in verdicts.values() if v in ("same", "refused", "DIFFERENT")]
    same = [v for v in in_scope if v == "same"]
    assert len(same) >= 0.85 * len(in_scope), {n: w for n, (v, w) in verdicts.items() if v == "refused"}


@pytest.mark.parametrize("name", DOCS)
def test_held_out_imports_compile_to_what_the_crd_schemas_accept(name):
    """Import (not strict: every new kind imports) + compile to the source's target and to jobset and volcano:
    either a clear SpecErrors or output whose custom resources pass their CRD's served schema, strictly."""
    from helpers import reference_dir
    from schemas import errors, has_schema

    reference_dir()
    try:
        result = import_text((HELDOUT / name).read_text(), name)
    except SpecErrors:
        assert name in ("mpi-deepspeed-helloworld.yaml", "jobset-pytorch-cnn-mnist.yaml")  # not YAML / v1
        return
    for target in dict.fromkeys((result.target, "jobset", "volcano")):
        try:
            files = compile_text(result.text, target) if target == result.target else compile_text(
                _without_patches(result.text), target)
        except SpecErrors:
            assert target != result.target
            continue
        docs = [d for text in files.values() for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if isinstance(d, dict)]
        for doc in docs:
            if has_schema(doc):
                assert errors(doc) == [], (target, doc["kind"], errors(doc)[:3])


def _without_patches(text: str) -> str:
    spec = yaml.safe_load(text)
    spec["spec"].pop("patches", None)  # they address the source target's object (migrate drops them, loudly)
    return yaml.safe_dump(spec)


# --- the comparison: what it sets aside is only what trainspec writes ---------------------------------

def _volcano_generic() -> dict:
    return yaml.safe_load((HELDOUT / "volcano-paddle-ctr.yaml").read_text())


def test_a_generic_jobs_framework_looking_env_is_compared():
    """PADDLE_*/DMLC_* set by hand in a job without a framework plugin are the user's: dropping one differs."""
    source = _volcano_generic()
    compiled = copy.deepcopy(source)
    env = compiled["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["env"]
    env[:] = [e for e in env if e["name"] != "PADDLE_TRAINERS_NUM"]
    assert any("PADDLE_TRAINERS_NUM" in d for d in semantic_diff(source, compiled, {}, "generic"))


def test_volcano_and_kubeflow_keys_and_the_group_name_annotation_are_compared():
    source = next(yaml.safe_load_all((HELDOUT / "volcano-horovod-kubecon.yaml").read_text()))
    compiled = copy.deepcopy(source)
    del compiled["metadata"]["labels"]["volcano.sh/job-type"]
    assert semantic_diff(source, compiled, {}, "generic")
    source["spec"]["tasks"][0]["template"].setdefault("metadata", {})["annotations"] = {
        "scheduling.k8s.io/group-name": "lm-horovod-job"}
    assert any("group-name" in d for d in semantic_diff(source, copy.deepcopy(compiled), {}, "generic"))


def test_the_api_servers_spellings_compare_equal_and_nothing_else():
    """`command:` (null) is no command; an env var without value is ""; fieldRef apiVersion v1 is the default;
    4 and "4" are one quantity: the API server stores each pair alike.  A real change still differs."""
    source = yaml.safe_load((HELDOUT / "mpi-pi-mpich.yaml").read_text())
    compiled = copy.deepcopy(source)
    del compiled["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["command"]
    assert semantic_diff(source, compiled) == []
    compiled["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["args"][0] = "sshd"
    assert semantic_diff(source, compiled)
    paddle = _volcano_generic()
    other = copy.deepcopy(paddle)
    for task in other["spec"]["tasks"]:
        for e in task["template"]["spec"]["containers"][0]["env"]:
            (e.get("valueFrom") or {}).get("fieldRef", {}).pop("apiVersion", None)
            if e["name"] == "TOPOLOGY":
                e["value"] = ""
    assert semantic_diff(paddle, other, {}, "generic") == []
    other["spec"]["tasks"][1]["template"]["spec"]["containers"][0]["env"][2]["value"] = "x"  # TOPOLOGY
    assert semantic_diff(paddle, other, {}, "generic")


def test_jobset_defaults_and_copied_job_labels():
    """completionMode Indexed is JobSet's default on every replicatedJob (with or without completions); the
    job's labels trainspec copies onto pod templates sit under metadata; a pod label of its own still counts."""
    source = yaml.safe_load((HELDOUT / "jobset-tpu-multislice.yaml").read_text())
    compiled = copy.deepcopy(source)
    rj = compiled["spec"]["replicatedJobs"][0]["template"]
    rj["spec"]["completionMode"] = "Indexed"
    rj["spec"]["template"]["metadata"] = {"labels": {"kueue.x-k8s.io/queue-name": "multislice-queue"}}
    rj["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["google.com/tpu"] = "4"
    assert exact_diff(source, compiled) == []
    rj["spec"]["template"]["metadata"]["labels"]["team"] = "a"
    assert exact_diff(source, compiled)
    depends = yaml.safe_load((HELDOUT / "jobset-depends-on.yaml").read_text())
    with_mode = copy.deepcopy(depends)
    for job in with_mode["spec"]["replicatedJobs"]:
        job["template"]["spec"]["completionMode"] = "Indexed"
    assert exact_diff(depends, with_mode) == []


# --- importer fixes -------------------------------------------------------------------------------

def test_openpai_task_retry_count_zero_is_what_the_spec_says():
    """taskRetryCount 0 (no retry of one task) is the restartPolicy Never every OpenPAI role gets; 2 is a loss."""
    text = (HELDOUT / "openpai-v2-mxnet-cifar10.yaml").read_text()
    result = import_text(text, "pai.yaml")
    assert not any("taskRetryCount" in e.format() for e in result.lost)
    result = import_text(text.replace("taskRetryCount: 0", "taskRetryCount: 2"), "pai.yaml")
    assert any("taskRetryCount" in e.format() and "restartPolicy Never" in e.format() for e in result.lost)


def test_generate_name_imports_into_a_spec_that_keeps_it(tmp_path):
    """Kueue's sample Job has only generateName: the spec keeps it (v1.3), no loss is reported for it; a TFJob
    with generateName imports under --strict (tests/importer/test_generate_name.py has the round trips)."""
    path = HELDOUT / "batch-kueue-sample-job.yaml"
    run = run_cli("import", str(path))
    assert run.returncode == 0, run.stderr
    spec = yaml.safe_load(run.stdout)
    assert spec["metadata"]["generateName"] == "sample-job-" and "name" not in spec["metadata"]
    assert spec["apiVersion"] == "trainspec/v1.3" and "generateName" not in run.stderr
    tf = (HERE / "tf-dist-mnist.yaml").read_text().replace("  name: ", "  generateName: ", 1)
    (tmp_path / "tf.yaml").write_text(tf)
    run = run_cli("import", str(tmp_path / "tf.yaml"), "--strict")
    assert run.returncode == 0, run.stderr
    assert "generateName:" in run.stdout and "Traceback" not in run.stderr


def test_a_job_read_back_from_a_cluster_keeps_finalizers_and_owners():
    """Under --strict, finalizers and ownerReferences were dropped with exit 0 (deleting the job then behaves
    differently); they are patches now, and the server-set uid/resourceVersion/managedFields/status are not
    the job's."""
    result = import_text((HERE / "tf-exported.yaml").read_text(), "tf-exported.yaml", strict=True)
    ops = {op["path"]: op["value"] for op in result.spec["spec"]["patches"]["kubeflow"]}
    assert ops["/metadata/finalizers"] == ["example.com/archive-logs"]
    assert ops["/metadata/ownerReferences"][0]["name"] == "experiment-7"
    assert not any(k in result.text for k in ("managedFields", "resourceVersion", "creationTimestamp"))
    from roundtrip_report import classify

    assert classify(HERE / "tf-exported.yaml") == ("same", "")


def test_volcano_policies_and_a_kubeflow_jobs_priority_are_compared_as_written():
    """An added or missing `PodEvicted -> RestartJob` (Volcano recreates one evicted pod without it) or
    `PodFailed -> TerminateJob` differs; so does a Kubeflow job's priority class moved onto its pods."""
    source = yaml.safe_load((HELDOUT / "volcano-tf-dist-mnist.yaml").read_text())
    compiled = copy.deepcopy(source)
    compiled["spec"]["policies"] = []
    assert any("policies" in d for d in semantic_diff(source, compiled, {}, "generic"))
    compiled = copy.deepcopy(source)
    compiled["spec"]["tasks"][0]["policies"] = [{"event": "PodFailed", "action": "TerminateJob"}]
    assert semantic_diff(source, compiled, {}, "generic")
    tf = yaml.safe_load((HELDOUT / "tf-simple.yaml").read_text())
    tf["spec"]["runPolicy"] = {"schedulingPolicy": {"priorityClass": "high"}}
    on_pods = copy.deepcopy(tf)
    on_pods["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["priorityClassName"] = "high"
    assert any("priorityClassName" in d for d in semantic_diff(tf, on_pods))


def test_volcano_pods_naming_another_scheduler_keep_the_jobs(tmp_path):
    """MindSpore's Volcano job (schedulerName volcano) whose pods name another scheduler: import moved the pods'
    scheduler onto the job (scheduling.schedulerName) under --strict, so the PodGroup changed scheduler too.
    The pods' now come back as a patch and the job keeps volcano."""
    from roundtrip_report import classify

    docs = list(yaml.safe_load_all((HELDOUT / "volcano-mindspore-cpu.yaml").read_text()))
    docs[0]["spec"]["tasks"][0]["template"]["spec"]["schedulerName"] = "other"
    path = tmp_path / "ms.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = import_text(path.read_text(), str(path), strict=True)
    assert "schedulerName" not in result.spec["spec"].get("scheduling", {})
    assert {"op": "add", "path": "/spec/tasks/0/template/spec/schedulerName", "value": "other"} in \
        result.spec["spec"]["patches"]["volcano"]
    assert classify(path) == ("same", "")
