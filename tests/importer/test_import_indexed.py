"""Issue 31 part 3: real batch/v1 Jobs (Indexed, with their headless Service; generateName; Kueue's samples) import
under --strict and compile back (`--target k8s`) to the same objects (tests/import_manifests/indexed/, each naming
its source).  The compiled Job and Service are compared with the source's field by field (manifest_semantics.
exact_diff: only trainspec's own labels, TRAINSPEC_* env and its `trainspec` port removed), so every count, image,
command, resource, name, hostname, suspend, queue label, parallelism, backoff, failure and success policy is checked.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from manifest_semantics import exact_diff
from roundtrip_report import batch_as_written

from trainspec.importer import import_text
from trainspec.importer.verify import compile_text, job_objects

from helpers import run_cli

INDEXED = Path(__file__).resolve().parents[1] / "import_manifests" / "indexed"
NAMES = sorted(p.name for p in INDEXED.glob("*.yaml"))


def _source(name: str) -> tuple[dict, dict | None]:
    docs = [d for d in yaml.safe_load_all((INDEXED / name).read_text()) if isinstance(d, dict)]
    (job,) = [d for d in docs if d["kind"] == "Job"]
    services = [d for d in docs if d["kind"] == "Service"]
    return job, services[0] if services else None


def _compiled(name: str) -> tuple[dict, list[dict]]:
    result = import_text((INDEXED / name).read_text(), name, strict=True)  # raises SpecErrors on any loss
    assert result.lost == () and result.target == "k8s"
    return result.spec, job_objects(compile_text(result.text, "k8s"))


def test_the_set_is_real_and_large_enough():
    """At least 8 Indexed Jobs, each naming its upstream source; 3 or more named by generateName."""
    indexed = [n for n in NAMES if _source(n)[0]["spec"].get("completionMode") == "Indexed"]
    assert len(indexed) >= 8
    assert sum("generateName" in _source(n)[0]["metadata"] for n in indexed) >= 3
    for name in NAMES:
        assert (INDEXED / name).read_text().startswith("# https://github.com/"), name


@pytest.mark.parametrize("name", NAMES)
def test_imports_strictly_and_compiles_back_to_the_same_job(name):
    job, service = _source(name)
    spec, objects = _compiled(name)
    (out,) = [o for o in objects if o["kind"] == "Job"]
    (out_service,) = [o for o in objects if o["kind"] == "Service"]
    prefix = job["metadata"].get("generateName")
    if prefix:  # the spec keeps generateName; build names the run by the prefix, the role's Job <run>-<role>
        assert spec["metadata"] == {k: v for k, v in {"generateName": prefix,
                                                       "namespace": job["metadata"].get("namespace")}.items() if v}
        assert out["metadata"]["name"].startswith(prefix.rstrip("-") + "-")
    if "subdomain" not in job["spec"]["template"]["spec"]:
        # additive: the k8s target's headless Service makes the pods addressable (<Job>-<i>.<Service>)
        assert out["spec"]["template"]["spec"]["subdomain"] == out_service["metadata"]["name"]
    want, have = batch_as_written(job, out, objects)
    assert exact_diff(want, have) == [], exact_diff(want, have)
    pod = out["spec"]["template"]["spec"]
    if service is not None:
        assert exact_diff(service, out_service) == [], exact_diff(service, out_service)
        assert pod["subdomain"] == service["metadata"]["name"]
    # the replicas' host list trainspec gives every pod names them as the Job controller does: <Job>-<i>.<Service>
    (topology,) = [o for o in objects if o["kind"] == "ConfigMap"]
    (hosts,) = [v for k, v in topology["data"].items() if k.startswith("TRAINSPEC_HOSTS_")]
    if out["spec"].get("completionMode") == "Indexed":  # a NonIndexed Job's pods have no index (the spec says so)
        assert [h.rsplit(":", 1)[0] for h in hosts.split(",")] == [
            f"{out['metadata']['name']}-{i}.{out_service['metadata']['name']}" for i in range(out["spec"]["completions"])]
    # the queue is the spec's first-class scheduling.queue (Kueue's label on the Job only), not a patch
    queue = (job["metadata"].get("labels") or {}).get("kueue.x-k8s.io/queue-name")
    assert spec["spec"].get("scheduling", {}).get("queue") == queue


def test_pod_hostnames_and_the_service_stay_for_the_pod_to_pod_example():
    """The Kubernetes docs' pod-to-pod Job: pods example-job-<i>.headless-svc, as its script pings them."""
    spec, objects = _compiled("k8s-pod-to-pod.yaml")
    (out,) = [o for o in objects if o["kind"] == "Job"]
    (svc,) = [o for o in objects if o["kind"] == "Service"]
    assert spec["metadata"]["name"] == "headless-svc" and svc["metadata"]["name"] == "headless-svc"
    assert out["metadata"]["name"] == "example-job" and out["spec"]["completionMode"] == "Indexed"
    assert out["spec"]["template"]["spec"]["subdomain"] == "headless-svc"
    assert svc["spec"]["selector"] == {"job-name": "example-job"}  # the pods the Job controller labels so


