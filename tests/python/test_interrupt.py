"""The real sleep of com_retry: it releases the GIL and answers signals (Ctrl-C) promptly.

These tests sleep for real. The only timed assertion is the one the issue demands: Ctrl-C
ends the wait within ~100 ms; it is checked with a generous bound (2 s) against a wait of
many seconds.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time
from types import FrameType
from typing import NoReturn

import pytest

import recuo


def first_delay(base: float, seed: int) -> float:
    """The first delay (seconds) com_retry draws with this seed, learnt with an injected sleep."""
    slept: list[float] = []

    def task() -> NoReturn:
        raise ConnectionError("down")

    with pytest.raises(ConnectionError):
        recuo.com_retry(task, 2, base, base, seed=seed, sleep=slept.append)
    return slept[0] if slept else 0.0


def seed_with_first_delay(base: float, low: float, high: float) -> tuple[int, float]:
    for seed in range(1000):
        delay = first_delay(base, seed)
        if low <= delay <= high:
            return seed, delay
    raise AssertionError("no seed draws such a delay")


CHILD = textwrap.dedent(
    """
    import signal, sys
    import recuo

    # Python only installs its Ctrl-C handler when SIGINT is not ignored at start-up
    # (a background job may inherit SIG_IGN): install it, so the test does not depend on that.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def task():
        print("attempt", flush=True)
        raise ConnectionError("down")

    recuo.com_retry(task, tentativas=2, base=60, maximo=60, seed=int(sys.argv[1]))
    print("returned", flush=True)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_during_the_wait_raises_keyboard_interrupt_promptly() -> None:
    seed, delay = seed_with_first_delay(60, 30, 60)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(seed)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "attempt\n"
        time.sleep(0.3)  # the child is now in its wait of `delay` (≥ 30 s)
        assert child.poll() is None
        child.send_signal(signal.SIGINT)
        sent = time.monotonic()
        out, err = child.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert took < 2.0, f"Ctrl-C took {took:.2f} s to end a wait of {delay:.1f} s"
    assert out == ""  # no second attempt, no return
    assert err.rstrip().endswith("KeyboardInterrupt"), err
    # An uncaught KeyboardInterrupt makes Python exit by SIGINT.
    assert child.returncode == -signal.SIGINT


class Alarm(Exception):
    pass


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")
def test_a_signal_handler_exception_ends_the_wait() -> None:
    seed, _ = seed_with_first_delay(60, 30, 60)
    calls = 0

    def task() -> NoReturn:
        nonlocal calls
        calls += 1
        raise ConnectionError("down")

    def on_alarm(_signum: int, _frame: FrameType | None) -> None:
        raise Alarm("woken")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(Alarm):
            recuo.com_retry(task, 2, 60, 60, seed=seed)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert calls == 1


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")
def test_a_signal_handler_exception_ends_the_wait_of_retry() -> None:
    # recuo.retry's blocking loop sleeps as com_retry does: a one-minute wait, woken in 0.2 s.
    calls = 0
    reports: list[recuo.Report] = []

    def task() -> NoReturn:
        nonlocal calls
        calls += 1
        raise ConnectionError("down")

    def on_alarm(_signum: int, _frame: FrameType | None) -> None:
        raise Alarm("woken")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    started = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(Alarm):
            recuo.call(task, policy=recuo.Policy(base=60, cap=60, jitter="none"), on_give_up=reports.append)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - started < 2.0
    assert calls == 1
    assert reports == []  # the loop was interrupted, not given up


def test_other_threads_run_while_com_retry_waits() -> None:
    # A wait of a few hundred ms; the worker stamps the clock every ~2 ms. Were the GIL held
    # during the wait, no stamp could fall inside it.
    seed, _ = seed_with_first_delay(0.4, 0.2, 0.4)
    stamps: list[float] = []
    stop = threading.Event()

    def worker() -> None:
        while not stop.is_set():
            stamps.append(time.monotonic())
            time.sleep(0.002)

    attempts: list[float] = []

    def task() -> str:
        attempts.append(time.monotonic())
        if len(attempts) == 1:
            raise ConnectionError("down")
        return "ok"

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert recuo.com_retry(task, 2, 0.4, 0.4, seed=seed) == "ok"
    finally:
        stop.set()
        thread.join()
    first, second = attempts
    inside = [s for s in stamps if first + (second - first) / 4 <= s <= second - (second - first) / 4]
    assert len(inside) >= 5, f"{len(stamps)} stamps, {len(inside)} in the middle of the wait"


# --- Ctrl-C while waiting at the shared limits -------------------------------------------------

WAITS = {
    "regulator": """
        regulator = recuo.Regulator("1/min")
        regulator.acquire()
        print("waiting", flush=True)
        regulator.acquire()
    """,
    "limit": """
        limit = recuo.ConcurrencyLimit(1)
        held = limit.acquire()
        print("waiting", flush=True)
        with limit:
            pass
    """,
    "retry_gate": """
        regulator = recuo.Regulator("1/min")
        regulator.acquire()
        print("waiting", flush=True)
        recuo.call(lambda: print("attempt", flush=True), gate=recuo.Gate(regulator=regulator))
    """,
    "batch": """
        regulator = recuo.Regulator("1/min")
        print("waiting", flush=True)
        report = recuo.run_batch([lambda: None] * 3, gate=recuo.Gate(regulator=regulator), workers=2)
        print("returned", flush=True)
    """,
}


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("wait", sorted(WAITS))
def test_ctrl_c_during_a_wait_at_the_limits_raises_keyboard_interrupt_promptly(wait: str) -> None:
    script = "import signal, recuo\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
    script += textwrap.dedent(WAITS[wait])
    script += 'print("returned", flush=True)\n'
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "waiting\n"
        time.sleep(0.3)  # the child is now waiting: a minute for a slot, or forever for a place
        assert child.poll() is None
        child.send_signal(signal.SIGINT)
        sent = time.monotonic()
        out, err = child.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert took < 2.0, f"Ctrl-C took {took:.2f} s to end the wait"
    assert "attempt" not in out and "returned" not in out, out
    assert err.rstrip().endswith("KeyboardInterrupt"), err
    assert child.returncode == -signal.SIGINT
