"""The children of test_shared.py, test_redis.py and test_redis_limits.py: functions
`multiprocessing` starts in other processes (importable by name, as the "spawn" start method
needs)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import recuo

RATE = "100/s"
BURST = 5
STEP_NS = 100_000  # each try moves the shared fake clock 0.1 ms
TRIES = 5_000  # per process


def regulator_child(path: str, clock: Any, barrier: Any, out: str) -> None:
    """Opens the shared regulator, waits for its siblings, then makes `TRIES` tries, each at
    the shared fake clock's reading (advanced under its lock); writes the starts it got."""
    regulator = recuo.Regulator.shared(path, RATE, BURST)
    barrier.wait(timeout=60)
    starts = []
    for _ in range(TRIES):
        with clock.get_lock():
            now = clock.value
            clock.value = now + STEP_NS
        if regulator.try_acquire_at(now) == 0:
            starts.append(now)
    Path(out).write_text("\n".join(map(str, starts)), encoding="utf-8")


def budget_child(path: str, barrier: Any, now_ns: int, out: str) -> None:
    """Withdraws from the shared budget at one instant as long as it allows; writes how many."""
    budget = recuo.RetryBudget.shared(path, 0.0, 2.0, 10)
    barrier.wait(timeout=60)
    granted = 0
    for _ in range(100):
        if budget.try_withdraw_at(now_ns):
            granted += 1
    Path(out).write_text(str(granted), encoding="utf-8")


def acquire_child(path: str, started: Any, out: str) -> None:
    """Takes real starts from the shared regulator with acquire(); writes their instants."""
    regulator = recuo.Regulator.shared(path, "50/s", 1)
    started.wait(timeout=60)
    stamps = []
    for _ in range(5):
        assert regulator.acquire(timeout=10)
        stamps.append(recuo.monotonic_ns())
    Path(out).write_text("\n".join(map(str, stamps)), encoding="utf-8")
    time.sleep(0)


def redis_regulator_child(url: str, key: str, clock: Any, barrier: Any, out: str) -> None:
    """`regulator_child` on a Redis regulator: its own connection — another "machine" — to
    the server every process shares, and the same shared fake clock."""
    regulator = recuo.Regulator.redis(url, key, RATE, BURST)
    barrier.wait(timeout=60)
    starts = []
    for _ in range(TRIES):
        with clock.get_lock():
            now = clock.value
            clock.value = now + STEP_NS
        if regulator.try_acquire_at(now) == 0:
            starts.append(now)
    Path(out).write_text("\n".join(map(str, starts)), encoding="utf-8")


def redis_budget_child(url: str, out: Any) -> None:
    """Takes up to 10 retries from the Redis budget ``py:budget``; puts how many it got."""
    budget = recuo.RetryBudget.redis(url, "py:budget", 0.1, 0.5, 10)
    out.put(sum(budget.try_withdraw() for _ in range(10)))


def redis_limit_batch_child(url: str, api: str, out: str) -> None:
    """Runs a batch of 8 GETs of ``api``, 3 workers at a time, through a gate holding the
    Redis limit ``py:fleet`` (3 places for every process); writes how many succeeded."""
    import urllib.request

    limit = recuo.ConcurrencyLimit.redis(url, "py:fleet", 3, 10)

    def get(i: int) -> Any:
        def op() -> int:
            with urllib.request.urlopen(f"{api}/items/{i}", timeout=10) as response:
                return int(response.status)

        return op

    report = recuo.run_batch([get(i) for i in range(8)], gate=recuo.Gate(limit=limit), workers=3)
    done = sum(r.status == "succeeded" for r in report.results)
    Path(out).write_text(f"{done} succeeded", encoding="utf-8")