def test_a_non_indexed_job_stays_non_indexed():
    """Kueue's sample is NonIndexed (any 3 successes, not each index once): completionMode is left unset again,
    and the per-index backoff (Indexed only) is not added; suspend stays."""
    _, objects = _compiled("kueue-sample-job-nonindexed.yaml")
    (out,) = [o for o in objects if o["kind"] == "Job"]
    assert "completionMode" not in out["spec"] and "backoffLimitPerIndex" not in out["spec"]
    assert out["spec"]["suspend"] is True and out["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "user-queue"


def test_the_cli_imports_strictly_and_compiles(tmp_path):
    spec = tmp_path / "spec.yaml"
    run = run_cli("import", "--strict", str(INDEXED / "k8s-pod-to-pod.yaml"), "-o", str(spec))
    assert run.returncode == 0, run.stderr
    compiled = run_cli("compile", str(spec), "--target", "k8s")
    assert compiled.returncode == 0, compiled.stderr
    jobs = [d for d in yaml.safe_load_all(compiled.stdout) if d and d["kind"] == "Job"]
    assert [j["metadata"]["name"] for j in jobs] == ["example-job"]


def test_a_service_in_another_namespace_is_still_a_loss():
    text = (INDEXED / "k8s-pod-to-pod.yaml").read_text().replace("  name: headless-svc\n",
                                                                   "  name: headless-svc\n  namespace: other\n", 1)
    result = import_text(text, "x.yaml")
    assert any("another namespace" in e.format() for e in result.lost)


@pytest.mark.parametrize("name", ["k8s-pod-to-pod.yaml", "kueue-tas-required.yaml", "k8s-success-policy.yaml"])
def test_migrate_to_jobset_works_and_says_what_it_leaves(name):
    """`migrate --to jobset`: a JobSet with the role as a replicatedJob; the k8s patches are named as not carried."""
    run = run_cli("migrate", str(INDEXED / name), "--to", "jobset")
    assert run.returncode == 0, run.stderr
    (jobset,) = [d for d in yaml.safe_load_all(run.stdout) if d and d["kind"] == "JobSet"]
    job, _ = _source(name)
    rjob = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert rjob["completions"] == job["spec"]["completions"]
    assert rjob["template"]["spec"]["containers"][0]["image"] == job["spec"]["template"]["spec"]["containers"][0][
        "image"]
    assert "is not carried to jobset" in run.stderr


def test_the_round_trip_report_calls_every_one_the_same():
    """tests/roundtrip_report.py's verdict (issue 20's measure) on this set: each is `same`."""
    from roundtrip_report import classify

    from helpers import reference_dir

    reference_dir()
    assert {name: classify(INDEXED / name) for name in NAMES} == {name: ("same", "") for name in NAMES}


@pytest.mark.skipif(not os.environ.get("TRAINSPEC_TEST_KUBECONFIG"),
                    reason="no API server: set TRAINSPEC_TEST_KUBECONFIG to a kubeconfig")
def test_the_compiled_jobs_pass_the_servers_check(tmp_path):
    """Each import compiled to k8s (patches applied) passes `apply --dry-run=server` on a real API server: the
    patched Job (NonIndexed, suspended, renamed, its own backoff) and Service are objects the server accepts."""
    for name in NAMES:  # one apply each: two of them name their Service headless-svc
        result = import_text((INDEXED / name).read_text(), name, strict=True)
        spec = tmp_path / name
        spec.write_text(result.text)
        compiled = tmp_path / f"{spec.stem}.k8s.yaml"
        run = run_cli("compile", str(spec), "--target", "k8s", "-o", str(compiled))
        assert run.returncode == 0, run.stderr
        run = run_cli("apply", str(compiled), "--dry-run=server",
                      env={"KUBECONFIG": os.environ["TRAINSPEC_TEST_KUBECONFIG"]})
        assert run.returncode == 0, (name, run.stderr)


def test_generate_name_with_a_subdomain_is_a_loss():
    """The spec's generateName names the job, hence the Service: a Job named so under a Service cannot keep both."""
    text = (INDEXED / "k8s-pod-to-pod.yaml").read_text().replace("  name: example-job\n",
                                                                   "  generateName: example-job-\n", 1)
    result = import_text(text, "x.yaml")
    assert any("generateName whose pods' subdomain is a Service" in e.format() for e in result.lost)


def test_an_index_read_through_env_stays_the_jobs_index():
    """JOB_COMPLETION_INDEX from the downward API (the Job controller's annotation) is spec env fieldRef, written
    back as it was: the pod's index is the completion index on the compiled Job too."""
    text = (INDEXED / "k8s-backoff-per-index.yaml").read_text().replace(
        "      - name: example\n", "      - name: example\n        env:\n        - name: JOB_COMPLETION_INDEX\n"
        "          valueFrom:\n            fieldRef:\n              fieldPath: metadata.annotations['batch.kubernetes.io/"
        "job-completion-index']\n", 1)
    result = import_text(text, "x.yaml", strict=True)
    assert result.spec["spec"]["env"]["JOB_COMPLETION_INDEX"] == {
        "fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}
    objects = job_objects(compile_text(result.text, "k8s"))
    (out,) = [o for o in objects if o["kind"] == "Job"]
    assert exact_diff(*batch_as_written(yaml.safe_load(text), out, objects)) == []
    env = {e["name"]: e for e in out["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["JOB_COMPLETION_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"].endswith("job-completion-index']")


@pytest.mark.docker
def test_the_pod_to_pod_example_runs_from_its_compiled_import(test_image, tmp_path):
    """The docs' pod-to-pod Job, its image swapped for the test image and ping for a DNS lookup: imported --strict
    and compiled to k8s, the emulator runs it (each pod resolves example-job-<i>.headless-svc, as on a cluster)."""
    text = (INDEXED / "k8s-pod-to-pod.yaml").read_text().replace("image: bash:latest", f"image: {test_image}")
    text = text.replace("ping -c 1 example-job-${i}.headless-svc > /dev/null 2>&1",
                        "getent hosts example-job-${i}.headless-svc").replace("- bash\n", "- sh\n", 1)
    text = text.replace("sleep 1\n", "sleep 1; n=$((n+1)); [ $n -lt 30 ] || exit 3\n")  # a name never found: fail
    (tmp_path / "job.yaml").write_text(text)
    spec, compiled = tmp_path / "spec.yaml", tmp_path / "k8s.yaml"
    assert run_cli("import", "--strict", str(tmp_path / "job.yaml"), "-o", str(spec)).returncode == 0
    assert run_cli("compile", str(spec), "--target", "k8s", "-o", str(compiled)).returncode == 0
    state = str(tmp_path / ".trainspec")
    # the compiled file, and the imported spec itself: its k8s patches (the Job's own name, the pods' host
    # list) are applied when a spec is run, as `build` applies them (they were dropped: the pods waited)
    for source in (compiled, spec):
        try:
            run = run_cli("run", str(source), "--offline", "--engine", "docker", "--gpus", "none", "-q",
                          "--state-dir", state)
        finally:  # whatever is left of the run (its replicas, its network)
            run_cli("down", "headless-svc", "--state-dir", state, "--engine", "docker")
        assert run.returncode == 0, run.stdout + run.stderr
        assert "SUCCEEDED" in run.stdout + run.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gke-finetune-gemma-l4.yaml", "k8s-pod-to-pod.yaml"])
def test_a_service_field_of_the_wrong_shape_is_an_error_not_a_crash(name):
    """The headless Service is read too: each of its fields replaced by a value of another shape gives a clean
    import or SpecErrors (at the Service's own line), never a traceback."""
    import copy

    from test_import import _paths

    from trainspec.compiler import SpecErrors

    docs = [d for d in yaml.safe_load_all((INDEXED / name).read_text()) if d]
    for path in [p for p in _paths(docs[0]) if p]:
        for odd in (None, 5, [{"name": 3}], "x"):
            data = copy.deepcopy(docs[0])
            node = data
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = odd
            try:
                import_text(yaml.safe_dump_all([data, *docs[1:]]), "m.yaml")
            except SpecErrors:
                pass


def test_deadline_ttl_and_a_first_success_policy_are_spec_fields():
    """activeDeadlineSeconds, ttlSecondsAfterFinished and `successPolicy: {rules: [{succeededCount: 1}]}` (the
    first pod to succeed decides) map to the spec's own fields, and the compiled Job is the source's again."""
    text = (INDEXED / "k8s-backoff-per-index.yaml").read_text().replace(
        "  completions: 10\n", "  completions: 10\n  activeDeadlineSeconds: 600\n  ttlSecondsAfterFinished: 30\n"
        "  successPolicy:\n    rules:\n    - succeededCount: 1\n", 1)
    result = import_text(text, "x.yaml", strict=True)
    spec = result.spec["spec"]
    assert (spec["activeDeadlineSeconds"], spec["ttlSecondsAfterFinished"]) == (600, 30)
    assert spec["success"] == {"role": "example", "policy": "AnyReplica"}
    # (the Job successPolicy is written from Kubernetes 1.31, --kube-version; below it a patch keeps the source's)
    assert not any("Seconds" in op["path"] for op in spec["patches"]["k8s"])
    objects = job_objects(compile_text(result.text, "k8s"))
    (out,) = [o for o in objects if o["kind"] == "Job"]
    assert exact_diff(*batch_as_written(yaml.safe_load(text), out, objects)) == []
