"""recuo inside the HTTP clients and recuo.call's HTTP-aware default,
against real servers on 127.0.0.1: ``recuo serve`` (429 with Retry-After as seconds and as an
HTTP-date, 503s, a spent quota; its ``/stats`` counts what it saw) and nginx's ``limit_req``.
Every client — httpx sync and async, requests, aiohttp, ``buscar_com_retry`` — runs the same
scenarios (``http_clients.send_all``)."""

from __future__ import annotations

import asyncio
import email.message
import io
import logging
import subprocess
import sys
import time
import urllib.error
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import httpx
import pytest
import requests

import recuo
import recuo.aiohttp
import recuo.httpx
import recuo.requests
from http_clients import CLIENTS, ERROR_BASES, Call, send_all
from serving import NGINX_BIN, RECUO_BIN, nginx, recuo_serve, stats

needs_serve = pytest.mark.skipif(not RECUO_BIN.is_file(), reason=f"no recuo command at {RECUO_BIN} (make build-cli)")
needs_nginx = pytest.mark.skipif(
    not __import__("os").path.exists(NGINX_BIN), reason=f"no nginx at {NGINX_BIN} (apt-get install nginx-light)"
)

# Enough attempts that every call ends 200 through a storm of 429s and 503s; the waits are
# the servers' (Retry-After: 1).
POLICY = recuo.Policy(max_attempts=12, base=0.05, cap=0.5, deadline=30, use_date_header=True)


def twenty_gets_and_five_posts(url: str) -> list[Call]:
    gets = [Call("GET", f"{url}/items/{i}") for i in range(20)]
    posts = [Call("POST", f"{url}/payments/{i}", b'{"amount": 100}') for i in range(5)]
    return gets + posts


@needs_serve
@pytest.mark.timeout(120)
@pytest.mark.parametrize("retry_after", ["seconds", "date"])
@pytest.mark.parametrize("client", CLIENTS)
def test_every_call_ends_200_through_429s_and_503s(client: str, retry_after: str) -> None:
    args = ["--allowance", "600/min", "--burst", "3", "--fail-rate", "0.2", "--latency", "1ms"]
    with recuo_serve(*args, "--seed", "11", "--retry-after", retry_after) as url:
        calls = twenty_gets_and_five_posts(url)
        answers = send_all(client, calls, policy=POLICY)
        served = stats(url)

    assert [a.status for a in answers] == [200] * 25
    # The server's count of what it saw: the 429s and 503s were met, and every request it
    # counted is an attempt some report counted.
    assert served["throttled"] > 0 and served["unavailable"] > 0, served
    assert served["requests"] == sum(a.report.attempts for a in answers)
    # Every wait at least the server's: its own count of early retries, and the delays (each
    # refusal said Retry-After: 1 or more, as seconds or as a date).
    if "early_retries" in served:
        assert served["early_retries"] == 0
    assert all(d >= 1000 for a in answers for d in a.report.delays_ms)
    # Exactly one idempotency key per POST, sent on each of its attempts; none on the GETs.
    per_key = served["requests_per_idempotency_key"]
    assert len(per_key) == 5 and served["idempotency_key_conflicts"] == 0
    assert sorted(per_key.values()) == sorted(a.report.attempts for a in answers[20:])
    for answer in answers[20:]:
        if answer.key is not None:
            assert per_key[answer.key] == answer.report.attempts
    assert all(a.key is None for a in answers[:20])


@needs_serve
@pytest.mark.parametrize("client", CLIENTS)
def test_a_spent_quota_gives_up_at_once_with_retry_at(client: str) -> None:
    with recuo_serve("--quota", "2", "--fail-rate", "0", "--latency", "1ms") as url:
        assert [a.status for a in send_all(client, [Call("GET", f"{url}/items/{i}") for i in range(2)])] == [200, 200]
        started = time.monotonic()
        with pytest.raises(recuo.GiveUp) as raised:
            send_all(client, [Call("GET", f"{url}/items/3")])
        took = time.monotonic() - started
        served = stats(url)
    error = raised.value
    assert error.report is not None and error.report.elapsed < 1.0  # the operation, at once
    assert took < 3.0  # the client made on the way included
    assert isinstance(error, ERROR_BASES[client])  # the client's own except clauses catch it
    assert error.reason == "wait_exceeds_deadline"
    assert error.retry_at is not None and error.retry_at - time.time() > 23 * 3600
    assert error.report is not None and error.report.attempts == 1
    status = getattr(error.response, "status_code", None) or getattr(error.response, "status", None)
    assert status == 429
    assert served["requests"] == 3 and served["quota_refused"] == 1


