"""Builds target/bench/REPORT.md from the figures of one `make bench` run, and prints it.

    python3 build_report.py BENCH_DIR

BENCH_DIR holds python.json, php.json, criterion.json and schedules.json (written by
bench/python/bench_python.py, bench/php/bench.php, bench/report/criterion_rounds.py and the
`schedules` binary). Every figure is a ratio to a baseline measured in the same round of the
same run; each is given as its median and its min–max over the rounds. The report ends with
the goals of issue 7, each marked met or not met.
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
    """Issue 7's goals, each checked against a median."""

    def __init__(self) -> None:
        self.rows: list[list[str]] = []

    def check(self, goal: str, xs: Sequence[float], ok: Callable[[float], bool], fmt: str = "{:.2f}×") -> None:
        median, spread = fig(xs, fmt)
        verdict = "met" if ok(statistics.median(xs)) else "**not met**"
        self.rows.append([goal, f"{median} ({spread})", verdict])


def machine(py: dict[str, Any], php: dict[str, Any]) -> list[str]:
    cpu = "unknown"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    libraries = ", ".join(f"{name} {v}" for name, v in py["versions"].items())
    now = datetime.datetime.now(datetime.timezone.utc)
    return [
        f"- **Machine**: `nproc` {command('nproc')}, {cpu}, {platform.system()} {platform.release()}",
        f"- **Toolchains**: CPython {py['python']}, PHP {php['php']}, {command('rustc', '--version')}",
        f"- **Libraries**: {libraries} (Python, recuo's release wheel); recuo {php['recuo']} "
        f"(PHP, the extension's release build)",
        f"- **Date**: {now:%Y-%m-%d %H:%M} UTC",
        "",
        "Every figure is a **ratio** to a baseline measured in the same run, in the same round: "
        "its median over the rounds, then its min–max. Absolute times, where shown, only give "
        "the scale on this machine. Reproduce with `make bench`; `make bench-profile` counts "
        "the instructions behind the Python and PHP figures.",
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
    cheaper = ratios(extra[TENACITY], extra[RECUO_PY])
    per_round["tenacity / recuo"] = cheaper
    median, spread = fig(cheaper, "{:.1f}")
    lines = [f"### {title}", "", meaning, ""]
    lines += table(["contender", "× the guide's extra cost (median)", "min–max", "extra ns/call (scale)"], rows)
    lines += ["", f"{TENACITY}'s extra cost is **{median}×** {RECUO_PY}'s (min–max {spread}).", ""]
    return lines, per_round


def python(py: dict[str, Any], goals: Goals) -> list[str]:
    n = py["rounds"]
    success, per_round = python_path(
        "1. Python: success path (the task returns at once)",
        "Extra cost per call = time per call − calling `f()` directly in the same round, divided "
        "by the extra cost of guide A's pure-Python `com_retry` (1.00: as cheap as the guide's "
        f"nine lines; lower is better). {n} rounds, the contenders interleaved in an order "
        "shuffled every round.",
        py["success"],
    )
    goals.check("Python success path: recuo.com_retry's extra cost ≤ 1.5× the guide's",
                per_round[RECUO_PY], lambda x: x <= 1.5)
    goals.check("Python success path: tenacity's extra cost ≥ 20× recuo.com_retry's",
                per_round["tenacity / recuo"], lambda x: x >= 20, "{:.1f}×")
    failure, _ = python_path(
        "2. Python: failure path (fails 4 times, then succeeds; waits are no-ops)",
        "Extra cost per call = time per call − the 5 calls and 4 catches made inline, divided by "
        "the guide's. Every library's waits are no-ops, its own way: `sleep=` for recuo, the "
        "guide and tenacity; stamina's testing mode (`set_testing(True, attempts=5)`, with "
        "tenacity's default sleep mocked out, as tenacity documents); backoff's module sleep "
        f"replaced. No library logs (stamina's hooks off, backoff's `logger=None`). {n} rounds.",
        py["failure"],
    )
    return success + failure


def php_section(php: dict[str, Any], goals: Goals) -> list[str]:
    rows = []
    for path, label in (("success", "success"), ("failure", "fails 4 times, then succeeds (`sleep:` no-op)")):
        extra = php[path]["extra_ns"]
        xs = ratios(extra[RECUO_PHP], extra[GUIDE_PHP])
        rows.append([label, *fig(xs), ns(extra[RECUO_PHP]), ns(extra[GUIDE_PHP])])
        goals.check(f"PHP {path} path: Recuo\\comRetry's extra cost ≤ 2× the guide's", xs, lambda x: x <= 2)
    lines = [
        "### 3. PHP: `Recuo\\comRetry` beside guide A's pure-PHP `comRetry`",
        "",
        "Recuo\\comRetry's extra cost per call (over calling the task directly; on the failure "
        "path, over the 5 calls and 4 catches inline) divided by the pure-PHP guide function's, "
        f"in the same round; lower is better. {php['rounds']} rounds, interleaved and shuffled.",
        "",
    ]
    lines += table(["path", "× the guide's extra cost (median)", "min–max",
                    "recuo extra ns/call (scale)", "guide extra ns/call (scale)"], rows)
    return lines + [""]


def rust(crit: dict[str, Any], goals: Goals) -> list[str]:
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
        "### 4. Rust (criterion)",
        "",
        "recuo's median time per call divided by its peer's in the same round (below 1: recuo is "
        f"faster). {rounds} rounds of every bench, the peer first in every other round. The "
        "decision's baseline is a hand-rolled decision with the same answer (attempts left, "
        "window, jitter draw or server wait plus spread, deadline) and no bookkeeping: the ratio "
        "is the price of the state machine per decision. Both regulators refuse nearly every "
        "call and read the clock on each.",
        "",
    ]
    lines += table(["benchmark", "peer", "recuo / peer (median)", "min–max"], rows)
    return lines + [""]


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
        "### 5. Schedules in virtual time",
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


def main() -> None:
    bench = Path(sys.argv[1])
    py, php, crit, sched = (json.loads((bench / f"{name}.json").read_text())
                            for name in ("python", "php", "criterion", "schedules"))
    goals = Goals()
    out = ["# recuo — benchmark report", "", *machine(py, php)]
    out += python(py, goals)
    out += php_section(php, goals)
    out += rust(crit, goals)
    out += schedules(sched, goals)
    out += ["### Goals (issue 7)", ""]
    out += table(["goal", "measured: median (min–max)", "verdict"], goals.rows)
    report = "\n".join(out) + "\n"
    (bench / "REPORT.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
