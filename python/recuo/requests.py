"""recuo inside requests: ``RetryAdapter`` is an ``HTTPAdapter`` (urllib3's own retries off)
whose every request is one operation of the core's machine.

    session = requests.Session()
    session.mount("https://", recuo.requests.RetryAdapter())
    session.mount("http://", recuo.requests.RetryAdapter())

Each request is classified with its method and idempotency key; a key is set once in the
``Idempotency-Key`` header (by default for methods that are not idempotent) and sent on every
attempt; the default policy has a 30 s deadline; each attempt's timeout is clipped to
what is left of it; the body is read within the attempt (unless ``stream=True``), so a body
cut short counts as a dropped connection; a response is released before the wait; a body that
is an iterator or a file is sent once; the server's wait is honoured; a wait past the deadline
raises ``recuo.requests.GiveUp`` (a ``requests.RequestException`` and a ``recuo.GiveUp``) at
once; attempts exhausted answer the last response. The report is ``response.recuo_report``.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Optional, Tuple, Union

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.poolmanager import PoolManager
from urllib3.util.retry import Retry

from . import _http
from ._recuo import Gate, Policy
from ._values import Report

__all__ = ["GiveUp", "report_of", "RetryAdapter"]

GiveUp: type[_http.GiveUp] = _http.give_up_class(
    requests.RequestException,
    __name__,
    """recuo gave up on the request (a wait past the deadline, or the deadline passed while
    the server was still answering): a ``requests.RequestException`` and a ``recuo.GiveUp``
    (``response``, ``reason``, ``retry_at``, ``report``).""",
)

_Timeout = Union[None, float, Tuple[Optional[float], Optional[float]]]


def _replayable(body: object) -> bool:
    # bytes and text can be sent again; an iterator, a generator or a file only once.
    return body is None or isinstance(body, (bytes, str))


def _clipped(timeout: Any, attempt: Optional[float]) -> Any:
    if attempt is None:
        return timeout
    if isinstance(timeout, tuple):
        return tuple(_http.clip(t, attempt) for t in timeout)
    return _http.clip(timeout, attempt)



def report_of(response: requests.Response) -> Optional[Report]:
    """The ``recuo.Report`` of the request that answered ``response`` (its
    ``recuo_report`` attribute), or ``None`` for a response recuo did not make."""
    report = getattr(response, "recuo_report", None)
    return report if isinstance(report, Report) else None


def _watch_conn(conn: Any) -> None:
    sock = getattr(conn, "sock", None)  # http.client lets go of it once a closing head is read
    if sock is not None:
        _http.watch(conn, lambda: sock)


class _ConnectWatched:
    """A urllib3 connection that tells the attempt in flight its socket once connected (shut
    if the deadline comes first)."""

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]  # bounded by the attempt's connect timeout
        _watch_conn(self)


class _WatchedHTTPConnection(_ConnectWatched, HTTPConnection):
    """urllib3's HTTP connection, watched."""


class _WatchedHTTPSConnection(_ConnectWatched, HTTPSConnection):
    """urllib3's HTTPS connection, watched."""


class _PoolWatched:
    """A urllib3 pool that tells the attempt in flight a connection kept from an earlier
    request when it hands it out."""

    def _get_conn(self, timeout: Optional[float] = None) -> Any:
        conn = super()._get_conn(timeout)  # type: ignore[misc]
        _watch_conn(conn)
        return conn


class _WatchedHTTPPool(_PoolWatched, HTTPConnectionPool):
    """urllib3's HTTP pool, its connections watched."""

    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(_PoolWatched, HTTPSConnectionPool):
    """urllib3's HTTPS pool, its connections watched."""

    ConnectionCls = _WatchedHTTPSConnection


def _watched(manager: PoolManager) -> PoolManager:
    manager.pool_classes_by_scheme = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}
    return manager


class _Send(_http.Client[requests.Response]):
    def error_class(self) -> type[_http.GiveUp]:
        return GiveUp

    def __init__(self, adapter: RetryAdapter, request: requests.PreparedRequest, kwargs: Mapping[str, Any]) -> None:
        self.adapter = adapter
        self.request = request
        self.kwargs = dict(kwargs)

    def send(self, timeout: Optional[float]) -> requests.Response:
        kwargs = dict(self.kwargs)
        kwargs["timeout"] = _clipped(kwargs.get("timeout"), timeout)
        response = HTTPAdapter.send(self.adapter, self.request, **kwargs)
        if not kwargs.get("stream"):
            # Read here, within the attempt and its deadline, what requests would read after
            # the adapter: a body that breaks off is the attempt's transport failure.
            try:
                response.content
            except BaseException:
                response.close()
                raise
        return response

    def status(self, response: requests.Response) -> int:
        return response.status_code

    def headers(self, response: requests.Response) -> Iterable[Tuple[str, str]]:
        return response.headers.items()

    def release(self, response: requests.Response) -> None:
        try:
            response.content  # read: the connection goes back to the pool
        except Exception:  # a body that breaks off: closing is all that is left
            pass
        finally:
            response.close()

    def finish(self, response: requests.Response, report: Report) -> requests.Response:
        response.recuo_report = report  # type: ignore[attr-defined]
        return response


class RetryAdapter(HTTPAdapter):
    """An ``HTTPAdapter`` that retries as recuo's core says; urllib3's retries are off
    (``Retry(0, read=False)``, no Retry-After of its own). Mount it on a ``Session``.

    ``policy`` (default: ``recuo.Policy.adapters()``: 5 attempts, a 30 s deadline, HTTP-date waits measured from the
    response's ``Date``); ``gate`` (a shared ``recuo.Gate``); ``idempotency_keys``: ``None``
    sets a key for methods that are not idempotent, ``True`` for every request, ``False``
    never (a request that carries the header already keeps its own, which makes it
    idempotent); ``server_honours_keys`` sets the policy's own setting of that name (``True``:
    the server honours keys, so that a key recuo made lets a POST's timeout or 500 be
    retried; ``None`` keeps the policy's). ``sleep`` and ``seed`` are for tests; the other
    arguments are ``HTTPAdapter``'s."""

    def __init__(
        self,
        *,
        policy: Optional[Policy] = None,
        gate: Optional[Gate] = None,
        idempotency_keys: Optional[bool] = None,
        server_honours_keys: Optional[bool] = None,
        sleep: Optional[Callable[[float], object]] = None,
        seed: Optional[int] = None,
        pool_connections: int = 10,
        pool_maxsize: int = 10,
        pool_block: bool = False,
    ) -> None:
        self._settings = _http.Settings(policy, gate, idempotency_keys, server_honours_keys, sleep, seed)
        off = Retry(total=0, read=False, redirect=False, respect_retry_after_header=False)
        super().__init__(
            pool_connections=pool_connections, pool_maxsize=pool_maxsize, max_retries=off, pool_block=pool_block
        )

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        _watched(self.poolmanager)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> PoolManager:
        return _watched(super().proxy_manager_for(proxy, **proxy_kwargs))

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: _Timeout = None,
        verify: Union[bool, str] = True,
        cert: Union[None, str, Tuple[str, str]] = None,
        proxies: Optional[Mapping[str, str]] = None,
    ) -> requests.Response:
        r = _http.Request(self._settings, request.method or "GET", request.url or "", request.headers, _replayable(request.body))
        if r.key is not None:
            request.headers[r.header] = r.key
        kwargs = {"stream": stream, "timeout": timeout, "verify": verify, "cert": cert, "proxies": proxies}
        return _http.run_sync(r, _Send(self, request, kwargs), self._settings.sleep)
