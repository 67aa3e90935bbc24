#!/usr/bin/env python3
"""Re-extract the ClusterTrainingRuntimes Kubeflow Trainer ships into compiler/shipped_runtimes/.

    python scripts/refresh_shipped_runtimes.py REPO TAG

REPO is a kubeflow/trainer checkout or bare clone that already holds TAG (`git fetch --tags` there
first); nothing is downloaded here.  Each file of RUNTIMES is copied byte for byte from
`TAG:manifests/base/runtimes/`, and the README's tag and commit lines are rewritten.  Then update
compiler/runtimes.py `SHIPPED_VERSION` to TAG, rebuild golden/ and review what changed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

# the distributed runtimes (manifests/base/runtimes/kustomization.yaml); torchtune's are fine-tuning
# recipes with a rewritten command, which the expansion does not reproduce
RUNTIMES = ("deepspeed_distributed.yaml", "jax_distributed.yaml", "mlx_distributed.yaml",
            "torch_distributed.yaml", "xgboost_distributed.yaml")
UPSTREAM = "manifests/base/runtimes"
HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compiler", "shipped_runtimes")


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    repo, tag = argv
    commit = git(repo, "rev-list", "-n", "1", tag).decode().strip()
    for name in RUNTIMES:
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(git(repo, "show", f"{commit}:{UPSTREAM}/{name}"))
    readme = os.path.join(HERE, "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"^- tag: .*$", f"- tag: `{tag}`", text, count=1, flags=re.M)
    text = re.sub(r"^- commit: .*$", f"- commit: `{commit}`", text, count=1, flags=re.M)
    with open(readme, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"{len(RUNTIMES)} runtimes from {tag} ({commit}) in {HERE}; set SHIPPED_VERSION = {tag!r} in "
          "compiler/runtimes.py")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
