"""recuo.Gate in the loops (SPEC §6 step 2, §9): every attempt of recuo.retry (sync and async)
and recuo.com_retry passes it — a place in flight, then a start slot; the place is given back
before any sleep; first attempts are counted by the budget and retries spend it
("budget_exhausted"); an adaptive regulator slows down on 429s.

Every test that counts sleeps seeds the jitter (an unseeded draw of 0 ms is not slept)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import NoReturn

import pytest

import recuo

FAST = recuo.Policy(max_attempts=3, base=0.001, cap=0.002)


class Flaky:
    """Fails `failures` times with ConnectionError, then answers "ok"; records what it saw."""

    def __init__(self, failures: int, limit: recuo.ConcurrencyLimit | None = None) -> None:
        self.failures = failures
        self.limit = limit
        self.calls = 0
        self.in_flight: list[int] = []
        self.starts: list[int] = []
        self.errors: list[Exception] = []

    def __call__(self) -> str:
        self.calls += 1
        self.starts.append(recuo.monotonic_ns())
        if self.limit is not None:
            self.in_flight.append(self.limit.in_flight)
        if self.calls <= self.failures:
            error = ConnectionError(f"down {self.calls}")
            self.errors.append(error)
            raise error
        return "ok"


# --- the Gate itself ------------------------------------------------------------------------


def test_a_gate_holds_the_very_objects_given() -> None:
    regulator = recuo.Regulator("10/s", 2)
    limit = recuo.ConcurrencyLimit(3)
    budget = recuo.RetryBudget()
    gate = recuo.Gate(regulator=regulator, limit=limit, budget=budget)
    assert gate.regulator is regulator and gate.limit is limit and gate.budget is budget
    empty = recuo.Gate()
    assert (empty.regulator, empty.limit, empty.budget) == (None, None, None)
    assert repr(empty) == "Gate(regulator=None, limit=None, budget=None)"
    assert repr(gate).startswith("Gate(regulator=Regulator('600/min', burst=2), limit=<recuo.ConcurrencyLimit")


def test_wrong_types_for_the_gate() -> None:
    limit = recuo.ConcurrencyLimit(1)
    with pytest.raises(TypeError, match="regulator must be a recuo.Regulator or None, not ConcurrencyLimit"):
        recuo.Gate(regulator=limit)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="limit must be a recuo.ConcurrencyLimit"):
        recuo.Gate(limit=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="budget must be a recuo.RetryBudget"):
        recuo.Gate(budget=0.1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        recuo.Gate(recuo.Regulator(1))  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="gate must be a recuo.Gate or None, not ConcurrencyLimit"):
        recuo.call(lambda: 1, gate=limit)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="gate must be a recuo.Gate or None, not str"):
        recuo.com_retry(lambda: 1, gate="gate")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="gate must be a recuo.Gate"):

        @recuo.retry(gate=object())  # type: ignore[call-overload,untyped-decorator]
        def never() -> None: ...


# --- the blocking loop ---------------------------------------------------------------------------


def test_the_place_is_given_back_before_any_sleep() -> None:
    limit = recuo.ConcurrencyLimit(1)
    op = Flaky(2, limit)
    seen_in_sleep: list[int] = []

    def sleep(seconds: float) -> None:
        seen_in_sleep.append(limit.in_flight)

    gate = recuo.Gate(limit=limit, regulator=recuo.Regulator("1000/s", 5))
    assert recuo.call(op, policy=FAST, gate=gate, seed=1, sleep=sleep) == "ok"
    assert op.in_flight == [1, 1, 1]  # every attempt held the place ...
    assert seen_in_sleep == [0, 0]  # ... and no sleep did
    assert (limit.in_flight, limit.max_in_flight) == (0, 1)


def test_retries_spend_the_budget_and_give_up_with_budget_exhausted() -> None:
    budget = recuo.RetryBudget(ratio=0.0, floor_per_s=0.1, window_s=10)  # one retry per 10 s
    op = Flaky(10)
    reports: list[recuo.Report] = []
    policy = recuo.Policy(max_attempts=5, base=0.001, cap=0.001)
    with pytest.raises(ConnectionError) as caught:
        recuo.call(op, policy=policy, gate=recuo.Gate(budget=budget), seed=1, sleep=lambda s: None,
                    on_give_up=reports.append)
    assert caught.value is op.errors[-1]  # the operation's own last exception
    assert op.calls == 2
    assert (reports[0].attempts, reports[0].reason) == (2, "budget_exhausted")
    assert budget.counts() == (1, 1)  # the first attempt counted, the one retry spent
    # The budget is shared: the next operation gets no retry at all.
    again = Flaky(10)
    with pytest.raises(ConnectionError):
        recuo.call(again, policy=policy, gate=recuo.Gate(budget=budget), seed=1, sleep=lambda s: None,
                    on_give_up=reports.append)
    assert again.calls == 1
    assert (reports[1].attempts, reports[1].reason) == (1, "budget_exhausted")
    assert budget.counts() == (2, 1)


def test_first_attempts_earn_retries() -> None:
    budget = recuo.RetryBudget(ratio=0.5, floor_per_s=0.0)
    gate = recuo.Gate(budget=budget)
    for _ in range(4):
        assert recuo.call(lambda: "ok", gate=gate) == "ok"
    assert budget.counts() == (4, 0)
    op = Flaky(2)
    assert recuo.call(op, policy=FAST, gate=gate, seed=1, sleep=lambda s: None) == "ok"
    assert budget.counts() == (5, 2)


def test_every_attempt_takes_a_start_slot() -> None:
    regulator = recuo.Regulator("1/min", burst=3)  # three at once, then one a minute
    op = Flaky(2)
    assert recuo.call(op, policy=FAST, gate=recuo.Gate(regulator=regulator), seed=1, sleep=lambda s: None) == "ok"
    assert op.calls == 3
    # The first attempt and both retries took their slots: the burst is spent.
    assert regulator.try_acquire() > 19.0


def test_every_attempt_waits_for_its_start_slot() -> None:
    regulator = recuo.Regulator("50/s")  # one start every 20 ms
    op = Flaky(2)
    assert recuo.call(op, policy=FAST, gate=recuo.Gate(regulator=regulator), seed=1, sleep=lambda s: None) == "ok"
    # The slots are 20 ms apart; a start is stamped when it runs, a little after its slot.
    assert op.starts[-1] - op.starts[0] >= 40_000_000 - 10_000_000


def test_an_attempt_waits_for_a_place() -> None:
    limit = recuo.ConcurrencyLimit(1)
    held = limit.acquire()
    assert held is not None
    timer = threading.Timer(0.1, held.release)
    timer.start()
    started = time.monotonic()
    assert recuo.call(lambda: limit.in_flight, gate=recuo.Gate(limit=limit)) == 1
    timer.join()
    assert time.monotonic() - started >= 0.05
    assert limit.in_flight == 0


def test_an_adaptive_regulator_slows_down_on_429_and_recovers_on_success() -> None:
    regulator = recuo.Regulator("1000/s", adaptive=True)
    answers = [429, 429, 200]

    class HTTPError(Exception):
        def __init__(self, status: int) -> None:
            super().__init__(status)
            self.status = status

    def call() -> int:
        status = answers.pop(0)
        if status != 200:
            raise HTTPError(status)
        return status

    def verdict(exc: Exception) -> recuo.Verdict:
        assert isinstance(exc, HTTPError)
        return recuo.classify(exc.status)

    gate = recuo.Gate(regulator=regulator)
    assert recuo.call(call, policy=FAST, classify=verdict, gate=gate, seed=1, sleep=lambda s: None) == 200
    # 1000/s halved twice (250/s), then one success gives back 1000/16.
    assert regulator.rate == pytest.approx(250 + 62.5)
    # A failure that is not a 429 changes nothing.
    with pytest.raises(ConnectionError):
        recuo.call(Flaky(5), policy=FAST, gate=gate, seed=1, sleep=lambda s: None)
    assert regulator.rate == pytest.approx(312.5)


def test_com_retry_takes_a_gate() -> None:
    budget = recuo.RetryBudget(0.0, 0.0)
    limit = recuo.ConcurrencyLimit(1)
    op = Flaky(3, limit)
    with pytest.raises(ConnectionError) as caught:
        recuo.com_retry(op, 5, 0.001, 0.001, gate=recuo.Gate(limit=limit, budget=budget), seed=1,
                        sleep=lambda s: None)
    assert caught.value is op.errors[0]
    assert op.calls == 1  # no retry in the budget
    assert op.in_flight == [1]
    assert recuo.com_retry(lambda: "ok", gate=recuo.Gate(limit=limit)) == "ok"
    assert limit.in_flight == 0


def test_a_gate_serves_loops_in_many_threads() -> None:
    limit = recuo.ConcurrencyLimit(2)
    gate = recuo.Gate(limit=limit, regulator=recuo.Regulator("2000/s", 4))
    inside = 0
    most = 0
    lock = threading.Lock()

    def op() -> None:
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        time.sleep(0.002)
        with lock:
            inside -= 1

    def worker() -> None:
        for _ in range(10):
            recuo.call(op, gate=gate)

    threads = [threading.Thread(target=worker) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 2
    assert limit.max_in_flight == 2


# --- the machine with a gate ---------------------------------------------------------------


def test_the_machine_pays_retries_from_the_gates_budget() -> None:
    budget = recuo.RetryBudget(0.0, 0.1)  # no ratio: the floor's one retry in 10 s
    op = recuo.Operation(recuo.Policy(jitter="none", base=1, cap=1), seed=1, gate=recuo.Gate(budget=budget))
    assert op.start(0).kind == "call"
    assert op.failed(10).kind == "classify"
    assert op.judged(10, True) == op.judged(10, True)  # out of turn: the same step again
    assert op.slept(1010).kind == "call"
    assert op.failed(1020).kind == "classify"
    gave_up = op.judged(1020, True)
    assert (gave_up.kind, gave_up.reason) == ("gave_up", "budget_exhausted")
    assert budget.counts() == (1, 1)


def test_a_wait_at_the_gate_cancelled_does_not_count_the_attempt() -> None:
    op = recuo.Operation(recuo.Policy(), gate=recuo.Gate(limit=recuo.ConcurrencyLimit(1)))
    step = op.start(0)
    assert (step.kind, step.attempt, step.until_ms) == ("enter", 0, None)
    op.cancel()
    gave_up = op.entered(5, False)
    assert (gave_up.kind, gave_up.reason) == ("gave_up", "cancelled")
    assert (op.report.attempts, op.report.reason) == (0, "cancelled")


# --- the async loop ---------------------------------------------------------------------------------


def test_async_the_place_is_given_back_before_any_sleep() -> None:
    limit = recuo.ConcurrencyLimit(1)
    budget = recuo.RetryBudget(0.5, 1.0)
    seen_in_sleep: list[int] = []
    in_flight: list[int] = []
    calls = 0

    async def op() -> str:
        nonlocal calls
        calls += 1
        in_flight.append(limit.in_flight)
        await asyncio.sleep(0)
        if calls < 3:
            raise ConnectionError("down")
        return "ok"

    async def sleep(seconds: float) -> None:
        seen_in_sleep.append(limit.in_flight)

    gate = recuo.Gate(limit=limit, regulator=recuo.Regulator("1000/s", 5), budget=budget)
    result = asyncio.run(asyncio.wait_for(recuo.call(op, policy=FAST, gate=gate, seed=1, sleep=sleep), 10))
    assert result == "ok"
    assert in_flight == [1, 1, 1]
    assert seen_in_sleep == [0, 0]
    assert limit.in_flight == 0
    assert budget.counts() == (1, 2)


def test_async_budget_exhausted() -> None:
    budget = recuo.RetryBudget(0.0, 0.0)
    reports: list[recuo.Report] = []
    error = ConnectionError("down")

    @recuo.retry(policy=FAST, gate=recuo.Gate(budget=budget), on_give_up=reports.append, seed=1)
    async def op() -> NoReturn:
        raise error

    with pytest.raises(ConnectionError) as caught:
        asyncio.run(asyncio.wait_for(op(), 10))
    assert caught.value is error
    assert (reports[0].attempts, reports[0].reason) == (1, "budget_exhausted")


def test_async_attempts_wait_for_their_slot_and_adapt() -> None:
    regulator = recuo.Regulator("50/s", adaptive=True)
    starts: list[int] = []

    async def op() -> str:
        starts.append(recuo.monotonic_ns())
        if len(starts) < 3:
            raise ConnectionError("down")
        return "ok"

    def verdict(exc: Exception) -> recuo.Verdict:
        return recuo.classify(429)

    gate = recuo.Gate(regulator=regulator)
    coro = recuo.call(op, policy=FAST, gate=gate, classify=verdict, seed=1, sleep=lambda s: None)
    assert asyncio.run(asyncio.wait_for(coro, 10)) == "ok"
    # 50/s (20 ms), then halved to 25/s (40 ms) after the first 429; a start is stamped when
    # it runs, a little after its slot.
    assert starts[-1] - starts[0] >= 60_000_000 - 10_000_000
    assert regulator.rate == pytest.approx(12.5 + 50 / 16)


def test_async_cancelled_while_waiting_at_the_gate() -> None:
    limit = recuo.ConcurrencyLimit(1)
    held = limit.try_acquire()
    reports: list[recuo.Report] = []
    calls = 0

    async def op() -> None:
        nonlocal calls
        calls += 1

    async def main() -> None:
        task = asyncio.ensure_future(recuo.call(op, gate=recuo.Gate(limit=limit), on_give_up=reports.append))
        await asyncio.sleep(0.02)  # waiting for the place
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert calls == 0
    assert (reports[0].attempts, reports[0].reason) == (0, "cancelled")
    assert limit.in_flight == 1
    assert held is not None
    held.release()


def test_async_cancelled_while_waiting_for_a_slot_gives_the_place_back() -> None:
    limit = recuo.ConcurrencyLimit(1)
    regulator = recuo.Regulator("1/min")
    regulator.try_acquire()  # the next slot is a minute away

    async def op() -> None: ...

    async def main() -> None:
        coro = recuo.call(op, gate=recuo.Gate(limit=limit, regulator=regulator))
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(coro, 0.05)

    asyncio.run(main())
    assert limit.in_flight == 0
