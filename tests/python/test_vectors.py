"""The shared vectors in tests/vectors/: the Python surface must answer every case as the Rust,
C and PHP surfaces do. Each case is its own test, named after the case."""

from __future__ import annotations

import math
from typing import Any

import pytest

import recuo
from conftest import vectors

RETRY_AFTER = vectors("retry_after.json")["cases"]
BACKOFF = vectors("backoff.json")
SEEDED = vectors("seeded.json")


def test_the_vector_files_are_not_empty() -> None:
    assert len(RETRY_AFTER) >= 60
    assert BACKOFF["windows"] and BACKOFF["errors"]
    assert SEEDED["retry_delay_ms"] and SEEDED["com_retry"]


@pytest.mark.parametrize("case", RETRY_AFTER, ids=[c["name"] for c in RETRY_AFTER])
def test_retry_after(case: dict[str, Any]) -> None:
    value: str = case["value"]
    expected = (case["kind"], case["wait_ms"])
    as_str = recuo.parse_retry_after(value, case["now_ms"])
    assert (as_str.kind, as_str.wait_ms) == expected
    # The same bytes handed over as bytes (NULs and non-ASCII included) answer alike.
    as_bytes = recuo.parse_retry_after(value.encode("utf-8"), case["now_ms"])
    assert as_bytes == as_str


def _window_id(case: dict[str, Any]) -> str:
    return f"base={case['base_ms']},cap={case['cap_ms']},n={case['n']}"


@pytest.mark.parametrize("case", BACKOFF["windows"], ids=[_window_id(c) for c in BACKOFF["windows"]])
def test_backoff_window(case: dict[str, Any]) -> None:
    got = recuo.backoff_window_ms(case["n"], case["base_ms"], case["cap_ms"])
    assert got == case["window_ms"]
    assert type(got) is int


@pytest.mark.parametrize(
    "case",
    BACKOFF["errors"],
    ids=[f"base={c['base_ms']},cap={c['cap_ms']}" for c in BACKOFF["errors"]],
)
def test_backoff_error(case: dict[str, Any]) -> None:
    with pytest.raises(recuo.ConfigError) as caught:
        recuo.backoff_window_ms(0, case["base_ms"], case["cap_ms"])
    assert caught.value.name == case["error"]
    assert caught.value.code == 5


def _delay_id(case: dict[str, Any]) -> str:
    return f"{case['retry_after']!r},attempt={case['attempt']},seed={case['seed']}"


@pytest.mark.parametrize(
    "case", SEEDED["retry_delay_ms"], ids=[_delay_id(c) for c in SEEDED["retry_delay_ms"]]
)
def test_seeded_retry_delay(case: dict[str, Any]) -> None:
    got = recuo.retry_delay_ms(case["retry_after"], case["attempt"], case["now_ms"], seed=case["seed"])
    assert type(got) is float
    if case.get("unbounded"):
        assert got == math.inf
    else:
        assert got == float(case["delay_ms"])


def _loop_id(case: dict[str, Any]) -> str:
    return (
        f"seed={case['seed']},tentativas={case['tentativas']},base={case['base_ms']},"
        f"max={case['max_ms']},failures={case['failures']}"
    )


class Flaky:
    """A task that fails `failures` times, then returns the number of its call."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0
        self.raised: list[Exception] = []

    def __call__(self) -> int:
        self.calls += 1
        if self.calls <= self.failures:
            erro = ConnectionError(f"failure {self.calls}")
            self.raised.append(erro)
            raise erro
        return self.calls


@pytest.mark.parametrize("case", SEEDED["com_retry"], ids=[_loop_id(c) for c in SEEDED["com_retry"]])
def test_seeded_com_retry(case: dict[str, Any]) -> None:
    task = Flaky(case["failures"])
    slept_ms: list[int] = []

    def sleep(seconds: float) -> None:
        slept_ms.append(round(seconds * 1000))

    def run() -> int:
        return recuo.com_retry(
            task, case["tentativas"], case["base_ms"] / 1000, case["max_ms"] / 1000, seed=case["seed"], sleep=sleep
        )

    if case["outcome"] == "ok":
        assert run() == case["calls"]
    else:
        with pytest.raises(ConnectionError) as caught:
            run()
        assert caught.value is task.raised[-1]
    assert task.calls == case["calls"]
    assert slept_ms == case["sleeps_ms"]
