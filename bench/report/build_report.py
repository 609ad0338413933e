"""Builds target/bench/REPORT.md from the figures of one `make bench` run, and prints it.

    python3 build_report.py BENCH_DIR

BENCH_DIR holds python.json, php.json, js.json, criterion.json, instructions.json,
schedules.json and redis.json (written by bench/python/bench_python.py, bench/php/bench.php,
bench/js/bench.js, bench/report/criterion_rounds.py, bench/report/core_instructions.py, the
`schedules` binary and bench/redis/redis_bench.py). Every figure is a ratio to a baseline measured in the same round of the same run;
each is given as its median and its min–max over the rounds. The report ends with issue 18's
table (the cost of the success path, today and the goal) and the standing goals of issue 7,
each marked met or not met on the median; a row whose figures are missing from this run says
"not measured".
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

GUIDE_PY = "guide A com_retry (pure Python)"
RECUO_PY = "recuo.com_retry"
TENACITY = "tenacity Retrying (reused)"
GUIDE_PHP = "guide A comRetry (pure PHP)"
RECUO_PHP = "Recuo\\comRetry"
RECUO_PHP_RETRY = "Recuo\\retry"
RECUO_CALL = "recuo.call (call form)"
RECUO_DECORATED = "recuo.retry (decorator)"
RECUO_OPEN_GATE = "recuo.retry through an open gate (decorator)"
PY_FLOOR = "floor: extension calls f once"
GUIDE_JS = "guide A comRetry (pure JS)"
JS_PEERS = ("p-retry", "exponential-backoff", "cockatiel")
RECUO_JS = "recuo comRetry"
# A bare AsyncLocalStorage.run with a new store per call: the least any context for nested
# loops costs in JavaScript.
JS_FLOOR = "floor: await als.run({}, f)"
NOT_MEASURED = "not measured"


def ratios(top: Sequence[float], bottom: Sequence[float]) -> list[float]:
    """Round by round: top / bottom."""
    return [t / b for t, b in zip(top, bottom)]


def fig(xs: Sequence[float], fmt: str = "{:.2f}") -> tuple[str, str]:
    """(median, min–max) of the per-round figures."""
    return fmt.format(statistics.median(xs)), f"{fmt.format(min(xs))}–{fmt.format(max(xs))}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def ns(xs: Sequence[float]) -> str:
    return f"{statistics.median(xs):,.0f}"


def command(*argv: str) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


class Goals:
    """Goals, each checked against a median: issue 18's table, then issue 7's standing ones."""

    def __init__(self) -> None:
        self.rows: list[list[str]] = []
        self.issue18: list[list[str]] = []

    def check(self, goal: str, xs: Sequence[float] | None, ok: Callable[[float], bool], fmt: str = "{:.2f}×") -> None:
        self.rows.append([goal, *verdict(xs, ok, fmt)])

    def row(self, what: str, today: str, goal: str, xs: Sequence[float] | None, ok: Callable[[float], bool],
            fmt: str = "{:.2f}×") -> None:
        """One row of issue 18's table: what, the figure the issue measured, the goal, now."""
        measured = verdict(xs, ok, fmt)
        if goal == "—":  # a figure for scale, no goal of its own
            measured[1] = "—" if xs else NOT_MEASURED
        self.issue18.append([what, today, goal, *measured])


def verdict(xs: Sequence[float] | None, ok: Callable[[float], bool], fmt: str) -> list[str]:
    """[measured: median (min–max), met / not met], or not measured."""
    if not xs:
        return [NOT_MEASURED, NOT_MEASURED]
    median, spread = fig(xs, fmt)
    shown = median if median == spread.split("–")[0] == spread.split("–")[-1] else f"{median} ({spread})"
    return [shown, "met" if ok(statistics.median(xs)) else "**not met**"]


