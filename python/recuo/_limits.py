"""The asyncio waits of the shared limits: ``Regulator.acquire_async``,
``ConcurrencyLimit.acquire_async``, ``async with limit:`` and the gate of ``recuo.retry``'s
async loop.

The native methods check their arguments and hand back one of these coroutines, so nothing is
reserved or taken until it is awaited. Every decision is the core's: the regulator's
reservation (``_reserve``: the core's ``reserve_now``, on the monotonic clock or a Redis
server's) says how long to wait, and a concurrency limit answers ``try_acquire`` at once;
only the waiting is done here, with ``asyncio.sleep``, so cancelling the task ends it at
once.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._recuo import ConcurrencyLimit, Gate, Permit, Regulator

_POLL_FIRST = 0.001
"""The first pause between two looks for a free place, in seconds; it doubles up to
``_POLL_MOST``."""
_POLL_MOST = 0.02


class Asking:
    """Whether a gate's wait is in a round trip to a Redis server right now: when an
    operation's deadline cuts the wait then, the server did not answer in time."""

    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = False


async def _ask(asking: Asking | None, f: Any, *args: Any) -> Any:
    """``f(*args)`` from the loop's default executor, so that a round trip to a Redis server
    (at most its deadline, when the server is frozen) never blocks the event loop."""
    loop = asyncio.get_running_loop()
    if asking is None:
        return await loop.run_in_executor(None, f, *args)
    asking.now = True
    # Left true when the wait is cancelled (an operation's deadline) during the round trip.
    answer = await loop.run_in_executor(None, f, *args)
    asking.now = False
    return answer


async def acquire_regulator(
    regulator: Regulator, max_wait_ns: int, cost: int, asking: Asking | None = None
) -> bool:
    """Reserves a start slot now if it comes within ``max_wait_ns`` and sleeps until it:
    ``True``; ``False`` (nothing reserved) when it would not come in time. Cancelling the task
    during the sleep gives the slot back when no later start was reserved behind it (the
    core's ``give_back``); otherwise it delays the later starts by one interval at most. A
    Redis regulator is asked from the loop's default executor, so a round trip to its server
    (at most its deadline, when the server is frozen) never blocks the event loop."""
    if regulator._remote:
        reservation = await _ask(asking, regulator._reserve, max_wait_ns, cost)
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


async def acquire_limit(
    limit: ConcurrencyLimit, timeout: float | None, asking: Asking | None = None
) -> Permit | None:
    """A place of ``limit`` (its ``Permit``), looked for at once and then every 1 ms, growing
    to every 20 ms; ``None`` when ``timeout`` seconds pass first. A Redis limit is asked from
    the loop's default executor, so a round trip to its server (at most its deadline, when
    the server is frozen) never blocks the event loop; a place taken by a look whose task was
    cancelled meanwhile is given back when its ``Permit`` is collected."""
    loop = asyncio.get_running_loop()
    until = None if timeout is None else loop.time() + timeout
    pause = _POLL_FIRST
    remote = limit._remote
    while True:
        permit = await _ask(asking, limit.try_acquire) if remote else limit.try_acquire()
        if permit is not None:
            return permit
        if until is not None:
            left = until - loop.time()
            if left <= 0:
                return None
            pause = min(pause, left)
        await asyncio.sleep(pause)
        pause = min(pause * 2, _POLL_MOST)


async def enter_limit(limit: ConcurrencyLimit) -> None:
    """``async with limit:``: waits for a place and holds it until ``__aexit__``."""
    permit = await acquire_limit(limit, None)
    assert permit is not None  # no timeout
    limit._hold(permit)


async def exit_limit(limit: ConcurrencyLimit, exc: tuple[Any, ...]) -> None:
    """``async with limit:``: gives the place back (the exception, if any, goes on)."""
    limit.__exit__(*exc)


async def enter_gate(gate: Gate, asking: Asking | None = None) -> Permit | None:
    """Passes ``gate`` in an async loop (the machine's ``"enter"`` step), in the order the
    core's ``Gate.wait`` keeps: a place in flight first, then a start slot (so the start
    happens when its slot comes). Answers the place's ``Permit`` (``None`` without a limit),
    to release right after the attempt; the budget is the machine's. ``asking`` tells, while
    the wait lasts, whether it is in a round trip to a Redis server."""
    permit = None if gate.limit is None else await acquire_limit(gate.limit, None, asking)
    try:
        if gate.regulator is not None:
            regulator = gate.regulator
            await acquire_regulator(regulator, 2**64 - 1, 1, asking)
    except BaseException:
        if permit is not None:
            permit.release()
        raise
    return permit
