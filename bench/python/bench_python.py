"""recuo's Python retry loops beside the ones users would pick instead, as ratios in one run.

    python bench_python.py OUT.json [ROUNDS]
    python bench_python.py --loop success|failure NAME N

Two paths, each timed in the same process and rounds, the contenders interleaved in an
order shuffled every round:

* success: the task returns at once. A contender's *extra cost* is its time per call minus
  calling the task directly, in the same round;
* failure: the task fails 4 times, then succeeds, and every library's waits are no-ops, each
  the library's own way. The extra cost is over the 5 calls and 4 catches made inline.

The success path also times ``recuo.retry`` through an open gate (a regulator and a
concurrency limit too generous ever to make a call wait), beside the same decorated call with
no gate: what passing the machine's gate step costs a blocking call.

Each contender's extra cost is divided by the extra cost of guide A's pure-Python
``com_retry`` (below, as the guide writes it) in the same round: 1.0 is as cheap as the
guide's nine lines. The figures go to OUT.json for bench/report/build_report.py; progress
goes to stderr.
"""

from __future__ import annotations

import gc
import json
import platform
import random
import sys
import time
import types
from importlib import metadata
from typing import Any, Callable

import backoff
import backoff._sync
import stamina
import tenacity
import tenacity.nap

import recuo

TENTATIVAS, BASE, MAXIMO = 5, 0.2, 5.0  # guide A's loop, for every contender
BLOCK_SECONDS = 0.02  # the length of one timed block


def com_retry(tarefa, tentativas=5, base=0.2, maximo=5.0, repetir_se=lambda erro: True, sleep=time.sleep):
    """Guide A's ``com_retry``, as the guide writes it (plus ``sleep``, so the failure path
    can make its waits no-ops as every other contender does)."""
    for tentativa in range(tentativas):
        try:
            return tarefa()
        except Exception as erro:
            if tentativa == tentativas - 1 or not repetir_se(erro):
                raise
            sleep(random.uniform(0, min(maximo, base * 2**tentativa)))


def no_sleep(seconds: float) -> None:
    pass


def succeed() -> int:
    return 1


def flaky() -> Callable[[], int]:
    """A task that fails 4 times, then succeeds, over and over: every loop that makes 5
    attempts gets its value at the fifth."""
    calls = 0

    def task() -> int:
        nonlocal calls
        calls += 1
        if calls % 5:
            raise ValueError("not yet")
        return calls

    return task


def tenacity_kwargs(**extra: Any) -> dict[str, Any]:
    return dict(
        stop=tenacity.stop_after_attempt(TENTATIVAS),
        wait=tenacity.wait_random_exponential(multiplier=BASE, max=MAXIMO),
        reraise=True,
        **extra,
    )


def stamina_retry(task: Callable[[], int]) -> Callable[[], int]:
    retry = stamina.retry(on=Exception, attempts=TENTATIVAS, timeout=None, wait_initial=BASE, wait_max=MAXIMO)
    return retry(task)


def backoff_retry(task: Callable[[], int]) -> Callable[[], int]:
    # logger=None: backoff's documented way to log nothing (it logs every retry by default).
    retry = backoff.on_exception(
        backoff.expo, Exception, max_tries=TENTATIVAS, factor=BASE, max_value=MAXIMO, jitter=backoff.full_jitter,
        logger=None,
    )
    return retry(task)


# Each contender is a loop over n calls, so that no wrapper of the bench's own is timed.
def loop_of(call: Callable[[], Any]) -> Callable[[int], None]:
    def run(n: int) -> None:
        for _ in range(n):
            call()

    return run


def loop_with(call: Callable[[Callable[[], Any]], Any], task: Callable[[], Any]) -> Callable[[int], None]:
    def run(n: int) -> None:
        for _ in range(n):
            call(task)

    return run


def loop_sleepless(call: Callable[..., Any], task: Callable[[], Any]) -> Callable[[int], None]:
    def run(n: int) -> None:
        for _ in range(n):
            call(task, sleep=no_sleep)

    return run


def inline_failures(task: Callable[[], int]) -> Callable[[int], None]:
    """The failure path's baseline: the 5 calls and 4 catches, with no loop library."""

    def run(n: int) -> None:
        for _ in range(n):
            for _ in range(5):
                try:
                    task()
                    break
                except Exception:
                    pass

    return run


def open_gate() -> recuo.Gate:
    """A gate no call of the bench ever waits at: a billion starts a second with a burst of a
    thousand, and a million places in flight."""
    return recuo.Gate(regulator=recuo.Regulator(1e9, 1000), limit=recuo.ConcurrencyLimit(1_000_000))


