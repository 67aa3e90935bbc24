"""`trainspec run --detach`: check everything in the foreground, then supervise the run
from a forked background process; plus hiding `--secret` values from the process list."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

from ...compiler.errors import UsageError
from .reporter import Reporter


def detach(args, run, background_reporter: Callable[[], Reporter]) -> int:
    """Check everything here (so errors show now), then supervise from a background process.

    The supervisor is this process, forked once everything is checked: no second
    interpreter start, no second compile, no second round of checks, and nothing
    (secrets included) has to travel through argv. The parent returns once every
    replica has started (left Pending) — or with the run's error — told through a pipe.
    `background_reporter` makes the supervisor's reporter, once its output goes to supervisor.log.
    """
    from ..host.state import make_run_dir

    run.prepare()
    make_run_dir(run.state, run.run_id)
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the supervisor
        os.close(read_fd)
        code = 70
        try:
            code = _supervise_detached(run, write_fd, background_reporter)
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    os.close(write_fd)
    message = _read_notice(read_fd, timeout=120)
    if message is None:
        print(f"trainspec: {run.run_id} is still starting after 120s; see `trainspec ps {run.run_id}`",
              file=sys.stderr)
    elif message.startswith("error "):
        _reap(pid)
        raise UsageError(message[len("error "):])
    elif message.startswith("exited"):
        _reap(pid)
        tail = (run.dir / "supervisor.log").read_text(errors="replace").strip().splitlines()[-5:]
        raise UsageError("the background run failed to start: " + " / ".join(tail))
    print(run.run_id)
    print(f"trainspec: running in the background; `trainspec ps {run.run_id}`, "
          f"`trainspec logs {run.run_id} -f`, `trainspec down {run.run_id}`", file=sys.stderr)
    return 0


def _supervise_detached(run, notify_fd: int, background_reporter: Callable[[], Reporter]) -> int:
    """In the forked child: detach from the terminal, log to supervisor.log, run."""
    import signal
    import threading

    from ..host.state import supervisor_id

    os.setsid()  # no terminal signals; `trainspec down` sends SIGTERM
    retitle(f"trainspec run supervisor {run.run_id}")  # the CLI's argv may hold --secret values
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    log = os.open(run.dir / "supervisor.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(null)
    os.close(log)
    run.supervisor = supervisor_id()  # this process, not the CLI that forked it
    run.opts.quiet = True
    run.reporter = background_reporter()
    notified = threading.Event()

    def notify(text: str) -> None:
        if not notified.is_set():
            notified.set()
            try:
                os.write(notify_fd, (text + "\n").encode())
                os.close(notify_fd)
            except OSError:
                pass

    def when_started() -> None:
        run.all_started.wait()
        if run.fatal is None:
            notify("started")

    threading.Thread(target=when_started, daemon=True).start()
    try:
        run.client = run.client.reconnect(len(run.job.replicas))  # a fresh connection pool, not the parent's
        code = run.execute()
        notify("started")
        return code
    except UsageError as exc:
        print(f"trainspec: error: {exc}", file=sys.stderr)
        notify("error " + str(exc).replace("\n", " "))
        return 2
    except BaseException:  # noqa: BLE001 - logged, the parent says where
        import traceback

        traceback.print_exc()
        notify("exited")
        return 70


def retitle(title: str) -> None:
    """Overwrite this process's command line (what `ps` and /proc/PID/cmdline show) — the forked
    supervisor inherits the CLI's, `--secret NAME:KEY=VALUE` included. Linux: the kernel shows
    the memory between arg_start and arg_end (/proc/self/stat fields 48-49), as setproctitle does."""
    import ctypes

    with open("/proc/self/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    start, end = int(fields[45]), int(fields[46])
    size = end - start
    if size <= 1:
        return
    data = title.encode()[:size - 1]
    ctypes.memset(start, 0, size)
    ctypes.memmove(start, data, len(data))


def _read_notice(fd: int, timeout: float) -> str | None:
    """The supervisor's first line, or "exited" if it died without one; None on timeout."""
    import select

    data = b""
    deadline = time.monotonic() + timeout
    try:
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                return data.decode(errors="replace").strip() or "exited"
            data += chunk
    finally:
        os.close(fd)
    return data.split(b"\n", 1)[0].decode(errors="replace")


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
