"""A generated corpus of specs across every framework and topology, for the benchmarks."""

from __future__ import annotations

import random
from pathlib import Path

import yaml

TOPOLOGIES = [
    ("tensorflow", {"worker": (1, 1)}),
    ("tensorflow", {"ps": (1, 4), "worker": (1, 60)}),
    ("tensorflow", {"chief": (1, 1), "ps": (1, 4), "worker": (1, 58), "evaluator": (1, 1)}),
    ("tensorflow", {"worker": (2, 63), "evaluator": (1, 1)}),
    ("pytorch", {"master": (1, 1), "worker": (0, 63)}),
    ("mxnet", {"scheduler": (1, 1), "server": (1, 4), "worker": (1, 59)}),
    ("mpi", {"launcher": (1, 1), "worker": (1, 63)}),
]


def spec(i: int, rng: random.Random) -> dict:
    framework, roles = TOPOLOGIES[i % len(TOPOLOGIES)]
    role_specs = {}
    for role, (low, high) in roles.items():
        gpu = rng.choice([0, 1, 2]) if role in ("worker", "chief", "master") else 0
        resources = {"cpu": str(rng.choice([1, 2, 4, 8])), "memory": f"{rng.choice([2, 4, 8, 16])}Gi"}
        if gpu:
            resources["gpu"] = gpu
        role_specs[role] = {"replicas": rng.randint(low, high), "resources": resources}
    body = {
        "framework": framework,
        "image": f"registry.example.com/team{i % 7}/train:{i}",
        "command": ["python", "train.py"],
        "args": ["--epochs", str(rng.randint(1, 50))],
        "env": {"LOG_LEVEL": "info", "DATASET": f"set-{i}"},
        "volumes": [{"name": "data", "mountPath": "/data/input", "readOnly": True,
                     "source": {"persistentVolumeClaim": f"data-{i % 5}"}},
                    {"name": "output", "mountPath": "/data/output", "source": {"persistentVolumeClaim": "results"}}],
        # mpi-operator's launcher takes no ExitCode policy
        "restartPolicy": rng.choice(["Never", "OnFailure"] + ([] if framework == "mpi" else ["ExitCode"])),
        "backoffLimit": rng.randint(0, 5),
        "roles": role_specs,
    }
    return {"apiVersion": "trainspec/v1", "kind": "TrainingJob",
            "metadata": {"name": f"job-{i:04d}", "namespace": "ml", "labels": {"team": f"t{i % 7}"}},
            "spec": body}


def write_corpus(folder: Path, count: int = 300, seed: int = 7) -> list[Path]:
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = folder / f"job-{i:04d}.yaml"
        path.write_text(yaml.safe_dump(spec(i, rng), sort_keys=False))
        paths.append(path)
    return paths


def replica_job(framework: str, replicas: int, name: str = "scale") -> dict:
    """`replicas` in all: the servers / master / launcher, the rest workers."""
    servers = {"tensorflow": 2, "pytorch": 1, "mxnet": 3, "mpi": 1, "xgboost": 1}[framework]
    return worker_job(framework, max(replicas - servers, 0 if framework == "pytorch" else 1), name)


def worker_job(framework: str, workers: int, name: str = "scale") -> dict:
    """A job with `workers` workers and each framework's usual other roles (default restart policies)."""
    roles = {"tensorflow": {"ps": {"replicas": 2}, "worker": {"replicas": workers}},
             "pytorch": {"master": {"replicas": 1}, "worker": {"replicas": workers}},
             "mxnet": {"scheduler": {"replicas": 1}, "server": {"replicas": 2}, "worker": {"replicas": workers}},
             "mpi": {"launcher": {"replicas": 1}, "worker": {"replicas": workers}},
             # every XGBoost replica carries the whole worker list (WORKER_ADDRS): the quadratic trap
             "xgboost": {"master": {"replicas": 1}, "worker": {"replicas": workers}},
             "paddle": {"master": {"replicas": 1}, "worker": {"replicas": workers}},
             "jax": {"worker": {"replicas": workers}},
             "generic": {"coordinator": {"replicas": 1}, "trainer": {"replicas": workers}}}[framework]
    return {"apiVersion": "trainspec/v1.2" if framework in ("paddle", "jax", "generic") else "trainspec/v1",
            "kind": "TrainingJob", "metadata": {"name": name},
            "spec": {"framework": framework, "image": "img:1", "command": ["python", "train.py"], "roles": roles}}
