"""One worker of guide B's job, in Python: its share of the reads as one ``recuo.run_batch``
through the limits every worker shares (files in STATE): one rate RATE (such as 90/min), at
most 3 requests in flight, one retry budget. With requests or httpx, within DEADLINE_S seconds
for the whole share, starting at START_NS (CLOCK_MONOTONIC ns, the same clock in every
process; 0: at once). ADAPTIVE is "adaptive" (the rate slows down after a 429) or "steady".
Prints its stats' plain form as one JSON line, for the parent to add up.

    python worker.py requests|httpx BASE_URL RATE DEADLINE_S START_NS STATE ADAPTIVE ID...
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

import recuo


def getter(client: str) -> Callable[[str], int]:
    """A GET that raises for a status of 400 or more, so that recuo sees the 429 or 503 (and
    its Retry-After) on the client's own error."""
    if client == "requests":
        import requests

        session = requests.Session()

        def get_requests(url: str) -> int:
            response = session.get(url, timeout=10)
            response.raise_for_status()
            return response.status_code

        return get_requests
    import httpx

    http = httpx.Client(timeout=10)

    def get_httpx(url: str) -> int:
        response = http.get(url)
        response.raise_for_status()
        return response.status_code

    return get_httpx


def main() -> None:
    client, base, rate, deadline, start_ns, state, adaptive, *ids = sys.argv[1:]
    gate = recuo.Gate(
        regulator=recuo.Regulator.shared(f"{state}/regulator", rate, adaptive=adaptive == "adaptive"),
        limit=recuo.ConcurrencyLimit.shared(f"{state}/limit", 3),
        budget=recuo.RetryBudget.shared(f"{state}/budget"),
    )
    get = getter(client)
    operations = [lambda i=i: get(f"{base}/items/{i}") for i in ids]
    while time.monotonic_ns() < int(start_ns):
        time.sleep(0.001)
    report = recuo.run_batch(operations, policy=recuo.Policy.batch(), gate=gate, workers=3, deadline=float(deadline))
    print(json.dumps(report.stats.to_dict()))


if __name__ == "__main__":
    main()
