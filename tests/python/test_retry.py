"""recuo.retry, synchronous: as a call and as a decorator, with every sleep injected."""

from __future__ import annotations

import functools
import inspect
import threading
import time
import traceback
from typing import Any, NoReturn

import pytest

import recuo
import recuo._recuo
from retrying import SEED_1_DELAYS_MS, Events, Failing, failures, is_uuid4


def no_sleep(_seconds: float) -> None:
    """An injected sleep that does not wait."""


def never(*_args: object) -> NoReturn:
    raise AssertionError("must not be called")


FAST = recuo.Policy(base=0.001, cap=0.002)

# --- the three forms ------------------------------------------------------------------------


def test_a_call_with_arguments_runs_now() -> None:
    op = Failing(*failures(2), value=42)
    assert recuo.call(op, 1, 2, x=3, sleep=no_sleep) == 42
    assert op.calls == 3
    assert op.args == [((1, 2), {"x": 3})] * 3


def test_a_call_with_only_options_runs_now() -> None:
    op = Failing(value="now")
    assert recuo.call(op, policy=FAST) == "now"
    assert op.calls == 1


def test_a_function_alone_is_wrapped_not_called() -> None:
    op = Failing(ConnectionError("down"), value="later")
    wrapped = recuo.retry(op)
    assert op.calls == 0
    assert callable(wrapped) and wrapped is not op


def test_the_bare_decorator() -> None:
    calls = 0

    @recuo.retry
    def fetch(url: str, *, timeout: float = 1.0) -> str:
        """Fetches a URL."""
        nonlocal calls
        calls += 1
        return f"{url} in {timeout}"

    assert calls == 0
    assert fetch("/a", timeout=2.0) == "/a in 2.0"
    assert calls == 1
    assert fetch.__name__ == "fetch"
    assert fetch.__doc__ == "Fetches a URL."
    assert fetch.__qualname__.endswith("test_the_bare_decorator.<locals>.fetch")
    assert str(inspect.signature(fetch)) == "(url: 'str', *, timeout: 'float' = 1.0) -> 'str'"
    assert not inspect.iscoroutinefunction(fetch)


def test_the_decorator_with_options() -> None:
    events = Events()
    op = Failing(*failures(2), value="ok")

    @recuo.retry(policy=recuo.Policy(max_attempts=3), seed=1, sleep=events.sleep)
    def task() -> str:
        return str(op())

    assert task() == "ok"
    assert [round(s * 1000) for s in events.slept] == SEED_1_DELAYS_MS[:2]
    # Each call of the decorated function is a new operation with its own attempts.
    op.errors = failures(3)
    with pytest.raises(ConnectionError):
        task()
    assert op.calls == 6


def test_the_decorator_with_empty_parentheses() -> None:
    @recuo.retry()
    def one() -> int:
        return 1

    assert one() == 1 and one.__name__ == "one"


def test_a_decorated_method() -> None:
    class Client:
        def __init__(self) -> None:
            self.calls = 0

        @recuo.retry(policy=FAST)
        def get(self, path: str) -> str:
            self.calls += 1
            if self.calls < 3:
                raise TimeoutError(path)
            return path.upper()

    c = Client()
    assert c.get("/x") == "/X"
    assert c.calls == 3


def test_callables_of_every_kind() -> None:
    assert recuo.call(dict, policy=FAST) == {}
    assert recuo.call(functools.partial(pow, 2), 10, policy=FAST) == 1024
    assert recuo.call(sorted, [3, 1, 2], reverse=True) == [3, 2, 1]


# --- giving up: the same exception, the report, the hooks -------------------------------------


def test_giving_up_reraises_the_very_same_exception() -> None:
    op = Failing(*failures(5))
    with pytest.raises(ConnectionError) as caught:
        recuo.call(op, sleep=no_sleep)
    assert caught.value is op.raised[-1]
    assert op.calls == 5
    # Its traceback still shows where it was raised.
    frames = [f.name for f in traceback.extract_tb(caught.value.__traceback__)]
    assert frames[-1] == "__call__"


def test_earlier_failures_do_not_chain_into_the_last() -> None:
    op = Failing(*failures(3))
    with pytest.raises(ConnectionError) as caught:
        recuo.call(op, policy=recuo.Policy(max_attempts=3), sleep=no_sleep)
    assert caught.value.__context__ is None and caught.value.__cause__ is None


