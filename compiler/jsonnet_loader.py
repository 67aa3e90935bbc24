"""Evaluate a `.jsonnet` spec to JSON text, with imports confined to known folders."""

from __future__ import annotations

import os
import re
import select
import signal
import time

from .errors import SpecError, SpecErrors

# A place in a Jsonnet message: file:3:5, file:3:5-10 or file:(3:5)-(4:2) (a span over lines).
_LOCATION = re.compile(r"(?P<file>[^\s:()]+):(?:\((?P<span_line>\d+):(?P<span_col>\d+)\)|(?P<line>\d+):(?P<col>\d+))"
                       r"(?:-\(?\d+(?::\d+)?\)?)?:?")


def _confined(path: str, roots: list[str]) -> bool:
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root + os.sep) for root in roots)


TIMEOUT_SECONDS = float(os.environ.get("TRAINSPEC_JSONNET_TIMEOUT", "60"))
MEMORY_BYTES = int(os.environ.get("TRAINSPEC_JSONNET_MEMORY", str(4 << 30)))
# The evaluated JSON is a spec like any other: no bigger than a spec file may be (loader.MAX_FILE_BYTES).
MAX_OUTPUT_BYTES = int(os.environ.get("TRAINSPEC_JSONNET_MAX_OUTPUT", str(16 << 20)))


def _too_large(path: str, size: str) -> SpecErrors:
    return SpecErrors([SpecError(path, 1, 1, "", f"Jsonnet output is {size} bytes",
                                 f"at most {MAX_OUTPUT_BYTES} bytes of JSON (the limit for a spec file)",
                                 "a spec describes roles, not one entry per replica; "
                                 "TRAINSPEC_JSONNET_MAX_OUTPUT sets the limit")])


def evaluate(path: str, options) -> str:
    """Evaluate in a forked child, so a program that never ends (or eats all memory) is cut off."""
    if not os.path.isfile(path):
        raise SpecErrors([SpecError(path, 1, 1, "", "no such file", "", "check the path")])
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: evaluate, send b"O"+json or b"E"+message, never return into the caller
        status = 0
        try:
            os.close(read_end)
            import resource

            # libjsonnet prints "FATAL ERROR: ..." itself when it runs out of memory; our message says it.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            # Never above the limit we run under (a CI runner's `ulimit -v`): raising it fails.
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            cap = MEMORY_BYTES if hard == resource.RLIM_INFINITY else min(MEMORY_BYTES, hard)
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
            try:
                payload = _payload(_evaluate_here(path, options))
            except SpecErrors as exc:
                payload = b"E" + str(exc.errors[0].message).encode() + b"\0" + \
                    f"{exc.errors[0].line}:{exc.errors[0].column}".encode() + b"\0" + exc.errors[0].hint.encode()
            except MemoryError:
                payload = b"E" + b"Jsonnet evaluation ran out of memory\x001:1\0"
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    chunks: list[bytes] = []
    received = 0
    deadline = time.monotonic() + TIMEOUT_SECONDS
    try:
        with os.fdopen(read_end, "rb", buffering=0) as pipe:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([pipe], [], [], left)[0]:
                    os.kill(pid, signal.SIGKILL)
                    raise SpecErrors([SpecError(path, 1, 1, "", f"Jsonnet evaluation did not finish within "
                                                f"{TIMEOUT_SECONDS:g}s", "a program that terminates",
                                                "look for unbounded recursion; TRAINSPEC_JSONNET_TIMEOUT "
                                                "sets the limit")])
                chunk = pipe.read(1 << 20)
                if not chunk:
                    break
                received += len(chunk)
                if received > MAX_OUTPUT_BYTES + 1:  # the child checks too; this holds even if it did not
                    os.kill(pid, signal.SIGKILL)
                    raise _too_large(path, f"more than {MAX_OUTPUT_BYTES}")
                chunks.append(chunk)
    finally:
        os.waitpid(pid, 0)
    data = b"".join(chunks)
    if data[:1] == b"O":
        return data[1:].decode("utf-8")
    if data[:1] == b"L":
        raise _too_large(path, data[1:].decode())
    if data[:1] == b"E":
        message, where, hint = data[1:].decode("utf-8", "replace").split("\0", 2)
        line, column = (int(x) for x in where.split(":"))
        raise SpecErrors([SpecError(path, line, column, "", message, "", hint)])
    raise SpecErrors([SpecError(path, 1, 1, "", "Jsonnet evaluation failed (out of memory or crashed)", "",
                                "look for unbounded recursion or huge arrays")])


def _payload(text: str) -> bytes:
    """What the child sends: b"O" + the JSON, or b"L" + its size when it is over the limit."""
    data = text.encode("utf-8")
    return b"L" + str(len(data)).encode() if len(data) > MAX_OUTPUT_BYTES else b"O" + data


def _evaluate_here(path: str, options) -> str:
    import _jsonnet

    spec_dir = os.path.dirname(os.path.abspath(path))
    roots = [os.path.realpath(spec_dir)] + [os.path.realpath(d) for d in options.jpath]

    def import_callback(base: str, rel: str):
        # Search the importing file's folder first, then -J folders, as jsonnet does;
        # anything that resolves outside the allowed roots is refused.
        candidates = [rel] if os.path.isabs(rel) else [os.path.join(base, rel)] + [
            os.path.join(d, rel) for d in options.jpath]
        for candidate in candidates:
            if os.path.isfile(candidate):
                if not _confined(candidate, roots):
                    raise RuntimeError(f"import {rel!r} is outside the spec's folder and the -J folders")
                with open(candidate, "rb") as handle:
                    return candidate, handle.read()
        raise RuntimeError(f"import {rel!r} not found (searched the spec's folder and -J folders)")

    try:
        return _jsonnet.evaluate_file(
            path,
            ext_vars=dict(options.ext_vars),
            tla_vars=dict(options.tla),
            import_callback=import_callback,
            max_stack=500,
        )
    except RuntimeError as exc:
        line, column, message, hint = describe_error(str(exc), path)
        raise SpecErrors([SpecError(path, line, column, "", message, "", hint)]) from None


def describe_error(text: str, path: str) -> tuple[int, int, str, str]:
    """(line, column, message, hint) of a libjsonnet error, at its place in the spec file.

    The message's first line says what went wrong; the stack trace below it lists
    places, innermost first.  The innermost place in the spec is the position; when
    the error itself is in an imported file, the message names that place too.
    """
    text = text.strip()
    first = text.splitlines()[0] if text else "Jsonnet evaluation failed"
    places = [(m.group("file"), int(m.group("line") or m.group("span_line")),
               int(m.group("col") or m.group("span_col"))) for m in _LOCATION.finditer(text)]
    in_spec = [place for place in places if _same_file(place[0], path)]
    what = _LOCATION.sub("", first, count=1).replace(":  ", ": ").strip() if places else first
    line, column = in_spec[0][1:3] if in_spec else (1, 1)
    if places and places[0] not in in_spec:
        what += " (at {}:{}:{})".format(*places[0])
    if "import" in first:
        hint = "imports may come from the spec's folder and the -J folders only"
    elif "external variable" in first:
        hint = "pass external variables with --ext-var NAME=VALUE"
    elif "not bound in call" in first or "Top-level" in text:
        hint = "pass top-level arguments with --tla NAME=VALUE"
    else:
        hint = ""
    return line, column, f"Jsonnet error: {what}", hint


def _same_file(name: str, path: str) -> bool:
    return os.path.realpath(name) == os.path.realpath(path) or (
        not os.path.exists(name) and os.path.basename(name) == os.path.basename(path))
