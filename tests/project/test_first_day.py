"""First day (issue 19): what a new user meets with the README and the docs only.

A file that looks like a spec but is not valid is an error, never a skip (and `build`
never removes output because of it); chart folders are not specs; the counts are
right; `--check` says which options the build used; every template error at once;
`diff` of an added or removed spec and of folders at a git revision; Ctrl-C quiet;
the README's install advice.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import MINIMAL, ROOT, SPECS, run_cli


@pytest.fixture
def env(tmp_path):
    return {"XDG_CACHE_HOME": str(tmp_path / "cache")}


def _tree(folder: Path) -> dict[str, str]:
    """Every file under folder with its content digest: what "nothing touched" compares."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _repo(tmp_path, env) -> tuple[Path, Path]:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "alpha.yaml").write_text(MINIMAL.replace("NAME", "alpha"))
    (specs / "beta.yaml").write_text(MINIMAL.replace("NAME", "beta"))
    out = tmp_path / "deploy"
    built = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env)
    assert built.returncode == 0, built.stderr
    return specs, out


# --- 6. looks like a spec: an error, never a skip ----------------------------------------------

TYPOS = [
    ("trainspec.dev/v1", "TrainingJob", "apiVersion", "did you mean 'trainspec/v1'?"),
    ("TrainSpec/v1", "TrainingJob", "apiVersion", "did you mean 'trainspec/v1'?"),
    ("trainpsec/v1.1", "TrainingJob", "apiVersion", "did you mean 'trainspec/v1.1'?"),
    ("v1", "TrainingJob", "apiVersion", "did you mean 'trainspec/v1'?"),
    ("trainspec/v1", "TrainJob", "kind", "did you mean 'TrainingJob'?"),
    ("trainspec/v1", "Job", "kind", "a trainspec spec is always kind: TrainingJob"),
]


@pytest.mark.parametrize("api, kind, field, hint", TYPOS, ids=[f"{a}-{k}" for a, k, _, _ in TYPOS])
def test_a_mistyped_api_version_or_kind_fails_validate_build_and_the_hook(tmp_path, env, api, kind, field, hint):
    specs, out = _repo(tmp_path, env)
    beta = specs / "beta.yaml"
    beta.write_text(MINIMAL.replace("NAME", "beta").replace("apiVersion: trainspec/v1", f"apiVersion: {api}")
                    .replace("kind: TrainingJob", f"kind: {kind}"))
    line = 1 if field == "apiVersion" else 2
    column = len(field) + 3
    where = f"{beta}:{line}:{column}: {field}: '{api if field == 'apiVersion' else kind}' is not supported"

    validated = run_cli("validate", str(specs))  # a folder walk
    assert validated.returncode == 2 and where in validated.stderr and hint in validated.stderr, validated.stderr
    hook = run_cli("validate", "--only-specs", str(beta), str(specs / "alpha.yaml"))  # the pre-commit hook
    assert hook.returncode == 2 and where in hook.stderr and hint in hook.stderr, hook.stderr
    diffed = run_cli("diff", str(specs / "alpha.yaml"), str(beta))
    assert diffed.returncode == 2 and where in diffed.stderr, diffed.stdout + diffed.stderr

    before = _tree(out)
    for extra in ((), ("--check",)):
        built = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", *extra, env=env)
        assert built.returncode == 2 and where in built.stderr, built.stderr
        assert "Traceback" not in built.stderr and "removed" not in built.stderr
    assert (out / "beta" / "k8s.yaml").is_file(), "the job folder of the spec that could not be read survives"
    assert _tree(out) == before, "a failed build touches nothing"


def test_a_spec_that_does_not_parse_fails_the_build_and_removes_nothing(tmp_path, env):
    specs, out = _repo(tmp_path, env)
    (specs / "beta.yaml").write_text(MINIMAL.replace("NAME", "beta").replace("roles: {", "roles: {{"))
    before = _tree(out)
    built = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env)
    assert built.returncode == 2 and f"{specs / 'beta.yaml'}:8:1:" in built.stderr, built.stderr
    assert _tree(out) == before and (out / "beta" / "k8s.yaml").is_file()


