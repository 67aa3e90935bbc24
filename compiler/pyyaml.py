"""PyYAML, imported with its own module-level regexes compiled on first use.

`import yaml` compiles about twenty regexes while its modules load; one of them, the pure-Python
reader's `NON_PRINTABLE` class over most of Unicode, costs ~9 ms, and all of them together are a
tenth of what `trainspec compile` spends before it reads a spec (bench/startup.py). trainspec reads
and writes through libyaml (`CSafeLoader`, `CSafeDumper`), which never uses most of them. So
while PyYAML loads, `re.compile` called from a `yaml.*` module hands back a pattern that compiles
itself the first time it is used: the same object in every respect that matters, just later.
Everything else PyYAML does is untouched, and a process that imported yaml before (a test run,
the emulator) keeps its own.

Import `yaml` from here on the compile path (`from trainspec.compiler.pyyaml import yaml`).
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any


class LazyPattern:
    """A compiled regex that compiles on first use, then forwards every attribute to it."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: Any, flags: int) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern | None = None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = _COMPILE(self._pattern, self._flags)
        return self._compiled

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return repr(self.compiled())


_COMPILE = re.compile


def _compile_later(pattern: Any, flags: int = 0) -> Any:
    caller = sys._getframe(1).f_globals.get("__name__", "")
    if caller == "yaml" or caller.startswith("yaml."):
        return LazyPattern(pattern, flags)
    return _COMPILE(pattern, flags)


def _import_yaml() -> Any:
    if "yaml" in sys.modules:
        return sys.modules["yaml"]
    # Start-up is single-threaded: nobody else compiles a regex while this swap is in place.
    re.compile = _compile_later
    try:
        import yaml
    finally:
        re.compile = _COMPILE
    return yaml


if TYPE_CHECKING:
    import yaml
else:
    yaml = _import_yaml()
