"""One process of test_redis_cluster.py's fleet (``sys.executable failover_child.py``, its
settings in the environment): ``THREADS`` threads run ``recuo.retry``'s blocking loop over a GET of
``API`` until ``END_MS`` (unix ms), behind one gate on the Redis Cluster at ``URL`` — the
regulator ``REGULATOR`` (30/s, burst 3), the limit ``LIMIT`` (2 places, leases of 2 s) and the
budget ``BUDGET`` — with a deadline of 2 s per operation. Prints one line,
``ops <JSON>``: per operation ``[began (unix ms), took (ms), how it ended, its attempt's
start (unix ms; 0: none)]``, where it ended ``"ok"``, ``"gate_error"`` (the gate's
``ConnectionError``, no attempt made), ``"waited"`` (gave up ``"wait_exceeds_deadline"`` with
no attempt: the gate's wait did not fit the deadline) or ``"other: <the exception>"``."""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request

import recuo

RATE = "30/s"
BURST = 3
LIMIT = 2
LEASE_S = 2.0
DEADLINE_S = 2.0

Op = tuple[int, int, str, int]


def unix_ms() -> int:
    return time.time_ns() // 1_000_000


def run(gate: recuo.Gate, api: str, end_ms: int, out: list[Op]) -> None:
    """Operations one after the other until ``end_ms``; each one's figures appended to
    ``out``."""
    policy = recuo.Policy(max_attempts=3, deadline=DEADLINE_S)
    attempt_at = 0
    reports: list[recuo.Report] = []

    def get() -> None:
        nonlocal attempt_at
        attempt_at = unix_ms()
        with urllib.request.urlopen(api, timeout=DEADLINE_S) as response:
            response.read()

    get_retried = recuo.retry(policy=policy, gate=gate, on_give_up=reports.append)(get)
    while unix_ms() < end_ms:
        attempt_at = 0
        reports.clear()
        at, started = unix_ms(), time.monotonic()
        try:
            get_retried()
            end = "ok"
        except ConnectionError as e:
            end = f"gate_error: {e}" if attempt_at == 0 else f"other: {e!r}"
        except Exception as e:  # noqa: BLE001 - every other ending is reported, and fails the test
            waited = [(r.attempts, r.reason) for r in reports] == [(0, "wait_exceeds_deadline")]
            end = "waited" if waited and attempt_at == 0 else f"other: {e!r} {reports}"
        took = int((time.monotonic() - started) * 1000)
        out.append((at, took, end, attempt_at))


def main() -> None:
    url, api, end_ms = os.environ["URL"], os.environ["API"], int(os.environ["END_MS"])
    # The ACL user's wrong password is refused, and never repeated.
    try:
        recuo.Regulator.redis(url.replace(":apppw@", ":nope@"), "refused", RATE, BURST)
        raise AssertionError("a wrong password was let in")
    except ConnectionError as e:
        assert "WRONGPASS" in str(e) and "nope" not in str(e), e
    gate = recuo.Gate(
        regulator=recuo.Regulator.redis(url, os.environ["REGULATOR"], RATE, BURST),
        limit=recuo.ConcurrencyLimit.redis(url, os.environ["LIMIT"], LIMIT, LEASE_S),
        budget=recuo.RetryBudget.redis(url, os.environ["BUDGET"], 0.1, 1.0, 10),
    )
    outs: list[list[Op]] = [[] for _ in range(int(os.environ["THREADS"]))]
    threads = [threading.Thread(target=run, args=(gate, api, end_ms, out)) for out in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("ops " + json.dumps([op for out in outs for op in out]), flush=True)


if __name__ == "__main__":
    main()
