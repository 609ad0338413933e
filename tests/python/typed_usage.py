"""Typed use of recuo, checked by `mypy --strict` (make lint-python) and run by pytest.

The `# type: ignore[...]` lines are wrong on purpose: under --strict an ignore that is not
needed is itself an error, so each one proves the stubs refuse that call.
"""

from __future__ import annotations

import asyncio
import math
from typing import TYPE_CHECKING, Any, Callable, Coroutine, Literal, Optional, Union

import recuo

if TYPE_CHECKING:
    from typing_extensions import assert_type
else:

    def assert_type(value: Any, _type: Any) -> Any:
        return value


def fetch() -> dict[str, int]:
    return {"status": 200}


def transient(erro: Exception) -> bool:
    return isinstance(erro, (ConnectionError, TimeoutError))


def no_sleep(seconds: float) -> None:
    assert seconds >= 0


def main() -> None:
    answer = recuo.com_retry(fetch, 3, 0.01, 0.05, transient, seed=7, sleep=no_sleep)
    assert_type(answer, dict[str, int])
    assert answer == {"status": 200}
    assert_type(recuo.com_retry(lambda: 1, tentativas=2, base=1, maximo=2), int)

    delay = recuo.retry_delay_ms("12", 0, 784111777000)
    assert_type(delay, float)
    assert delay == 12000.0
    assert recuo.retry_delay_ms(b"soon", 3, seed=1) <= 8000.0
    assert recuo.retry_delay_ms(None, 0) <= 1000.0
    assert math.isinf(recuo.retry_delay_ms("99999999999999999999", 0))

    parsed = recuo.parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111777000 - 30_000)
    assert_type(parsed, recuo.RetryAfter)
    kind = parsed.kind
    assert_type(kind, Literal["seconds", "date", "unbounded", "invalid"])
    wait = parsed.wait_ms
    assert_type(wait, Optional[int])
    assert (kind, wait) == ("date", 30_000)

    window = recuo.backoff_window_ms(3, base_ms=100, cap_ms=1000)
    assert_type(window, int)
    assert window == 800

    try:
        recuo.com_retry(fetch, tentativas=0)
    except recuo.ConfigError as erro:
        assert_type(erro.code, int)
        assert (erro.code, erro.name) == (1, "zero_attempts")
    version: str = recuo.__version__
    assert version


def refused_by_the_stubs() -> None:
    """Never called: each line is a type error the stubs must report."""
    recuo.retry_delay_ms(12, 0)  # type: ignore[arg-type]
    recuo.com_retry(fetch, repetir_se=lambda: True)  # type: ignore[arg-type,misc]
    recuo.com_retry(fetch, seed="7")  # type: ignore[arg-type]
    recuo.backoff_window_ms(1.5)  # type: ignore[arg-type]
    recuo.parse_retry_after("12").kind = "date"  # type: ignore[misc]
    text: str = recuo.com_retry(fetch)  # type: ignore[assignment]
    del text


class HTTPError(Exception):
    def __init__(self, status: int, headers: dict[str, str]) -> None:
        super().__init__(status)
        self.status = status
        self.headers = headers


def http_verdict(erro: Exception) -> recuo.Verdict | bool:
    if isinstance(erro, HTTPError):
        return recuo.classify(erro.status, headers=erro.headers, policy=recuo.Policy.guide_b())
    return isinstance(erro, ConnectionError)


@recuo.retry
def bare(n: int) -> str:
    return str(n)


@recuo.retry(policy=recuo.Policy(max_attempts=3), classify=http_verdict, seed=1, sleep=no_sleep)
def configured(path: str, *, method: str = "GET") -> dict[str, str]:
    attempt = recuo.current_attempt()
    return {"path": path, "method": method, attempt.idempotency_header: attempt.idempotency_key}


@recuo.retry(policy=recuo.Policy(base=0.001, cap=0.001))
async def fetch_async(path: str) -> bytes:
    await asyncio.sleep(0)
    return path.encode()


def on_retry(attempt: int, erro: Exception, delay: float) -> None:
    assert attempt >= 0 and delay >= 0 and isinstance(erro, Exception)


def on_give_up(report: recuo.Report) -> None:
    reason = report.reason
    assert_type(reason, Optional[Literal["permanent", "attempts_exhausted", "wait_exceeds_deadline", "budget_exhausted", "cancelled", "queue_stopped"]])
    assert_type(report.delays, tuple[float, ...])
    assert_type(report.retry_at, Optional[float])


