"""Shared by the emulator's Docker tests: run the real CLI, edit test specs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
SPECS = HERE / "specs"


def trainspec(*args: str, cwd: Path, timeout: float = 180, env: dict | None = None) -> subprocess.CompletedProcess:
    """The CLI as a user runs it (a fresh process, real exit code and output)."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "trainspec", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=full_env)


def start(*args: str, cwd: Path, env: dict | None = None) -> subprocess.Popen:
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    # SIGINT back to its default: a background child of a non-interactive shell ignores it.
    return subprocess.Popen([sys.executable, "-m", "trainspec", *map(str, args)], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=full_env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def spec(name: str, tmp: Path, edit=None, out: str | None = None) -> Path:
    """A copy of tests/emulator/specs/<name> after `edit(doc)`."""
    doc = yaml.safe_load((SPECS / name).read_text())
    if edit:
        edit(doc)
    path = tmp / (out or name)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def wait_for(predicate, timeout: float = 60, what: str = "condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def run_containers(client, job: str, state: Path, **labels: str) -> list:
    """The containers of a job's runs started from `state` (a test's tmp_path)."""
    filters = [f"trainspec.dev/job={job}", f"trainspec.dev/state-dir={state / '.trainspec'}"]
    filters += [f"trainspec.dev/{k}={v}" for k, v in labels.items()]
    return client.containers.list(all=True, filters={"label": filters})


def norm(out: str) -> str:
    """Names are padded to the longest replica name: `worker-0   | x` → `worker-0 | x`,
    `trainspec: ps-0     ready` → `trainspec: ps-0 ready`."""
    import re

    out = re.sub(r" +\|", " |", out)
    return re.sub(r"^(trainspec: \S+) +", r"\1 ", out, flags=re.M)


def layered_image(client, base: str, tag: str, files: dict[str, bytes], changes: list[str] | None = None,
                  executable: tuple[str, ...] = ()) -> str:
    """`base` plus `files` (path -> content; `executable` paths get mode 0755), committed locally as
    trainspec-test:<tag>: no registry, no build. `changes` are Dockerfile lines (ENV ...)."""
    import hashlib
    import io
    import tarfile

    import docker.errors

    recipe = hashlib.sha256(repr((client.images.get(base).id, sorted(files.items()), changes,
                                  sorted(executable))).encode()).hexdigest()[:16]
    try:  # the same layer on the same base is committed once, not left dangling by every session
        if client.images.get(f"trainspec-test:{tag}").labels.get("trainspec.dev/layer") == recipe:
            return f"trainspec-test:{tag}"
    except docker.errors.ImageNotFound:
        pass
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size = len(data)
            info.mode = 0o755 if path in executable else 0o644
            tar.addfile(info, io.BytesIO(data))
    c = client.containers.create(base, "true")
    try:
        c.put_archive("/", buf.getvalue())
        c.commit(repository="trainspec-test", tag=tag, changes=[*(changes or []), f"LABEL trainspec.dev/layer={recipe}"])
    finally:
        c.remove(force=True)
    return f"trainspec-test:{tag}"


def sshd_image(client, base: str, strict: bool) -> str:
    """`base` with sshd's StrictModes set explicitly (a drop-in in sshd_config.d, which
    Debian's sshd_config includes first), committed locally: no registry, no build.
    mpi-operator's images set `StrictModes no`: a Secret volume's folder is world-writable."""
    conf = f"StrictModes {'yes' if strict else 'no'}\n".encode()
    return layered_image(client, base, f"sshd-strict-{'yes' if strict else 'no'}",
                         {"etc/ssh/sshd_config.d/zz-trainspec-strictmodes.conf": conf})
