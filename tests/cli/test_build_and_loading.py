"""`build` / `--check` (the golden-file workflow) and the spec formats: YAML, JSON, Jsonnet."""

from __future__ import annotations

import json
import shutil

import pytest

from trainspec.compiler import SpecErrors
from trainspec.targets import load_plans

from helpers import GOLDEN, MINIMAL, SPECS, run_cli


def test_golden_files_are_up_to_date():
    result = run_cli("build", str(SPECS), "-o", str(GOLDEN), "--check")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr


def test_check_reports_a_stale_tree_with_a_diff(tmp_path):
    out = tmp_path / "golden"
    shutil.copytree(GOLDEN, out)
    target = out / "tf-ps" / "k8s.yaml"
    target.write_text(target.read_text().replace("replicas", "REPLICAS").replace("tf-ps-ps-1.tf-ps:2222", "stale:1"))
    result = run_cli("build", str(SPECS), "-o", str(out), "--check")
    assert result.returncode == 1
    assert f"--- {target}" in result.stdout and "-  TRAINSPEC_HOSTS_PS: tf-ps-ps-0.tf-ps:2222,stale:1" in result.stdout
    assert "+  TRAINSPEC_HOSTS_PS: tf-ps-ps-0.tf-ps:2222,tf-ps-ps-1.tf-ps:2222" in result.stdout
    assert "is stale" in result.stderr
    missing = out / "mxnet-ps" / "k8s.yaml"
    missing.unlink()
    # a v1.3 job on a Trainer runtime is refused by an explicit --target k8s without --runtime
    result = run_cli("build", str(SPECS), "-o", str(out), "--check", "--target", "k8s", "--exclude", "*on-runtime*")
    assert result.returncode == 1 and "--- /dev/null" in result.stdout


def test_build_writes_per_job_folders_and_only_changed_files(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "a.yaml").write_text(MINIMAL.replace("NAME", "alpha"))
    (specs / "b.yaml").write_text(MINIMAL.replace("NAME", "beta"))
    out = tmp_path / "out"
    first = run_cli("build", str(specs), "-o", str(out), "--target", "k8s")
    assert first.returncode == 0, first.stderr
    assert (out / "alpha" / "k8s.yaml").is_file() and (out / "beta" / "k8s.yaml").is_file()
    before = (out / "beta" / "k8s.yaml").stat().st_mtime_ns
    (specs / "a.yaml").write_text(MINIMAL.replace("NAME", "alpha").replace("pt:1", "pt:2"))
    second = run_cli("build", str(specs), "-o", str(out), "--target", "k8s")
    assert "wrote 1 of 2 files" in second.stderr
    assert (out / "beta" / "k8s.yaml").stat().st_mtime_ns == before
    assert "image: pt:2" in (out / "alpha" / "k8s.yaml").read_text()


def test_failed_build_leaves_previous_output_as_it_was(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "a.yaml").write_text(MINIMAL.replace("NAME", "alpha"))
    out = tmp_path / "out"
    assert run_cli("build", str(specs), "-o", str(out), "--target", "k8s").returncode == 0
    snapshot = (out / "alpha" / "k8s.yaml").read_bytes()
    (specs / "a.yaml").write_text(MINIMAL.replace("NAME", "alpha").replace("pt:1", "pt:3"))
    (specs / "z.yaml").write_text(MINIMAL.replace("NAME", "zeta").replace("replicas: 1}}", "replicas: x}}"))
    result = run_cli("build", str(specs), "-o", str(out), "--target", "k8s")
    assert result.returncode == 2 and "z.yaml" in result.stderr
    assert (out / "alpha" / "k8s.yaml").read_bytes() == snapshot
    assert not (out / "zeta").exists()


