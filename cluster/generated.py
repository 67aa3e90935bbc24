"""`apply` of a spec written with metadata.generateName: this run's name, made as the API server makes one.

trainspec's objects name one another (the headless Service, the topology ConfigMap, host names, TF_CONFIG,
TRAINSPEC_HOSTS_*), so a name the server generated for one object could not reach the others: `apply`
generates the name itself, before compiling, and every object of the run agrees on it (docs/cluster.md).
"""

from __future__ import annotations

import secrets
import sys

from trainspec.compiler.kube import GENERATED_ALPHABET, GENERATED_SUFFIX, generated_name


def new_name(prefix: str) -> str:
    """`prefix` cut to 58 characters and 5 random ones, as k8s.io/apiserver's SimpleNameGenerator does."""
    name = generated_name(prefix, "".join(secrets.choice(GENERATED_ALPHABET) for _ in range(GENERATED_SUFFIX)))
    print(f"job {name}: named from metadata.generateName {prefix!r} (ps/logs/down --cluster {name})",
          file=sys.stderr)
    return name


def with_new_names(args):
    """`args` for loading the specs `apply` compiles: each job written with generateName gets a new name."""
    import argparse

    return argparse.Namespace(**{**vars(args), "name_for": new_name})
