"""Which host folders a job may mount, and the names that become host paths.

Three layers, each general rather than case by case:
- names that become folders under the state folder (PVC claimName, compose volume
  names) and subPaths are validated when the input is read (`safe_name`,
  `safe_subpath`): no `..`, no separators in names, nothing absolute;
- a denylist of host trees (system, credential and runtime-socket folders, every
  home's dot-files) checked before anything is created (`check_host_paths`), and
  read-write host paths allowed only under a few data roots (`rw_allowed`);
- at the moment of mounting, every bind source is resolved to its final real path
  (symlinks included) and checked again (`resolve_bind`): a claim's folder must stay
  inside itself, a hostPath may not lead into the state folder (where the run's
  containers write, and could plant a symlink), and the real path is what Docker
  gets — checked again right before the container starts.
--allow-host-path lifts the host-path rules (not the name and confinement rules).
"""

from __future__ import annotations

import glob
import os
import re
import stat

from ..compiler.errors import UsageError
from .runmodel import JobModel, Mount

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
# Read-write host paths only below one of these (and the current folder, and $HOME's
# non-dot folders); more with $TRAINSPEC_RW_HOST_PATHS (`:`-separated).
RW_ROOTS = ("/tmp", "/var/tmp", "/mnt", "/media", "/run/media", "/srv", "/data", "/scratch", "/work",
            "/workspace", "/opt")

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


def rw_allowed(real: str) -> bool:
    """May `real` (a resolved host path) be mounted read-write?"""
    roots = list(RW_ROOTS) + [os.getcwd(), os.path.realpath(os.path.expanduser("~"))]
    roots += [r for r in os.environ.get("TRAINSPEC_RW_HOST_PATHS", "").split(os.pathsep) if r]
    roots = [os.path.realpath(r) for r in roots] + roots
    return any(real != r and _inside(real, r) for r in roots if r != "/")


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


def check_host_paths(job: JobModel, state: str | None = None, allow: bool = False) -> None:
    """Refuse hostPath mounts (and compose binds) of the host's system folders, the Docker
    socket and the like — and read-write ones outside the data roots — before anything
    is created (--allow-host-path lifts this); and missing ones (never created here)."""
    bad: list[str] = []
    missing: list[str] = []
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            for m in c.mounts:
                if m.kind == "bind" and m.host_path and allow:
                    if not os.path.exists(m.source):
                        name = r.display if c is r.main else f"{r.display}:{c.name}"
                        missing.append(f"{name}: {m.source}")
                    continue
                if m.kind == "bind" and m.host_path:
                    why = host_path_problem(m.source, m.read_only) or (state and in_state_folder(m.source, state))
                    if not why and not os.path.exists(m.source):
                        name = r.display if c is r.main else f"{r.display}:{c.name}"
                        missing.append(f"{name}: {m.source}")
                    if why:
                        name = r.display if c is r.main else f"{r.display}:{c.name}"
                        bad.append(f"{name} mounts host path {m.source} at {m.target} ({why})")
    if missing and not bad:
        raise UsageError("host path" + ("s" if len(missing) > 1 else "") + " not found: " + "; ".join(missing[:5])
                         + "; the emulator never creates host folders outside its state folder: create them first")
    if bad:
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise UsageError("refusing to mount host system paths into the job's containers: "
                         + "; ".join(bad[:5]) + more + ". A container that sees them can read the host's "
                         "secrets or take over the Docker daemon. Mount a data folder instead, or pass "
                         "--allow-host-path if you really mean it")


def host_path_problem(source: str, read_only: bool) -> str | None:
    why = denied_host_path(source)
    if why:
        return why
    real = os.path.realpath(source)
    if not read_only and not rw_allowed(real):
        return (f"read-write outside the data roots ({', '.join(RW_ROOTS)}, the current folder, your home's "
                "non-dot folders, $TRAINSPEC_RW_HOST_PATHS); mount it readOnly or add its root to "
                "TRAINSPEC_RW_HOST_PATHS")
    return None


# -- names that become host paths ---------------------------------------------------

def safe_name(name: object, what: str, where: str) -> str:
    """A claimName or compose volume name: it becomes one folder under the state folder."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise UsageError(f"{where}: {what} {name!r} is not a valid name; expected letters, digits, '-', '_', '.' "
                         "starting with a letter or digit (no '/', no '..'): it becomes a folder under the "
                         "emulator's state folder")
    return name


def safe_subpath(sub: object, where: str) -> str:
    """A volumeMount subPath: relative, no `..` (what the API server requires)."""
    if sub in (None, ""):
        return ""
    if not isinstance(sub, str) or sub.startswith("/") or "\0" in sub or ".." in sub.split("/"):
        raise UsageError(f"{where}: subPath {sub!r} is not allowed; expected a relative path without '..'")
    return os.path.normpath(sub)


def make_dir_inside(root: str, path: str) -> None:
    """mkdir -p `path`, which must be inside `root` (the state folder's volumes), never
    following a symlink on the way: a container may have planted one in a claim folder."""
    root_real = os.path.realpath(root)
    os.makedirs(root_real, exist_ok=True)
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if rel == ".":
        return
    if rel.startswith("..") or os.path.isabs(rel):
        raise UsageError(f"{path} is not inside {root}")
    cur = root_real
    for part in rel.split("/"):
        cur = os.path.join(cur, part)
        try:
            st = os.lstat(cur)
        except FileNotFoundError:
            os.mkdir(cur, 0o755)
            continue
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{cur} is a symlink or not a folder; the emulator creates volume folders only "
                             "inside its state folder and never through a link")


def resolve_bind(m: Mount, state: str, allow_host_path: bool) -> str:
    """The real path to hand Docker for a bind mount, checked as it is now (call it right
    before create and again right before start)."""
    real = os.path.realpath(m.source)
    if m.root:
        root = os.path.realpath(m.root)
        if not _inside(real, root) or root == "/":
            raise UsageError(f"volume folder {m.source} now leads to {real}, outside {root} (a symlink made "
                             "by a container?); refusing to mount it")
        return real
    if m.host_path and not allow_host_path:
        why = host_path_problem(real, m.read_only) or in_state_folder(m.source, state)
        if why:
            raise UsageError(f"refusing to mount host path {m.source} (resolved: {real}) at {m.target}: {why}")
    if not os.path.exists(real):
        raise UsageError(f"host path {m.source} does not exist; the emulator does not create host folders "
                         "outside its state folder: create it first")
    return real