def test_duplicate_job_names_across_files_are_an_error(tmp_path):
    (tmp_path / "a.yaml").write_text(MINIMAL.replace("NAME", "same"))
    (tmp_path / "b.yaml").write_text(MINIMAL.replace("NAME", "same"))
    result = run_cli("build", str(tmp_path), "-o", str(tmp_path / "out"), "--target", "k8s")
    assert result.returncode == 2 and "job 'same' is also defined in" in result.stderr


def test_compile_to_stdout_and_file(tmp_path):
    spec = tmp_path / "job.yaml"
    spec.write_text(MINIMAL.replace("NAME", "one"))
    to_stdout = run_cli("compile", str(spec), "--target", "k8s")
    assert to_stdout.returncode == 0 and "kind: Job" in to_stdout.stdout
    out = tmp_path / "one.yaml"
    assert run_cli("compile", str(spec), "--target", "k8s", "-o", str(out)).returncode == 0
    assert out.read_text() == to_stdout.stdout


def test_several_jobs_in_one_yaml_file(tmp_path):
    spec = tmp_path / "jobs.yaml"
    spec.write_text(MINIMAL.replace("NAME", "one") + "---\n" + MINIMAL.replace("NAME", "two"))
    assert [p.name for p in load_plans(str(spec))] == ["one", "two"]
    result = run_cli("build", str(spec), "-o", str(tmp_path / "out"), "--target", "k8s")
    assert result.returncode == 0
    assert (tmp_path / "out" / "two" / "k8s.yaml").is_file()


def test_json_spec_with_positions(tmp_path):
    spec = tmp_path / "job.json"
    data = {"apiVersion": "trainspec/v1", "kind": "TrainingJob", "metadata": {"name": "js"},
            "spec": {"framework": "pytorch", "image": "pt:1", "roles": {"master": {"replicas": 1}}}}
    spec.write_text(json.dumps(data, indent=2))
    assert load_plans(str(spec))[0].name == "js"
    data["spec"]["roles"]["master"]["replicas"] = "1"
    spec.write_text(json.dumps(data, indent=2))
    with pytest.raises(SpecErrors) as info:
        load_plans(str(spec))
    (error,) = info.value.errors
    assert (error.line, error.path) == (12, "spec.roles.master.replicas")


def test_jsonnet_spec_with_tla_ext_var_and_jpath(tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "defaults.libsonnet").write_text('{ image: "pt:" + std.extVar("tag") }')
    spec_dir = tmp_path / "specs"
    spec_dir.mkdir()
    (spec_dir / "job.jsonnet").write_text("""
local defaults = import 'defaults.libsonnet';
function(workers='1') {
  apiVersion: 'trainspec/v1', kind: 'TrainingJob', metadata: { name: 'jn' },
  spec: { framework: 'pytorch', image: defaults.image,
          roles: { master: { replicas: 1 }, worker: { replicas: std.parseInt(workers) } } },
}
""")
    result = run_cli("compile", str(spec_dir / "job.jsonnet"), "--target", "k8s", "-J", str(lib),
                     "--tla", "workers=3", "--ext-var", "tag=2.5")
    assert result.returncode == 0, result.stderr
    assert "image: pt:2.5" in result.stdout and "name: jn-worker-2" in result.stdout
    missing = run_cli("compile", str(spec_dir / "job.jsonnet"), "--target", "k8s", "--ext-var", "tag=1")
    assert missing.returncode == 2 and "Jsonnet error" in missing.stderr and "Traceback" not in missing.stderr


def test_jsonnet_imports_outside_allowed_folders_are_refused(tmp_path):
    secret = tmp_path / "outside.libsonnet"
    secret.write_text("{}")
    spec_dir = tmp_path / "specs"
    spec_dir.mkdir()
    (spec_dir / "job.jsonnet").write_text("local x = import '../outside.libsonnet'; x")
    result = run_cli("validate", str(spec_dir / "job.jsonnet"))
    assert result.returncode == 2 and "outside the spec's folder" in result.stderr


