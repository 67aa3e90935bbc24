"""Time, size and memory limits for spec templates, so a small spec cannot hang or exhaust the compiler.

Three layers, cheapest first:

- always: operators that can make a huge value in one step (`*`, `**`, `%`) are checked
  before they run (`+` and `~` at most add sizes up), and every rendered value (and a macro's output) is cut off past
  `MAX_OUTPUT` characters as it is produced;
- always: the whole job's rendered text is bounded (`MAX_TOTAL_OUTPUT`), because a template
  is rendered once per replica;
- templates that can loop, recurse or call something (loops, macros, calls, assignments,
  filters outside a small known-linear set) are "guarded": compiled and rendered under a
  wall-clock alarm and an address-space cap.  Plain lookups such as `{{ hosts.ps | join(',') }}`
  are not, and stay as fast as before.

The alarm and the memory cap are process-wide, so they are used only on the main thread
(the CLI); elsewhere a guarded template still has the operator and output limits.
"""

from __future__ import annotations

import functools
import os
import re
import threading

from .errors import Error

# Linux MAX_ARG_STRLEN: no argument or environment string of a process can be longer, so a
# rendered command, arg or env value past it could never run anyway.
MAX_OUTPUT = 128 * 1024
MAX_TOTAL_OUTPUT = int(os.environ.get("TRAINSPEC_TEMPLATE_TOTAL_OUTPUT", str(256 << 20)))
MAX_INT_BITS = 4096  # ~1,233 decimal digits; Python refuses to print more than 4,300
TIMEOUT_SECONDS = float(os.environ.get("TRAINSPEC_TEMPLATE_TIMEOUT", "10"))  # all guarded renders of a job
MEMORY_HEADROOM = int(os.environ.get("TRAINSPEC_TEMPLATE_MEMORY", str(512 << 20)))

# Filters whose output is at most linear in their input and that take no size argument.
LINEAR_FILTERS = frozenset({
    "abs", "attr", "capitalize", "count", "d", "default", "e", "escape", "first", "float", "forceescape",
    "int", "join", "last", "length", "list", "lower", "max", "min", "reverse", "round", "safe", "sort",
    "string", "striptags", "sum", "title", "tojson", "trim", "unique", "upper", "urlencode", "wordcount",
})
# Node types that neither loop nor call: rendering them is linear in the template and its inputs.
_PLAIN_NODES = frozenset({
    "Template", "Output", "TemplateData", "Name", "Const", "Getattr", "Getitem", "Slice", "Filter", "Test",
    "CondExpr", "Compare", "Operand", "And", "Or", "Not", "Neg", "Pos", "Add", "Sub", "Mul", "Div", "FloorDiv",
    "Mod", "Pow", "Concat", "List", "Tuple", "Dict", "Pair", "Keyword", "If", "MarkSafe", "MarkSafeIfAutoescape",
})
_PRINTF_WIDTH = re.compile(r"%[-#0 +]*(\d+|\*)?(?:\.(\d+|\*))?")
_DIGITS = re.compile(r"\d+")


class LimitExceeded(Error):
    """A template went past one of the limits; the message says which and by how much."""


