"""Regulator.redis: one allowance for several machines through a Redis server — a real
`redis-server` this module starts on a free port of 127.0.0.1 and stops at the end (the
``redis_url`` fixture). Four `multiprocessing` processes, each with its own connection, share
one key and a fake clock (a `multiprocessing.Value` advanced under its lock); the parent
merges their starts and checks every window against burst + rate × window, and that ≥ 95% of
the allowed starts were used — the same check as test_shared.py and
core/tests/redis_regulator.rs."""

from __future__ import annotations

import asyncio
import multiprocessing
import socket
import threading
import time
from pathlib import Path

import pytest

import recuo
import shared_children
from redis_server import free_port, redis_server
from shared_children import BURST, RATE, STEP_NS, TRIES
from test_regulator import check_window

CTX = multiprocessing.get_context("spawn")
PROCESSES = 4
MS = 1_000_000
S = 1_000_000_000


def test_a_burst_then_one_per_interval_on_a_fake_clock(redis_url: str) -> None:
    r = recuo.Regulator.redis(redis_url, "py:exact", "2/s", 3)
    assert (r.rate, r.burst) == (2.0, 3)
    t0 = 10 * S
    assert [r.try_acquire_at(t0) for _ in range(4)] == [0, 0, 0, 500 * MS]
    # The server counts whole microseconds.
    assert r.try_acquire_at(t0 + S // 2 - 1_000) == 1_000
    assert r.try_acquire_at(t0 + S // 2) == 0
    assert r.try_acquire_at(t0 + S // 2) == 500 * MS
    assert r.try_acquire_at(t0 + S) == 0
    # Another handle — another connection, another machine — shares the allowance.
    same = recuo.Regulator.redis(redis_url, "py:exact", "120/min", 3)
    assert same.try_acquire_at(t0 + S) == 500 * MS
    # After a quiet spell the burst is back, never more, whichever handle asks.
    later = t0 + 100 * S
    assert [h.try_acquire_at(later) for h in (r, same, r, same)] == [0, 0, 0, 500 * MS]


def test_costs_weigh_several_starts(redis_url: str) -> None:
    r = recuo.Regulator.redis(redis_url, "py:costs", 10, burst=10)
    assert r.try_acquire_at(S, cost=7) == 0
    assert r.try_acquire_at(S, cost=4) == 100 * MS
    assert r.try_acquire_at(S, cost=3) == 0
    with pytest.raises(ValueError, match="cost 11 can never pass a regulator whose burst is 10"):
        r.try_acquire_at(S, cost=11)
    with pytest.raises(ValueError, match="cost 11"):
        r.try_acquire(cost=11)
    assert r.try_acquire_at(2 * S, cost=10) == 0


def test_machines_share_one_allowance_through_redis(redis_url: str, tmp_path: Path) -> None:
    first = 10**9
    clock = CTX.Value("Q", first, lock=True)
    barrier = CTX.Barrier(PROCESSES)
    outs = [str(tmp_path / f"starts-{i}") for i in range(PROCESSES)]
    children = [
        CTX.Process(
            target=shared_children.redis_regulator_child,
            args=(redis_url, "py:machines", clock, barrier, out),
        )
        for out in outs
    ]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=120)
    for child in children:
        if child.is_alive():
            child.kill()
            child.join()
        assert child.exitcode == 0
    starts = [int(line) for out in outs for line in Path(out).read_text(encoding="utf-8").split()]
    span = clock.value - first
    assert span == PROCESSES * TRIES * STEP_NS
    assert len(starts) > 100
    assert len(set(starts)) == len(starts)  # every reading of the clock is one try
    check_window(starts, span, RATE, BURST)
    per_process = [len(Path(out).read_text(encoding="utf-8").split()) for out in outs]
    assert all(n > 0 for n in per_process), per_process


def test_another_rate_on_the_key_is_refused(redis_url: str) -> None:
    recuo.Regulator.redis(redis_url, "py:k", "90/min", 3)
    with pytest.raises(recuo.SharedFileError) as refused:
        recuo.Regulator.redis(redis_url, "py:k", "120/min", 3)
    assert str(refused.value) == (
        'shared state: the Redis key "py:k" regulates one start every 666666 µs with a burst '
        "of 3; this process asked for one every 500000 µs with a burst of 3"
    )
    assert isinstance(refused.value, ValueError)
    with pytest.raises(recuo.SharedFileError, match="with a burst of 3; .* with a burst of 4"):
        recuo.Regulator.redis(redis_url, "py:k", "90/min", 4)
    # The same settings written otherwise, and another key with the other rate: fine.
    recuo.Regulator.redis(redis_url, "py:k", 1.5, 3)
    recuo.Regulator.redis(redis_url, "py:k2", "120/min", 3)


def test_an_unreachable_server_is_a_connection_error() -> None:
    port = free_port()
    with pytest.raises(ConnectionError, match=f"Redis at 127.0.0.1:{port}") as refused:
        recuo.Regulator.redis(f"127.0.0.1:{port}", "k", "1/s")
    assert isinstance(refused.value, OSError)
    with pytest.raises(ConnectionError, match="names no host"):
        recuo.Regulator.redis("redis://", "k", "1/s")


def test_arguments_are_checked(redis_url: str) -> None:
    with pytest.raises(TypeError, match="url must be str, not bytes"):
        recuo.Regulator.redis(redis_url.encode(), "k", "1/s")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="key must be str, not int"):
        recuo.Regulator.redis(redis_url, 3, "1/s")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="the burst must be at least 1"):
        recuo.Regulator.redis(redis_url, "py:z", "1/s", 0)
    with pytest.raises(ValueError, match="rate"):
        recuo.Regulator.redis(redis_url, "py:z", "0/s")
    with pytest.raises(TypeError):
        recuo.Regulator.redis(redis_url, "py:z", None)  # type: ignore[arg-type]