def test_a_training_job_of_another_tool_is_still_skipped(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "alpha.yaml").write_text(MINIMAL.replace("NAME", "alpha"))
    (specs / "sagemaker.yaml").write_text("apiVersion: sagemaker.aws.amazon.com/v1\nkind: TrainingJob\n"
                                          "metadata: {name: x}\nspec: {region: us-east-1}\n")
    result = run_cli("validate", str(specs))
    assert result.returncode == 0 and "alpha.yaml: ok" in result.stdout, result.stderr


def test_a_training_job_with_no_api_version_is_an_error_when_walked(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "headless.yaml").write_text(MINIMAL.replace("NAME", "alpha").replace("apiVersion: trainspec/v1\n", ""))
    result = run_cli("validate", str(specs))
    assert result.returncode == 2 and "apiVersion" in result.stderr and "headless.yaml:" in result.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its mode")
def test_a_folder_the_walk_cannot_read_fails_the_build_and_removes_nothing(tmp_path, env):
    specs, out = _repo(tmp_path, env)
    hidden = specs / "team"
    hidden.mkdir()
    shutil.move(str(specs / "beta.yaml"), hidden / "beta.yaml")
    hidden.chmod(0)
    try:
        before = _tree(out)
        built = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env)
        assert built.returncode == 2 and "cannot read this folder" in built.stderr, built.stderr
        assert _tree(out) == before
    finally:
        hidden.chmod(0o755)


def test_a_folder_listing_that_fails_fails_the_build_in_process(tmp_path, env, monkeypatch, capsys):
    """The same as root (who reads any folder): the listing itself fails, as it would for a user."""
    from trainspec.cli import main

    specs, out = _repo(tmp_path, env)
    (specs / "team").mkdir()
    shutil.move(str(specs / "beta.yaml"), specs / "team" / "beta.yaml")
    real = os.scandir

    def scandir(path=".", *args):
        if os.path.basename(os.fspath(path)) == "team":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path, *args)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    before = _tree(out)
    assert main(["build", str(specs), "-o", str(out), "--target", "k8s"]) == 2
    assert "team: cannot read this folder (Permission denied)" in capsys.readouterr().err
    assert _tree(out) == before and (out / "beta" / "k8s.yaml").is_file()


# --- 7. chart folders are not specs -------------------------------------------------------------

