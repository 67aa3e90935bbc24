"""First day (issue 19), read literally: what README.md and docs/*.md promise about the commands
a new user types first holds — shell completion of the paths they type, `run --help` naming
every input `run` takes.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from helpers import ROOT, run_cli

PROBE = """source {script}
complete_words() {{
  COMP_WORDS=("$@"); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); COMP_LINE="$*"; COMP_POINT=${{#COMP_LINE}}
  COMPREPLY=(); _shtab_trainspec; echo "${{COMPREPLY[*]}}"
}}
"""


@pytest.fixture(scope="module")
def complete(tmp_path_factory):
    """What bash completes for a command line (the last word being completed), in the checkout."""
    if not shutil.which("bash"):
        pytest.skip("no bash")
    script = tmp_path_factory.mktemp("completion") / "trainspec.bash"
    made = run_cli("completion", "bash")
    assert made.returncode == 0, made.stderr
    script.write_text(made.stdout)

    def answer(*words: str) -> list[str]:
        program = PROBE.format(script=script) + "complete_words trainspec " + " ".join(
            f"'{w}'" for w in words) + "\n"
        done = subprocess.run(["bash", "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()
    return answer


# docs/workflow.md: "It completes commands, options, target names and spec paths."
@pytest.mark.parametrize("words, expected", [
    (("validate", "specs/tf-p"), ["specs/tf-ps.yaml"]),
    (("run", "specs/tf-p"), ["specs/tf-ps.yaml"]),  # the README's `trainspec run specs/...`
    (("run", "golden/tf-ps/k8"), ["golden/tf-ps/k8s.yaml"]),
    (("run", "x", "-f", "specs/tf-p"), ["specs/tf-ps.yaml"]),  # a values file
    (("import", "tests/import_manifests/tf-dist"), ["tests/import_manifests/tf-dist-mnist.yaml"]),
    (("migrate", "tests/import_manifests/tf-dist"), ["tests/import_manifests/tf-dist-mnist.yaml"]),
    (("import", "x", "--runtime", "specs/tf-p"), ["specs/tf-ps.yaml"]),
])
def test_completion_completes_the_paths_of_every_command(complete, words, expected):
    assert complete(*words) == expected


def test_completion_offers_the_targets_migrate_takes(complete):
    assert complete("compile", "--target", "") == ["k8s", "kubeflow", "volcano", "helm", "compose", "jobset",
                                                   "trainjob"]
    # migrate writes one file: a chart folder is refused, so it is not offered
    assert complete("migrate", "x", "--to", "") == ["k8s", "kubeflow", "volcano", "compose", "jobset", "trainjob"]


def test_run_help_names_every_input_run_takes():
    """README: `run` takes a spec, any compiled file and a chart folder; its help must not say less."""
    top = run_cli("--help").stdout
    line = next(x for x in top.splitlines() if x.strip().startswith("run "))
    assert "chart folder" in line and "k8s.yaml/compose.yaml" not in line, line
    own = " ".join(run_cli("run", "--help").stdout.split())
    for kind in ("kubeflow", "volcano", "jobset", "trainjob", "compose", "Helm chart folder"):
        assert kind in own, kind


def test_the_check_example_in_workflow_md_is_what_check_prints(tmp_path):
    """docs/workflow.md shows `build --check` after workers 3 → 4 in specs/tf-ps.yaml: its summary
    lines are the real ones, word for word."""
    doc = (ROOT / "docs" / "workflow.md").read_text()
    block = doc.split("$ trainspec build specs -o deploy --check", 1)[1].split("files (lines added", 1)[0]
    shown = block.splitlines()[1:]
    (tmp_path / "specs").mkdir()
    spec = tmp_path / "specs" / "tf-ps.yaml"
    shutil.copy(ROOT / "specs" / "tf-ps.yaml", spec)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert run_cli("build", "specs", "-o", "deploy", cwd=tmp_path, env=env).returncode == 0
    spec.write_text(spec.read_text().replace("replicas: 3", "replicas: 4"))
    check = run_cli("build", "specs", "-o", "deploy", "--check", cwd=tmp_path, env=env)
    assert check.returncode == 1, check.stderr
    assert check.stdout.splitlines()[:len(shown)] == shown, check.stdout[:2000]
    listed = [line for line in doc.split("files (lines added/removed, committed → compiled):\n", 1)[1]
              .split("--- deploy", 1)[0].splitlines() if line.strip() != "..."]
    for line in listed:
        assert line in check.stdout.splitlines(), line
