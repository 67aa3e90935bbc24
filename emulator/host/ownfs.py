"""trainspec's own folders and records: trusted only when trainspec made them.

The state folder (`.trainspec/` in the working folder, or --state-dir / $TRAINSPEC_STATE_DIR),
its `runs/<run-id>/` records and its `volumes/<name>/` folders are often inside a
repository someone else wrote. A repository can commit `.trainspec/volumes -> /` (every
named volume and claim would bind a host folder read-write), `.trainspec/runs -> ~`
(state and logs written anywhere), or a run record naming a folder for `gc` to remove.
So:
- the state folder's own name and every folder below it are opened one component at a
  time with O_NOFOLLOW from a directory descriptor (`own_dir`): a symlink anywhere on
  the way is refused, never followed, and each folder must belong to this user;
  the folder holding the state folder is the user's (resolved as it is);
- a record trainspec writes carries an HMAC-SHA256 made with a key only this user can
  read (`$XDG_STATE_HOME/trainspec/record.key`, else `~/.local/state/...`, 0600): a record
  without a valid one (a committed file, one written by hand or by an older trainspec)
  is refused (`sign` / `verify`);
- records are read with a size cap, O_NOFOLLOW, and any parse failure (deep nesting
  included) is a refusal, never a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from ...compiler.errors import UsageError

KEY_ENV = "TRAINSPEC_RECORD_KEY_DIR"   # where the record key lives (tests; a home that is read-only)
MAC_FIELD = "mac"
# A run record is a few KB (one line per replica, at most 100,000 replicas): anything larger is not ours.
RECORD_LIMIT = 64 * 1024 * 1024

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


# The key under which `refused` maps (find_runs, sweep) hold the state folder's own refusal:
# no folder is named "" (a run folder named `runs` is just a run folder).
FOLDER = ""


class Untrusted(UsageError):
    """A path or record under the state folder that trainspec did not make."""


def _why_link(path: str) -> str:
    try:
        return f"{path} is a symlink (to {os.readlink(path)})"
    except OSError:
        return f"{path} is a symlink or not a folder"


def _refuse(path: str, why: str) -> Untrusted:
    return Untrusted(f"{why}; trainspec keeps its own state only in folders it made and never follows a link "
                     "there (a repository may have committed it)",
                     hint=f"remove {path} (trainspec makes it again), or pass --state-dir with another folder")


def state_root(state: Path | str) -> tuple[str, str]:
    """(the folder holding the state folder, resolved as it is: the user's; the state folder's name)."""
    state = os.path.abspath(str(state))
    parent, name = os.path.split(state.rstrip("/") or "/")
    if not name:
        raise UsageError("the state folder may not be / itself")
    return os.path.realpath(parent), name


@contextlib.contextmanager
def own_dir_fd(state: Path | str, *parts: str, create: bool = True, mode: int = 0o700) -> Iterator[int]:
    """A descriptor for `state/parts...`, reached one component at a time without following a
    link, each folder this user's; missing ones made when `create` (0700; `mode` below
    `runs`/`volumes`). Untrusted when a component is a link, not a folder,
    or someone else's; FileNotFoundError when missing and not `create`."""
    parent, name = state_root(state)
    names = [name, *parts]
    for n in parts:
        if not n or n in (".", "..") or "/" in n or "\0" in n:
            raise UsageError(f"{n!r} is not a folder name trainspec makes under its state folder")
    if create:
        os.makedirs(parent, exist_ok=True)  # the folder the user named the state folder in: theirs
    fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    shown = parent
    try:
        for i, n in enumerate(names):
            shown = os.path.join(shown, n)
            if create:
                # the state folder, `runs` and `volumes` are private; below them, `mode`
                with contextlib.suppress(FileExistsError):
                    os.mkdir(n, 0o700 if i < 2 else mode, dir_fd=fd)
            try:
                nfd = os.open(n, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _refuse(shown, _why_link(shown)) from None
                raise
            os.close(fd)
            fd = nfd
            st = os.fstat(fd)
            if st.st_uid != os.geteuid():
                raise _refuse(shown, f"{shown} belongs to user {st.st_uid}, not to you")
        yield fd
    finally:
        os.close(fd)


def own_dir(state: Path | str, *parts: str, create: bool = True, mode: int = 0o700) -> Path:
    """`state/parts...` checked (and made) as own_dir_fd does; the path, with no link in it."""
    with own_dir_fd(state, *parts, create=create, mode=mode):
        parent, name = state_root(state)
        return Path(parent, name, *parts)



def run_folders(state: Path, refused: dict[str, str] | None = None) -> list[Path]:
    """The run folders under `state`/runs, sorted by name: none when it does not exist, or when it is
    not this user's own folder (then `refused[FOLDER]` says why). What each run folder holds is its
    reader's to check (state.find_runs, filesvol.sweep)."""
    try:
        runs = own_dir(state, "runs", create=False)
    except FileNotFoundError:
        return []
    except Untrusted as exc:
        if refused is not None:
            refused[FOLDER] = str(exc)
        return []
    except OSError as exc:  # e.g. another user's folder this user may not open
        if refused is not None:
            refused[FOLDER] = f"{state} cannot be read ({exc.strerror})"
        return []
    return sorted(runs.iterdir())

def check_state(state: Path | str) -> None:
    """Before a run creates anything: the state folder, its `runs` and `volumes` are not links
    (nor someone else's) where they exist already."""
    for parts in ((), ("runs",), ("volumes",)):
        try:
            own_dir(state, *parts, create=False)
        except FileNotFoundError:
            pass


def inside_state(state: Path | str, path: str) -> list[str] | None:
    """`path`'s components below the state folder (None when it is not below it)."""
    parent, name = state_root(state)
    root = os.path.join(parent, name)
    full = os.path.abspath(path)
    for base in (root, os.path.abspath(str(state))):
        rel = os.path.relpath(full, base)
        if rel == ".":
            return []
        if not rel.startswith("..") and not os.path.isabs(rel):
            return rel.split("/")
    return None


def open_own_file(folder: int, name: str, flags: int, mode: int = 0o600) -> int:
    """A file in one of trainspec's folders (a descriptor from own_dir_fd), never through a link."""
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=folder)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Untrusted(f"{name} in trainspec's state folder is a symlink; refusing to follow it") from None
        raise