def test_a_chart_folder_from_compile_is_skipped_by_build_validate_and_the_hook(tmp_path, env):
    shutil.copy(SPECS / "tf-ps.yaml", tmp_path / "tf-ps.yaml")
    compiled = run_cli("compile", "tf-ps.yaml", "--target", "helm", "-o", "charts/x", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    chart = tmp_path / "charts" / "x"
    assert (chart / "Chart.yaml").is_file() and (chart / "templates").is_dir()

    built = run_cli("build", ".", "-o", "deploy", "--target", "k8s", cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    assert "(1 of 1 spec compiled)" in built.stderr and (tmp_path / "deploy" / "tf-ps" / "k8s.yaml").is_file()
    validated = run_cli("validate", ".", cwd=tmp_path)
    assert validated.returncode == 0 and "charts" not in validated.stdout + validated.stderr, validated.stderr
    # the pre-commit hook passes every changed YAML file, chart templates included
    chart_files = [str(p.relative_to(tmp_path)) for p in sorted(chart.rglob("*.yaml"))]
    assert any("templates" in f for f in chart_files)
    hook = run_cli("validate", "--only-specs", *chart_files, "tf-ps.yaml", cwd=tmp_path)
    assert hook.returncode == 0 and hook.stdout.strip() == "tf-ps.yaml: ok (tf-ps)", hook.stdout + hook.stderr
    named = run_cli("build", "charts/x", "-o", "out", cwd=tmp_path, env=env)
    assert named.returncode == 2 and "is a Helm chart folder" in named.stderr and "trainspec run charts/x" in \
        named.stderr, named.stderr


def test_a_chart_file_named_on_the_command_line_is_one_clear_error(tmp_path):
    """`validate charts/x/values.yaml` (or a template, or Chart.yaml) without --only-specs: one line
    naming the chart, not a YAML syntax error in Go template text or a screen of unknown fields."""
    shutil.copy(SPECS / "tf-ps.yaml", tmp_path / "tf-ps.yaml")
    assert run_cli("compile", "tf-ps.yaml", "--target", "helm", "-o", "charts/x", cwd=tmp_path).returncode == 0
    files = ["charts/x/Chart.yaml", "charts/x/values.yaml", "charts/x/templates/jobs.yaml"]
    validated = run_cli("validate", *files, "tf-ps.yaml", cwd=tmp_path)
    assert validated.returncode == 2 and "tf-ps.yaml: ok (tf-ps)" in validated.stdout, validated.stderr
    errors = validated.stderr.splitlines()
    for name in files:
        assert f"{name}:1:1: <document>: a file of the Helm chart charts/x, not a spec; " in validated.stderr
        assert sum(line.startswith(name) for line in errors) == 1, validated.stderr
    assert "YAML syntax error" not in validated.stderr and "unknown field" not in validated.stderr
    inside = run_cli("validate", "jobs.yaml", cwd=tmp_path / "charts" / "x" / "templates")
    assert inside.returncode == 2 and "a file of the Helm chart .., not a spec" in inside.stderr, inside.stderr
    compiled = run_cli("compile", "charts/x/templates/jobs.yaml", "--target", "k8s", cwd=tmp_path)
    assert compiled.returncode == 2 and "`trainspec run charts/x` runs the chart" in compiled.stderr
    ran = run_cli("run", "charts/x/templates/jobs.yaml", cwd=tmp_path)  # refused before Docker is asked
    assert ran.returncode == 2 and "run the chart folder: trainspec run charts/x" in ran.stderr, ran.stderr
    other = tmp_path / "charts" / "x" / "notes.yaml"  # any other file in a chart folder is read as it is
    other.write_text((SPECS / "jax.yaml").read_text())
    assert run_cli("validate", "charts/x/notes.yaml", cwd=tmp_path).returncode == 0


def test_a_chart_compiled_for_a_namespace_names_the_command_that_was_typed(tmp_path):
    """`apply CHART/` of a chart pinned to namespace ml hints `apply ... --namespace ml`, not `run ...`."""
    pytest.importorskip("helm_python", reason="helm-python-sdk missing (pip install '.[helm]')")
    (tmp_path / "job.yaml").write_text(MINIMAL.replace("NAME", "nschart").replace(
        "metadata: {name: nschart}", "metadata: {name: nschart, namespace: ml}").replace(
        "image: pt:1", "image: pt:1\n  env: {RUN: \"{{ job.name | upper }}-{{ index }}\"}"))
    assert run_cli("compile", "job.yaml", "--target", "helm", "-o", "charts/x", cwd=tmp_path).returncode == 0
    env = {"KUBECONFIG": str(tmp_path / "none")}
    applied = run_cli("apply", "charts/x", "--dry-run=client", cwd=tmp_path, env=env)
    assert applied.returncode == 2, applied.stdout + applied.stderr
    assert "hint: the chart was compiled for namespace ml: `trainspec apply charts/x --namespace ml`" in \
        applied.stderr, applied.stderr
    applied = run_cli("apply", "charts/x", "--dry-run=client", "--namespace", "ml", cwd=tmp_path, env=env)
    assert applied.returncode == 0 and "Job.batch ml/nschart-master:" in applied.stdout, applied.stdout + applied.stderr


# --- 7. counts ------------------------------------------------------------------------------------

def test_build_counts_the_specs_it_read_not_other_files(tmp_path, env):
    specs = tmp_path / "specs"
    specs.mkdir()
    for name in ("alpha", "beta", "gamma"):
        (specs / f"{name}.yaml").write_text(MINIMAL.replace("NAME", name))
    (specs / "kustomization.yaml").write_text("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")
    out = tmp_path / "out"
    first = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env)
    assert "wrote 3 of 3 files" in first.stderr and "(3 of 3 specs compiled)" in first.stderr, first.stderr
    again = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", env=env)
    assert "(0 of 3 specs compiled, 3 unchanged since the last build)" in again.stderr, again.stderr


# --- 7. --check with other options than the build's -------------------------------------------

JSONNET = """\
function(workers='1') {
  apiVersion: 'trainspec/v1', kind: 'TrainingJob', metadata: { name: 'sized' },
  spec: { framework: 'pytorch', image: 'pt:1',
          roles: { master: { replicas: 1 }, worker: { replicas: std.parseInt(workers) } } },
}
"""


def test_check_says_which_options_the_build_used(tmp_path, env):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "sized.jsonnet").write_text(JSONNET)
    (specs / "plain.yaml").write_text(MINIMAL.replace("NAME", "plain"))
    out = tmp_path / "deploy"
    built = run_cli("build", str(specs), "-o", str(out), "--tla", "workers=3", "--target", "k8s", env=env)
    assert built.returncode == 0, built.stderr
    marker = (out / ".trainspec.build").read_text()
    assert '"workers": "3"' in marker and '"k8s"' in marker

    same = run_cli("build", str(specs), "-o", str(out), "--tla", "workers=3", "--target", "k8s", "--check", env=env)
    assert same.returncode == 0, same.stdout + same.stderr
    other = run_cli("build", str(specs), "-o", str(out), "--target", "k8s", "--check", env=env)
    assert other.returncode == 1
    assert f"hint: {out} was built with --target k8s --tla workers=3 for plain, sized; this check used " \
           "--target k8s" in other.stderr, other.stderr
    # a check over fewer targets than the build, with the same content, is not stale
    full = tmp_path / "full"
    assert run_cli("build", str(specs / "plain.yaml"), "-o", str(full), env=env).returncode == 0
    narrower = run_cli("build", str(specs / "plain.yaml"), "-o", str(full), "--target", "k8s", "--check", env=env)
    assert narrower.returncode == 0, narrower.stdout + narrower.stderr


