"""recuo.retry_delay_ms (guide B) and recuo.parse_retry_after."""

from __future__ import annotations

import email.utils
import math
import time
from typing import Any, cast

import pytest

import recuo

NOW_MS = 784_111_777_000  # Sun, 06 Nov 1994 08:49:37 GMT


# --- retry_delay_ms -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("12", 12_000.0),
        (b"12", 12_000.0),
        ("0012", 12_000.0),
        ("\t120 ", 120_000.0),
        ("0", 0.0),
        ("Sun, 06 Nov 1994 08:50:07 GMT", 30_000.0),
        ("Sunday, 06-Nov-94 08:50:07 GMT", 30_000.0),
        ("Sun Nov  6 08:50:07 1994", 30_000.0),
        ("Sat, 05 Nov 1994 08:49:37 GMT", 0.0),
        ("9007199254740", 9_007_199_254_740_000.0),
        ("9007199254741", math.inf),
        ("99999999999999999999999999999", math.inf),
    ],
)
def test_the_server_wait_is_exact(value: str | bytes, expected: float) -> None:
    got = recuo.retry_delay_ms(value, 0, NOW_MS)
    assert type(got) is float
    assert got == expected


def test_the_server_wait_does_not_depend_on_the_attempt() -> None:
    assert {recuo.retry_delay_ms("7", a, NOW_MS) for a in (0, 1, 5, 2**32, 10**30)} == {7000.0}


@pytest.mark.parametrize(
    "value",
    [None, "", "soon", "-5", "1.5", "+5", "12s", "Sun, 06 Nov 1994 08:49:37 UTC", b"\xff\xfe", "١٢", "1\x002"],
)
def test_no_server_wait_falls_back_to_the_seeded_jitter(value: str | bytes | None) -> None:
    for attempt, window in [(0, 1000), (1, 2000), (2, 4000), (3, 8000), (4, 8000), (10**9, 8000)]:
        got = recuo.retry_delay_ms(value, attempt, NOW_MS, seed=11)
        assert got == recuo.retry_delay_ms(None, min(attempt, 2**32 - 1), NOW_MS, seed=11)
        assert 0 <= got <= window
        assert got == int(got)


def test_the_jitter_follows_the_seed() -> None:
    # tests/vectors/seeded.json: seed 1000, attempt 0 draws 209 ms.
    assert recuo.retry_delay_ms(None, 0, NOW_MS, seed=1000) == 209.0
    assert recuo.retry_delay_ms(None, 0, seed=1000) == 209.0
    draws = {recuo.retry_delay_ms(None, 3, NOW_MS, seed=s) for s in range(50)}
    assert len(draws) > 40
    assert all(0 <= d <= 8000 for d in draws)


def test_a_lone_surrogate_is_invalid_not_an_error() -> None:
    parsed = recuo.parse_retry_after("12\udc80", NOW_MS)
    assert parsed.kind == "invalid"
    assert recuo.retry_delay_ms("\udc80", 0, NOW_MS, seed=1) == recuo.retry_delay_ms(None, 0, seed=1)


def test_now_defaults_to_the_system_clock() -> None:
    in_30_s = email.utils.formatdate(time.time() + 30, usegmt=True)
    # The date has whole seconds, so the wait is between 29 and 30 s; allow a slow machine.
    assert 25_000 <= recuo.retry_delay_ms(in_30_s, 0) <= 30_000
    assert recuo.parse_retry_after(in_30_s).kind == "date"
    assert recuo.retry_delay_ms("Sun, 06 Nov 1994 08:49:37 GMT", 0) == 0.0


def test_now_may_be_any_64_bit_instant() -> None:
    date = "Thu, 01 Jan 1970 00:00:10 GMT"
    assert recuo.retry_delay_ms(date, 0, 0) == 10_000.0
    assert recuo.retry_delay_ms(date, 0, -5_000) == 15_000.0
    assert recuo.retry_delay_ms(date, 0, 2**63 - 1) == 0.0
    assert recuo.parse_retry_after(date, -(2**63)).kind == "unbounded"


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (("12", -1), {}, ValueError, "attempt must not be negative"),
        (("12", -(10**30)), {}, ValueError, "attempt must not be negative"),
        (("12", True), {}, TypeError, "attempt must be an int, not bool"),
        (("12", 1.0), {}, TypeError, "attempt must be an int, not float"),
        (("12", "1"), {}, TypeError, "attempt must be an int, not str"),
        ((12, 0), {}, TypeError, "retry_after must be str, bytes or None, not int"),
        ((bytearray(b"12"), 0), {}, TypeError, "retry_after must be str, bytes or None, not bytearray"),
        (("12", 0, 1.5), {}, TypeError, "now_ms must be an int, not float"),
        (("12", 0, False), {}, TypeError, "now_ms must be an int, not bool"),
        (("12", 0, 2**63), {}, ValueError, "now_ms must be between"),
        (("12", 0, -(2**63) - 1), {}, ValueError, "now_ms must be between"),
        ((None, 0), {"seed": -1}, ValueError, "seed must be between"),
        ((None, 0), {"seed": 2**64}, ValueError, "seed must be between"),
        ((None, 0), {"seed": "1"}, TypeError, "seed must be an int, not str"),
    ],
    ids=lambda v: repr(v),
)
def test_retry_delay_bad_input(args: tuple[Any, ...], kwargs: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message) as caught:
        recuo.retry_delay_ms(*args, **kwargs)
    assert type(caught.value) is error


