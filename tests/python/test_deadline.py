"""The deadline bounds the whole attempt in every Python HTTP surface: against a server that
trickles a 503's body, or its headers, one byte every 100 ms (``recuo serve --trickle``),
requests, httpx (sync and async), aiohttp and ``buscar_com_retry`` each end within the
deadline plus 1 s, with recuo's give-up — a subclass of the client's own error base — never
a ``ValueError``, a bare ``TimeoutError`` or the read error of a socket recuo shut."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

import aiohttp
import httpx
import pytest
import requests

import recuo
import recuo.aiohttp
import recuo.httpx
import recuo.requests
from serving import RECUO_BIN, recuo_serve

DEADLINE = 2.0
POLICY = recuo.Policy(max_attempts=5, base=1.0, cap=8.0, deadline=DEADLINE, use_date_header=True)

pytestmark = pytest.mark.skipif(not RECUO_BIN.exists(), reason=f"{RECUO_BIN} is not built (make build-cli)")


def _requests(url: str) -> Any:
    session = requests.Session()
    session.mount("http://", recuo.requests.RetryAdapter(policy=POLICY))
    with session:
        return session.get(url, timeout=30)


def _httpx(url: str) -> Any:
    with httpx.Client(transport=recuo.httpx.RetryTransport(policy=POLICY), timeout=30) as client:
        return client.get(url)


def _httpx_async(url: str) -> Any:
    async def main() -> Any:
        async with httpx.AsyncClient(transport=recuo.httpx.RetryTransport(policy=POLICY), timeout=30) as client:
            return await client.get(url)

    return asyncio.run(main())


def _aiohttp(url: str) -> Any:
    async def main() -> Any:
        async with aiohttp.ClientSession(middlewares=(recuo.aiohttp.RetryMiddleware(policy=POLICY),)) as session:
            async with session.get(url) as response:
                return response.status

    return asyncio.run(main())


def _buscar(url: str) -> Any:
    return recuo.buscar_com_retry(url, prazo=DEADLINE, timeout=30)


SURFACES: dict[str, tuple[Callable[[str], Any], type[BaseException], type[BaseException]]] = {
    "requests": (_requests, recuo.requests.GiveUp, requests.RequestException),
    "httpx": (_httpx, recuo.httpx.GiveUp, httpx.HTTPError),
    "httpx-async": (_httpx_async, recuo.httpx.GiveUp, httpx.HTTPError),
    "aiohttp": (_aiohttp, recuo.aiohttp.GiveUp, aiohttp.ClientError),
    "buscar_com_retry": (_buscar, recuo.GiveUp, OSError),
}


@pytest.mark.parametrize("trickle", ["body", "headers"])
@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_a_trickling_server_ends_at_the_deadline_with_recuos_give_up(surface: str, trickle: str) -> None:
    call, give_up, base = SURFACES[surface]
    with recuo_serve("--trickle", trickle, "--trickle-every", "100ms") as url:
        started = time.monotonic()
        with pytest.raises(recuo.GiveUp) as raised:
            call(url)
        took = time.monotonic() - started
    error = raised.value
    assert isinstance(error, give_up) and isinstance(error, base), type(error).__mro__
    assert took < DEADLINE + 1.0, f"{surface} against a trickled {trickle}: {took:.2f} s"
    assert error.report is not None and error.report.attempts >= 1
    assert error.reason in ("wait_exceeds_deadline",), error.reason
    print(f"{surface}, trickled {trickle}: gave up after {took:.2f} s ({error.reason})")


def test_an_endless_body_ends_at_the_deadline() -> None:
    # requests reads a body it is not asked to stream inside the adapter, within the deadline.
    with recuo_serve("--trickle", "endless") as url:
        started = time.monotonic()
        with pytest.raises(recuo.requests.GiveUp):
            _requests(url)
        took = time.monotonic() - started
    assert took < DEADLINE + 1.0, took
