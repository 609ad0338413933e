"""recuo.Regulator: rates, exact try_acquire_at sequences on a fake clock, costs, blocking and
async acquire, adaptive slow-down, and the promise — at most burst + rate × window starts in
any window, at least 95% of them used — with threads sharing one regulator.

The limit checks follow core/tests/regulator_limits.rs: a fake clock that every try moves
0.1 ms, every pair of starts checked against the window bound."""

from __future__ import annotations

import asyncio
import math
import threading
import time

import pytest

import recuo

S = 1_000_000_000  # one second in ns
RATE = "100/s"
BURST = 5
STEP_NS = 100_000  # each try moves the fake clock 0.1 ms


def check_window(starts: list[int], span_ns: int, rate: str = RATE, burst: int = BURST) -> None:
    """Every window between two starts holds at most burst + rate × window starts, and the
    starts used at least 95% of what the span allowed (no lost permits)."""
    starts = sorted(starts)
    interval = 1e9 / recuo.Regulator(rate).rate
    for i in range(len(starts)):
        for j in range(i, len(starts)):
            count = j - i + 1
            allowed = burst + (starts[j] - starts[i]) / interval
            assert count <= allowed + 1e-9, f"{count} starts in {starts[j] - starts[i]} ns, more than {allowed}"
    possible = burst + span_ns / interval
    assert len(starts) >= 0.95 * possible, f"only {len(starts)} of {possible:.1f} starts used"


# --- construction -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rate", "per_second"),
    [
        ("120/min", 2.0),
        ("2/s", 2.0),
        ("1.5/s", 1.5),
        ("5000/h", 5000 / 3600),
        (" 90 / MIN ", 1.5),
        ("86400/day", 1.0),
        ("3", 3.0),
        (2.5, 2.5),
        (7, 7.0),
    ],
)
def test_rates_as_text_or_numbers_per_second(rate: str | float, per_second: float) -> None:
    regulator = recuo.Regulator(rate)
    assert regulator.rate == pytest.approx(per_second, rel=1e-12)
    assert regulator.burst == 1


@pytest.mark.parametrize("rate", ["", "0/min", "-5/s", "abc", "5/fortnight", "1e3/s", "/s", "NaN/s", "5/", 0, -1.0])
def test_bad_rates_are_value_errors_with_the_cores_message(rate: str | float) -> None:
    with pytest.raises(ValueError, match=r"rate: .*(not a rate|above zero)"):
        recuo.Regulator(rate)


@pytest.mark.parametrize("rate", [math.nan, math.inf, 10**400])
def test_non_finite_rates_are_refused(rate: float) -> None:
    with pytest.raises(ValueError, match="finite number above zero"):
        recuo.Regulator(rate)


def test_wrong_types_are_type_errors() -> None:
    with pytest.raises(TypeError, match="rate must be a rate"):
        recuo.Regulator(True)
    with pytest.raises(TypeError, match="rate must be a rate"):
        recuo.Regulator(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="burst must be an int"):
        recuo.Regulator("1/s", 1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="adaptive must be a bool"):
        recuo.Regulator("1/s", adaptive=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="cost must be an int"):
        recuo.Regulator("1/s").try_acquire(cost=True)
    with pytest.raises(TypeError, match="now_ns must be an int"):
        recuo.Regulator("1/s").try_acquire_at(1.5)  # type: ignore[arg-type]