def test_a_plain_build_writes_the_marker_as_before():
    """Options are recorded only when given: the committed golden marker has none."""
    assert '"options"' not in (ROOT / "golden" / ".trainspec.build").read_text()


# --- 7. every template error at once ------------------------------------------------------------

def test_every_template_error_of_a_spec_is_reported_at_once(tmp_path):
    spec = tmp_path / "broken.yaml"
    spec.write_text("""\
apiVersion: trainspec/v1
kind: TrainingJob
metadata: {name: broken}
spec:
  framework: tensorflow
  image: tf:2.15
  command: [python, "{{ hosts.chief }}"]
  args: ["{{ hostz }}", "{{ rank }}"]
  env: {N: "{{ job.replica }}", M: "{{ oops( }}"}
  roles:
    ps: {replicas: 1}
    worker: {replicas: 2, args: ["{{ hosts.nope }}"]}
""")
    result = run_cli("validate", str(spec))
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith(str(spec))]
    wanted = [":7:22: spec.command[1]:", ":8:11: spec.args[0]:", ":8:26: spec.args[1]:", ":9:13: spec.env.N:",
              ":9:37: spec.env.M: template syntax error", ":12:35: spec.roles.worker.args[0]:"]
    for where in wanted:
        assert any(where in line for line in errors), (where, result.stderr)
    assert len(errors) == len(wanted), result.stderr


# --- 7. diff of an added or removed spec, and of folders at a revision -------------------------

def _git(tmp_path: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", "-C", str(tmp_path), *args],
                   check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path, env):
    if not shutil.which("git"):
        pytest.skip("no git")
    (tmp_path / "specs").mkdir()
    shutil.copy(SPECS / "tf-ps.yaml", tmp_path / "specs" / "tf-ps.yaml")
    assert run_cli("build", "specs", "-o", "deploy", "--target", "k8s", "--target", "compose",
                   cwd=tmp_path, env=env).returncode == 0
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "first")
    return tmp_path


