"""Small timing helpers shared by the benchmarks: medians of interleaved runs."""

from __future__ import annotations

import platform
import statistics
import subprocess
import sys
import time


def median_time(fn, repeat: int = 5) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def interleaved(fns: dict, repeat: int = 5) -> dict[str, float]:
    """Median seconds of each function, runs interleaved so machine noise hits all alike."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def run(cmd: list[str], **kwargs) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
    return time.perf_counter() - start


def machine() -> str:
    import os

    return (f"{platform.node()}: {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{time.strftime('%Y-%m-%d')}")


def table(headers: list[str], rows: list[list]) -> str:
    cells = [headers] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [" | ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths)))
             for row in cells]
    lines.insert(1, "-|-".join("-" * w for w in widths))
    return "\n".join(lines)


def run_bench(main) -> int:
    """Run a benchmark's main() and say how long the whole bench took."""
    start = time.perf_counter()
    code = main()
    print(f"\n(bench ran {time.perf_counter() - start:.1f}s)")
    return code


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


if __name__ == "__main__":
    sys.exit("a helper module; run one of the bench/*.py scripts")
