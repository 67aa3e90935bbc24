"""The run's default limits and the options that change them (model/limits.py)."""

from __future__ import annotations

import pytest

from trainspec.compiler.errors import UsageError
from trainspec.emulator.model.limits import (
    DEFAULT_PIDS,
    default_memory,
    parse_memory_option,
    parse_pids_option,
    pids_for,
)


def test_pids_the_files_own_then_the_option_then_the_default():
    assert pids_for(50, None) == 50 and pids_for(50, 0) == 50 and pids_for(50, 9) == 50
    assert pids_for(None, None) == DEFAULT_PIDS and pids_for(None, 9) == 9
    assert pids_for(None, 0) is None   # --pids-limit none: the user's choice, never a file's


def test_memory_default_is_a_share_of_the_engine_and_the_option_wins():
    assert default_memory(None, 16 * 2**30) == 12 * 2**30
    assert default_memory(512 * 2**20, 16 * 2**30) == 512 * 2**20
    assert default_memory(0, 16 * 2**30) is None
    assert default_memory(None, 0) is None  # the engine did not say


def test_options_parse_and_refuse():
    assert parse_pids_option(None) is None and parse_pids_option("none") == 0 and parse_pids_option("64") == 64
    assert parse_memory_option("8Gi") == 8 * 2**30 and parse_memory_option("2g") == 2 * 10**9
    assert parse_memory_option("512Mi") == 512 * 2**20 and parse_memory_option("NONE") == 0
    for bad in ("0", "-5", "lots", "1.5"):
        with pytest.raises(UsageError, match="--pids-limit"):
            parse_pids_option(bad)
    for bad in ("1Ki", "8Zi", "x", "-1Gi"):
        with pytest.raises(UsageError, match="--memory-limit"):
            parse_memory_option(bad)
