"""recuo.Attempts: the sans-IO state machine for code that runs its own loop.

The exact decisions are the shared scenarios' (test_vectors.py); here, the Python surface.
"""

from __future__ import annotations

from typing import Any

import pytest

import recuo
from retrying import is_uuid4

EXACT = recuo.Policy(max_attempts=3, base=1, cap=8, jitter="none", deadline=30, spread=0)


def test_a_whole_operation() -> None:
    a = recuo.Attempts(EXACT)
    assert (a.attempts, a.attempt, a.is_spent) == (0, None, False)
    assert a.begin(0) is None
    assert a.attempt is not None and a.attempt.number == 0
    retry = a.decide(recuo.classify(503), 100)
    assert (retry.kind, retry.delay_ms, retry.delay, retry.next_attempt) == ("retry", 1000, 1.0, 1)
    assert (retry.reason, retry.retry_at_ms) == (None, None)
    assert repr(retry) == "Decision(kind='retry', delay_ms=1000, next_attempt=1)"
    assert a.begin(1100) is None
    done = a.decide(recuo.classify(200), 1200)
    assert (done.kind, done.delay_ms, done.next_attempt, done.reason) == ("done", None, None, None)
    assert repr(done) == "Decision(kind='done')"
    report = a.report()
    assert (report.attempts, report.reason, report.elapsed_ms, report.delays_ms) == (2, None, 1200, (1000,))
    assert report.retry_at is None


def test_the_attempts_run_out() -> None:
    a = recuo.Attempts(EXACT)
    for now in (0, 2000, 5000):
        assert a.begin(now) is None
        decision = a.decide(True, now + 10)
    assert (decision.kind, decision.reason) == ("give_up", "attempts_exhausted")
    assert a.is_spent
    refused = a.begin(9000)
    assert refused is not None and (refused.kind, refused.reason) == ("give_up", "attempts_exhausted")
    assert a.attempts == 3


def test_exhaust_is_what_a_loop_does_when_no_attempt_is_left() -> None:
    a = recuo.Attempts(recuo.Policy(max_attempts=1))
    assert a.begin(0) is None and a.is_spent
    d = a.exhaust(5)
    assert (d.kind, d.reason) == ("give_up", "attempts_exhausted")
    assert a.report().elapsed_ms == 5


def test_a_wait_past_the_deadline_says_when_a_retry_would_be_allowed() -> None:
    a = recuo.Attempts(EXACT)
    a.begin(1000)
    d = a.decide(recuo.classify(429, headers={"Retry-After": "40"}), 1500)
    assert (d.kind, d.reason, d.retry_at_ms) == ("give_up", "wait_exceeds_deadline", 41_500)
    assert repr(d) == "Decision(kind='give_up', reason='wait_exceeds_deadline', retry_at_ms=41500)"


def test_cancel() -> None:
    a = recuo.Attempts(EXACT)
    a.begin(0)
    a.cancel()
    d = a.decide(True, 10)
    assert (d.kind, d.reason) == ("give_up", "cancelled")
    b = recuo.Attempts(EXACT)
    b.cancel()
    refused = b.begin(0)
    assert refused is not None and refused.reason == "cancelled"
    assert b.report().reason == "cancelled"


def test_booleans_are_predicates() -> None:
    a = recuo.Attempts(EXACT)
    a.begin(0)
    assert a.decide(True, 0).kind == "retry"
    a.begin(1000)
    assert a.decide(False, 1000).reason == "permanent"


def test_the_same_seed_gives_the_same_delays() -> None:
    def delays(seed: int) -> list[int | None]:
        a = recuo.Attempts(recuo.Policy(max_attempts=6), seed=seed)
        out = []
        for now in range(0, 5000, 1000):
            a.begin(now)
            out.append(a.decide(True, now).delay_ms)
        return out

    assert delays(7) == delays(7)
    assert delays(7) != delays(8)


def test_the_key_is_one_per_operation() -> None:
    a = recuo.Attempts(EXACT)
    key = a.idempotency_key
    assert is_uuid4(key) and a.idempotency_key == key
    a.begin(0)
    first = a.attempt
    assert first is not None and first.idempotency_key == key
    a.decide(True, 0)
    a.begin(1000)
    second = a.attempt
    assert second is not None and (second.number, second.idempotency_key) == (1, key)
    assert recuo.Attempts(EXACT).idempotency_key != key


def test_the_policy_is_a_copy() -> None:
    a = recuo.Attempts(EXACT)
    assert a.policy == EXACT
    assert repr(a) == "<recuo.Attempts: 0 of 3 begun>"


def test_decisions_and_reports_are_values() -> None:
    def run() -> tuple[recuo.Decision, recuo.Report]:
        a = recuo.Attempts(EXACT)
        a.begin(0)
        return a.decide(True, 0), a.report()

    (d1, r1), (d2, r2) = run(), run()
    assert d1 == d2 and hash(d1) == hash(d2) and r1 == r2
    with pytest.raises(AttributeError):
        d1.kind = "done"  # type: ignore[misc]
    with pytest.raises(TypeError):
        recuo.Decision()


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: recuo.Attempts("guide_a"), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Attempts(EXACT, seed=-1), ValueError),
        (lambda: recuo.Attempts(EXACT, seed="1"), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Attempts(EXACT, 1), TypeError),  # type: ignore[call-arg]
        (lambda: recuo.Attempts(EXACT).begin(-1), ValueError),
        (lambda: recuo.Attempts(EXACT).begin(2**64), ValueError),
        (lambda: recuo.Attempts(EXACT).begin(1.5), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Attempts(EXACT).begin(True), TypeError),
        (lambda: recuo.Attempts(EXACT).decide("retry", 0), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Attempts(EXACT).decide(1, 0), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Attempts(EXACT).decide(None, 0), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Attempts(EXACT).exhaust(None), TypeError),  # type: ignore[arg-type]
    ],
)
def test_bad_input(call: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        call()


def test_any_order_of_calls_answers_without_crashing() -> None:
    # Calls out of order (decide before begin, time going backwards, calls after giving up)
    # answer a decision; none raises or crashes.
    a = recuo.Attempts(EXACT)
    assert a.decide(True, 5).kind == "retry"
    assert a.decide(recuo.classify(200), 0).kind == "done"
    a.begin(2**64 - 1)
    a.begin(0)
    assert a.decide(True, 0).kind in ("retry", "give_up")
    a.cancel()
    a.cancel()
    assert a.exhaust(0).kind == "give_up"
    assert a.report().attempts == 2
