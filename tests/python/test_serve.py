"""The loop against ``recuo serve``: ``recuo.run_batch`` reads a simulated rate-limited API
over real HTTP (``urllib``), and the records it logs and the stats it answers are checked
against the server's own ``GET /stats``.

The server is the ``recuo`` command (``make build-cli`` builds ``target/debug/recuo``; set
``RECUO_BIN`` to use another); without it the test is skipped, saying so.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from typing import Any, Callable

import pytest

import recuo
from serving import RECUO_BIN, recuo_serve

pytestmark = pytest.mark.skipif(not RECUO_BIN.is_file(), reason=f"no recuo command at {RECUO_BIN} (make build-cli)")


@pytest.fixture
def server() -> Iterator[str]:
    """A ``recuo serve`` on 127.0.0.1: 20 starts a second with a burst of 3, 20% of 503s
    (reproducible: seeded), 5 ms answers, and no Retry-After (clients use their backoff)."""
    args = ["--allowance", "1200/min", "--burst", "3", "--fail-rate", "0.2", "--latency", "5ms"]
    with recuo_serve(*args, "--seed", "7", "--retry-after", "none") as url:
        yield url


def test_records_and_stats_agree_with_the_servers_stats(server: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="recuo")
    count = 15

    def read(i: int) -> Callable[[], Any]:
        def call() -> Any:
            attempt = recuo.current_attempt()
            url = f"{server}/items/{i}?api_key=sekret-{i}&owner=ana.{i}@example.com"
            attempt.record_request("GET", url)
            headers = {"X-Api-Key": "k-secret", attempt.idempotency_header: attempt.idempotency_key}
            try:
                with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as response:
                    attempt.record_response(response.status, response.headers)
                    return json.load(response)
            except urllib.error.HTTPError as error:
                error.close()  # the body is not read: no socket left open
                raise

        return call

    def classify(error: Exception) -> object:
        if isinstance(error, urllib.error.HTTPError):
            return recuo.classify(error.code, headers=error.headers)
        return False

    policy = recuo.Policy(max_attempts=100, base=0.005, cap=0.05)
    report = recuo.run_batch([read(i) for i in range(count)], policy=policy, workers=3, classify=classify)
    with urllib.request.urlopen(f"{server}/stats", timeout=10) as response:
        served = json.load(response)

    # Every read succeeded, through 429s and 503s.
    assert [r.status for r in report.results] == ["succeeded"] * count
    assert served["ok"] == count
    assert served["throttled"] > 0 and served["unavailable"] > 0, served

    # The records: one attempt record per request the server saw, the same 200s, 429s, 503s.
    logged = [r.recuo for r in caplog.records if r.name == "recuo"]  # type: ignore[attr-defined]
    attempts = [r for r in logged if r["type"] == "attempt"]
    results = [r for r in logged if r["type"] == "result"]
    assert len(attempts) == served["requests"]
    statuses = Counter(r["status"] for r in attempts)
    assert statuses == Counter({200: served["ok"], 429: served["throttled"], 503: served["unavailable"]})
    assert len(results) == count and all(r["result"] == "success" for r in results)
    assert sum(r["attempts"] for r in results) == served["requests"]
    decisions = Counter((r["status"], r["decision"], r["reason"]) for r in attempts)
    assert decisions == Counter(
        {
            (200, "done", "success"): served["ok"],
            (429, "retry", "rate_limited"): served["throttled"],
            (503, "retry", "unavailable"): served["unavailable"],
        }
    )

    # The stats: the same counts, one idempotency key per operation, and the client's most in
    # flight at least the server's (an attempt is in flight at the client the whole time the
    # server answers it).
    stats = report.stats
    assert (stats.starts, stats.initial, stats.retries) == (served["requests"], count, served["requests"] - count)
    assert (stats.successes, stats.failures, stats.not_started) == (count, 0, 0)
    assert (stats.throttled, stats.unavailable) == (served["throttled"], served["unavailable"])
    assert served["idempotency_keys"] == count
    assert served["max_in_flight"] <= stats.max_in_flight <= 3

    # Nothing secret reached the records; the host and the path did.
    for record in attempts + results:
        line = json.dumps(record)
        for secret in ["sekret-", "ana.", "k-secret", "example.com"]:
            assert secret not in line, line
        assert record["url"].startswith(f"{server}/items/")
        assert record["url"].endswith("?api_key=[redacted]&owner=[email]")