class _Timeout(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` inside Jinja swallows it."""


def is_guarded(ast) -> bool:
    """Whether a parsed template can loop, recurse or call (so needs the time and memory limits)."""
    for node in ast.find_all(object):  # every node, depth first
        kind = type(node).__name__
        if kind not in _PLAIN_NODES:
            return True
        if kind == "Filter" and node.name not in LINEAR_FILTERS:
            return True
    return False


def _seq_len(value) -> int | None:
    return len(value) if isinstance(value, (str, list, tuple)) else None


def check_binop(operator: str, left, right) -> None:
    """Refuse, before computing it, an operation whose result would be too big."""
    if type(left) is int and type(right) is int and operator != "**" and \
            left.bit_length() + right.bit_length() <= MAX_INT_BITS:
        return  # the common case: index arithmetic
    if operator == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            bits = right * (abs(left).bit_length() - 1)
            if bits > MAX_INT_BITS:
                raise LimitExceeded(f"{left} ** {right} has about {bits} bits; the limit is {MAX_INT_BITS}")
    elif operator == "*":
        for seq, count in ((left, right), (right, left)):
            size = _seq_len(seq)
            if size is not None and isinstance(count, int) and size * count > MAX_OUTPUT:
                raise LimitExceeded(f"repeating a value of length {size} {count} times gives {size * count} "
                                    f"items; the limit is {MAX_OUTPUT}")
        if isinstance(left, int) and isinstance(right, int) and \
                left.bit_length() + right.bit_length() > MAX_INT_BITS:
            raise LimitExceeded(f"a product of more than {MAX_INT_BITS} bits")
    elif operator == "%" and isinstance(left, str):
        widest, star = _printf_widths(left)
        if star:
            values = right if isinstance(right, tuple) else (right,)
            widest = max([widest] + [v for v in values if isinstance(v, int)])
        if widest > MAX_OUTPUT:
            raise LimitExceeded(f"a format width of {widest}; the limit is {MAX_OUTPUT}")


def check_format(text: str, args: tuple, kwargs: dict) -> None:
    """Refuse, before formatting, a `str.format` whose width or precision alone is too big
    (`'{:>999999999}'.format(1)` would otherwise spend the memory limit's time finding out)."""
    widest, nested = _format_widths(text)
    if nested:  # `{:>{w}}`: the width is an argument
        widest = max([widest] + [v for v in (*args, *kwargs.values()) if type(v) is int])
    if widest > MAX_OUTPUT:
        raise LimitExceeded(f"a format width of {widest}; the limit is {MAX_OUTPUT}")


@functools.lru_cache(maxsize=256)
def _format_widths(text: str) -> tuple[int, bool]:
    """The largest number in a str.format string's format specs, and whether one is a nested field."""
    import string

    widest, nested = 0, False
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError:
        return 0, False  # str.format itself says what is wrong with it
    for _, _, spec, _ in fields:
        if spec:
            nested = nested or "{" in spec
            widest = max([widest] + [int(n) for n in _DIGITS.findall(spec)])
    return widest, nested


@functools.lru_cache(maxsize=256)
def _printf_widths(text: str) -> tuple[int, bool]:
    """The widest width or precision written in a printf-style format, and whether one is `*`."""
    numbers = [n for match in _PRINTF_WIDTH.finditer(text) for n in match.groups() if n]
    return max([int(n) for n in numbers if n != "*"], default=0), "*" in numbers


def bounded_join(chunks) -> str:
    """Jinja's `concat` (a render's and a macro's output), refusing past MAX_OUTPUT characters.

    Joined first, then measured: a plain template's output is linear in its inputs, and a
    guarded one that loops to produce more is stopped by the time and memory limits."""
    text = "".join(chunks)
    if len(text) > MAX_OUTPUT:
        raise LimitExceeded(f"the rendered text is {len(text)} characters, more than the {MAX_OUTPUT} Linux "
                            "passes as one argument or environment variable (MAX_ARG_STRLEN)")
    return text


_armed = False  # whether a guarded template is running (on the main thread)
_previous_handler: list = []  # [the SIGALRM handler before ours], once ours is installed


def _alarm(signum, frame):
    """SIGALRM: stops a guarded template; otherwise does what the handler before ours did."""
    if _armed:
        raise _Timeout()
    previous = _previous_handler[0] if _previous_handler else None
    if callable(previous):
        previous(signum, frame)


class Guard:
    """The wall-clock and memory limits for guarded templates; one per job (the time is a budget)."""

    def __init__(self) -> None:
        self.seconds_left = TIMEOUT_SECONDS
        self.total_output = 0
        self._measured_at = -1.0
        self._size = 0

    def count_output(self, text: str) -> None:
        self.total_output += len(text)
        if self.total_output > MAX_TOTAL_OUTPUT:
            raise LimitExceeded(f"templates of this job render more than {MAX_TOTAL_OUTPUT >> 20} MiB in total "
                                "over all replicas")

    def run(self, action):
        """`action()` under the alarm and the memory cap (main thread only)."""
        if threading.current_thread() is not threading.main_thread():
            return action()
        import resource
        import signal
        import time

        if self.seconds_left <= 0:
            raise LimitExceeded(self._slow())

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = self._address_space() + MEMORY_HEADROOM
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft != resource.RLIM_INFINITY:
            cap = min(cap, soft)
        global _armed
        if not _previous_handler:  # installed once (setting or reading a handler costs 7-10 µs)
            _previous_handler.append(signal.signal(signal.SIGALRM, _alarm))
        old_timer = signal.setitimer(signal.ITIMER_REAL, self.seconds_left)
        _armed = True
        started = time.monotonic()
        try:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
            return action()
        except _Timeout:
            raise LimitExceeded(self._slow()) from None
        except MemoryError:
            raise LimitExceeded(f"the template needs more than {MEMORY_HEADROOM >> 20} MiB of memory") from None
        finally:
            _armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
            if old_timer[0]:
                signal.setitimer(signal.ITIMER_REAL, *old_timer)
            self.seconds_left -= time.monotonic() - started

    def _address_space(self) -> int:
        """The process's size, read again at most every 0.2 s (reading it costs more than a render)."""
        import time

        now = time.monotonic()
        if now - self._measured_at > 0.2:
            with open("/proc/self/statm", "rb") as handle:
                self._size = int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            self._measured_at = now
        return self._size

    @staticmethod
    def _slow() -> str:
        return (f"templates of this job did not finish within {TIMEOUT_SECONDS:g}s "
                "(TRAINSPEC_TEMPLATE_TIMEOUT sets the limit)")

