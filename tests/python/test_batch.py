"""recuo.run_batch: a queue of operations through one policy and one gate — each result (the
value, the very exception, or not started), the core's stats, workers, and a deadline for the
whole batch after which nothing starts."""

from __future__ import annotations

import threading
import time
from typing import Callable

import pytest

import recuo

FAST = recuo.Policy(max_attempts=3, base=0.001, cap=0.002)


def flaky(failures: int, value: object, errors: list[Exception]) -> Callable[[], object]:
    calls = 0

    def op() -> object:
        nonlocal calls
        calls += 1
        if calls <= failures:
            error = ConnectionError(f"{value}: down {calls}")
            errors.append(error)
            raise error
        return value

    return op


def test_results_and_counts() -> None:
    errors: list[Exception] = []
    ops = [flaky(0, 0, errors), flaky(1, 1, errors), flaky(2, 2, errors), flaky(5, 3, errors)]
    report = recuo.run_batch(ops, policy=FAST)
    assert [r.status for r in report.results] == ["succeeded", "succeeded", "succeeded", "gave_up"]
    assert [r.value for r in report.results] == [0, 1, 2, None]
    assert [r.attempts for r in report.results] == [1, 2, 3, 3]
    last = report.results[3]
    assert last.error is errors[-1]  # the very exception object
    assert last.reason == "attempts_exhausted"
    assert last.report is not None and last.report.attempts == 3
    assert report.results[0].error is None and report.results[0].reason is None
    stats = report.stats
    assert (stats.initial, stats.retries, stats.starts) == (4, 5, 9)
    assert (stats.successes, stats.failures, stats.not_started) == (3, 1, 0)
    assert (stats.throttled, stats.unavailable, stats.max_in_flight) == (0, 0, 1)
    assert stats.min_spacing_ms is not None and stats.min_spacing_ms >= 0
    assert stats.mean_spacing_ms is not None and stats.mean_spacing_ms >= stats.min_spacing_ms
    assert 0 < report.elapsed < 5
    assert repr(report.results[0]) == "BatchResult(status='succeeded', value=0, attempts=1)"
    assert repr(last).startswith("BatchResult(status='gave_up', error=ConnectionError('3: down 3')")
    assert repr(report).startswith("<recuo.BatchReport: 4 operations in ")


def test_causes_seen_are_counted() -> None:
    class HTTPError(Exception):
        def __init__(self, status: int) -> None:
            super().__init__(status)
            self.status = status

    def answers(*statuses: int) -> Callable[[], int]:
        queue = list(statuses)

        def op() -> int:
            status = queue.pop(0)
            if status >= 400:
                raise HTTPError(status)
            return status

        return op

    def verdict(exc: Exception) -> recuo.Verdict:
        assert isinstance(exc, HTTPError)
        return recuo.classify(exc.status)

    report = recuo.run_batch([answers(429, 200), answers(503, 503, 200), answers(404)], policy=FAST, classify=verdict)
    assert [r.status for r in report.results] == ["succeeded", "succeeded", "gave_up"]
    assert report.results[2].reason == "permanent"
    assert (report.stats.throttled, report.stats.unavailable) == (1, 2)


def test_workers_run_at_once_within_the_gate() -> None:
    limit = recuo.ConcurrencyLimit(3)
    inside = 0
    most = 0
    lock = threading.Lock()
    names: set[str] = set()

    def op(i: int) -> Callable[[], int]:
        def run() -> int:
            nonlocal inside, most
            with lock:
                inside += 1
                most = max(most, inside)
                names.add(threading.current_thread().name)
            assert recuo.current_attempt().number == 0
            time.sleep(0.01)
            with lock:
                inside -= 1
            return i * i

        return run

    report = recuo.run_batch([op(i) for i in range(20)], workers=5, gate=recuo.Gate(limit=limit))
    assert [r.value for r in report.results] == [i * i for i in range(20)]
    assert most == 3  # five workers, three places
    assert report.stats.max_in_flight == 3
    assert limit.max_in_flight == 3
    assert len(names) >= 2  # the work was spread over threads
    assert report.elapsed < 0.01 * 20  # faster than one at a time


def test_starts_keep_the_regulators_spacing() -> None:
    report = recuo.run_batch([lambda: None] * 6, workers=3, gate=recuo.Gate(regulator=recuo.Regulator("100/s")))
    assert report.stats.starts == 6
    # Slots 10 ms apart: 50 ms from the first to the last (stamped when each runs, a little
    # after its slot, so the measured spacing may be a little less).
    assert report.elapsed >= 0.05
    assert report.stats.mean_spacing_ms is not None and report.stats.mean_spacing_ms >= 8.0
    assert report.stats.min_spacing_ms is not None and report.stats.min_spacing_ms >= 0


