"""An adaptive regulator shared by two processes — in a file, and on Redis: a 429 reported by
process A (another interpreter) halves the rate process B reserves at, and B's successes give
it back for both. Both reserve at the same fake instants, so every wait is exact."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import recuo

MS = 1_000_000
T = 1_000_000_000_000  # the fake instant both processes reserve at, ns

# Process A: opens the regulator as given, takes one start at T, reports a 429, and prints
# the interval in force it then sees.
PROCESS_A = """
import sys, recuo
kind, where, key = sys.argv[1], sys.argv[2], sys.argv[3]
if kind == "file":
    r = recuo.Regulator.shared(where, "10/s", 1, adaptive=True)
else:
    r = recuo.Regulator.redis(where, key, "10/s", 1, adaptive=True)
assert r.try_acquire_at(%d) == 0
r.on_throttled()
print(round(1e9 / r.rate))
""" % T


def process_a(kind: str, where: str, key: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-c", PROCESS_A, kind, where, key],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def b_sees_a_cut(b: recuo.Regulator) -> None:
    # A's start at T holds the slot until T + 100 ms; B's first start takes it, and its next
    # one comes 200 ms later — the halved rate — not 100 ms.
    assert b.try_acquire_at(T + 100 * MS) == 0
    assert b.rate == 5.0
    assert b.try_acquire_at(T + 100 * MS) == 200 * MS
    # Each success gives back 1/16 of 10/s: 5.625/s, then 10/s after eight.
    b.on_success()
    assert round(1e9 / b.rate) == 177_777_778
    for _ in range(7):
        b.on_success()
    assert b.rate == 10.0


def test_a_429_in_one_process_halves_the_rate_of_another_through_a_file(tmp_path: Path) -> None:
    path = str(tmp_path / "regulator")
    b = recuo.Regulator.shared(path, "10/s", 1, adaptive=True)
    assert b.adaptive
    assert repr(b).endswith("/regulator', '600/min', burst=1, adaptive=True)")
    assert process_a("file", path) == "200000000\n"
    b_sees_a_cut(b)
    # Every holder sees the interval the others brought back.
    assert recuo.Regulator.shared(path, "10/s", 1, adaptive=True).rate == 10.0


def test_a_429_in_one_process_halves_the_rate_of_another_through_redis(redis_url: str) -> None:
    b = recuo.Regulator.redis(redis_url, "py:adaptive", "10/s", 1, adaptive=True)
    assert b.adaptive
    assert process_a("redis", redis_url, "py:adaptive") == "200000000\n"
    b_sees_a_cut(b)


def test_every_process_must_agree_on_the_setting(tmp_path: Path, redis_url: str) -> None:
    path = str(tmp_path / "regulator")
    recuo.Regulator.shared(path, "10/s", 1, adaptive=True)
    with pytest.raises(recuo.SharedFileError, match="adaptive .* not adaptive .*must agree"):
        recuo.Regulator.shared(path, "10/s", 1)
    recuo.Regulator.redis(redis_url, "py:agree", "10/s", 1)
    with pytest.raises(recuo.SharedFileError, match="not adaptive; .* adaptive .*must agree"):
        recuo.Regulator.redis(redis_url, "py:agree", "10/s", 1, adaptive=True)
    with pytest.raises(TypeError):
        recuo.Regulator.shared(path, "10/s", 1, adaptive=1)  # type: ignore[arg-type]
    # A file that is not adaptive ignores a 429.
    plain = recuo.Regulator.shared(str(tmp_path / "plain"), "10/s", 1)
    assert not plain.adaptive
    plain.on_throttled()
    assert plain.rate == 10.0
