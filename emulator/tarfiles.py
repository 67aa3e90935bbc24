"""configMap/secret volumes as a tar archive, sent straight into a created container."""

from __future__ import annotations

import io
import tarfile
import time

from .runmodel import Mount


def files_tar(mounts: list[Mount]) -> bytes:
    """configMap/secret volumes as files, sent straight into the container:
    secret values never touch this machine's disk."""
    buf = io.BytesIO()
    now = time.time()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        dirs: set[str] = set()

        def add_dir(path: str) -> None:
            parts = path.strip("/").split("/")
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                if d and d not in dirs:
                    dirs.add(d)
                    info = tarfile.TarInfo(d)
                    info.type = tarfile.DIRTYPE
                    info.mode = 0o700 if d.endswith(".ssh") else 0o755
                    info.mtime = now
                    tar.addfile(info)

        for m in mounts:
            for f in m.files:
                path = m.target.strip("/") if m.single_file else f"{m.target.strip('/')}/{f.path}"
                add_dir(path.rsplit("/", 1)[0] if "/" in path else "")
                info = tarfile.TarInfo(path)
                info.size = len(f.data)
                info.mode = f.mode
                info.mtime = now
                tar.addfile(info, io.BytesIO(f.data))
    return buf.getvalue()

