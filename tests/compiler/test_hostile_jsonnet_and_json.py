"""Parser abuse not covered by test_hostile_input.py: Jsonnet memory bombs and deep recursion,
hostile JSON.  Each is a fast, clear error (exit 2, file:line:col, no traceback) in bounded memory."""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import pytest

JSONNET_BOMBS = {
    "huge-array": 'local big = std.makeArray(200000000, function(i) "xxxxxxxxxxxxxxxx");\n'
                  '{ apiVersion: "trainspec/v1", metadata: { name: std.join("", big) } }\n',
    "string-doubling": 'local d(s, n) = if n == 0 then s else d(s + s, n - 1);\n{ metadata: { name: d("x", 40) } }\n',
    "object-fanout": 'local f(n) = if n == 0 then {} else { a: f(n - 1), b: f(n - 1) };\nf(40)\n',
}


def _validate(path, env: dict | None = None, memory_mib: int = 1536):
    def limit():
        cap = memory_mib * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "trainspec", "validate", str(path)], capture_output=True, text=True,
                            timeout=120, preexec_fn=limit, env={**__import__("os").environ, **(env or {})})
    return result, time.monotonic() - start


@pytest.mark.slow  # each bomb runs until the memory cap cuts it off
@pytest.mark.parametrize("name", sorted(JSONNET_BOMBS))
def test_jsonnet_memory_bombs_are_cut_off(tmp_path, name):
    path = tmp_path / f"{name}.jsonnet"
    path.write_text(JSONNET_BOMBS[name])
    result, elapsed = _validate(path, {"TRAINSPEC_JSONNET_MEMORY": str(512 << 20), "TRAINSPEC_JSONNET_TIMEOUT": "20"})
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.startswith(f"{path}:1:1: ")
    assert ("out of memory" in result.stderr or "did not finish within" in result.stderr
            or "Jsonnet error" in result.stderr), result.stderr
    assert elapsed < 30


def test_jsonnet_deep_recursion_is_a_clear_error(tmp_path):
    path = tmp_path / "deep.jsonnet"
    path.write_text("local f(n) = f(n + 1) + 1; { x: f(0) }\n")
    result, elapsed = _validate(path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "Jsonnet error" in result.stderr and "max stack frames exceeded" in result.stderr, result.stderr
    assert elapsed < 30


@pytest.mark.parametrize("text", [
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 50_000 + "1" + "}" * 50_000,
    '{"apiVersion": "trainspec/v1", "apiVersion": "trainspec/v1"}',
    '{"kind": NaN, "metadata": Infinity}',
    "\ufeff{}",
    '{"a": "\\ud800"}',
], ids=["deep-list", "deep-object", "duplicate-key", "nan-infinity", "bom", "lone-surrogate"])
def test_hostile_json_is_a_clear_error(tmp_path, text):
    path = tmp_path / "job.json"
    path.write_text(text, encoding="utf-8")
    result, elapsed = _validate(path, memory_mib=1024)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert result.stderr.startswith(f"{path}:"), result.stderr
    assert elapsed < 10


@pytest.mark.parametrize("expr", ["importstr '/etc/passwd'", "importbin '/etc/hostname'", "import 'link.libsonnet'",
                                  "import '../lib/x.libsonnet'", "importstr '../../../../../../etc/shadow'"])
def test_jsonnet_reads_nothing_outside_the_spec_folder_and_j_folders(tmp_path, expr):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "x.libsonnet").write_text("{a: 1}")
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "link.libsonnet").symlink_to(lib / "x.libsonnet")
    path = specs / "job.jsonnet"
    path.write_text(f"{{ apiVersion: {expr} }}\n")
    result, _ = _validate(path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "is outside the spec's folder and the -J folders" in result.stderr, result.stderr
    assert "imports may come from the spec's folder and the -J folders only" in result.stderr
    if "x.libsonnet" in expr or "link" in expr:  # the same import is fine once its folder is given with -J
        (specs / "job.jsonnet").write_text("{ apiVersion: import 'x.libsonnet' }\n")
        allowed = subprocess.run([sys.executable, "-m", "trainspec", "validate", str(path), "-J", str(lib)],
                                 capture_output=True, text=True, timeout=60)
        assert "outside" not in allowed.stderr and "not found" not in allowed.stderr, allowed.stderr
