"""recuo inside aiohttp (3.12 and newer): ``RetryMiddleware`` is client middleware whose every
request is one operation of the core's machine.

    async with aiohttp.ClientSession(middlewares=(recuo.aiohttp.RetryMiddleware(),)) as session:
        async with session.get(url) as response:
            ...

Each request is classified with its method and idempotency key; a key is set once in the
``Idempotency-Key`` header (by default for methods that are not idempotent) and sent on every
attempt; the default policy has a 30 s deadline; each attempt is bounded by what is
left of it; the response's body is read within the attempt (``response.read()``, ``text()``
and ``json()`` answer it; ``response.content`` has nothing left to stream), so a body cut
short counts as a dropped connection; a response is released before the wait; a streamed body (an
async iterator, a stream) is sent once; the server's wait is honoured; a wait past the
deadline raises ``recuo.aiohttp.GiveUp`` (an ``aiohttp.ClientError`` and a ``recuo.GiveUp``)
at once; attempts exhausted answer the last response. The report is
``response.recuo_report``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Callable, Iterable, Optional, Tuple

import aiohttp
from aiohttp import ClientHandlerType, ClientRequest, ClientResponse
from aiohttp.payload import BytesPayload

from . import _http
from ._recuo import Gate, Policy
from ._values import Report

if TYPE_CHECKING:
    from ._recuo import _Transport

__all__ = ["GiveUp", "report_of", "RetryMiddleware"]

GiveUp: type[_http.GiveUp] = _http.give_up_class(
    aiohttp.ClientError,
    __name__,
    """recuo gave up on the request (a wait past the deadline, or the deadline passed while
    the server was still answering): an ``aiohttp.ClientError`` and a ``recuo.GiveUp``
    (``response``, ``reason``, ``retry_at``, ``report``).""",
)


def _replayable(request: ClientRequest) -> bool:
    # bytes, text and JSON are BytesPayloads, which can be sent again; an async iterator or
    # a stream only once.
    body = request.body
    return isinstance(body, BytesPayload) or not body or getattr(body, "size", None) == 0



def report_of(response: ClientResponse) -> Optional[Report]:
    """The ``recuo.Report`` of the request that answered ``response`` (its
    ``recuo_report`` attribute), or ``None`` for a response recuo did not make."""
    report = getattr(response, "recuo_report", None)
    return report if isinstance(report, Report) else None


class _Send(_http.AsyncClient[ClientResponse]):
    def error_class(self) -> type[_http.GiveUp]:
        return GiveUp

    def __init__(self, request: ClientRequest, handler: ClientHandlerType, read_body: bool) -> None:
        self.request = request
        self.handler = handler
        self.read_body = read_body

    async def send(self, timeout: Optional[float]) -> ClientResponse:
        # The loop bounds the attempt by what is left of the deadline.
        response = await self.handler(self.request)
        if not self.read_body:
            return response
        try:
            await response.read()  # within the attempt: a body that breaks off is its failure
        except BaseException:
            response.release()
            raise
        return response

    def transport(self, exc: Exception) -> Optional[_Transport]:
        # A timeout of the session's own (its ClientTimeout) is one.
        return _http.transport_kind(exc) or ("timeout" if isinstance(exc, asyncio.TimeoutError) else None)

    def status(self, response: ClientResponse) -> int:
        return response.status

    def headers(self, response: ClientResponse) -> Iterable[Tuple[str, str]]:
        return response.headers.items()

    async def release(self, response: ClientResponse) -> None:
        try:
            await response.read()
        except Exception:  # a body that breaks off: releasing is all that is left
            pass
        finally:
            response.release()

    def finish(self, response: ClientResponse, report: Report) -> ClientResponse:
        response.recuo_report = report  # type: ignore[attr-defined]
        return response


class RetryMiddleware:
    """aiohttp client middleware that retries as recuo's core says: pass it in
    ``ClientSession(middlewares=(...,))`` or in one request's ``middlewares=``.

    ``policy`` (default: ``recuo.Policy.adapters()``: 5 attempts, a 30 s deadline, HTTP-date waits measured from the
    response's ``Date``); ``gate`` (a shared ``recuo.Gate``); ``idempotency_keys``: ``None``
    sets a key for methods that are not idempotent, ``True`` for every request, ``False``
    never (a request that carries the header already keeps its own, which makes it
    idempotent); ``server_honours_keys`` sets the policy's own setting of that name
    (``True``: the server honours keys, so that a key recuo made lets a POST's timeout or 500
    be retried; ``None`` keeps the policy's). ``read_body``: ``True`` (the default) reads each
    response's body within its attempt, so that a body cut short is retried as a dropped
    connection; ``False`` leaves ``response.content`` for the caller to stream — a body cut
    short then reaches the caller as aiohttp's own error, and is not retried. ``sleep``
    (seconds; an ``async def`` one is awaited) and ``seed`` are for tests."""

    def __init__(
        self,
        *,
        policy: Optional[Policy] = None,
        gate: Optional[Gate] = None,
        idempotency_keys: Optional[bool] = None,
        server_honours_keys: Optional[bool] = None,
        read_body: bool = True,
        sleep: Optional[Callable[[float], object]] = None,
        seed: Optional[int] = None,
    ) -> None:
        if not isinstance(read_body, bool):
            raise TypeError(f"read_body must be a bool, not {type(read_body).__name__}")
        self._settings = _http.Settings(policy, gate, idempotency_keys, server_honours_keys, sleep, seed)
        self._read_body = read_body

    async def __call__(self, request: ClientRequest, handler: ClientHandlerType) -> ClientResponse:
        r = _http.Request(self._settings, request.method, str(request.url), request.headers, _replayable(request))
        if r.key is not None:
            request.headers[r.header] = r.key
        return await _http.run_async(r, _Send(request, handler, self._read_body), self._settings.sleep)
