"""Which GPUs a run may use and which replica gets which.

Replicas get disjoint, explicit device ids in replica order (worker-0 gets
0,1; worker-1 gets 2,3), so two replicas never share a GPU by accident, the
way the device plugin hands out whole devices on a node. A job that asks for
more than the machine has is an error, unless the user says how to fit it:
`--gpus-per-replica N` lowers each replica's request, `--share-gpus` lets
replicas share devices (round robin); both are said in a note, never silent.
"""

from __future__ import annotations

import shutil
import subprocess

from ...compiler.errors import UsageError
from ..model.job import JobModel

NVIDIA = "nvidia.com/gpu"


def detect_host_gpus() -> list[str]:
    """GPU indexes that nvidia-smi sees on this machine ([] when none)."""
    if not shutil.which("nvidia-smi"):
        return []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


def parse_gpus_option(value: str | None) -> list[str] | None:
    """--gpus all|none|0,1,2 → explicit ids, [] for none, None for all."""
    if value is None or value == "all":
        return None
    if value == "none":
        return []
    ids = [v.strip() for v in value.split(",") if v.strip()]
    if not ids:
        raise UsageError(f"--gpus {value!r}: expected all, none or a comma-separated list of GPU ids")
    if len(set(ids)) != len(ids):
        raise UsageError(f"--gpus {value!r}: a GPU id is listed twice")
    return ids


def requested(job: JobModel) -> dict[str, int]:
    """GPUs each replica's main container asks for (init containers share the pod's)."""
    out: dict[str, int] = {}
    for r in job.replicas:
        n = sum(r.main.accelerators.values())
        for c in r.init_containers:
            n = max(n, sum(c.accelerators.values()))
        if n:
            out[r.name] = n
    return out


def check_accelerator_names(job: JobModel) -> None:
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            for key in c.accelerators:
                if key != NVIDIA:
                    raise UsageError(
                        f"{r.display}: accelerator {key!r} cannot be emulated (Docker passes through "
                        f"NVIDIA GPUs only, as {NVIDIA}); run with --cpu-only for a CPU dry-run")


def assign(job: JobModel, available: list[str]) -> dict[str, list[str]]:
    """Map replica name → device ids; a clear error when there are too few."""
    want = requested(job)
    total = sum(want.values())
    if total > len(available):
        detail = ", ".join(f"{_display(job, n)}: {k}" for n, k in want.items())
        have = ",".join(available) if available else "none"
        raise UsageError(
            f"the job asks for {total} GPUs ({detail}) but only {len(available)} may be used "
            f"(GPUs available to this run: {have}); free some, pass --gpus with more ids, lower each "
            "replica's request with --gpus-per-replica N, let replicas share GPUs with --share-gpus, "
            "or use --cpu-only for a CPU dry-run")
    out: dict[str, list[str]] = {}
    pos = 0
    for r in job.replicas:
        k = want.get(r.name, 0)
        if k:
            out[r.name] = available[pos:pos + k]
            pos += k
    return out


def share(job: JobModel, available: list[str]) -> tuple[dict[str, list[str]], str]:
    """--share-gpus: every replica gets what it asks for (at most every GPU there is), handed
    out round robin, so replicas share devices when there are too few; and the note saying so."""
    want = requested(job)
    total = sum(want.values())
    if total <= len(available):
        return assign(job, available), ""
    if not available:
        raise UsageError(f"the job asks for {total} GPUs and none may be used; --share-gpus needs at least one "
                         "(see --gpus), or use --cpu-only for a CPU dry-run")
    out: dict[str, list[str]] = {}
    pos = 0
    for r in job.replicas:
        k = min(want.get(r.name, 0), len(available))
        if k:
            out[r.name] = [available[(pos + i) % len(available)] for i in range(k)]
            pos = (pos + k) % len(available)
    spread = "; ".join(f"{_display(job, n)}: {','.join(ids)}" for n, ids in out.items())
    fewer = [f"{_display(job, n)} {want[n]}->{len(out[n])}" for n in out if len(out[n]) < want[n]]
    note = (f"the job asks for {total} GPUs and {len(available)} may be used, so replicas share them ({spread})"
            + (f"; fewer than asked: {', '.join(fewer)}" if fewer else "")
            + "; memory and compute are shared, so this is slower and may run out of GPU memory where a cluster "
            "would not")
    return out, note


def cap_per_replica(job: JobModel, n: int) -> str | None:
    """--gpus-per-replica N: lower every request above N to N; what was lowered, for the note."""
    if n < 0:
        raise UsageError("--gpus-per-replica must be 0 or more")
    lowered: dict[str, tuple[int, int]] = {}
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            for key, k in list(c.accelerators.items()):
                if k > n:
                    lowered.setdefault(r.role, (k, n))
                    if n:
                        c.accelerators[key] = n
                    else:
                        del c.accelerators[key]
    if not lowered:
        return None
    return ", ".join(f"{role}: {k} -> {m} each" for role, (k, m) in lowered.items())


def drop_gpus(job: JobModel) -> str | None:
    """--cpu-only: remove accelerator requests; returns what was dropped, for the note."""
    dropped: dict[str, int] = {}
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            n = sum(c.accelerators.values())
            if n:
                dropped[r.role] = n
                c.accelerators = {}
    if not dropped:
        return None
    return ", ".join(f"{role}: {n} each" for role, n in dropped.items())


def _display(job: JobModel, name: str) -> str:
    return next((r.display for r in job.replicas if r.name == name), name)
