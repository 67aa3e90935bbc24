"""configMap and secret volumes as read-only files on a tmpfs, never on a disk.

Each run gets one folder on a tmpfs (/dev/shm, else $XDG_RUNTIME_DIR, or
$TRAINSPEC_FILES_DIR), named with a random token and mode 0711 so other users of
the machine cannot list or guess it. Every files mount is written there and
bind-mounted read-only into its container: nothing lands in the container's
writable layer (which is on the host's disk), and a read-only root filesystem
works too. The folder is removed with the run's containers (docker_backend.remove_run
finds it through a container label); --keep keeps it until `trainspec down`.

Before the folder is made, its path is recorded in the run's folder (`files-dir`, with the
supervising process), so a CLI killed with SIGKILL at any moment — before any container
carried the label, or between two writes — leaves a record `trainspec gc` finds (`sweep`).

The layout and modes are the kubelet's (pkg/volume/util/atomic_writer.go, and the
emptyDir that wraps secret and configMap volumes, pkg/volume/emptydir): the mount
point is world-writable (a Secret's tmpfs `drwxrwxrwt`, a ConfigMap's `drwxrwxrwx`),
the files live in a timestamped folder `..2026_11_23_14_26_24.123456789` (0755),
`..data` is a symlink to it, and every top-level path is a symlink `..data/<path>`;
each file has its item's `mode`, else `defaultMode` (0644). So an image whose sshd
keeps `StrictModes yes` is refused the keys here as on a cluster ("bad ownership or
modes for directory /root/.ssh"). Compose input keeps plain folders (0755, or 0700
for a `.ssh` folder): what `docker compose` bind-mounts from the host.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import shutil
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ...compiler.errors import UsageError
from ...compiler.limits import MAX_TMPFS_BYTES
from ..model.job import JobModel, Mount
from .ownfs import Untrusted, own_dir_fd, read_own_file, run_folders, sign, verify, write_own_file

RECORD = "files-dir"

ROOT_ENV = "TRAINSPEC_FILES_DIR"
PREFIX = "trainspec-files-"
LABEL = "trainspec.dev/files-dir"
_TMPFS = ("tmpfs", "ramfs")


def _fstype(path: str) -> str | None:
    real = os.path.realpath(path)
    best, kind = "", None
    try:
        with open("/proc/mounts", encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) < 3:
                    continue
                point = parts[1].replace("\\040", " ")
                if (real == point or real.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
                    best, kind = point, parts[2]
    except OSError:
        return None
    return kind


def tmpfs_root() -> str:
    explicit = os.environ.get(ROOT_ENV)
    candidates = [explicit] if explicit else ["/dev/shm", os.environ.get("XDG_RUNTIME_DIR", "")]
    for c in candidates:
        if c and os.path.isdir(c) and _fstype(c) in _TMPFS:
            return c
    raise UsageError("configMap/secret volumes are kept on a tmpfs, never on disk, and no tmpfs folder was found "
                     f"({explicit or '/dev/shm, $XDG_RUNTIME_DIR'}); set {ROOT_ENV} to a folder on a tmpfs")


class FilesDir:
    """One run's tmpfs folder; made on first use."""

    def __init__(self, run_id: str, kubelet: bool = True, record: str | None = None,
                 supervisor: Callable[[], str] | None = None):
        self.run_id = run_id
        self.kubelet = kubelet   # the kubelet's atomic-writer layout and modes (k8s input)
        self.path: str | None = None
        self._seq = itertools.count(1)  # a fresh folder for every container created (restarts too)
        self.record = record     # where the folder's path is written before it is made (gc's way to it)
        self.supervisor = supervisor or (lambda: "")
        self._lock = threading.Lock()  # replicas' runners create containers at once: one folder, one record
        self._latest: dict[str, tuple[str, int]] = {}  # label -> (its folder, bytes): a restart replaces it
        self.written = 0  # bytes on the tmpfs now (MAX_TMPFS_BYTES)

    def ensure(self) -> str:
        with self._lock:
            return self._ensure()

    def _ensure(self) -> str:
        if self.path is None:
            path = os.path.join(tmpfs_root(), f"{PREFIX}{self.run_id}-{secrets.token_hex(8)}")
            if self.record:
                write_record(self.record, path, self.supervisor())
            os.mkdir(path, 0o711)
            os.chmod(path, 0o711)
            self.path = path
        return self.path

    def write(self, label: str, m: Mount) -> str:
        """Write one mount's files; the host path to bind (a folder, or one file). The container created
        before under `label` (a restart's predecessor, exited) no longer needs its files: they go, so a
        run's bytes on the tmpfs stay what its containers hold (checked before the run by check_size)."""
        size = mount_bytes(m)
        with self._lock:
            before = self._latest.get(f"{label}\0{m.target}")
            freed = before[1] if before else 0
            if self.written - freed + size > MAX_TMPFS_BYTES:
                raise UsageError(f"{label}: the ConfigMap and Secret files of this run would take over "
                                 f"{MAX_TMPFS_BYTES} bytes of the host's memory (/dev/shm)",
                                 expected=f"at most {MAX_TMPFS_BYTES} bytes (compiler/limits.py MAX_TMPFS_BYTES)")
            if before:
                remove_inside(self.path, before[0])
            self.written += size - freed
        dest = os.path.join(self.ensure(), f"{label}-{next(self._seq)}")
        with self._lock:
            self._latest[f"{label}\0{m.target}"] = (dest, size)
        if m.single_file:
            data, mode = (m.files[0].data, m.files[0].mode) if m.files else (b"", 0o644)
            _write(dest, data, mode)
            return dest
        if self.kubelet:
            return _atomic_layout(dest, m)
        os.mkdir(dest, 0o700 if m.target.rstrip("/").endswith(".ssh") else 0o755)
        for f in m.files:
            rel = _relative(m, f.path)
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), 0o755, exist_ok=True)
            _write(os.path.join(dest, rel), f.data, f.mode)
        return dest

    def remove(self) -> None:
        if self.path is not None:
            remove(self.path, self.run_id)
        if self.record:
            run = Path(self.record).parent
            with contextlib.suppress(OSError, Untrusted), own_dir_fd(run.parent.parent, "runs", run.name,
                                                                     create=False) as fd:
                os.unlink(RECORD, dir_fd=fd)


