"""The first attempt made before the machine (issue 18) is exact.

Without a gate, ``recuo.com_retry``, ``recuo.call``, ``@recuo.retry`` and the asyncio loop make
their first attempt before the core's machine exists, and replay it into the machine only on
a failure, or when the ``recuo`` logger takes a success's records. A gate makes the machine
from the start (it counts and spaces the first attempt), and a gate with a budget only
changes nothing else here: so every test below runs each loop both ways — no gate (the
first attempt first) and ``Gate(budget=RetryBudget())`` (the machine first) — and wants the
same calls, attempts, keys, records, reports and context.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, Callable

import pytest

import recuo
from retrying import AsyncFailing, Events, Failing, failures

KINDS = ["com_retry", "call", "decorated", "asyncio"]
WAYS = ["first attempt first", "machine first"]
REQUEST = ("GET", "https://api.example/items?token=s3cr3t")


def no_sleep(_seconds: float) -> None:
    pass


def gate_of(way: str) -> recuo.Gate | None:
    return None if way == "first attempt first" else recuo.Gate(budget=recuo.RetryBudget())


def run(kind: str, way: str, op: Failing, attempts: int = 5, **options: Any) -> Any:
    """``op`` through the loop ``kind``, its waits no-ops, the gate ``way`` says."""
    gate = gate_of(way)
    if kind == "com_retry":
        hooks = {"ao_repetir": options.pop("on_retry")} if "on_retry" in options else {}
        return recuo.com_retry(op, attempts, sleep=no_sleep, gate=gate, **hooks, **options)
    policy = options.pop("policy", recuo.Policy(max_attempts=attempts))
    if kind == "call":
        return recuo.call(op, policy=policy, sleep=no_sleep, gate=gate, **options)
    if kind == "decorated":
        return recuo.retry(policy=policy, sleep=no_sleep, gate=gate, **options)(op)()
    async_op = AsyncFailing(*op.errors, value=op.value)
    try:
        return asyncio.run(recuo.call(async_op, policy=policy, sleep=no_sleep, gate=gate, **options))
    finally:
        op.errors, op.attempts, op.raised = async_op.errors, async_op.attempts, async_op.raised


def outcome(kind: str, way: str, op: Failing, **options: Any) -> tuple[str, Any]:
    try:
        return ("value", run(kind, way, op, **options))
    except Exception as exc:  # the operation's own exception, re-raised
        return ("raised", exc)


def logged(caplog: pytest.LogCaptureFixture) -> list[tuple[str, dict[str, Any]]]:
    """The records logged, without their times (the only thing two runs may differ in)."""
    records = []
    for r in caplog.records:
        if r.name != "recuo":
            continue
        fields = json.loads(r.getMessage())
        for timed in ("start", "elapsed_ms", "total_ms"):
            fields.pop(timed, None)
        assert r.recuo == json.loads(r.getMessage())  # type: ignore[attr-defined]
        records.append((r.levelname, fields))
    caplog.clear()
    return records


def both_ways(kind: str, script: Callable[[], Failing], caplog: pytest.LogCaptureFixture, **options: Any) -> Any:
    """Runs ``script()`` both ways: the same outcome, calls and records. Answers them."""
    seen = []
    for way in WAYS:
        op = script()
        got = outcome(kind, way, op, seed=7, **dict(options))
        if got[0] == "raised":
            assert got[1] is op.raised[-1]  # the very same exception
            got = ("raised", repr(got[1]))
        seen.append((got, op.calls, [a.number for a in op.attempts], logged(caplog)))
        assert recuo._recuo._attempt_pool.get() is None  # the context is restored
        assert recuo._recuo._current_attempt.get() is None
    assert seen[0] == seen[1]
    return seen[0]


SCRIPTS: dict[str, Callable[[], Failing]] = {
    "success at once": lambda: Failing(value="ok"),
    "one failure": lambda: Failing(*failures(1), value="ok"),
    "four failures": lambda: Failing(*failures(4), value="ok"),
    "always failing": lambda: Failing(*failures(9)),
}


@pytest.mark.parametrize("name", list(SCRIPTS))
@pytest.mark.parametrize("kind", KINDS)
def test_the_debug_records_are_the_machines(kind: str, name: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="recuo")
    got, calls, numbers, records = both_ways(kind, SCRIPTS[name], caplog, request=REQUEST)
    assert numbers == list(range(calls))
    assert records[-1][1]["type"] == "result"
    assert "s3cr3t" not in json.dumps(records)
    if name == "success at once":
        assert [level for level, _ in records] == ["DEBUG", "DEBUG"]
        assert records[0][1]["outcome"] == "success" and records[1][1]["attempts"] == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_success_at_once_logs_nothing_at_info(kind: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="recuo")
    assert both_ways(kind, SCRIPTS["success at once"], caplog)[3] == []
    records = both_ways(kind, SCRIPTS["one failure"], caplog)[3]
    assert [(level, r["type"], r.get("decision")) for level, r in records] == [
        ("INFO", "attempt", "retry"),
        ("INFO", "result", None),
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_what_a_first_attempt_records_reaches_its_record(kind: str, caplog: pytest.LogCaptureFixture) -> None:
    class Noting(Failing):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            attempt = recuo.current_attempt()
            attempt.record_request("POST", "https://api.example/pay?api_key=k")
            attempt.record_response(503, {"Retry-After": "0", "X-Request-Id": f"r{len(self.attempts)}"})
            return super().__call__(*args, **kwargs)

    class AsyncNoting(AsyncFailing, Noting):
        async def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return Noting.__call__(self, *args, **kwargs)

    caplog.set_level(logging.DEBUG, logger="recuo")
    scripts: list[Callable[[], Failing]] = [lambda: Noting(*failures(1)), lambda: Noting()]
    for script in scripts:
        if kind == "asyncio":
            seen = []
            for way in WAYS:
                op = script()
                async_op = AsyncNoting(*op.errors, value=op.value)
                asyncio.run(recuo.call(async_op, sleep=no_sleep, gate=gate_of(way), request=REQUEST, seed=7))
                seen.append(logged(caplog))
            assert seen[0] == seen[1]
            records = seen[0]
        else:
            records = both_ways(kind, script, caplog, request=REQUEST)[3]
        first = records[0][1]
        assert (first["method"], first["url"], first["request_id"]) == (
            "POST",
            "https://api.example/pay?api_key=[redacted]",
            "r0",
        )


@pytest.mark.parametrize("kind", KINDS)
def test_current_attempt_and_one_key_for_every_attempt(kind: str) -> None:
    for way in WAYS:
        op = Failing(*failures(2), value="ok")
        assert run(kind, way, op) == "ok"
        assert [a.number for a in op.attempts] == [0, 1, 2]
        # The first attempt's Attempt, asked for its key only now, has the key of the others.
        keys = {a.idempotency_key for a in reversed(op.attempts)}
        assert len(keys) == 1
        assert {a.idempotency_header for a in op.attempts} == {"Idempotency-Key"}
        other = Failing(*failures(1), value="ok")
        run(kind, way, other)
        assert other.attempts[0].idempotency_key not in keys  # one key per operation
    with pytest.raises(RuntimeError):
        recuo.current_attempt()


def test_a_policys_header_is_the_first_attempts() -> None:
    policy = recuo.Policy(idempotency_header="X-Key")
    assert recuo.call(lambda: recuo.current_attempt().idempotency_header, policy=policy) == "X-Key"
    assert recuo.call(lambda: recuo.current_attempt().idempotency_header) == "Idempotency-Key"


@pytest.mark.parametrize("inner", ["com_retry", "call"])
@pytest.mark.parametrize("kind", KINDS)
def test_nested_loops_share_the_outer_loops_attempts(kind: str, inner: str) -> None:
    cases: list[tuple[Callable[[], Failing], int]] = [
        (lambda: Failing(*failures(100)), 3),  # the outer loop's 3 attempts, then none left
        (lambda: Failing(*failures(1), value="inner ok"), 2),  # the outer loop succeeds at once
    ]
    for innermost_script, calls in cases:
        for way in WAYS:
            innermost = innermost_script()

            def body() -> Any:
                if inner == "com_retry":
                    return recuo.com_retry(innermost, 5, sleep=no_sleep)
                return recuo.call(innermost, sleep=no_sleep)

            if kind == "asyncio":

                async def async_body() -> Any:
                    return body()

                got = outcome_of(lambda: asyncio.run(recuo.call(async_body, policy=recuo.Policy(max_attempts=3),
                                                                sleep=no_sleep, gate=gate_of(way))))
            elif kind == "com_retry":
                got = outcome_of(lambda: recuo.com_retry(body, 3, sleep=no_sleep, gate=gate_of(way)))
            elif kind == "call":
                got = outcome_of(lambda: recuo.call(body, policy=recuo.Policy(max_attempts=3), sleep=no_sleep,
                                                    gate=gate_of(way)))
            else:
                got = outcome_of(recuo.retry(policy=recuo.Policy(max_attempts=3), sleep=no_sleep, gate=gate_of(way))(body))
            assert innermost.calls == calls, (way, innermost.calls)
            assert got == ("raised", innermost.raised[-1]) if calls == 3 else ("value", "inner ok")
            assert recuo._recuo._attempt_pool.get() is None


def outcome_of(thunk: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("value", thunk())
    except Exception as exc:
        return ("raised", exc)


@pytest.mark.parametrize("kind", ["com_retry", "call"])
def test_a_loop_in_a_hook_draws_from_the_loop_after_a_first_failure(kind: str) -> None:
    for way in WAYS:
        innermost = Failing(*failures(100))

        def on_retry(attempt: int, exc: Exception, delay: float) -> None:
            with pytest.raises(ConnectionError):
                recuo.call(innermost, sleep=no_sleep)

        op = Failing(*failures(100))
        with pytest.raises(ConnectionError):
            run(kind, way, op, attempts=4, on_retry=on_retry)
        # 4 attempts in all: the outer loop's first; the hook's loop, run by the outer loop,
        # makes its first on the outer loop's count and takes the 3 left; none is left after.
        assert (op.calls, innermost.calls) == (1, 4), way


@pytest.mark.parametrize("kind", KINDS)
def test_the_elapsed_time_starts_with_the_first_attempt(kind: str) -> None:
    events = Events()

    class Slow(Failing):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            if not self.attempts:
                time.sleep(0.06)
            return super().__call__(*args, **kwargs)

    class AsyncSlow(AsyncFailing):
        async def __call__(self, *args: Any, **kwargs: Any) -> Any:
            if not self.attempts:
                await asyncio.sleep(0.06)
            return Failing.__call__(self, *args, **kwargs)

    # A deadline of 50 ms: the first attempt alone passes it, so the wait before a retry would.
    policy = recuo.Policy(max_attempts=3, base=0.01, cap=0.01, jitter="none", deadline=0.05)
    if kind == "com_retry":
        op: Failing = Slow(*failures(3))
        with pytest.raises(ConnectionError):
            recuo.com_retry(op, 3, 0.01, 0.01, prazo=0.05, sleep=no_sleep, seed=1)
        assert op.calls == 1
        return
    op = (AsyncSlow if kind == "asyncio" else Slow)(*failures(3))
    with pytest.raises(ConnectionError):
        if kind == "asyncio":
            asyncio.run(recuo.call(op, policy=policy, on_give_up=events.on_give_up, sleep=no_sleep))
        elif kind == "call":
            recuo.call(op, policy=policy, on_give_up=events.on_give_up, sleep=no_sleep)
        else:
            recuo.retry(policy=policy, on_give_up=events.on_give_up, sleep=no_sleep)(op)()
    [report] = events.reports
    assert (op.calls, report.reason, report.attempts) == (1, "wait_exceeds_deadline", 1)
    assert report.elapsed_ms >= 55


@pytest.mark.parametrize("kind", KINDS)
def test_reports_after_a_first_failure(kind: str) -> None:
    reports = []
    for way in WAYS:
        events = Events()
        op = Failing(*failures(9))
        options = {} if kind == "com_retry" else {"on_give_up": events.on_give_up}
        with pytest.raises(ConnectionError):
            run(kind, way, op, attempts=3, on_retry=events.on_retry, seed=7, **options)
        reports.append(([(e[1], e[3]) for e in events.log if e[0] == "retry"],
                        [(r.attempts, r.reason, r.delays_ms) for r in events.reports]))
    assert reports[0] == reports[1]
    assert len(reports[0][0]) == 2


def test_the_stats_of_a_batch_after_a_first_success_or_failure() -> None:
    ops = [Failing(value=1), Failing(*failures(1), value=2), Failing(*failures(9))]
    report = recuo.run_batch(ops, policy=recuo.Policy(max_attempts=2, base=0, cap=0), workers=1)
    stats = report.stats
    assert (stats.initial, stats.retries, stats.successes, stats.failures) == (3, 2, 2, 1)
    assert [op.calls for op in ops] == [1, 2, 2]


def test_an_async_function_whose_call_refuses_its_arguments_is_retried_by_the_asyncio_loop() -> None:
    events = Events()
    slept: list[float] = []

    async def needs_one(x: int) -> int:
        return x

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    policy = recuo.Policy(max_attempts=3, jitter="none")
    loop = recuo.call(needs_one, 1, 2, policy=policy, sleep=sleep, on_retry=events.on_retry)
    assert asyncio.iscoroutine(loop)
    with pytest.raises(TypeError):
        asyncio.run(loop)
    # Retried twice, each wait awaited: the asyncio loop's, not the blocking one's.
    assert [e[1] for e in events.log] == [0, 1] and len(slept) == 2
    assert asyncio.run(recuo.call(needs_one, 3)) == 3


def test_an_async_function_and_the_default_options() -> None:
    async def one() -> str:
        assert recuo.current_attempt().number == 0
        return "one"

    assert asyncio.run(recuo.call(one)) == "one"
    assert recuo._recuo._current_attempt.get() is None


def test_the_options_of_one_call_are_never_another_calls() -> None:
    # recuo.call keeps the options of its last call for a call given the very same objects.
    request: list[Any] = ["GET", "https://api.example/1"]
    assert recuo.call(lambda: "ok", request=request, sleep=no_sleep) == "ok"  # type: ignore[arg-type]
    request[1] = 12  # the same list, changed: checked anew
    with pytest.raises(TypeError, match="url"):
        recuo.call(lambda: "ok", request=request, sleep=no_sleep)  # type: ignore[arg-type]
    for attempts in (2, 3, 2):
        op = Failing(*failures(9))
        with pytest.raises(ConnectionError):
            recuo.call(op, policy=recuo.Policy(max_attempts=attempts), sleep=no_sleep)
        assert op.calls == attempts
    two = recuo.Policy(max_attempts=2)
    for _ in range(2):
        op = Failing(*failures(9))
        with pytest.raises(ConnectionError):
            recuo.call(op, policy=two, sleep=no_sleep)
        assert op.calls == 2


@pytest.mark.parametrize("kind", ["com_retry", "call", "decorated"])
def test_an_attempt_kept_or_asked_about_is_never_another_calls(kind: str) -> None:
    # A first attempt's Attempt that nobody kept is reused by the next first attempt: one
    # kept, or whose key or pool was asked for, never is.
    def loop(op: Callable[[], Any]) -> Any:
        if kind == "com_retry":
            return recuo.com_retry(op)
        if kind == "call":
            return recuo.call(op)
        return recuo.retry(op)()

    kept = [loop(recuo.current_attempt) for _ in range(3)]
    assert len({id(a) for a in kept}) == 3
    keys = [a.idempotency_key for a in kept]
    assert len(set(keys)) == 3 and [a.idempotency_key for a in kept] == keys
    assert [a.number for a in kept] == [0, 0, 0]
    # Keys asked for inside, the attempts not kept: a new key every call.
    assert len({loop(lambda: recuo.current_attempt().idempotency_key) for _ in range(4)}) == 4
    # Noted, not kept: the next call's attempt notes nothing of it (its record is its own).
    loop(lambda: recuo.current_attempt().record_response(503))
    assert loop(lambda: "plain") == "plain"
    # A nested loop asks for the pool: the outer loop's attempts stay shared.
    inner = Failing(*failures(9))
    with pytest.raises(ConnectionError):
        loop(lambda: recuo.com_retry(inner, 3, sleep=no_sleep))
    assert inner.calls == 5  # the outer loop's five attempts, shared
    # Attempts of loops that succeeded, one after another and nested, stay apart.
    pairs = [loop(lambda: (recuo.current_attempt(), loop(recuo.current_attempt))) for _ in range(3)]
    assert len({id(a) for pair in pairs for a in pair}) == 6
    assert len({a.idempotency_key for pair in pairs for a in pair}) == 6
    with pytest.raises(RuntimeError):
        recuo.current_attempt()
