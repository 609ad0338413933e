"""recuo inside httpx: ``RetryTransport`` wraps a transport (sync and async), and every request
through it is one operation of the core's machine.

    client = httpx.Client(transport=recuo.httpx.RetryTransport())
    async_client = httpx.AsyncClient(transport=recuo.httpx.RetryTransport())

Each request is classified with its method and idempotency key; a key is set once in the
``Idempotency-Key`` header (by default for methods that are not idempotent) and sent on every
attempt; the default policy has a 30 s deadline; each attempt's timeouts are clipped
to what is left of it; the response's body is read within the attempt (a transport cannot
tell a streamed request from another: ``client.stream`` gets the body already read, unless
``read_body=False``), so a body cut short counts as a dropped connection; a response is closed before the wait; a streamed
request body (an iterator) is sent once; the server's wait is honoured; a wait past the deadline raises
``recuo.httpx.GiveUp`` (an ``httpx.HTTPError`` and a ``recuo.GiveUp``) at once; attempts
exhausted answer the last response. The report is ``response.extensions["recuo.report"]``.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterable, Optional, Tuple, Union

import httpcore
import httpx

from . import _http
from ._recuo import Gate, Policy
from ._values import Report

__all__ = ["AsyncRetryTransport", "GiveUp", "RetryTransport", "report_of"]

GiveUp: type[_http.GiveUp] = _http.give_up_class(
    httpx.HTTPError,
    __name__,
    """recuo gave up on the request (a wait past the deadline, or the deadline passed while
    the server was still answering): an ``httpx.HTTPError`` and a ``recuo.GiveUp``
    (``response``, ``reason``, ``retry_at``, ``report``).""",
)

REPORT = "recuo.report"
#: The request extension that says which attempt is being sent (from 0), for the client's own
#: instrumentation (``recuo.otel.httpx_request_hook``).
ATTEMPT = "recuo.attempt"
"""The key of the report in a response's ``extensions``."""



def report_of(response: httpx.Response) -> Optional[Report]:
    """The ``recuo.Report`` of the request that answered ``response``
    (``response.extensions["recuo.report"]``), or ``None`` for a response recuo did not make."""
    report = response.extensions.get(REPORT)
    return report if isinstance(report, Report) else None


