"""``recuo.ConcurrencyLimit.redis`` (a concurrency limit with leases) and
``recuo.RetryBudget.redis`` on a real `redis-server` this module starts (the ``redis_url``
fixture): the Rust side's fleet tests (redis-store/tests/fleet.rs) hold the rules; these check
the Python surface — the same classes, gates, loops and batches as the local limits."""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
import threading
import time
from pathlib import Path

import pytest

import recuo
import shared_children
from redis_server import free_port, redis_process, redis_server
from serving import RECUO_BIN, recuo_serve, stats

S = 1_000_000_000


def test_a_limit_of_two_refuses_the_third_place_and_gives_it_back(redis_url: str) -> None:
    limit = recuo.ConcurrencyLimit.redis(redis_url, "py:limit", 2, 5)
    # Another handle, with its own connection: another machine sharing the places.
    other = recuo.ConcurrencyLimit.redis(redis_url, "py:limit", 2, 5.0)
    assert limit.limit == 2
    a = limit.try_acquire()
    b = other.acquire(timeout=1.0)
    assert a is not None and b is not None
    assert limit.try_acquire() is None
    assert other.try_acquire() is None
    assert limit.acquire(timeout=0.05) is None
    # The counts are this process's places, per handle.
    assert (limit.in_flight, other.in_flight) == (1, 1)
    b.release()
    b.release()  # twice: harmless
    assert b.released and not b.renew()
    c = limit.acquire(timeout=1.0)
    assert c is not None
    with c:
        assert limit.try_acquire() is None
    assert c.released
    with limit:
        assert (limit.in_flight, limit.max_in_flight) == (2, 2)
        assert other.try_acquire() is None
    a.release()
    assert (limit.in_flight, other.in_flight) == (0, 0)
    assert repr(limit) == (
        f"<recuo.ConcurrencyLimit.redis('{redis_url}', 'py:limit', 2, 5.0): 0 in flight here>"
    )


def test_a_lease_not_renewed_expires_and_a_renewed_one_holds(redis_url: str) -> None:
    limit = recuo.ConcurrencyLimit.redis(redis_url, "py:lease", 2, 0.3)
    kept = limit.try_acquire()
    left = limit.try_acquire()
    assert kept is not None and left is not None
    assert limit.try_acquire() is None
    for _ in range(3):  # 0.45 s in all: longer than a lease, but kept renews every 0.15 s
        time.sleep(0.15)
        assert kept.renew()
    # left's lease ran out: its place came back by itself, and renewing cannot take it back.
    assert not left.renew()
    late = limit.acquire(timeout=1.0)
    assert late is not None
    assert limit.try_acquire() is None  # kept still holds its place
    kept.release()
    assert not kept.renew()
    # A local permit has no lease: renewing it is always fine until it is released.
    local = recuo.ConcurrencyLimit(1).try_acquire()
    assert local is not None and local.renew()
    local.release()
    assert not local.renew()


def test_async_waits_for_a_redis_place(redis_url: str) -> None:
    limit = recuo.ConcurrencyLimit.redis(redis_url, "py:async", 1, 5)
    assert limit._remote and not recuo.ConcurrencyLimit(1)._remote

    @recuo.retry(gate=recuo.Gate(limit=limit))
    async def send() -> str:
        return "sent"

    async def main() -> tuple[int, str]:
        held = await limit.acquire_async()
        assert held is not None
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticking = asyncio.create_task(tick())
        # The looks for a place are asked off the event loop: it keeps running meanwhile.
        assert await limit.acquire_async(timeout=0.2) is None
        ticking.cancel()
        held.release()
        async with limit:
            assert limit.try_acquire() is None
        return ticks, await send()

    ticks, sent = asyncio.run(main())
    assert ticks >= 5 and sent == "sent"


