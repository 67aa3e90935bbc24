"""Which host folders a job may mount, and the names that become host paths.

Three layers, each general rather than case by case:
- names that become folders under the state folder (PVC claimName, compose volume
  names) and subPaths are validated when the input is read (`safe_name`,
  `safe_subpath`): no `..`, no separators in names, nothing absolute;
- a host path reaches a container only when the user named it (or a folder above it)
  with --mount-host or --claim, read-only unless they said `:rw` (hostgrants.py);
- a denylist of host trees (system, credential and runtime-socket folders, every
  home's dot-files) and a walk for sockets and device nodes inside mounted folders,
  checked before anything is created (`check_host_paths`);
- a claim's (or compose named volume's) folder is made and mounted only below the state
  folder's `volumes`, reached without following any link (ownfs.py: a repository may
  commit `.trainspec/volumes -> /`);
- at the moment of mounting, every bind source is resolved to its final real path
  (symlinks included) and checked again (`resolve_bind`): a claim's folder has no link on
  its way, a hostPath may not lead into the state folder (where the run's
  containers write, and could plant a symlink), and the real path is what Docker
  gets — checked again right before the container starts.
--allow-host-path lifts the denylist and the walk (never the need for a grant, nor the name and
confinement rules).
"""

from __future__ import annotations

import glob
import os
import re
import stat
from typing import Any

from ...compiler.errors import UsageError
from ..model.errors import FieldError
from ..model.job import JobModel, Mount
from .grants import OPTION, Grant, grant_for, not_granted, special_files
from .ownfs import Untrusted, inside_state, own_dir

# Mounting any of these (or anything inside them) hands a container the host: its
# configuration and credentials, kernel interfaces, devices, programs, services'
# sockets, or the Docker daemon itself (the socket, or its state). Anything that
# *contains* one of them (/, /var, /usr...) too.
DENIED_TREES = (
    "/etc", "/proc", "/sys", "/dev", "/boot", "/efi",
    "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec",
    "/usr/local/bin", "/usr/local/sbin", "/usr/local/lib", "/usr/local/etc",
    "/run", "/var/run",                      # sockets: docker, containerd, podman, dbus, systemd, user sessions
    "/var/lib", "/var/spool", "/var/mail", "/var/backups",   # daemons' state (docker, kubelet), cron
    "/var/run/secrets", "/run/secrets",      # a pod's service-account token when run inside Kubernetes
    "/snap", "/nix/var",
)
# These are refused as a whole; a folder inside them (e.g. /home/me/data) is fine.
DENIED_EXACT = ("/home", "/root", "/usr", "/usr/local", "/usr/share", "/var", "/var/log", "/tmp", "/var/tmp")
# Inside a denied tree but fine: removable media mounted by the desktop.
ALLOWED_INSIDE = ("/run/media",)
SOCKETS = ("docker.sock", "containerd.sock", "podman.sock", "dockershim.sock", "crio.sock", "buildkitd.sock")

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,252}")


def _inside(path: str, tree: str) -> bool:
    tree = tree.rstrip("/") or "/"
    return path == tree or path.startswith(tree + "/") or tree == "/"


def _homes() -> list[str]:
    homes = {"/root", os.path.realpath(os.path.expanduser("~"))}
    homes.update(os.path.realpath(h) for h in glob.glob("/home/*"))
    homes.update(glob.glob("/home/*"))
    return sorted(homes - {"/"})


def denied_host_path(path: str) -> str | None:
    """Why mounting `path` from the host is refused (None: it is fine). The path is
    resolved first — symlinks and `..` — so `/data/../etc` or a link to the Docker
    socket are caught too; both the path as written and where it leads are judged."""
    plain = os.path.normpath("/" + (path or "/")).replace("//", "/")
    try:
        real = os.path.realpath(plain)
    except OSError:  # e.g. a /proc link we may not follow: judge the path as written
        real = plain
    if real != plain:
        why = _denied(real)
        if why:
            return why
    return _denied(plain)


