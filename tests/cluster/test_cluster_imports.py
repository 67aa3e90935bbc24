"""The `kubernetes` client is imported by the cluster commands only, in one module; compile start-up is unchanged."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from helpers import SPECS, neutral_cwd

PROBE = """
import sys
from trainspec.cli import main
sys.argv = ["trainspec", *{args!r}]
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\n@@modules@@" + repr(sorted(sys.modules)) + "\\n")
"""


def modules_after(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE.format(args=list(args))], capture_output=True, text=True,
                          cwd=neutral_cwd(), check=True, env={"KUBECONFIG": "/nonexistent", "PATH": "/usr/bin:/bin"})
    line = next(x for x in done.stderr.splitlines() if x.startswith("@@modules@@"))
    return set(ast.literal_eval(line.removeprefix("@@modules@@")))


@pytest.mark.parametrize("args", [
    ("compile", str(SPECS / "tf-ps.yaml"), "--target", "kubeflow", "-o", "-"),
    ("validate", str(SPECS / "tf-ps.yaml")),
    ("--version",),
], ids=lambda a: a[0])
def test_the_compile_path_loads_nothing_of_the_cluster_commands(args):
    modules = modules_after(*args)
    assert not {m for m in modules if m == "kubernetes" or m.startswith(("kubernetes.", "trainspec.cluster"))}


@pytest.mark.parametrize("args", [("apply", str(SPECS / "tf-ps.yaml"), "--dry-run=client"), ("ps", "--help")],
                         ids=["apply-client-dry-run", "local-ps"])
def test_commands_that_need_no_cluster_do_not_import_the_client(args):
    modules = modules_after(*args)
    assert "kubernetes" not in modules


# Only cluster/client.py imports kubernetes: a contract in pyproject.toml [tool.importlinter]
# (tests/project/test_import_contracts.py).