def test_another_setting_on_the_key_is_refused(redis_url: str) -> None:
    recuo.ConcurrencyLimit.redis(redis_url, "py:limit-k", 3, 10)
    with pytest.raises(recuo.SharedFileError, match="limits 3 requests in flight with leases of 10000 ms"):
        recuo.ConcurrencyLimit.redis(redis_url, "py:limit-k", 4, 10)
    with pytest.raises(recuo.SharedFileError, match="asked for 3 with leases of 5000 ms"):
        recuo.ConcurrencyLimit.redis(redis_url, "py:limit-k", 3, 5)
    # The local constructor's rule for the limit, and a lease in range.
    with pytest.raises(ValueError, match="at least 1"):
        recuo.ConcurrencyLimit.redis(redis_url, "py:limit-z", 0, 10)
    with pytest.raises(ValueError, match="lease must be"):
        recuo.ConcurrencyLimit.redis(redis_url, "py:limit-z", 1, 0)
    with pytest.raises(ValueError, match="lease must be"):
        recuo.ConcurrencyLimit.redis(redis_url, "py:limit-z", 1, 86_401)
    with pytest.raises(TypeError, match="url must be str"):
        recuo.ConcurrencyLimit.redis(b"x", "k", 1, 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="lease must be a number"):
        recuo.ConcurrencyLimit.redis(redis_url, "k", 1, "1s")  # type: ignore[arg-type]


def test_an_unreachable_server_is_a_connection_error_at_once() -> None:
    port = free_port()
    started = time.monotonic()
    with pytest.raises(ConnectionError, match=f"Redis at 127.0.0.1:{port}"):
        recuo.ConcurrencyLimit.redis(f"127.0.0.1:{port}", "k", 1, 1)
    with pytest.raises(ConnectionError, match=f"Redis at 127.0.0.1:{port}"):
        recuo.RetryBudget.redis(f"127.0.0.1:{port}", "k")
    assert time.monotonic() - started < 2.0
    # A password in the URL is never repeated.
    with pytest.raises(ConnectionError) as refused:
        recuo.ConcurrencyLimit.redis(f"redis://:s3cr3t@127.0.0.1:{port}", "k", 1, 1)
    assert "s3cr3t" not in str(refused.value)


def test_the_budget_refuses_retries_beyond_its_ratio_on_a_shared_fake_clock(redis_url: str) -> None:
    budget = recuo.RetryBudget.redis(redis_url, "py:budget-clock", 0.5, 0.1, 10)
    same = recuo.RetryBudget.redis(redis_url, "py:budget-clock", 0.5, 0.1, 10)
    assert (budget.ratio, budget.floor_per_s, budget.window_s) == (0.5, 0.1, 10)
    t = 1_000 * S
    # The floor alone: 0.1/s over 10 s, one retry.
    assert budget.try_withdraw_at(t)
    assert not same.try_withdraw_at(t)
    # Four requests earn two more, whichever handle counts them or withdraws.
    for _ in range(2):
        budget.record_request_at(t)
        same.record_request_at(t)
    assert same.try_withdraw_at(t + S) and budget.try_withdraw_at(t + S)
    assert not budget.try_withdraw_at(t + S)
    assert budget.counts(t + S) == same.counts(t + S) == (4, 3)
    # Out of the window, all of it is forgotten.
    assert budget.counts(t + 11 * S) == (0, 0)
    assert repr(budget) == f"RetryBudget.redis('{redis_url}', 'py:budget-clock', ratio=0.5, floor_per_s=0.1, window_s=10)"


