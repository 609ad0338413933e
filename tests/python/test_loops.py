"""The loop vectors (tests/vectors/loops.json), in Python: every scenario through
``recuo.Operation`` and every queue scenario through ``recuo.BatchQueue``, answering exactly
the steps, reports, stats and ``[level, json]`` records written there; and the scenarios
whose events an ``async def`` function can play through the asyncio loop of ``recuo.retry``
(a fake clock, a scripted gate and sleep), which must log the very same records — the
asyncio loop is a plain driver of the same machine.

The expected values are worked out from SPEC §4–§7 (see the file's description); the Rust
reader is core/tests/loops.rs.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

import recuo
import recuo._retry as retry_module
from conftest import policy_of, vectors

LOOPS = vectors("loops.json")
SCENARIOS: list[dict[str, Any]] = LOOPS["scenarios"]
QUEUES: list[dict[str, Any]] = LOOPS["queues"]


def gate_of(g: dict[str, Any] | None) -> recuo.Gate | None:
    if g is None:
        return None
    budget = g.get("budget")
    return recuo.Gate(
        budget=None if budget is None else recuo.RetryBudget(budget["ratio"], budget["floor_per_s"], budget["window_s"]),
        limit=None if "limit" not in g else recuo.ConcurrencyLimit(g["limit"]),
    )


def verdict_of(v: dict[str, Any]) -> recuo.Verdict:
    if v["verdict"] == "retry":
        return recuo.Verdict.retry(v.get("wait_ms"), reason=v["reason"])
    if v["verdict"] == "give_up":
        return recuo.Verdict.give_up(v["reason"])
    return recuo.Verdict.success()


def step_json(step: recuo.Step) -> dict[str, Any]:
    """A step as the vectors write it."""
    kind = step.kind
    if kind == "enter":
        return {"step": kind, "attempt": step.attempt, "until_ms": step.until_ms}
    if kind == "call":
        return {"step": kind, "attempt": step.attempt, "timeout_ms": step.timeout_ms}
    if kind == "classify":
        return {"step": kind, "attempt": step.attempt}
    if kind == "sleep":
        return {"step": kind, "attempt": step.attempt, "delay_ms": step.delay_ms}
    if kind == "done":
        return {"step": kind}
    return {"step": kind, "reason": step.reason, "retry_at_ms": step.retry_at_ms}


def report_json(report: recuo.Report) -> dict[str, Any]:
    return {
        "attempts": report.attempts,
        "reason": report.reason,
        "elapsed_ms": report.elapsed_ms,
        "delays_ms": list(report.delays_ms),
        "stopped_by": report.stopped_by,
    }


def stats_json(stats: recuo.Stats) -> dict[str, int]:
    names = ("initial", "retries", "successes", "failures", "not_started", "throttled", "unavailable")
    return {name: getattr(stats, name) for name in names}


# --- every scenario through recuo.Operation ---------------------------------------------------


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_operation(sc: dict[str, Any]) -> None:
    stats = recuo.StatsRecorder()
    request = sc["request"]
    pool = sc["pool"]
    if pool is not None:
        assert pool["nested"]  # Operation's pool= is an enclosing loop's
    op = recuo.Operation(
        policy_of(sc["policy"]),
        request=(request["method"], request["url"]),
        records="debug",
        stats=stats,
        classify_last_failure=not sc["guide"],
        idempotency_key=recuo.IdempotencyKey() if sc["key_given"] else None,
        gate=gate_of(sc["gate"]),
        pool=None if pool is None else pool["remaining"],
    )
    last = None
    for i, ev in enumerate(sc["events"]):
        at = ev.get("at", 0)
        do = ev["do"]
        if do == "cancel":
            op.cancel()
            continue
        if do == "stop_queue":
            op.stop_queue(ev["reason"])
            continue
        if do == "start":
            step = op.start(at, sc["unix_ms"])
        elif do == "enter":
            step = op.entered(at, ev["passed"])
        elif do == "respond":
            step = op.responded(at, ev["status"], headers=ev["headers"])
        elif do == "transport":
            step = op.responded(at, error=ev["kind"])
        elif do == "fail":
            step = op.failed(at)
        elif do == "succeed":
            step = op.succeeded(at)
        elif do == "judge":
            step = op.judged(at, verdict_of(ev["verdict"]))
        elif do == "slept":
            step = op.slept(at)
        else:
            raise AssertionError(f"unknown event {do}")
        assert step_json(step) == ev["expect"], f"event {i}"
        last = step
    assert last is not None and last.kind in ("done", "gave_up")
    assert last.report is not None and report_json(last.report) == sc["report"]
    assert report_json(op.report) == sc["report"]
    assert stats_json(stats.snapshot()) == sc["stats"]
    records = []
    while (polled := op.poll_record()) is not None:
        records.append([polled[0], polled[1].to_json()])
    assert records == sc["records"]


# --- every queue scenario through recuo.BatchQueue ----------------------------------------------


@pytest.mark.parametrize("q", QUEUES, ids=[q["name"] for q in QUEUES])
def test_queue(q: dict[str, Any]) -> None:
    stats = recuo.StatsRecorder()
    queue = recuo.BatchQueue(
        policy_of(q["policy"]),
        q["len"],
        0,
        q["deadline_ms"],
        stop_when_a_wait_exceeds_the_deadline=q["stop_on_unreachable_wait"],
        stats=stats,
    )
    assert len(queue) == q["len"]
    for i, ev in enumerate(q["events"]):
        if ev["do"] == "stop":
            queue.stop(ev["reason"])
            assert queue.stopped == ev["reason"]
            continue
        if ev["do"] == "finished":
            got: dict[str, Any] = {"stops": queue.finished(ev["index"], ev["reason"])}
        else:
            n = queue.next(ev["at"])
            if n.kind == "start":
                assert n.policy is not None
                deadline = n.policy.deadline
                got = {
                    "next": "start",
                    "index": n.index,
                    "deadline_ms": None if deadline is None else round(deadline * 1000),
                }
            elif n.kind == "not_started":
                got = {"next": "not_started", "index": n.index, "reason": n.reason, "stopped_by": n.stopped_by}
            else:
                got = {"next": "finished"}
        assert got == ev["expect"], f"event {i}"
    assert stats.snapshot().not_started == q["not_started"]


def test_the_not_started_record() -> None:
    record = recuo.BatchQueue.not_started_record(
        0, "GET", "https://api.example/?token=x", "queue_stopped", "wait_exceeds_deadline"
    )
    assert record.to_json() == (
        '{"type":"result","start":"1970-01-01T00:00:00.000Z","method":"GET",'
        '"url":"https://api.example/?token=[redacted]","result":"gave_up","attempts":0,'
        '"reason":"queue_stopped","total_ms":0,"stopped_by":"wait_exceeds_deadline"}'
    )
    assert (record.reason, record.stopped_by) == ("queue_stopped", "wait_exceeds_deadline")


# --- the same scenarios through the asyncio loop of recuo.retry --------------------------------


def async_playable(sc: dict[str, Any]) -> bool:
    """Whether ``recuo.retry``'s asyncio loop can play the scenario: not guide A's loop (that is
    ``com_retry``, blocking), no enclosing loop's pool, no batch queue, no caller's key (an
    option ``retry`` does not have)."""
    events = {ev["do"] for ev in sc["events"]}
    return not sc["guide"] and sc["pool"] is None and not sc["key_given"] and "stop_queue" not in events


ASYNC = [s for s in SCENARIOS if async_playable(s)]


class Refused(Exception):
    """A failed attempt: an HTTP status, a transport failure, or an error with no HTTP
    meaning."""

    def __init__(self, event: dict[str, Any]) -> None:
        super().__init__(event["do"])
        self.event = event


class Script:
    """The host's side of a scenario for the asyncio loop: a fake clock, the function, the
    classifier, the gate and the sleep, each taking the scenario's next event and checking
    that the loop does what the machine answered to the one before."""

    def __init__(self, sc: dict[str, Any]) -> None:
        self.sc = sc
        self.policy = policy_of(sc["policy"])
        self.events: list[dict[str, Any]] = list(sc["events"])
        self.now = 0
        self.expect: dict[str, Any] = {}
        self.reports: list[recuo.Report] = []
        self.retries: list[tuple[int, float]] = []
        start = self.take("start")
        self.now = start["at"]

    def take(self, *kinds: str) -> dict[str, Any]:
        ev = self.events.pop(0)
        assert ev["do"] in kinds, (ev, kinds)
        self.expect = ev.get("expect", self.expect)
        return ev

    def expecting(self, step: str) -> dict[str, Any]:
        assert self.expect["step"] == step, (self.expect, step)
        return self.expect

    async def call(self) -> str:
        want = self.expecting("call")
        assert recuo.current_attempt().number == want["attempt"]
        ev = self.take("respond", "transport", "fail", "succeed")
        self.now = ev["at"]
        if ev["do"] == "respond":
            recuo.current_attempt().record_response(ev["status"], ev["headers"])
            if ev["status"] < 400:
                return "ok"
        if ev["do"] == "succeed":
            return "ok"
        raise Refused(ev)

    def classify(self, exc: Exception) -> recuo.Verdict:
        assert isinstance(exc, Refused)
        ev = exc.event
        method = self.sc["request"]["method"]
        if ev["do"] == "respond":
            return recuo.classify(ev["status"], headers=ev["headers"], method=method, policy=self.policy, now_ms=0)
        if ev["do"] == "transport":
            return recuo.classify(error=ev["kind"], method=method, policy=self.policy)
        self.expecting("classify")
        judge = self.take("judge")
        self.now = judge["at"]
        return verdict_of(judge["verdict"])

    def on_retry(self, attempt: int, exc: Exception, delay: float) -> None:
        want = self.expecting("sleep")
        assert (attempt, round(delay * 1000)) == (want["attempt"], want["delay_ms"])
        self.retries.append((attempt, delay))

    async def sleep(self, seconds: float) -> None:
        assert round(seconds * 1000) == self.expecting("sleep")["delay_ms"]
        ev = self.take("slept", "cancel")
        if ev["do"] == "cancel":
            self.now = self.take("slept")["at"]
            raise asyncio.CancelledError
        self.now = ev["at"]

    async def enter_gate(self, gate: recuo.Gate, asking: object = None) -> None:
        self.expecting("enter")
        ev = self.take("enter", "cancel")
        if ev["do"] == "cancel":
            self.now = self.take("enter")["at"]
            raise asyncio.CancelledError
        self.now = ev["at"]
        if not ev["passed"]:
            # What asyncio.wait_for raises when the gate's wait reaches the deadline.
            raise asyncio.TimeoutError


@pytest.mark.parametrize("sc", ASYNC, ids=[s["name"] for s in ASYNC])
def test_asyncio_loop(sc: dict[str, Any], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    script = Script(sc)
    monkeypatch.setattr(retry_module, "_now_ms", lambda: script.now)
    monkeypatch.setattr(retry_module, "_unix_ms", lambda: sc["unix_ms"])
    monkeypatch.setattr(retry_module, "enter_gate", script.enter_gate)
    caplog.set_level(logging.DEBUG, logger="recuo")
    request = sc["request"]

    async def main() -> str | None:
        return await recuo.call(
            script.call,
            policy=script.policy,
            classify=script.classify,
            on_retry=script.on_retry,
            on_give_up=script.reports.append,
            sleep=script.sleep,
            gate=gate_of(sc["gate"]),
            request=(request["method"], request["url"]),
        )

    want = sc["report"]
    if want["reason"] is None:
        assert asyncio.run(main()) == "ok"
        assert script.expect == {"step": "done"} and script.reports == []
    else:
        raised = asyncio.CancelledError if want["reason"] == "cancelled" else (Refused, RuntimeError)
        with pytest.raises(raised):
            asyncio.run(main())
        assert script.expect["step"] == "gave_up"
        [report] = script.reports
        assert report_json(report) == want
        retry_at_ms = script.expect["retry_at_ms"]
        assert report.retry_at == (None if retry_at_ms is None else (sc["unix_ms"] + retry_at_ms) / 1000)
    assert script.events == []
    assert [d for _, d in script.retries] == [ms / 1000 for ms in want["delays_ms"]][: len(script.retries)]
    logged = [[r.levelname.lower(), r.getMessage()] for r in caplog.records if r.name == "recuo"]
    assert logged == sc["records"]


def test_every_scenario_an_async_function_can_play_is_played() -> None:
    # Those left out need what recuo.retry does not have (guide A's loop, an enclosing pool, a
    # batch queue, a caller's key); every other one runs through the asyncio loop.
    assert len(ASYNC) == len(SCENARIOS) - 6
