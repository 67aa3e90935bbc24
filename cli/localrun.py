"""`trainspec.run`: a local run started from Python, going on in a thread of this process (docs/api.md).

The run is `trainspec run`'s own: the options go through the CLI's parser (the same defaults), the input
is checked and the run built by the emulator's `build_run`, and `LocalRun` reads what the run records
(its state file and saved logs, as `trainspec ps` and `logs` do).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TextIO

from trainspec.compiler.errors import Error, UsageError


class ReplicaStatus(NamedTuple):
    name: str
    phase: str  # Pending, Running, Succeeded, Failed...
    ready: bool
    restarts: int
    exit_code: int | None
    reason: str


class RunStatus(NamedTuple):
    run_id: str
    job: str
    status: str  # Pending until the run records itself, then Running, Succeeded, Failed, Interrupted, Error...
    reason: str
    replicas: tuple[ReplicaStatus, ...]


class LocalRun:
    """A job running on the local container engine, in a thread of this process (`trainspec.run`)."""

    def __init__(self, run: Any):
        self._run = run
        self._code: int | None = None
        self._error: BaseException | None = None
        import threading

        self._thread = threading.Thread(target=self._execute, name=f"trainspec-run-{run.run_id}", daemon=True)
        self._thread.start()
        # A daemon thread dies with the interpreter: stop the run first.  threading's own exit hooks
        # run before concurrent.futures refuses new work (it registers there too, earlier: they run in
        # reverse), and the run removes its containers with a thread pool; atexit would be too late.
        import concurrent.futures.thread  # noqa: F401 - its hook registered first, so it runs after ours

        getattr(threading, "_register_atexit", __import__("atexit").register)(self._at_exit)

    def _at_exit(self) -> None:
        if self._thread.is_alive():
            try:
                self.down()
            except Error:
                pass  # it could not run; nothing was left behind to stop

    def _execute(self) -> None:
        try:
            self._code = self._run.execute()
        except BaseException as exc:  # handed to wait(): the caller's thread raises it
            self._error = exc

    def __repr__(self) -> str:
        return f"<trainspec.LocalRun {self.id} ({self.status().status})>"

    @property
    def id(self) -> str:
        """The run's id, as `trainspec ps` lists it."""
        return str(self._run.run_id)

    @property
    def job(self) -> str:
        return str(self._run.job.name)

    def wait(self, timeout: float | None = None) -> int:
        """Block until the job ends: 0 it succeeded, 1 it failed (the exit codes of `trainspec run`).
        Raises TimeoutError when `timeout` seconds pass first, and the run's own error (an `Error`)
        when it could not run (no engine, a missing image)."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"run {self.id} is still running after {timeout} s")
        if self._error is not None:
            raise self._error
        assert self._code is not None
        return self._code

    def done(self) -> bool:
        return not self._thread.is_alive()

    def status(self) -> RunStatus:
        """The run's status and each replica's, as `trainspec ps RUN` shows them."""
        from trainspec.emulator.host.state import read_state

        state = read_state(self._run.dir) or {}
        replicas = tuple(ReplicaStatus(r["display"], r["phase"], bool(r.get("ready")), int(r.get("restarts", 0)),
                                       r.get("exit_code"), r.get("reason", "")) for r in state.get("replicas", ()))
        if not replicas:  # not recorded yet: every replica is still pending
            replicas = tuple(ReplicaStatus(row.name, row.phase, row.ready, row.restarts, row.exit_code, row.reason)
                             for row in self._run.rows())
        return RunStatus(self.id, self.job, state.get("status", "Pending"), state.get("reason", ""), replicas)

    def logs(self) -> dict[str, str]:
        """{replica: its log so far} (`trainspec logs RUN`); secret values are masked as on the console."""
        folder = self._run.dir
        if not os.path.isdir(folder):
            return {}
        out: dict[str, str] = {}
        for entry in sorted(os.listdir(folder)):
            if entry.endswith(".log") and entry != "supervisor.log":
                with open(os.path.join(folder, entry), encoding="utf-8", errors="replace") as handle:
                    out[entry[:-len(".log")]] = handle.read()
        return out

    def down(self, timeout: float | None = None) -> int:
        """Stop the run as Ctrl-C stops `trainspec run` (grace periods, then every container and the
        network removed) and wait for it; the exit code (130 when it was still running)."""
        run = self._run
        if self._thread.is_alive():
            with run.cond:
                run.interrupted = run.interrupted or "SIGINT"
                run.cond.notify_all()
        return self.wait(timeout)


def run(source: str | os.PathLike[str], *, offline: bool = False, engine: str | None = None,
        gpus: str | None = None, cpu_only: bool = False, job: str | None = None, keep: bool = False,
        state_dir: str | os.PathLike[str] | None = None, images: Sequence[str] = (),
        mount_host: Sequence[str] = (), tla: Mapping[str, str] | None = None,
        ext_vars: Mapping[str, str] | None = None, jpath: Sequence[str] = (), runtimes: Sequence[str] = (),
        output: TextIO | None = None, quiet: bool = True) -> LocalRun:
    """Start `trainspec run SOURCE` (a spec, a compiled file or a chart folder) on the local engine and
    return at once; the run goes on in a thread of this process.  The keywords are `run`'s options
    (`engine`: "docker" | "podman"; `gpus`: "all", "none" or ids such as "0,1"; `runtimes`: --runtime FILE|DIR,
    the Kubeflow Trainer runtimes of a job on a runtime); `output`: where the
    console's lines go (default: standard output; `quiet`: only the transitions and the summary).
    The input is checked before this returns: an invalid spec raises SpecError, an unusable option
    or host UsageError."""
    from trainspec.argparser import Parser
    from trainspec.emulator.commands import add_run_arguments, build_run

    argv = [os.fspath(source), "--color", "never"]
    if engine is not None:
        if engine not in ("docker", "podman"):
            raise UsageError(f"unknown engine {engine!r}", path="engine", expected="docker or podman")
        argv += ["--engine", engine]
    argv += ["--offline"] * offline + ["--cpu-only"] * cpu_only + ["--keep"] * keep + ["--quiet"] * quiet
    if gpus is not None:
        argv += ["--gpus", gpus]
    if job is not None:
        argv += ["--job", job]
    if state_dir is not None:
        argv += ["--state-dir", os.fspath(state_dir)]
    for option, values in (("--image", images), ("--mount-host", mount_host), ("-J", jpath),
                           ("--runtime", [os.fspath(r) for r in runtimes])):
        for value in values:
            argv += [option, value]
    for option, pairs in (("--tla", tla), ("--ext-var", ext_vars)):
        for key, value in (pairs or {}).items():
            argv += [option, f"{key}={value}"]
    parser = Parser(prog="trainspec run")  # `trainspec run`'s own options, as the command line has them
    add_run_arguments(parser)
    args = parser.parse_args(argv)
    from trainspec.on_runtime import install  # as the command line does: a spec on a runtime, k8s patches

    install(args)
    if args.gpus and args.cpu_only:
        raise UsageError("gpus and cpu_only contradict each other; use one")
    return LocalRun(build_run(args, output))



__all__ = ["LocalRun", "ReplicaStatus", "RunStatus", "run"]
