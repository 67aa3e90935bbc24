"""The repository workflow as a user runs it: build hygiene, orphans, OUT safety, streams and paths."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers import MINIMAL, SPECS, run_cli


@pytest.fixture
def env(tmp_path):
    return {"XDG_CACHE_HOME": str(tmp_path / "cache")}


def _specs(tmp_path, **jobs):
    folder = tmp_path / "specs"
    folder.mkdir(exist_ok=True)
    for file, name in jobs.items():
        (folder / f"{file}.yaml").write_text(MINIMAL.replace("NAME", name))
    return folder


# --- build hygiene -------------------------------------------------------------------------

def test_building_into_a_folder_inside_the_specs_twice_never_reads_the_output(tmp_path, env):
    _specs(tmp_path, a="alpha")
    for _ in range(2):
        result = run_cli("build", ".", "-o", "deploy", "--target", "k8s", cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path / "deploy")) == [".trainspec.build", "alpha"]
    # Another build's output folder (it holds a marker) is skipped by walks too.
    result = run_cli("build", ".", "-o", "other", "--target", "k8s", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path / "other")) == [".trainspec.build", "alpha"]


def test_out_that_is_or_holds_the_spec_folder_is_refused(tmp_path, env):
    specs = _specs(tmp_path, a="alpha")
    for out in (specs, tmp_path):
        result = run_cli("build", str(specs), "-o", str(out), env=env)
        assert result.returncode == 2 and "would read its own output" in result.stderr, result.stderr
    assert sorted(os.listdir(specs)) == ["a.yaml"]


def test_other_tools_yaml_beside_specs_is_skipped_but_validated_when_named(tmp_path, env):
    specs = _specs(tmp_path, a="alpha")
    (specs / "kustomization.yaml").write_text("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")
    (specs / "values.yaml").write_text("replicas: 3\n")
    result = run_cli("build", str(specs), "-o", str(tmp_path / "out"), "--target", "k8s", env=env)
    assert result.returncode == 0, result.stderr
    assert "values.yaml:1: skipped a document with no apiVersion" in result.stderr
    assert "kustomization" not in result.stderr
    named = run_cli("validate", str(specs / "kustomization.yaml"))
    assert named.returncode == 2 and "apiVersion" in named.stderr
    folder = run_cli("validate", str(specs))
    assert folder.returncode == 0 and "a.yaml: ok (alpha)" in folder.stdout


def test_exclude_skips_matching_files_and_folders(tmp_path, env):
    specs = _specs(tmp_path, a="alpha")
    (specs / "broken.yaml").write_text("apiVersion: trainspec/v1\nkind: TrainingJob\n")
    (specs / "drafts").mkdir()
    (specs / "drafts" / "d.yaml").write_text("apiVersion: trainspec/v1\n")
    out = str(tmp_path / "out")
    assert run_cli("build", str(specs), "-o", out, env=env).returncode == 2
    result = run_cli("build", str(specs), "-o", out, "--target", "k8s", "--exclude", "broken.yaml",
                     "--exclude", "drafts", env=env)
    assert result.returncode == 0, result.stderr


# --- orphans -------------------------------------------------------------------------------

def test_a_deleted_or_renamed_spec_leaves_an_orphan_that_check_reports_and_build_removes(tmp_path, env):
    specs = _specs(tmp_path, a="alpha", b="beta")
    out = tmp_path / "out"
    (out / "handmade").mkdir(parents=True)
    (out / "handmade" / "notes.yaml").write_text("kept: true\n")
    assert run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env).returncode == 0
    (specs / "b.yaml").unlink()
    (specs / "a.yaml").write_text(MINIMAL.replace("NAME", "alpha2"))
    check = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", "--check", env=env)
    assert check.returncode == 1
    assert f"{out / 'beta'}/: orphaned" in check.stdout and f"{out / 'alpha'}/: orphaned" in check.stdout
    build = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env)
    assert build.returncode == 0, build.stderr
    assert sorted(os.listdir(out)) == [".trainspec.build", "alpha2", "handmade"]
    assert (out / "handmade" / "notes.yaml").read_text() == "kept: true\n"
    assert run_cli("build", str(specs), "-o", str(out), "--target", "k8s", "--check", env=env).returncode == 0


def test_a_partial_build_keeps_jobs_of_specs_it_did_not_read(tmp_path, env):
    specs = _specs(tmp_path, a="alpha", b="beta")
    out = tmp_path / "out"
    assert run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env).returncode == 0
    result = run_cli("build", str(specs / "a.yaml"), "-o", str(out), "--target", "k8s", env=env)
    assert result.returncode == 0 and (out / "beta" / "k8s.yaml").is_file()


# --- OUT safety (issue 15) -----------------------------------------------------------------

def test_check_never_follows_a_symlink_inside_out(tmp_path, env):
    specs = _specs(tmp_path, a="alpha")
    out = tmp_path / "out"
    assert run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env).returncode == 0
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2\n")
    (out / "alpha" / "k8s.yaml").unlink()
    (out / "alpha" / "k8s.yaml").symlink_to(secret)
    check = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", "--check", env=env)
    assert check.returncode == 1
    assert "hunter2" not in check.stdout + check.stderr
    assert "symbolic link" in check.stdout
    environ = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", "--check",
                      env={**env, "CANARY_SECRET": "canary-value-123"})
    (out / "alpha" / "k8s.yaml").unlink()
    (out / "alpha" / "k8s.yaml").symlink_to("/proc/self/environ")
    environ = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", "--check",
                      env={**env, "CANARY_SECRET": "canary-value-123"})
    assert environ.returncode == 1 and "canary-value-123" not in environ.stdout + environ.stderr
    # build replaces the link with the compiled file, leaving its target alone
    assert run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env).returncode == 0
    assert not (out / "alpha" / "k8s.yaml").is_symlink() and secret.read_text() == "TOKEN=hunter2\n"


def test_build_never_writes_through_a_symlinked_job_folder(tmp_path, env):
    specs = _specs(tmp_path, a="alpha")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "alpha").symlink_to(elsewhere)
    result = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env)
    assert result.returncode == 2 and "symbolic link" in result.stderr
    assert os.listdir(elsewhere) == []
    check = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", "--check", env=env)
    assert check.returncode == 1 and os.listdir(elsewhere) == []


def test_cache_trusts_content_not_mtime(tmp_path, env):
    specs = _specs(tmp_path, a="alpha")
    out = tmp_path / "out"
    assert run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env).returncode == 0
    assert run_cli("build", str(specs), "-o", str(out), "--target", "k8s", "--check", env=env).returncode == 0
    target = out / "alpha" / "k8s.yaml"
    st = target.stat()
    text = target.read_text()
    target.write_text(text.replace("image: pt:1", "image: pt:X"))  # same size
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    check = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", "--check", env=env)
    assert check.returncode == 1 and "-        image: pt:X" in check.stdout


LOCK_PROBE = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.readline()
"""