def policy_engine() -> None:
    policy = recuo.Policy(max_attempts=4, base=0.1, cap=2, jitter="equal", deadline=30.0, spread=None)
    policy = policy.with_status_retry(408, "if_idempotent").with_method_idempotent("POST", False)
    policy = policy.with_transport_retry("timeout", "never").with_quota_403_as_rate_limit(True)
    assert_type(policy.jitter, Literal["full", "equal", "decorrelated", "none"])
    assert_type(policy.deadline, Optional[float])
    assert_type(policy.status_retry(408), Literal["never", "if_idempotent", "always"])
    assert policy.method_idempotent("GET") and hash(policy) == hash(policy)
    assert recuo.Policy.guide_a() != recuo.Policy.guide_b()

    verdict = recuo.classify(429, headers={"Retry-After": "3"}, now_ms=0, policy=policy)
    assert_type(verdict, recuo.Verdict)
    assert_type(verdict.verdict, Literal["success", "retry", "give_up"])
    assert_type(verdict.wait_ms, Optional[int])
    assert (verdict.verdict, verdict.reason, verdict.wait_ms, verdict.wait_unbounded) == ("retry", "rate_limited", 3000, False)
    assert recuo.classify(error="connect", method="POST", idempotency_key=recuo.IdempotencyKey()).verdict == "retry"
    assert recuo.classify(503, headers=[(b"Retry-After", b"1")]).wait_ms == 1000
    assert recuo.Verdict.retry(100, reason="rate_limited").wait_ms == 100
    key: str = str(recuo.IdempotencyKey())
    assert len(key) == 36

    # recuo.retry as a call: the function's own return type comes back.
    answer = recuo.call(fetch, policy=policy, on_retry=on_retry, on_give_up=on_give_up)
    assert_type(answer, dict[str, int])
    assert recuo.call(lambda a, b: a + b, 1, 2) == 3
    # As decorators, the signatures are kept (mypy sees `def bare(n: int) -> str`).
    as_callable: Callable[[int], str] = bare
    assert as_callable(7) == bare(n=7) == "7"
    assert configured("/a", method="PUT")["method"] == "PUT"
    as_async: Callable[[str], Coroutine[Any, Any, bytes]] = fetch_async
    assert asyncio.run(as_async("/b")) == b"/b"

    op = recuo.Operation(policy, seed=3)
    assert op.start(0).kind == "call"
    assert op.failed(10).kind == "classify"
    step = op.judged(10, recuo.classify(503))
    assert_type(step.kind, Literal["enter", "wait", "call", "classify", "sleep", "done", "gave_up"])
    assert_type(step.delay_ms, Optional[int])
    attempt = op.attempt
    assert attempt is not None and attempt.number == 0
    assert op.report.attempts == 1
    assert_type(op.report.retry_at_unix_ms, Optional[int])
    # A first attempt made before the machine, and the gate step of a host that cannot block.
    gate = recuo.Gate(limit=recuo.ConcurrencyLimit(1))
    assert_type(recuo.Operation.success_needs_machine(gate, stats=False, records="info"), bool)
    after = recuo.Operation(policy, pool=policy.max_attempts - 1)
    assert after.start_after_first(0).kind == "call"
    gated = recuo.Operation(policy, gate=gate)
    assert gated.start(0).kind == "enter"
    assert_type(gated.poll_gate(0), recuo.Step)
    assert_type(recuo.BatchQueue.end_of(op.report)[0], Literal["succeeded", "gave_up", "not_started"])
    assert_type(recuo.com_retry(fetch, prazo=1.5, ao_repetir=on_retry, repetir_se=http_verdict), dict[str, int])