def _denied(real: str) -> str | None:
    if real == "/":
        return "it is the host's whole filesystem"
    if any(_inside(real, a) for a in ALLOWED_INSIDE) and real not in ALLOWED_INSIDE:
        return None
    homes = _homes()
    parts = real.split("/")
    if len(parts) > 2 and parts[1] == "home" and f"/home/{parts[2]}" not in homes:
        homes.append(f"/home/{parts[2]}")
    trees = list(DENIED_TREES) + [os.path.realpath(t) for t in DENIED_TREES]
    host = os.environ.get("DOCKER_HOST", "")
    if host.startswith("unix://"):
        trees.append(os.path.realpath(host[len("unix://"):]))
    for tree in trees:
        if _inside(real, tree):
            return f"it is {tree}" if real == tree else f"it is inside {tree}"
        if tree.startswith(real.rstrip("/") + "/"):
            return f"it contains {tree}"
    for home in homes:
        if real == home:
            return f"it is all of {home}"
        if real.startswith(home + "/"):
            first = real[len(home) + 1:].split("/", 1)[0]
            if first.startswith("."):  # .ssh, .bashrc, .config, .git-credentials, .docker, .kube, .local/bin...
                return f"it is {home}/{first}, a home folder's configuration or credentials"
        if home.startswith(real.rstrip("/") + "/"):
            return f"it contains {home}"
    if real in set(DENIED_EXACT) | {os.path.realpath(e) for e in DENIED_EXACT}:
        return f"it is all of {real}"
    if os.path.basename(real) in SOCKETS:
        return "it is a container runtime's socket"
    try:
        if stat.S_ISSOCK(os.stat(real).st_mode):
            return "it is a socket (a service's control interface)"
    except OSError:
        pass
    return None


def in_state_folder(source: str, state: str) -> str | None:
    """A hostPath into the state folder (as written or where it leads) would see the claim
    folders the run's containers write — and follow any symlink they plant there."""
    state_real, state_abs = os.path.realpath(state), os.path.abspath(state)
    for p in {os.path.abspath(source), os.path.realpath(source)}:
        for s in {state_real, state_abs}:
            if _inside(p, s) or s.startswith(p.rstrip("/") + "/"):
                return (f"it is inside (or contains) the emulator's state folder {s}, where the run's containers "
                        "write (claim folders)")
    return None


def check_host_paths(job: JobModel, state: str | None = None, allow: bool = False,
                     grants: list[Grant] | None = None) -> list[str]:
    """Before anything is created: every hostPath mount (and compose bind, and --claim folder)
    must be covered by a path the user named (`--mount-host`, `--claim`), is read-only unless that
    grant says rw (a note says when a read-write mount was made read-only), and may not be a
    system or credential folder, the state folder, or hold a socket or device node
    (--allow-host-path lifts those three checks, never the need for a grant). Missing ones are
    refused too (never created here). Returns the notes to print."""
    bad: list[str] = []
    missing: list[str] = []
    ungranted: list[str] = []
    notes: list[str] = []
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            for m in c.mounts:
                if m.kind != "bind" or not m.host_path:
                    continue
                name = r.display if c is r.main else f"{r.display}:{c.name}"
                # The denylist first: naming /etc on the command line would be the wrong hint.
                why = None if allow else (host_path_problem(m.source) or (state and in_state_folder(m.source, state)))
                if why:
                    bad.append(f"{name} mounts host path {m.source} at {m.target} ({why})")
                    continue
                if not m.grant:
                    g = grant_for(m.source, grants or [])
                    if g is None:
                        ungranted.append(not_granted(m.source, m.target, name))
                        continue
                    m.grant = g.real
                    if not m.read_only and not g.rw:
                        m.read_only = True
                        notes.append(f"{name}: host path {m.source} is mounted read-only at {m.target} (the file "
                                     f"asks for read-write; pass {OPTION} {g.path}:rw to allow writes)")
                if not os.path.exists(m.source):
                    missing.append(f"{name}: {m.source}")
                    continue
                why = None if allow else special_files(os.path.realpath(m.source))
                if why:
                    bad.append(f"{name} mounts host path {m.source} at {m.target} ({why})")
    if bad:
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise UsageError("refusing to mount host system paths into the job's containers: "
                         + "; ".join(bad[:5]) + more + ". A container that sees them can read the host's "
                         "secrets or take over the Docker daemon. Mount a data folder instead, or pass "
                         "--allow-host-path if you really mean it")
    if ungranted:
        more = f" (and {len(ungranted) - 3} more)" if len(ungranted) > 3 else ""
        raise UsageError("; ".join(ungranted[:3]) + more)
    if missing:
        raise UsageError("host path" + ("s" if len(missing) > 1 else "") + " not found: " + "; ".join(missing[:5])
                         + "; the emulator never creates host folders outside its state folder: create them first")
    return notes


