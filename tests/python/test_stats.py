"""Batch stats (SPEC §7): ``recuo.Stats`` (the core's, frozen, mergeable) and
``recuo.StatsRecorder`` (the core's recorder, shared by threads), and ``run_batch``'s stats."""

from __future__ import annotations

import threading
from typing import Any, Callable

import pytest

import recuo

MS = 1_000_000  # nanoseconds


def recorded(*starts: tuple[int, int]) -> recuo.Stats:
    """The stats of a recorder that saw attempts ``(number, at_ms)`` start and end in order."""
    recorder = recuo.StatsRecorder()
    for attempt, at_ms in starts:
        recorder.start(attempt, at_ms * MS)
        recorder.end()
    return recorder.snapshot()


def test_an_empty_stats() -> None:
    empty = recuo.Stats()
    assert empty == recuo.StatsRecorder().snapshot()
    assert (empty.initial, empty.retries, empty.starts, empty.max_in_flight) == (0, 0, 0, 0)
    assert (empty.min_spacing_ms, empty.mean_spacing_ms, empty.first_start_ns, empty.last_start_ns) == (
        None,
        None,
        None,
        None,
    )
    assert repr(empty) == (
        "Stats(initial=0, retries=0, successes=0, failures=0, not_started=0, throttled=0, "
        "unavailable=0, min_spacing_ns=None, first_start_ns=None, last_start_ns=None, max_in_flight=0)"
    )


def test_the_recorder_counts_as_the_core_does() -> None:
    # The core's own unit test, from Python: the same numbers.
    r = recuo.StatsRecorder()
    r.start(0, 1_000)
    r.start(0, 1_500)
    r.end()
    r.start(1, 4_000)
    r.saw("rate_limited")
    r.saw(recuo.classify(503))
    r.saw("server_error")
    r.end()
    r.end()
    r.finished(True)
    r.finished(False)
    r.not_started()
    s = r.snapshot()
    assert (s.initial, s.retries, s.starts) == (2, 1, 3)
    assert (s.successes, s.failures, s.not_started) == (1, 1, 1)
    assert (s.throttled, s.unavailable) == (1, 1)
    assert s.min_spacing_ms == 0.0005
    assert s.mean_spacing_ms == 0.0015
    assert s.max_in_flight == 2
    assert (s.first_start_ns, s.last_start_ns) == (1_000, 4_000)
    assert s.to_dict() == {
        "initial": 2,
        "retries": 1,
        "successes": 1,
        "failures": 1,
        "not_started": 1,
        "throttled": 1,
        "unavailable": 1,
        "min_spacing_ns": 500,
        "first_start_ns": 1_000,
        "last_start_ns": 4_000,
        "max_in_flight": 2,
    }
    assert repr(r) == "<recuo.StatsRecorder: 3 starts, 1 succeeded, 1 gave up>"


def test_a_snapshot_does_not_change() -> None:
    r = recuo.StatsRecorder()
    before = r.snapshot()
    r.start(0)
    r.end()
    assert before.initial == 0 and r.snapshot().initial == 1
    with pytest.raises(AttributeError):
        before.initial = 3  # type: ignore[misc]


def test_start_reads_the_monotonic_clock() -> None:
    r = recuo.StatsRecorder()
    lo = recuo.monotonic_ns()
    r.start(0)
    hi = recuo.monotonic_ns()
    first = r.snapshot().first_start_ns
    assert first is not None and lo <= first <= hi


def test_merge_adds_up() -> None:
    a = recorded((0, 5), (0, 15))  # spacing 10 ms
    b = recorded((0, 1), (1, 8), (0, 31))  # spacings 7 and 23 ms
    m = a.merge(b)
    assert (m.initial, m.retries, m.starts) == (4, 1, 5)
    assert m.min_spacing_ms == 7.0
    assert (m.first_start_ns, m.last_start_ns) == (1 * MS, 31 * MS)
    assert m.mean_spacing_ms == 30 / 4
    assert m.max_in_flight == 2  # an upper bound: 1 + 1
    assert a + b == m
    assert b + a == m  # merging is symmetric
    assert sum([a, b]) == m
    assert sum([a, b], recuo.Stats()) == m
    assert a.merge(recuo.Stats()) == a
    assert a != b