def test_repr_names_the_server_without_its_password(redis_url: str) -> None:
    r = recuo.Regulator.redis(redis_url, "py:repr", "90/min", 3)
    assert repr(r) == f"Regulator.redis('{redis_url}', 'py:repr', '90/min', burst=3)"
    # A URL with a password (this server has none: AUTH is refused, and says so).
    with pytest.raises(ConnectionError, match="AUTH") as refused:
        recuo.Regulator.redis(redis_url.replace("//", "//:s3cr3t@"), "py:repr", "90/min", 3)
    assert "s3cr3t" not in str(refused.value)


def test_the_servers_clock_paces_real_starts(redis_url: str) -> None:
    r = recuo.Regulator.redis(redis_url, "py:real", "2/s", 2)
    assert r.try_acquire() == 0.0
    assert r.try_acquire() == 0.0
    wait = r.try_acquire()
    assert 0 < wait <= 0.5
    # acquire waits for the next slot, as long as the server says.
    before = time.monotonic()
    assert r.acquire(timeout=5)
    took = time.monotonic() - before
    assert wait - 0.05 <= took < wait + 3, (took, wait)
    # The next slot is one interval away: not within 0 s, and nothing is reserved.
    assert r.acquire(timeout=0) is False
    assert asyncio.run(r.acquire_async(timeout=5)) is True


def test_waiting_for_the_server_releases_the_gil() -> None:
    # A "server" that accepts connections (the kernel does, for a listening socket) and
    # never answers: the regulator waits for its reply (at most 5 s).
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen()
        port = mute.getsockname()[1]
        errors: list[BaseException] = []

        def connect() -> None:
            try:
                recuo.Regulator.redis(f"127.0.0.1:{port}", "k", "1/s")
            except ConnectionError as e:
                errors.append(e)

        waiting = threading.Thread(target=connect)
        waiting.start()
        time.sleep(0.2)
        # This thread runs while the other waits for the server: the GIL was released.
        before = time.monotonic()
        for _ in range(10):
            time.sleep(0.01)
        ran_for = time.monotonic() - before
        still_waiting = waiting.is_alive()
    # Closed, the socket resets the connection it never accepted: the wait ends at once.
    waiting.join(timeout=30)
    assert still_waiting
    assert ran_for < 1.0
    assert not waiting.is_alive()
    assert len(errors) == 1


def test_a_gate_over_a_redis_regulator(redis_url: str) -> None:
    gate = recuo.Gate(regulator=recuo.Regulator.redis(redis_url, "py:gate", "1000/s", 1))
    assert recuo.call(lambda: "sent", gate=gate) == "sent"


def test_a_lost_server_is_a_connection_error_and_nothing_is_taken() -> None:
    with redis_server() as url:
        r = recuo.Regulator.redis(url, "py:lost", "1000/s", 1)
        gate = recuo.Gate(regulator=r)
        assert r.try_acquire() == 0.0
    with pytest.raises(ConnectionError, match="Redis"):
        r.try_acquire()
    with pytest.raises(ConnectionError):
        r.try_acquire_at(5 * S)
    with pytest.raises(ConnectionError):
        r.acquire(timeout=1)
    with pytest.raises(ConnectionError):
        recuo.call(lambda: "never sent", gate=gate)
