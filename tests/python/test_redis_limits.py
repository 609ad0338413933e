"""recuo.RedisLimit (a concurrency limit with leases) and recuo.RedisBudget on a real
`redis-server` this module starts (the ``redis_url`` fixture): the Rust side's fleet tests
(redis-store/tests/fleet.rs) hold the rules; these check the Python surface."""

from __future__ import annotations

import multiprocessing
import time

import pytest

import recuo
import shared_children
from redis_server import free_port


def test_a_lease_limit_holds_renews_and_releases(redis_url: str) -> None:
    limit = recuo.RedisLimit(redis_url, "py:limit", 2, 0.3)
    assert (limit.limit, limit.lease) == (2, 0.3)
    a = limit.try_acquire()
    b = limit.acquire(timeout=1.0)
    assert a is not None and b is not None and a.token != b.token
    assert limit.try_acquire() is None
    assert limit.acquire(timeout=0.05) is None
    assert limit.in_flight() == 2
    assert a.renew()
    assert b.release()
    assert not b.release()  # twice: harmless
    assert not b.renew()
    c = limit.acquire(timeout=1.0)
    assert c is not None
    with c:
        assert limit.in_flight() == 2
    assert limit.in_flight() == 1
    # a's lease expires unless renewed: its place comes back by itself.
    time.sleep(0.4)
    assert limit.in_flight() == 0
    assert not a.renew()


def test_another_setting_on_the_key_is_refused(redis_url: str) -> None:
    recuo.RedisLimit(redis_url, "py:limit-k", 3, 10)
    with pytest.raises(recuo.SharedFileError, match="limits 3 requests in flight"):
        recuo.RedisLimit(redis_url, "py:limit-k", 4, 10)
    with pytest.raises(ValueError, match="at least 1"):
        recuo.RedisLimit(redis_url, "py:limit-z", 0, 10)
    with pytest.raises(ValueError, match="lease must be"):
        recuo.RedisLimit(redis_url, "py:limit-z", 1, 0)
    with pytest.raises(TypeError, match="url must be str"):
        recuo.RedisLimit(b"x", "k", 1, 1)  # type: ignore[arg-type]


def test_an_unreachable_server_is_a_connection_error() -> None:
    port = free_port()
    with pytest.raises(ConnectionError, match=f"Redis at 127.0.0.1:{port}"):
        recuo.RedisLimit(f"127.0.0.1:{port}", "k", 1, 1)
    with pytest.raises(ConnectionError, match=f"Redis at 127.0.0.1:{port}"):
        recuo.RedisBudget(f"127.0.0.1:{port}", "k")


def test_the_budget_is_shared_by_processes(redis_url: str) -> None:
    budget = recuo.RedisBudget(redis_url, "py:budget", 0.1, 0.5, 10)
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
    assert not budget.withdraw()
    with pytest.raises(ValueError, match="ratio"):
        recuo.RedisBudget(redis_url, "py:b2", -1.0)
    with pytest.raises(recuo.SharedFileError, match="asked for ratio 0.2"):
        recuo.RedisBudget(redis_url, "py:budget", 0.2, 0.5, 10)