def extra_ratio(data: dict[str, Any] | None, path: str, top: str, bottom: str) -> list[float] | None:
    """Round by round: top's extra cost / bottom's, on `path`; None when either is missing."""
    if not data or path not in data:
        return None
    extra = data[path]["extra_ns"]
    if top not in extra or bottom not in extra:
        return None
    return ratios(extra[top], extra[bottom])


def load(bench: Path, name: str) -> Any:
    path = bench / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def machine(py: dict[str, Any] | None, php: dict[str, Any] | None, js: dict[str, Any] | None) -> list[str]:
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    libraries = ", ".join(f"{name} {v}" for name, v in py["versions"].items()) if py else NOT_MEASURED
    toolchains = [f"CPython {py['python']}" if py else "CPython: not measured",
                  f"PHP {php['php']}" if php else "PHP: not measured",
                  f"Node {js['node']}" if js else "Node: not measured",
                  command("rustc", "--version")]
    now = datetime.datetime.now(datetime.timezone.utc)
    recuo = (php or js or {}).get("recuo", "unknown")
    return [
        f"- **Machine**: `nproc` {command('nproc')}, {cpu}, {platform.system()} {platform.release()}",
        f"- **Toolchains**: {', '.join(toolchains)}",
        f"- **Libraries**: {libraries} (Python, recuo's release wheel); recuo {recuo} "
        "(PHP, the extension's release build; JavaScript, recuo.wasm)",
        f"- **Date**: {now:%Y-%m-%d %H:%M} UTC",
        "",
        "Every figure is a **ratio** to a baseline measured in the same run, in the same round: "
        "its median over the rounds, then its min–max. Absolute times, where shown, only give "
        "the scale on this machine. Reproduce with `make bench`; `make bench-profile` counts "
        "the instructions behind the Python, PHP and JavaScript figures, the floor and the core.",
        "",
    ]


def python_path(title: str, meaning: str, data: dict[str, Any]) -> tuple[list[str], dict[str, list[float]]]:
    """One path of the Python loops: each contender's extra cost over the guide's."""
    extra = data["extra_ns"]
    per_round = {name: ratios(extra[name], extra[GUIDE_PY]) for name in extra}
    rows = []
    for name, xs in per_round.items():
        label = f"{name} (the baseline)" if name == GUIDE_PY else name
        rows.append([label, *fig(xs), ns(extra[name])])
    lines = [f"### {title}", "", meaning, ""]
    lines += table(["contender", "× the guide's extra cost (median)", "min–max", "extra ns/call (scale)"], rows)
    lines += [""]
    if TENACITY in extra and RECUO_PY in extra:
        cheaper = ratios(extra[TENACITY], extra[RECUO_PY])
        per_round["tenacity / recuo"] = cheaper
        median, spread = fig(cheaper, "{:.1f}")
        lines += [f"{TENACITY}'s extra cost is **{median}×** {RECUO_PY}'s (min–max {spread}).", ""]
    return lines, per_round