def counting_chunks(sent: list[int]) -> Iterator[bytes]:
    sent.append(1)
    yield b'{"amount":'
    yield b" 100}"


async def counting_chunks_async(sent: list[int]) -> AsyncIterator[bytes]:
    sent.append(1)
    yield b'{"amount":'
    yield b" 100}"


@needs_serve
@pytest.mark.parametrize("client", ["httpx", "httpx-async", "requests", "aiohttp"])
def test_a_generator_body_is_never_sent_twice(client: str) -> None:
    sent: list[int] = []
    with recuo_serve("--fail-rate", "1", "--latency", "1ms") as url:  # every answer a 503
        target = f"{url}/uploads"
        if client == "httpx":
            with httpx.Client(transport=recuo.httpx.RetryTransport(policy=POLICY)) as http:
                status = http.post(target, content=counting_chunks(sent)).status_code
        elif client == "requests":
            with requests.Session() as session:
                session.mount("http://", recuo.requests.RetryAdapter(policy=POLICY))
                status = session.post(target, data=counting_chunks(sent)).status_code
        elif client == "httpx-async":

            async def post_httpx() -> int:
                async with httpx.AsyncClient(transport=recuo.httpx.RetryTransport(policy=POLICY)) as http:
                    return (await http.post(target, content=counting_chunks_async(sent))).status_code

            status = asyncio.run(post_httpx())
        else:

            async def post_aiohttp() -> int:
                middleware = recuo.aiohttp.RetryMiddleware(policy=POLICY)
                async with aiohttp.ClientSession(middlewares=(middleware,)) as session:
                    async with session.post(target, data=counting_chunks_async(sent)) as r:
                        return r.status

            status = asyncio.run(post_aiohttp())
        served = stats(url)
    # One attempt: the 503 is answered as the client would answer it.
    assert status == 503
    assert sent == [1] and served["requests"] == 1


@needs_serve
@pytest.mark.timeout(120)
@pytest.mark.parametrize("client", CLIENTS)
def test_a_shared_gate_paces_every_request(client: str) -> None:
    # Starts 125 ms apart against a server that takes one every 50 ms: the margin is for a
    # request whose sending a busy machine delays, so that the next one arrives close behind.
    gate = recuo.Gate(regulator=recuo.Regulator("8/s", burst=1))
    with recuo_serve("--allowance", "1200/min", "--burst", "1", "--fail-rate", "0", "--latency", "1ms") as url:
        answers = send_all(client, [Call("GET", f"{url}/items/{i}") for i in range(12)], gate=gate, policy=POLICY)
        served = stats(url)
    assert [a.status for a in answers] == [200] * 12
    assert served["throttled"] == 0 and served["requests"] == 12


@needs_nginx
@pytest.mark.timeout(120)
@pytest.mark.parametrize("client", CLIENTS)
def test_nginx_limit_req(client: str) -> None:
    # Unpaced: nginx refuses past 10 a second, and every call still ends 200.
    with nginx(rate=10) as server:
        answers = send_all(client, twenty_gets_and_five_posts(server.url), policy=POLICY)
        statuses = server.statuses()
    assert [a.status for a in answers] == [200] * 25
    assert statuses.count(429) > 0 and statuses.count(200) == 25
    assert len(statuses) == sum(a.report.attempts for a in answers)
    assert all(d >= 1000 for a in answers for d in a.report.delays_ms)  # Retry-After: 1

    # Paced well under its rate by one shared gate (room for a start delayed in transit on a
    # busy machine): not one 429.
    gate = recuo.Gate(regulator=recuo.Regulator("4/s", burst=1))
    with nginx(rate=10) as server:
        answers = send_all(client, twenty_gets_and_five_posts(server.url), policy=POLICY, gate=gate)
        statuses = server.statuses()
    assert [a.status for a in answers] == [200] * 25
    assert statuses == [200] * 25


