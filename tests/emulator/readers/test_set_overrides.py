"""Run-time overrides without Docker: `--set` on a spec, `--claim`, `--image` over every
container, `--gpus-per-replica` and `--share-gpus`, missing objects listed together."""

from __future__ import annotations

import pytest

from trainspec.compiler.errors import SpecErrors, UsageError
from trainspec.emulator.engine.preflight import map_claims, map_images, missing_objects
from trainspec.emulator.host import gpus
from trainspec.emulator.readers import dispatch, overrides

from emuhelpers import ROOT, trainspec

TF_PS = str(ROOT / "specs" / "tf-ps.yaml")


def _load(path: str = TF_PS, sets=(), **kw):
    with overrides.using(list(sets)):
        return dispatch.load(path, state_dir="/state", **kw)


def test_set_edits_the_spec_before_validation():
    job = _load(sets=["roles.worker.replicas=1", "spec.roles.ps.replicas=1,env.LOG_LEVEL=debug"])
    assert sorted(r.display for r in job.replicas) == ["evaluator-0", "ps-0", "worker-0"]
    env = {e.name: e.value for e in job.replicas[0].main.env}
    assert env["LOG_LEVEL"] == "debug"
    assert len(_load().replicas) == 6  # nothing is left over for the next load


def test_helm_typing_lists_and_escapes():
    (a,) = overrides.parse("args={--lr,0.1}")
    assert a.path == ("spec", "args") and a.value == ["--lr", "0.1"]
    (a,) = overrides.parse(r"metadata.labels.example\.com/team=vision")
    assert a.path == ("metadata", "labels", "example.com/team") and a.value == "vision"
    assert [x.value for x in overrides.parse("a=true,b=null,c=007,d=-3,e=1.5")] == [True, None, "007", -3, "1.5"]
    (a,) = overrides.parse("spec.command[1]=-u")
    assert a.path == ("spec", "command", 1)


def test_set_errors_name_the_argument():
    with pytest.raises(SpecErrors, match=r"tf-ps.yaml:\d+:\d+: spec.roles.worker.replicas: .*\(set by --set "
                                         r"roles.worker.replicas=many\)"):
        _load(sets=["roles.worker.replicas=many"])
    with pytest.raises(UsageError, match=r"--set spec.command\[99\]=x: spec.command has 3 item\(s\); \[99\] is past"):
        _load(sets=["spec.command[99]=x"])
    with pytest.raises(UsageError, match="--set replicas: 'replicas' has no '='"):
        _load(sets=["replicas"])
    with pytest.raises(UsageError, match=r"--set spec.image.name=x: spec.image is not a mapping"):
        _load(sets=["spec.image.name=x"])


def test_set_on_a_compiled_file_is_refused(tmp_path):
    r = trainspec("compile", TF_PS, "--target", "k8s", "-o", "k8s.yaml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = trainspec("run", "k8s.yaml", "--set", "roles.worker.replicas=1", cwd=tmp_path)
    assert r.returncode == 2 and "--set changes a spec's (or a chart's) values; k8s.yaml is a compiled file" \
        in r.stderr, r.stderr


def test_claim_maps_a_pvc_to_a_host_folder_under_the_host_path_rules(tmp_path):
    spec = ROOT / "tests" / "emulator" / "specs" / "flaky.yaml"
    job = dispatch.load(str(spec), state_dir=str(tmp_path / ".trainspec"))
    claim = next(m for m in job.replicas[0].main.mounts if m.root)
    name = claim.root.rsplit("/", 1)[1]
    (tmp_path / "out").mkdir()
    map_claims(job, [f"{name}={tmp_path / 'out'}"], tmp_path / ".trainspec")
    mount = next(m for m in job.replicas[0].main.mounts if m.target == claim.target)
    assert mount.source.startswith(str(tmp_path / "out")) and mount.host_path and not mount.root
    job = dispatch.load(str(spec), state_dir=str(tmp_path / ".trainspec"))
    with pytest.raises(UsageError, match=f"--claim nope: the job has no persistentVolumeClaim 'nope' .*{name}"):
        map_claims(job, ["nope=/tmp"], tmp_path)
    with pytest.raises(UsageError, match="expected NAME=HOSTPATH"):
        map_claims(job, ["justaname"], tmp_path)
    from trainspec.emulator.host.paths import check_host_paths

    map_claims(job, [f"{name}=/etc"], tmp_path / ".trainspec")
    with pytest.raises(UsageError, match="refusing to mount host system paths.*/etc"):
        check_host_paths(job, str(tmp_path / ".trainspec"))


def test_image_new_covers_init_containers_too():
    job = _load(str(ROOT / "specs" / "full-features.yaml"), check_missing=False)
    before = {c.image for r in job.replicas for c in r.init_containers}
    assert before and all(c.image != "local:dev" for r in job.replicas for c in r.init_containers)
    note = map_images(job, ["local:dev"])
    assert all(c.image == "local:dev" for r in job.replicas for c in [*r.init_containers, r.main])
    assert all(img in note for img in before)
    job = _load(str(ROOT / "specs" / "full-features.yaml"), check_missing=False)
    map_images(job, ["busybox:1.36=tools:1", "local:dev"])  # OLD=NEW wins over NEW
    assert {c.image for r in job.replicas for c in r.init_containers} == {"tools:1"}


def test_missing_secrets_and_configmaps_are_listed_together():
    job = _load(str(ROOT / "specs" / "full-features.yaml"), check_missing=False)
    problems = missing_objects(job)
    assert len(problems) == 4
    assert sum("--secret" in hint for _, hint in problems) == 2 and sum("--configmap" in hint for _, hint in problems) == 2


def test_gpus_per_replica_and_sharing_are_said_never_silent():
    job = _load()
    for r in job.replicas:
        if r.role == "worker":
            r.main.accelerators = {"nvidia.com/gpu": 4}
    assert gpus.cap_per_replica(job, 1) == "worker: 4 -> 1 each"
    assert gpus.assign(job, ["0", "1", "2"]) == {
        "tf-ps-worker-0": ["0"], "tf-ps-worker-1": ["1"], "tf-ps-worker-2": ["2"]}
    with pytest.raises(UsageError, match="--gpus-per-replica N.*--share-gpus"):
        gpus.assign(job, ["0", "1"])
    got, note = gpus.share(job, ["0", "1"])
    assert got == {"tf-ps-worker-0": ["0"], "tf-ps-worker-1": ["1"], "tf-ps-worker-2": ["0"]}
    assert "asks for 3 GPUs and 2 may be used, so replicas share them" in note
    for r in job.replicas:
        if r.role == "worker":
            r.main.accelerators = {"nvidia.com/gpu": 2}
    got, note = gpus.share(job, ["0"])
    assert set(map(tuple, got.values())) == {("0",)} and "fewer than asked" in note
    with pytest.raises(UsageError, match="none may be used"):
        gpus.share(job, [])