def python(py: dict[str, Any] | None, goals: Goals) -> list[str]:
    if py is None:
        return ["### 1–2. Python", "", "Not measured in this run (python.json is missing).", ""]
    n = py["rounds"]
    success, per_round = python_path(
        "1. Python: success path (the task returns at once)",
        "Extra cost per call = time per call − calling `f()` directly in the same round, divided "
        "by the extra cost of guide A's pure-Python `com_retry` (1.00: as cheap as the guide's "
        f"nine lines; lower is better). `{RECUO_CALL}` is `recuo.call(f)`, the call form that "
        f"replaces `recuo.retry(f, arg)`; `{RECUO_DECORATED}` calls a function decorated with "
        f"`@recuo.retry`; `{PY_FLOOR}` (where present) is an extension function that only calls "
        f"its callable: the floor of any loop in an extension. {n} rounds, the contenders "
        "interleaved in an order shuffled every round.",
        py["success"],
    )
    goals.check("Python success path: tenacity's extra cost ≥ 20× recuo.com_retry's",
                per_round.get("tenacity / recuo"), lambda x: x >= 20, "{:.1f}×")
    extra = py["success"]["extra_ns"]
    if RECUO_OPEN_GATE in extra and RECUO_DECORATED in extra:
        # Issue 25: the blocking loop passes the gate with the machine's gate step, no helper
        # thread per wait.
        gated = [(g - d) / 1000 for g, d in zip(extra[RECUO_OPEN_GATE], extra[RECUO_DECORATED])]
        ratio = ratios([g + b for g, b in zip(extra[RECUO_OPEN_GATE], py["success"]["baseline_ns"])],
                       [d + b for d, b in zip(extra[RECUO_DECORATED], py["success"]["baseline_ns"])])
        (us, us_spread), (times, times_spread) = fig(gated, "{:.1f}"), fig(ratio)
        success += [f"`{RECUO_OPEN_GATE}` costs **{us} µs** per call more than `{RECUO_DECORATED}` "
                    f"(min–max {us_spread}): **{times}×** its time per call (min–max {times_spread}).", ""]
    goals.check("Python: an open gate costs ≤ 10 µs per call more than no gate (issue 25)",
                [(g - d) / 1000 for g, d in zip(extra.get(RECUO_OPEN_GATE, []), extra.get(RECUO_DECORATED, []))],
                lambda x: x <= 10, "{:.1f} µs")
    failure, _ = python_path(
        "2. Python: failure path (fails 4 times, then succeeds; waits are no-ops)",
        "Extra cost per call = time per call − the 5 calls and 4 catches made inline, divided by "
        "the guide's. Every library's waits are no-ops, its own way: `sleep=` for recuo, the "
        "guide and tenacity; stamina's testing mode (`set_testing(True, attempts=5)`, with "
        "tenacity's default sleep mocked out, as tenacity documents); backoff's module sleep "
        "replaced. No library logs (stamina's hooks off, backoff's `logger=None`). "
        f"{n} rounds.",
        py["failure"],
    )
    return success + failure


def guide_section(title: str, meaning: str, data: dict[str, Any], guide: str, contenders: Sequence[str],
                  success_only: Sequence[str] = ()) -> list[str]:
    """A host's loops beside guide A's function of the same host, on both paths (those of
    `success_only` on the success path alone)."""
    rows = []
    for path, label in (("success", "success"), ("failure", "fails 4 times, then succeeds (no-op sleep)")):
        extra = data[path]["extra_ns"]
        for name in contenders:
            if path == "failure" and (name.startswith("floor:") or name in success_only):
                continue  # the floor never fails; some peers cannot wait without a timer
            if name not in extra:
                rows.append([label, name, NOT_MEASURED, "", "", ""])
                continue
            xs = ratios(extra[name], extra[guide])
            rows.append([label, name, *fig(xs), ns(extra[name]), ns(extra[guide])])
    lines = [title, "", meaning, ""]
    lines += table(["path", "contender", "× the guide's extra cost (median)", "min–max",
                    "extra ns/call (scale)", "guide extra ns/call (scale)"], rows)
    return lines + [""]


def php_section(php: dict[str, Any] | None) -> list[str]:
    title = "### 3. PHP: `Recuo\\comRetry` and `Recuo\\retry` beside guide A's pure-PHP `comRetry`"
    if php is None:
        return [title, "", "Not measured in this run (php.json is missing).", ""]
    return guide_section(
        title,
        "Each contender's extra cost per call (over calling the task directly; on the failure "
        "path, over the 5 calls and 4 catches inline) divided by the pure-PHP guide function's, "
        f"in the same round; lower is better. {php['rounds']} rounds, interleaved and shuffled.",
        php, GUIDE_PHP, [RECUO_PHP, RECUO_PHP_RETRY, "floor: extension calls $f once"])


