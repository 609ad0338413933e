"""tests/vectors/http.json through Python: the request plans, the endings and the give-up
messages through the binding, and every scripted request through each client recuo plugs
into — requests, httpx (sync and async) and aiohttp for the ``client`` cases,
``recuo.buscar_com_retry`` for the ``guide`` cases — against one ``recuo serve --script``
for the module. Each client sends to a path of its own (``/py-<client>/<case id>``); the
server's log says the attempts it saw and the key each carried, the records say each
attempt's decision, and the result how the request ended."""

from __future__ import annotations

import asyncio
import logging
import re
import urllib.error
from collections.abc import AsyncIterator, Iterator
from typing import Any, Optional

import aiohttp
import httpx
import pytest
import requests

import recuo
import recuo.aiohttp
import recuo.httpx
import recuo.requests
from conftest import VECTORS, vectors
from recuo import _http
from recuo._recuo import _ending, _give_up_message, _request_plan
from serving import RECUO_BIN, script_log, scripted_serve

DOC = vectors("http.json")
CLIENTS = ["requests", "httpx", "httpx-async", "aiohttp"]
UUID_V4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")

# What each client's own error base is: recuo's GiveUp is an instance of it as well.
ERROR_BASES: dict[str, type[BaseException]] = {
    "requests": requests.RequestException,
    "httpx": httpx.HTTPError,
    "httpx-async": httpx.HTTPError,
    "aiohttp": aiohttp.ClientError,
    "buscar_com_retry": urllib.error.URLError,
}


def _last(v: dict[str, Any]) -> Any:
    """A vector's ``last`` as the binding takes it: a status, a transport kind, ``"late"``,
    or ``None`` (no attempt made)."""
    if "status" in v:
        return v["status"]
    if "transport" in v:
        return v["transport"]
    return "late" if "late" in v else None


@pytest.mark.parametrize("case", DOC["plans"], ids=lambda c: f"{c['method']}-{c['callers_key']}-{c['send_keys']}")
def test_plans(case: dict[str, Any]) -> None:
    policy = recuo.Policy.adapters().with_server_honours_keys(case["server_honours_keys"])
    plan = _request_plan(policy, case["method"], case["callers_key"], case["send_keys"])
    assert plan == (case["key"], case["idempotent"])


@pytest.mark.parametrize("case", DOC["endings"])
def test_endings(case: dict[str, Any]) -> None:
    assert _ending(case["style"], case["reason"], _last(case["last"])) == case["ending"]


@pytest.mark.parametrize("case", DOC["messages"])
def test_messages(case: dict[str, Any]) -> None:
    message = _give_up_message(case["reason"], case["attempts"], _last(case["last"]), case["retry_in_ms"])
    assert message == case["message"]


def test_the_adapters_default_and_guide_as_defaults_are_the_cores() -> None:
    assert _http.DEFAULT_POLICY == recuo.Policy.adapters()
    adapters = recuo.Policy.adapters()
    assert (adapters.max_attempts, adapters.base, adapters.cap, adapters.deadline) == (5, 1.0, 8.0, 30.0)
    assert adapters.use_date_header and not adapters.server_honours_keys
    assert adapters.idempotency_header == "Idempotency-Key"
    # buscar_com_retry's signature shows guide A's defaults: the core's.
    guide = recuo.Policy.guide_a()
    defaults = recuo.buscar_com_retry.__kwdefaults__
    assert defaults is not None
    assert (defaults["tentativas"], defaults["base"], defaults["maximo"]) == (guide.max_attempts, guide.base, guide.cap)


# --- Whole requests against the scripted server ---------------------------------------------


class Ended:
    """How one request ended: a response (``status``, ``report``), or an exception."""

    def __init__(self, status: Optional[int] = None, report: Optional[recuo.Report] = None, error: Optional[BaseException] = None) -> None:
        self.status = status
        self.report = report
        self.error = error


def _policy(p: dict[str, Any]) -> recuo.Policy:
    return recuo.Policy(
        max_attempts=p["max_attempts"],
        base=p["base_ms"] / 1000,
        cap=p["cap_ms"] / 1000,
        deadline=None if p["deadline_ms"] is None else p["deadline_ms"] / 1000,
        use_date_header=True,
        server_honours_keys=p["server_honours_keys"],
    )


