"""Parser abuse: each hostile file is a fast, clear error with bounded memory, never a traceback."""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import pytest

from helpers import run_cli


def _validate_bounded(path, seconds: float = 10.0, memory_mib: int = 1024):
    """Run `trainspec validate` under a memory cap; return (result, elapsed)."""
    def limit():
        cap = memory_mib * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "trainspec", "validate", str(path)], capture_output=True,
                            text=True, timeout=seconds * 3, preexec_fn=limit)
    return result, time.monotonic() - start


HOSTILE = {
    "billion-laughs": "\n".join(['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
                                + [f"a{i}: &a{i} [" + ",".join([f"*a{i-1}"] * 10) + "]" for i in range(1, 10)]),
    "deep-flow-nesting": "spec: " + "[" * 10_000 + "]" * 10_000,
    "deep-block-nesting": "".join("  " * i + f"k{i}:\n" for i in range(2_000)),
    "duplicate-keys": "apiVersion: trainspec/v1\nkind: TrainingJob\nkind: TrainingJob\n",
    "tab-indentation": "apiVersion: trainspec/v1\nmetadata:\n\tname: x\n",
    "binary-tag": "apiVersion: !!binary aGVsbG8=\n",
    "python-object-tag": "apiVersion: !!python/object/apply:os.system ['true']\n",
    "unknown-tag": "apiVersion: !Ref trainspec/v1\n",
    "not-a-mapping": "- just\n- a list\n",
    "scalar-document": "hello\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_yaml_is_a_clear_error(tmp_path, name):
    path = tmp_path / f"{name}.yaml"
    path.write_text(HOSTILE[name])
    result, elapsed = _validate_bounded(path)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(f"{path}:"), result.stderr
    if "tag" in name:
        assert "unsupported YAML tag" in result.stderr
    assert elapsed < 10


def test_huge_file_is_refused_before_parsing(tmp_path):
    path = tmp_path / "huge.yaml"
    with open(path, "w") as handle:
        handle.write("apiVersion: trainspec/v1\nkind: TrainingJob\nmetadata: {name: x}\nspec:\n  env:\n")
        line = "    K%07d: " + "x" * 60 + "\n"
        for i in range(50 * 1024 * 1024 // 75):
            handle.write(line % i)
    result, elapsed = _validate_bounded(path, memory_mib=512)
    assert result.returncode == 2
    assert "expected at most 16777216 bytes" in result.stderr
    assert elapsed < 5


def test_non_utf8_and_nul_bytes(tmp_path):
    path = tmp_path / "bytes.yaml"
    path.write_bytes(b"apiVersion: trainspec/v1\nkind: \xc3\x28\n")
    result = run_cli("validate", str(path))
    assert result.returncode == 2 and ":2:7:" in result.stderr and "not UTF-8" in result.stderr
    path.write_bytes(b"apiVersion: trainspec/v1\nkind: Train\x00ingJob\n")
    result = run_cli("validate", str(path))
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_job_names_cannot_escape_the_output_folder(tmp_path):
    for name in ("../evil", "a/b", "..", "/etc", "x\\y"):
        spec = tmp_path / "job.yaml"
        spec.write_text(f"apiVersion: trainspec/v1\nkind: TrainingJob\nmetadata: {{name: '{name}'}}\n"
                        "spec: {framework: pytorch, image: i, roles: {master: {replicas: 1}}}\n")
        result = run_cli("build", str(spec), "-o", str(tmp_path / "out"))
        assert result.returncode == 2 and "is not a DNS-1035 label" in result.stderr
        assert not (tmp_path / "out").exists()
        assert not (tmp_path / "evil").exists()
