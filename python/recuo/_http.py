"""What the HTTP adapters and ``recuo.retry`` share: reading an HTTP client's exceptions, the
adapters' default policy and idempotency keys, ``recuo.GiveUp``, and the loop that drives the
core's operation machine for one request.

Nothing here decides: which key a request carries and whether it counts as idempotent (the
request's plan, made with its operation), whether an outcome is worth another attempt, how
long to wait, when to stop and why, how the end surfaces and the give-up's message are the
core's. This module reads what happened — a status and headers, or a transport failure of one
kind — and does what the machine answers: pass the gate, send, close a response before the
wait, sleep, and end as ``Operation.ending`` says. The gate is the machine's own gate step
(``Operation.poll_gate``): look, sleep as long as the machine says, look again; the machine
holds the place in flight until the attempt ends. The clients are duck-typed: no module here
imports requests, httpx, aiohttp or urllib3.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import socket
import threading
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Generic, Iterable, Optional, Tuple, TypeVar, Union

from ._recuo import (
    Gate,
    Operation,
    Policy,
    Step,
    Verdict,
    _attempt_pool,
    _monotonic_ms,
    _request_operation,
    classify,
)
from ._values import Report

_R = TypeVar("_R")

if TYPE_CHECKING:
    from ._recuo import _Last, _Style
    from ._recuo import _Transport as _Kind  # a transport failure's kind

DEFAULT_POLICY = Policy.adapters()
"""The adapters' default, the core's: the policy of “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”
(5 attempts, at most 4 retries, 1 s to 8 s of full jitter, a 30 s deadline), with HTTP-date
waits measured from the response's own ``Date``."""


class GiveUp(Exception):
    """recuo gave up on a request: the wait the server asked for (or the backoff) does not fit
    the deadline (no sleep, at once), the deadline passed while the server was still
    answering, no attempt could be made, or — for ``recuo.buscar_com_retry`` — the last
    attempt answered 429 or 5xx. ``response`` is the last response when there is one (its body
    read, the connection released), ``reason`` why (``"wait_exceeds_deadline"``,
    ``"attempts_exhausted"``, ...), ``retry_at`` the Unix time (seconds) from which a retry
    would be allowed, ``report`` the ``recuo.Report``. Its message says it all in one line:
    ``recuo gave up after 1 attempt (wait_exceeds_deadline): HTTP 429; a retry is allowed in
    3600 s``.

    The adapters raise a subclass that is also their client's own error base
    (``recuo.httpx.GiveUp`` is an ``httpx.HTTPError``, ``recuo.requests.GiveUp`` a
    ``requests.RequestException``, ``recuo.aiohttp.GiveUp`` an ``aiohttp.ClientError``,
    ``recuo.buscar_com_retry``'s a ``urllib.error.URLError``), so ``except`` clauses already
    written catch it."""

    response: Any
    reason: str
    retry_at: Optional[float]
    report: Optional[Report]

    def __init__(
        self,
        message: str,
        *,
        response: Any = None,
        reason: str = "wait_exceeds_deadline",
        retry_at: Optional[float] = None,
        report: Optional[Report] = None,
    ) -> None:
        super().__init__(message)
        self.response = response
        self.reason = reason
        self.retry_at = retry_at
        self.report = report

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.reason


GiveUp.__module__ = "recuo"  # its public name: recuo.GiveUp


def give_up_class(base: type, module: str, doc: str) -> type:
    """``GiveUp`` that is also an instance of ``base`` (a client's error base), made when the
    adapter's module is imported."""
    return type("GiveUp", (GiveUp, base), {"__module__": module, "__doc__": doc})


# --- Reading the clients' exceptions (duck-typed) -----------------------------------------

