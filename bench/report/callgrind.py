"""Instructions per call under callgrind — stable where timings are not — and where recuo's go.

    python3 callgrind.py BENCH_DIR BENCH_PYTHON PHP_EXTENSION INSTRUCTIONS_BINARY

For Python, PHP and JavaScript, on both paths, runs the direct baseline, guide A's function,
recuo's loops (Python: `recuo.com_retry`, the call form `recuo.call`, the `@recuo.retry`
decorated function; PHP: `Recuo\\comRetry`, `Recuo\\retry`; JavaScript: `comRetry`) and the
floor — an extension function that only calls its callable once, the least a host can do —
under `valgrind --tool=callgrind`, each at two loop lengths: the difference in instructions
over the difference in calls is the cost per call, free of start-up. A contender the bench
script does not have (say, no floor yet) is listed as not measured. Then the core's decision
and Retry-After seconds beside their baselines (bench/report/core_instructions.py). Writes
BENCH_DIR/PROFILE.md (and prints it): the extra instructions per call over the direct
baseline, their ratio to the guide's, the gap to the floor, and for `recuo.com_retry` /
`Recuo\\comRetry` the callees of the loop (inclusive instructions per call), which is where a
fix has to look.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from core_instructions import counts as core_counts

HERE = Path(__file__).resolve().parent
# The functions whose callees the profile lists: recuo's loop, and the heaviest parts in it.
# The success path first (the first attempt made before the machine), then the machine's.
PY_PARTS = ["_recuo::runner::run_blocking", "_recuo::current::as_current",
            "_recuo::runner::drive_python", "_recuo::record::Journal::open", "recuo::drive::drive",
            "<_recuo::runner::PyDriver as recuo::drive::Driver>::attempt"]
PHP_PARTS = ["recuo_php::fast::com_retry_fast", "recuo_php::driver::run",
             "recuo_php::driver::drive_php", "recuo::drive::drive",
             "<recuo_php::driver::PhpDriver as recuo::drive::Driver>::attempt"]
PY_FLOOR = "floor: extension calls f once"
PHP_FLOOR = "floor: extension calls $f once"
PY_LOOPS = ["recuo.com_retry", "recuo.call (call form)", "recuo.retry (decorator)"]
PHP_LOOPS = ["Recuo\\comRetry", "Recuo\\retry"]
# (language, path, loop lengths, [direct, guide, recuo's main loop, others...], parts of recuo
# to expand). The floor only on the success path: it never fails.
CASES = [
    ("Python", "success", (20_000, 40_000),
     ["direct f()", "guide A com_retry (pure Python)", *PY_LOOPS, PY_FLOOR, "tenacity Retrying (reused)"],
     PY_PARTS),
    ("Python", "failure", (5_000, 10_000),
     ["direct: 5 calls, 4 caught", "guide A com_retry (pure Python)", *PY_LOOPS], PY_PARTS),
    ("PHP", "success", (20_000, 40_000),
     ["direct $f()", "guide A comRetry (pure PHP)", *PHP_LOOPS, PHP_FLOOR], PHP_PARTS),
    ("PHP", "failure", (5_000, 10_000),
     ["direct: 5 calls, 4 caught", "guide A comRetry (pure PHP)", *PHP_LOOPS], PHP_PARTS),
    # V8 compiles as it goes: its counts are less exact than CPython's and PHP's (the tiers a
    # loop reaches depend on its length), and its callees are JIT code, not listed.
    ("JavaScript", "success", (4_000, 8_000),
     ["direct await f()", "guide A comRetry (pure JS)", "recuo comRetry", "recuo retry(f)",
      "floor: await als.run({}, f)"], []),
    ("JavaScript", "failure", (1_000, 2_000),
     ["direct: 5 calls, 4 caught", "guide A comRetry (pure JS)", "recuo comRetry", "recuo retry(f)"], []),
]


def instructions(out: Path, command: list[str]) -> int:
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    total = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), flags=re.M)
    assert total, f"no total in {out}"
    return int(total.group(1))


def callees(tree: str, function: str, calls: int) -> list[str]:
    """`function`'s callees (inclusive instructions per call), from callgrind_annotate's tree."""
    lines, inside = [], False
    for line in tree.splitlines():
        if not inside:
            inside = "*" in line and f"{function} [" in line
        elif not line.strip():
            break
        if inside:
            m = re.match(r"\s*([\d,]+) \([^)]*\)\s+([*>])\s+(.*)", line)
            if m:
                name = re.sub(r" \[/[^]]*\]$", "", m.group(3)).replace("???:", "")
                name = re.sub(r"^/tmp/python-build[^:]*:", "", name)
                per_call = int(m.group(1).replace(",", "")) / calls
                indent = "" if m.group(2) == "*" else "  "
                lines.append(f"| {indent}`{name[:110]}` | {per_call:,.0f} |")
    return lines


def measure(command: list[str], out: Path) -> int | None:
    """instructions() for a contender the bench script may not have: None when it fails."""
    try:
        return instructions(out, command)
    except subprocess.CalledProcessError:
        return None


def core_section(binary: str) -> list[str]:
    found = core_counts(binary)
    rows = ["| case | recuo | baseline | baseline's instructions | recuo / baseline | allocations per call (recuo) |",
            "|---|---|---|---|---|---|"]
    pairs = [(f"decide/{o}/recuo", f"decide/{o}/hand-rolled", f"`Attempts::decide`, {o}", "hand-rolled decision")
             for o in ("backoff", "server-wait", "give-up")]
    pairs += [("retry-after-seconds/recuo", "retry-after-seconds/str-parse", "`parse_retry_after(\"120\")`",
               "`str::parse::<u64>`"),
              ("retry-after-seconds/recuo", "retry-after-seconds/std-parse", "`parse_retry_after(\"120\")`",
               "trim, `str::parse::<u64>`, × 1000")]
    for mine, base, label, base_label in pairs:
        a, b = found[mine]["instructions"], found[base]["instructions"]
        if a is None or b is None:
            rows.append(f"| {label} | not measured | {base_label} | — | — | {found[mine]['allocations']:g} |")
            continue
        rows.append(f"| {label} | {a:,.0f} | {base_label} | {b:,.0f} | {a / b:.2f} | {found[mine]['allocations']:g} |")
    return ["#### The core: one decision, one Retry-After value (instructions per call)", "",
            "Counted only inside the measured calls (`--toggle-collect`), the fresh state each "
            "decision gets made outside them; bench/src/bin/instructions.rs.", "", *rows, ""]


def main() -> None:
    bench, python, extension, binary = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    work = bench / "callgrind"
    work.mkdir(parents=True, exist_ok=True)
    commands = {
        "Python": [python, str(HERE.parent / "python" / "bench_python.py"), "--loop"],
        "PHP": ["php", "-d", f"extension={extension}", str(HERE.parent / "php" / "bench.php"), "--loop"],
        # recuo.wasm, as make bench built it.
        "JavaScript": ["node", str(HERE.parent / "js" / "bench.js"), "--loop"],
    }
    summary = ["| language | path | contender | instructions per call | extra over direct | × guide's extra | × floor's extra |",
               "|---|---|---|---|---|---|---|"]
    details = []
    for language, path, (short, long), names, parts in CASES:
        per_call: dict[str, float | None] = {}
        files = {}
        for name in names:
            print(f"callgrind: {language} {path}: {name}", file=sys.stderr, flush=True)
            # A peer 40 times heavier runs 40 times fewer calls: the same few seconds.
            scale = 20 if name.startswith("tenacity") else 1
            counts = []
            for n in (short // scale, long // scale):
                out = work / f"{language}-{path}-{names.index(name)}-{n}.out"
                counts.append(measure([*commands[language], path, name, str(n)], out))
                files[name] = out
            per_call[name] = (None if None in counts
                              else (counts[1] - counts[0]) / ((long - short) // scale))
        direct, guide, recuo = names[:3]
        floor = next((n for n in names if n.startswith("floor:")), None)
        base, guide_extra = per_call[direct], None
        if base is not None and per_call[guide] is not None:
            guide_extra = per_call[guide] - base
        floor_extra = None
        if floor is not None and base is not None and per_call[floor] is not None:
            floor_extra = per_call[floor] - base
        for name in names:
            if per_call[name] is None or base is None:
                summary.append(f"| {language} | {path} | {name} | not measured | — | — | — |")
                continue
            extra = per_call[name] - base
            ratio = "—" if name == direct or not guide_extra else f"{extra / guide_extra:.2f}"
            to_floor = "—" if name == direct or not floor_extra else f"{extra / floor_extra:.2f}"
            summary.append(f"| {language} | {path} | {name} | {per_call[name]:,.0f} | {extra:,.0f} | {ratio} | {to_floor} |")
        if per_call[recuo] is None or not parts:
            continue
        tree = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--tree=calling", str(files[recuo])],
                              check=True, capture_output=True, text=True).stdout
        details += [f"#### {language}, {path} path: inside {recuo} (instructions per call)", "",
                    "| function, then what it calls | per call |", "|---|---|"]
        for part in parts:
            details += callees(tree, part, long)
        details += [""]
    report = "\n".join([
        "# recuo — where the time goes (callgrind)",
        "",
        "Instructions per call, counted by `valgrind --tool=callgrind` (exact and repeatable, "
        "unlike timings on a shared machine): each loop run at two lengths, the difference "
        "divided by the difference in calls. Reproduce with `make bench-profile`. Only "
        "user-space instructions count: system calls (the pure-PHP guide's `random_int` reads "
        "the kernel's entropy on every retry; recuo seeds its generator once per failing loop) "
        "and cache misses are not here, and are in the timings of REPORT.md. The floor is an "
        "extension function that only calls its callable once: the least any loop in an "
        "extension can cost; × floor's extra is how far a loop is from it.",
        "",
        *summary,
        "",
        *core_section(binary),
        *details,
    ])
    (bench / "PROFILE.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
