"""The loop vectors (tests/vectors/loops.json), in Python: every scenario through
``recuo.Operation`` (the sync face), every queue scenario through ``recuo.BatchQueue``, the
pool a loop draws from, whether a success needs the machine, the rounding of a wait, and the
batches (a queue and its operations on one fake clock), answering exactly the steps, reports,
stats and ``[level, json]`` records written there; and the scenarios whose events an
``async def`` function can play through the asyncio loop of ``recuo.retry`` (a fake clock, a
scripted gate look and sleep), which must log the very same records — the asyncio loop is a
plain driver of the same machine: it makes the first attempt before the machine and starts
the machine after it, and passes the gate with the machine's gate step.

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
from recuo._recuo import _AttemptPool, _attempt_pool, _loop_pool, _wait_ms_from_ns

LOOPS = vectors("loops.json")
SCENARIOS: list[dict[str, Any]] = LOOPS["scenarios"]
QUEUES: list[dict[str, Any]] = LOOPS["queues"]
POOLS: list[dict[str, Any]] = LOOPS["pools"]
NEEDS: list[dict[str, Any]] = LOOPS["success_needs_machine"]
BATCHES: list[dict[str, Any]] = LOOPS["batches"]


def gate_of(g: dict[str, Any] | None) -> tuple[recuo.Gate | None, list[recuo.Permit]]:
    """A scenario's gate, and the places of its limit that others hold at the start (its
    regulator's ``taken`` slots are spent at 0 on the regulator's clock)."""
    if g is None:
        return None, []
    budget = g.get("budget")
    limit = None if "limit" not in g else recuo.ConcurrencyLimit(g["limit"])
    regulator = None
    if "regulator" in g:
        r = g["regulator"]
        regulator = recuo.Regulator(r["rate"], r["burst"])
        for _ in range(r.get("taken", 0)):
            assert regulator.try_acquire_at(0) == 0
    held = []
    for _ in range(g.get("held", 0)):
        assert limit is not None
        permit = limit.try_acquire()
        assert permit is not None
        held.append(permit)
    gate = recuo.Gate(
        budget=None if budget is None else recuo.RetryBudget(budget["ratio"], budget["floor_per_s"], budget["window_s"]),
        limit=limit,
        regulator=regulator,
    )
    return gate, held


def verdict_of(v: dict[str, Any], seen: dict[str, Any] | None = None) -> recuo.Verdict:
    """A verdict as the vectors write it, reached on the response ``seen`` when given."""
    if v["verdict"] == "retry":
        verdict = recuo.Verdict.retry(v.get("wait_ms"), reason=v["reason"])
    elif v["verdict"] == "give_up":
        verdict = recuo.Verdict.give_up(v["reason"])
    else:
        verdict = recuo.Verdict.success()
    if seen is None:
        return verdict
    return verdict._with_response(seen["status"], pairs(seen["headers"]))


def pairs(headers: list[list[str]]) -> list[tuple[str, str]]:
    return [(name, value) for name, value in headers]


class Carrying(Exception):
    """A failed attempt's exception, carrying a response (``status_code``, ``headers``) when
    the vector says its error did (``error_seen``)."""

    def __init__(self, event: dict[str, Any]) -> None:
        super().__init__(event["do"])
        self.event = event
        carried = event.get("error_seen")
        self.status_code: int | None = None if carried is None else carried["status"]
        self.headers: list[tuple[str, str]] | None = None if carried is None else pairs(carried["headers"])


def step_json(step: recuo.Step) -> dict[str, Any]:
    """A step as the vectors write it (a look at the gate's wait too)."""
    kind = step.kind
    if kind == "wait":
        return {"gate": kind, "delay_ms": step.delay_ms}
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
    retry_at = report.retry_at_unix_ms
    assert report.retry_at == (None if retry_at is None else retry_at / 1000)
    return {
        "attempts": report.attempts,
        "reason": report.reason,
        "elapsed_ms": report.elapsed_ms,
        "delays_ms": list(report.delays_ms),
        "stopped_by": report.stopped_by,
        "retry_at_unix_ms": retry_at,
    }


def stats_json(stats: recuo.Stats) -> dict[str, int]:
    names = ("initial", "retries", "successes", "failures", "not_started", "throttled", "unavailable")
    return {name: getattr(stats, name) for name in names}


def polled_records(source: recuo.Operation | recuo.BatchQueue) -> list[list[str]]:
    records = []
    while (polled := source.poll_record()) is not None:
        records.append([polled[0], polled[1].to_json()])
    return records


def pool_of(sc: dict[str, Any]) -> int | None:
    """``Operation(pool=)`` for a scenario's pool: an enclosing loop's attempts left, or —
    for a first attempt made before the machine — what the core's rule leaves after it."""
    pool = sc["pool"]
    if pool is None:
        return None
    if pool.get("after_first"):
        enclosing = None if pool["enclosing"] is None else _AttemptPool(pool["enclosing"])
        chosen, nested, _owned = _loop_pool(enclosing, sc["policy"]["max_attempts"], False, True)
        assert nested  # Operation's pool= draws the first attempt from nothing
        return chosen.remaining
    assert pool["nested"]  # Operation's pool= is an enclosing loop's
    remaining: int = pool["remaining"]
    return remaining


# --- every scenario through recuo.Operation ---------------------------------------------------


@pytest.mark.parametrize("sc", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_operation(sc: dict[str, Any]) -> None:
    stats = recuo.StatsRecorder()
    request = sc["request"]
    gate, held = gate_of(sc["gate"])
    op = recuo.Operation(
        policy_of(sc["policy"]),
        request=(request["method"], request["url"]),
        records="debug",
        stats=stats,
        classify_last_failure=not sc["guide"],
        idempotency_key=recuo.IdempotencyKey() if sc["key_given"] else None,
        gate=gate,
        pool=pool_of(sc),
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
        if do == "release":
            held.pop().release()
            continue
        if do == "start":
            step = op.start(at, sc["unix_ms"])
        elif do == "first":
            step = op.start_after_first(at, sc["unix_ms"])
        elif do == "poll_gate":
            step = op.poll_gate_at(at, at * 1_000_000)
        elif do == "enter":
            step = op.entered(at, ev["passed"])
        elif do == "respond":
            step = op.responded(at, ev["status"], headers=ev["headers"])
        elif do == "transport":
            step = op.responded(at, error=ev["kind"])
        elif do == "fail":
            seen = ev.get("seen")
            if seen is not None:
                attempt = op.attempt
                assert attempt is not None
                attempt.record_response(seen["status"], pairs(seen["headers"]))
            step = op.failed(at, Carrying(ev))
        elif do == "succeed":
            step = op.succeeded(at)
        elif do == "judge":
            step = op.judged(at, verdict_of(ev["verdict"], ev.get("seen")))
        elif do == "slept":
            step = op.slept(at)
        else:
            raise AssertionError(f"unknown event {do}")
        assert step_json(step) == ev["expect"], f"event {i}"
        if step.kind != "wait":
            last = step
    assert last is not None and last.kind in ("done", "gave_up")
    assert last.report is not None and report_json(last.report) == sc["report"]
    assert report_json(op.report) == sc["report"]
    assert stats_json(stats.snapshot()) == sc["stats"]
    assert polled_records(op) == sc["records"]


def test_a_look_at_the_gate_past_its_deadline_gives_up() -> None:
    # A look that comes after the deadline (an event loop that slept past it) is refused at
    # the gate: wait_exceeds_deadline, and the start slot it would have reserved stays free.
    regulator = recuo.Regulator("2/s", 1)
    op = recuo.Operation(recuo.Policy(deadline=0.008, jitter="none"), gate=recuo.Gate(regulator=regulator))
    assert step_json(op.start(0, 0)) == {"step": "enter", "attempt": 0, "until_ms": 8}
    step = op.poll_gate(9)
    assert step_json(step) == {"step": "gave_up", "reason": "wait_exceeds_deadline", "retry_at_ms": None}
    assert regulator.try_acquire() == 0.0


def test_a_look_at_a_cancelled_operation_gives_its_place_back() -> None:
    limit = recuo.ConcurrencyLimit(1)
    op = recuo.Operation(gate=recuo.Gate(limit=limit))
    assert op.start(0).kind == "enter"
    assert op.poll_gate(0).kind == "call"
    assert limit.in_flight == 1  # the machine holds the place while the attempt runs
    op._abandon(1)
    assert op.is_finished and op.report.reason == "cancelled"
    assert limit.in_flight == 0


# --- every queue scenario through recuo.BatchQueue ----------------------------------------------


def next_json(n: recuo.Next) -> dict[str, Any]:
    if n.kind == "start":
        assert n.policy is not None
        deadline = n.policy.deadline
        return {
            "next": "start",
            "index": n.index,
            "deadline_ms": None if deadline is None else round(deadline * 1000),
        }
    if n.kind == "not_started":
        return {"next": "not_started", "index": n.index, "reason": n.reason, "stopped_by": n.stopped_by}
    return {"next": "finished"}


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
            got = next_json(queue.next(ev["at"]))
        assert got == ev["expect"], f"event {i}"
    assert stats.snapshot().not_started == q["not_started"]
    assert queue.poll_record() is None  # no requests given: no records


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


# --- the rules beside the loop ------------------------------------------------------------------


@pytest.mark.parametrize("case", POOLS, ids=[c["name"] for c in POOLS])
def test_the_pool_a_loop_draws_from(case: dict[str, Any]) -> None:
    enclosing = None if case["enclosing"] is None else _AttemptPool(case["enclosing"])
    pool, nested, owned = _loop_pool(enclosing, case["max_attempts"], case["batch"], case["after_first"])
    assert {"remaining": pool.remaining, "nested": nested, "owned": owned} == case["expect"]
    if enclosing is not None and not owned:
        assert enclosing._take()  # the enclosing pool itself: shared
        assert pool.remaining == enclosing.remaining


@pytest.mark.parametrize("case", NEEDS, ids=[c["name"] for c in NEEDS])
def test_whether_a_success_needs_the_machine(case: dict[str, Any]) -> None:
    gate, _ = gate_of(case["gate"])
    needs = recuo.Operation.success_needs_machine(gate, stats=case["stats"], records=case["records"])
    assert needs is case["expect"]


@pytest.mark.parametrize("pair", LOOPS["wait_ms_from_ns"], ids=str)
def test_a_wait_rounds_up_to_whole_milliseconds(pair: list[int]) -> None:
    assert _wait_ms_from_ns(pair[0]) == pair[1]


# --- the batches: a queue and its operations on one fake clock ---------------------------------


@pytest.mark.parametrize("b", BATCHES, ids=[b["name"] for b in BATCHES])
def test_batch(b: dict[str, Any]) -> None:
    stats = recuo.StatsRecorder()
    requests = [(r["method"], r["url"]) for r in b["requests"]]
    queue = recuo.BatchQueue(
        policy_of(b["policy"]),
        b["len"],
        0,
        b["deadline_ms"],
        stop_when_a_wait_exceeds_the_deadline=b["stop_on_unreachable_wait"],
        stats=stats,
        requests=requests,
        unix_ms=b["unix_ms"],
    )
    ops: dict[int, recuo.Operation] = {}
    ends: dict[int, tuple[str, str | None, str | None]] = {}
    progress: list[dict[str, int]] = []
    for i, ev in enumerate(b["events"]):
        at = ev.get("at", 0)
        do = ev["do"]
        n = ev.get("op")
        if do == "next":
            answer = queue.next(at)
            if answer.kind == "start":
                assert answer.index is not None and answer.policy is not None
                ops[answer.index] = recuo.Operation(
                    answer.policy, request=requests[answer.index], records="debug", stats=stats
                )
            elif answer.kind == "not_started":
                assert answer.index is not None and answer.reason is not None
                ends[answer.index] = ("not_started", answer.reason, answer.stopped_by)
                progress.append(queue.ended(answer.index, ends[answer.index]).to_dict())  # type: ignore[arg-type]
            got = next_json(answer)
        elif do == "finished":
            report = ops[n].report
            ends[n] = recuo.BatchQueue.end_of(report)
            got = {"stops": queue.finished(n, report.reason)}
            progress.append(dict(queue.ended(n, ends[n]).to_dict()))  # type: ignore[arg-type]
        elif do == "stop_queue":
            stopped = queue.stopped
            assert stopped is not None
            ops[n].stop_queue(stopped)
            continue
        elif do == "start":
            got = step_json(ops[n].start(at, b["unix_ms"] + at))
        elif do == "slept":
            got = step_json(ops[n].slept(at))
        elif do == "respond":
            got = step_json(ops[n].responded(at, ev["status"], headers=ev["headers"]))
        elif do == "transport":
            got = step_json(ops[n].responded(at, error=ev["kind"]))
        else:
            raise AssertionError(f"unknown event {do}")
        assert got == ev["expect"], f"event {i}"
    results = [
        {"end": end, "reason": reason, "stopped_by": stopped_by}
        for end, reason, stopped_by in (ends[k] for k in range(b["len"]))
    ]
    assert results == b["results"]
    assert progress == b["progress"]
    records = {str(k): polled_records(op) for k, op in sorted(ops.items())}
    records["queue"] = polled_records(queue)
    assert records == b["records"]
    assert stats_json(stats.snapshot()) == b["stats"]


# --- the same scenarios through the asyncio loop of recuo.retry --------------------------------


def async_playable(sc: dict[str, Any]) -> bool:
    """Whether ``recuo.retry``'s asyncio loop can play the scenario: not guide A's loop (that is
    ``com_retry``, blocking), no batch queue, no caller's key (an option ``retry`` does not
    have), and no gate answered by ``entered`` (the asyncio loop looks at the gate with the
    machine's gate step, ``poll_gate``), and no first look at the gate later than the start
    (the asyncio loop looks as soon as it starts: it cannot oversleep before its first look)."""
    events = {ev["do"] for ev in sc["events"]}
    evs = sc["events"]
    late_look = len(evs) > 1 and evs[1]["do"] == "poll_gate" and evs[1]["at"] != evs[0]["at"]
    return not sc["guide"] and not sc["key_given"] and not events & {"stop_queue", "enter"} and not late_look


ASYNC = [s for s in SCENARIOS if async_playable(s)]


class Refused(Carrying):
    """A failed attempt: an HTTP status, a transport failure, or an error with no HTTP
    meaning (carrying a response when the vector's error did)."""


class Script:
    """The host's side of a scenario for the asyncio loop: a fake clock, the function, the
    classifier, the gate's look and wait, and the sleep, each taking the scenario's next event
    and checking that the loop does what the machine answered to the one before."""

    def __init__(self, sc: dict[str, Any]) -> None:
        self.sc = sc
        self.policy = policy_of(sc["policy"])
        self.events: list[dict[str, Any]] = list(sc["events"])
        self.now = 0
        self.expect: dict[str, Any] = {}
        self.reports: list[recuo.Report] = []
        self.retries: list[tuple[int, float]] = []
        self.gate, self.held = gate_of(sc["gate"])
        # Started by the machine ("start"), or after a first attempt made before it ("first"):
        # the asyncio loop makes the first attempt before the machine when no gate needs it.
        start = self.take("start", "first")
        self.now = start["at"]

    def take(self, *kinds: str) -> dict[str, Any]:
        ev = self.events.pop(0)
        assert ev["do"] in kinds, (ev, kinds)
        self.expect = ev.get("expect", self.expect)
        return ev

    def expecting(self, step: str) -> dict[str, Any]:
        assert self.expect.get("step") == step, (self.expect, step)
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
        if ev["do"] == "fail" and ev.get("seen") is not None:
            recuo.current_attempt().record_response(ev["seen"]["status"], pairs(ev["seen"]["headers"]))
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
        return verdict_of(judge["verdict"], judge.get("seen"))

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

    def poll(self, op: recuo.Operation, now_ms: int) -> recuo.Step:
        """The asyncio loop's look at the gate, the regulator asked on the fake clock."""
        ev = self.take("poll_gate")
        assert now_ms == ev["at"]
        step = op.poll_gate_at(now_ms, now_ms * 1_000_000)
        assert step_json(step) == ev["expect"]
        return step

    async def wait_at_gate(self, seconds: float) -> None:
        """The wait the look asked for: places are released meanwhile, or the task is
        cancelled; the next look comes at its event's time."""
        assert self.expect.get("gate") == "wait" and round(seconds * 1000) == self.expect["delay_ms"]
        while self.events[0]["do"] == "release":
            self.take("release")
            self.held.pop().release()
        cancelled = self.events[0]["do"] == "cancel"
        if cancelled:
            self.take("cancel")
        self.now = self.events[0]["at"]
        if cancelled:
            raise asyncio.CancelledError


@pytest.mark.parametrize("sc", ASYNC, ids=[s["name"] for s in ASYNC])
def test_asyncio_loop(sc: dict[str, Any], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    script = Script(sc)
    monkeypatch.setattr(retry_module, "_now_ms", lambda: script.now)
    monkeypatch.setattr(retry_module, "_unix_ms", lambda: sc["unix_ms"])
    monkeypatch.setattr(retry_module, "_poll", script.poll)
    monkeypatch.setattr(retry_module, "_wait_at_gate", script.wait_at_gate)
    caplog.set_level(logging.DEBUG, logger="recuo")
    request = sc["request"]
    pool = sc["pool"]
    enclosing = None if pool is None else pool.get("remaining", pool.get("enclosing"))

    async def main() -> str | None:
        if enclosing is not None:
            # Inside an enclosing loop with this many attempts left (set in the context, as
            # an enclosing loop sets its pool).
            _attempt_pool.set(_AttemptPool(enclosing))
        return await recuo.call(
            script.call,
            policy=script.policy,
            classify=script.classify,
            on_retry=script.on_retry,
            on_give_up=script.reports.append,
            sleep=script.sleep,
            gate=script.gate,
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
    assert script.events == []
    assert [d for _, d in script.retries] == [ms / 1000 for ms in want["delays_ms"]][: len(script.retries)]
    logged = [[r.levelname.lower(), r.getMessage()] for r in caplog.records if r.name == "recuo"]
    assert logged == sc["records"]


def test_every_scenario_an_async_function_can_play_is_played() -> None:
    # Those left out need what recuo.retry does not have (guide A's loop, a batch queue, a
    # caller's key), a host that waits at the gate itself (entered), or a first look at the
    # gate after the start (the asyncio loop looks at once); every other one — the first
    # attempt made before the machine and the gate step among them — runs through the
    # asyncio loop.
    assert len(ASYNC) == len(SCENARIOS) - 10
    played = {ev["do"] for sc in ASYNC for ev in sc["events"]}
    assert {"first", "poll_gate", "release", "cancel", "fail", "judge"} <= played