def test_nothing_starts_after_the_deadline() -> None:
    started: list[int] = []

    def op(i: int) -> Callable[[], int]:
        def run() -> int:
            started.append(i)
            return i

        return run

    regulator = recuo.Regulator("5/s")  # one start every 200 ms
    began = time.monotonic()
    report = recuo.run_batch(
        [op(i) for i in range(10)], gate=recuo.Gate(regulator=regulator), deadline=0.5, workers=2
    )
    took = time.monotonic() - began
    statuses = [r.status for r in report.results]
    # Starts at 0, 200 and 400 ms; the slot at 600 ms is past the deadline.
    assert started == [0, 1, 2] or sorted(started) == [0, 1, 2]
    assert statuses.count("succeeded") == 3
    assert statuses.count("not_started") == 7
    assert report.stats.not_started == 7
    assert report.stats.successes == 3
    assert took < 1.5, f"the batch took {took:.2f} s with a 0.5 s deadline"
    for r in report.results:
        if r.status == "not_started":
            assert (r.value, r.error, r.stopped_by, r.attempts) == (None, None, None, 0)
            assert r.reason in ("wait_exceeds_deadline", "cancelled")


def test_what_the_deadline_kept_from_starting_says_so() -> None:
    report = recuo.run_batch(
        [lambda: 1 for _ in range(10)], gate=recuo.Gate(regulator=recuo.Regulator("5/s")), deadline=0.5, workers=2
    )
    reasons = [r.reason for r in report.results if r.status == "not_started"]
    assert reasons == ["wait_exceeds_deadline"] * 7


def test_no_operation_waits_past_the_deadline() -> None:
    errors: list[Exception] = []
    policy = recuo.Policy(max_attempts=5, base=10, cap=10, jitter="none")  # 10 s between attempts
    began = time.monotonic()
    report = recuo.run_batch([flaky(5, "x", errors)], policy=policy, deadline=1)
    assert time.monotonic() - began < 1.0
    result = report.results[0]
    assert (result.status, result.reason, result.attempts) == ("gave_up", "wait_exceeds_deadline", 1)
    assert result.error is errors[0]


def test_a_classifier_that_raises_stops_the_batch() -> None:
    def bad(exc: Exception) -> bool:
        raise RuntimeError("classifier broke")

    errors: list[Exception] = []
    with pytest.raises(RuntimeError, match="classifier broke") as caught:
        recuo.run_batch([flaky(1, i, errors) for i in range(5)], classify=bad, workers=2)
    assert caught.value.__context__ in errors


def test_empty_and_bad_arguments() -> None:
    empty = recuo.run_batch([])
    assert empty.results == () and empty.stats.starts == 0
    assert empty.stats.min_spacing_ms is None and empty.stats.mean_spacing_ms is None
    assert recuo.run_batch(iter([lambda: 1])).results[0].value == 1
    with pytest.raises(ValueError, match="workers must be at least 1"):
        recuo.run_batch([], workers=0)
    with pytest.raises(TypeError, match="operations must be an iterable"):
        recuo.run_batch(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="each operation must be callable"):
        recuo.run_batch([1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="policy must be a recuo.Policy"):
        recuo.run_batch([], policy="fast")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="gate must be a recuo.Gate"):
        recuo.run_batch([], gate=recuo.RetryBudget())  # type: ignore[arg-type]
    with pytest.raises(recuo.ConfigError, match="negative"):
        recuo.run_batch([], deadline=-1)

    async def coro() -> None: ...

    with pytest.raises(TypeError, match="async def operation would never be awaited"):
        recuo.run_batch([coro])


def test_the_budget_spans_the_batch() -> None:
    budget = recuo.RetryBudget(0.0, 0.2)  # two retries in the window, for the whole batch
    errors: list[Exception] = []
    report = recuo.run_batch([flaky(1, i, errors) for i in range(4)], policy=FAST, gate=recuo.Gate(budget=budget))
    assert [r.status for r in report.results] == ["succeeded", "succeeded", "gave_up", "gave_up"]
    assert [r.reason for r in report.results] == [None, None, "budget_exhausted", "budget_exhausted"]
    assert report.stats.retries == 2
