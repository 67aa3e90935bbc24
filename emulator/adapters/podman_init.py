"""Which init binary Podman's `--init` will run, found before any container is created.

Every container is made with `init` (a Python PID 1 ignores SIGTERM). Podman bind-mounts its
init binary into the container; it looks for it as containers/common's Config.FindInitBinary does:
`init_path` under [containers] (or [engine]) in containers.conf, else /usr/libexec/podman/catatonit,
else `catatonit` in `helper_binaries_dir`. Debian only *recommends* catatonit, so a host with
Docker installed (docker.io ships /usr/bin/docker-init, a static tini) often has no catatonit and
every container fails at create ("container-init binary not found"). So: Podman's own init when
it finds one; else another init this host has — tini, dumb-init — passed to each container as
its init_path (libpod's API: the compatible one has no such field); else a UsageError saying what
to install, before anything is made. A static binary is preferred: it is mounted into images
whose C library may differ from the host's.
"""

from __future__ import annotations

import glob
import os
import re
import shutil

DEFAULT_INIT = "/usr/libexec/podman/catatonit"
HELPER_DIRS = ("/usr/local/libexec/podman", "/usr/local/lib/podman", "/usr/libexec/podman", "/usr/lib/podman")
# Inits that take `INIT -- PROGRAM ARGS...` as Podman runs them: static ones first.
OTHER_INITS = ("catatonit", "tini-static", "docker-init", "dumb-init", "tini")
SEARCH = ("/usr/bin", "/usr/local/bin", "/usr/sbin", "/bin", "/usr/libexec/docker")


def conf_files(environ: dict[str, str] | None = None) -> list[str]:
    """containers.conf files in the order Podman reads them (later ones win)."""
    env = os.environ if environ is None else environ
    if env.get("CONTAINERS_CONF"):
        return [env["CONTAINERS_CONF"]]
    files = ["/usr/share/containers/containers.conf", "/etc/containers/containers.conf",
             *sorted(glob.glob("/etc/containers/containers.conf.d/*.conf"))]
    if os.geteuid() != 0:
        home = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        files += [os.path.join(home, "containers", "containers.conf"),
                  *sorted(glob.glob(os.path.join(home, "containers", "containers.conf.d", "*.conf")))]
    return files


_SECTION = re.compile(r"^\s*\[([A-Za-z_.]+)\]\s*$")
_INIT_PATH = re.compile(r"""^\s*init_path\s*=\s*["']([^"']*)["']""")
_HELPERS = re.compile(r"""^\s*helper_binaries_dir\s*=\s*\[([^\]]*)\]""", re.M)


def read_conf(files: list[str]) -> tuple[str, list[str]]:
    """(init_path, helper_binaries_dir) as the files set them ("" / [] when none does)."""
    init_path, helpers = "", []
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read(1 << 20)
        except OSError:
            continue
        section = ""
        for line in text.splitlines():
            m = _SECTION.match(line)
            if m:
                section = m.group(1)
                continue
            m = _INIT_PATH.match(line)
            if m and section in ("containers", "engine"):
                init_path = m.group(1)
        for m in _HELPERS.finditer(text):
            helpers = re.findall(r"""["']([^"']+)["']""", m.group(1))
    return init_path, helpers


def is_static(path: str) -> bool:
    """An ELF executable without a program interpreter (PT_INTERP): runs in any image."""
    import struct

    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2:  # 64-bit only; others: not judged static
                return False
            little = head[5] == 1
            fmt = "<" if little else ">"
            phoff, = struct.unpack(fmt + "Q", head[32:40])
            phentsize, phnum = struct.unpack(fmt + "HH", head[54:58])
            f.seek(phoff)
            table = f.read(phentsize * phnum)
    except (OSError, struct.error, IndexError):
        return False
    for i in range(phnum):
        kind, = struct.unpack(fmt + "I", table[i * phentsize:i * phentsize + 4])
        if kind == 3:  # PT_INTERP
            return False
    return True


def podman_init(files: list[str] | None = None, search: tuple[str, ...] = SEARCH,
                default: str = DEFAULT_INIT, helper_dirs: tuple[str, ...] = HELPER_DIRS) -> tuple[str | None, str]:
    """(None, "") when Podman finds its own init; (path, "") for another init to pass as each
    container's init_path; (None, what to install) when there is none."""
    init_path, helpers = read_conf(conf_files() if files is None else files)
    if init_path:
        if os.path.isfile(init_path):
            return None, ""
        looked = f"init_path {init_path} (containers.conf)"
    else:
        if os.path.isfile(default):
            return None, ""
        for d in helpers or helper_dirs:
            if os.path.isfile(os.path.join(d, "catatonit")):
                return None, ""
        looked = f"{default} and catatonit in {', '.join(helpers or helper_dirs)}"
    found = []
    for name in OTHER_INITS:
        for d in search:
            path = os.path.join(d, name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                found.append(os.path.realpath(path))
        which = shutil.which(name)
        if which:
            found.append(os.path.realpath(which))
    static = [p for p in found if is_static(p)]
    if static:
        return static[0], ""
    return None, (f"Podman's --init finds no init binary (it looked for {looked}) and this host has no "
                  "static one to use instead" + (f" ({', '.join(dict.fromkeys(found))} need the host's C "
                                                  "library, which an image may lack)" if found else "")
                  + ": install catatonit (`sudo apt-get install catatonit`) or tini's static build "
                  "(`sudo apt-get install tini`, which ships /usr/bin/tini-static), or set init_path in "
                  "/etc/containers/containers.conf")
