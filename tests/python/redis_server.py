"""A `redis-server` of the tests' own: on a free port of 127.0.0.1, without persistence
(``--save "" --appendonly no``), stopped when the ``with`` block ends. Every wait is bounded."""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import time
from typing import Iterator

START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _answers(port: int) -> bool:
    """Whether the server answers PING (asked by redis-cli: no protocol spoken here)."""
    try:
        done = subprocess.run(
            ["redis-cli", "-h", "127.0.0.1", "-p", str(port), "ping"],
            capture_output=True,
            timeout=2,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.stdout.strip() == b"PONG"


def _stop(server: subprocess.Popen[bytes]) -> None:
    server.terminate()
    try:
        server.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """Starts the server and yields its URL, ``redis://127.0.0.1:PORT``; stops it after."""
    with redis_process() as (url, _server):
        yield url


@contextlib.contextmanager
def redis_process() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Starts the server and yields its URL and its process (a test may freeze it with
    SIGSTOP); stops it after, frozen or not."""
    exe = shutil.which("redis-server")
    if exe is None:
        raise RuntimeError("redis-server must be installed (make deps installs it)")
    for _ in range(5):  # another process may take the port between the choice and the start
        port = free_port()
        server = subprocess.Popen(
            [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        until = time.monotonic() + START_TIMEOUT_S
        while server.poll() is None and not _answers(port) and time.monotonic() < until:
            time.sleep(0.02)
        if server.poll() is None and _answers(port):
            try:
                yield f"redis://127.0.0.1:{port}", server
            finally:
                server.send_signal(signal.SIGCONT)
                _stop(server)
            return
        _stop(server)
    raise RuntimeError("redis-server did not start on 127.0.0.1")