def _headers(case: dict[str, Any]) -> dict[str, str]:
    key = case["callers_key"]
    return {} if key is None else {"Idempotency-Key": key}


def _body_sync(case: dict[str, Any]) -> Any:
    if case["method"] in ("GET", "HEAD"):
        return None
    if case["replayable"]:
        return b'{"amount": 100}'

    def once() -> Iterator[bytes]:  # an iterator: the client can send it once only
        yield b'{"amount": 100}'

    return once()


def _body_async(case: dict[str, Any]) -> Any:
    if case["method"] in ("GET", "HEAD") or case["replayable"]:
        return _body_sync(case)

    async def once() -> AsyncIterator[bytes]:
        yield b'{"amount": 100}'

    return once()


def _via_requests(case: dict[str, Any], url: str) -> Ended:
    adapter = recuo.requests.RetryAdapter(policy=_policy(case["policy"]), idempotency_keys=case["send_keys"])
    with requests.Session() as session:
        session.mount("http://", adapter)
        try:
            r = session.request(case["method"], url, data=_body_sync(case), headers=_headers(case), timeout=10)
        except Exception as error:
            return Ended(error=error)
        return Ended(r.status_code, recuo.requests.report_of(r))


def _via_httpx(case: dict[str, Any], url: str) -> Ended:
    transport = recuo.httpx.RetryTransport(policy=_policy(case["policy"]), idempotency_keys=case["send_keys"])
    with httpx.Client(transport=transport, timeout=10) as client:
        try:
            r = client.request(case["method"], url, content=_body_sync(case), headers=_headers(case))
        except Exception as error:
            return Ended(error=error)
        return Ended(r.status_code, recuo.httpx.report_of(r))


async def _via_httpx_async(case: dict[str, Any], url: str) -> Ended:
    transport = recuo.httpx.RetryTransport(policy=_policy(case["policy"]), idempotency_keys=case["send_keys"])
    async with httpx.AsyncClient(transport=transport, timeout=10) as client:
        try:
            r = await client.request(case["method"], url, content=_body_async(case), headers=_headers(case))
        except Exception as error:
            return Ended(error=error)
        return Ended(r.status_code, recuo.httpx.report_of(r))


async def _via_aiohttp(case: dict[str, Any], url: str) -> Ended:
    middleware = recuo.aiohttp.RetryMiddleware(policy=_policy(case["policy"]), idempotency_keys=case["send_keys"])
    async with aiohttp.ClientSession(middlewares=(middleware,), timeout=aiohttp.ClientTimeout(total=10)) as session:
        try:
            async with session.request(case["method"], url, data=_body_async(case), headers=_headers(case)) as r:
                await r.read()
                return Ended(r.status, recuo.aiohttp.report_of(r))
        except Exception as error:
            return Ended(error=error)


def _via_buscar(case: dict[str, Any], url: str) -> Ended:
    # buscar_com_retry has guide A's loop and no choice of keys: a guide case says so.
    p = case["policy"]
    assert case["send_keys"] is None and not p["server_honours_keys"] and case["replayable"]
    try:
        r = recuo.buscar_com_retry(
            url,
            tentativas=p["max_attempts"],
            base=p["base_ms"] / 1000,
            maximo=p["cap_ms"] / 1000,
            prazo=None if p["deadline_ms"] is None else p["deadline_ms"] / 1000,
            metodo=case["method"],
            dados=_body_sync(case),
            cabecalhos=_headers(case),
            timeout=10,
        )
    except Exception as error:
        return Ended(error=error)
    return Ended(r.status, r.report)


def _send(client: str, case: dict[str, Any], url: str) -> Ended:
    if client == "requests":
        return _via_requests(case, url)
    if client == "httpx":
        return _via_httpx(case, url)
    if client == "httpx-async":
        return asyncio.run(_via_httpx_async(case, url))
    if client == "aiohttp":
        return asyncio.run(_via_aiohttp(case, url))
    assert client == "buscar_com_retry"
    return _via_buscar(case, url)


def _status_of(response: Any) -> int:
    for name in ("status_code", "status"):
        value = getattr(response, name, None)
        if isinstance(value, int):
            return value
    raise AssertionError(f"no status on {response!r}")