def js_section(js: dict[str, Any] | None) -> list[str]:
    title = "### 4. JavaScript: `comRetry` beside guide A's pure-JS `comRetry`"
    if js is None:
        return [title, "", "Not measured in this run (js.json is missing).", ""]
    return guide_section(
        title,
        "recuo's `comRetry(f)` (the npm package, recuo.wasm) awaited in a loop; "
        "its extra cost per call over awaiting the task directly (on the failure path, over the "
        "5 calls and 4 catches inline) divided by the pure-JS guide function's, in the same "
        "round; lower is better. `recuo retry(f)` is the package's call form over `fetch`; "
        f"`{JS_FLOOR}` is the floor of any loop that keeps a context for nested loops. "
        "p-retry, exponential-backoff and cockatiel (npm) run the same tasks with five attempts; "
        "on the failure path only p-retry can wait a zero delay without a timer (the other two "
        "wait about 1 ms per retry in `setTimeout`, and are not timed there). "
        f"Node {js['node']}, {js['rounds']} rounds.",
        js, GUIDE_JS, [RECUO_JS, "recuo retry(f)", JS_FLOOR, *JS_PEERS],
        success_only=("exponential-backoff", "cockatiel"))


def rust(crit: dict[str, Any] | None, instr: dict[str, Any] | None, goals: Goals) -> list[str]:
    if crit is None:
        return ["### 5. Rust (criterion)", "", "Not measured in this run (criterion.json is missing).", ""]
    rows = []

    def row(group: str, recuo: str, peer: str, label: str, peer_label: str) -> list[float]:
        xs = ratios(crit[group][recuo], crit[group][peer])
        rows.append([label, peer_label, *fig(xs)])
        return xs

    for form in ("IMF-fixdate", "RFC 850", "asctime", "seconds"):
        peer = "`str::parse::<u64>` × 1000" if form == "seconds" else "`httpdate::parse_http_date` − now"
        for function in ("parse_retry_after", "retry_delay_ms"):
            row(f"retry_after/{form}", f"recuo {function}", "peer", f"`{function}`, {form}", peer)
    for case in sorted(g for g in crit if g.startswith("decide/")):
        label = f"`Attempts::decide`: {case.split('/', 1)[1]}"
        row(case, "recuo Attempts::decide", "hand-rolled", label, "hand-rolled decision")
    for threads in ("1 thread", "2 threads"):
        label = f"`Regulator::try_acquire`, {threads}"
        xs = row(f"try_acquire/{threads}", "recuo", "governor", label, "governor `check()`")
        goals.check(f"`try_acquire` at least as fast as governor's `check()`, {threads}", xs, lambda x: x <= 1.0)
    rounds = len(crit["try_acquire/1 thread"]["recuo"])
    lines = [
        "### 5. Rust (criterion, callgrind)",
        "",
        "recuo's median time per call divided by its peer's in the same round (below 1: recuo is "
        f"faster). {rounds} rounds of every bench, the peer first in every other round. The "
        "decision's baseline is a hand-rolled decision with the same answer (attempts left, "
        "window, jitter draw or server wait plus spread, deadline) and no bookkeeping: the ratio "
        "is the price of the state machine per decision; each side decides on a fresh state, 64 "
        "made per timed batch. Both regulators refuse nearly every call and read the clock on "
        "each.",
        "",
    ]
    lines += table(["benchmark", "peer", "recuo / peer (median)", "min–max"], rows)
    lines += [""]
    if instr:
        irows = []
        for mine, base, label in (
            ("decide/backoff/recuo", "decide/backoff/hand-rolled", "`Attempts::decide`, retry with backoff"),
            ("decide/server-wait/recuo", "decide/server-wait/hand-rolled", "`Attempts::decide`, retry with server wait"),
            ("decide/give-up/recuo", "decide/give-up/hand-rolled", "`Attempts::decide`, give up"),
            ("retry-after-seconds/recuo", "retry-after-seconds/str-parse", "`parse_retry_after(\"120\")` / `str::parse::<u64>`"),
            ("retry-after-seconds/recuo", "retry-after-seconds/std-parse", "`parse_retry_after(\"120\")` / trim, parse, × 1000"),
        ):
            a, b = instr[mine]["instructions"], instr[base]["instructions"]
            counted = [f"{a:,.0f}", f"{b:,.0f}", f"{a / b:.2f}"] if a is not None and b is not None else [NOT_MEASURED] * 3
            irows.append([label, *counted, f"{instr[mine]['allocations']:g}"])
        lines += ["Instructions per call under callgrind (bench/src/bin/instructions.rs; only inside "
                  "the measured calls), and the allocations recuo's side makes per call, counted by "
                  "a global allocator:", ""]
        lines += table(["call", "recuo", "baseline", "recuo / baseline", "allocations per call"], irows)
        lines += [""]
    return lines


