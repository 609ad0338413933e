"""recuo.backoff_window_ms: min(cap_ms, base_ms * 2**attempt), exact for every int."""

from __future__ import annotations

from typing import Any

import pytest

import recuo

U64_MAX = 2**64 - 1


def test_guide_a_windows_by_default() -> None:
    assert [recuo.backoff_window_ms(n) for n in range(7)] == [200, 400, 800, 1600, 3200, 5000, 5000]


def test_guide_b_windows() -> None:
    windows = [recuo.backoff_window_ms(n, base_ms=1000, cap_ms=8000) for n in range(5)]
    assert windows == [1000, 2000, 4000, 8000, 8000]


@pytest.mark.parametrize(
    ("attempt", "base_ms", "cap_ms", "expected"),
    [
        (0, 0, 0, 0),
        (10**6, 0, 5000, 0),
        (63, 1, U64_MAX, 2**63),
        (64, 1, U64_MAX, U64_MAX),
        (2**32 - 1, 1, U64_MAX, U64_MAX),
        (2**32, 1, U64_MAX, U64_MAX),
        (10**30, 3, 10**18, 10**18),
        (1, U64_MAX, U64_MAX, U64_MAX),
        (0, U64_MAX - 1, U64_MAX, U64_MAX - 1),
    ],
)
def test_the_arithmetic_saturates(attempt: int, base_ms: int, cap_ms: int, expected: int) -> None:
    assert recuo.backoff_window_ms(attempt, base_ms, cap_ms) == expected


def test_cap_below_base_is_a_config_error() -> None:
    with pytest.raises(recuo.ConfigError) as caught:
        recuo.backoff_window_ms(0, base_ms=200, cap_ms=100)
    assert (caught.value.code, caught.value.name) == (5, "cap_below_base")
    assert str(caught.value) == "the maximum (100 ms) must not be below the base (200 ms)"


@pytest.mark.parametrize(
    ("kwargs", "code", "name"),
    [
        ({"base_ms": -1}, 2, "negative_duration"),
        ({"cap_ms": -(2**80)}, 2, "negative_duration"),
        ({"cap_ms": 2**64}, 4, "duration_too_large"),
        ({"base_ms": 10**40, "cap_ms": 10**40}, 4, "duration_too_large"),
    ],
    ids=lambda v: repr(v),
)
def test_durations_out_of_range_are_config_errors(kwargs: dict[str, int], code: int, name: str) -> None:
    with pytest.raises(recuo.ConfigError) as caught:
        recuo.backoff_window_ms(0, **kwargs)
    assert (caught.value.code, caught.value.name) == (code, name)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((-1,), ValueError, "attempt must not be negative"),
        ((1.0,), TypeError, "attempt must be an int, not float"),
        ((True,), TypeError, "attempt must be an int, not bool"),
        ((None,), TypeError, "attempt must be an int, not NoneType"),
        ((0, 200.0), TypeError, "base_ms must be an int, not float"),
        ((0, 200, "5000"), TypeError, "cap_ms must be an int, not str"),
        ((0, False, 10), TypeError, "base_ms must be an int, not bool"),
    ],
    ids=lambda v: repr(v),
)
def test_bad_input(args: tuple[Any, ...], error: type, message: str) -> None:
    with pytest.raises(error, match=message) as caught:
        recuo.backoff_window_ms(*args)
    assert type(caught.value) is error