def test_a_merge_that_would_overflow_is_refused() -> None:
    # The core's one answer (Stats::merge): a count that would pass 2**64 - 1 is refused, never
    # rounded to a wrong figure — OverflowError here, as C's RECUO_ERR_INVALID_STATS.
    full = recuo.Stats(retries=2**64 - 1)
    one = recuo.Stats(retries=1)
    merges: list[Callable[[], object]] = [
        lambda: full.merge(one),
        lambda: full + one,
        lambda: one + full,
        lambda: sum([full, one]),
    ]
    for merge in merges:
        with pytest.raises(OverflowError, match="2\\*\\*64 - 1"):
            merge()
    first = recorded((0, 1))  # one first attempt: the starts would not fit
    with pytest.raises(OverflowError):
        full.merge(first)
    assert full.merge(recuo.Stats()) == full
    assert full.starts == 2**64 - 1


def test_adding_anything_else_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        recuo.Stats() + 1  # type: ignore[operator]
    with pytest.raises(TypeError):
        1 + recuo.Stats()  # the stubs allow any int (for sum()); only 0 works
    with pytest.raises(TypeError):
        recuo.Stats().merge({})  # type: ignore[arg-type]


def test_one_recorder_across_threads() -> None:
    recorder = recuo.StatsRecorder()
    threads, per_thread = 8, 500
    barrier = threading.Barrier(threads)

    def work(k: int) -> None:
        barrier.wait()
        for i in range(per_thread):
            recorder.start(1 if i % 5 == 4 else 0)
            if i % 10 == 0:
                recorder.saw("rate_limited")
            recorder.end()
            recorder.finished(i % 7 != 0)

    workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    s = recorder.snapshot()
    total = threads * per_thread
    assert s.starts == total
    assert s.retries == threads * (per_thread // 5)
    assert s.initial == total - s.retries
    assert s.throttled == threads * (per_thread // 10)
    assert s.failures == threads * len(range(0, per_thread, 7))
    assert s.successes + s.failures == total
    assert 1 <= s.max_in_flight <= threads
    assert s.min_spacing_ms is not None and s.min_spacing_ms >= 0


def test_a_recorder_per_thread_merged() -> None:
    recorders = [recuo.StatsRecorder() for _ in range(4)]

    def work(r: recuo.StatsRecorder, k: int) -> None:
        for i in range(100):
            r.start(0, (k * 1000 + i * 10) * MS)
            r.end()
            r.finished(True)

    workers = [threading.Thread(target=work, args=(r, k)) for k, r in enumerate(recorders)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    total = sum(r.snapshot() for r in recorders)
    assert isinstance(total, recuo.Stats)
    assert (total.initial, total.successes, total.max_in_flight) == (400, 400, 4)
    assert total.min_spacing_ms == 10.0
    assert (total.first_start_ns, total.last_start_ns) == (0, (3000 + 990) * MS)


def test_run_batch_answers_a_recuo_stats() -> None:
    def down() -> None:
        raise ConnectionError("down")

    report = recuo.run_batch(
        [lambda: 1, down, lambda: 3], policy=recuo.Policy(max_attempts=2, base=0.001, cap=0.001), workers=2
    )
    stats = report.stats
    assert type(stats) is recuo.Stats
    assert (stats.initial, stats.retries, stats.successes, stats.failures) == (3, 1, 2, 1)
    assert stats.starts == 4
    assert not hasattr(recuo, "BatchStats")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda r: r.start(-1), ValueError, "attempt must not be negative"),
        (lambda r: r.start(2**32), ValueError, "attempt must be at most"),
        (lambda r: r.start(True), TypeError, "attempt must be an int, not bool"),
        (lambda r: r.start(0, -1), ValueError, "now_ns"),
        (lambda r: r.start(0, 1.5), TypeError, "now_ns must be an int"),
        (lambda r: r.saw("teapot"), ValueError, "cause must be one of"),
        (lambda r: r.saw(429), TypeError, "cause must be a str or a recuo.Verdict"),
        (lambda r: r.finished(1), TypeError, "success must be a bool"),
    ],
)
def test_bad_input(call: Any, error: type[Exception], message: str) -> None:
    r = recuo.StatsRecorder()
    with pytest.raises(error, match=message):
        call(r)
    assert r.snapshot() == recuo.Stats()
