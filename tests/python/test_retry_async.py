"""recuo.retry with `async def` functions: the asyncio loop, its cancellation, nesting.

Every test runs its own event loop (asyncio.run) bounded by asyncio.wait_for, so a loop that
failed to stop fails the test in seconds instead of hanging it.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from typing import Any, Awaitable, Callable, NoReturn, TypeVar

import pytest

import recuo
import recuo._recuo
from retrying import SEED_1_DELAYS_MS, AsyncFailing, Events, Failing, failures, is_uuid4

T = TypeVar("T")

BOUND = 10.0  # seconds: no test comes near it unless a loop fails to stop


def run(main: Callable[[], Awaitable[T]]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(main(), timeout=BOUND)

    return asyncio.run(bounded())


def no_sleep(_seconds: float) -> None:
    """An injected sleep that does not wait."""


def never(*_args: object) -> NoReturn:
    raise AssertionError("must not be called")


FAST = recuo.Policy(base=0.001, cap=0.002)

# --- the forms ------------------------------------------------------------------------------


def test_a_call_answers_a_coroutine_that_runs_the_loop() -> None:
    op = AsyncFailing(*failures(2), value=42)
    coro = recuo.call(op, 1, x=2, sleep=no_sleep)
    assert inspect.iscoroutine(coro)
    assert op.calls == 0
    assert asyncio.run(coro) == 42
    assert op.calls == 3
    assert op.args == [((1,), {"x": 2})] * 3


def test_the_decorated_function_is_async_and_keeps_its_metadata() -> None:
    calls = 0

    @recuo.retry(policy=FAST)
    async def fetch(url: str) -> str:
        """Fetches a URL."""
        nonlocal calls
        calls += 1
        if calls < 3:
            raise TimeoutError(url)
        await asyncio.sleep(0)
        return url.upper()

    assert inspect.iscoroutinefunction(fetch)
    assert (fetch.__name__, fetch.__doc__) == ("fetch", "Fetches a URL.")
    assert str(inspect.signature(fetch)) == "(url: 'str') -> 'str'"
    assert run(lambda: fetch("/a")) == "/A"
    assert calls == 3


def test_the_bare_decorator_on_an_async_function() -> None:
    @recuo.retry
    async def one() -> int:
        return 1

    assert inspect.iscoroutinefunction(one)
    assert run(one) == 1


def test_async_callables_of_every_kind_are_recognised() -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    class Adder:
        async def __call__(self, a: int) -> int:
            return a + 1

        async def method(self, a: int) -> int:
            return a + 2

    assert run(lambda: recuo.call(functools.partial(add, 1), 2, policy=FAST)) == 3
    assert run(lambda: recuo.call(Adder(), 1, policy=FAST)) == 2
    assert run(lambda: recuo.call(Adder().method, 1, policy=FAST)) == 3


# --- giving up, hooks, report -----------------------------------------------------------------


def test_giving_up_reraises_the_very_same_exception() -> None:
    op = AsyncFailing(*failures(5))
    with pytest.raises(ConnectionError) as caught:
        run(lambda: recuo.call(op, sleep=no_sleep))
    assert caught.value is op.raised[-1]
    assert op.calls == 5


def test_hooks_in_order_with_the_same_delays_as_the_blocking_loop() -> None:
    events = Events()
    op = AsyncFailing(*failures(5))
    with pytest.raises(ConnectionError):
        run(
            lambda: recuo.call(
                op, seed=1, on_retry=events.on_retry, on_give_up=events.on_give_up, sleep=events.async_sleep
            )
        )
    assert events.kinds == ["retry", "async_sleep"] * 4 + ["give_up"]
    retries = [e for e in events.log if e[0] == "retry"]
    assert [e[1] for e in retries] == [0, 1, 2, 3]
    assert [e[2] for e in retries] == op.raised[:4]
    assert [round(e[3] * 1000) for e in retries] == SEED_1_DELAYS_MS
    (report,) = events.reports
    assert (report.attempts, report.reason, list(report.delays_ms)) == (5, "attempts_exhausted", SEED_1_DELAYS_MS)
    assert report.retry_at is None


def test_a_plain_function_as_sleep_is_called() -> None:
    events = Events()
    op = AsyncFailing(*failures(2), value="ok")
    assert run(lambda: recuo.call(op, seed=1, sleep=events.sleep)) == "ok"
    assert [round(s * 1000) for s in events.slept] == SEED_1_DELAYS_MS[:2]


def test_the_real_wait_is_asyncio_sleep_and_lets_other_tasks_run() -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.001)

    async def main() -> str:
        task = asyncio.ensure_future(ticker())
        try:
            op = AsyncFailing(*failures(2), value="ok")
            return str(await recuo.call(op, policy=recuo.Policy(base=0.02, cap=0.02, jitter="none")))
        finally:
            task.cancel()

    started = time.monotonic()
    assert run(main) == "ok"
    assert time.monotonic() - started >= 0.04
    assert ticks >= 5


def test_base_exceptions_are_never_retried() -> None:
    class Stop(BaseException):
        pass

    op = AsyncFailing(ConnectionError("first"), Stop())
    with pytest.raises(Stop):
        run(lambda: recuo.call(op, on_give_up=never, sleep=no_sleep))
    assert op.calls == 2


class HTTPError(Exception):
    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(status)
        self.status = status
        self.headers = headers or {}


def http_verdict(e: Exception) -> recuo.Verdict | bool:
    if isinstance(e, HTTPError):
        return recuo.classify(e.status, headers=e.headers)
    return False


def test_the_servers_wait_is_honoured() -> None:
    events = Events()
    op = AsyncFailing(HTTPError(503, {"Retry-After": "2"}), value="ok")
    policy = recuo.Policy(spread=0)
    assert run(lambda: recuo.call(op, policy=policy, classify=http_verdict, sleep=events.async_sleep)) == "ok"
    assert events.slept == [2.0]


def test_a_permanent_verdict_and_the_classifiers_exception() -> None:
    events = Events()
    op = AsyncFailing(HTTPError(404))
    with pytest.raises(HTTPError):
        run(lambda: recuo.call(op, classify=http_verdict, on_retry=never, on_give_up=events.on_give_up))
    assert events.reports[0].reason == "permanent"

    op = AsyncFailing(ConnectionError("down"))

    def broken(e: Exception) -> bool:
        raise LookupError("classifier bug")

    with pytest.raises(LookupError) as caught:
        run(lambda: recuo.call(op, classify=broken, on_give_up=never))
    assert caught.value.__context__ is op.raised[0]


def test_exceptions_in_the_hooks() -> None:
    op = AsyncFailing(*failures(3))

    def on_retry(attempt: int, exc: Exception, delay: float) -> None:
        raise LookupError("hook bug")

    with pytest.raises(LookupError) as caught:
        run(lambda: recuo.call(op, on_retry=on_retry, sleep=never))
    assert (op.calls, caught.value.__context__) == (1, op.raised[0])

    op = AsyncFailing(*failures(2))

    def on_give_up(report: recuo.Report) -> None:
        raise LookupError("hook bug")

    with pytest.raises(LookupError) as caught:
        run(lambda: recuo.call(op, policy=recuo.Policy(max_attempts=2), on_give_up=on_give_up, sleep=no_sleep))
    assert caught.value.__context__ is op.raised[-1]


def test_a_server_wait_past_the_deadline_gives_up_at_once_with_the_instant() -> None:
    events = Events()
    op = AsyncFailing(HTTPError(429, {"Retry-After": "40"}))
    before = time.time()
    with pytest.raises(HTTPError):
        run(
            lambda: recuo.call(
                op, policy=recuo.Policy.guide_b(), classify=http_verdict, on_give_up=events.on_give_up, sleep=never
            )
        )
    (report,) = events.reports
    assert (report.attempts, report.reason) == (1, "wait_exceeds_deadline")
    assert report.retry_at is not None and before + 39.9 <= report.retry_at <= time.time() + 40.1


# --- cancellation stops the loop at once ----------------------------------------------------


def test_cancelling_the_task_during_the_wait_stops_the_loop_at_once() -> None:
    events = Events()
    op = AsyncFailing(*failures(10))
    slow = recuo.Policy(base=60, cap=60, jitter="none")  # a minute between attempts

    async def main() -> float:
        task = asyncio.ensure_future(recuo.call(op, policy=slow, on_give_up=events.on_give_up))
        while op.calls < 1:
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.01)  # the loop is now in its 60 s wait
        cancelled = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        took = time.monotonic() - cancelled
        assert recuo._recuo._attempt_pool.get() is None  # the context is restored
        await asyncio.sleep(0.05)  # had the loop gone on, a second attempt would show
        return took

    assert run(main) < 1.0
    assert op.calls == 1
    (report,) = events.reports
    assert (report.attempts, report.reason, report.delays_ms) == (1, "cancelled", (60_000,))


def test_cancelling_the_task_during_an_attempt_stops_the_loop() -> None:
    events = Events()
    calls = 0

    async def main() -> None:
        inside = asyncio.Event()

        async def hangs() -> NoReturn:
            nonlocal calls
            calls += 1
            inside.set()
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

        task = asyncio.ensure_future(recuo.call(hangs, on_retry=never, on_give_up=events.on_give_up))
        await inside.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main)
    assert calls == 1
    assert (events.reports[0].attempts, events.reports[0].reason) == (1, "cancelled")


def test_a_timeout_around_the_loop_stops_it() -> None:
    op = AsyncFailing(*failures(10))

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(recuo.call(op, policy=recuo.Policy(base=30, cap=30, jitter="none")), 0.05)
        await asyncio.sleep(0.05)

    started = time.monotonic()
    run(main)
    assert time.monotonic() - started < 1.0
    assert op.calls == 1


def test_cancellation_without_a_hook() -> None:
    op = AsyncFailing(*failures(10))

    async def main() -> None:
        task = asyncio.ensure_future(recuo.call(op, policy=recuo.Policy(base=60, cap=60, jitter="none")))
        while op.calls < 1:
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(main)
    assert op.calls == 1


# --- the attempt context and nested loops ---------------------------------------------------


def test_each_attempt_knows_its_number_and_the_operations_key() -> None:
    op = AsyncFailing(*failures(2), value="ok")
    run(lambda: recuo.call(op, policy=recuo.Policy(idempotency_header="X-Key"), sleep=no_sleep))
    assert [a.number for a in op.attempts] == [0, 1, 2]
    keys = {a.idempotency_key for a in op.attempts}
    assert len(keys) == 1 and is_uuid4(keys.pop())
    assert {a.idempotency_header for a in op.attempts} == {"X-Key"}


def test_an_outer_5_around_an_inner_5_calls_the_operation_5_times() -> None:
    op = AsyncFailing(*failures(100))

    async def inner() -> Any:
        return await recuo.call(op, sleep=no_sleep)

    with pytest.raises(ConnectionError) as caught:
        run(lambda: recuo.call(inner, sleep=no_sleep))
    assert op.calls == 5
    assert caught.value is op.raised[-1]


def test_an_async_loop_around_a_blocking_one_shares_the_limit() -> None:
    op = Failing(*failures(100))

    async def inner() -> Any:
        return recuo.call(op, sleep=no_sleep)

    with pytest.raises(ConnectionError):
        run(lambda: recuo.call(inner, sleep=no_sleep))
    assert op.calls == 5


def test_a_blocking_loop_around_an_async_one_shares_the_limit() -> None:
    op = AsyncFailing(*failures(100))

    def inner() -> Any:
        # asyncio.run's task starts from a copy of this context: the outer loop's pool.
        return asyncio.run(recuo.call(op, sleep=no_sleep))

    with pytest.raises(ConnectionError):
        recuo.call(inner, sleep=no_sleep)
    assert op.calls == 5


def test_loops_started_side_by_side_do_not_share_a_limit() -> None:
    a, b = AsyncFailing(*failures(100)), AsyncFailing(*failures(100))

    async def main() -> list[Any]:
        return list(
            await asyncio.gather(recuo.call(a, sleep=no_sleep), recuo.call(b, sleep=no_sleep), return_exceptions=True)
        )

    results = run(main)
    assert [type(r) for r in results] == [ConnectionError, ConnectionError]
    assert (a.calls, b.calls) == (5, 5)


def test_concurrent_inner_loops_draw_from_the_one_pool() -> None:
    # The outer loop has 1 attempt; two inner loops run side by side inside it. Each inner
    # loop's first attempt is the outer attempt itself; no retry is left for either.
    a, b = AsyncFailing(*failures(100)), AsyncFailing(*failures(100))

    async def both() -> Any:
        return await asyncio.gather(recuo.call(a, sleep=no_sleep), recuo.call(b, sleep=no_sleep))

    with pytest.raises(ConnectionError):
        run(lambda: recuo.call(both, policy=recuo.Policy(max_attempts=1), sleep=no_sleep))
    assert (a.calls, b.calls) == (1, 1)


def test_the_context_is_restored_after_every_loop() -> None:
    async def main() -> None:
        op = AsyncFailing(*failures(100))
        for _ in range(3):
            with pytest.raises(ConnectionError):
                await recuo.call(op, sleep=no_sleep)
            assert recuo._recuo._attempt_pool.get() is None
            assert recuo._recuo._current_attempt.get() is None
        assert op.calls == 15

    run(main)


def test_bad_options_fail_before_the_coroutine_exists() -> None:
    async def op() -> int:
        return 1

    with pytest.raises(TypeError, match="policy"):
        recuo.call(op, policy="fast")  # type: ignore[arg-type, unused-coroutine]
    with pytest.raises(ValueError, match="seed"):
        recuo.retry(seed=-1)(op)
