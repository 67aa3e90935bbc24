"""`trainspec logs` over saved logs (console/logview.py): replicas interleaved by time, `--tail`, `--since`."""

from __future__ import annotations

import pytest

from trainspec.compiler.errors import UsageError
from trainspec.emulator.console.logview import parse_since, select


def test_select_interleaves_by_time_with_tail_and_since():
    batches = {"worker-0": [(1.0, "w0 a"), (3.0, "w0 b"), (5.0, "w0 c")],
               "ps-0": [(2.0, "ps a"), (4.0, "ps b"), (None, "ps cut short")]}
    assert [line for _t, _n, line in select(batches, None, None)] == [
        "w0 a", "ps a", "w0 b", "ps b", "ps cut short", "w0 c"]
    assert [line for _t, _n, line in select(batches, 1, None)] == ["ps cut short", "w0 c"]
    assert [line for _t, _n, line in select(batches, None, 3.5)] == ["ps b", "w0 c"]
    assert select(batches, 0, None) == []


def test_since_takes_durations_and_times():
    assert parse_since("90s", now=1000.0) == 910.0
    assert parse_since("1h30m", now=10000.0) == 10000.0 - 5400
    assert parse_since("2026-11-23T14:00:00Z") == 1795442400.0
    with pytest.raises(UsageError, match="--since 'yesterday'"):
        parse_since("yesterday")
