"""urllib's HTTP and HTTPS connections, watched: each tells the attempt in flight its socket
once connected, so that the socket is shut when the operation's deadline comes first (a
server that trickles its head or its body cannot hold ``buscar_com_retry`` past it)."""

from __future__ import annotations

import http.client
import urllib.request
from typing import Any

from . import _http


class ConnectWatched:
    """An ``http.client`` connection whose socket is watched once connected."""

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]  # bounded by the attempt's timeout
        sock = self.sock  # type: ignore[attr-defined]  # urllib lets go of it once the head is read
        _http.watch(self, lambda: sock)


class WatchedHTTPConnection(ConnectWatched, http.client.HTTPConnection):
    """``http.client.HTTPConnection``, watched."""


class WatchedHTTPSConnection(ConnectWatched, http.client.HTTPSConnection):
    """``http.client.HTTPSConnection``, watched."""


class WatchedHTTPHandler(urllib.request.HTTPHandler):
    """urllib's HTTP handler over ``WatchedHTTPConnection``."""

    def http_open(self, req: Any) -> Any:
        return self.do_open(WatchedHTTPConnection, req)


class WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    """urllib's HTTPS handler over ``WatchedHTTPSConnection`` (with the handler's context)."""

    def https_open(self, req: Any) -> Any:
        return self.do_open(WatchedHTTPSConnection, req, context=getattr(self, "_context", None))


def opener() -> urllib.request.OpenerDirector:
    """An opener whose HTTP and HTTPS connections are watched."""
    return urllib.request.build_opener(WatchedHTTPHandler, WatchedHTTPSHandler)
