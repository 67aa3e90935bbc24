"""Everything checked before Docker is touched (and the first questions asked of the daemon).

Host paths, image mapping (--image), Secrets/ConfigMaps the input lacks, GPUs
(--gpus / --cpu-only and the daemon's runtimes), CPU caps, images present
locally (the emulator never pulls), host ports; and the claim folders created
under the state folder. A failure is a UsageError before any container exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..compiler.errors import UsageError
from . import docker_backend as db
from . import gpus as gpu_mod
from .hostpaths import check_host_paths, make_dir_inside
from .inputs import missing_objects_error
from .runmodel import JobModel
from .runtypes import RunOptions
from .ui import Console


@dataclass
class Preflight:
    """What the checks learnt that the run needs later."""
    client: Any
    ncpu: int = 0
    gpu_ids: dict[str, list[str]] = field(default_factory=dict)


def preflight(job: JobModel, opts: RunOptions, state: Path, console: Console) -> Preflight:
    check_host_paths(job, str(state), allow=opts.allow_host_path)
    map_images(job, opts.images)
    missing_objects_error(job)
    if opts.cpu_only:
        dropped = gpu_mod.drop_gpus(job)
        if dropped:
            console.note(f"--cpu-only: GPU requests dropped ({dropped}); this is a CPU dry-run")
    else:
        gpu_mod.check_accelerator_names(job)
    wanted = gpu_mod.requested(job)
    client = db.connect(len(job.replicas))
    info = client.info()
    out = Preflight(client, ncpu=int(info.get("NCPU") or 0))
    if wanted:
        allowed = gpu_mod.parse_gpus_option(opts.gpus)
        if allowed == []:
            raise UsageError(f"the job asks for {sum(wanted.values())} GPUs but --gpus none allows none; "
                             "use --cpu-only for a CPU dry-run")
        if not (db.has_nvidia_runtime(info) or opts.assume_gpu_runtime):
            raise UsageError(
                f"the job asks for {sum(wanted.values())} GPUs but this Docker daemon has no NVIDIA runtime "
                f"(runtimes: {', '.join(sorted(info.get('Runtimes') or {})) or 'none'}); install the NVIDIA "
                "Container Toolkit and restart dockerd, or run with --cpu-only for a CPU dry-run")
        available = allowed if allowed is not None else gpu_mod.detect_host_gpus()
        if allowed is None and not available:
            raise UsageError("cannot list this machine's GPUs (nvidia-smi found none); "
                             "pass the ids to use with --gpus 0,1,... or run with --cpu-only")
        out.gpu_ids = gpu_mod.assign(job, available)
    biggest = max((c.cpu for r in job.replicas for c in [*r.init_containers, r.main] if c.cpu), default=None)
    if biggest is not None and out.ncpu and biggest > out.ncpu:
        console.note(f"CPU limits above this machine's {out.ncpu} CPUs (up to {biggest:g}) are capped "
                     f"at {out.ncpu}")
    missing = db.missing_images(client, job.images())
    if missing:
        raise UsageError(
            f"image{'s' if len(missing) > 1 else ''} not present locally: {', '.join(missing)}; the emulator "
            "never pulls (that could hang or fetch the wrong thing): `docker pull`/`docker build`/`docker load` "
            "it first, or map it to a local image with --image OLD=NEW (or --image NEW for every role)")
    check_run_as_non_root(client, job)
    check_host_ports(job)
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            for m in c.mounts:
                if m.kind == "bind" and m.root:  # claim folders: only ever inside the state folder
                    make_dir_inside(str(state / "volumes"), m.source)
    return out


def map_images(job: JobModel, images: list[str]) -> None:
    """--image OLD=NEW maps one image; --image NEW replaces every main container's image."""
    mapping: dict[str, str] = {}
    every: str | None = None
    for spec in images:
        if "=" in spec:
            old, new = spec.split("=", 1)
            mapping[old] = new
        else:
            every = spec
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            if c.image in mapping:
                c.image = mapping[c.image]
            elif every and c is r.main:
                c.image = every


def check_host_ports(job: JobModel) -> None:
    seen: dict[int, str] = {}
    for r in job.replicas:
        for _port, _proto, host_port in r.main.ports:
            if not host_port:
                continue
            if host_port in seen:
                raise UsageError(f"{r.display} and {seen[host_port]} both publish host port {host_port}")
            seen[host_port] = r.display
            if not db.host_port_free(int(host_port)):
                raise UsageError(f"{r.display} publishes host port {host_port}, which is already in use")


def check_run_as_non_root(client: Any, job: JobModel) -> None:
    """runAsNonRoot without runAsUser: the kubelet checks the image's user; so does the emulator."""
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            if not c.security.run_as_non_root or c.security.user is not None:
                continue
            user = str((client.api.inspect_image(c.image).get("Config") or {}).get("User") or "")
            uid = user.split(":", 1)[0]
            if uid in ("", "root", "0"):
                raise UsageError(f"{r.display} ({c.name}): runAsNonRoot is true but image {c.image} runs as root "
                                 "(the kubelet refuses to start it); set runAsUser")
            if not uid.isdigit():
                raise UsageError(f"{r.display} ({c.name}): runAsNonRoot is true but image {c.image} has the "
                                 f"non-numeric user {uid!r}, which cannot be verified (the kubelet refuses it too); "
                                 "set runAsUser")