def test_alias_bomb_is_refused_quickly(tmp_path):
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i-1}"] * 10) + "]")
    spec = tmp_path / "bomb.yaml"
    spec.write_text("\n".join(lines) + "\n")
    result = run_cli("validate", str(spec))
    assert result.returncode == 2 and "expands to more than" in result.stderr
    # at the first value that is too big on its own: a5 (line 6) holds 1,111,111 values, a4 only 11,111
    assert f"{spec}:6:5: <document>: document expands to more than 1000000 values" in result.stderr, result.stderr


def test_a_large_document_without_aliases_is_not_a_bomb(tmp_path):
    spec = tmp_path / "wide.yaml"
    spec.write_text("a: &a [1, 2]\nb: [" + ", ".join(["*a"] * 1000) + "]\n")  # 3,000 values: fine
    result = run_cli("validate", str(spec))
    assert "expands to more than" not in result.stderr, result.stderr


def test_jsonnet_that_never_ends_is_cut_off(tmp_path):
    spec = tmp_path / "loop.jsonnet"
    spec.write_text("local f(n) = if n < 0 then 0 else f(n + 1) + 0; { x: std.foldl(function(a, b) a + b, "
                    "std.range(0, 2000000000), 0) }")
    result = run_cli("validate", str(spec), env={"TRAINSPEC_JSONNET_TIMEOUT": "2"})
    assert result.returncode == 2
    assert "did not finish within 2s" in result.stderr and "Traceback" not in result.stderr


def test_incremental_build_compiles_only_what_changed(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    for name in ("alpha", "beta", "gamma"):
        (specs / f"{name}.yaml").write_text(MINIMAL.replace("NAME", name))
    out = tmp_path / "out"
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    first = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env)
    assert "(3 of 3 specs compiled)" in first.stderr
    (specs / "beta.yaml").write_text(MINIMAL.replace("NAME", "beta").replace("pt:1", "pt:9"))
    second = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env)
    assert "wrote 1 of 3 files" in second.stderr and "(1 of 3 specs compiled, 2 unchanged since the last build)" in second.stderr
    # An output edited by hand is noticed although its spec did not change.
    (out / "gamma" / "k8s.yaml").write_text("edited\n")
    check = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", "--check", env=env)
    assert check.returncode == 1 and "-edited" in check.stdout
    third = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env)
    assert "(1 of 3 specs compiled, 2 unchanged since the last build)" in third.stderr
    assert "kind: Job" in (out / "gamma" / "k8s.yaml").read_text()
    clean = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", "--check", env=env)
    assert clean.returncode == 0


DOUBLING = "local d(s, n) = if n == 0 then s else d(s + s, n - 1); { apiVersion: d('x', 21) }"


def test_jsonnet_output_over_the_limit_is_a_clear_error(tmp_path):
    """Issue 15: a few bytes of Jsonnet must not hand the compiler gigabytes of JSON."""
    spec = tmp_path / "big.jsonnet"
    spec.write_text(DOUBLING)
    result = run_cli("validate", str(spec), env={"TRAINSPEC_JSONNET_MAX_OUTPUT": "1000000"})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "Jsonnet output is 2097176 bytes; expected at most 1000000 bytes" in result.stderr


def test_jsonnet_output_limit_holds_in_the_parent(tmp_path, monkeypatch):
    """The parent stops reading and kills the child even if the child sends everything."""
    from trainspec.compiler import SpecErrors, jsonnet_loader
    from trainspec.compiler.loader import JsonnetOptions

    spec = tmp_path / "big.jsonnet"
    spec.write_text(DOUBLING)
    monkeypatch.setattr(jsonnet_loader, "MAX_OUTPUT_BYTES", 1_000_000)
    monkeypatch.setattr(jsonnet_loader, "_payload", lambda text: b"O" + text.encode())
    with pytest.raises(SpecErrors) as info:
        jsonnet_loader.evaluate(str(spec), JsonnetOptions((), (), ()))
    assert "Jsonnet output is more than 1000000 bytes" in str(info.value)
