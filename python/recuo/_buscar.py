"""``buscarComRetry`` of guide A (“Como repetir requisições com backoff exponencial (retry)”):
the retry rules applied to an HTTP fetch, over the standard library's ``urllib.request`` (no
third-party dependency), on the core's operation machine. Its default deadline is that of
guide B (“HTTP 429: interpretar Retry-After e repetir pedidos com segurança”)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Tuple, Union

from . import _http
from ._recuo import Gate, Policy
from ._values import Report

if TYPE_CHECKING:
    from ._recuo import _Transport


class Resposta:
    """What ``buscar_com_retry`` answers: the last response's ``status``, ``headers`` (a
    ``http.client.HTTPMessage``), ``body`` (``bytes``, read in full), ``url`` and the
    operation's ``report``; ``text()`` and ``json()`` decode the body, ``ok`` says 2xx."""

    __slots__ = ("status", "headers", "body", "url", "report")

    def __init__(self, status: int, headers: Any, body: bytes, url: str) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
        self.report: Optional[Report] = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def text(self, encoding: str = "utf-8") -> str:
        return self.body.decode(encoding, errors="replace")

    def json(self) -> Any:
        return json.loads(self.body)

    def __repr__(self) -> str:
        return f"<recuo.Resposta {self.status}>"


class _Urllib(_http.Client[Resposta]):
    style = "guide"  # guide A's function: a final 429 or 5xx is raised, as the guide's is

    def error_class(self) -> type[_http.GiveUp]:
        return _give_up_class()

    def __init__(self, url: str, method: str, data: Optional[bytes], headers: dict[str, str], timeout: Optional[float]) -> None:
        import urllib.error
        import urllib.request

        self.modules = urllib.request, urllib.error
        self.url, self.method, self.data, self.headers_sent, self.timeout = url, method, data, headers, timeout

    def send(self, timeout: Optional[float]) -> Resposta:
        request_module, error_module = self.modules
        req = request_module.Request(self.url, data=self.data, headers=self.headers_sent, method=self.method)
        try:
            with _opener().open(req, timeout=_http.clip(self.timeout, timeout)) as response:
                return Resposta(response.status, response.headers, response.read(), response.url)
        except error_module.HTTPError as error:  # 4xx and 5xx: a response all the same
            with error:
                return Resposta(error.code, error.headers, error.read(), error.url)

    def transport(self, exc: Exception) -> Optional[_Transport]:
        # urllib raises the socket's own errors once the request is sent.
        found = _http.transport_kind(exc)
        if found is not None:
            return found
        if isinstance(exc, TimeoutError):
            return "timeout"
        if isinstance(exc, (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)):
            return "reset"
        return "other" if isinstance(exc, OSError) else None

    def status(self, response: Resposta) -> int:
        return response.status

    def headers(self, response: Resposta) -> Iterable[Tuple[str, str]]:
        return response.headers.items()  # type: ignore[no-any-return]

    def release(self, response: Resposta) -> None:
        pass  # read in full, and closed, by send

    def finish(self, response: Resposta, report: Report) -> Resposta:
        response.report = report
        return response


_OPENER: list[Any] = []


def _opener() -> Any:
    """urllib's opener, its HTTP and HTTPS connections watched (``_urllib_watched``): made at
    first use, so that importing recuo does not import urllib."""
    if not _OPENER:
        from ._urllib_watched import opener

        _OPENER.append(opener())
    return _OPENER[0]


_GIVE_UP: list[type[_http.GiveUp]] = []


def _give_up_class() -> type[_http.GiveUp]:
    """``recuo.GiveUp`` that is also a ``urllib.error.URLError``, made at first use."""
    if not _GIVE_UP:
        import urllib.error

        _GIVE_UP.append(
            _http.give_up_class(
                urllib.error.URLError,
                "recuo",
                """recuo gave up on the fetch (the last attempt answered 429 or 5xx, or a
                wait past the deadline): a ``urllib.error.URLError`` and a
                ``recuo.GiveUp`` (``response``, ``reason``, ``retry_at``, ``report``).""",
            )
        )
    return _GIVE_UP[0]


def buscar_com_retry(
    url: str,
    *,
    tentativas: int = 5,
    base: float = 0.2,
    maximo: float = 5.0,
    prazo: Optional[float] = 30.0,
    metodo: str = "GET",
    dados: Union[bytes, str, None] = None,
    cabecalhos: Optional[Mapping[str, str]] = None,
    timeout: Optional[float] = 10.0,
    gate: Optional[Gate] = None,
    sleep: Optional[Callable[[float], object]] = None,
    seed: Optional[int] = None,
) -> Resposta:
    """``buscarComRetry(url)`` of the guide “Como repetir requisições com backoff exponencial (retry)”:
    fetches ``url`` with ``urllib.request`` under the guide's loop — ``tentativas`` attempts,
    full jitter from ``base`` to ``maximo`` seconds — and
    recuo's rules: 429 and 5xx are temporary (a 500 on a ``POST`` only when the server may
    repeat it: the method is idempotent), network failures (a body cut short among them) are
    retried, every other 4xx is answered at once; ``Retry-After`` (seconds or an HTTP-date,
    measured from the response's ``Date``) is honoured, never shortened. ``prazo`` limits the
    whole fetch (default 30 s, as “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”
    advises): a wait that does not fit raises ``recuo.GiveUp``
    (also a ``urllib.error.URLError``) at once, with the last response and ``retry_at``.

    Answers a ``recuo.Resposta`` — a success, or a 4xx other than 429 (not worth another
    attempt). As the guide's function does, it raises when the last attempt still answered
    429 or 5xx: ``recuo.GiveUp`` (a ``urllib.error.URLError``) carrying that response
    (``.response``, its body read), the ``reason`` and the ``report``. It re-raises the last
    network error (``urllib.error.URLError``, ``TimeoutError``) when every attempt failed so.
    ``Idempotency-Key`` is sent on every attempt of a method that is not idempotent (one key
    per call). ``metodo``, ``dados`` (``str`` is sent as UTF-8), ``cabecalhos`` and
    ``timeout`` (seconds per attempt, clipped to what is left of ``prazo``) shape the request;
    ``gate``, ``sleep`` and ``seed`` are as for ``recuo.retry``."""
    if not isinstance(url, str):
        raise TypeError(f"url must be a str, not {type(url).__name__}")
    policy = Policy(max_attempts=tentativas, base=base, cap=maximo, deadline=prazo, use_date_header=True)
    settings = _http.Settings(policy, gate, None, None, sleep, seed)
    headers = dict(cabecalhos or {})
    data = dados.encode() if isinstance(dados, str) else dados
    request = _http.Request(settings, metodo, url, headers, True)
    if request.key is not None:
        headers[request.header] = request.key
    return _http.run_sync(request, _Urllib(url, metodo, data, headers, timeout), sleep)