def test_diff_of_a_spec_added_since_the_revision(repo):
    shutil.copy(SPECS / "jax.yaml", repo / "specs" / "new.yaml")
    result = run_cli("diff", "HEAD:specs/new.yaml", "specs/new.yaml", cwd=repo)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("jax-dist:\n  new job jax-dist\n"), result.stdout
    assert "worker replicas 0 → 2" in result.stdout and "new Job jax-dist-worker" in result.stdout
    assert "HEAD:specs/new.yaml does not exist at HEAD: everything in specs/new.yaml is new" in result.stderr
    assert "trainspec-diff-" not in result.stdout + result.stderr


def test_diff_of_a_spec_removed_since_the_revision(repo):
    (repo / "specs" / "tf-ps.yaml").unlink()
    result = run_cli("diff", "HEAD:specs/tf-ps.yaml", "specs/tf-ps.yaml", cwd=repo)
    assert result.returncode == 1 and "removed job tf-ps" in result.stdout and "ps replicas 2 → 0" in result.stdout
    assert "specs/tf-ps.yaml does not exist in the working tree" in result.stderr


def test_diff_of_a_job_folder_at_a_revision_names_what_the_user_wrote(repo, env):
    spec = repo / "specs" / "tf-ps.yaml"
    spec.write_text(spec.read_text().replace("replicas: 3", "replicas: 4"))
    assert run_cli("build", "specs", "-o", "deploy", "--target", "k8s", "--target", "compose",
                   cwd=repo, env=env).returncode == 0
    result = run_cli("diff", "HEAD:deploy/tf-ps/", "deploy/tf-ps/", cwd=repo)
    assert result.returncode == 1, result.stderr
    assert "tf-ps (k8s.yaml):\n  worker replicas 3 → 4\n" in result.stdout, result.stdout
    assert "tf-ps (compose.yaml):" in result.stdout
    assert "trainspec-diff-" not in result.stdout + result.stderr and "/tmp" not in result.stdout
    whole = run_cli("diff", "HEAD:deploy", "deploy", cwd=repo)
    assert whole.returncode == 1 and "tf-ps (tf-ps/k8s.yaml):" in whole.stdout, whole.stdout
    same = run_cli("diff", "HEAD:deploy/tf-ps", "HEAD:deploy/tf-ps", cwd=repo)
    assert same.returncode == 0, same.stdout + same.stderr


def test_diff_errors_at_a_revision_name_it_not_a_temporary_copy(repo):
    spec = repo / "specs" / "tf-ps.yaml"
    spec.write_text(spec.read_text().replace("replicas: 3", "replicas: 0"))
    _git(repo, "commit", "-qam", "broken")
    result = run_cli("diff", "HEAD:specs/tf-ps.yaml", str(SPECS / "tf-ps.yaml"), cwd=repo)
    assert result.returncode == 2 and result.stderr.startswith("HEAD:specs/tf-ps.yaml:"), result.stderr
    assert "trainspec-diff-" not in result.stderr
    bad = run_cli("diff", "NOPE:specs/tf-ps.yaml", "specs/tf-ps.yaml", cwd=repo)
    assert bad.returncode == 2 and "'NOPE' is not a git revision" in bad.stderr


def test_diff_at_a_revision_typed_in_a_subfolder_says_where_git_looks(repo):
    """git reads REV:PATH from the repository's top: in specs/, `HEAD:tf-ps.yaml` is not this folder's
    file. Taken for a spec added since, the diff would call every object of it new."""
    spec = repo / "specs" / "tf-ps.yaml"
    spec.write_text(spec.read_text().replace("replicas: 3", "replicas: 4"))
    here = repo / "specs"
    result = run_cli("diff", "HEAD:tf-ps.yaml", "tf-ps.yaml", cwd=here)
    assert result.returncode == 2 and "new job" not in result.stdout, result.stdout + result.stderr
    assert "hint: for the one in this folder write HEAD:./tf-ps.yaml (or HEAD:specs/tf-ps.yaml)" in result.stderr
    for written in ("HEAD:./tf-ps.yaml", "HEAD:specs/tf-ps.yaml"):
        result = run_cli("diff", written, "tf-ps.yaml", cwd=here)
        assert result.returncode == 1 and "worker replicas 3 → 4" in result.stdout, result.stdout + result.stderr
    shutil.copy(SPECS / "jax.yaml", here / "new.yaml")  # added since: not in this folder at HEAD either
    result = run_cli("diff", "HEAD:./new.yaml", "new.yaml", cwd=here)
    assert result.returncode == 1 and "new job jax-dist" in result.stdout, result.stdout + result.stderr