def schedules(sched: dict[str, Any], goals: Goals) -> list[str]:
    rows = []
    for row in sched["rows"]:
        elapsed = row["elapsed_over_baseline"]
        median, spread = fig(elapsed, "{:.4f}")
        cells = [row["name"], f"{median} ({spread}) of {row['baseline']}, {row['baseline_s']:.0f} s"]
        for key in ("throttled", "attempts", "failed"):
            m, s = fig(row[key], "{:.0f}")
            cells.append(m if min(row[key]) == max(row[key]) else f"{m} ({s})")
        rows.append(cells)
        if row["name"].startswith("paced at 90/min"):
            goals.check("Schedule paced at 90/min: elapsed within 1% of the 400 s plan",
                        elapsed, lambda x: x <= 1.01, "{:.4f}×")
            goals.check("Schedule paced at 90/min: zero 429s", row["throttled"], lambda x: x == 0, "{:.0f}")
    lines = [
        "### 6. Schedules in virtual time",
        "",
        f"{sched['requests']} requests against a simulated server allowing "
        f"{sched['allowance_per_min']:.0f}/min (GCRA, burst {sched['server_burst']}; a refused "
        "request uses no allowance and is answered 429 with `Retry-After` in whole seconds); "
        f"{sched['workers']} requests in flight at most; a 200 comes {sched['latency_ms']} ms "
        f"after the start; each network hop takes {sched['hop_ms'][0]}–{sched['hop_ms'][1]} ms. "
        "Paced clients pass recuo's regulator (burst 1) before every attempt and retry 429s "
        "with guide B's policy; the naive client has no regulator and retries 429s after a "
        "full-jitter delay (`min(8 s, 1 s·2^n)`), ignoring `Retry-After`. Elapsed: first start "
        "to last 200, divided by `recuo::plan`'s duration (the physical limit at 120/min). "
        f"{sched['rounds']} seeds.",
        "",
    ]
    lines += table(["client", "elapsed / baseline (median, min–max)", "429s seen", "attempts", "failed"], rows)
    return lines + [""]


REDIS_SCRIPT = "recuo script (EVALSHA)"
REDIS_CELL = "CL.THROTTLE"
REDIS_PING = "PING"
REDIS_CLIENT = "recuo client (try_acquire)"


