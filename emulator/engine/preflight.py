"""Everything checked before Docker is touched (and the first questions asked of the daemon).

Claims mapped to host folders (--claim), host paths, image mapping (--image),
GPUs (--gpus / --cpu-only / --gpus-per-replica / --share-gpus and the daemon's
runtimes), CPU caps, images present locally (pulled only with --pull), the
Secrets/ConfigMaps the input lacks (reported with the missing images, all at
once), host ports; and the claim folders created under the state folder. A failure
is a UsageError before any container exists.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from pathlib import Path

from ...compiler.errors import UsageError, usage_text
from ..adapters.base import ContainerEngine, EngineError, missing_images, short
from ..adapters.choice import choose
from ..host import gpus as gpu_mod
from ..host.filesvol import check_size as check_files_size
from ..host.grants import parse_grants, split_mode
from ..host.ownfs import check_state
from ..host.paths import check_host_paths, make_dir_inside
from ..model.job import JobModel
from ..model.names import check_names
from ..model.status import RunOptions
from .podenv import check_expansions
from .reporter import Reporter


@dataclass
class Preflight:
    """What the checks learnt that the run needs later."""
    client: ContainerEngine
    ncpu: int = 0
    mem_total: int = 0          # the engine's memory (docker info MemTotal): the default memory limit's base
    gpu_ids: dict[str, list[str]] = field(default_factory=dict)


def check_input(job: JobModel, opts: RunOptions, state: Path, reporter: Reporter) -> None:
    """What is checked (and mapped: --claim, --image, --cpu-only, --gpus-per-replica) before any engine
    contact. The CLI runs it before it even imports the engine (a refused input never loads `docker`)."""
    check_state(state)  # a planted `.trainspec` link is refused before anything is made (ownfs.py)
    check_names(job)
    check_env_values(job)
    check_expansions(job.replicas, job.namespace, job.name)
    check_files_size(job)
    notes = map_claims(job, opts.claims, state)
    notes += check_host_paths(job, str(state), allow=opts.allow_host_path, grants=parse_grants(opts.mount_host))
    for note in notes:
        reporter.note(note)
    replaced = map_images(job, opts.images)
    if replaced:
        reporter.note(f"--image: {replaced}")
    if opts.cpu_only:
        dropped = gpu_mod.drop_gpus(job)
        if dropped:
            reporter.note(f"--cpu-only: GPU requests dropped ({dropped}); this is a CPU dry-run")
    else:
        gpu_mod.check_accelerator_names(job)
    if opts.gpus_per_replica is not None:
        capped = gpu_mod.cap_per_replica(job, opts.gpus_per_replica)
        if capped:
            reporter.note(f"--gpus-per-replica {opts.gpus_per_replica}: GPU requests lowered ({capped}); "
                          "the job asks for more on a cluster")


def preflight(job: JobModel, opts: RunOptions, state: Path, reporter: Reporter,
              input_checked: bool = False) -> Preflight:
    """The input's checks (unless `input_checked`: the CLI ran them first), then the engine's."""
    if not input_checked:
        check_input(job, opts, state, reporter)
    # Only now, connecting, are the engine's adapters (and with them `docker`) imported.
    from ..adapters.engines import connect

    wanted = gpu_mod.requested(job)
    client = connect(len(job.replicas), choose(opts.engine))
    info = client.info()
    problem = client.init_problem()  # every container runs an init: said before any is made
    if problem:
        raise UsageError(problem)
    out = Preflight(client, ncpu=int(info.get("NCPU") or 0), mem_total=int(info.get("MemTotal") or 0))
    if wanted:
        allowed = gpu_mod.parse_gpus_option(opts.gpus)
        if allowed == []:
            raise UsageError(f"the job asks for {sum(wanted.values())} GPUs but --gpus none allows none",
                             hint="use --cpu-only for a CPU dry-run")
        problem = client.gpu_problem(info, sum(wanted.values()))
        if problem and not opts.assume_gpu_runtime:
            raise UsageError(problem)
        available = allowed if allowed is not None else gpu_mod.detect_host_gpus()
        if allowed is None and not available:
            raise UsageError("cannot list this machine's GPUs (nvidia-smi found none)",
                             hint="pass the ids to use with --gpus 0,1,... or run with --cpu-only")
        if opts.share_gpus:
            out.gpu_ids, shared = gpu_mod.share(job, available)
            if shared:
                reporter.note(f"--share-gpus: {shared}")
        else:
            out.gpu_ids = gpu_mod.assign(job, available)
    biggest = max((c.cpu for r in job.replicas for c in [*r.init_containers, r.main] if c.cpu), default=None)
    if biggest is not None and out.ncpu and biggest > out.ncpu:
        reporter.note(f"CPU limits above this machine's {out.ncpu} CPUs (up to {biggest:g}) are capped "
                      f"at {out.ncpu}")
    missing = missing_images(client, job.images())
    if missing and opts.pull:
        missing = pull_images(client, missing, reporter)
    problems = missing_objects(job)
    if missing:
        problems.append((
            f"image{'s' if len(missing) > 1 else ''} not present locally: {', '.join(missing)}; the emulator "
            "never pulls unless told to (that could hang or fetch the wrong thing)",
            f"{client.image_help(missing)}, pass --pull, or map it to a local image with --image OLD=NEW (or --image "
            "NEW for every container)"))
    if len(problems) == 1:
        raise UsageError(problems[0][0], hint=problems[0][1])
    if problems:
        raise UsageError(f"{len(problems)} things a cluster would have are missing:\n  - "
                         + "\n  - ".join(usage_text(message, hint=hint) for message, hint in problems))
    check_run_as_non_root(client, job)
    check_host_ports(job, opts.publish_address)
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            for m in c.mounts:
                if m.kind == "bind" and m.root:  # claim folders: only ever inside the state folder
                    make_dir_inside(str(state / "volumes"), m.source)
    return out


def check_env_values(job: JobModel) -> None:
    """An env value with a NUL byte cannot be passed to a process (Docker refuses it, and quotes the
    value in its error): refused here, before any engine call, naming the variable, never the value."""
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            for e in c.env:
                if "\0" in e.value or "\0" in e.name:
                    what = "from a Secret " if e.secret else ""
                    raise UsageError(f"{r.display} ({c.name}): env {e.name.replace(chr(0), '?')!r} {what}holds a NUL "
                                     "byte (value not shown); a process environment cannot carry one (the kubelet "
                                     "fails the container too)")


def map_images(job: JobModel, images: list[str]) -> str:
    """--image OLD=NEW maps one image; --image NEW replaces every other container's image (main,
    init and sidecar containers alike). Returns what NEW replaced, for a note."""
    mapping: dict[str, str] = {}
    every: str | None = None
    for spec in images:
        if "=" in spec:
            old, new = spec.split("=", 1)
            mapping[old] = new
        else:
            every = spec
    replaced: list[str] = []
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            if c.image in mapping:
                c.image = mapping[c.image]
            elif every and c.image != every:
                if c.image not in replaced:
                    replaced.append(c.image)
                c.image = every
    return f"{', '.join(replaced)} -> {every}" if replaced else ""


def map_claims(job: JobModel, claims: list[str], state: Path) -> list[str]:
    """--claim NAME=HOSTPATH[:rw]: the claim's mounts bind HOSTPATH instead of the state folder's
    volumes/NAME; from then on it is a host path like any hostPath (hostpaths.py's rules), granted
    by the option itself, read-only unless it ends in `:rw`. Returns notes (a read-write mount
    made read-only)."""
    import os

    wanted: dict[str, tuple[str, bool]] = {}
    for spec in claims:
        name, sep, host = spec.partition("=")
        if not sep or not name or not host:
            raise UsageError("has no '='", where=f"--claim {spec!r}",
                             expected="NAME=HOSTPATH[:rw], e.g. --claim results=./out:rw")
        path, rw = split_mode(host, f"--claim {name}")
        wanted[name] = (os.path.abspath(os.path.expanduser(path)), rw)
    notes: list[str] = []
    used: set[str] = set()
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            for m in c.mounts:
                if m.kind != "bind" or not m.root:
                    continue
                name = os.path.basename(m.root.rstrip("/"))
                used.add(name)
                if name in wanted:
                    host, rw = wanted[name]
                    m.source = host + m.source[len(m.root):]
                    m.root, m.host_path, m.grant = "", True, os.path.realpath(host)
                    if not m.read_only and not rw:
                        m.read_only = True
                        note = (f"--claim {name}: mounted read-only (add :rw, --claim {name}={host}:rw, to let "
                                "the job write to it)")
                        if note not in notes:
                            notes.append(note)
    unknown = sorted(set(wanted) - used)
    if unknown:
        raise UsageError(f"--claim {unknown[0]}: the job has no persistentVolumeClaim {unknown[0]!r} "
                         f"(its claims: {', '.join(sorted(used)) or 'none'})")
    return notes


def pull_images(client: ContainerEngine, images: list[str], reporter: Reporter) -> list[str]:
    """--pull: pull each missing image; the ones that could not be pulled (said why)."""
    still: list[str] = []
    for image in images:
        reporter.note(f"--pull: pulling {image} ...")
        try:
            client.pull_image(image)
        except EngineError as exc:  # any failure: say it, list the image as missing
            reporter.note(f"--pull: could not pull {image}: {short(exc)[:300]}")
            still.append(image)
    return still


def missing_objects(job: JobModel) -> list[tuple[str, str]]:
    """Secrets/ConfigMaps a cluster would have but the input does not: (the problem, how to give it) each."""
    out = []
    for kind, missing, flag in (("Secret", job.secret_missing, "--secret"),
                                ("ConfigMap", job.configmap_missing, "--configmap")):
        for name, where in missing.items():
            out.append((f"{where}: {kind} {name!r} is not in {job.source}",
                        f"supply it with {flag} {name}=PATH (a directory of key files, or a KEY=VALUE env file) or "
                        f"{flag} {name}:KEY=VALUE"))
    return out


def check_host_ports(job: JobModel, default_address: str = "127.0.0.1") -> None:
    seen: dict[tuple[int, str], str] = {}
    for r in job.replicas:
        for p in r.main.ports:
            if not p.host:
                continue
            key = (p.host, p.protocol)
            shown = f"{p.host}" if p.protocol == "TCP" else f"{p.host}/{p.protocol}"
            if key in seen:
                raise UsageError(f"{r.display} and {seen[key]} both publish host port {shown}")
            seen[key] = r.display
            address = p.host_ip or default_address
            if p.protocol != "SCTP" and not host_port_free(int(p.host), p.protocol, address):
                raise UsageError(f"{r.display} publishes host port {shown}"
                                 f"{' on ' + address if address else ''}, which is already in use")


def check_run_as_non_root(client: ContainerEngine, job: JobModel) -> None:
    """runAsNonRoot without runAsUser: the kubelet checks the image's user; so does the emulator."""
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            if not c.security.run_as_non_root or c.security.user is not None:
                continue
            user = client.image_user(c.image)
            uid = user.split(":", 1)[0]
            if uid in ("", "root", "0"):
                raise UsageError(f"runAsNonRoot is true but image {c.image} runs as root (the kubelet refuses to "
                                 "start it)", where=f"{r.display} ({c.name})", hint="set runAsUser")
            if not uid.isdigit():
                raise UsageError(f"runAsNonRoot is true but image {c.image} has the non-numeric user {uid!r}, which "
                                 "cannot be verified (the kubelet refuses it too)", where=f"{r.display} ({c.name})",
                                 hint="set runAsUser")


def host_port_free(port: int, protocol: str = "TCP", host_ip: str = "") -> bool:
    ip = host_ip or "0.0.0.0"
    family = socket.AF_INET6 if ":" in ip else socket.AF_INET
    kind = socket.SOCK_DGRAM if protocol == "UDP" else socket.SOCK_STREAM
    try:
        with socket.socket(family, kind) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((ip, port))
            return True
    except OSError:
        return False
