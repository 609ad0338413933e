"""Hostile input through Python (issue 11): a Redis server answering ``é\\r\\n`` is a clear
``ConnectionError`` (never a panic), ``rediss://`` is TLS or an error, and idempotency keys made
after ``fork`` — by ``recuo.IdempotencyKey()`` and inside ``recuo.call`` — and in two loops
with one seed are all different."""

from __future__ import annotations

import multiprocessing
import os
import socket
import threading

import pytest

import recuo


def _fake_redis(answer: bytes) -> tuple[str, threading.Thread]:
    """A server on 127.0.0.1 that answers one request with ``answer``."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    host, port = listener.getsockname()

    def serve() -> None:
        with listener:
            conn, _ = listener.accept()
            with conn:
                conn.recv(4096)
                conn.sendall(answer)
                conn.settimeout(5)
                try:
                    conn.recv(4096)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return f"redis://:hunter2@{host}:{port}", thread


def test_a_multi_byte_reply_is_a_clear_connection_error() -> None:
    url, server = _fake_redis("é\r\n".encode())
    with pytest.raises(ConnectionError) as info:
        recuo.Regulator.redis(url, "k", 1.0)
    server.join(5)
    host_port = url.split("@")[1]
    assert str(info.value).startswith(f"shared state: Redis at {host_port}: bad reply: ")
    assert "hunter2" not in str(info.value)


def test_rediss_is_tls_or_an_error() -> None:
    with pytest.raises(ConnectionError) as info:
        recuo.Regulator.redis("rediss://u:hunter2@127.0.0.1:6380", "k", 1.0)
    assert str(info.value).startswith("shared state: Redis at 127.0.0.1:6380 (TLS): ")
    assert "hunter2" not in str(info.value)


def _keys(_: int) -> list[str]:
    """A key from ``IdempotencyKey()`` and one from a seeded ``recuo.call`` loop."""
    seen: list[str] = []

    def op() -> None:
        seen.append(recuo.current_attempt().idempotency_key)

    recuo.call(op, seed=7)
    return [str(recuo.IdempotencyKey()), *seen]


def test_keys_made_after_fork_never_repeat() -> None:
    _keys(0)  # the parent makes keys before it forks, as a preloading server would
    with multiprocessing.get_context("fork").Pool(2) as pool:
        children = pool.map(_keys, range(4))
    keys = _keys(0) + [k for pair in children for k in pair]
    assert len(keys) == 10
    assert len(set(keys)) == 10, keys


def test_two_loops_with_one_seed_make_two_keys() -> None:
    a, b = _keys(0)[1], _keys(0)[1]
    assert len(a) == len(b) == 36
    assert a != b


def test_a_cancelled_acquire_async_gives_its_slot_back() -> None:
    import asyncio

    regulator = recuo.Regulator("1/min")
    assert regulator.acquire() is True

    async def cancel_a_wait() -> None:
        task = asyncio.ensure_future(regulator.acquire_async())
        await asyncio.sleep(0.03)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    for _ in range(3):
        asyncio.run(cancel_a_wait())
    # The next start waits what is left of the first minute, not one minute per cancellation.
    wait = regulator.try_acquire()
    assert 59.0 < wait <= 60.0, wait


def test_a_shared_file_through_a_symbolic_link_is_refused(tmp_path: os.PathLike[str]) -> None:
    victim = os.path.join(tmp_path, "victim")
    link = os.path.join(tmp_path, "link")
    os.symlink(victim, link)
    with pytest.raises(OSError) as info:
        recuo.Regulator.shared(link, "1/s")
    assert str(info.value) == (
        f"shared state: refusing {link}: it is a symbolic link (a shared file is never opened through one)"
    )
    assert not os.path.exists(victim)