def redis_section(redis: dict[str, Any] | None) -> list[str]:
    """Issue 30: the Redis regulator's cost beside redis-cell's CL.THROTTLE and PING, with the
    issue's goals checked on the medians of the per-round ratios."""
    title = "### 7. Redis: the regulator beside redis-cell's `CL.THROTTLE` and `PING`"
    if redis is None:
        return [title, "", "Not measured in this run (redis.json is missing).", ""]
    lines = [
        title,
        "",
        f"Redis {redis['redis']}, redis-cell {redis['redis_cell']} (crates.io) loaded into the same "
        "servers: one node, and a 3 masters + 3 replicas cluster (`scripts/redis-cluster`) where "
        "every figure is taken on the master holding the key's slot. Each limit allows 1 000 000 "
        "starts/s with a burst of 1, so that no call is refused and each is the full path. "
        f"`{REDIS_SCRIPT}`, `{REDIS_CELL}` and `{REDIS_PING}` are sent by the same client, "
        "redis-benchmark (one connection per client, one request in flight on each): the script "
        "with exactly the arguments recuo-redis sends for `try_acquire`. "
        f"`{REDIS_CLIENT}` is recuo's own Rust client end to end: N threads sharing one "
        "`recuo_redis::regulator`, each calling `try_acquire`, its latency timed around the call "
        "— what a user's acquire costs. Server CPU: the server process's CPU time per call "
        "(the least noisy figure on a shared machine). Each figure is the median of "
        f"{redis['rounds']} rounds, the contenders in an order rotated every round; every ratio "
        "is taken within a round.",
        "",
    ]
    rows, ratio_rows, goal_rows = [], [], []

    def per_round(by: dict[str, list[dict[str, float]]], top: str, bottom: str, key: str) -> list[float]:
        return [a[key] / b[key] for a, b in zip(by.get(top, []), by.get(bottom, []))]

    def shown(xs: list[float]) -> str:
        return verdict(xs, lambda x: True, "{:.2f}×")[0]

    notes, round_trips = [], []
    for deployment, dep in redis["deployments"].items():
        if "skipped" in dep:
            notes.append(f"- **{deployment}**: not measured — {dep['skipped']}")
            continue
        for clients, by in dep["figures"].items():
            for contender, rounds in by.items():
                if not rounds:
                    rows.append([deployment, clients, contender, NOT_MEASURED, "", "", ""])
                    continue
                m = {k: statistics.median(r[k] for r in rounds) for k in ("per_s", "p50_us", "p99_us", "cpu_us")}
                rows.append([deployment, clients, contender, f"{m['per_s']:,.0f}", f"{m['p50_us']:.0f}",
                             f"{m['p99_us']:.0f}", f"{m['cpu_us']:.1f}"])
            throughput = per_round(by, REDIS_SCRIPT, REDIS_CELL, "per_s")
            p50 = per_round(by, REDIS_SCRIPT, REDIS_PING, "p50_us")
            ratio_rows.append([deployment, clients, REDIS_SCRIPT, shown(throughput), shown(p50),
                               shown(per_round(by, REDIS_SCRIPT, REDIS_CELL, "cpu_us")),
                               shown(per_round(by, REDIS_CLIENT, REDIS_PING, "per_s")),
                               shown(per_round(by, REDIS_CLIENT, REDIS_PING, "p50_us"))])
            # Another script measured beside (redis_bench.py --also-script: before / after).
            for other in by:
                if other.startswith("script ") and other != REDIS_SCRIPT:
                    ratio_rows.append([deployment, clients, other, shown(per_round(by, other, REDIS_CELL, "per_s")),
                                       shown(per_round(by, other, REDIS_PING, "p50_us")),
                                       shown(per_round(by, other, REDIS_CELL, "cpu_us")), "—", "—"])
            if clients in ("8", "64"):
                goal_rows.append([f"{deployment}, {clients} clients: the script's throughput ≥ 0.8× "
                                  "`CL.THROTTLE`'s", *verdict(throughput, lambda x: x >= 0.8, "{:.2f}×")])
            goal_rows.append([f"{deployment}, {clients} client{'s' * (clients != '1')}: the script's p50 ≤ 2× "
                              "`PING`'s",
                              *verdict(p50, lambda x: x <= 2, "{:.2f}×")])
        checks = dep.get("round_trips", [])
        inside = ", ".join(sorted(n.upper() for n in dep.get("script_commands", {})))
        if checks:
            ok = all(c["ok"] for c in checks)
            acquires = sum(c["acquires"] for c in checks)
            sent = sum(sum(c["others"].values()) for c in checks)
            round_trips.append([f"{deployment}: one round trip per acquire (INFO commandstats over every "
                                 "run of recuo's client)",
                                 f"{acquires:,} acquires, {sum(c['evalsha'] for c in checks):,} EVALSHA, "
                                 f"{sent} other commands sent", "met" if ok else "**not met**"])
            notes.append(f"- **{deployment}**: each EVALSHA runs {inside} inside the server (counted "
                         "by commandstats too, and told apart from commands a client sent).")
        if "client_skipped" in dep:
            notes.append(f"- **{deployment}**: recuo's client not measured — {dep['client_skipped']}")
        if "replicated" in dep:
            held = dep["replicated"]
            cell = next((v for k, v in held.items() if k.endswith(":cell")), None)
            tat = next((v for k, v in held.items() if k.endswith(":tat")), None)
            notes.append(f"- **{deployment}**: after the run the key's replica holds recuo's state: "
                         f"{'yes' if tat else 'no'}; redis-cell's: {'yes' if cell else 'no'}. redis-cell "
                         "0.2.2 does not replicate `CL.THROTTLE`'s writes (its module never calls "
                         "`RedisModule_ReplicateVerbatim`): its state is lost in a failover, and its cluster "
                         "figures leave out the replication that recuo's script pays for.")
    lines += table(["deployment", "clients", "contender", "per second", "p50 µs", "p99 µs", "server CPU µs/call"],
                   rows)
    lines += ["", "Ratios (median over the rounds, min–max):", ""]
    lines += table(["deployment", "clients", "script", "script / CL.THROTTLE, throughput", "script p50 / PING p50",
                    "script / CL.THROTTLE, server CPU", "recuo client / PING, throughput",
                    "recuo client p50 / PING p50"], ratio_rows)
    counted = redis.get("instructions") or {}
    if "skipped" in counted:
        lines += ["", f"Instructions per call in the server: not measured — {counted['skipped']}."]
    elif counted.get(REDIS_CELL):
        lines += ["", "Instructions per call inside redis-server's `processCommand` (the command and the "
                  "commands a script runs, not the socket's reads and writes), counted by callgrind on a "
                  "node of its own: the one figure here that other load on the machine cannot change.", ""]
        lines += table(["contender", "instructions per call", "× CL.THROTTLE's"],
                       [[name, f"{n:,}", f"{n / counted[REDIS_CELL]:.2f}"] for name, n in counted.items() if n])
    lines += ["", "Issue 30's goals for the script (same client as its baselines), on the medians:", ""]
    lines += table(["goal", "measured: median (min–max)", "verdict"], round_trips + goal_rows)
    if notes:
        lines += ["", *notes]
    return lines + [""]


