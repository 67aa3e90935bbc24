"""The limits every container of a run gets: a pids limit and a memory limit.

A replica whose file sets no limit (any compose file without `pids_limit`, a spec or k8s file
without `resources.limits.memory`) would otherwise run unbounded: a fork bomb takes the host's
pid space, a leak its memory. So every container gets both:
- pids: the file's own (compose `pids_limit` / `deploy.resources.limits.pids`), else `--pids-limit`,
  else DEFAULT_PIDS. Kubernetes has no per-container pids field (the kubelet's podPidsLimit is
  the node's setting), so spec and k8s input always get the run's;
- memory: the file's limit (k8s `resources.limits.memory`, the spec's `memory`, compose
  `deploy.resources.limits.memory`), else `--memory-limit`, else DEFAULT_MEMORY_SHARE of the
  engine's memory (what `docker info` reports as MemTotal), so one runaway replica is killed
  by the kernel's OOM killer inside its cgroup before the host runs out.
`--pids-limit none` / `--memory-limit none` lift the default (never a file's own limit).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from ...compiler.errors import UsageError

# Enough for a data loader's worker processes and every framework's threads (each thread is a
# task the pids cgroup counts: a 64-core PyTorch process runs a few hundred); far below the host's
# pid_max (4,194,304 on 64-bit Linux), so a fork bomb stops inside its container.
DEFAULT_PIDS = 4096
DEFAULT_MEMORY_SHARE = Decimal("0.75")
_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12,
          "ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40, "b": 1, "kb": 2**10, "mb": 2**20, "gb": 2**30}


def parse_pids_option(value: str | None) -> int | None:
    """--pids-limit N|none: N >= 1; none -> 0 (no limit); not given -> None (the default)."""
    if value is None:
        return None
    if value.strip().lower() == "none":
        return 0
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise UsageError(f"--pids-limit {value!r}: expected a whole number of processes >= 1, or none")
    return n


def parse_memory_option(value: str | None) -> int | None:
    """--memory-limit SIZE|none (SIZE: 8Gi, 512Mi, 2g, bytes; at least 6 MiB, Docker's minimum)."""
    if value is None:
        return None
    text = value.strip().lower()
    if text == "none":
        return 0
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(number):]
    try:
        size = int(Decimal(number) * _UNITS[unit])
    except (InvalidOperation, KeyError, ValueError):
        size = -1
    if size < 6 * 2**20:
        raise UsageError(f"--memory-limit {value!r}: expected a size of at least 6Mi (e.g. 8Gi, 512Mi), or none")
    return size


def pids_for(own: int | None, option: int | None) -> int | None:
    """A container's pids limit (None: unlimited, only when the user said --pids-limit none)."""
    if own:
        return own
    if option == 0:
        return None
    return option or DEFAULT_PIDS


def default_memory(option: int | None, engine_total: int) -> int | None:
    """The memory limit of a container whose file sets none (None: unlimited, by --memory-limit none,
    or when the engine does not say how much memory it has)."""
    if option is not None:
        return option or None
    if engine_total <= 0:
        return None
    return int(Decimal(engine_total) * DEFAULT_MEMORY_SHARE)
