"""The Redis limits on a Redis Cluster (``redis+cluster://host:port,host:port/``): a real
cluster of 3 masters and 3 replicas (``scripts/redis-cluster``, through redis_cluster.py).
The Rust side's tests (redis-store/tests/cluster.rs and failover.rs) hold the routing rules;
these check the Python surface — the regulator, the limit and the budget on keys of every
master, from one seed, in a gate — and a fleet of four processes through a failover, over TLS
as an ACL user."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import recuo
from redis_cluster import Cluster, redis_cluster
from redis_server import redis_process
from serving import RECUO_BIN, recuo_serve, stats

S = 1_000_000_000
CHILD = Path(__file__).with_name("failover_child.py")


def unix_ms() -> int:
    return time.time_ns() // 1_000_000


def test_the_limits_run_on_every_master_of_a_cluster(tmp_path: Path) -> None:
    with redis_cluster(tmp_path / "cluster") as cluster:
        masters = cluster.masters
        assert len(masters) == 3, cluster.url
        regulators = cluster.names_on("reg", masters)
        limits = cluster.names_on("lim", masters)
        budgets = cluster.names_on("bud", masters)
        for port in masters:
            _limits_hold(cluster, port, regulators[port], limits[port], budgets[port])

        # One seed is enough: the others are found from its slot map.
        seeded = recuo.Regulator.redis(f"redis+cluster://127.0.0.1:{masters[0]}/", "seeded", "1/s", 1)
        assert seeded.try_acquire() == 0.0
        assert seeded.try_acquire() > 0

        # A gate of all three runs a loop (its keys wherever their slots are).
        gate = recuo.Gate(
            regulator=recuo.Regulator.redis(cluster.url, "gate-reg", "10/s", 2),
            limit=recuo.ConcurrencyLimit.redis(cluster.url, "gate-lim", 1, 10),
            budget=recuo.RetryBudget.redis(cluster.url, "gate-bud", 0.1, 1.0, 10),
        )
        tries: list[int] = []

        def flaky() -> str:
            tries.append(1)
            if len(tries) == 1:
                raise TimeoutError("once")
            return "sent"

        policy = recuo.Policy(max_attempts=3, base=0.001, cap=0.001)
        assert recuo.call(flaky, policy=policy, gate=gate) == "sent"
        assert len(tries) == 2
        assert gate.budget is not None and gate.budget.counts() == (1, 1)
        assert gate.limit is not None and gate.limit.try_acquire() is not None  # given back

        # A cluster node named as one server says how to name the cluster; a cluster has one
        # database.
        port = masters[0]
        key_elsewhere = next(f"other{i}" for i in range(40) if cluster.master_of(f"{{other{i}}}:x")[0] != port)
        with pytest.raises(ConnectionError, match=r"redis\+cluster://"):
            recuo.Regulator.redis(f"redis://127.0.0.1:{port}", key_elsewhere, "1/s")
        with pytest.raises(ConnectionError, match="one database"):
            recuo.Regulator.redis("redis+cluster://h:1/2", "k", "1/s")
        with pytest.raises(ConnectionError, match="one database"):
            recuo.ConcurrencyLimit.redis("redis+cluster://h:1/2", "k", 1, 1)
        with pytest.raises(ConnectionError, match="one database"):
            recuo.RetryBudget.redis("redis+cluster://h:1/2", "k")


def _limits_hold(cluster: Cluster, port: int, regulator_name: str, limit_name: str, budget_name: str) -> None:
    """The regulator, the limit and the budget named so answer by their rules, their keys on
    the master at ``port``."""
    url = cluster.url
    regulator = recuo.Regulator.redis(url, regulator_name, "1/s", 2)
    assert [regulator.try_acquire() for _ in range(2)] == [0.0, 0.0], regulator_name
    assert 0 < regulator.try_acquire() <= 1.0, regulator_name

    limit = recuo.ConcurrencyLimit.redis(url, limit_name, 2, 10)
    one, two = limit.try_acquire(), limit.try_acquire()
    assert one is not None and two is not None, limit_name
    assert limit.try_acquire() is None, limit_name
    leases = cluster.cli(port, "EXISTS", f"{{{limit_name}}}:leases")
    one.release()
    three = limit.try_acquire()
    assert three is not None and limit.try_acquire() is None, limit_name
    two.release()
    three.release()

    budget = recuo.RetryBudget.redis(url, budget_name, 0.1, 0.5, 10)
    t = 1_000 * S
    for _ in range(20):
        budget.record_request_at(t)
    # 10% of 20 requests and 0.5 a second over 10 s: 7 retries.
    assert sum(budget.try_withdraw_at(t) for _ in range(10)) == 7, budget_name
    assert budget.counts(t) == (20, 7)

    # Each limit's keys live on its slot's master.
    stored = [f"{{{regulator_name}}}:tat", f"{{{regulator_name}}}:settings", f"{{{budget_name}}}:budget"]
    assert [cluster.cli(port, "EXISTS", key) for key in stored] == ["1", "1", "1"], stored
    assert leases == "1", limit_name


RATE = 30
BURST = 3
LIMIT = 2
DEADLINE_MS = 2_000
RUN_MS = 8_000
KILL_AFTER_MS = 2_000
# Two loops per process, as the Rust fleet runs: a step that gives a place back to the dead
# master releases the GIL, so one thread's wait never holds the other past its deadline.
THREADS = 2


def test_a_fleet_keeps_its_limits_through_a_failover(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 4 processes (× THREADS) run recuo.retry's blocking loop behind one gate whose regulator,
    # limit and budget all live on the master killed (SIGKILL) 2 s in, on a TLS cluster as its
    # ACL user. While the slot has no master an operation ends with the gate's error and no
    # attempt; no operation outlives its deadline; once the replica took over, the starts stay
    # within the regulator's allowance and the requests in flight within the limit (plus what
    # asynchronous replication may lose: docs/limits.md).
    if not RECUO_BIN.exists():
        pytest.skip(f"{RECUO_BIN} is not built (make build-cli)")
    serve_args = ("--allowance", "100000/s", "--burst", "10000", "--fail-rate", "0", "--latency", "50ms")
    with redis_cluster(tmp_path / "cluster", tls=True) as cluster, recuo_serve(*serve_args) as api:
        assert cluster.url.startswith("rediss+cluster://app:apppw@") and cluster.cert is not None
        port, pid = cluster.master_of("{failover}:x")
        names = {"REGULATOR": "failover"}
        for var, prefix in (("LIMIT", "failover-limit"), ("BUDGET", "failover-budget")):
            names[var] = cluster.names_on(prefix, [port])[port]
        started_ms = unix_ms()
        env = {
            **os.environ,
            **names,
            "URL": cluster.url,
            "API": api,
            "END_MS": str(started_ms + RUN_MS),
            "THREADS": str(THREADS),
            "SSL_CERT_FILE": str(cluster.cert),
        }
        children = [
            subprocess.Popen(
                [sys.executable, str(CHILD)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for _ in range(4)
        ]
        try:
            time.sleep(max(0.0, (started_ms + KILL_AFTER_MS - unix_ms()) / 1000))
            killed_ms = unix_ms()
            os.kill(pid, signal.SIGKILL)
            took_over_s = cluster.wait_ok(20)
            recovered_ms = unix_ms()
            outs = [c.communicate(timeout=30) for c in children]
        finally:
            for c in children:
                if c.poll() is None:
                    c.kill()
                    c.communicate()
        served = stats(api)

    ops: list[tuple[int, int, str, int]] = []
    for c, (out, err) in zip(children, outs):
        assert c.returncode == 0 and out.startswith("ops "), (c.returncode, out[-2000:], err[-2000:])
        ops.extend((at, took, end, attempt_at) for at, took, end, attempt_at in json.loads(out[4:]))
    longest_op = max(ops, key=lambda op: op[1])
    longest = longest_op[1]
    others = [op for op in ops if op[2] not in ("ok", "waited") and not op[2].startswith("gate_error")]
    failed = [op for op in ops if op[2].startswith("gate_error")]
    waited = sum(op[2] == "waited" for op in ops)
    # The starts the regulator allowed from the takeover to the last one.
    after = [op[3] for op in ops if op[3] >= recovered_ms]
    last_start = max(after, default=recovered_ms)
    allowance_after = BURST + (last_start - recovered_ms) * RATE // 1000 + 1
    first_failed = min((op[0] for op in failed), default=None)
    last_failed = max((op[0] + op[1] for op in failed), default=None)
    figures = (
        f"Python failover figures: {len(ops)} operations, longest {longest} ms (deadline {DEADLINE_MS} ms; "
        f"{longest_op[2].split(':')[0]}, begun {longest_op[0] - killed_ms} ms after the kill); "
        f"{len(failed)} ended by the gate's error, from "
        f"{None if first_failed is None else first_failed - killed_ms} ms to "
        f"{None if last_failed is None else last_failed - killed_ms} ms after the kill; {waited} gave up "
        f"waiting for the gate; the replica took over after {took_over_s} s; after that {len(after)} starts "
        f"for an allowance of {allowance_after}; at most {served['max_in_flight']} in flight (limit {LIMIT}); "
        f"{served['requests']} requests in all"
    )
    with capsys.disabled():
        print(f"\n{figures}")

    assert not others, (figures, others[:5])
    # No operation outlives its deadline (a round trip's grace: each call to the server is
    # given at least 100 ms to hear its word).
    assert longest <= DEADLINE_MS + 400, (figures, longest_op)
    # While the slot has no master, operations end with the gate's error and no attempt — and
    # only then.
    assert first_failed is not None and last_failed is not None, f"the kill was not seen: {figures}"
    assert first_failed >= killed_ms - 2_500, figures
    assert last_failed <= recovered_ms + 2_500, figures
    # Once the replica took over, the limits hold again (replication may lose what the master
    # granted in its last moment: at most one grant per process here).
    assert after, f"nothing started after the failover: {figures}"
    assert len(after) <= allowance_after + 4, figures
    assert served["max_in_flight"] <= LIMIT + 4, figures


def test_a_places_release_holds_no_other_thread_of_the_process() -> None:
    # The server stops answering (SIGSTOP) during an attempt: the place's release after it
    # waits for the operation's deadline (1 s) — which must not stall the process's other
    # threads, as a look at the gate does not.
    with redis_process() as (url, server):
        gate = recuo.Gate(limit=recuo.ConcurrencyLimit.redis(url, "py:release", 2, 10))

        def attempt() -> str:
            time.sleep(0.2)
            server.send_signal(signal.SIGSTOP)
            return "done"

        lags: list[float] = []
        stop = threading.Event()

        def ticker() -> None:
            while not stop.is_set():
                before = time.monotonic()
                time.sleep(0.01)
                lags.append(time.monotonic() - before - 0.01)

        ticking = threading.Thread(target=ticker)
        ticking.start()
        try:
            assert recuo.call(attempt, gate=gate, policy=recuo.Policy(max_attempts=1, deadline=1)) == "done"
        finally:
            stop.set()
            ticking.join()
    assert max(lags) < 0.2, f"another thread stalled {max(lags):.2f} s"


def test_a_places_release_holds_no_event_loop() -> None:
    # The same on asyncio: the release after the attempt is asked off the event loop, which
    # keeps ticking while the frozen server costs the step its deadline.
    with redis_process() as (url, server):
        gate = recuo.Gate(limit=recuo.ConcurrencyLimit.redis(url, "py:release-async", 2, 10))

        async def attempt() -> str:
            await asyncio.sleep(0.2)
            server.send_signal(signal.SIGSTOP)
            return "done"

        async def main() -> tuple[object, float]:
            lags: list[float] = []
            stop = asyncio.Event()

            async def ticker() -> None:
                while not stop.is_set():
                    before = time.monotonic()
                    await asyncio.sleep(0.01)
                    lags.append(time.monotonic() - before - 0.01)

            tick = asyncio.ensure_future(ticker())
            try:
                done = await recuo.call(attempt, gate=gate, policy=recuo.Policy(max_attempts=1, deadline=1))
            finally:
                stop.set()
                await tick
            return done, max(lags)

        done, lag = asyncio.run(main())
    assert done == "done"
    assert lag < 0.2, f"the event loop stalled {lag:.2f} s"