# The mount point's mode: the emptyDir that wraps the volume is made 0777 (empty_dir.go,
# `perm os.FileMode = 0777`); a Secret's is a tmpfs, whose root also keeps the sticky bit.
SECRET_DIR_MODE = 0o1777
CONFIGMAP_DIR_MODE = 0o777


def _atomic_layout(dest: str, m: Mount) -> str:
    """What the kubelet's AtomicWriter leaves in a secret/configMap volume."""
    os.mkdir(dest, 0o700)
    stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime()) + f"{time.time_ns() % 1_000_000_000:09d}"
    ts_dir = os.path.join(dest, stamp)
    os.mkdir(ts_dir, 0o755)
    os.chmod(ts_dir, 0o755)
    tops: list[str] = []
    for f in m.files:
        rel = _relative(m, f.path)
        parent = os.path.dirname(os.path.join(ts_dir, rel))
        os.makedirs(parent, 0o755, exist_ok=True)
        _write(os.path.join(ts_dir, rel), f.data, f.mode)
        top = rel.split("/", 1)[0]
        if top not in tops:
            tops.append(top)
    os.symlink(stamp, os.path.join(dest, "..data"))
    for top in tops:
        os.symlink(f"..data/{top}", os.path.join(dest, top))
    os.chmod(dest, SECRET_DIR_MODE if m.secret else CONFIGMAP_DIR_MODE)
    return dest


def mount_bytes(m: Mount) -> int:
    """The bytes a files mount writes to the tmpfs (a subPath mount: its one file)."""
    if m.single_file:
        return len(m.files[0].data) if m.files else 0
    return sum(len(f.data) for f in m.files)


def check_size(job: JobModel) -> None:
    """Before anything starts: every container's ConfigMap and Secret files together within
    MAX_TMPFS_BYTES (they are written to the host's /dev/shm, memory outside any container's limit:
    a 1 MB ConfigMap mounted by every container of every replica is that many copies)."""
    total, biggest, where = 0, 0, ""
    for r in job.replicas:
        for c in [*r.init_containers, r.main]:
            for m in c.mounts:
                if m.kind != "files":
                    continue
                size = mount_bytes(m)
                total += size
                if size > biggest:
                    biggest, where = size, f"{m.source or 'a volume'} at {m.target} in {r.display} ({c.name})"
    if total > MAX_TMPFS_BYTES:
        raise UsageError(f"the run's ConfigMap and Secret files would take {total} bytes of the host's memory "
                         f"(/dev/shm: every mount of every container is its own copy; the largest, {where}, "
                         f"is {biggest} bytes)", expected=f"at most {MAX_TMPFS_BYTES} bytes "
                         "(compiler/limits.py MAX_TMPFS_BYTES)",
                         hint="mount large data from a claim (--claim) or bake it into the image; "
                         "mount a ConfigMap in fewer containers or with `items` that pick the keys needed")


