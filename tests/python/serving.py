"""`recuo serve` and nginx for the tests: each started on a free port of 127.0.0.1 and stopped
at the end (the processes these helpers start, by their own handles).

``recuo serve`` is the ``recuo`` command (``make build-cli`` builds ``target/debug/recuo``;
``RECUO_BIN`` names another); nginx is Debian's ``nginx-light`` (``/usr/sbin/nginx``;
``NGINX_BIN`` names another), run with a configuration, pid file, logs and temporary folders
of its own. Without either, the tests that need it are skipped, saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from conftest import ROOT

RECUO_BIN = Path(os.environ.get("RECUO_BIN", ROOT / "target" / "debug" / "recuo"))
NGINX_BIN = os.environ.get("NGINX_BIN") or shutil.which("nginx") or "/usr/sbin/nginx"


@contextmanager
def recuo_serve(*args: str) -> Iterator[str]:
    """A ``recuo serve`` with ``args``; yields its base URL (``http://127.0.0.1:PORT``)."""
    proc = subprocess.Popen(
        [str(RECUO_BIN), "serve", "--stop-after", "300s", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("listening on http://127.0.0.1:"), first
        yield first.split()[-1]
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def stats(url: str) -> Any:
    """What the server saw: its ``GET /stats``."""
    with urllib.request.urlopen(f"{url}/stats", timeout=10) as response:
        return json.load(response)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


NGINX_CONF = """
daemon off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 64; }}
http {{
    log_format status '$status $msec $request_time';
    access_log {dir}/access.log status;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    limit_req_zone $binary_remote_addr zone=api:1m rate={rate}r/s;
    server {{
        listen 127.0.0.1:{port};
        # limit_req runs in the preaccess phase: the answer must come from the content
        # phase (a static file; POST, which the static module refuses, answered as 200
        # through error_page; or the upstream), not from `return`, which comes before it.
        location / {{
            limit_req zone=api{burst};
            limit_req_status 429;
            error_page 429 = @limited;
            {content}
        }}
        location @ok {{
            default_type application/json;
            return 200 '{{"ok":true}}';
        }}
        location @limited {{
            add_header Retry-After 1 always;
            default_type application/json;
            return 429 '{{"ok":false}}';
        }}
    }}
}}
"""


class Nginx:
    """A running nginx: ``url``, and ``statuses()`` (and ``entries()``, with their times) —
    the status of every request it answered, from its access log, read once it has stopped
    (so the log is complete)."""

    def __init__(self, url: str, log: Path, proc: subprocess.Popen[bytes], rate: int) -> None:
        self.url = url
        self.log = log
        self.proc = proc
        self.rate = rate

    def reload(self, rate: int) -> None:
        """Cuts (or raises) the allowance to ``rate`` requests a second while it runs: the
        configuration rewritten, then nginx's own reload (SIGHUP), waited for."""
        conf = self.log.parent / "nginx.conf"
        text = conf.read_text()
        conf.write_text(text.replace(f"rate={self.rate}r/s", f"rate={rate}r/s"))
        error_log = self.log.parent / "error.log"
        before = error_log.read_text() if error_log.exists() else ""
        self.proc.send_signal(signal.SIGHUP)
        for _ in range(200):
            now = error_log.read_text() if error_log.exists() else ""
            if now.count("reconfiguring") > before.count("reconfiguring"):
                break
            time.sleep(0.01)
        self.rate = rate

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: nginx's fast shutdown
            self.proc.communicate(timeout=10)

    def statuses(self) -> list[int]:
        return [status for status, _, _ in self.entries()]

    def entries(self) -> list[tuple[int, float, float]]:
        """Every request it answered: its status, when it ended (seconds since the Unix
        epoch) and how long it took (seconds)."""
        self.stop()
        text = self.log.read_text() if self.log.exists() else ""
        lines = (line.split() for line in text.splitlines() if line)
        return [(int(status), float(at), float(took)) for status, at, took in lines]


@contextmanager
def nginx(rate: int, *, burst: int = 0, upstream: str | None = None) -> Iterator[Nginx]:
    """nginx on 127.0.0.1 with ``limit_req`` at ``rate`` requests a second and ``burst``
    (``nodelay``: a request past the burst is refused, never queued) for every path,
    answering 429 with ``Retry-After: 1`` past it; the rest answered 200 by nginx itself, or
    proxied to ``upstream`` (a base URL)."""
    with tempfile.TemporaryDirectory(prefix="recuo-nginx-") as folder:
        port = _free_port()
        conf = Path(folder) / "nginx.conf"
        content = (
            f"proxy_pass {upstream};"
            if upstream
            else f"error_page 405 =200 @ok; root {folder}/www; default_type application/json; "
            "try_files /ok.json =500;"
        )
        conf.write_text(
            NGINX_CONF.format(
                dir=folder,
                port=port,
                rate=rate,
                burst=f" burst={burst} nodelay" if burst else "",
                content=content,
            )
        )
        # Run as root, nginx's workers are `nobody`: they read www/ (and nothing else here).
        os.chmod(folder, 0o711)
        (Path(folder) / "www").mkdir(mode=0o755)
        (Path(folder) / "www" / "ok.json").write_text('{"ok":true}')
        os.chmod(Path(folder) / "www" / "ok.json", 0o644)
        proc = subprocess.Popen(
            [NGINX_BIN, "-p", folder, "-c", str(conf), "-e", f"{folder}/error.log"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            for _ in range(200):
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                        break
                except OSError:
                    if proc.poll() is not None:
                        assert proc.stderr is not None
                        raise RuntimeError(f"nginx did not start: {proc.stderr.read().decode()}") from None
                    time.sleep(0.025)
            time.sleep(0.2)  # a quiet spell: the zone starts empty
            server = Nginx(url, Path(folder) / "access.log", proc, rate)
            yield server
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.communicate(timeout=10)


@contextmanager
def scripted_serve(script: Path) -> Iterator[str]:
    """``recuo serve --script script`` on a free port of 127.0.0.1 (stopping itself after
    300 s at the latest); yields its base URL. Each path ending in ``/<case id>`` plays that
    case's script, one event per request; ``script_log`` reads what it saw."""
    with recuo_serve("--port", "0", "--script", str(script)) as url:
        yield url


def script_log(url: str, path: str) -> list[dict[str, Any]]:
    """What the scripted server saw on ``path`` (``<prefix>/<case id>``), one entry per
    request in order: ``{"method": ..., "key": <the Idempotency-Key header> or None}``."""
    with urllib.request.urlopen(f"{url}/__script/log/{path}", timeout=10) as response:
        found: list[dict[str, Any]] = json.load(response)
        return found