def test_the_budget_is_shared_by_processes(redis_url: str) -> None:
    budget = recuo.RetryBudget.redis(redis_url, "py:budget", 0.1, 0.5, 10)
    for _ in range(40):
        budget.record_request()
    ctx = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue[int] = ctx.Queue()
    procs = [ctx.Process(target=shared_children.redis_budget_child, args=(redis_url, out)) for _ in range(4)]
    for p in procs:
        p.start()
    granted = sum(out.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(60)
    # 10% of 40 requests plus 0.5/s over 10 s: 9 retries for all the processes together.
    assert granted == 9
    assert budget.counts() == (40, 9)
    assert not budget.try_withdraw()
    # The local constructor's checks, and the key's own settings.
    with pytest.raises(ValueError, match="ratio"):
        recuo.RetryBudget.redis(redis_url, "py:b2", -1.0)
    with pytest.raises(ValueError, match="window"):
        recuo.RetryBudget.redis(redis_url, "py:b2", window_s=61)
    with pytest.raises(recuo.SharedFileError, match="asked for ratio 0.2"):
        recuo.RetryBudget.redis(redis_url, "py:budget", 0.2, 0.5, 10)


def test_a_gates_redis_budget_spends_retries_for_every_loop(redis_url: str) -> None:
    budget = recuo.RetryBudget.redis(redis_url, "py:budget-gate", 0.0, 0.1, 10)  # one retry
    gate = recuo.Gate(budget=budget)
    assert gate.budget is budget
    policy = recuo.Policy(max_attempts=5, base=0.001, cap=0.001)
    reports: list[recuo.Report] = []

    def failing() -> None:
        raise TimeoutError("down")

    for _ in range(2):
        with pytest.raises(TimeoutError):
            recuo.call(failing, policy=policy, gate=gate, sleep=lambda s: None, on_give_up=reports.append)
    assert [(r.attempts, r.reason) for r in reports] == [(2, "budget_exhausted"), (1, "budget_exhausted")]
    assert budget.counts() == (2, 1)


def test_a_gate_with_a_redis_limit_holds_the_servers_in_flight_across_processes(
    redis_url: str, tmp_path: Path
) -> None:
    if not RECUO_BIN.exists():
        pytest.skip(f"{RECUO_BIN} is not built (make build-cli)")
    with recuo_serve("--allowance", "100000/s", "--burst", "10000", "--fail-rate", "0", "--latency", "40ms") as api:
        ctx = multiprocessing.get_context("spawn")
        outs = [tmp_path / f"child-{i}" for i in range(3)]
        # Each process runs a batch of 3 workers: 9 at once without the limit of 3.
        procs = [
            ctx.Process(target=shared_children.redis_limit_batch_child, args=(redis_url, api, str(out)))
            for out in outs
        ]
        for p in procs:
            p.start()
        for p in procs:
            p.join(120)
        assert [p.exitcode for p in procs] == [0, 0, 0]
        served = stats(api)
    assert [out.read_text() for out in outs] == ["8 succeeded"] * 3
    assert served["ok"] == 24
    assert 2 <= served["max_in_flight"] <= 3, served


def test_a_lost_server_is_a_connection_error_in_the_loops() -> None:
    with redis_server() as url:
        limit = recuo.ConcurrencyLimit.redis(url, "py:lost", 2, 5)
        budget = recuo.RetryBudget.redis(url, "py:lost-budget")
        held = limit.try_acquire()
        assert held is not None
        gate = recuo.Gate(limit=limit)
    started = time.monotonic()
    with pytest.raises(ConnectionError, match="Redis"):
        limit.try_acquire()
    with pytest.raises(ConnectionError, match="Redis"):
        limit.acquire(timeout=1)
    with pytest.raises(ConnectionError, match="Redis"):
        held.renew()
    held.release()  # the place comes back with its lease: nothing to raise
    sent: list[str] = []
    with pytest.raises(ConnectionError, match="Redis"):
        recuo.call(lambda: sent.append("sent"), gate=gate)
    with pytest.raises(ConnectionError, match="Redis"):
        recuo.run_batch([lambda: sent.append("sent")], gate=gate)

    @recuo.retry(gate=gate)
    async def fetch() -> None:
        sent.append("sent")

    with pytest.raises(ConnectionError, match="Redis"):
        asyncio.run(fetch())
    assert sent == []  # nothing went without the server's word
    # The budget's own methods say why; in a gate it fails closed (no retry).
    for call in (budget.record_request, budget.try_withdraw, budget.counts):
        with pytest.raises(ConnectionError, match="Redis"):
            call()
    assert time.monotonic() - started < 10.0


def test_a_frozen_server_bounds_every_call_and_never_blocks_the_event_loop() -> None:
    # Six threads on one handle, an asyncio ticker beside waits on a Redis regulator, a gated
    # async loop whose budget is on Redis, and callers with shorter timeouts — all while the
    # server is frozen (SIGSTOP): no call outlives its deadline (5 s, or the caller's), and
    # the event loop never stalls.
    with redis_process() as (url, server):
        limit = recuo.ConcurrencyLimit.redis(url, "py:frozen", 3, 10)
        regulator = recuo.Regulator.redis(url, "py:frozen-reg", "100/s", 2)
        budget = recuo.RetryBudget.redis(url, "py:frozen-budget", 0.5, 1.0, 10)
        budget_gate = recuo.Gate(budget=budget)
        limit_gate = recuo.Gate(limit=limit)
        assert regulator.try_acquire() == 0.0
        server.send_signal(signal.SIGSTOP)
        took: list[float] = []
        errors: list[BaseException] = []

        def call_on_the_shared_handle() -> None:
            started = time.monotonic()
            try:
                limit.try_acquire()
            except ConnectionError as e:
                errors.append(e)
            took.append(time.monotonic() - started)

        threads = [threading.Thread(target=call_on_the_shared_handle) for _ in range(6)]
        for t in threads:
            t.start()

        async def main() -> tuple[float, list[object], float, int]:
            lags: list[float] = []
            stop = asyncio.Event()

            async def ticker() -> None:
                while not stop.is_set():
                    before = time.monotonic()
                    await asyncio.sleep(0.01)
                    lags.append(time.monotonic() - before - 0.01)

            async def failing() -> None:
                raise TimeoutError("down")

            tick = asyncio.ensure_future(ticker())
            outcomes = await asyncio.gather(
                regulator.acquire_async(),
                recuo.call(failing, policy=recuo.Policy(max_attempts=2, base=0.001, cap=0.001), gate=budget_gate),
                return_exceptions=True,
            )
            started = time.monotonic()
            deadline_cut = await asyncio.gather(
                recuo.call(failing, policy=recuo.Policy(deadline=1), gate=limit_gate), return_exceptions=True
            )
            cut_took = time.monotonic() - started
            stop.set()
            await tick
            found: list[object] = [*outcomes, *deadline_cut]
            return max(lags), found, cut_took, len(lags)

        lag, outcomes, cut_took, ticks = asyncio.run(main())
        started = time.monotonic()
        with pytest.raises(ConnectionError, match="no complete answer within the call's deadline"):
            limit.acquire(timeout=0.5)
        timed = time.monotonic() - started
        started = time.monotonic()
        with pytest.raises(ConnectionError, match="no complete answer within the call's deadline"):
            regulator.acquire(timeout=0.5)
        regulator_timed = time.monotonic() - started
        for t in threads:
            t.join(30)
    print(
        f"frozen Redis: longest of 6 threaded calls {max(took):.2f} s, loop lag at most {lag * 1000:.1f} ms, "
        f"deadline-cut loop {cut_took:.2f} s, limit {timed:.2f} s and regulator {regulator_timed:.2f} s for timeout=0.5"
    )
    assert len(errors) == 6 and max(took) < 5.5, took
    assert lag < 0.05, f"the event loop stalled {lag:.3f} s"
    assert ticks > 100
    # The regulator's wait and the budget's step ended with the server's error; the loop with a
    # deadline of 1 s and a frozen limit ended by it with ConnectionError, as the blocking loop.
    assert [type(o) for o in outcomes] == [ConnectionError, TimeoutError, ConnectionError], outcomes
    assert 0.9 < cut_took < 1.5, cut_took
    assert 0.45 < timed < 0.8, timed
    assert 0.45 < regulator_timed < 0.8, regulator_timed