def test_bad_bursts_costs_and_clock_readings_are_value_errors() -> None:
    with pytest.raises(ValueError, match="the burst must be at least 1"):
        recuo.Regulator("1/s", 0)
    for burst in (-1, 2**32):
        with pytest.raises(ValueError, match="burst must be between 0 and 2\\*\\*32 - 1"):
            recuo.Regulator("1/s", burst)
    regulator = recuo.Regulator("10/s", 10)
    with pytest.raises(ValueError, match="a start of cost 11 can never pass a regulator whose burst is 10"):
        regulator.try_acquire_at(S, cost=11)
    with pytest.raises(ValueError, match="cost 11"):
        regulator.acquire(cost=11)
    with pytest.raises(ValueError, match="cost 11"):
        regulator.try_acquire(cost=11)
    with pytest.raises(ValueError, match="cost must be between"):
        regulator.try_acquire(cost=-1)
    for now in (-1, 2**64):
        with pytest.raises(ValueError, match="now_ns"):
            regulator.try_acquire_at(now)
    for timeout in (-0.5, math.nan):
        with pytest.raises(ValueError, match="timeout must be None or a number of seconds"):
            regulator.acquire(timeout)


def test_repr() -> None:
    assert repr(recuo.Regulator("90/min", 3)) == "Regulator('90/min', burst=3)"
    assert repr(recuo.Regulator(2, adaptive=True)) == "Regulator('120/min', burst=1, adaptive=True)"
    assert repr(recuo.Regulator("5000/s")) == "Regulator('5000/s', burst=1)"


# --- exact sequences on a fake clock --------------------------------------------------------


