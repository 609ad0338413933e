"""One way to send a list of requests through each HTTP client recuo plugs into — httpx (sync
and async), requests, aiohttp, and ``recuo.buscar_com_retry`` — so that a test can be run
against each of them alike. Each answers, per request, an ``Answer``: the status, recuo's
report and the idempotency key sent (``None`` when none was, or for ``buscar_com_retry``,
whose response does not show it)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, Callable, Optional

import aiohttp
import httpx
import requests

import recuo
import recuo.aiohttp
import recuo.httpx
import recuo.requests

CLIENTS = ["httpx", "httpx-async", "requests", "aiohttp", "buscar_com_retry"]

# What each client's own error base is: recuo's GiveUp is an instance of it.
ERROR_BASES: dict[str, type[BaseException]] = {
    "httpx": httpx.HTTPError,
    "httpx-async": httpx.HTTPError,
    "requests": requests.RequestException,
    "aiohttp": aiohttp.ClientError,
    "buscar_com_retry": OSError,  # urllib.error.URLError
}


@dataclass
class Answer:
    status: int
    report: recuo.Report
    key: Optional[str]


@dataclass
class Call:
    method: str
    url: str
    body: Optional[bytes] = None


def _report(report: Optional[recuo.Report]) -> recuo.Report:
    assert report is not None
    return report


def _header(headers: Any) -> Optional[str]:
    value = headers.get("Idempotency-Key")
    return None if value is None else str(value)


def send_all(client: str, calls: list[Call], *, workers: int = 5, **options: Any) -> list[Answer]:
    """Sends ``calls`` through ``client``, ``workers`` at a time, with the adapter's
    ``options`` (``policy``, ``gate``, ...); every request is answered (or raises)."""
    if client in ("httpx-async", "aiohttp"):
        return asyncio.run(_send_async(client, calls, workers, options))
    with ExitStack() as resources:
        send = _sync_sender(client, options, resources)
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(send, calls))


def _sync_sender(client: str, options: dict[str, Any], resources: ExitStack) -> Callable[[Call], Answer]:
    if client == "httpx":
        http = resources.enter_context(httpx.Client(transport=recuo.httpx.RetryTransport(**options), timeout=10))

        def via_httpx(call: Call) -> Answer:
            r = http.request(call.method, call.url, content=call.body)
            return Answer(r.status_code, _report(recuo.httpx.report_of(r)), _header(r.request.headers))

        return via_httpx
    if client == "requests":
        session = resources.enter_context(requests.Session())
        session.mount("http://", recuo.requests.RetryAdapter(**options))

        def via_requests(call: Call) -> Answer:
            r = session.request(call.method, call.url, data=call.body, timeout=10)
            return Answer(r.status_code, _report(recuo.requests.report_of(r)), _header(r.request.headers))

        return via_requests
    assert client == "buscar_com_retry"
    policy: Optional[recuo.Policy] = options.get("policy")
    extra: dict[str, Any] = {"gate": options.get("gate")}
    if policy is not None:
        extra.update(tentativas=policy.max_attempts, base=policy.base, maximo=policy.cap, prazo=policy.deadline)

    def via_buscar(call: Call) -> Answer:
        r = recuo.buscar_com_retry(call.url, metodo=call.method, dados=call.body, **extra)
        assert r.report is not None
        return Answer(r.status, r.report, None)  # the key sent is not in the response

    return via_buscar


async def _send_async(client: str, calls: list[Call], workers: int, options: dict[str, Any]) -> list[Answer]:
    limit = asyncio.Semaphore(workers)
    if client == "httpx-async":
        async with httpx.AsyncClient(transport=recuo.httpx.RetryTransport(**options), timeout=10) as http:

            async def via_httpx(call: Call) -> Answer:
                async with limit:
                    r = await http.request(call.method, call.url, content=call.body)
                    return Answer(r.status_code, _report(recuo.httpx.report_of(r)), _header(r.request.headers))

            return list(await asyncio.gather(*(via_httpx(c) for c in calls)))
    middleware = recuo.aiohttp.RetryMiddleware(**options)
    async with aiohttp.ClientSession(middlewares=(middleware,)) as session:

        async def via_aiohttp(call: Call) -> Answer:
            async with limit:
                async with session.request(call.method, call.url, data=call.body) as r:
                    await r.read()
                    return Answer(r.status, _report(recuo.aiohttp.report_of(r)), _header(r.request_info.headers))

        return list(await asyncio.gather(*(via_aiohttp(c) for c in calls)))