def refused_by_the_policy_stubs() -> None:
    """Never called: each line is a type error the stubs must report."""
    recuo.Policy(3)  # type: ignore[call-arg]
    recuo.Policy(jitter="fulll")  # type: ignore[arg-type]
    recuo.Policy().with_status_retry(408, "sometimes")  # type: ignore[arg-type]
    recuo.classify(500, error="timeout", method=b"GET")  # type: ignore[arg-type]
    recuo.classify(error="dns")  # type: ignore[arg-type]
    recuo.Operation(recuo.Policy()).judged(0, "retry")  # type: ignore[arg-type]
    recuo.com_retry(fetch, prazo="30")  # type: ignore[arg-type]
    recuo.com_retry(fetch, ao_repetir=lambda erro: None)  # type: ignore[arg-type,misc]
    recuo.call(fetch, policy="guide_a")  # type: ignore[arg-type]
    bare("7")  # type: ignore[arg-type]
    fetch_async(path=1)  # type: ignore[arg-type,unused-coroutine]
    number: str = recuo.current_attempt().number  # type: ignore[assignment]
    del number


def shared_limits() -> None:
    plan = recuo.plan(600, "120/min", 1.5, 2)
    assert_type(plan, recuo.Plan)
    assert_type(plan.interval_ms, int)
    assert_type(plan.warnings, tuple[str, ...])
    assert (plan.interval_ms, plan.duration_s, plan.in_flight) == (667, 400.0, 3.0)
    try:
        recuo.plan(1, "1/s", "2/s", 1)
    except recuo.PlanError as error:
        assert_type(error.name, Literal["target_above_allowance", "invalid_retry_fraction", "invalid_latency"])

    regulator = recuo.Regulator("90/min", 3, adaptive=True)
    assert_type(regulator.try_acquire_at(10**9, cost=3), int)
    assert_type(regulator.try_acquire(), float)
    assert_type(regulator.acquire(timeout=0), bool)
    assert_type(regulator.rate, float)
    assert_type(recuo.monotonic_ns(), int)
    regulator.on_throttled()
    regulator.on_success()
    waited: Coroutine[Any, Any, bool] = recuo.Regulator(1000).acquire_async(0.5)
    assert asyncio.run(waited) is True
    try:
        assert_type(recuo.Regulator.redis("127.0.0.1:1", "k", "90/min", burst=3), recuo.Regulator)
    except ConnectionError as unreachable:  # nothing listens on port 1
        assert_type(unreachable, ConnectionError)

    limit = recuo.ConcurrencyLimit(2)
    with limit:
        permit = limit.try_acquire()
        assert_type(permit, Optional[recuo.Permit])
        assert permit is not None
        with permit as held:
            assert_type(held, recuo.Permit)
    assert limit.acquire(timeout=0.1) is not None
    assert_type(limit.in_flight, int)
    assert_type(permit.renew(), bool)
    try:
        assert_type(recuo.ConcurrencyLimit.redis("127.0.0.1:1", "k", 2, lease=30.0), recuo.ConcurrencyLimit)
    except ConnectionError as unreachable:
        assert_type(unreachable, ConnectionError)
    try:
        assert_type(recuo.RetryBudget.redis("127.0.0.1:1", "k", 0.1, floor_per_s=1, window_s=10), recuo.RetryBudget)
    except ConnectionError as unreachable:
        assert_type(unreachable, ConnectionError)

    budget = recuo.RetryBudget(0.1, floor_per_s=1, window_s=10)
    budget.record_request()
    assert_type(budget.try_withdraw(), bool)
    assert_type(budget.counts(), tuple[int, int])

    gate = recuo.Gate(regulator=recuo.Regulator(1000, 10), limit=limit, budget=budget)
    assert_type(gate.limit, Optional[recuo.ConcurrencyLimit])
    assert recuo.call(fetch, gate=gate) == {"status": 200}
    assert recuo.com_retry(fetch, gate=gate) == {"status": 200}

    report = recuo.run_batch([fetch, fetch], workers=2, gate=gate, deadline=10.0)
    assert_type(report.results, tuple[recuo.BatchResult, ...])
    assert_type(report.results[0].status, Literal["succeeded", "gave_up", "not_started"])
    assert_type(report.stats.mean_spacing_ms, Optional[float])
    assert report.stats.successes == 2


