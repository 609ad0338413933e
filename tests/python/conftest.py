"""Shared helpers: the repository root, the cross-language vectors in tests/vectors/, and a
`redis-server` of the tests' own (the ``redis_url`` fixture, one server per module)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest

import recuo
from redis_server import redis_server

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "vectors"


def vectors(name: str) -> Any:
    """The parsed JSON of tests/vectors/<name>."""
    with open(VECTORS / name, encoding="utf-8") as f:
        return json.load(f)


def policy_of(p: dict[str, Any]) -> recuo.Policy:
    """The ``recuo.Policy`` a scenario of tests/vectors/ writes as ``policy`` (times in ms)."""

    def secs(ms: int | None) -> float | None:
        return None if ms is None else ms / 1000

    return recuo.Policy(
        max_attempts=p["max_attempts"],
        base=p["base_ms"] / 1000,
        cap=p["cap_ms"] / 1000,
        jitter=p["jitter"],
        deadline=secs(p["deadline_ms"]),
        spread=secs(p["spread_ms"]),
        use_date_header=p["use_date_header"],
    )


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """The URL of a `redis-server` started on a free port of 127.0.0.1 for this module, and
    stopped after its last test."""
    with redis_server() as url:
        yield url
