"""The divergences issue 10 lists, each through every Python loop: they all drive the core's
one machine now, so they answer alike (and as Rust, C and PHP do).

Before, ``recuo.retry`` (sync and async) gave up ``attempts_exhausted`` on a permanent last
attempt, never told the stats or an adaptive regulator about a final 429, and derived
nothing of this from the spec's order.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import recuo
from retrying import AsyncFailing, Events, Failing


class Http(Exception):
    """A failed HTTP attempt."""

    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(status)
        self.status = status
        self.headers = headers or {}


def http_verdict(exc: Exception) -> recuo.Verdict:
    assert isinstance(exc, Http)
    return recuo.classify(exc.status, headers=exc.headers)


def run(asynchronous: bool, op: Failing, **options: Any) -> Any:
    if asynchronous:
        return asyncio.run(recuo.call(AsyncFailing(*op.errors, value=op.value), **options))
    return recuo.call(op, **options)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "asyncio"])
def test_a_permanent_last_attempt_gives_up_permanent(asynchronous: bool) -> None:
    events = Events()
    last = Http(404)
    with pytest.raises(Http) as caught:
        run(
            asynchronous,
            Failing(Http(503), last),
            policy=recuo.Policy(max_attempts=2, base=0.001, cap=0.001),
            classify=http_verdict,
            on_give_up=events.on_give_up,
            sleep=events.sleep,
        )
    assert caught.value.status == 404
    [report] = events.reports
    assert (report.attempts, report.reason) == (2, "permanent")


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "asyncio"])
def test_a_final_429_slows_an_adaptive_regulator(asynchronous: bool) -> None:
    regulator = recuo.Regulator("8/s", adaptive=True)
    events = Events()
    with pytest.raises(Http):
        run(
            asynchronous,
            Failing(Http(429, {"Retry-After": "0"})),
            policy=recuo.Policy(max_attempts=1),
            classify=http_verdict,
            gate=recuo.Gate(regulator=regulator),
            on_give_up=events.on_give_up,
        )
    assert regulator.rate == pytest.approx(4.0)
    assert events.reports[0].reason == "attempts_exhausted"


def test_a_final_429_is_counted_in_a_batchs_stats() -> None:
    def refused() -> None:
        raise Http(429, {"Retry-After": "0"})

    report = recuo.run_batch([refused], policy=recuo.Policy(max_attempts=1), classify=http_verdict)
    assert (report.stats.throttled, report.stats.failures) == (1, 1)
    assert report.results[0].reason == "attempts_exhausted"


def test_com_retry_honours_a_verdicts_give_up() -> None:
    task = Failing(Http(404), Http(404))
    with pytest.raises(Http):
        recuo.com_retry(task, repetir_se=http_verdict, sleep=lambda s: None)
    assert task.calls == 1


def test_guide_a_never_asks_after_the_last_attempt() -> None:
    asked: list[Exception] = []

    def repetir_se(erro: Exception) -> bool:
        asked.append(erro)
        return True

    task = Failing(ConnectionError("1"), ConnectionError("2"))
    with pytest.raises(ConnectionError):
        recuo.com_retry(task, 2, repetir_se=repetir_se, sleep=lambda s: None)
    assert asked == task.raised[:1]


def test_a_seed_never_makes_the_key() -> None:
    keys = []
    for _ in range(2):
        op = Failing()
        recuo.call(op, seed=7, policy=recuo.Policy(max_attempts=1))
        keys.append(op.attempts[0].idempotency_key)
    assert keys[0] != keys[1]
    assert recuo.Operation(seed=7).key != recuo.Operation(seed=7).key


def test_a_status_rule_is_for_400_to_599_only() -> None:
    for status in (100, 200, 399, 600):
        with pytest.raises(recuo.ConfigError) as caught:
            recuo.Policy().with_status_retry(status, "always")
        assert (caught.value.name, caught.value.code) == ("status_out_of_range", 7)
    assert recuo.Policy().with_status_retry(408, "always").status_retry(408) == "always"