# A transport failure's kind by the names of its class and its bases, most specific first.
# The key is (library, class name); the library is the first part of the class's module.
_TRANSPORT_KINDS: dict[tuple[str, str], _Kind] = {
    # httpx
    ("httpx", "ConnectTimeout"): "connect",
    ("httpx", "PoolTimeout"): "connect",
    ("httpx", "ConnectError"): "connect",
    ("httpx", "UnsupportedProtocol"): "connect",
    ("httpx", "ProxyError"): "connect",
    ("httpx", "ReadTimeout"): "timeout",
    ("httpx", "WriteTimeout"): "timeout",
    ("httpx", "TimeoutException"): "timeout",
    ("httpx", "RemoteProtocolError"): "reset",
    ("httpx", "ReadError"): "reset",
    ("httpx", "WriteError"): "reset",
    ("httpx", "CloseError"): "reset",
    ("httpx", "TransportError"): "other",
    # requests (and urllib3 below it)
    ("requests", "SSLError"): "tls",
    ("requests", "ConnectTimeout"): "connect",
    ("requests", "ProxyError"): "connect",
    ("requests", "InvalidURL"): "connect",
    ("requests", "ReadTimeout"): "timeout",
    ("requests", "Timeout"): "timeout",
    ("requests", "ChunkedEncodingError"): "reset",
    ("requests", "ContentDecodingError"): "other",
    ("requests", "ConnectionError"): "connect",  # refined below: urllib3's reason
    ("urllib3", "SSLError"): "tls",
    ("urllib3", "NameResolutionError"): "connect",
    ("urllib3", "NewConnectionError"): "connect",
    ("urllib3", "ConnectTimeoutError"): "connect",
    ("urllib3", "ReadTimeoutError"): "timeout",
    ("urllib3", "ProtocolError"): "reset",
    ("urllib3", "IncompleteRead"): "reset",
    # aiohttp
    ("aiohttp", "ClientConnectorCertificateError"): "tls",
    ("aiohttp", "ClientSSLError"): "tls",
    ("aiohttp", "ConnectionTimeoutError"): "connect",
    ("aiohttp", "ClientConnectorError"): "connect",
    ("aiohttp", "ClientProxyConnectionError"): "connect",
    ("aiohttp", "SocketTimeoutError"): "timeout",
    ("aiohttp", "ServerTimeoutError"): "timeout",
    ("aiohttp", "ServerDisconnectedError"): "reset",
    ("aiohttp", "ClientPayloadError"): "reset",
    ("aiohttp", "ClientOSError"): "reset",
    ("aiohttp", "ServerConnectionError"): "reset",
    # the standard library's HTTP client
    ("http", "RemoteDisconnected"): "reset",
    ("http", "IncompleteRead"): "reset",
}
_LIBRARIES = frozenset(lib for lib, _ in _TRANSPORT_KINDS) | {"aiohttp", "urllib"}


def _library(cls: type) -> str:
    return cls.__module__.partition(".")[0]


def _kind_by_class(exc: BaseException) -> Optional[_Kind]:
    for cls in type(exc).__mro__:
        kind = _TRANSPORT_KINDS.get((_library(cls), cls.__name__))
        if kind is not None:
            return kind
    return None


def _os_error_kind(error: BaseException) -> _Kind:
    """An OS error met while connecting and sending (urllib's ``URLError.reason``)."""
    if _library(type(error)) == "ssl" and type(error).__name__ == "SSLCertVerificationError":
        return "tls"
    return "connect"


def transport_kind(exc: BaseException) -> Optional[_Kind]:
    """The transport kind of one of the HTTP clients' transport exceptions
    (``"connect"``, ``"tls"``, ``"timeout"``, ``"reset"``, ``"other"``), or ``None`` for an
    exception that is not one of theirs."""
    cls = type(exc)
    library = _library(cls)
    if library == "urllib" and cls.__name__ == "URLError":
        reason = getattr(exc, "reason", None)
        return _os_error_kind(reason) if isinstance(reason, BaseException) else "connect"
    if library not in _LIBRARIES:
        return None
    kind = _kind_by_class(exc)
    if kind is None:
        return None
    if library == "requests" and kind == "connect" and cls.__name__ == "ConnectionError":
        # requests wraps urllib3's error, whose reason says whether anything was sent.
        for inner in (*exc.args[:1], getattr(exc.args[0], "reason", None) if exc.args else None):
            if isinstance(inner, BaseException):
                found = _kind_by_class(inner)
                if found is not None and found != "other":
                    kind = found
        return kind
    if library == "httpx" and kind == "connect":
        cause = exc.__cause__ or exc.__context__
        if cause is not None and type(cause).__name__ == "SSLCertVerificationError":
            return "tls"
    return kind