def test_retry_delay_arguments_are_checked() -> None:
    with pytest.raises(TypeError):
        recuo.retry_delay_ms("12")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        recuo.retry_delay_ms("12", 0, NOW_MS, 5)  # type: ignore[call-arg]


# --- parse_retry_after ----------------------------------------------------------------------


def test_parse_answers_kind_and_wait() -> None:
    seconds = recuo.parse_retry_after("12", NOW_MS)
    assert (seconds.kind, seconds.wait_ms) == ("seconds", 12_000)
    date = recuo.parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", NOW_MS)
    assert (date.kind, date.wait_ms) == ("date", 30_000)
    past = recuo.parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", NOW_MS)
    assert (past.kind, past.wait_ms) == ("date", 0)
    huge = recuo.parse_retry_after("9" * 30, NOW_MS)
    assert (huge.kind, huge.wait_ms) == ("unbounded", None)
    for value in ("soon", "", None, b"\x00"):
        invalid = recuo.parse_retry_after(value, NOW_MS)
        assert (invalid.kind, invalid.wait_ms) == ("invalid", None)


def test_the_wait_is_an_int() -> None:
    wait = recuo.parse_retry_after("9007199254740", NOW_MS).wait_ms
    assert type(wait) is int
    assert wait == 2**53 - 1 - 991


def test_retry_after_repr_eq_hash() -> None:
    a = recuo.parse_retry_after("12", NOW_MS)
    b = recuo.parse_retry_after(b" 0012 ", NOW_MS)
    c = recuo.parse_retry_after("13", NOW_MS)
    d = recuo.parse_retry_after("Sun, 06 Nov 1994 08:49:49 GMT", NOW_MS)
    assert repr(a) == "RetryAfter(kind='seconds', wait_ms=12000)"
    assert repr(recuo.parse_retry_after("x")) == "RetryAfter(kind='invalid', wait_ms=None)"
    assert repr(recuo.parse_retry_after("9" * 20)) == "RetryAfter(kind='unbounded', wait_ms=None)"
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert a != d  # same wait, another kind
    assert d.wait_ms == a.wait_ms
    assert a != cast(object, (a.kind, a.wait_ms))
    assert len({a, b, c, d}) == 3
    assert type(a) is recuo.RetryAfter


def test_retry_after_is_frozen() -> None:
    parsed = recuo.parse_retry_after("12", NOW_MS)
    with pytest.raises(AttributeError):
        parsed.kind = "date"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        parsed.wait_ms = 0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        parsed.other = 1  # type: ignore[attr-defined]
    assert (parsed.kind, parsed.wait_ms) == ("seconds", 12_000)


def test_retry_after_reads_back_through_the_core_only_whole() -> None:
    with pytest.raises(TypeError):
        recuo.RetryAfter()  # type: ignore[call-arg]
    parsed = recuo.parse_retry_after("12", NOW_MS)
    assert recuo.RetryAfter.from_dict(parsed.to_dict()) == parsed
    assert parsed.to_dict() == {"kind": "seconds", "wait_ms": 12_000}
    for plain in ({"kind": "seconds", "wait_ms": None}, {"kind": "invalid", "wait_ms": 5},
                  {"kind": "date", "wait_ms": 2**53}, {"kind": "soon", "wait_ms": None}):
        with pytest.raises(ValueError, match="not a recuo.RetryAfter"):
            recuo.RetryAfter.from_dict(plain)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((12,), TypeError, "retry_after must be str, bytes or None, not int"),
        ((["12"],), TypeError, "retry_after must be str, bytes or None, not list"),
        (("12", "now"), TypeError, "now_ms must be an int, not str"),
        (("12", 2**64), ValueError, "now_ms must be between"),
    ],
    ids=lambda v: repr(v),
)
def test_parse_bad_input(args: tuple[Any, ...], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        recuo.parse_retry_after(*args)