def remove_inside(root: str | None, path: str) -> None:
    """Remove one folder or file this module wrote under the run's folder `root` (never anything else)."""
    if not root or os.path.dirname(path) != root:
        return
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except OSError:
        pass


def _relative(m: Mount, path: str) -> str:
    rel = os.path.normpath(path)
    if rel.startswith(("/", "..")) or rel == ".":
        raise UsageError(f"{m.source}: item path {path!r} is not allowed; expected a relative path without '..'")
    return rel


def _write(path: str, data: bytes, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.chmod(path, mode & 0o777)


def owned_files_dir(path: str, run_id: str | None = None) -> str | None:
    """Why `path` is not a files folder this user's run made (None: it is one): directly in a
    tmpfs root, named PREFIX<run id>-<16 hex digits>, a real folder (not a link), this user's."""
    name = os.path.basename(path.rstrip("/"))
    parent = os.path.dirname(path.rstrip("/"))
    if not name.startswith(PREFIX) or not os.path.isabs(path):
        return f"{path} is not named {PREFIX}..."
    rest = name[len(PREFIX):]
    rid, _, token = rest.rpartition("-")
    if len(token) != 16 or any(c not in "0123456789abcdef" for c in token) or (run_id is not None and rid != run_id):
        return f"{path} is not the files folder of run {run_id or rid}"
    if _fstype(parent) not in _TMPFS or os.path.realpath(parent) != os.path.normpath(parent):
        return f"{path} is not directly in a tmpfs folder"
    try:
        st = os.lstat(path)
    except OSError:
        return None  # gone already: nothing will be removed
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is a link or not a folder"
    if st.st_uid != os.geteuid():
        return f"{path} belongs to user {st.st_uid}, not to you"
    return None


def remove(path: str, run_id: str | None = None) -> None:
    """Remove a run's files folder — only ever one this module made (owned_files_dir)."""
    if not path or owned_files_dir(path, run_id) is not None:
        return
    shutil.rmtree(path, ignore_errors=True)


def write_record(record: str, path: str, supervisor: str) -> None:
    """The folder's path and its run's supervisor, signed and synced before the folder exists;
    `record` is `<state>/runs/<run id>/files-dir`, written never through a link (ownfs.py)."""
    folder = Path(record).parent
    write_own_file(folder.parent.parent, ("runs", folder.name), RECORD,
                   sign({"path": path, "supervisor": supervisor, "run_id": folder.name}))


def read_record(run: Path) -> tuple[str, str]:
    """(folder, supervisor) from a run folder's record; Untrusted / FileNotFoundError otherwise."""
    data = verify(read_own_file(run.parent.parent, ("runs", run.name), RECORD), str(run / RECORD))
    path, supervisor = data.get("path"), data.get("supervisor", "")
    if not isinstance(path, str) or not isinstance(supervisor, str) or data.get("run_id") != run.name:
        raise Untrusted(f"{run / RECORD} is not a files-folder record of run {run.name}")
    return path, supervisor


def sweep(state: Path, alive: Callable[[str, str], bool], dry_run: bool = False,
          refused: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """Files folders recorded under `state`'s runs whose run is not alive (`alive(run_id,
    supervisor)`): removed (unless dry_run). Only records trainspec signed, naming a folder of
    this user's run (owned_files_dir), count; the others go to `refused` (run folder -> why).
    Returns (run id, folder) for each."""
    out: list[tuple[str, str]] = []
    for d in run_folders(state, refused):
        try:
            path, supervisor = read_record(d)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except (Untrusted, OSError) as exc:
            if refused is not None:
                refused[d.name] = str(exc)
            continue
        why = owned_files_dir(path, d.name)
        if why:
            if refused is not None:
                refused[d.name] = f"{d / RECORD} names {why}"
            continue
        if alive(d.name, supervisor):
            continue
        if os.path.lexists(path):   # else removed already (the run's end, `down`): only the record is stale
            out.append((d.name, path))
        if not dry_run:
            remove(path, d.name)
            with contextlib.suppress(OSError, Untrusted), own_dir_fd(state, "runs", d.name, create=False) as fd:
                os.unlink(RECORD, dir_fd=fd)
    return out
