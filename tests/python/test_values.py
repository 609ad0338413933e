"""The values the core declares once — ``recuo.Report``, ``Stats``, ``Plan``, ``WhoAnswered`` —
as the frozen dataclasses generated from those declarations (``recuo/_values.py``): the plain
form both ways, read back by the core, pickling, equality, hashing and immutability."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any, Callable

import pytest

import recuo
from recuo import _recuo

MS = 1_000_000  # nanoseconds


def a_report() -> recuo.Report:
    op = recuo.Operation(recuo.Policy(max_attempts=2, base=1, jitter="none"))
    op.start(0)
    op.responded(10, 503)
    op.slept(1010)
    op.responded(1020, 404)
    return op.report


def a_stats() -> recuo.Stats:
    recorder = recuo.StatsRecorder()
    for attempt, at_ms in [(0, 5), (1, 15), (0, 40)]:
        recorder.start(attempt, at_ms * MS)
        recorder.end()
    recorder.saw("rate_limited")
    recorder.finished(True)
    return recorder.snapshot()


def a_plan() -> recuo.Plan:
    return recuo.plan(600, "100/s", "95/s", latency=2, retry_fraction=0.5)


def a_who_answered() -> recuo.WhoAnswered:
    return recuo.who_answered({"CF-Ray": "8a1b", "Server": "cloudflare"})


def a_retry_after() -> recuo.RetryAfter:
    return recuo.parse_retry_after("12", 0)


MAKERS: list[Callable[[], Any]] = [a_report, a_stats, a_plan, a_who_answered, a_retry_after]
IDS = ["Report", "Stats", "Plan", "WhoAnswered", "RetryAfter"]


def test_the_values_made_by_the_core() -> None:
    assert a_report() == recuo.Report(attempts=2, reason="permanent", elapsed_ms=1020, delays_ms=(1000,))
    assert a_report().to_dict() == {
        "attempts": 2,
        "reason": "permanent",
        "elapsed_ms": 1020,
        "delays_ms": [1000],
        "stopped_by": None,
        "retry_at_unix_ms": None,
    }
    assert (a_report().elapsed, a_report().delays, a_report().retry_at) == (1.02, (1.0,), None)
    assert a_stats() == recuo.Stats(
        initial=2,
        retries=1,
        successes=1,
        throttled=1,
        min_spacing_ns=10 * MS,
        first_start_ns=5 * MS,
        last_start_ns=40 * MS,
        max_in_flight=1,
    )
    assert (a_stats().starts, a_stats().min_spacing_ms, a_stats().mean_spacing_ms) == (3, 10.0, 17.5)
    assert a_plan().to_dict() == {
        "interval_ms": 11,
        "duration_s": 12.631578947368421,
        "retries": 600.0,
        "in_flight": 190.0,
        "warnings": [
            "the target uses 95% of the allowance: little headroom for other clients",
            "about 190 requests will be in flight at once: check the server allows that many connections",
        ],
    }
    assert a_who_answered().to_dict() == {
        "origin": "cdn",
        "evidence": ["cf-ray → Cloudflare", "server: cloudflare → Cloudflare (a brand, weak evidence)"],
        "confidence": "medium",
    }


@pytest.mark.parametrize("make", MAKERS, ids=IDS)
def test_from_dict_reads_to_dict_back(make: Callable[[], Any]) -> None:
    value = make()
    plain = value.to_dict()
    back = type(value).from_dict(plain)
    assert back == value and type(back) is type(value)
    assert back.to_dict() == plain


@pytest.mark.parametrize("make", MAKERS, ids=IDS)
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_each_value_pickles(make: Callable[[], Any], protocol: int) -> None:
    value = make()
    back = pickle.loads(pickle.dumps(value, protocol))
    assert back == value and type(back) is type(value)
    assert copy.deepcopy(value) == value


@pytest.mark.parametrize("make", MAKERS, ids=IDS)
def test_each_value_is_frozen_hashable_and_the_packages(make: Callable[[], Any]) -> None:
    value = make()
    cls = type(value)
    assert cls is getattr(recuo, cls.__name__) and cls.__module__ == "recuo"
    assert not hasattr(_recuo, cls.__name__)  # no second declaration in the native module
    assert hash(value) == hash(make()) and {value, make()} == {value}
    field = dataclasses.fields(value)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, field, 1)
    with pytest.raises(AttributeError):  # nothing else can be set either
        setattr(value, "not_a_field", 1)


def test_from_dict_normalises() -> None:
    plan = recuo.Plan.from_dict(
        {"interval_ms": 667, "duration_s": 400, "retries": 0, "in_flight": 3, "warnings": []}
    )
    assert repr(plan) == "Plan(interval_ms=667, duration_s=400.0, retries=0.0, in_flight=3.0, warnings=())"
    assert recuo.Stats.from_dict(recuo.Stats().to_dict()) == recuo.Stats()


@pytest.mark.parametrize(
    ("cls", "value", "error", "message"),
    [
        (recuo.Report, [("attempts", 1)], TypeError, "value must be a mapping \\(a dict\\), not list"),
        (recuo.Stats, None, TypeError, "value must be a mapping"),
        (recuo.Report, {"attempts": 1}, ValueError, "^not a recuo.Report: missing field `elapsed_ms`$"),
        (recuo.Stats, dict(recuo.Stats().to_dict(), starts=0), ValueError, "unknown field `starts`"),
        (recuo.Stats, dict(recuo.Stats().to_dict(), retries=-1), ValueError, "not a recuo.Stats: invalid value"),
        (recuo.Plan, {**a_plan().to_dict(), "duration_s": float("nan")}, ValueError, "not JSON compliant"),
        (recuo.WhoAnswered, {**a_who_answered().to_dict(), "origin": "isp"}, ValueError, "unknown variant `isp`"),
        (recuo.WhoAnswered, {**a_who_answered().to_dict(), "evidence": "one"}, ValueError, "invalid type"),
        (recuo.Report, {**a_report().to_dict(), "reason": "bored"}, ValueError, "unknown variant `bored`"),
    ],
)
def test_from_dict_refuses(cls: Any, value: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        cls.from_dict(value)


def test_a_stats_built_by_hand_is_read_by_the_core() -> None:
    # The fields are the core's; what is made of them is too: a bad field is refused there.
    bad = recuo.Stats(retries=-1)
    with pytest.raises(ValueError, match="^stats: invalid value: integer `-1`"):
        bad.starts  # noqa: B018
    with pytest.raises(ValueError, match="^other: invalid value"):
        recuo.Stats().merge(bad)
    assert recuo.Stats(initial=2, retries=3).starts == 5


def test_the_native_module_reads_only_the_four() -> None:
    with pytest.raises(ValueError, match='no value is named "Policy"'):
        _recuo._read_value("Policy", {})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a recuo.Report, not dict"):
        recuo.BatchQueue.end_of({})  # type: ignore[arg-type]
    assert recuo.BatchQueue.end_of(a_report()) == ("gave_up", "permanent", None)
