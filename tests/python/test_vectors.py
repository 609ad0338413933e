"""The shared vectors in tests/vectors/: the Python surface must answer every case as the Rust,
C and PHP surfaces do. Each case is its own test, named after the case."""

from __future__ import annotations

import math
from typing import Any

import pytest

import recuo
from conftest import policy_of, vectors

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


# --- classification (SPEC §5) and the state machine (SPEC §6) -------------------------------

CLASSIFY = vectors("classify.json")["cases"]
SCENARIOS = vectors("scenarios.json")["scenarios"]


def test_the_policy_engine_vector_files_are_not_empty() -> None:
    assert len(CLASSIFY) >= 40
    assert len(SCENARIOS) >= 10


def _classify(case: dict[str, Any], headers: Any = None) -> recuo.Verdict:
    outcome = case["outcome"]
    kwargs: dict[str, Any] = {"status": outcome} if isinstance(outcome, int) else {"error": outcome}
    return recuo.classify(
        **kwargs,
        method=case["method"],
        idempotency_key=case["idempotency_key"],
        headers=[tuple(pair) for pair in case["headers"]] if headers is None else headers,
        now_ms=case["now_ms"],
    )


@pytest.mark.parametrize("case", CLASSIFY, ids=[c["name"] for c in CLASSIFY])
def test_classify(case: dict[str, Any]) -> None:
    verdict = _classify(case)
    expected = (case["verdict"], case["reason"], case["wait_ms"], case["wait_unbounded"])
    assert (verdict.verdict, verdict.reason, verdict.wait_ms, verdict.wait_unbounded) == expected
    # The same headers as a dict (when no name repeats) and as bytes answer alike.
    names = [name.lower() for name, _ in case["headers"]]
    if len(set(names)) == len(names):
        assert _classify(case, dict(case["headers"])) == verdict
    as_bytes = [(n.encode("latin-1"), v.encode("latin-1")) for n, v in case["headers"]]
    assert _classify(case, as_bytes) == verdict
    # And under the default policy given explicitly.
    assert recuo.classify(
        **({"status": case["outcome"]} if isinstance(case["outcome"], int) else {"error": case["outcome"]}),
        method=case["method"],
        idempotency_key=case["idempotency_key"],
        headers=case["headers"],
        now_ms=case["now_ms"],
        policy=recuo.Policy(),
    ) == verdict


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_scenario(scenario: dict[str, Any]) -> None:
    policy = policy_of(scenario["policy"])
    op = recuo.Operation(policy, seed=0)
    for i, step in enumerate(scenario["steps"]):
        call = op.start(step["begin_ms"]) if i == 0 else op.slept(step["begin_ms"])
        assert call.kind == "call", step
        outcome = step["outcome"]
        verdict = recuo.classify(
            **({"status": outcome} if isinstance(outcome, int) else {"error": outcome}),
            method=step["method"],
            idempotency_key=step["idempotency_key"],
            headers=step["headers"],
            now_ms=scenario["now_ms"] + step["end_ms"],
            policy=policy,
        )
        if step["cancel"]:
            op.cancel()
        if verdict.verdict == "success":
            decision = op.succeeded(step["end_ms"])
        else:
            assert op.failed(step["end_ms"]).kind == "classify", step
            decision = op.judged(step["end_ms"], verdict)
        expect = step["expect"]
        kind = {"retry": "sleep", "give_up": "gave_up", "done": "done"}[expect["decision"]]
        assert decision.kind == kind, step
        if expect["decision"] == "retry":
            assert (decision.delay_ms, decision.attempt + 1) == (expect["delay_ms"], expect["next_attempt"]), step  # type: ignore[operator]
            assert (decision.reason, decision.retry_at_ms) == (None, None)
        elif expect["decision"] == "give_up":
            assert (decision.reason, decision.retry_at_ms) == (expect["reason"], expect.get("retry_at_ms")), step
            assert decision.delay_ms is None
        else:
            assert (decision.delay_ms, decision.reason) == (None, None)
    report = op.report
    want = scenario["report"]
    got = (report.attempts, report.reason, report.elapsed_ms, list(report.delays_ms))
    assert got == (want["attempts"], want["reason"], want["elapsed_ms"], want["delays_ms"])
    assert report.retry_at is None or want["reason"] == "wait_exceeds_deadline"
