"""recuo.RetryBudget: retries at most a ratio of recent first attempts plus a floor, with
exact counts on a fake clock."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import recuo

S = 1_000_000_000


def test_retries_are_a_ratio_of_requests_plus_a_floor() -> None:
    budget = recuo.RetryBudget(0.1, 0.5, 10)
    t = 100 * S
    # The floor alone: 0.5/s × 10 s = 5 retries.
    assert [budget.try_withdraw_at(t) for _ in range(6)] == [True] * 5 + [False]
    for _ in range(100):
        budget.record_request_at(t)
    # 100 requests earn 10 more.
    assert [budget.try_withdraw_at(t) for _ in range(11)] == [True] * 10 + [False]
    assert budget.counts(t) == (100, 15)


def test_old_seconds_fall_out_of_the_window() -> None:
    budget = recuo.RetryBudget(0.0, 0.1, 10)
    t = 50 * S
    assert budget.try_withdraw_at(t)
    assert not budget.try_withdraw_at(t + 9 * S)
    assert budget.try_withdraw_at(t + 10 * S), "the first retry is 10 s old"
    assert budget.counts(t + 10 * S) == (0, 1)


def test_defaults() -> None:
    budget = recuo.RetryBudget()
    assert (budget.ratio, budget.floor_per_s, budget.window_s) == (0.1, 1.0, 10)
    assert repr(budget) == "RetryBudget(ratio=0.1, floor_per_s=1.0, window_s=10)"
    t = 7 * S
    assert sum(budget.try_withdraw_at(t) for _ in range(100)) == 10
    live = recuo.RetryBudget(0.0, 0.1, 10)
    live.record_request()
    assert live.try_withdraw() is True
    assert live.try_withdraw() is False
    assert live.counts() == (1, 1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((-0.1, 1.0, 10), "the retry ratio must be between 0 and 1000, not -0.1"),
        ((math.nan, 1.0, 10), "the retry ratio must be between 0 and 1000"),
        ((0.1, -1.0, 10), "the floor must be 0 or more retries per second, not -1"),
        ((0.1, 1.0, 0), "the window must be 1 to 60 seconds, not 0"),
        ((0.1, 1.0, 61), "the window must be 1 to 60 seconds, not 61"),
        ((0.1, 1.0, -5), "the window must be 1 to 60 seconds, not -5"),
    ],
)
def test_bad_settings_are_value_errors(args: tuple[float, float, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        recuo.RetryBudget(*args)


def test_wrong_types() -> None:
    with pytest.raises(TypeError, match="ratio must be a number"):
        recuo.RetryBudget("0.1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="window_s must be an int"):
        recuo.RetryBudget(window_s=1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="floor_per_s must be a number"):
        recuo.RetryBudget(floor_per_s=True)
    with pytest.raises(ValueError, match="now_ns"):
        recuo.RetryBudget().record_request_at(-1)


def test_two_handles_on_one_file_share_the_budget(tmp_path: Path) -> None:
    path = tmp_path / "budget"
    a = recuo.RetryBudget.shared(path, 0.5, 0.0, 10)
    b = recuo.RetryBudget.shared(path, 0.5, 0.0, 10)
    t = 30 * S
    for _ in range(4):
        a.record_request_at(t)
    assert [b.try_withdraw_at(t) for _ in range(3)] == [True, True, False]
    assert a.counts(t) == (4, 2)
    assert repr(a) == f"RetryBudget.shared({str(path)!r}, ratio=0.5, floor_per_s=0.0, window_s=10)"
