"""recuo.ConcurrencyLimit and recuo.Permit: `with limit:` across threads never exceeds the
limit; permits are context managers; waits time out, release the GIL, and work in asyncio."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import recuo


def test_permits_come_back_when_released() -> None:
    limit = recuo.ConcurrencyLimit(2)
    a = limit.try_acquire()
    b = limit.try_acquire()
    assert a is not None and b is not None
    assert limit.try_acquire() is None
    assert (limit.limit, limit.in_flight, limit.max_in_flight) == (2, 2, 2)
    a.release()
    assert a.released and not b.released
    a.release()  # harmless
    assert limit.in_flight == 1
    with limit.try_acquire() as c:  # type: ignore[union-attr]
        assert isinstance(c, recuo.Permit)
        assert limit.in_flight == 2
    assert c.released
    b.release()
    assert (limit.in_flight, limit.max_in_flight) == (0, 2)
    assert repr(limit) == "<recuo.ConcurrencyLimit 0 of 2 in flight>"
    assert repr(b) == "<recuo.Permit released=True>"


def test_a_permit_dropped_gives_its_place_back() -> None:
    limit = recuo.ConcurrencyLimit(1)
    limit.try_acquire()  # not kept: collected at once
    assert limit.in_flight == 0


def test_with_limit_holds_a_place_for_the_block() -> None:
    limit = recuo.ConcurrencyLimit(1)
    with limit:
        assert limit.in_flight == 1
        assert limit.try_acquire() is None
    assert limit.in_flight == 0
    with pytest.raises(KeyError):
        with limit:
            raise KeyError("the exception goes on")
    assert limit.in_flight == 0
    with pytest.raises(RuntimeError, match="without a matching __enter__"):
        limit.__exit__(None, None, None)


def test_bad_limits() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        recuo.ConcurrencyLimit(0)
    with pytest.raises(ValueError, match="between 0 and 2"):
        recuo.ConcurrencyLimit(-1)
    with pytest.raises(TypeError, match="limit must be an int"):
        recuo.ConcurrencyLimit(True)
    with pytest.raises(TypeError):
        recuo.ConcurrencyLimit("3")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout"):
        recuo.ConcurrencyLimit(1).acquire(-1)


def test_acquire_times_out_with_none() -> None:
    limit = recuo.ConcurrencyLimit(1)
    held = limit.acquire()
    assert held is not None
    started = time.monotonic()
    assert limit.acquire(0.1) is None
    assert limit.acquire(0) is None
    assert 0.09 <= time.monotonic() - started < 2.0
    held.release()
    again = limit.acquire(0)
    assert again is not None
    again.release()


def test_acquire_waits_for_a_place_given_back_by_another_thread() -> None:
    limit = recuo.ConcurrencyLimit(1)
    held = limit.acquire()
    assert held is not None
    timer = threading.Timer(0.1, held.release)
    timer.start()
    started = time.monotonic()
    with limit:
        took = time.monotonic() - started
    timer.join()
    assert 0.05 <= took < 2.0


def test_with_limit_never_exceeds_the_limit_across_threads() -> None:
    limit = recuo.ConcurrencyLimit(3)
    inside = 0
    most = 0
    lock = threading.Lock()

    def worker() -> None:
        nonlocal inside, most
        for _ in range(30):
            with limit:
                with lock:
                    inside += 1
                    most = max(most, inside)
                    assert limit.in_flight <= 3
                time.sleep(0.0005)
                with lock:
                    inside -= 1

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 3  # 8 threads: the limit was reached, never passed
    assert limit.max_in_flight == 3
    assert limit.in_flight == 0


def test_async_with_and_acquire_async() -> None:
    limit = recuo.ConcurrencyLimit(2)
    most = 0
    inside = 0

    async def job() -> None:
        nonlocal inside, most
        async with limit:
            inside += 1
            most = max(most, inside)
            await asyncio.sleep(0.005)
            inside -= 1

    async def main() -> None:
        await asyncio.wait_for(asyncio.gather(*(job() for _ in range(10))), 10)
        held = await limit.acquire_async()
        other = await limit.acquire_async()
        assert held is not None and other is not None
        assert await limit.acquire_async(timeout=0.02) is None
        asyncio.get_running_loop().call_later(0.02, held.release)
        third = await asyncio.wait_for(limit.acquire_async(), 5)
        assert third is not None
        other.release()
        third.release()

    asyncio.run(main())
    assert most == 2
    assert limit.in_flight == 0


def test_a_cancelled_async_wait_takes_nothing() -> None:
    limit = recuo.ConcurrencyLimit(1)
    held = limit.try_acquire()

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(limit.acquire_async(), 0.03)

    asyncio.run(main())
    assert limit.in_flight == 1
    assert held is not None
    held.release()
    assert limit.in_flight == 0