def test_hooks_in_order_with_their_arguments() -> None:
    events = Events()
    op = Failing(*failures(5))
    with pytest.raises(ConnectionError):
        recuo.call(op, seed=1, on_retry=events.on_retry, on_give_up=events.on_give_up, sleep=events.sleep)
    assert events.kinds == ["retry", "sleep"] * 4 + ["give_up"]
    retries = [e for e in events.log if e[0] == "retry"]
    assert [e[1] for e in retries] == [0, 1, 2, 3]
    assert [e[2] for e in retries] == op.raised[:4]
    assert [round(e[3] * 1000) for e in retries] == SEED_1_DELAYS_MS
    assert [e[3] for e in retries] == events.slept
    assert all(type(e[3]) is float for e in retries)
    (report,) = events.reports
    assert (report.attempts, report.reason, list(report.delays_ms)) == (5, "attempts_exhausted", SEED_1_DELAYS_MS)
    assert report.delays == tuple(ms / 1000 for ms in SEED_1_DELAYS_MS)
    assert report.retry_at is None
    assert 0 <= report.elapsed_ms < 5000 and report.elapsed == report.elapsed_ms / 1000


def test_com_retry_draws_the_same_delays_for_the_same_seed() -> None:
    slept: list[float] = []
    with pytest.raises(ConnectionError):
        recuo.com_retry(Failing(*failures(5)), seed=1, sleep=slept.append)
    assert [round(s * 1000) for s in slept] == SEED_1_DELAYS_MS


def test_success_calls_no_give_up_hook() -> None:
    events = Events()
    op = Failing(*failures(2), value="ok")
    # Seeded: an unseeded draw of 0 ms is (rightly) not slept, and the events would vary.
    assert recuo.call(op, on_retry=events.on_retry, on_give_up=never, sleep=events.sleep, seed=1) == "ok"
    assert events.kinds == ["retry", "sleep", "retry", "sleep"]


def test_the_report_of_a_permanent_failure() -> None:
    events = Events()
    op = Failing(ValueError("bad request"))
    with pytest.raises(ValueError):
        recuo.call(op, classify=lambda e: not isinstance(e, ValueError), on_give_up=events.on_give_up, sleep=never)
    (report,) = events.reports
    assert (report.attempts, report.reason, report.delays_ms) == (1, "permanent", ())
    assert repr(report).startswith("Report(attempts=1, reason='permanent', elapsed_ms=")


def test_base_exceptions_are_never_retried_and_call_no_hook() -> None:
    class Stop(BaseException):
        pass

    op = Failing(ConnectionError("first"), Stop())
    with pytest.raises(Stop):
        recuo.call(op, classify=lambda e: True, on_give_up=never, sleep=no_sleep)
    assert op.calls == 2
    with pytest.raises(KeyboardInterrupt):
        recuo.call(Failing(KeyboardInterrupt()), classify=never, on_retry=never, on_give_up=never)


# --- classify: verdicts and predicates ------------------------------------------------------


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
    op = Failing(HTTPError(503, {"Retry-After": "2"}), HTTPError(429, {"Retry-After": "7"}), value="ok")
    policy = recuo.Policy(spread=0)
    assert recuo.call(op, policy=policy, classify=http_verdict, sleep=events.sleep) == "ok"
    assert events.slept == [2.0, 7.0]


def test_the_spread_is_added_to_the_servers_wait_never_taken_from_it() -> None:
    events = Events()
    op = Failing(*[HTTPError(503, {"Retry-After": "2"}) for _ in range(4)], value="ok")
    recuo.call(op, classify=http_verdict, sleep=events.sleep, seed=5)
    windows = [0.2, 0.4, 0.8, 1.0]  # the default spread: min(window(n), 1 s)
    assert all(2.0 <= s <= 2.0 + w for s, w in zip(events.slept, windows))


def test_the_cap_never_shortens_the_servers_wait() -> None:
    events = Events()
    op = Failing(HTTPError(429, {"Retry-After": "30"}), value="ok")
    recuo.call(op, policy=recuo.Policy(cap=1, spread=0), classify=http_verdict, sleep=events.sleep)
    assert events.slept == [30.0]


def test_a_give_up_verdict_stops_at_once() -> None:
    events = Events()
    op = Failing(HTTPError(404), value="ok")
    with pytest.raises(HTTPError):
        recuo.call(op, classify=http_verdict, on_retry=never, on_give_up=events.on_give_up, sleep=never)
    assert events.reports[0].reason == "permanent"


