"""From a replica's container in the run model to a ContainerSpec, created (not started) by the engine's adapter.

Env, command, mounts, limits, GPUs, the run's network address and hosts file,
configMap/secret files; and the per-pod emptyDir volumes.
"""

from __future__ import annotations

from decimal import Decimal

from ...compiler.errors import UsageError
from ..adapters.base import CONTAINER, REPLICA, ContainerSpec
from ..adapters.base import Mount as EngineMount
from ..host.filesvol import LABEL as FILES_LABEL
from ..host.paths import resolve_bind
from ..model.job import Container, Mount, Replica
from ..model.limits import pids_for
from ..model.ports import bindings as port_bindings
from .context import RunContext
from .podenv import command_and_args, container_env


def create_container(run: RunContext, r: Replica, c: Container, kind: str, emptydirs: dict[str, str]) -> str:
    ip = run.ips[r.name]
    env = container_env(c, r, run.job.namespace, ip, run.gateway)
    # Only containers that ask for the accelerator see the pod's GPUs (not e.g. a busybox init step).
    ids = run.gpu_ids.get(r.name) if c.accelerators else None
    if ids:
        env["NVIDIA_VISIBLE_DEVICES"] = ",".join(ids)
        env.setdefault("NVIDIA_DRIVER_CAPABILITIES", "compute,utility")
    else:
        # A replica without GPUs sees none, even where nvidia is the default runtime.
        env.setdefault("NVIDIA_VISIBLE_DEVICES", "void")
    command, args = command_and_args(c, env)
    mounts: list[EngineMount] = []
    checked: list[tuple[Mount, str]] = []
    tmpfs: dict[str, str] = {}
    for m in c.mounts:
        if m.kind == "bind":
            # The final real path, checked now; Docker gets that path (never a link to follow), and
            # the mount API, which refuses a missing source instead of creating it as root.
            real = resolve_bind(m, str(run.state), run.opts.allow_host_path)
            checked.append((m, real))
            mounts.append(EngineMount(m.target, real, "bind", m.read_only))
        elif m.kind == "emptydir":
            mounts.append(EngineMount(m.target, emptydirs[m.source], "volume", m.read_only))
        elif m.kind == "files":
            # configMap/secret files on a tmpfs, bound read-only: never on the host's disk
            host = run.files.write(f"{r.display}-{c.name}", m)
            mounts.append(EngineMount(m.target, host, "bind", True))
        elif m.kind == "tmpfs":
            tmpfs[m.target] = f"size={m.size}" if m.size else ""
    sec = c.security
    cpu = c.cpu
    if cpu is not None and run.ncpu and cpu > run.ncpu:
        cpu = Decimal(run.ncpu)  # Docker refuses a quota above the machine's CPUs
    suffix = "" if kind == "main" else f"-init-{c.name}"
    name = f"{run.run_id}-{r.role}-{r.index}{suffix}"
    ports = port_bindings(c.ports, run.opts.publish_address) if kind == "main" else {}
    dns, dns_opt = (["127.0.0.1"], ["timeout:1", "attempts:1"]) if run.opts.offline else (None, None)
    spec = ContainerSpec(
        name=name, image=c.image, entrypoint=command, command=args, env=env,
        working_dir=c.working_dir, hostname=r.hostname,
        labels=run.labels(**{REPLICA: r.display, CONTAINER: c.name},
                          **({FILES_LABEL: run.files.path} if run.files.path else {})),
        network=run.run_id, ip=ip, aliases=tuple(r.aliases), extra_hosts=dict(run.extra_hosts),
        mounts=tuple(mounts), tmpfs=tmpfs,
        nano_cpus=int(cpu * 10**9) if cpu else None, memory=c.memory or run.memory_default,
        pids=pids_for(c.pids, run.opts.pids_limit),
        gpu_ids=tuple(ids or ()), ports=ports, dns=dns, dns_options=dns_opt,
        user=sec.user, read_only=sec.read_only_root, cap_drop=tuple(sec.cap_drop or ()),
        group_add=tuple(sec.group_add or ()),
        security_opt=("no-new-privileges",) if sec.no_new_privileges else ())
    cid = run.client.create_container(spec)
    run.bind_sources[cid] = checked
    return cid

def emptydir_volumes(run: RunContext, r: Replica, attempt: int) -> dict[str, str]:
    """A fresh emptyDir per pod (a restarted container keeps its pod's)."""
    out: dict[str, str] = {}
    for c in [*r.init_containers, r.main]:
        for m in c.mounts:
            if m.kind == "emptydir" and m.source not in out:
                name = f"{run.run_id}-{r.role}-{r.index}-{m.source}-{attempt}"
                run.client.create_volume(name, run.labels(**{REPLICA: r.display}))
                out[m.source] = name
    return out


def recheck_binds(run: RunContext, cid: str) -> None:
    """Right before start: every bind source must still lead where it did at create (a
    container of the run may have swapped a folder for a symlink in between)."""
    for m, real in run.bind_sources.get(cid, []):
        now = resolve_bind(m, str(run.state), run.opts.allow_host_path)
        if now != real:
            raise UsageError(f"bind source {m.source} changed between create and start (it led to {real}, "
                             f"now to {now}); refusing to start the container")