PLAYS = [(client, case) for case in DOC["requests"] if case["style"] == "client" for client in CLIENTS] + [
    ("buscar_com_retry", case) for case in DOC["requests"] if case["style"] == "guide"
]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    if not RECUO_BIN.is_file():
        pytest.skip(f"no recuo command at {RECUO_BIN} (make build-cli)")
    with scripted_serve(VECTORS / "http.json") as url:
        yield url


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("client", "case"), PLAYS, ids=[f"{c}:{case['id']}" for c, case in PLAYS])
def test_requests(client: str, case: dict[str, Any], server: str, caplog: pytest.LogCaptureFixture) -> None:
    path = f"py-{client}/{case['id']}"
    with caplog.at_level(logging.DEBUG, logger="recuo"):
        ended = _send(client, case, f"{server}/{path}")
    expect = case["expect"]

    # What the server saw: the attempts, and the key each carried.
    seen = script_log(server, path)
    assert len(seen) == expect["attempts"], seen
    assert all(s["method"] == case["method"] for s in seen)
    keys = [s["key"] for s in seen]
    if expect["key"] == "none":
        assert keys == [None] * len(seen)
    elif expect["key"] == "caller":
        assert keys == [case["callers_key"]] * len(seen)
    else:
        assert expect["key"] == "recuo"
        assert UUID_V4.match(keys[0] or ""), keys
        assert keys == [keys[0]] * len(seen)

    # Each attempt's decision, from the records.
    decisions = [
        r.recuo["decision"]  # type: ignore[attr-defined]
        for r in caplog.records
        if getattr(r, "recuo", {}).get("type") == "attempt"
    ]
    assert decisions == expect["decisions"]

    # How it ended.
    if expect["ending"] == "response":
        assert ended.error is None, repr(ended.error)
        assert ended.status == expect["status"]
        assert ended.report is not None
        assert ended.report.reason == expect["reason"]
        assert (ended.report.retry_at is not None) == expect["retry_at"]
    elif expect["ending"] == "error":
        error = ended.error
        assert error is not None and not isinstance(error, recuo.GiveUp), repr(error)
        assert _http.transport_kind(error) == expect["error"], repr(error)
    else:
        assert expect["ending"] == "give_up"
        error = ended.error
        assert isinstance(error, recuo.GiveUp), repr(error)
        assert isinstance(error, ERROR_BASES[client])
        assert error.reason == expect["reason"]
        assert (error.retry_at is not None) == expect["retry_at"]
        assert str(error) == expect["message"]
        assert error.report is not None and error.report.attempts == expect["attempts"]
        assert _status_of(error.response) == expect["status"]
        if client == "buscar_com_retry":  # the last response, its body read
            assert error.response.json()["status"] == expect["status"]


CUT = "a-get-whose-body-is-cut-short-is-retried"


def test_httpx_read_body_false_leaves_a_cut_body_to_the_caller(server: str) -> None:
    # The first event of the case is a 200 whose body breaks off: with read_body=False the
    # transport hands the response over unread, so the break reaches the caller, unretried.
    transport = recuo.httpx.RetryTransport(read_body=False, policy=recuo.Policy(max_attempts=3, base=0.001, cap=0.002))
    with httpx.Client(transport=transport) as client:
        with client.stream("GET", f"{server}/py-httpx-stream/{CUT}") as response:
            assert response.status_code == 200
            with pytest.raises(httpx.RemoteProtocolError):
                response.read()
    assert len(script_log(server, f"py-httpx-stream/{CUT}")) == 1
    with pytest.raises(TypeError, match="read_body must be a bool"):
        recuo.httpx.RetryTransport(read_body=1)  # type: ignore[arg-type]


def test_aiohttp_read_body_false_leaves_a_cut_body_to_the_caller(server: str) -> None:
    async def main() -> None:
        middleware = recuo.aiohttp.RetryMiddleware(read_body=False, policy=recuo.Policy(max_attempts=3, base=0.001, cap=0.002))
        async with aiohttp.ClientSession(middlewares=(middleware,)) as session:
            async with session.get(f"{server}/py-aiohttp-stream/{CUT}") as response:
                assert response.status == 200
                with pytest.raises(aiohttp.ClientPayloadError):
                    await response.read()

    asyncio.run(main())
    assert len(script_log(server, f"py-aiohttp-stream/{CUT}")) == 1
