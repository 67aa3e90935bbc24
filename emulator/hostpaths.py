"""Which host folders a job may mount: the denylist, checked before anything is created."""

from __future__ import annotations

import os

from ..compiler.errors import UsageError
from .runmodel import JobModel

# Mounting any of these (or anything inside them) hands a container the host: its
# configuration and credentials, kernel interfaces, devices, or the Docker daemon itself
# (the socket, or its state). Anything that *contains* one of them (/, /var, /run...) too.
DENIED_TREES = ("/etc", "/proc", "/sys", "/dev", "/boot", "/var/lib/docker", "/var/lib/containerd",
                "/var/lib/kubelet", "/run/docker", "/run/docker.sock", "/run/containerd", "/var/run/docker.sock")
# These are refused as a whole; a folder inside them (e.g. /home/me/data) is fine.
DENIED_EXACT = ("/home", "/root", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/tmp", "/var/tmp")
# Credentials under a home folder (the user's own and root's): refused with all inside them.
HOME_SECRETS = (".ssh", ".docker", ".kube", ".aws", ".gnupg", ".config/gcloud", ".netrc")
SOCKETS = ("docker.sock", "containerd.sock", "podman.sock", "dockershim.sock", "crio.sock")


def denied_host_path(path: str) -> str | None:
    """Why mounting `path` from the host is refused (None: it is fine). The path is
    resolved first — symlinks and `..` — so `/data/../etc` or a link to the Docker
    socket are caught too."""
    plain = os.path.normpath("/" + (path or "/")).replace("//", "/")
    try:
        real = os.path.realpath(plain)
    except OSError:  # e.g. a /proc link we may not follow: judge the path as written
        real = plain
    if real != plain:
        why = denied_host_path(real)  # both the path as written and where it leads
        if why:
            return why
        real = plain
    if real == "/":
        return "it is the host's whole filesystem"
    homes = {"/root", os.path.realpath(os.path.expanduser("~"))} - {"/"}
    trees = [os.path.realpath(t) for t in DENIED_TREES] + list(DENIED_TREES)
    trees += [os.path.join(h, s) for h in homes for s in HOME_SECRETS]
    host = os.environ.get("DOCKER_HOST", "")
    if host.startswith("unix://"):
        trees.append(os.path.realpath(host[len("unix://"):]))
    for tree in trees:
        if real == tree or real.startswith(tree.rstrip("/") + "/"):
            return f"it is {tree}" if real == tree else f"it is inside {tree}"
        if tree.startswith(real.rstrip("/") + "/"):
            return f"it contains {tree}"
    if real in {os.path.realpath(e) for e in DENIED_EXACT} | set(DENIED_EXACT) | homes:
        return f"it is all of {real}"
    if os.path.basename(real) in SOCKETS:
        return "it is a container runtime's socket"
    return None


def check_host_paths(job: JobModel) -> None:
    """Refuse hostPath mounts (and compose binds) of the host's system folders, the Docker
    socket and the like, before anything is created; --allow-host-path lifts this."""
    bad = []
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            for m in c.mounts:
                if m.kind == "bind" and m.host_path:
                    why = denied_host_path(m.source)
                    if why:
                        name = r.display if c is r.main else f"{r.display}:{c.name}"
                        bad.append(f"{name} mounts host path {m.source} at {m.target} ({why})")
    if bad:
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise UsageError("refusing to mount host system paths into the job's containers: "
                         + "; ".join(bad[:5]) + more + ". A container that sees them can read the host's "
                         "secrets or take over the Docker daemon. Mount a data folder instead, or pass "
                         "--allow-host-path if you really mean it")