def issue18(py: dict[str, Any] | None, php: dict[str, Any] | None, js: dict[str, Any] | None,
            crit: dict[str, Any] | None, instr: dict[str, Any] | None, goals: Goals) -> None:
    """Issue 18's table, row by row, from this run's figures."""
    goals.row("Python `recuo.com_retry(f)`", "14–15× (tenacity: 73–81×)", "≤ 1.5×",
              extra_ratio(py, "success", RECUO_PY, GUIDE_PY), lambda x: x <= 1.5)
    goals.row(f"Python call form `{RECUO_CALL.split()[0]}(f)` (replaces `recuo.retry(f, arg)`)", "≈ 44×", "≤ 3×",
              extra_ratio(py, "success", RECUO_CALL, GUIDE_PY), lambda x: x <= 3)
    goals.row("Python `@recuo.retry` decorated function", "≈ 17–19×", "≤ 3×",
              extra_ratio(py, "success", RECUO_DECORATED, GUIDE_PY), lambda x: x <= 3)
    goals.row("PHP `Recuo\\comRetry($f)`", "13–18×", "≤ 2×",
              extra_ratio(php, "success", RECUO_PHP, GUIDE_PHP), lambda x: x <= 2)
    goals.row("PHP `Recuo\\retry($f)`", "≈ 23×", "≤ 3×",
              extra_ratio(php, "success", RECUO_PHP_RETRY, GUIDE_PHP), lambda x: x <= 3)
    goals.row("failure path, Python `recuo.com_retry`", "3.6×", "no worse (≤ 3.6×)",
              extra_ratio(py, "failure", RECUO_PY, GUIDE_PY), lambda x: x <= 3.6)
    goals.row("failure path, PHP `Recuo\\comRetry`", "1.4×", "no worse (≤ 1.4×)",
              extra_ratio(php, "failure", RECUO_PHP, GUIDE_PHP), lambda x: x <= 1.4)
    goals.row("JavaScript `comRetry(f)`", "—", "≤ 1.2×",
              extra_ratio(js, "success", RECUO_JS, GUIDE_JS), lambda x: x <= 1.2)
    goals.row("failure path, JavaScript `comRetry`", "6.5×", "≤ 2×",
              extra_ratio(js, "failure", RECUO_JS, GUIDE_JS), lambda x: x <= 2)
    goals.row("JavaScript `retry(f)`", "30×", "≤ 1.5×",
              extra_ratio(js, "success", "recuo retry(f)", GUIDE_JS), lambda x: x <= 1.5)
    for case in ("retry with backoff (503, first failure)", "retry with server wait (429, Retry-After: 3)",
                 "give up (503 on the last attempt)"):
        group = (crit or {}).get(f"decide/{case}")
        xs = ratios(group["recuo Attempts::decide"], group["hand-rolled"]) if group else None
        goals.row(f"core: one decision, `Attempts::decide` ({case}) / hand-rolled (criterion)",
                  "5.2–6.4×", "≤ 2×", xs, lambda x: x <= 2)
    allocations = ([max(instr[f"decide/{o}/recuo"]["allocations"] for o in ("backoff", "server-wait", "give-up"))]
                   if instr else None)
    goals.row("core: allocations per decision (counting allocator)", "1 (the first push)", "0",
              allocations, lambda x: x == 0, "{:g}")
    seconds = None
    if instr and None not in (instr["retry-after-seconds/recuo"]["instructions"],
                              instr["retry-after-seconds/str-parse"]["instructions"]):
        seconds = [instr["retry-after-seconds/recuo"]["instructions"]
                   / instr["retry-after-seconds/str-parse"]["instructions"]]
    goals.row("core: `Retry-After` as seconds, instructions / `str::parse::<u64>`'s (callgrind)",
              "1.23× `str::parse::<u64>` × 1000 (criterion)", "≤ 1×", seconds, lambda x: x <= 1)
    group = (crit or {}).get("retry_after/seconds")
    goals.row("core: `Retry-After` as seconds / `str::parse::<u64>` × 1000 (criterion, for scale)",
              "1.23×", "—", ratios(group["recuo parse_retry_after"], group["peer"]) if group else None,
              lambda x: True)


def main() -> None:
    bench = Path(sys.argv[1])
    py, php, js, crit, instr, sched, redis = (load(bench, name) for name in
                                              ("python", "php", "js", "criterion", "instructions", "schedules",
                                               "redis"))
    goals = Goals()
    out = ["# recuo — benchmark report", "", *machine(py, php, js)]
    out += python(py, goals)
    out += php_section(php)
    out += js_section(js)
    out += rust(crit, instr, goals)
    if sched is not None:
        out += schedules(sched, goals)
    out += redis_section(redis)
    issue18(py, php, js, crit, instr, goals)
    out += ["### Issue 18: the success path costs what a plain loop costs", "",
            "For the loops: the extra cost per call over a direct call, divided by guide A's own "
            "function's in the same round (sections 1–4); for the core: recuo against its "
            "baseline (section 5). Goals are checked on the median.", ""]
    out += table(["row", "today (issue 18)", "goal", "measured: median (min–max)", "verdict"], goals.issue18)
    out += ["", "### Standing goals (issue 7)", ""]
    out += table(["goal", "measured: median (min–max)", "verdict"], goals.rows)
    report = "\n".join(out) + "\n"
    (bench / "REPORT.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
