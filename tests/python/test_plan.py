"""recuo.plan (SPEC §8): guide B's example exactly, retries, warnings, and every error."""

from __future__ import annotations

import math

import pytest

import recuo


def test_guide_b_example_exactly() -> None:
    p = recuo.plan(600, "120/min", "90/min", 2)
    assert (p.interval_ms, p.duration_s, p.in_flight) == (667, 400.0, 3.0)
    assert p.retries == 0.0
    assert p.warnings == ()
    assert repr(p) == "Plan(interval_ms=667, duration_s=400.0, retries=0.0, in_flight=3.0, warnings=())"
    assert p == recuo.plan(600, 2.0, 1.5, 2.0, 0.0)  # the same rates, per second


def test_retries_lengthen_the_batch() -> None:
    p = recuo.plan(600, "120/min", "90/min", 2.0, retry_fraction=0.2)
    assert (p.retries, p.duration_s) == (150.0, 500.0)


def test_warnings() -> None:
    equal = recuo.plan(10, "2/s", "2/s", 0.1)
    assert len(equal.warnings) == 1 and "equals the allowance" in equal.warnings[0]
    assert "uses 95% of the allowance" in recuo.plan(10, "100/s", "95/s", 0.1).warnings[0]
    assert "500 requests will be in flight" in recuo.plan(10, 1000, 500, 1.0).warnings[0]
    assert recuo.plan(0, "1/s", "1/s", 0).duration_s == 0.0


def test_a_target_above_the_allowance_is_a_plan_error() -> None:
    with pytest.raises(recuo.PlanError) as caught:
        recuo.plan(600, "120/min", "150/min", 2)
    assert isinstance(caught.value, ValueError)
    assert caught.value.name == "target_above_allowance"
    assert str(caught.value) == (
        "the target (150/min) is above the allowance (120/min): the server would throttle the batch;"
        " aim at or below the allowance"
    )


@pytest.mark.parametrize(
    ("latency", "fraction", "name", "message"),
    [
        (1.0, 1.0, "invalid_retry_fraction", "the retry fraction must be at least 0 and below 1, not 1"),
        (1.0, -0.5, "invalid_retry_fraction", "not -0.5"),
        (math.nan, 0.0, "invalid_latency", "the latency must be a number of seconds, 0 or more, not NaN"),
        (-1.0, 0.0, "invalid_latency", "not -1"),
        (math.inf, 0.0, "invalid_latency", "not inf"),
    ],
)
def test_bad_fractions_and_latencies(latency: float, fraction: float, name: str, message: str) -> None:
    with pytest.raises(recuo.PlanError, match=message) as caught:
        recuo.plan(10, "1/s", "1/s", latency, fraction)
    assert caught.value.name == name


def test_bad_rates_and_counts_are_value_errors() -> None:
    with pytest.raises(ValueError, match="allowance: \"120/fortnight\" is not a rate"):
        recuo.plan(1, "120/fortnight", "1/s", 1)
    with pytest.raises(ValueError, match="target: a rate must be a finite number above zero, not 0"):
        recuo.plan(1, "1/s", 0, 1)
    with pytest.raises(ValueError, match="requests must be between 0 and 2\\*\\*64 - 1"):
        recuo.plan(-1, "1/s", "1/s", 1)
    with pytest.raises(TypeError, match="requests must be an int"):
        recuo.plan(1.5, "1/s", "1/s", 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="allowance must be a rate"):
        recuo.plan(1, b"1/s", "1/s", 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="latency must be a number of seconds"):
        recuo.plan(1, "1/s", "1/s", "2")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="retry_fraction must be a number"):
        recuo.plan(1, "1/s", "1/s", 1, None)  # type: ignore[arg-type]
    assert not issubclass(recuo.PlanError, recuo.ConfigError)
