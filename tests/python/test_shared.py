"""Regulator.shared and RetryBudget.shared: one allowance for several processes through one
file. Four `multiprocessing` processes share a regulator and a fake clock (a
`multiprocessing.Value` advanced under its lock); the parent merges their starts and checks
every window against burst + rate × window, and that ≥ 95% of the allowed starts were used —
the same check as core/tests/regulator_limits.rs."""

from __future__ import annotations

import errno
import multiprocessing
import os
from pathlib import Path
from typing import Callable

import pytest

import recuo
import shared_children
from shared_children import BURST, RATE, STEP_NS, TRIES
from test_regulator import check_window

# "spawn": each child is a fresh interpreter that imports recuo itself (no fork of a process
# with threads), as a pool of workers on another machine would be.
CTX = multiprocessing.get_context("spawn")
PROCESSES = 4


def run_children(target: Callable[..., object], args: list[tuple[object, ...]]) -> None:
    children = [CTX.Process(target=target, args=a) for a in args]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=120)
    for child in children:
        if child.is_alive():
            child.kill()
            child.join()
        assert child.exitcode == 0


def test_processes_share_one_allowance_through_a_file(tmp_path: Path) -> None:
    path = str(tmp_path / "regulator")
    first = 10**9
    clock = CTX.Value("Q", first, lock=True)
    barrier = CTX.Barrier(PROCESSES)
    outs = [str(tmp_path / f"starts-{i}") for i in range(PROCESSES)]
    run_children(shared_children.regulator_child, [(path, clock, barrier, out) for out in outs])
    starts = [int(line) for out in outs for line in Path(out).read_text(encoding="utf-8").split()]
    span = clock.value - first
    assert span == PROCESSES * TRIES * STEP_NS
    assert len(starts) > 100
    assert len(set(starts)) == len(starts)  # every reading of the clock is one try
    check_window(starts, span, RATE, BURST)
    # Every process got its share of starts through the one allowance (none was shut out).
    per_process = [len(Path(out).read_text(encoding="utf-8").split()) for out in outs]
    assert all(n > 0 for n in per_process), per_process


def test_processes_share_one_budget(tmp_path: Path) -> None:
    path = str(tmp_path / "budget")
    barrier = CTX.Barrier(PROCESSES)
    outs = [str(tmp_path / f"granted-{i}") for i in range(PROCESSES)]
    now = 50 * 10**9
    run_children(shared_children.budget_child, [(path, barrier, now, out) for out in outs])
    granted = sum(int(Path(out).read_text(encoding="utf-8")) for out in outs)
    # The floor alone: 2 retries per second over 10 s, for all four processes together (the
    # core allows each process to overshoot by one when withdrawing at the very same instant).
    assert 20 <= granted <= 20 + PROCESSES
    assert recuo.RetryBudget.shared(path, 0.0, 2.0, 10).counts(now) == (0, granted)


def test_processes_acquiring_for_real_take_turns(tmp_path: Path) -> None:
    path = str(tmp_path / "regulator")
    recuo.Regulator.shared(path, "50/s", 1)
    started = CTX.Event()
    outs = [str(tmp_path / f"stamps-{i}") for i in range(2)]
    children = [CTX.Process(target=shared_children.acquire_child, args=(path, started, out)) for out in outs]
    for child in children:
        child.start()
    started.set()
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    stamps = sorted(int(s) for out in outs for s in Path(out).read_text(encoding="utf-8").split())
    assert len(stamps) == 10
    # 10 starts at 50/s with a burst of 1: at least 9 intervals of 20 ms (less a little for
    # the time between a slot and its stamp).
    assert stamps[-1] - stamps[0] >= 9 * 20_000_000 - 10_000_000


def test_handles_on_one_file_share_the_allowance(tmp_path: Path) -> None:
    path = tmp_path / "regulator"
    a = recuo.Regulator.shared(path, "90/min", 3)
    same = recuo.Regulator.shared(str(path), "1.5/s", 3)  # the same rate, written otherwise
    assert a.try_acquire_at(5 * 10**9, cost=3) == 0
    assert same.try_acquire_at(5 * 10**9) == 666_666_667, "one allowance, two handles"
    assert os.path.getsize(path) > 0
    assert repr(a).startswith("Regulator.shared(") and "'90/min', burst=3)" in repr(a)
    assert (a.rate, a.burst) == (1.5, 3)


def test_a_second_opener_with_another_rate_or_burst_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "regulator"
    recuo.Regulator.shared(path, "90/min", 3)
    with pytest.raises(recuo.SharedFileError) as rate:
        recuo.Regulator.shared(path, "120/min", 3)
    message = str(rate.value)
    assert str(path) in message
    assert "regulates 1.500000/s with a burst of 3" in message
    assert "this process asked for 2.000000/s with a burst of 3" in message
    assert isinstance(rate.value, ValueError)
    with pytest.raises(recuo.SharedFileError, match="asked for 1.500000/s with a burst of 4"):
        recuo.Regulator.shared(path, "90/min", 4)


def test_files_that_hold_something_else_are_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk"
    junk.write_bytes(b"not a regulator")
    with pytest.raises(recuo.SharedFileError, match="bytes, not the"):
        recuo.Regulator.shared(junk, "1/s")
    budget = tmp_path / "budget"
    recuo.RetryBudget.shared(budget)
    with pytest.raises(recuo.SharedFileError):
        recuo.Regulator.shared(budget, "1/s")
    regulator = tmp_path / "regulator"
    recuo.Regulator.shared(regulator, "1/s")
    with pytest.raises(recuo.SharedFileError):
        recuo.RetryBudget.shared(regulator)
    with pytest.raises(recuo.SharedFileError, match="ratio 0.1, floor 1/s, window 10 s; this process asked for ratio 0.2"):
        recuo.RetryBudget.shared(budget, 0.2)


def test_files_that_cannot_be_opened_are_os_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as missing:
        recuo.Regulator.shared(tmp_path / "no" / "such" / "dir", "1/s")
    assert missing.value.errno == errno.ENOENT
    assert missing.value.filename == str(tmp_path / "no" / "such" / "dir")
    with pytest.raises(IsADirectoryError):
        recuo.RetryBudget.shared(tmp_path, 0.1)


def test_paths_may_be_str_bytes_or_path_like(tmp_path: Path) -> None:
    recuo.Regulator.shared(os.fsencode(tmp_path / "b"), "1/s")
    recuo.Regulator.shared(tmp_path / "p", "1/s")
    with pytest.raises(TypeError, match="path must be str, bytes or os.PathLike"):
        recuo.Regulator.shared(3, "1/s")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-empty file name without NUL"):
        recuo.Regulator.shared("", "1/s")
    with pytest.raises(ValueError, match="non-empty file name without NUL"):
        recuo.RetryBudget.shared(str(tmp_path / "a\0b"))
    with pytest.raises(ValueError, match="the burst must be at least 1"):
        recuo.Regulator.shared(tmp_path / "z", "1/s", 0)
    assert not (tmp_path / "z").exists() or os.path.getsize(tmp_path / "z") == 0