def test_a_second_build_into_the_same_out_waits_for_the_first(tmp_path, env):
    specs = _specs(tmp_path, a="alpha")
    out = tmp_path / "out"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", LOCK_PROBE, str(out)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        build = subprocess.Popen([sys.executable, "-m", "trainspec", "build", str(specs), "-o", str(out),
                                  "--target", "k8s"], env={**os.environ, **env},
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = build.stderr.readline()
        assert "waiting for another build" in line
        assert not (out / "alpha").exists()  # it has not written while the other holds OUT
    finally:
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait()
    assert build.wait(timeout=120) == 0
    assert (out / "alpha" / "k8s.yaml").is_file()


def test_two_concurrent_builds_both_leave_complete_folders(tmp_path, env):
    specs = tmp_path / "specs"
    specs.mkdir()
    for i in range(6):
        (specs / f"j{i}.yaml").write_text(MINIMAL.replace("NAME", f"job{i}"))
    out = tmp_path / "out"
    procs = [subprocess.Popen([sys.executable, "-m", "trainspec", "build", str(specs), "-o", str(out),
                               "--no-cache"], env={**os.environ, **env},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    check = run_cli("build", str(specs), "-o", str(out), "--check", env=env)
    assert check.returncode == 0, check.stdout[-2000:]
    assert not list(out.glob(".trainspec-*"))


# --- streams, paths, modes -----------------------------------------------------------------

def test_stdin_and_stdout_dashes(tmp_path):
    spec = (SPECS / "tf-ps.yaml").read_text()
    from_stdin = run_cli("compile", "-", "--target", "k8s", "-o", "-", input=spec)
    from_file = run_cli("compile", str(SPECS / "tf-ps.yaml"), "--target", "k8s")
    assert from_stdin.returncode == 0 and from_stdin.stdout.startswith("# Generated by trainspec from <stdin>.")
    assert from_stdin.stdout.split("\n", 1)[1] == from_file.stdout.split("\n", 1)[1]
    bad = run_cli("validate", "-", input=spec.replace("framework: tensorflow", "framework: tensorflo"))
    assert bad.returncode == 2 and bad.stderr.startswith("<stdin>:")
    assert run_cli("validate", "-", input=spec).stdout == "-: ok (tf-ps)\n"


def test_compile_into_a_folder_writes_target_yaml(tmp_path):
    existing = tmp_path / "existing"
    existing.mkdir()
    assert run_cli("compile", str(SPECS / "tf-ps.yaml"), "-t", "kubeflow", "-o", str(existing)).returncode == 0
    assert (existing / "kubeflow.yaml").is_file()
    result = run_cli("compile", str(SPECS / "tf-ps.yaml"), "-t", "k8s", "-o", str(tmp_path / "new") + "/")
    assert result.returncode == 0 and (tmp_path / "new" / "k8s.yaml").is_file()


@pytest.mark.parametrize("case", ["file-as-folder", "build-into-file", "unwritable", "helm-into-file"])
def test_bad_output_paths_are_clear_errors(tmp_path, case):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    spec = str(SPECS / "tf-ps.yaml")
    if case == "file-as-folder":
        result = run_cli("compile", spec, "-t", "k8s", "-o", str(blocker / "k8s.yaml"))
    elif case == "build-into-file":
        result = run_cli("build", spec, "-o", str(blocker), "-t", "k8s")
    elif case == "helm-into-file":
        result = run_cli("compile", spec, "-t", "helm", "-o", str(blocker))
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes anywhere")
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        result = run_cli("compile", spec, "-t", "k8s", "-o", str(locked / "k8s.yaml"))
    assert result.returncode == 2, result.stderr
    assert "internal error" not in result.stderr and "cannot write" in result.stderr or "is a file" in result.stderr


def test_files_and_folders_follow_the_umask(tmp_path, env):
    specs = _specs(tmp_path, a="alpha")
    out = tmp_path / "out"
    script = ("import os, sys; os.umask(0o022); from trainspec.cli import main; "
              "sys.exit(main(sys.argv[1:]))")
    for args in (["build", str(specs), "-o", str(out), "--target", "k8s"],
                 ["compile", str(specs / "a.yaml"), "-t", "k8s", "-o", str(tmp_path / "one.yaml")]):
        done = subprocess.run([sys.executable, "-c", script, *args], check=False, env={**os.environ, **env})
        assert done.returncode == 0
    assert (out / "alpha" / "k8s.yaml").stat().st_mode & 0o777 == 0o644
    assert (out / "alpha").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "one.yaml").stat().st_mode & 0o777 == 0o644


# --- machine-readable validate -------------------------------------------------------------

def test_validate_format_json(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(MINIMAL.replace("NAME", "x").replace("framework: pytorch", "framework: torch"))
    result = run_cli("validate", "--format", "json", str(bad), str(SPECS / "tf-ps.yaml"))
    assert result.returncode == 2
    errors = json.loads(result.stdout)
    assert errors and errors[0]["file"] == str(bad) and errors[0]["path"] == "spec.framework"
    assert set(errors[0]) == {"file", "line", "column", "path", "message", "expected", "hint", "severity"}
    assert errors[0]["line"] == 5
    ok = run_cli("validate", "--format", "json", str(SPECS / "pytorch-ddp.yaml"))
    assert ok.returncode == 0 and json.loads(ok.stdout) == []
    warned = run_cli("validate", "--format", "json", str(SPECS / "tf-ps.yaml"))  # the plain-k8s caveat
    assert warned.returncode == 0 and [w["severity"] for w in json.loads(warned.stdout)] == ["warning"]


# --- semantic diff -------------------------------------------------------------------------

def _scaled(tmp_path, name: str, old: str, new: str):
    path = tmp_path / name
    path.write_text((SPECS / "tf-ps.yaml").read_text().replace(old, new))
    return path


def test_diff_of_two_specs_says_what_changed_per_role_and_replica(tmp_path):
    four = _scaled(tmp_path, "four.yaml", "replicas: 3", "replicas: 4")
    five = _scaled(tmp_path, "five.yaml", "replicas: 3", "replicas: 5")
    result = run_cli("diff", str(four), str(five))
    assert result.returncode == 1, result.stderr
    lines = [line.strip() for line in result.stdout.splitlines()]
    assert "worker replicas 4 → 5" in lines
    # spec v1.3: one Indexed Job per role, so no new object; the worker Job's completions say it
    assert "spec.completions 4 → 5 in Job tf-ps-worker" in lines and not any(x.startswith("new ") for x in lines)
    # the ps, worker and evaluator roles' templates all see the new worker in TF_CONFIG
    assert "TF_CONFIG cluster.worker gains tf-ps-worker-4.tf-ps:2222 in 3 roles" in lines
    as_json = json.loads(run_cli("diff", str(four), str(five), "--format", "json").stdout)
    gains = [c for c in as_json if c["subject"] == "TF_CONFIG cluster.worker"]
    assert gains and gains[0]["change"] == "gains" and gains[0]["new"] == ["tf-ps-worker-4.tf-ps:2222"]
    assert len(gains[0]["where"]) == 3
    same = run_cli("diff", str(four), str(four))
    assert same.returncode == 0 and same.stdout == ""


def test_diff_of_compiled_folders_and_check_prints_the_summary_first(tmp_path, env):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "tf-ps.yaml").write_text((SPECS / "tf-ps.yaml").read_text())
    old = tmp_path / "old"
    assert run_cli("build", str(specs), "-o", str(old), "-t", "k8s", "-t", "kubeflow", env=env).returncode == 0
    (specs / "tf-ps.yaml").write_text((SPECS / "tf-ps.yaml").read_text().replace("python:3.12-slim", "py:new"))
    new = tmp_path / "new"
    assert run_cli("build", str(specs), "-o", str(new), "-t", "k8s", "-t", "kubeflow", env=env).returncode == 0
    result = run_cli("diff", str(old), str(new))
    assert result.returncode == 1
    assert "containers[tensorflow].image python:3.12-slim → py:new in 3 roles" in result.stdout
    check = run_cli("build", str(specs), "-o", str(old), "-t", "k8s", "-t", "kubeflow", "--check", env=env)
    assert check.returncode == 1
    out = check.stdout
    assert out.index("what changed:") < out.index("files (lines added/removed") < out.index("--- ")
    assert f"{old / 'tf-ps' / 'k8s.yaml'}: +3 -3 lines" in out  # one pod template per role
    assert f"--- {old / 'tf-ps' / 'k8s.yaml'}\t(committed)" in out
    assert f"+++ {old / 'tf-ps' / 'k8s.yaml'}\t(compiled)" in out


def test_diff_bad_input_is_exit_2(tmp_path):
    result = run_cli("diff", str(tmp_path / "nope.yaml"), str(SPECS / "tf-ps.yaml"))
    assert result.returncode == 2 and "no such file" in result.stderr


# --- graph and completion ------------------------------------------------------------------

def test_graph_mermaid_and_dot_show_roles_hosts_gpus_and_wiring():
    mermaid = run_cli("graph", str(SPECS / "mxnet-ps.yaml"))
    assert mermaid.returncode == 0 and mermaid.stdout.startswith("flowchart LR\n")
    assert "worker × 2 · 1 GPU each<br/>mxnet-ps-worker-0:9091" in mermaid.stdout
    assert '-->|"register (DMLC_PS_ROOT_URI)"| r_mxnet_ps_scheduler' in mermaid.stdout
    dot = run_cli("graph", str(SPECS / "mpi-horovod.yaml"), "--format", "dot")
    assert dot.returncode == 0 and "r_mpi_horovod_launcher -> r_mpi_horovod_worker" in dot.stdout
    torch = run_cli("graph", str(SPECS / "pytorch-ddp.yaml"), "--format", "dot")
    assert "r_pytorch_ddp_worker -> r_pytorch_ddp_master" in torch.stdout


def test_graph_svg_renders_with_graphviz_or_says_what_is_missing():
    import shutil

    result = run_cli("graph", str(SPECS / "tf-ps.yaml"), "--format", "svg")
    if shutil.which("dot"):
        assert result.returncode == 0 and "<svg" in result.stdout
    else:
        assert result.returncode == 2 and "needs Graphviz" in result.stderr


def test_bash_completion_completes_commands_and_targets(tmp_path):
    import shutil

    if not shutil.which("bash"):
        pytest.skip("no bash")
    script = tmp_path / "trainspec.bash"
    result = run_cli("completion", "bash")
    assert result.returncode == 0
    script.write_text(result.stdout)
    probe = (f"source {script}; COMP_WORDS=(trainspec bu); COMP_CWORD=1; _shtab_trainspec; echo \"${{COMPREPLY[@]}}\";"
             " COMP_WORDS=(trainspec compile --target k); COMP_CWORD=3; _shtab_trainspec; echo \"${COMPREPLY[@]}\"")
    out = subprocess.run(["bash", "-c", probe], check=False, capture_output=True, text=True).stdout.splitlines()
    assert out == ["build", "k8s kubeflow"]
    for shell in ("zsh", "fish"):
        text = run_cli("completion", shell).stdout
        assert "trainspec" in text and "build" in text


def test_validate_format_json_lists_skipped_documents_as_warnings(tmp_path):
    specs = _specs(tmp_path, a="alpha")
    (specs / "values.yaml").write_text("replicas: 3\n")
    result = run_cli("validate", "--format", "json", str(specs))
    assert result.returncode == 0 and result.stderr == ""
    (warning,) = json.loads(result.stdout)
    assert warning["severity"] == "warning" and warning["file"] == str(specs / "values.yaml")
    assert warning["line"] == 1 and "no apiVersion" in warning["message"]


def test_diff_against_a_git_revision(tmp_path):
    import shutil

    if not shutil.which("git"):
        pytest.skip("no git")
    git = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    spec = _scaled(tmp_path, "job.yaml", "replicas: 3", "replicas: 4")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run([*git, "-C", str(tmp_path), "add", "job.yaml"], check=True)
    subprocess.run([*git, "-C", str(tmp_path), "commit", "-qm", "four"], check=True)
    spec.write_text(spec.read_text().replace("replicas: 4", "replicas: 5"))
    result = run_cli("diff", "HEAD:job.yaml", "job.yaml", cwd=tmp_path)
    assert result.returncode == 1 and "worker replicas 4 → 5" in result.stdout
    # a path the revision does not have is a spec added since (issue 19): said on stderr
    added = run_cli("diff", "HEAD:gone.yaml", "job.yaml", cwd=tmp_path)
    assert added.returncode == 1 and "new job tf-ps" in added.stdout
    assert "HEAD:gone.yaml does not exist at HEAD" in added.stderr
    missing = run_cli("diff", "NOPE:job.yaml", "job.yaml", cwd=tmp_path)
    assert missing.returncode == 2 and "'NOPE' is not a git revision" in missing.stderr


def test_a_tampered_marker_cannot_make_build_remove_anything_outside_out(tmp_path, env):
    specs = _specs(tmp_path, a="alpha")
    out = tmp_path / "out"
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep\n")
    assert run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env).returncode == 0
    marker = json.loads((out / ".trainspec.build").read_text())
    marker["jobs"].update({"../victim": "../gone.yaml", ".": "../gone.yaml", "/tmp": "../gone.yaml"})
    (out / ".trainspec.build").write_text(json.dumps(marker))
    result = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env)
    assert result.returncode == 0, result.stderr
    assert (victim / "keep.txt").read_text() == "keep\n" and (out / "alpha" / "k8s.yaml").is_file()
    assert json.loads((out / ".trainspec.build").read_text())["jobs"] == {"alpha": "../specs/a.yaml"}


def test_a_failed_first_build_leaves_no_out_folder(tmp_path, env):
    spec = tmp_path / "bad.yaml"
    spec.write_text(MINIMAL.replace("NAME", "Bad_Name"))
    out = tmp_path / "a" / "b" / "out"
    result = run_cli("build", str(spec), "-o", str(out), env=env)
    assert result.returncode == 2 and not (tmp_path / "a").exists()


def test_compile_into_a_pipe_or_device_writes_it_in_place(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    result = run_cli("compile", str(SPECS / "tf-ps.yaml"), "-t", "k8s", "-o", str(fifo))
    text = reader.communicate(timeout=60)[0]
    assert result.returncode == 0 and text.startswith("# Generated by trainspec") and fifo.is_fifo()
    null = run_cli("compile", str(SPECS / "tf-ps.yaml"), "-t", "k8s", "-o", os.devnull)
    assert null.returncode == 0 and os.path.exists(os.devnull) and not os.path.isfile(os.devnull)