def test_a_success_verdict_for_an_exception_gives_up() -> None:
    op = Failing(HTTPError(200), value="ok")
    with pytest.raises(HTTPError):
        recuo.call(op, classify=http_verdict, sleep=never)
    assert op.calls == 1


@pytest.mark.parametrize(("answer", "calls"), [(True, 5), (1, 5), ("yes", 5), (False, 1), (None, 1), (0, 1), ("", 1)])
def test_other_answers_are_read_for_their_truth(answer: object, calls: int) -> None:
    op = Failing(*failures(5))
    with pytest.raises(ConnectionError):
        recuo.call(op, classify=lambda e: answer, sleep=no_sleep)
    assert op.calls == calls


def test_classify_is_asked_after_the_last_attempt_too() -> None:
    # SPEC §6 step 3: the last attempt's failure is judged too (it used not to be).
    asked: list[Exception] = []

    def classify(e: Exception) -> bool:
        asked.append(e)
        return True

    op = Failing(*failures(3))
    with pytest.raises(ConnectionError):
        recuo.call(op, policy=recuo.Policy(max_attempts=3), classify=classify, sleep=no_sleep)
    assert asked == op.raised


def test_an_exception_in_classify_propagates_chained_to_the_failure() -> None:
    op = Failing(ConnectionError("down"))

    def broken(e: Exception) -> bool:
        raise LookupError("classifier bug")

    with pytest.raises(LookupError) as caught:
        recuo.call(op, classify=broken, on_give_up=never, sleep=never)
    assert caught.value.__context__ is op.raised[0]


def test_an_exception_in_on_retry_ends_the_loop() -> None:
    op = Failing(*failures(3))

    def hook(attempt: int, exc: Exception, delay: float) -> None:
        raise LookupError("hook bug")

    with pytest.raises(LookupError) as caught:
        recuo.call(op, on_retry=hook, sleep=never)
    assert op.calls == 1
    assert caught.value.__context__ is op.raised[0]


def test_an_exception_in_on_give_up_replaces_the_failure_chained_to_it() -> None:
    op = Failing(*failures(2))

    def hook(report: recuo.Report) -> None:
        raise LookupError("hook bug")

    with pytest.raises(LookupError) as caught:
        recuo.call(op, policy=recuo.Policy(max_attempts=2), on_give_up=hook, sleep=no_sleep)
    assert caught.value.__context__ is op.raised[-1]


def test_a_hook_that_reraises_the_failure_is_not_its_own_context() -> None:
    op = Failing(ConnectionError("down"))

    def reraise(report: recuo.Report) -> None:
        raise op.raised[0]

    with pytest.raises(ConnectionError) as caught:
        recuo.call(op, policy=recuo.Policy(max_attempts=1), on_give_up=reraise)
    assert caught.value is op.raised[0]
    assert caught.value.__context__ is None


def test_an_exception_from_sleep_ends_the_loop() -> None:
    op = Failing(*failures(3))

    def sleep(seconds: float) -> None:
        raise InterruptedError("woken")

    with pytest.raises(InterruptedError):
        recuo.call(op, sleep=sleep, on_give_up=never)
    assert op.calls == 1


# --- the deadline ------------------------------------------------------------------------------


def test_a_server_wait_past_the_deadline_gives_up_at_once_with_the_instant() -> None:
    events = Events()
    op = Failing(HTTPError(429, {"Retry-After": "40"}), value="ok")
    before = time.time()
    with pytest.raises(HTTPError) as caught:
        recuo.call(
            op,
            policy=recuo.Policy.guide_b(),
            classify=http_verdict,
            on_retry=never,
            on_give_up=events.on_give_up,
            sleep=never,
        )
    after = time.time()
    assert caught.value is op.raised[0]
    (report,) = events.reports
    assert (report.attempts, report.reason) == (1, "wait_exceeds_deadline")
    assert report.retry_at is not None
    assert before + 40 - 0.05 <= report.retry_at <= after + 40 + 0.05


def test_a_backoff_past_the_deadline_gives_up_at_once() -> None:
    events = Events()
    op = Failing(*failures(3))
    policy = recuo.Policy(base=1, cap=1, jitter="none", deadline=0.5)
    with pytest.raises(ConnectionError):
        recuo.call(op, policy=policy, on_give_up=events.on_give_up, sleep=never)
    assert op.calls == 1
    (report,) = events.reports
    assert report.reason == "wait_exceeds_deadline"
    assert report.retry_at is not None and abs(report.retry_at - (time.time() + 1.0)) < 0.5


