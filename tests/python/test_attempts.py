"""recuo.Operation: the core's machine for code that runs its own loop — the Python surface.

The exact steps, reports, stats and records are the shared loop scenarios' (test_loops.py);
the decisions of each attempt the shared decision scenarios' (test_vectors.py).
"""

from __future__ import annotations

from typing import Any

import pytest

import recuo
from retrying import is_uuid4

EXACT = recuo.Policy(max_attempts=3, base=1, cap=8, jitter="none", deadline=30, spread=0)


def test_a_whole_operation() -> None:
    op = recuo.Operation(EXACT)
    assert (op.attempt, op.is_finished, op.keeps_records) == (None, False, False)
    call = op.start(0)
    assert (call.kind, call.attempt, call.timeout_ms) == ("call", 0, 30_000)
    assert repr(call) == "Step(kind='call', attempt=0, timeout_ms=30000)"
    assert op.attempt is not None and op.attempt.number == 0
    sleep = op.responded(100, 503)
    assert (sleep.kind, sleep.attempt, sleep.delay_ms, sleep.delay) == ("sleep", 0, 1000, 1.0)
    assert (sleep.reason, sleep.retry_at_ms, sleep.report) == (None, None, None)
    assert repr(sleep) == "Step(kind='sleep', attempt=0, delay_ms=1000)"
    assert op.slept(1100).kind == "call"
    done = op.responded(1200, 200)
    assert (done.kind, repr(done)) == ("done", "Step(kind='done')")
    assert done.report == op.report
    report = op.report
    assert (report.attempts, report.reason, report.elapsed_ms, report.delays_ms) == (2, None, 1200, (1000,))
    assert (report.retry_at, report.stopped_by, op.is_finished) == (None, None, True)


def test_a_judged_failure() -> None:
    op = recuo.Operation(EXACT)
    op.start(0)
    assert op.failed(10).kind == "classify"
    assert repr(op.failed(10)) == "Step(kind='classify', attempt=0)"  # out of turn: repeated
    assert op.judged(10, recuo.classify(503)).delay_ms == 1000
    op.slept(1010)
    assert op.failed(1020).kind == "classify"
    gave_up = op.judged(1020, False)
    assert (gave_up.kind, gave_up.reason, gave_up.retry_at_ms) == ("gave_up", "permanent", None)
    assert repr(gave_up) == "Step(kind='gave_up', reason='permanent', retry_at_ms=None)"


def test_a_wait_past_the_deadline_says_when_a_retry_would_be_allowed() -> None:
    op = recuo.Operation(EXACT)
    op.start(1000, unix_ms=1_700_000_000_000)
    d = op.responded(1500, 429, headers={"Retry-After": "40"})
    assert (d.kind, d.reason, d.retry_at_ms) == ("gave_up", "wait_exceeds_deadline", 41_500)
    assert op.report.retry_at == 1_700_000_040.5


def test_cancel() -> None:
    op = recuo.Operation(EXACT)
    op.start(0)
    op.cancel()
    assert op.failed(10).kind == "classify"  # the attempt in flight ends as it ends
    d = op.judged(10, True)
    assert (d.kind, d.reason) == ("gave_up", "cancelled")
    other = recuo.Operation(EXACT)
    other.cancel()
    refused = other.start(0)
    assert (refused.kind, refused.reason, other.report.attempts) == ("gave_up", "cancelled", 0)


def test_guide_a_never_judges_the_last_failure() -> None:
    op = recuo.Operation(recuo.Policy(max_attempts=1), classify_last_failure=False)
    op.start(0)
    d = op.failed(5)
    assert (d.kind, d.reason) == ("gave_up", "attempts_exhausted")


def test_records_are_polled() -> None:
    op = recuo.Operation(EXACT, records="debug", request=("GET", "https://api.example/?token=x"))
    assert op.keeps_records
    op.start(0, unix_ms=0)
    op.responded(40, 200)
    polled = op.poll_record()
    assert polled is not None and polled[0] == "debug"
    assert isinstance(polled[1], recuo.AttemptRecord) and polled[1].url == "https://api.example/?token=[redacted]"
    result = op.poll_record()
    assert result is not None and isinstance(result[1], recuo.ResultRecord)
    assert op.poll_record() is None
    quiet = recuo.Operation(EXACT, records="warning")
    quiet.start(0)
    quiet.responded(40, 200)
    assert quiet.poll_record() is None