# --- 7. Ctrl-C is quiet at any moment -----------------------------------------------------------

INTERRUPT_AT_IMPORT = """
import builtins, sys
real = builtins.__import__
target = sys.argv[1]
def interrupting(name, *args, **kwargs):
    if name == target or name.endswith("." + target) or (name == "" and target in (args[2] or ())):
        raise KeyboardInterrupt
    return real(name, *args, **kwargs)
builtins.__import__ = interrupting
sys.argv = ["trainspec", *sys.argv[2:]]
from trainspec.console import main
sys.exit(main())
"""


@pytest.mark.parametrize("module, command", [
    ("cli", ("validate", "x.yaml")),  # the CLI itself, before anything of it runs
    ("argparse", ("--version",)),
    ("commands", ("ps",)),  # the emulator's commands, the slow import of `run`/`ps`
    ("loader", ("validate", str(SPECS / "tf-ps.yaml"))),  # the compiler, mid-command
])
def test_ctrl_c_during_imports_is_quiet(module, command):
    result = subprocess.run([sys.executable, "-c", INTERRUPT_AT_IMPORT, module, *command], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 130 and result.stderr == "trainspec: interrupted\n", result.stderr


@pytest.mark.parametrize("delay", [0.05, 0.1, 0.2, 0.3, 0.5])
def test_ctrl_c_in_the_first_moments_prints_no_traceback(tmp_path, delay):
    """A real SIGINT to the installed command while it starts (the emulator's imports of `ps`).

    Python's own start-up before trainspec's first line (a few tens of ms on an idle
    machine) is outside any program's reach; a traceback there names no trainspec file.
    """
    program = shutil.which("trainspec", path=os.path.dirname(sys.executable))
    if program is None:
        pytest.skip("the trainspec command is not installed beside this Python")
    process = subprocess.Popen([program, "ps", "--state-dir", str(tmp_path)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    if "Traceback" in err:  # only in the interpreter's start-up: no frame of trainspec's own files
        assert not re.search(r'File "[^"]*/(trainspec|compiler|emulator|targets)/[^"/]+\.py"', err), err
        return
    assert process.returncode in (130, 0, 1, 2, -signal.SIGINT), (process.returncode, err)
    if process.returncode == 130:
        assert err.endswith("trainspec: interrupted\n"), err


# --- 7. the README's install advice --------------------------------------------------------------

def test_readme_says_to_use_a_venv_and_what_ruamel_yaml_is_for():
    readme = (ROOT / "README.md").read_text()
    assert "python3 -m venv" in readme and "externally-managed-environment" in readme
    assert "ruamel.yaml is not needed" not in readme
    assert "ruamel.yaml\n(`trainspec import` only" in readme or "ruamel.yaml (`trainspec import`" in readme


def test_the_example_specs_warn_only_where_the_readme_says(tmp_path, env):
    """Each warning of the shipped examples is one the README names (and asks to act on)."""
    built = run_cli("build", str(SPECS), "-o", str(tmp_path / "out"), env=env)
    assert built.returncode == 0, built.stderr
    warnings = [line for line in built.stderr.splitlines() if line.startswith("trainspec: warning:")]
    named = sorted(line.split("specs/", 1)[1].split(":", 1)[0] for line in warnings)
    assert named == ["generic-coordinator.yaml", "mpi-horovod.yaml", "mpi-horovod.yaml", "mxnet-ps.yaml",
                     "pytorch-cluster.yaml", "tf-args-style.yaml", "tf-ps.yaml"], built.stderr
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "Building the example specs prints seven warnings" in readme
    for name in sorted(set(named)):  # each spec that warns is one the README names
        assert f"`{name.removesuffix('.yaml')}`" in readme, name
