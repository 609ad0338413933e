"""A Redis Cluster of the tests' own: 3 masters and 3 replicas on free ports of 127.0.0.1,
started and stopped by ``scripts/redis-cluster`` (the harness every language's tests share),
stopped when the ``with`` block ends — also when it fails. Every wait is bounded."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "redis-cluster"
START_TIMEOUT_S = 65.0  # the script gives itself 60 s, its cleanup included
CALL_TIMEOUT_S = 30.0


class Cluster:
    """A running cluster: ``url`` (``redis+cluster://…``, or ``rediss+cluster://app:apppw@…``
    with TLS: the masters as seeds), every node's port (``nodes``) and, with TLS, the
    certificate to trust (``cert``, for ``SSL_CERT_FILE``)."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.folder = folder
        self.url = env["URL"]
        self.nodes = [int(p) for p in env["NODES"].split(",")]
        self.cert = Path(env["CERT"]) if "CERT" in env else None

    def _script(self, *args: str, timeout: float = CALL_TIMEOUT_S) -> str:
        done = subprocess.run(
            [str(SCRIPT), args[0], str(self.folder), *args[1:]],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"redis-cluster {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout.strip()

    def master_of(self, key: str) -> tuple[int, int]:
        """The port and process id of the master serving ``key``."""
        port, pid = self._script("master-of", key).split()
        return int(port), int(pid)

    @property
    def masters(self) -> list[int]:
        """The masters' ports when the cluster started (the URL's seeds)."""
        seeds = self.url.split("@")[-1].split("//")[-1].rstrip("/")
        return [int(seed.rsplit(":", 1)[1]) for seed in seeds.split(",")]

    def names_on(self, prefix: str, ports: list[int]) -> dict[int, str]:
        """For each master port of ``ports``, the first of ``prefix0``, ``prefix1``, … whose
        limit keys (``{name}:…``) live on it. Asked a few names at a time: each answer is a few
        redis-cli calls."""
        found: dict[int, str] = {}
        for first in range(0, 200, 8):
            names = [f"{prefix}{i}" for i in range(first, first + 8)]
            with ThreadPoolExecutor(len(names)) as pool:
                where = list(pool.map(lambda n: self.master_of(f"{{{n}}}:x")[0], names))
            for name, port in zip(names, where):
                if port in ports:
                    found.setdefault(port, name)
            if len(found) == len(set(ports)):
                return found
        raise AssertionError(f"no name {prefix}N on each master of {ports}: {found}")

    def wait_ok(self, secs: int = 30) -> float:
        """Waits for a healthy cluster (every slot served by a live master): the seconds it
        took."""
        return float(self._script("wait-ok", str(secs), timeout=secs + 5))

    def cli(self, port: int, *args: str) -> str:
        """``redis-cli`` against the node at ``port`` (a plain cluster's): its answer."""
        done = subprocess.run(
            ["redis-cli", "-h", "127.0.0.1", "-p", str(port), *args],
            capture_output=True,
            text=True,
            timeout=CALL_TIMEOUT_S,
            check=True,
        )
        return done.stdout.strip()


def _stop(folder: Path) -> None:
    subprocess.run([str(SCRIPT), "stop", str(folder)], capture_output=True, timeout=CALL_TIMEOUT_S, check=False)


@contextlib.contextmanager
def redis_cluster(folder: Path, *, tls: bool = False) -> Iterator[Cluster]:
    """Starts a cluster in ``folder`` (which must not exist yet; TLS and the ACL user
    ``app:apppw`` with ``tls``), ready: every slot served, every replica linked. Stops it
    after (its nodes, by the pids the script wrote; ``folder`` removed).

    A start that fails is stopped and made once more, in a folder beside (seen twice in some
    twenty runs on a loaded machine: "not 3 masters" once every node said ok); the error
    names both failures."""
    if shutil.which("redis-server") is None:
        raise RuntimeError("redis-server must be installed (make deps installs it)")
    failed: list[str] = []
    for tried in (folder, folder.with_name(f"{folder.name}-again")):
        try:
            done = subprocess.run(
                [str(SCRIPT), "start", str(tried), *(["--tls"] if tls else [])],
                capture_output=True,
                text=True,
                timeout=START_TIMEOUT_S,
                check=False,
            )
            if done.returncode != 0:
                failed.append(done.stderr.strip())
                continue
            env = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
            yield Cluster(tried, env)
            return
        finally:
            _stop(tried)
    raise RuntimeError("the cluster did not start:\n" + "\n".join(failed))