def test_an_unbounded_server_wait_gives_up_without_an_instant() -> None:
    events = Events()
    op = Failing(HTTPError(503, {"Retry-After": "9" * 30}))
    with pytest.raises(HTTPError):
        recuo.call(op, classify=http_verdict, on_give_up=events.on_give_up, sleep=never)
    assert (events.reports[0].reason, events.reports[0].retry_at) == ("wait_exceeds_deadline", None)


def test_the_deadline_counts_real_time() -> None:
    # Each attempt takes at least 30 ms: within 100 ms, at most 4 attempts start, not 100.
    def slow() -> NoReturn:
        time.sleep(0.03)
        raise ConnectionError("slow")

    events = Events()
    policy = recuo.Policy(max_attempts=100, base=0.001, cap=0.001, deadline=0.1)
    with pytest.raises(ConnectionError):
        recuo.call(slow, policy=policy, on_give_up=events.on_give_up)
    (report,) = events.reports
    assert report.reason == "wait_exceeds_deadline"
    assert 1 <= report.attempts <= 4
    assert report.elapsed_ms >= 29 * report.attempts


# --- the attempt context and the idempotency key ------------------------------------------


def test_each_attempt_knows_its_number_and_the_operations_key() -> None:
    op = Failing(*failures(3), value="ok")
    recuo.call(op, sleep=no_sleep)
    assert [a.number for a in op.attempts] == [0, 1, 2, 3]
    keys = {a.idempotency_key for a in op.attempts}
    assert len(keys) == 1 and is_uuid4(keys.pop())
    assert {a.idempotency_header for a in op.attempts} == {"Idempotency-Key"}


def test_every_operation_gets_a_new_key_whatever_the_seed() -> None:
    op = Failing()
    for _ in range(3):
        recuo.call(op, seed=7)
    assert len({a.idempotency_key for a in op.attempts}) == 3


def test_the_key_travels_in_the_policys_header() -> None:
    op = Failing()
    recuo.call(op, policy=recuo.Policy(idempotency_header="X-Request-Key"))
    assert op.attempts[0].idempotency_header == "X-Request-Key"
    assert repr(op.attempts[0]) == "Attempt(number=0, idempotency_header='X-Request-Key')"


def test_reading_the_key_does_not_change_the_delays() -> None:
    def run(read_key: bool) -> list[float]:
        events = Events()

        def op() -> NoReturn:
            if read_key:
                assert recuo.current_attempt().idempotency_key
            raise ConnectionError("down")

        with pytest.raises(ConnectionError):
            recuo.call(op, seed=3, sleep=events.sleep)
        return events.slept

    assert run(True) == run(False)


def test_current_attempt_outside_a_loop() -> None:
    with pytest.raises(RuntimeError, match="inside an attempt"):
        recuo.current_attempt()

    def op() -> recuo.Attempt:
        return recuo.current_attempt()

    attempt = recuo.call(op, policy=FAST)
    assert attempt.number == 0
    with pytest.raises(RuntimeError):  # the attempt is over: the context is restored
        recuo.current_attempt()


def test_attempts_are_frozen() -> None:
    attempt = recuo.call(recuo.current_attempt, policy=FAST)
    with pytest.raises(AttributeError):
        attempt.number = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        recuo.Attempt()


# --- nested loops share one limit -----------------------------------------------------------


def test_an_outer_5_around_an_inner_5_calls_the_operation_5_times() -> None:
    op = Failing(*failures(100))

    def inner() -> Any:
        return recuo.call(op, sleep=no_sleep)

    with pytest.raises(ConnectionError) as caught:
        recuo.call(inner, sleep=no_sleep)
    assert op.calls == 5
    assert caught.value is op.raised[-1]


@pytest.mark.parametrize(("outer", "inner", "calls"), [(3, 5, 3), (5, 2, 5), (1, 5, 1), (5, 1, 5), (2, 2, 2)])
def test_the_outermost_limit_holds_whatever_the_inner_one(outer: int, inner: int, calls: int) -> None:
    op = Failing(*failures(100))
    with pytest.raises(ConnectionError):
        recuo.call(
            lambda: recuo.call(op, policy=recuo.Policy(max_attempts=inner), sleep=no_sleep),
            policy=recuo.Policy(max_attempts=outer),
            sleep=no_sleep,
        )
    assert op.calls == calls


def test_three_levels_share_one_limit() -> None:
    op = Failing(*failures(1000))

    def level(n: int) -> Any:
        if n == 0:
            return op()
        return recuo.call(level, n - 1, sleep=no_sleep)

    with pytest.raises(ConnectionError):
        level(3)
    assert op.calls == 5