def test_the_same_seed_gives_the_same_delays() -> None:
    def delays(seed: int) -> list[int | None]:
        op = recuo.Operation(recuo.Policy(max_attempts=6), seed=seed)
        out = []
        op.start(0)
        for now in range(0, 5000, 1000):
            op.failed(now)
            out.append(op.judged(now, True).delay_ms)
            op.slept(now + 1)
        return out

    assert delays(7) == delays(7)
    assert delays(7) != delays(8)


def test_the_key_is_one_per_operation() -> None:
    op = recuo.Operation(EXACT)
    key = op.key
    assert is_uuid4(key) and op.key == key
    op.start(0)
    first = op.attempt
    assert first is not None and first.idempotency_key == key
    op.failed(0)
    op.judged(0, True)
    op.slept(1000)
    second = op.attempt
    assert second is not None and (second.number, second.idempotency_key) == (1, key)
    assert recuo.Operation(EXACT).key != key
    given = recuo.IdempotencyKey()
    assert recuo.Operation(EXACT, idempotency_key=given).key == str(given)


def test_a_key_given_makes_a_post_idempotent() -> None:
    post = ("POST", "https://api.example/pay")
    assert recuo.Operation(EXACT, request=post).start(0).kind == "call"
    plain = recuo.Operation(EXACT, request=post)
    plain.start(0)
    assert plain.responded(10, error="timeout").reason == "permanent"
    keyed = recuo.Operation(EXACT, request=post, idempotency_key=recuo.IdempotencyKey())
    keyed.start(0)
    assert keyed.responded(10, error="timeout").kind == "sleep"


def test_the_policy_is_a_copy() -> None:
    op = recuo.Operation(EXACT)
    assert op.policy == EXACT
    assert repr(op) == "<recuo.Operation: attempt 0 of 3>"
    assert recuo.Operation().policy == recuo.Policy()


def test_steps_and_reports_are_values() -> None:
    def run() -> tuple[recuo.Step, recuo.Report]:
        op = recuo.Operation(EXACT)
        op.start(0)
        op.failed(0)
        return op.judged(0, True), op.report

    (s1, r1), (s2, r2) = run(), run()
    assert s1 == s2 and r1 == r2
    with pytest.raises(AttributeError):
        s1.kind = "done"  # type: ignore[misc]
    with pytest.raises(TypeError):
        recuo.Step()


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: recuo.Operation("guide_a"), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Operation(EXACT, seed=-1), ValueError),
        (lambda: recuo.Operation(EXACT, seed="1"), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Operation(EXACT, 1), TypeError),  # type: ignore[call-arg]
        (lambda: recuo.Operation(EXACT, records="trace"), ValueError),  # type: ignore[arg-type]
        (lambda: recuo.Operation(EXACT, gate=1), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Operation(EXACT, request="GET"), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Operation(EXACT).start(-1), ValueError),
        (lambda: recuo.Operation(EXACT).start(2**64), ValueError),
        (lambda: recuo.Operation(EXACT).start(1.5), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Operation(EXACT).start(True), TypeError),
        (lambda: recuo.Operation(EXACT).judged(0, "retry"), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Operation(EXACT).judged(0, 1), TypeError),  # type: ignore[arg-type]
        (lambda: recuo.Operation(EXACT).responded(0), TypeError),
        (lambda: recuo.Operation(EXACT).responded(0, 99), ValueError),
        (lambda: recuo.Operation(EXACT).responded(0, error="dns"), ValueError),  # type: ignore[arg-type]
        (lambda: recuo.Operation(EXACT).stop_queue("tired"), ValueError),  # type: ignore[arg-type]
    ],
)
def test_bad_input(call: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        call()


def test_answers_out_of_turn_repeat_the_step() -> None:
    op = recuo.Operation(EXACT)
    assert op.succeeded(5).kind == "call"  # not started: starts
    assert (op.slept(6).kind, op.start(7).kind) == ("call", "call")  # the call again
    assert op.judged(8, True).kind == "call"
    assert op.succeeded(9).kind == "done"
    assert op.failed(10).kind == "done"  # finished: the end again
    assert op.report.attempts == 1
