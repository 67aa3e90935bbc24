"""The schema tables every object check reads, loaded when first asked for: Kubernetes' OpenAPI definitions of
the built-in kinds trainspec reads and writes (crds/core.json) and each operator CRD's structural schema
(crds/<group>_<version>_<Kind>.json), both made by scripts/gen_crd_schemas.py.  The object checks (crd.py) and
the spec's Kubernetes-shaped fields (compiler/kube_shapes.py) read the same tables: one description of each
Kubernetes type.  Imports nothing of the package."""

from __future__ import annotations

import functools
import json
from pathlib import Path

FOLDER = Path(__file__).with_name("crds")


@functools.cache
def schema(api_version: str, kind: str) -> dict | None:
    """The CRD's schema for apiVersion/kind, or None (a kind trainspec does not know)."""
    path = FOLDER / (f"{api_version}/{kind}".replace("/", "_") + ".json")
    return json.loads(path.read_text()) if path.is_file() else None


@functools.cache
def core() -> dict:
    """{"roots": {apiVersion/kind: definition name}, "definitions": {name: OpenAPI node}}."""
    return json.loads((FOLDER / "core.json").read_text())