def test_an_inner_success_needs_no_more_attempts() -> None:
    op = Failing(*failures(3), value="ok")
    assert recuo.call(lambda: recuo.call(op, sleep=no_sleep), sleep=no_sleep) == "ok"
    assert op.calls == 4


def test_com_retry_and_retry_share_the_limit() -> None:
    op = Failing(*failures(100))
    with pytest.raises(ConnectionError):
        recuo.com_retry(lambda: recuo.call(op, sleep=no_sleep), tentativas=3, sleep=no_sleep)
    assert op.calls == 3
    op = Failing(*failures(100))
    with pytest.raises(ConnectionError):
        recuo.call(lambda: recuo.com_retry(op, 5, sleep=no_sleep), policy=recuo.Policy(max_attempts=2), sleep=no_sleep)
    assert op.calls == 2


def test_sequential_loops_each_get_their_own_limit() -> None:
    for _ in range(3):
        op = Failing(*failures(100))
        with pytest.raises(ConnectionError):
            recuo.call(op, sleep=no_sleep)
        assert op.calls == 5
    assert recuo._recuo._attempt_pool.get() is None


def test_threads_do_not_share_a_limit() -> None:
    counts: list[int] = []
    started = threading.Barrier(4)

    def worker() -> None:
        op = Failing(*failures(100))

        def slow_inner() -> Any:
            if op.calls == 0:
                started.wait(timeout=5)  # every thread is inside its first attempt at once
            return op()

        try:
            recuo.call(slow_inner, sleep=no_sleep)
        except ConnectionError:
            counts.append(op.calls)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counts == [5, 5, 5, 5]


# --- the real wait ----------------------------------------------------------------------------


def test_the_real_wait_sleeps_and_retries() -> None:
    op = Failing(*failures(2), value="ok")
    policy = recuo.Policy(base=0.02, cap=0.02, jitter="none")
    started = time.monotonic()
    assert recuo.call(op, policy=policy) == "ok"
    assert time.monotonic() - started >= 0.04


def test_zero_delays_never_call_sleep() -> None:
    op = Failing(*failures(5))
    with pytest.raises(ConnectionError):
        recuo.call(op, policy=recuo.Policy(base=0, cap=0), sleep=never)
    assert op.calls == 5


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"policy": "guide_a"}, TypeError, "policy must be a recuo.Policy"),
        ({"policy": recuo.Policy.guide_a}, TypeError, "policy must be a recuo.Policy"),
        ({"classify": True}, TypeError, "classify must be callable"),
        ({"on_retry": 1}, TypeError, "on_retry must be callable"),
        ({"on_give_up": "print"}, TypeError, "on_give_up must be callable"),
        ({"sleep": 0.1}, TypeError, "sleep must be callable"),
        ({"seed": True}, TypeError, "seed must be an int"),
        ({"seed": 1.0}, TypeError, "seed must be an int"),
        ({"seed": -1}, ValueError, "seed must be between"),
        ({"seed": 2**64}, ValueError, "seed must be between"),
    ],
)
def test_bad_options_are_refused_before_anything_runs(kwargs: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        recuo.call(never, **kwargs)
    with pytest.raises(error, match=message):
        recuo.retry(**kwargs)  # the decorator fails at decoration time


def test_the_largest_seed_is_accepted() -> None:
    assert recuo.call(lambda: 1, seed=2**64 - 1) == 1


@pytest.mark.parametrize("fn", [1, "fn", b"", [never]])
def test_something_that_cannot_be_called_is_refused(fn: Any) -> None:
    with pytest.raises(TypeError, match="callable"):
        recuo.retry(fn)
    with pytest.raises(TypeError, match="callable"):
        recuo.call(fn, 1)
    with pytest.raises(TypeError, match="callable"):
        recuo.retry(policy=FAST)(fn)


def test_arguments_without_a_function_are_refused() -> None:
    with pytest.raises(TypeError, match="no function"):
        recuo.retry(None, 1)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="no function"):
        recuo.retry(x=1)  # type: ignore[call-overload]


def test_a_coroutine_from_a_function_not_known_to_be_async_is_refused() -> None:
    async def fetch() -> int:
        return 1

    with pytest.raises(TypeError, match="returned a coroutine"):
        _ = recuo.call(lambda: fetch(), policy=FAST)
    # (the coroutine was closed: no "never awaited" warning, which filterwarnings would raise)
