"""Shipped docs link only inside the repository; the pre-commit hooks work as a user wires them."""

from __future__ import annotations

import re
import shlex

import yaml

from helpers import ROOT, SPECS, run_cli

LINK = re.compile(r"\]\(([^)\s]+)\)")


def _docs():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_docs_link_only_to_files_in_the_repository():
    broken = []
    for doc in _docs():
        text = doc.read_text()
        prose = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", text, flags=re.DOTALL))
        # Naming the reference folder the tests read is fine; citing a file in it as a source is not.
        cited = re.findall(r"shared/reference/[\w./-]+\.(?:md|json|yaml)", text)
        assert not cited, f"{doc.name} cites files outside the repository: {cited}"
        for target in LINK.findall(prose):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (doc.parent / target.split("#", 1)[0]).resolve()
            if not path.exists() or ROOT.resolve() not in path.parents and path != ROOT.resolve():
                broken.append(f"{doc.name}: {target}")
    assert not broken, broken


def test_emulator_doc_examples_name_files_that_exist():
    text = (ROOT / "docs" / "emulator.md").read_text()
    for path in re.findall(r"trainspec run ((?:golden|specs|tests)/\S+\.ya?ml)", text):
        assert (ROOT / path).is_file(), path


def _hook_command(hook: dict, args: list[str]) -> list[str]:
    words = shlex.split(hook["entry"]) + list(hook.get("args", [])) + args
    assert words[0] == "trainspec"
    return words[1:]


def test_pre_commit_hooks_validate_and_check(tmp_path):
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"trainspec-validate", "trainspec-build-check"}
    validate, check = hooks["trainspec-validate"], hooks["trainspec-build-check"]
    assert check["pass_filenames"] is False and re.search(check["files"], "specs/a.yaml")
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "tf-ps.yaml").write_text((SPECS / "tf-ps.yaml").read_text())
    (specs / "old.yaml").write_text((SPECS / "tf-single.yaml").read_text())
    (tmp_path / "kustomization.yaml").write_text("apiVersion: kustomize.config.k8s.io/v1beta1\n")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    # pre-commit passes every changed file: specs, other YAML and compiled output alike
    assert run_cli("build", "specs", "-o", "deploy", cwd=tmp_path, env=env).returncode == 0
    changed = ["specs/tf-ps.yaml", "kustomization.yaml", "deploy/tf-ps/k8s.yaml",
               "deploy/tf-ps/helm/templates/jobs.yaml"]
    result = run_cli(*_hook_command(validate, changed), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    (specs / "tf-ps.yaml").write_text((SPECS / "tf-ps.yaml").read_text().replace("framework: tensorflow",
                                                                                   "framework: tensorflo"))
    result = run_cli(*_hook_command(validate, ["specs/tf-ps.yaml"]), cwd=tmp_path, env=env)
    assert result.returncode == 2 and "specs/tf-ps.yaml:" in result.stderr
    (specs / "tf-ps.yaml").write_text((SPECS / "tf-ps.yaml").read_text())
    # `make check-manifests` fails on an orphan and passes after `make build-manifests`
    ok = run_cli(*_hook_command(check, ["specs", "-o", "deploy"]), cwd=tmp_path, env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (specs / "old.yaml").unlink()
    orphan = run_cli(*_hook_command(check, ["specs", "-o", "deploy"]), cwd=tmp_path, env=env)
    assert orphan.returncode == 1 and "deploy/tf-single/: orphaned" in orphan.stdout
    assert run_cli("build", "specs", "-o", "deploy", cwd=tmp_path, env=env).returncode == 0
    assert not (tmp_path / "deploy" / "tf-single").exists()
    assert run_cli(*_hook_command(check, ["specs", "-o", "deploy"]), cwd=tmp_path, env=env).returncode == 0