def refused_by_the_limit_stubs() -> None:
    """Never called: each line is a type error the stubs must report."""
    recuo.Regulator(["90/min"])  # type: ignore[arg-type]
    recuo.Regulator("1/s").try_acquire(2)  # type: ignore[call-arg]
    recuo.Regulator.shared(3, "1/s")  # type: ignore[arg-type]
    recuo.Regulator.redis(b"redis://127.0.0.1", "k", "1/s")  # type: ignore[arg-type]
    recuo.Regulator.redis("redis://127.0.0.1", "k")  # type: ignore[call-arg]
    recuo.ConcurrencyLimit.redis("redis://127.0.0.1", "k", 2)  # type: ignore[call-arg]
    recuo.RetryBudget.redis("redis://127.0.0.1", "k", floor=1.0)  # type: ignore[call-arg]
    recuo.ConcurrencyLimit("2")  # type: ignore[arg-type]
    recuo.RetryBudget(window_s=1.5)  # type: ignore[arg-type]
    recuo.Gate(recuo.Regulator(1))  # type: ignore[call-arg]
    recuo.plan(1, "1/s", "1/s", latency=None)  # type: ignore[arg-type]
    recuo.run_batch([fetch], workers="2")  # type: ignore[arg-type]
    recuo.call(fetch, gate=recuo.ConcurrencyLimit(1))  # type: ignore[arg-type]
    status: int = recuo.run_batch([]).results[0].status  # type: ignore[assignment]
    del status


def records() -> None:
    url = recuo.redact_url("https://u:p@h.io/a?token=t")
    assert_type(url, str)
    assert url == "https://h.io/a?token=[redacted]"
    detailed = recuo.redact_url_detailed(b"http://")
    assert_type(detailed, recuo.RedactedUrl)
    assert_type(detailed.malformed, bool)
    pairs = recuo.redact_headers({"Authorization": "x"})
    assert_type(pairs, list[tuple[str, str]])
    assert recuo.redact_headers([(b"Cookie", b"sid=1")]) == [("Cookie", "[redacted]")]

    who = recuo.who_answered({"CF-Ray": "1"}, expected_content_type="application/json")
    assert_type(who.origin, Literal["api", "proxy", "cdn", "unknown"])
    assert_type(who.confidence, Literal["low", "medium", "high"])
    assert_type(who.evidence, tuple[str, ...])

    attempt = recuo.AttemptRecord(0, 1, "GET", "/a", status=503, headers={"X-Request-Id": "r"}, decision="retry",
                                  reason="unavailable", delay_ms=10)
    assert_type(attempt.to_json(), str)
    assert_type(attempt.to_dict(), dict[str, Any])
    assert_type(attempt.status, Optional[int])
    assert_type(attempt.decision, Literal["done", "retry", "give_up"])
    result = recuo.ResultRecord(0, "GET", "/a", attempts=2, total_ms=5, reason="cancelled")
    assert_type(result.result, Literal["success", "gave_up"])

    def op() -> int:
        now = recuo.current_attempt()
        now.record_request("GET", "https://h.io/a")
        now.record_response(200, {"X-Request-Id": "r"})
        return 1

    assert recuo.call(op, request=("GET", b"/a")) == 1
    assert recuo.com_retry(op, request=("GET", "/a")) == 1

    recorder = recuo.StatsRecorder()
    recorder.start(0)
    recorder.saw("rate_limited")
    recorder.saw(recuo.classify(503))
    recorder.end()
    recorder.finished(True)
    stats = recorder.snapshot()
    assert_type(stats, recuo.Stats)
    assert_type(stats + recuo.Stats(), recuo.Stats)
    assert_type(stats.merge(stats).min_spacing_ms, Optional[float])
    assert_type(stats.to_dict(), recuo.StatsValue)
    assert_type(recuo.run_batch([op]).stats, recuo.Stats)


def refused_by_the_record_stubs() -> None:
    """Never called: each line is a type error the stubs must report."""
    recuo.redact_url(url="x")  # type: ignore[call-arg]
    recuo.redact_headers("Authorization: x")  # type: ignore[arg-type]
    recuo.who_answered({}, expected_content_type=b"x")  # type: ignore[arg-type]
    recuo.AttemptRecord(0, 1, "GET", "/", decision="later", reason="success")  # type: ignore[arg-type]
    recuo.ResultRecord(0, "GET", "/", attempts=1, total_ms=0, reason="success")  # type: ignore[arg-type]
    recuo.call(fetch, request="GET /")  # type: ignore[arg-type]
    recuo.StatsRecorder().saw("teapot")  # type: ignore[arg-type]
    recuo.Stats() + 1  # type: ignore[operator]


if __name__ == "__main__":
    main()
    policy_engine()
    shared_limits()
    records()