# --- What the adapters do, on a mock transport --------------------------------------------


def scripted(*answers: Any) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A transport answering ``answers`` in turn (an int status, or an exception to raise)."""
    seen: list[httpx.Request] = []
    left = list(answers)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = left.pop(0)
        if isinstance(answer, Exception):
            raise answer
        status, headers = answer if isinstance(answer, tuple) else (answer, {})
        return httpx.Response(status, headers=headers, json={"status": status})

    return httpx.MockTransport(handler), seen


def no_sleep(seconds: float) -> None:
    pass


def test_a_post_with_a_key_recuo_made_is_not_retried_after_a_500_unless_the_server_honours_keys() -> None:
    transport, seen = scripted(500, 200)
    with httpx.Client(transport=recuo.httpx.RetryTransport(transport, sleep=no_sleep)) as http:
        response = http.post("http://api.test/payments", content=b"{}")
    assert response.status_code == 500 and len(seen) == 1
    assert response.extensions["recuo.report"].reason == "permanent"
    assert len(seen[0].headers["Idempotency-Key"]) == 36

    transport, seen = scripted(500, 200)
    retrying = recuo.httpx.RetryTransport(transport, sleep=no_sleep, server_honours_keys=True)
    with httpx.Client(transport=retrying) as http:
        response = http.post("http://api.test/payments", content=b"{}")
    assert response.status_code == 200 and len(seen) == 2
    assert seen[0].headers["Idempotency-Key"] == seen[1].headers["Idempotency-Key"]

    # The caller's own key is kept, and makes the request safe to repeat.
    transport, seen = scripted(500, 200)
    with httpx.Client(transport=recuo.httpx.RetryTransport(transport, sleep=no_sleep)) as http:
        response = http.post("http://api.test/payments", content=b"{}", headers={"Idempotency-Key": "mine-1"})
    assert response.status_code == 200 and [r.headers["Idempotency-Key"] for r in seen] == ["mine-1", "mine-1"]


def test_server_honours_keys_is_the_policys_setting_and_the_keyword_only_sets_it() -> None:
    honours = recuo.Policy(max_attempts=3, base=0.001, cap=0.002, server_honours_keys=True)
    assert honours.server_honours_keys and not recuo.Policy().server_honours_keys
    assert honours.with_server_honours_keys(False) == recuo.Policy(max_attempts=3, base=0.001, cap=0.002)

    transport, seen = scripted(500, 200)  # the policy alone says so
    with httpx.Client(transport=recuo.httpx.RetryTransport(transport, policy=honours, sleep=no_sleep)) as http:
        assert http.post("http://api.test/payments", content=b"{}").status_code == 200
    assert len(seen) == 2

    transport, seen = scripted(500, 200)  # the keyword sets the policy's setting, both ways
    retrying = recuo.httpx.RetryTransport(transport, policy=honours, sleep=no_sleep, server_honours_keys=False)
    with httpx.Client(transport=retrying) as http:
        assert http.post("http://api.test/payments", content=b"{}").status_code == 500
    assert len(seen) == 1
    with pytest.raises(TypeError, match="server_honours_keys must be a bool or None"):
        recuo.httpx.RetryTransport(server_honours_keys=1)  # type: ignore[arg-type]


def test_no_attempt_made_gives_up_with_the_cores_message() -> None:
    # The only place in flight is held: the gate does not open before the deadline.
    limit = recuo.ConcurrencyLimit(1)
    held = limit.try_acquire()
    assert held is not None
    transport, seen = scripted(200)
    policy = recuo.Policy(max_attempts=3, base=0.001, cap=0.002, deadline=0.05)
    retrying = recuo.httpx.RetryTransport(transport, policy=policy, gate=recuo.Gate(limit=limit))
    try:
        with httpx.Client(transport=retrying) as http:
            with pytest.raises(recuo.httpx.GiveUp) as raised:
                http.get("http://api.test/x")
    finally:
        held.release()
    assert seen == []
    error = raised.value
    assert isinstance(error, httpx.HTTPError) and error.response is None
    assert error.reason == "wait_exceeds_deadline" and error.report is not None and error.report.attempts == 0
    assert error.retry_at is None
    assert str(error) == "recuo gave up after 0 attempts (wait_exceeds_deadline): no attempt was made"


def test_a_404_is_answered_at_once_and_attempts_spent_answer_the_last_response() -> None:
    transport, seen = scripted(404)
    with httpx.Client(transport=recuo.httpx.RetryTransport(transport, sleep=no_sleep)) as http:
        assert http.get("http://api.test/x").status_code == 404
    assert len(seen) == 1

    transport, seen = scripted(*[502] * 5)
    with httpx.Client(transport=recuo.httpx.RetryTransport(transport, sleep=no_sleep)) as http:
        response = http.get("http://api.test/x")
    assert response.status_code == 502 and len(seen) == 5
    assert response.extensions["recuo.report"].reason == "attempts_exhausted"
    assert "Idempotency-Key" not in seen[0].headers  # a GET needs none


def test_transport_errors_by_kind() -> None:
    request = httpx.Request("POST", "http://api.test/x")
    # connect: nothing was sent, safe even for a POST
    transport, seen = scripted(httpx.ConnectError("refused", request=request), 200)
    with httpx.Client(transport=recuo.httpx.RetryTransport(transport, sleep=no_sleep)) as http:
        assert http.post("http://api.test/x").status_code == 200
    assert len(seen) == 2
    # a read timeout on a POST may have been processed: re-raised after one attempt
    transport, seen = scripted(httpx.ReadTimeout("slow", request=request), 200)
    with httpx.Client(transport=recuo.httpx.RetryTransport(transport, sleep=no_sleep)) as http:
        with pytest.raises(httpx.ReadTimeout):
            http.post("http://api.test/x")
    assert len(seen) == 1


def test_each_attempts_timeouts_are_clipped_to_the_deadline() -> None:
    transport, seen = scripted(200)
    policy = recuo.Policy(deadline=2.5)
    with httpx.Client(transport=recuo.httpx.RetryTransport(transport, policy=policy), timeout=60) as http:
        http.get("http://api.test/x")
    timeouts = seen[0].extensions["timeout"]
    assert set(timeouts) == {"connect", "read", "write", "pool"}
    assert all(0 < t <= 2.5 for t in timeouts.values())


def test_the_default_deadline_is_30_s_and_a_long_retry_after_gives_up_at_once() -> None:
    transport, seen = scripted((503, {"Retry-After": "3600"}))
    with httpx.Client(transport=recuo.httpx.RetryTransport(transport)) as http:
        with pytest.raises(recuo.httpx.GiveUp) as raised:
            http.get("http://api.test/x")
    assert raised.value.response.status_code == 503 and raised.value.response.json() == {"status": 503}
    assert raised.value.request.url == "http://api.test/x"  # type: ignore[attr-defined]
    assert 3500 < (raised.value.retry_at or 0) - time.time() < 3700
    assert recuo.httpx.RetryTransport()._settings.policy.deadline == 30.0


def test_records_go_to_the_recuo_logger(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="recuo")
    transport, _ = scripted(503, 200)
    with httpx.Client(transport=recuo.httpx.RetryTransport(transport, sleep=no_sleep)) as http:
        http.get("http://ana:pw@api.test/x?token=s3cr3t")
    records = [r.recuo for r in caplog.records if r.name == "recuo"]  # type: ignore[attr-defined]
    assert [r.get("status") for r in records if r["type"] == "attempt"] == [503, 200]
    assert [r["result"] for r in records if r["type"] == "result"] == ["success"]
    assert "s3cr3t" not in caplog.text and "pw@" not in caplog.text


# --- recuo.call and recuo.retry read the clients' errors (no classify=) --------------------


def requests_error(status: int, headers: dict[str, str] | None = None) -> requests.HTTPError:
    response = requests.Response()
    response.status_code = status
    response.headers.update(headers or {})
    response.request = requests.Request("GET", "http://api.test/x").prepare()
    return requests.HTTPError(f"{status}", response=response)


def test_retry_on_requests_404_makes_one_call_and_on_a_429_waits_what_retry_after_says() -> None:
    calls = []

    def get() -> str:
        calls.append(1)
        raise requests_error(404)

    with pytest.raises(requests.HTTPError):
        recuo.retry(get)()
    assert len(calls) == 1

    answers: list[Any] = [requests_error(429, {"Retry-After": "2"}), "ok"]

    @recuo.retry
    def get_limited() -> Any:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    started = time.monotonic()
    assert get_limited() == "ok"
    assert time.monotonic() - started >= 2.0


def urllib_error(status: int, headers: dict[str, str]) -> urllib.error.HTTPError:
    message = email.message.Message()
    for name, value in headers.items():
        message[name] = value
    return urllib.error.HTTPError("http://api.test/x", status, "refused", message, io.BytesIO(b""))


@pytest.mark.parametrize(
    "error, verdict",
    [
        (requests_error(404), "permanent"),
        (urllib_error(429, {"Retry-After": "7"}), "rate_limited"),
        (urllib_error(501, {}), "permanent"),
        (httpx.HTTPStatusError("x", request=httpx.Request("POST", "http://a/"), response=httpx.Response(500)), "not_idempotent"),
        (httpx.HTTPStatusError("x", request=httpx.Request("GET", "http://a/"), response=httpx.Response(503)), "unavailable"),
        (httpx.ConnectError("refused"), "connect"),
        (httpx.ReadTimeout("slow"), "timeout"),
        (httpx.RemoteProtocolError("dropped"), "reset"),
        (requests.ConnectTimeout("slow"), "connect"),
        (requests.ReadTimeout("slow"), "timeout"),
        (requests.exceptions.SSLError("bad certificate"), "tls"),
        (urllib.error.URLError(ConnectionRefusedError(111, "refused")), "connect"),
        (aiohttp.ServerDisconnectedError(), "reset"),
        (aiohttp.ClientResponseError(aiohttp.RequestInfo(httpx.URL("http://a/"), "GET", {}, httpx.URL("http://a/")), (), status=429, headers={"Retry-After": "3"}), "rate_limited"),  # type: ignore[arg-type]
        (ValueError("no HTTP meaning"), None),
    ],
)
def test_what_the_default_classifier_reads(error: Exception, verdict: str | None) -> None:
    verdicts: list[Any] = []
    seen: list[float] = []

    def fail() -> None:
        raise error

    with pytest.raises(type(error)):
        recuo.call(
            fail,
            policy=recuo.Policy(max_attempts=2, deadline=60),
            sleep=seen.append,
            on_give_up=verdicts.append,
        )
    report = verdicts[0]
    if verdict in ("permanent", "not_idempotent", "tls"):
        assert report.attempts == 1 and report.reason == "permanent"
    else:
        assert report.attempts == 2 and report.reason == "attempts_exhausted"
    if verdict == "rate_limited":
        assert seen[0] >= 3.0  # the server's wait


def test_the_old_call_form_warns_and_call_calls() -> None:
    with pytest.warns(DeprecationWarning, match="recuo.call"):
        assert recuo.retry(max, 3, 9) == 9
    assert recuo.call(max, 3, 9) == 9
    assert recuo.call(lambda: "now") == "now"
    wrapped = recuo.retry(lambda: "later")
    assert callable(wrapped) and wrapped() == "later"


def test_import_recuo_imports_no_http_client() -> None:
    code = "import sys, recuo; print(sorted(m for m in ('httpx', 'requests', 'aiohttp', 'urllib3', 'urllib.request') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