def test_a_burst_then_one_per_interval() -> None:
    regulator = recuo.Regulator("2/s", 3)
    t0 = 10 * S
    assert [regulator.try_acquire_at(t0) for _ in range(4)] == [0, 0, 0, 500_000_000]
    assert regulator.try_acquire_at(t0 + S // 2 - 1) == 1
    assert regulator.try_acquire_at(t0 + S // 2) == 0
    assert regulator.try_acquire_at(t0 + S // 2) == 500_000_000
    # After a quiet spell the burst is back, never more.
    later = t0 + 100 * S
    assert [regulator.try_acquire_at(later) for _ in range(4)] == [0, 0, 0, 500_000_000]


def test_costs_weigh_several_starts() -> None:
    regulator = recuo.Regulator("10/s", 10)
    assert regulator.try_acquire_at(S, cost=7) == 0
    assert regulator.try_acquire_at(S, cost=4) == 100_000_000
    assert regulator.try_acquire_at(S, cost=3) == 0
    assert regulator.try_acquire_at(S, cost=1) == 100_000_000
    with pytest.raises(ValueError, match="a start's cost must be at least 1"):
        regulator.try_acquire_at(S, cost=0)  # would weigh nothing


def test_90_per_minute_is_one_start_every_667_ms() -> None:
    regulator = recuo.Regulator("90/min")
    assert regulator.try_acquire_at(S) == 0
    assert regulator.try_acquire_at(S) == 666_666_667
    assert regulator.try_acquire_at(S + 666_666_667) == 0


def test_try_acquire_answers_seconds_on_the_real_clock() -> None:
    regulator = recuo.Regulator("1/min", 2)
    assert regulator.try_acquire() == 0.0
    assert regulator.try_acquire() == 0.0
    wait = regulator.try_acquire()
    assert isinstance(wait, float)
    assert 59.0 < wait <= 60.0
    assert regulator.try_acquire(cost=2) > 119.0


def test_monotonic_ns_is_the_clock_of_time_monotonic_ns() -> None:
    before = time.monotonic_ns()
    now = recuo.monotonic_ns()
    after = time.monotonic_ns()
    assert before <= now <= after


# --- waiting ----------------------------------------------------------------------------------


def test_acquire_waits_for_the_next_slot() -> None:
    regulator = recuo.Regulator("20/s")
    assert regulator.acquire() is True
    started = time.monotonic()
    assert regulator.acquire() is True
    took = time.monotonic() - started
    assert 0.03 <= took < 1.0


def test_acquire_with_a_timeout_answers_false_and_reserves_nothing() -> None:
    regulator = recuo.Regulator("1/min")
    assert regulator.acquire(0) is True
    started = time.monotonic()
    assert regulator.acquire(timeout=0.5) is False
    assert regulator.acquire(timeout=0) is False
    assert time.monotonic() - started < 0.5
    # Nothing was reserved: the next slot is still a minute after the first.
    assert 59.0 < regulator.try_acquire() <= 60.0
    assert 59.0 < regulator.try_acquire_at(recuo.monotonic_ns()) / 1e9 <= 60.0


def test_acquire_releases_the_gil() -> None:
    regulator = recuo.Regulator("4/s")
    regulator.acquire()
    stamps: list[float] = []
    stop = threading.Event()

    def worker() -> None:
        while not stop.is_set():
            stamps.append(time.monotonic())
            time.sleep(0.002)

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        started = time.monotonic()
        assert regulator.acquire()
        ended = time.monotonic()
    finally:
        stop.set()
        thread.join()
    inside = [s for s in stamps if started + 0.05 <= s <= ended - 0.05]
    assert ended - started > 0.15
    assert len(inside) >= 5, f"{len(inside)} stamps while acquire waited"


def test_acquire_async_waits_with_asyncio() -> None:
    regulator = recuo.Regulator("20/s")

    async def main() -> tuple[bool, bool, bool, float]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.002)

        task = asyncio.ensure_future(ticker())
        first = await asyncio.wait_for(regulator.acquire_async(), 5)
        started = time.monotonic()
        second = await asyncio.wait_for(regulator.acquire_async(), 5)
        took = time.monotonic() - started
        refused = await asyncio.wait_for(regulator.acquire_async(timeout=0.001), 5)
        task.cancel()
        assert ticks >= 5, "the event loop ran while acquire_async waited"
        return first, second, refused, took

    first, second, refused, took = asyncio.run(main())
    assert (first, second, refused) == (True, True, False)
    assert 0.03 <= took < 1.0


def test_acquire_async_reserves_only_when_awaited_and_can_be_cancelled() -> None:
    regulator = recuo.Regulator("1/min")

    async def main() -> None:
        coro = regulator.acquire_async()
        assert regulator.try_acquire_at(recuo.monotonic_ns()) == 0  # nothing reserved yet
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(coro, 0.05)  # a minute's wait, cancelled

        with pytest.raises(ValueError, match="cost 2"):
            await regulator.acquire_async(cost=2)
        with pytest.raises(ValueError, match="timeout"):
            await regulator.acquire_async(timeout=-1)

    asyncio.run(main())


def test_a_backlog_of_async_waiters_is_refused_beyond_the_queue_never_started_early() -> None:
    # 8,000 waiters on 1000/s with a burst of 20: the burst and the 4,096 starts the
    # regulator queues go at the rate; those beyond the queue get QueueFullError at once.
    regulator = recuo.Regulator("1000/s", 20)
    ms = 1_000_000

    async def main() -> tuple[list[int], list[BaseException], int]:
        starts: list[int] = []
        refusals: list[BaseException] = []

        async def waiter() -> None:
            try:
                await regulator.acquire_async()
            except recuo.QueueFullError as refused:
                refusals.append(refused)
            else:
                starts.append(time.monotonic_ns())

        every = asyncio.gather(*(waiter() for _ in range(8_000)))
        await asyncio.sleep(0)  # every waiter has reserved (or been refused) by now
        settled = time.monotonic_ns()
        await asyncio.wait_for(every, 30)
        return starts, refusals, settled

    starts, refusals, settled = asyncio.run(main())
    assert len(starts) + len(refusals) == 8_000
    assert len(starts) >= 20 + 4_096 and refusals, (len(starts), len(refusals))
    assert {(type(r), r.code, r.name) for r in refusals} == {(recuo.QueueFullError, 114, "queue_full")}  # type: ignore[attr-defined]
    assert str(refusals[0]).startswith("the regulator's queue is full: this start would wait 4.")
    # After the loop settled (the 8,000 reservations took it a while, and the starts due
    # meanwhile ran together once it was free), no window of a second holds more than
    # burst + rate × 1 s = 1,020 starts (a loop's timers firing late may bunch a few, never
    # the thousands a backlog let through at once before).
    starts.sort()
    later = [t for t in starts if t >= settled + 50 * ms]
    most, first = 0, 0
    for i, t in enumerate(later):
        while later[first] + 1_000 * ms <= t:
            first += 1
        most = max(most, i + 1 - first)
    assert most <= 1_020, most
    assert starts[-1] - starts[0] >= 4_000 * ms  # the queue went at the rate, not at once


def test_a_rate_too_slow_to_count_and_a_cost_of_zero_are_value_errors() -> None:
    with pytest.raises(ValueError, match="is too slow: the furthest start it may queue"):
        recuo.Regulator("0.000000001/day")
    with pytest.raises(ValueError, match="is too slow"):
        recuo.Regulator(1e-10)
    assert recuo.Regulator("1/day").try_acquire_at(S) == 0
    with pytest.raises(ValueError, match="a start's cost must be at least 1"):
        recuo.Regulator("10/s", 5).try_acquire_at(S, cost=0)


# --- adaptive -------------------------------------------------------------------------------


def test_adaptive_halves_and_recovers() -> None:
    regulator = recuo.Regulator("8/s", adaptive=True)
    regulator.on_throttled()
    assert regulator.rate == pytest.approx(4.0)
    regulator.on_throttled()
    assert regulator.rate == pytest.approx(2.0)
    for _ in range(12):
        regulator.on_success()
    assert regulator.rate == 8.0
    for _ in range(20):
        regulator.on_throttled()
    assert regulator.rate == pytest.approx(8.0 / 64)
    fixed = recuo.Regulator("8/s")
    fixed.on_throttled()
    assert fixed.rate == 8.0


def test_an_adaptive_regulator_spaces_starts_further_after_a_429() -> None:
    regulator = recuo.Regulator("10/s", adaptive=True)
    assert regulator.try_acquire_at(S) == 0
    assert regulator.try_acquire_at(S) == 100_000_000
    regulator.on_throttled()
    later = 10 * S
    assert regulator.try_acquire_at(later) == 0
    assert regulator.try_acquire_at(later) == 200_000_000
    regulator.on_success()  # 5/s + 10/16 /s
    assert regulator.rate == pytest.approx(5.625)


# --- the promise, with threads ------------------------------------------------------------------


def test_threads_share_one_allowance_on_a_fake_clock() -> None:
    regulator = recuo.Regulator(RATE, BURST)
    clock = [S]
    lock = threading.Lock()
    starts: list[int] = []
    tries = 5_000
    barrier = threading.Barrier(4)

    def worker() -> None:
        mine: list[int] = []
        barrier.wait(timeout=10)
        for _ in range(tries):
            with lock:
                now = clock[0]
                clock[0] += STEP_NS
            if regulator.try_acquire_at(now) == 0:
                mine.append(now)
        with lock:
            starts.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert clock[0] - S == 4 * tries * STEP_NS
    assert len(starts) > 100
    check_window(starts, 4 * tries * STEP_NS)


def test_threads_acquiring_for_real_stay_inside_the_window() -> None:
    regulator = recuo.Regulator("100/s", 4)
    starts: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(10):
            assert regulator.acquire()
            now = recuo.monotonic_ns()
            with lock:
                starts.append(now)

    began = recuo.monotonic_ns()
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    starts.sort()
    # Real time: a start is stamped when its thread runs again, a little after its slot, so
    # allow 25 ms of scheduling (the fake-clock test above holds the exact bound).
    interval = 1e9 / 100
    for i in range(len(starts)):
        for j in range(i, len(starts)):
            assert j - i + 1 <= 4 + (starts[j] - starts[i] + 25_000_000) / interval
    assert len(starts) == 40
    assert starts[-1] - began >= (40 - 4) * interval - 1_000_000