class _WatchedStream(httpcore.NetworkStream):
    """A connection's stream that tells the attempt in flight on this thread which socket
    it reads and writes (shut if the deadline comes first)."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def _watched(self) -> None:
        _http.watch(self, lambda: self._inner.get_extra_info("socket"))

    def read(self, max_bytes: int, timeout: Optional[float] = None) -> bytes:
        self._watched()
        return self._inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: Optional[float] = None) -> None:
        self._watched()
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: Optional[str] = None, timeout: Optional[float] = None) -> httpcore.NetworkStream:
        return _WatchedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _WatchedBackend(httpcore.NetworkBackend):
    """httpcore's network backend, its streams watched (``_WatchedStream``)."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: Optional[float] = None, local_address: Optional[str] = None, socket_options: Any = None) -> httpcore.NetworkStream:
        return _WatchedStream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: Optional[float] = None, socket_options: Any = None) -> httpcore.NetworkStream:
        return _WatchedStream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _watch_transport(transport: httpx.BaseTransport) -> None:
    """Watches the sockets of an ``httpx.HTTPTransport`` (its connection pool's network
    backend, before any connection is made); any other transport is left as it is."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if isinstance(backend, httpcore.NetworkBackend) and not isinstance(backend, _WatchedBackend):
        pool._network_backend = _WatchedBackend(backend)  # type: ignore[union-attr]


def _replayable(request: httpx.Request) -> bool:
    # Content given as bytes (or nothing) is a ByteStream, which can be sent again; an
    # iterator or a generator can be sent only once.
    return isinstance(request.stream, httpx.ByteStream)


class _Common:
    attempt: int = 0  # the attempt being sent (from 0): set by the loop (_http.Client's)

    def error_class(self) -> type[_http.GiveUp]:
        return GiveUp

    def __init__(self, request: httpx.Request) -> None:
        self.request = request
        self.extensions = dict(request.extensions)

    def status(self, response: httpx.Response) -> int:
        return response.status_code

    def headers(self, response: httpx.Response) -> Iterable[Tuple[str, str]]:
        return response.headers.multi_items()

    def finish(self, response: httpx.Response, report: Report) -> httpx.Response:
        response.extensions = {**response.extensions, REPORT: report}
        return response

    def prepared(self, timeout: Optional[float]) -> httpx.Request:
        """The request with each of its timeouts clipped to ``timeout`` (the attempt's)."""
        extensions = dict(self.extensions)
        extensions[ATTEMPT] = self.attempt
        if timeout is not None:
            given = extensions.get("timeout") or {}
            extensions["timeout"] = {
                name: _http.clip(given.get(name), timeout) for name in ("connect", "read", "write", "pool")
            }
        self.request.extensions = extensions
        return self.request


class _Sync(_Common, _http.Client[httpx.Response]):
    def __init__(self, transport: httpx.BaseTransport, request: httpx.Request, read_body: bool) -> None:
        super().__init__(request)
        self.inner = transport
        self.read_body = read_body

    def send(self, timeout: Optional[float]) -> httpx.Response:
        response = self.inner.handle_request(self.prepared(timeout))
        if not self.read_body:
            return response
        try:
            response.read()  # within the attempt: a body that breaks off is its failure
        except BaseException:
            response.close()
            raise
        return response

    def release(self, response: httpx.Response) -> None:
        try:
            response.read()
        finally:
            response.close()


class _Async(_Common, _http.AsyncClient[httpx.Response]):
    def __init__(self, transport: httpx.AsyncBaseTransport, request: httpx.Request, read_body: bool) -> None:
        super().__init__(request)
        self.inner = transport
        self.read_body = read_body

    async def send(self, timeout: Optional[float]) -> httpx.Response:
        response = await self.inner.handle_async_request(self.prepared(timeout))
        if not self.read_body:
            return response
        try:
            await response.aread()  # within the attempt: a body that breaks off is its failure
        except BaseException:
            await response.aclose()
            raise
        return response

    async def release(self, response: httpx.Response) -> None:
        try:
            await response.aread()
        finally:
            await response.aclose()


class RetryTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """An httpx transport that retries as recuo's core says, around ``transport`` (default:
    ``httpx.HTTPTransport()`` for a ``Client``, ``httpx.AsyncHTTPTransport()`` for an
    ``AsyncClient``, made at the first request).

    ``policy`` (default: ``recuo.Policy.adapters()``: 5 attempts, a 30 s deadline, HTTP-date waits measured from the
    response's ``Date``); ``gate`` (a shared ``recuo.Gate``, passed by every attempt);
    ``idempotency_keys``: ``None`` sets a key for methods that are not idempotent, ``True``
    for every request, ``False`` never (a request that carries the header already keeps its
    own, which makes it idempotent); ``server_honours_keys`` sets the policy's own setting of
    that name (``True``: the server honours keys, so that a key recuo made lets a POST's
    timeout or 500 be retried; ``None`` keeps the policy's).
    ``read_body``: ``True`` (the default) reads each response's body within its attempt, so
    that a body cut short is retried as a dropped connection; ``False`` leaves the body for
    the caller to stream (``client.stream`` over a large download) — a body cut short then
    reaches the caller as httpx's own error, and is not retried.
    ``sleep`` (seconds; an ``async def`` one is awaited) and ``seed`` are for tests."""

    def __init__(
        self,
        transport: Union[httpx.BaseTransport, httpx.AsyncBaseTransport, None] = None,
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
        self._transport = transport
        if isinstance(transport, httpx.BaseTransport):
            _watch_transport(transport)
        self._making = threading.Lock()

    def _sync_transport(self) -> httpx.BaseTransport:
        if self._transport is None:
            with self._making:  # one default transport, however many threads send at once
                if self._transport is None:
                    made = httpx.HTTPTransport()
                    _watch_transport(made)
                    self._transport = made
        transport = self._transport
        if not isinstance(transport, httpx.BaseTransport):
            raise TypeError("this RetryTransport wraps an async transport: use it with httpx.AsyncClient")
        return transport

    def _request(self, request: httpx.Request) -> _http.Request:
        r = _http.Request(self._settings, request.method, str(request.url), request.headers, _replayable(request))
        if r.key is not None:
            request.headers[r.header] = r.key
        return r

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        transport = self._sync_transport()
        return _http.run_sync(self._request(request), _Sync(transport, request, self._read_body), self._settings.sleep)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._transport is None:
            self._transport = httpx.AsyncHTTPTransport()
        transport = self._transport
        if not isinstance(transport, httpx.AsyncBaseTransport):
            raise TypeError("this RetryTransport wraps a sync transport: use it with httpx.Client")
        return await _http.run_async(self._request(request), _Async(transport, request, self._read_body), self._settings.sleep)

    def close(self) -> None:
        if isinstance(self._transport, httpx.BaseTransport):
            self._transport.close()

    async def aclose(self) -> None:
        if isinstance(self._transport, httpx.AsyncBaseTransport):
            await self._transport.aclose()


AsyncRetryTransport = RetryTransport
"""The same class: one ``RetryTransport`` serves ``httpx.Client`` and ``httpx.AsyncClient``."""
