"""The asyncio waits of the shared limits: ``Regulator.acquire_async``,
``ConcurrencyLimit.acquire_async`` and ``async with limit:``.

The native methods check their arguments and hand back one of these coroutines, so nothing is
reserved or taken until it is awaited. Every decision is the core's: the regulator's
reservation (``_reserve``: the core's ``reserve_now``, on the monotonic clock or a Redis
server's) says how long to wait, and a concurrency limit answers ``try_acquire`` at once and is
looked at again at the core's cadence (``_GATE_POLL_MS``, the cadence of the machine's own
gate step); only the waiting is done here, with ``asyncio.sleep``, so cancelling the task ends
it at once. (The gate of ``recuo.retry``'s async loop and of the async HTTP adapters is the
machine's own gate step, ``Operation.poll_gate``.)
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ._recuo import _GATE_POLL_MS

if TYPE_CHECKING:
    from ._recuo import ConcurrencyLimit, Permit, Regulator

_POLL = _GATE_POLL_MS / 1000
"""The pause between two looks for a free place, in seconds: the core's cadence."""


async def _ask(f: Any, *args: Any) -> Any:
    """``f(*args)`` from the loop's default executor, so that a round trip to a Redis server
    (at most its deadline, when the server is frozen) never blocks the event loop."""
    return await asyncio.get_running_loop().run_in_executor(None, f, *args)


async def acquire_regulator(regulator: Regulator, max_wait_ns: int, cost: int) -> bool:
    """Reserves a start slot now if it comes within ``max_wait_ns`` and sleeps until it:
    ``True``; ``False`` (nothing reserved) when it would not come in time. Cancelling the task
    during the sleep gives the slot back when no later start was reserved behind it (the
    core's ``give_back``); otherwise it delays the later starts by one interval at most. A
    Redis regulator is asked from the loop's default executor, so a round trip to its server
    (at most its deadline, when the server is frozen) never blocks the event loop."""
    if regulator._remote:
        reservation = await _ask(regulator._reserve, max_wait_ns, cost)
    else:
        reservation = regulator._reserve(max_wait_ns, cost)
    if reservation is None:
        return False
    if reservation.wait_ns > 0:
        try:
            await asyncio.sleep(reservation.wait_ns / 1e9)
        except BaseException:
            regulator._give_back(reservation)
            raise
    return True


async def acquire_limit(limit: ConcurrencyLimit, timeout: float | None) -> Permit | None:
    """A place of ``limit`` (its ``Permit``), looked for at once and then every
    ``_GATE_POLL_MS``; ``None`` when ``timeout`` seconds pass first. A Redis limit is asked
    from the loop's default executor, so a round trip to its server (at most its deadline,
    when the server is frozen) never blocks the event loop; a place taken by a look whose task
    was cancelled meanwhile is given back when its ``Permit`` is collected."""
    loop = asyncio.get_running_loop()
    until = None if timeout is None else loop.time() + timeout
    remote = limit._remote
    while True:
        permit = await _ask(limit.try_acquire) if remote else limit.try_acquire()
        if permit is not None:
            return permit
        pause = _POLL
        if until is not None:
            left = until - loop.time()
            if left <= 0:
                return None
            pause = min(pause, left)
        await asyncio.sleep(pause)


async def enter_limit(limit: ConcurrencyLimit) -> None:
    """``async with limit:``: waits for a place and holds it until ``__aexit__``."""
    permit = await acquire_limit(limit, None)
    assert permit is not None  # no timeout
    limit._hold(permit)


async def exit_limit(limit: ConcurrencyLimit, exc: tuple[Any, ...]) -> None:
    """``async with limit:``: gives the place back (the exception, if any, goes on)."""
    limit.__exit__(*exc)