def _status_of(obj: Any) -> Optional[int]:
    for name in ("status_code", "status", "code"):
        value = getattr(obj, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _method_of(exc: BaseException, response: Any) -> Optional[str]:
    for holder in (response, exc):
        try:
            request = getattr(holder, "request", None)
        except RuntimeError:  # httpx: an error raised with no request
            request = None
        method = getattr(request, "method", None)
        if isinstance(method, str):
            return method
    info = getattr(exc, "request_info", None)  # aiohttp
    method = getattr(info, "method", None)
    return method if isinstance(method, str) else None


def response_of(exc: BaseException) -> Optional[Tuple[int, Any, Optional[str]]]:
    """``(status, headers, method)`` of an exception that carries an HTTP response:
    requests' ``HTTPError`` and httpx's ``HTTPStatusError`` (``.response``), urllib's
    ``HTTPError`` (``.code``, ``.headers``), aiohttp's ``ClientResponseError`` (``.status``,
    ``.headers``, ``.request_info``). ``None`` for any other exception."""
    response = getattr(exc, "response", None)
    if response is not None:
        status = _status_of(response)
        if status is not None:
            return status, getattr(response, "headers", None), _method_of(exc, response)
    cls = type(exc)
    library = _library(cls)
    if (library == "urllib" and cls.__name__ == "HTTPError") or (
        library == "aiohttp" and any(c.__name__ == "ClientResponseError" for c in cls.__mro__)
    ):
        status = _status_of(exc)
        if status is not None:
            return status, getattr(exc, "headers", None), _method_of(exc, None)
    return None


def classify_failure(exc: Exception, policy: Policy, method: Optional[str]) -> Union[Verdict, bool]:
    """``recuo.retry``'s default classifier: an exception that carries an HTTP response is
    judged by its status and headers, a transport exception of the HTTP clients by its kind
    (``recuo.classify``, the core's table, with the request's method — the response's,
    else ``request=``'s, else GET); every other ``Exception`` is retried."""
    try:
        found = response_of(exc)
        kind = None if found is not None else transport_kind(exc)
    except Exception:  # an exception whose attributes cannot be read has no HTTP meaning
        return True
    if found is not None:
        status, headers, sent = found
        try:
            return classify(status, method=sent or method or "GET", headers=headers, policy=policy)
        except TypeError:  # headers of a shape classify does not read
            return classify(status, method=sent or method or "GET", policy=policy)
    if kind is not None:
        return classify(error=kind, method=_method_of(exc, None) or method or "GET", policy=policy)
    return True


# --- One request, one operation -----------------------------------------------------------


def _now_ms() -> int:
    """The monotonic clock in whole milliseconds (the core's reading)."""
    return _monotonic_ms()


def _unix_ms() -> int:
    return time.time_ns() // 1_000_000


class Settings:
    """An adapter's settings, checked once. ``server_honours_keys`` (``None``: the policy's)
    only sets the policy's own setting."""

    __slots__ = ("policy", "header", "gate", "keys", "sleep", "seed")

    def __init__(
        self,
        policy: Optional[Policy],
        gate: Optional[Gate],
        keys: Optional[bool],
        server_honours_keys: Optional[bool],
        sleep: Optional[Callable[[float], object]],
        seed: Optional[int],
    ) -> None:
        if policy is not None and not isinstance(policy, Policy):
            raise TypeError(f"policy must be a recuo.Policy or None, not {type(policy).__name__}")
        if gate is not None and not isinstance(gate, Gate):
            raise TypeError(f"gate must be a recuo.Gate or None, not {type(gate).__name__}")
        if keys is not None and not isinstance(keys, bool):
            raise TypeError(f"idempotency_keys must be a bool or None, not {type(keys).__name__}")
        if server_honours_keys is not None and not isinstance(server_honours_keys, bool):
            raise TypeError(f"server_honours_keys must be a bool or None, not {type(server_honours_keys).__name__}")
        if sleep is not None and not callable(sleep):
            raise TypeError(f"sleep must be callable, not {type(sleep).__name__}")
        policy = DEFAULT_POLICY if policy is None else policy
        if server_honours_keys is not None:
            policy = policy.with_server_honours_keys(server_honours_keys)
        self.policy = policy
        self.header = policy.idempotency_header
        self.gate = gate
        self.keys = keys
        self.sleep = sleep
        self.seed = seed


class Request:
    """One request's operation, made with the core's plan of the request (the key it
    carries, whether it counts as idempotent, one attempt for a body that cannot be sent
    again); ``key`` is recuo's key to set in ``header`` on every attempt, or ``None``."""

    __slots__ = ("op", "token", "header", "key")

    def __init__(
        self,
        settings: Settings,
        method: str,
        url: str,
        headers: Iterable[Any],
        replayable: bool,
    ) -> None:
        policy = settings.policy
        self.op, self.token, self.key = _request_operation(
            policy, settings.seed, settings.gate, method, url, headers, settings.keys, replayable
        )
        self.header = settings.header

    def end(self) -> None:
        if self.token is not None:
            _attempt_pool.reset(self.token)
            self.token = None


def gate_sync(op: Operation) -> Step:
    """The machine's gate step (``"enter"``) for a blocking adapter: look at the gate, sleep as
    long as the machine says (``time.sleep``: the GIL released, Ctrl-C answered), look again —
    until it answers the attempt's ``"call"`` or gives up. A look that may ask a Redis server
    releases the GIL."""
    while True:
        step = op.poll_gate(_now_ms())
        if step.kind != "wait":
            return step
        time.sleep(step.delay or 0.0)


async def gate_async(op: Operation, step: Step) -> Step:
    """``gate_sync`` for asyncio: the waits are ``asyncio.sleep``, and a look at a gate on a
    Redis server runs in the loop's default executor (``look_remote``). A cancelled task
    gives up ``"cancelled"`` (what the operation holds of the gate goes back) and propagates."""
    until = step.until_ms
    while True:
        polled = await look_remote(op, until) if op._polls_remote else op.poll_gate(_now_ms())
        if polled.kind != "wait":
            return polled
        try:
            await asyncio.sleep(polled.delay or 0.0)
        except asyncio.CancelledError:
            op.cancel()
            op.poll_gate(_now_ms())
            op._log_records()
            raise


async def asked(op: Operation, step: Callable[..., Step], *args: Any, **kwargs: Any) -> Step:
    """A step of ``op`` that may ask a Redis server (the gate's budget or limit is on Redis: a
    first attempt counted, a place given back): taken from the loop's default executor then
    (the step releases the GIL while it asks), so the round trip never blocks the event loop;
    any other step is taken at once. Each such call ends by the operation's deadline."""
    if not op._asks_remote:
        return step(*args, **kwargs)
    taken = asyncio.get_running_loop().run_in_executor(None, functools.partial(step, *args, **kwargs))
    try:
        return await asyncio.shield(taken)
    except asyncio.CancelledError:
        # The step runs on in its thread, holding the operation, until its call ends (by the
        # operation's deadline): let it end before the cancellation goes on, so that what the
        # caller does with the operation next finds it free.
        while not taken.done():
            try:
                await asyncio.shield(taken)
            except asyncio.CancelledError:
                continue
            except Exception:
                break
        raise


_ROUND_TRIP = 0.1
"""The least time a look at a Redis gate is given, in seconds (recuo-redis's shortest call)."""


async def look_remote(op: Operation, until: Optional[int]) -> Step:
    """A look at a gate on a Redis server (``op.poll_gate``), from the loop's default executor
    (the look releases the GIL), so a round trip never blocks the event loop. The wait for it
    ends by the operation's deadline (``until``, on ``_now_ms``'s clock): a server that has
    not answered by then raises ``ConnectionError``, as a blocking wait cut by the deadline
    does. When the wait for the look ends early (that, or a cancelled task), the operation is
    the look's until it ends: what it took of the gate then goes back (``_abandon``)."""
    looked = asyncio.get_running_loop().run_in_executor(None, op.poll_gate, _now_ms())
    # At least a round trip's worth, as the Redis store gives a call cut by a deadline.
    timeout = None if until is None else max(_ROUND_TRIP, (until - _now_ms()) / 1000)
    try:
        return await asyncio.wait_for(asyncio.shield(looked), timeout)
    except asyncio.TimeoutError:
        looked.add_done_callback(functools.partial(_after_look, op))
        raise ConnectionError(
            "Redis: no complete answer within the operation's deadline (the gate's server did "
            "not answer; no attempt was made)"
        ) from None
    except asyncio.CancelledError:
        looked.add_done_callback(functools.partial(_after_look, op))
        raise


def _after_look(op: Operation, looked: asyncio.Future[Step]) -> None:
    """A look at the gate its loop stopped waiting for has ended: what the operation holds of
    the gate goes back at once (the loop has raised already)."""
    if not looked.cancelled():
        looked.exception()  # retrieved: the loop raised its own error
    op._abandon(_now_ms())


TELEMETRY = False
"""Whether ``recuo.otel`` takes every record (then a first success needs its machine too)."""


class _Answers(Generic[_R]):
    """What every adapter reads of a response, and the ``GiveUp`` it raises."""

    request: Any = None
    """The client's request, set on the ``GiveUp`` raised (httpx's, requests')."""

    attempt: int = 0
    """The number of the attempt being sent (from 0): what an adapter may show its client's
    own instrumentation (httpx's request extension ``recuo.attempt``)."""

    style: _Style = "client"
    """The contract kept with the caller: ``"client"`` (the client's own: the last response
    is returned) or ``"guide"`` (``buscar_com_retry``, the function of “Como repetir requisições com backoff exponencial (retry)”,
    which gives up on a final 429 or 5xx)."""

    def error_class(self) -> type[GiveUp]:
        """The client's ``GiveUp`` (``recuo.GiveUp`` and the client's own error base)."""
        return GiveUp

    def status(self, response: _R) -> int:
        raise NotImplementedError

    def headers(self, response: _R) -> Iterable[Tuple[str, str]]:
        raise NotImplementedError

    def finish(self, response: _R, report: Report) -> _R:
        """The response handed back to the caller, its report attached."""
        raise NotImplementedError

    def give_up(self, message: str, response: Optional[_R], reason: str, retry_at: Optional[float], report: Report) -> Exception:
        if response is not None:
            self.finish(response, report)
        error = self.error_class()(message, response=response, reason=reason, retry_at=retry_at, report=report)
        if self.request is not None:
            error.request = self.request  # type: ignore[attr-defined]
        return error

    def transport(self, exc: Exception) -> Optional[_Kind]:
        """The transport kind of an exception ``send`` raised; ``None`` re-raises it."""
        return transport_kind(exc)


class Client(_Answers[_R]):
    """How a blocking adapter sends one attempt and releases its answer (one per request)."""

    def send(self, timeout: Optional[float]) -> _R:
        raise NotImplementedError

    def release(self, response: _R) -> None:
        """Reads what is left of the body and gives the connection back."""
        raise NotImplementedError


class AsyncClient(_Answers[_R]):
    """``Client`` for asyncio."""

    async def send(self, timeout: Optional[float]) -> _R:
        raise NotImplementedError

    async def release(self, response: _R) -> None:
        raise NotImplementedError


# --- The deadline over a whole attempt ----------------------------------------------------
#
# A per-read timeout is reset by every byte: a server that trickles its headers or a body one
# byte a second holds such a client for ever. So each attempt of an operation with a deadline
# is watched: a blocking one by a timer that shuts the sockets the attempt uses (registered by
# the adapters' hooks with ``watch``) when the deadline comes, an asyncio one by
# ``asyncio.wait_for``. Either way the attempt ends at the deadline, and the caller gets
# recuo's give-up — never the read error of a socket recuo shut.

_watching = threading.local()


class _Watch:
    """The sockets of the attempt in flight on one thread, shut when its time is up."""

    __slots__ = ("sockets", "fired", "timer", "lock")

    def __init__(self, seconds: float) -> None:
        self.sockets: dict[int, Callable[[], Any]] = {}
        self.fired = False
        self.lock = threading.Lock()
        self.timer = threading.Timer(max(0.0, seconds), self._fire)
        self.timer.daemon = True
        self.timer.start()

    def add(self, key: int, sock: Callable[[], Any]) -> None:
        with self.lock:
            if not self.fired:
                self.sockets[key] = sock
                return
        _shut(sock())

    def _fire(self) -> None:
        with self.lock:
            self.fired = True
            found = list(self.sockets.values())
        for sock in found:
            _shut(sock())

    def stop(self) -> None:
        self.timer.cancel()


def _shut(sock: Any) -> None:
    """Ends every read and write of ``sock`` now, from any thread (a blocked ``recv`` returns)."""
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except (OSError, ValueError, AttributeError):
        pass  # closed already, or not a socket


def watch(key: object, sock: Callable[[], Any]) -> None:
    """Registers the socket ``sock()`` (read when the time is up: a connection may make it
    later) with the attempt in flight on this thread, if it has a deadline; ``key`` (the
    connection, say) is registered once. The adapters' hooks call it as a connection is
    taken or read."""
    current: Optional[_Watch] = getattr(_watching, "watch", None)
    if current is not None:
        current.add(id(key), sock)


class _Watched:
    """The attempt's watch, current on this thread while the attempt (and the reading of the
    body recuo reads) lasts."""

    __slots__ = ("watch", "outer")

    def __init__(self, seconds: Optional[float]) -> None:
        self.watch = None if seconds is None else _Watch(seconds)
        self.outer: Optional[_Watch] = None

    def __enter__(self) -> _Watched:
        self.outer = getattr(_watching, "watch", None)
        _watching.watch = self.watch
        return self

    def __exit__(self, *exc: object) -> None:
        _watching.watch = self.outer
        if self.watch is not None:
            self.watch.stop()

    @property
    def fired(self) -> bool:
        return self.watch is not None and self.watch.fired


def _late(op: Operation, client: Any, exc: Optional[BaseException]) -> Any:
    """The attempt ran into the deadline: the machine is told it timed out (for its records
    and report), and the caller gets the ending the core answers for an attempt cut so
    (recuo's give-up, never the read error of a socket recuo shut)."""
    step = op.responded(_now_ms(), error="timeout")
    if step.kind not in ("done", "gave_up"):
        op.slept(_now_ms())  # the deadline is past: the machine gives up
    op._log_records()
    return _ended(op, client, None, exc if isinstance(exc, Exception) else None, "late")


def _ended(op: Operation, client: Any, response: Any, error: Optional[Exception], last: _Last) -> Any:
    """The machine gave up, its last attempt having come to ``last``: as the core's
    ``Operation.ending`` says, the last response as the client would have answered it, the
    client's error raised again, or ``GiveUp`` with the core's message."""
    ending = op.ending(client.style, last)
    report = op.report
    if ending == "response":
        return client.finish(response, report)
    if ending == "error":
        raise error  # type: ignore[misc]
    message = op.give_up_message(_now_ms(), last)
    raise client.give_up(message, response, report.reason, report.retry_at, report) from error


async def _told_async(
    op: Operation, client: Any, response: Any, error: Optional[Exception]
) -> Tuple[Step, _Last]:
    """``_told`` on an event loop: the machine told off the loop when it may ask Redis."""
    if response is not None:
        status: int = client.status(response)
        headers = list(client.headers(response))
        return await asked(op, op.responded, _now_ms(), status, headers=headers), status
    assert error is not None
    kind = client.transport(error)
    if kind is None:
        raise error
    return await asked(op, op.responded, _now_ms(), error=kind), kind


def _told(op: Operation, client: Any, response: Any, error: Optional[Exception]) -> Tuple[Step, _Last]:
    """Tells the machine what the attempt came to — the response's status and headers, or the
    transport failure's kind — and answers its step and that outcome. An exception that is not
    one of the client's transport failures is raised again."""
    if response is not None:
        status: int = client.status(response)
        return op.responded(_now_ms(), status, headers=list(client.headers(response))), status
    assert error is not None
    kind = client.transport(error)
    if kind is None:
        raise error
    return op.responded(_now_ms(), error=kind), kind


def run_sync(request: Request, client: Client[_R], sleep: Optional[Callable[[float], object]]) -> _R:
    """One request as the operation machine says, blocking: pass the gate, send with the
    attempt's timeout, tell the machine the status and headers (or the transport kind), close
    a response before the wait, sleep."""
    op = request.op
    response: Optional[_R] = None
    error: Optional[Exception] = None
    last: _Last = None  # what the last attempt came to: None (no attempt), a status, a kind
    try:
        step = op.start(_now_ms(), _unix_ms())
        while True:
            op._log_records()
            kind = step.kind
            if kind == "enter":
                step = gate_sync(op)
            elif kind == "call":
                timeout = None if step.timeout_ms is None else step.timeout_ms / 1000
                client.attempt = step.attempt or 0
                with _Watched(timeout) as watched:
                    try:
                        response, error = client.send(timeout), None
                    except Exception as exc:
                        if watched.fired:
                            return _late(op, client, exc)  # type: ignore[no-any-return]
                        response, error = None, exc
                    step, last = _told(op, client, response, error)
                    if step.kind not in ("done", "gave_up") and response is not None:
                        try:
                            client.release(response)  # before the wait and the next attempt
                        except Exception:
                            if not watched.fired:
                                raise
                        response = None
                    late = watched.fired
                if late and step.kind == "sleep":
                    step = op.slept(_now_ms())  # the body took the time: no wait, no attempt
            elif kind == "sleep":
                if step.delay_ms:
                    (sleep or time.sleep)(step.delay or 0.0)
                step = op.slept(_now_ms())
            elif kind == "done":
                op._log_records()
                assert response is not None
                return client.finish(response, op.report)
            else:
                op._log_records()
                if response is not None and op.ending(client.style, last) == "give_up":
                    client.release(response)  # the give-up carries it, its body read
                return _ended(op, client, response, error, last)  # type: ignore[no-any-return]
    finally:
        # Ended by an exception of its own (not an attempt's failure): what the operation
        # holds of the gate goes back now.
        op._abandon(_now_ms())
        request.end()


async def run_async(request: Request, client: AsyncClient[_R], sleep: Optional[Callable[[float], object]]) -> _R:
    """``run_sync`` for asyncio: the gate and the sleep are awaited; a cancelled task cancels
    the operation (``"cancelled"``) and propagates."""
    op = request.op
    response: Optional[_R] = None
    error: Optional[Exception] = None
    last: _Last = None  # what the last attempt came to: None (no attempt), a status, a kind
    owned = True  # false once the gate step ended by an exception: it settled the operation
    try:
        step = await asked(op, op.start, _now_ms(), _unix_ms())
        while True:
            op._log_records()
            kind = step.kind
            if kind == "enter":
                try:
                    step = await gate_async(op, step)
                except BaseException:
                    owned = False  # given up already, or a look still under way has it
                    raise
            elif kind == "call":
                timeout = None if step.timeout_ms is None else step.timeout_ms / 1000
                client.attempt = step.attempt or 0
                ends = None if timeout is None else time.monotonic() + timeout
                try:
                    response, error = await _by(client.send(timeout), ends), None
                except asyncio.CancelledError:
                    op.cancel()
                    raise
                except _Late as late:
                    return _late(op, client, late.__cause__)  # type: ignore[no-any-return]
                except Exception as exc:
                    response, error = None, exc
                step, last = await _told_async(op, client, response, error)
                if step.kind not in ("done", "gave_up") and response is not None:
                    try:
                        await _by(client.release(response), ends)
                    except _Late:
                        if step.kind == "sleep":
                            step = await asked(op, op.slept, _now_ms())  # the body took the time
                    response = None
            elif kind == "sleep":
                if step.delay_ms:
                    try:
                        if sleep is None:
                            await asyncio.sleep(step.delay or 0.0)
                        else:
                            result = sleep(step.delay or 0.0)
                            if inspect.isawaitable(result):
                                await result
                    except asyncio.CancelledError:
                        op.cancel()
                        op.slept(_now_ms())
                        op._log_records()
                        raise
                step = await asked(op, op.slept, _now_ms())
            elif kind == "done":
                op._log_records()
                assert response is not None
                return client.finish(response, op.report)
            else:
                op._log_records()
                if response is not None and op.ending(client.style, last) == "give_up":
                    await client.release(response)  # the give-up carries it, its body read
                return _ended(op, client, response, error, last)  # type: ignore[no-any-return]
    finally:
        if owned:
            # Ended by an exception of its own (not an attempt's failure): what the operation
            # holds of the gate goes back now.
            op._abandon(_now_ms())
        request.end()


class _Late(Exception):
    """An attempt (or the body recuo reads) ran into the deadline."""


async def _by(work: Awaitable[_R], ends: Optional[float]) -> _R:
    """``work``, ended at the monotonic instant ``ends`` (``_Late``) when it lasts longer."""
    if ends is None:
        return await work
    try:
        return await asyncio.wait_for(work, max(0.0, ends - time.monotonic()))
    except asyncio.TimeoutError as timed_out:
        if time.monotonic() < ends - 0.001:
            raise  # the work's own timeout, before the deadline: its failure to judge
        raise _Late from timed_out


def clip(timeout: Optional[float], attempt: Optional[float]) -> Optional[float]:
    """The attempt's timeout: the caller's, no longer than what is left of the deadline — but
    never 0, which the clients refuse or read as "no timeout" (an attempt whose wait ended
    exactly at the deadline has a millisecond)."""
    if attempt is None:
        return timeout
    attempt = max(attempt, 0.001)
    return attempt if timeout is None else min(timeout, attempt)


AwaitableSleep = Callable[[float], Union[object, Awaitable[object]]]