def write_own_file(state: Path | str, parts: tuple[str, ...], name: str, data: bytes, mode: int = 0o600) -> None:
    """Write `state/parts/name` atomically (a temporary file, then rename), never through a link."""
    with own_dir_fd(state, *parts) as folder:
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        fd = open_own_file(folder, tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)


def read_own_file(state: Path | str, parts: tuple[str, ...], name: str, limit: int = RECORD_LIMIT) -> bytes:
    """Read `state/parts/name`, never through a link, at most `limit` bytes (more: Untrusted)."""
    with own_dir_fd(state, *parts, create=False) as folder:
        fd = open_own_file(folder, name, os.O_RDONLY)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                raise Untrusted(f"{name} under {'/'.join(parts)} is not a file of yours")
            if st.st_size > limit:
                raise Untrusted(f"{name} under {'/'.join(parts)} is {st.st_size} bytes, more than a record "
                                f"trainspec writes ({limit})")
            chunks, left = [], limit + 1
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            data = b"".join(chunks)
            if len(data) > limit:
                raise Untrusted(f"{name} under {'/'.join(parts)} is larger than a record trainspec writes")
            return data
        finally:
            os.close(fd)


# -- records' signatures -------------------------------------------------------------

def _key_dir() -> Path:
    explicit = os.environ.get(KEY_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "trainspec"


_KEY: dict[str, bytes] = {}


def record_key() -> bytes:
    """This user's key for records (made once, 0600, in a 0700 folder of their home)."""
    folder = _key_dir()
    if str(folder) in _KEY:
        return _KEY[str(folder)]
    path = folder / "record.key"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            tmp = folder / f".record.key.{secrets.token_hex(4)}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            try:
                os.write(fd, secrets.token_hex(32).encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(tmp, path)  # atomic, and never over a key another process made first
            except FileExistsError:
                pass
            finally:
                os.unlink(tmp)
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            st = os.fstat(fd)
            if st.st_uid != os.geteuid() or st.st_mode & 0o077:
                raise UsageError(f"{path} is readable by others or not yours; trainspec signs its run records "
                                 "with it", hint=f"remove it (trainspec makes a new one), or set {KEY_ENV}")
            key = os.read(fd, 4096).strip()
        finally:
            os.close(fd)
    except OSError as exc:
        raise UsageError(f"cannot keep the key trainspec signs its run records with in {folder} "
                         f"({exc.strerror})", hint=f"set XDG_STATE_HOME or {KEY_ENV} to a folder of yours") from None
    if len(key) < 32:
        raise UsageError(f"{path} is not a key trainspec made", hint="remove it; trainspec makes a new one")
    _KEY[str(folder)] = key
    return key


def _canonical(data: dict) -> bytes:
    return json.dumps({k: v for k, v in data.items() if k != MAC_FIELD}, indent=2, sort_keys=True).encode()


def sign(data: dict) -> bytes:
    """The record as written: its JSON with a MAC over everything else."""
    mac = hmac.new(record_key(), _canonical(data), hashlib.sha256).hexdigest()
    return json.dumps({**data, MAC_FIELD: mac}, indent=2, sort_keys=True).encode()


def verify(raw: bytes, what: str) -> dict:
    """The record `raw` if trainspec wrote it with this user's key; else Untrusted, saying why."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise Untrusted(f"{what} is not a record trainspec wrote (not JSON)") from None
    if not isinstance(data, dict) or not isinstance(data.get(MAC_FIELD), str):
        raise Untrusted(f"{what} is not a record trainspec wrote (it has no signature: written by hand, committed "
                        "to a repository, or by an older trainspec that did not sign its records)")
    try:
        expected = hmac.new(record_key(), _canonical(data), hashlib.sha256).hexdigest()
    except (ValueError, TypeError, RecursionError):
        raise Untrusted(f"{what} is not a record trainspec wrote") from None
    if not hmac.compare_digest(expected, data[MAC_FIELD]):
        raise Untrusted(f"{what} is not a record trainspec wrote for you (its signature does not match)")
    return {k: v for k, v in data.items() if k != MAC_FIELD}