def success_contenders() -> dict[str, Callable[[int], None]]:
    return {
        "direct f()": loop_of(succeed),
        "guide A com_retry (pure Python)": loop_with(com_retry, succeed),
        "recuo.com_retry": loop_with(recuo.com_retry, succeed),
        "recuo.retry (decorator)": loop_of(recuo.retry(succeed)),
        "recuo.retry through an open gate (decorator)": loop_of(recuo.retry(gate=open_gate())(succeed)),
        "recuo.call (call form)": loop_with(recuo.call, succeed),
        # The floor: an extension function that only calls its callable once (private, for
        # the bench): what no loop in an extension can go below.
        "floor: extension calls f once": loop_with(recuo._recuo._call_once, succeed),
        "tenacity Retrying (reused)": loop_with(tenacity.Retrying(**tenacity_kwargs()), succeed),
        "tenacity @retry": loop_of(tenacity.retry(**tenacity_kwargs())(succeed)),
        "stamina @retry": loop_of(stamina_retry(succeed)),
        "backoff @on_exception": loop_of(backoff_retry(succeed)),
    }


def failure_contenders() -> dict[str, Callable[[int], None]]:
    sleepless = tenacity_kwargs(sleep=no_sleep)
    return {
        "direct: 5 calls, 4 caught": inline_failures(flaky()),
        "guide A com_retry (pure Python)": loop_sleepless(com_retry, flaky()),
        "recuo.com_retry": loop_sleepless(recuo.com_retry, flaky()),
        "recuo.retry (decorator)": loop_of(recuo.retry(sleep=no_sleep)(flaky())),
        "recuo.call (call form)": loop_sleepless(recuo.call, flaky()),
        "tenacity Retrying (reused)": loop_with(tenacity.Retrying(**sleepless), flaky()),
        "tenacity @retry": loop_of(tenacity.retry(**sleepless)(flaky())),
        "stamina @retry": loop_of(stamina_retry(flaky())),
        "backoff @on_exception": loop_of(backoff_retry(flaky())),
    }


def per_call_ns(run: Callable[[int], None], n: int) -> float:
    gc.collect()
    start = time.perf_counter_ns()
    run(n)
    return (time.perf_counter_ns() - start) / n


def calibrate(run: Callable[[int], None]) -> int:
    """Calls per block, so that a block takes about BLOCK_SECONDS."""
    n = 100
    while True:
        spent = per_call_ns(run, n) * n / 1e9
        if spent > BLOCK_SECONDS / 4:
            return max(100, int(n * BLOCK_SECONDS / spent))
        n *= 4


def measure(path: str, contenders: dict[str, Callable[[int], None]], rounds: int) -> dict[str, Any]:
    """Per round: every contender's extra cost over the direct baseline (the first entry)."""
    names = list(contenders)
    baseline = names[0]
    calls = {name: calibrate(run) for name, run in contenders.items()}
    extra: dict[str, list[float]] = {name: [] for name in names[1:]}
    base_ns: list[float] = []
    order = names[:]
    for r in range(rounds):
        random.shuffle(order)
        ns = {name: per_call_ns(contenders[name], calls[name]) for name in order}
        base_ns.append(ns[baseline])
        for name in names[1:]:
            extra[name].append(ns[name] - ns[baseline])
        print(f"python {path}: round {r + 1}/{rounds}", file=sys.stderr, flush=True)
    return {"baseline": baseline, "baseline_ns": base_ns, "extra_ns": extra}


def main() -> None:
    if sys.argv[1] == "--loop":
        # `--loop PATH NAME N`: only N calls of one contender, for a profiler (make bench-profile).
        path, name, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
        {"success": success_contenders, "failure": failure_contenders}[path]()[name](n)
        return
    out = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    assert "site-packages" in recuo.__file__, "recuo must be the release wheel, not the source tree"
    results: dict[str, Any] = {
        "python": platform.python_version(),
        "versions": {p: metadata.version(p) for p in ("recuo", "tenacity", "stamina", "backoff")},
        "rounds": rounds,
    }
    # No library logs: stamina's default hooks log every retry as a warning (to stderr when
    # logging is not set up); an empty list is its documented way to switch them off.
    stamina.instrumentation.set_on_retry_hooks([])
    results["success"] = measure("success path", success_contenders(), rounds)

    # Every library's waits made no-ops, its own way: recuo's and the guide's `sleep=`,
    # tenacity's `sleep=`, stamina's testing mode (5 attempts, waits of 0), and backoff's
    # module-level sleep replaced (it has no hook of its own). Stamina's testing mode still
    # calls time.sleep(0) through tenacity's default sleep, which tenacity says "may be
    # mocked out for unit testing": it is, so that no figure counts a system call.
    stamina.set_testing(True, attempts=TENTATIVAS)
    sleepless = types.SimpleNamespace(sleep=no_sleep)
    real = (backoff._sync.time, tenacity.nap.time)
    backoff._sync.time = tenacity.nap.time = sleepless
    try:
        results["failure"] = measure("failure path", failure_contenders(), rounds)
    finally:
        backoff._sync.time, tenacity.nap.time = real
        stamina.set_testing(False)

    with open(out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