def host_path_problem(source: str, read_only: bool = True) -> str | None:
    """Why `source` may not be mounted at all (the denylist; read-write is the grant's business)."""
    return denied_host_path(source)


# -- names that become host paths ---------------------------------------------------

def safe_name(name: object, what: str, where: str, node: Any = None, field: tuple = ()) -> str:
    """A claimName or compose volume name: it becomes one folder under the state folder. `node`/`field`:
    the mapping and field it was read from, for the error's position (model/errors.py)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise FieldError(f"{what} {name!r} is not a valid name", where=where, node=node, field=field,
                         expected="letters, digits, '-', '_', '.' starting with a letter or digit (no '/', no '..'): "
                                  "it becomes a folder under the emulator's state folder")
    return name


def safe_subpath(sub: object, where: str, node: Any = None, field: tuple = ()) -> str:
    """A volumeMount subPath: relative, no `..` (what the API server requires)."""
    if sub in (None, ""):
        return ""
    if not isinstance(sub, str) or sub.startswith("/") or "\0" in sub or ".." in sub.split("/"):
        raise FieldError(f"subPath {sub!r} is not allowed", where=where, node=node, field=field,
                         expected="a relative path without '..'")
    return os.path.normpath(sub)


def make_dir_inside(root: str, path: str) -> None:
    """mkdir -p `path`, which must be inside `root` (the state folder's `volumes`), never
    following a symlink on the way — not in the state folder's own name, not in `volumes`
    (a repository may commit `.trainspec/volumes -> /`), not in a claim folder (a container
    may plant one there): ownfs.own_dir, one component at a time."""
    state, top = os.path.split(os.path.abspath(root).rstrip("/"))
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if rel.startswith("..") or os.path.isabs(rel):
        raise UsageError(f"{path} is not inside {root}")
    # 0755 below `volumes`: a container running as another user reads its claim (as before)
    own_dir(state, top, *([] if rel == "." else rel.split("/")), mode=0o755)


def resolve_bind(m: Mount, state: str, allow_host_path: bool) -> str:
    """The real path to hand Docker for a bind mount, checked as it is now (call it right
    before create and again right before start)."""
    if m.root:
        # A claim's (or named volume's) folder: below the state folder's `volumes`, with no link anywhere
        # on the way (ownfs.py) — what is checked is what Docker gets.
        parts = inside_state(state, m.source)
        if not parts or parts[0] != "volumes" or len(parts) < 2:
            raise UsageError(f"volume folder {m.source} is not inside the state folder's volumes ({state}/volumes)")
        try:
            return str(own_dir(state, *parts, create=False))
        except Untrusted as exc:
            raise UsageError(f"volume folder {m.source} leads outside {state}/volumes ({exc.message}); refusing "
                             "to mount it", hint=exc.hint) from None
        except FileNotFoundError:
            raise UsageError(f"volume folder {m.source} is gone (removed while the run starts?)") from None
    real = os.path.realpath(m.source)
    if m.host_path:
        grant = os.path.realpath(m.grant) if m.grant else ""
        if not grant or not _inside(real, grant):
            raise UsageError(f"refusing to mount host path {m.source} (resolved: {real}) at {m.target}: it is "
                             f"not inside a path named with {OPTION} or --claim")
    if m.host_path and not allow_host_path:
        why = (host_path_problem(real, m.read_only) or in_state_folder(m.source, state)
               or special_files(real))
        if why:
            raise UsageError(f"refusing to mount host path {m.source} (resolved: {real}) at {m.target}: {why}")
    if not os.path.exists(real):
        raise UsageError(f"host path {m.source} does not exist; the emulator does not create host folders "
                         "outside its state folder: create it first")
    return real
