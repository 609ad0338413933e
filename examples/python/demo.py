"""recuo from Python: guide B's delays for a few Retry-After values, guide A's loop
succeeding on the third attempt, then the policy engine: verdicts on a few outcomes, a
payment retried through 503 and 429 with one idempotency key, and the same loop in asyncio.

Run it with `make demo-python` (which builds the package first).
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import logging

import recuo

NOW_MS = 1_700_000_000_000  # a fixed "now", so the output is the same on every run


def http_date(ms: int) -> str:
    return email.utils.formatdate(ms / 1000, usegmt=True)


def guide_b() -> None:
    print(f"guide B: retry_delay_ms(retry_after, attempt=1, now={http_date(NOW_MS)})")
    values: list[tuple[str, str | None]] = [
        ("seconds", "12"),
        ("date, 30 s ahead", http_date(NOW_MS + 30_000)),
        ("date, in the past", http_date(NOW_MS - 60_000)),
        ("invalid", "soon"),
        ("absent", None),
        ("huge", "9" * 20),
    ]
    for label, value in values:
        parsed = recuo.parse_retry_after(value, NOW_MS)
        delay = recuo.retry_delay_ms(value, 1, NOW_MS, seed=42)
        print(f"  {label:<18} {value!r:<33} {parsed.kind:<9} -> {delay:>9.0f} ms")


def guide_a() -> None:
    print("guide A: com_retry(tarefa, tentativas=5, base=0.02, maximo=0.1)")
    attempt = 0

    def tarefa() -> str:
        nonlocal attempt
        attempt += 1
        if attempt < 3:
            print(f"  attempt {attempt}: ConnectionError, retrying")
            raise ConnectionError("connection refused")
        print(f"  attempt {attempt}: ok")
        return "payment created"

    result = recuo.com_retry(tarefa, tentativas=5, base=0.02, maximo=0.1)
    print(f"  -> {result!r} after {attempt} attempts")


class HTTPError(Exception):
    """What an HTTP client raises for an error status: the status and the headers."""

    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.headers = headers or {}


def http_verdict(exc: Exception) -> recuo.Verdict | bool:
    """The verdict on a failed POST that carries an idempotency key."""
    if isinstance(exc, HTTPError):
        return recuo.classify(exc.status, method="POST", idempotency_key=True, headers=exc.headers, now_ms=NOW_MS)
    return isinstance(exc, ConnectionError)


def verdicts() -> None:
    print("policy engine: recuo.classify(outcome, method=...)")
    outcomes: list[tuple[str, recuo.Verdict]] = [
        ("429 Retry-After: 3", recuo.classify(429, headers={"Retry-After": "3"}, now_ms=NOW_MS)),
        ("503 on a POST", recuo.classify(503, method="POST")),
        ("500 on a POST", recuo.classify(500, method="POST")),
        ("500 on a POST with a key", recuo.classify(500, method="POST", idempotency_key=True)),
        ("timeout on a GET", recuo.classify(error="timeout")),
        ("connect on a POST", recuo.classify(error="connect", method="POST")),
        ("tls", recuo.classify(error="tls")),
        ("404", recuo.classify(404)),
    ]
    for label, v in outcomes:
        wait = "" if v.wait_ms is None else f", wait {v.wait_ms} ms"
        print(f"  {label:<26} -> {v.verdict} ({v.reason}{wait})")


def payment() -> None:
    print("recuo.call(create_payment, policy=Policy(spread=0), classify=http_verdict)")
    answers: list[object] = [HTTPError(503, {"Retry-After": "1"}), HTTPError(429, {"Retry-After": "2"}), "pay_123"]
    keys: set[str] = set()

    def create_payment(amount: int) -> str:
        attempt = recuo.current_attempt()
        keys.add(attempt.idempotency_key)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            print(f"  attempt {attempt.number}: POST /payments ({amount}) -> {answer}")
            raise answer
        print(f"  attempt {attempt.number}: POST /payments ({amount}) -> 201")
        return str(answer)

    def wait(seconds: float) -> None:
        print(f"  sleep({seconds}): the server's wait (the demo does not really sleep)")

    result = recuo.call(create_payment, 100, policy=recuo.Policy(spread=0), classify=http_verdict, sleep=wait)
    print(f"  -> {result!r}; {len(keys)} idempotency key for the 3 attempts")

    def quota() -> str:
        raise HTTPError(429, {"Retry-After": "86400"})

    def gave_up(report: recuo.Report) -> None:
        print(f"  daily quota: gave up after {report.attempts} attempt ({report.reason})")

    try:
        recuo.call(quota, policy=recuo.Policy.guide_b(), classify=http_verdict, on_give_up=gave_up)
    except HTTPError:
        pass


async def in_asyncio() -> None:
    print("asyncio: @recuo.retry on an async def function")
    calls = 0

    @recuo.retry(policy=recuo.Policy(base=0.01, cap=0.02), on_retry=lambda n, exc, d: print(f"  attempt {n}: {exc}"))
    async def fetch(path: str) -> str:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)
        if calls < 3:
            raise ConnectionError("connection reset")
        return f"200 {path}"

    print(f"  -> {await fetch('/status')!r}")


def shared_limits() -> None:
    print("shared limits: guide B's plan, then a batch through one gate")
    plan = recuo.plan(600, "120/min", "90/min", latency=2)
    print(f"  600 requests at 90/min under 120/min, 2 s each -> {plan.interval_ms} ms apart, "
          f"{plan.duration_s:.0f} s, {plan.in_flight:.0f} in flight")
    gate = recuo.Gate(
        regulator=recuo.Regulator("50/s", burst=2),
        limit=recuo.ConcurrencyLimit(3),
        budget=recuo.RetryBudget(),
    )
    fails = {3, 7}

    def job(i: int) -> int:
        if i in fails:
            fails.discard(i)  # fails once, then succeeds
            raise ConnectionError(f"job {i}: connection reset")
        return i

    report = recuo.run_batch([functools.partial(job, i) for i in range(12)], gate=gate, workers=4, deadline=10,
                             policy=recuo.Policy(base=0.01, cap=0.02))
    s = report.stats
    print(f"  batch: {s.successes} succeeded, {s.failures} gave up, {s.not_started} not started; "
          f"{s.initial} first attempts + {s.retries} retries, at most {s.max_in_flight} in flight, "
          f"mean spacing {s.mean_spacing_ms:.0f} ms")


def records() -> None:
    print("records: redacted before they exist, logged to the `recuo` logger")
    url = "https://ana:pw@api.example.com/v1/users/ana@example.com?api_key=k1&page=2"
    print(f"  redact_url     -> {recuo.redact_url(url)}")
    print(f"  redact_headers -> {recuo.redact_headers({'Authorization': 'Bearer s3cr3t', 'X-Request-Id': 'req-7'})}")
    page = recuo.who_answered({"CF-Ray": "8a1b-GRU", "Content-Type": "text/html"}, "application/json")
    print(f"  who_answered   -> {page.origin} ({page.confidence}): {'; '.join(page.evidence)}")

    class Show(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            fields = record.recuo  # type: ignore[attr-defined]
            if fields["type"] == "attempt":
                what = fields.get("status") or fields.get("transport") or fields.get("outcome")
                print(f"  {record.levelname:<7} attempt {what}: {fields['decision']} ({fields['reason']}), "
                      f"request id {fields['request_id']}, delay {fields['delay_ms']} ms, {fields['url']}")
            else:
                print(f"  {record.levelname:<7} result  {fields['result']} after {fields['attempts']} attempts")

    show, log = Show(), logging.getLogger("recuo")
    log.addHandler(show)
    log.setLevel(logging.DEBUG)
    answers: list[Exception] = [HTTPError(503, {"Retry-After": "1", "X-Request-Id": "req-9"})]

    def read() -> str:
        if answers:
            raise answers.pop()
        return "ok"

    try:
        recuo.call(read, classify=http_verdict, seed=1, sleep=lambda s: None, request=("GET", url))
    finally:
        log.removeHandler(show)
        log.setLevel(logging.NOTSET)


def main() -> None:
    print(f"recuo {recuo.__version__} (Python)")
    guide_b()
    guide_a()
    verdicts()
    payment()
    asyncio.run(in_asyncio())
    shared_limits()
    records()


if __name__ == "__main__":
    main()
