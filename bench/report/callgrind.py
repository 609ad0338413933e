"""Instructions per call under callgrind — stable where timings are not — and where recuo's go.

    python3 callgrind.py BENCH_DIR BENCH_PYTHON PHP_EXTENSION

For Python and PHP, on both paths, runs the direct baseline, guide A's function and recuo's
under `valgrind --tool=callgrind`, each at two loop lengths: the difference in instructions
over the difference in calls is the cost per call, free of start-up. Writes BENCH_DIR/
PROFILE.md (and prints it): the extra instructions per call over the direct baseline, their
ratio to the guide's, and for recuo the callees of its loop (inclusive instructions per
call), which is where a fix has to look.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The functions whose callees the profile lists: recuo's loop, and the heaviest parts in it.
PY_PARTS = ["_recuo::runner::drive_python", "_recuo::record::Journal::open", "recuo::drive::drive",
            "<_recuo::runner::PyDriver as recuo::drive::Driver>::attempt"]
PHP_PARTS = ["recuo_php::driver::drive_php", "recuo::drive::drive",
             "<recuo_php::driver::PhpDriver as recuo::drive::Driver>::attempt"]
# (language, path, loop lengths, [direct, guide, recuo, peers...], parts of recuo to expand)
CASES = [
    ("Python", "success", (20_000, 40_000),
     ["direct f()", "guide A com_retry (pure Python)", "recuo.com_retry", "tenacity Retrying (reused)"],
     PY_PARTS),
    ("Python", "failure", (5_000, 10_000),
     ["direct: 5 calls, 4 caught", "guide A com_retry (pure Python)", "recuo.com_retry"], PY_PARTS),
    ("PHP", "success", (20_000, 40_000),
     ["direct $f()", "guide A comRetry (pure PHP)", "Recuo\\comRetry"], PHP_PARTS),
    ("PHP", "failure", (5_000, 10_000),
     ["direct: 5 calls, 4 caught", "guide A comRetry (pure PHP)", "Recuo\\comRetry"], PHP_PARTS),
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


def main() -> None:
    bench, python, extension = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    work = bench / "callgrind"
    work.mkdir(parents=True, exist_ok=True)
    commands = {
        "Python": [python, str(HERE.parent / "python" / "bench_python.py"), "--loop"],
        "PHP": ["php", "-d", f"extension={extension}", str(HERE.parent / "php" / "bench.php"), "--loop"],
    }
    summary = ["| language | path | contender | instructions per call | extra over direct | × guide's extra |",
               "|---|---|---|---|---|---|"]
    details = []
    for language, path, (short, long), names, parts in CASES:
        per_call, files = {}, {}
        for name in names:
            print(f"callgrind: {language} {path}: {name}", file=sys.stderr, flush=True)
            # A peer 40 times heavier runs 40 times fewer calls: the same few seconds.
            scale = 20 if name.startswith("tenacity") else 1
            counts = []
            for n in (short // scale, long // scale):
                out = work / f"{language}-{path}-{names.index(name)}-{n}.out"
                counts.append(instructions(out, [*commands[language], path, name, str(n)]))
                files[name] = out
            per_call[name] = (counts[1] - counts[0]) / ((long - short) // scale)
        direct, guide, recuo = names[:3]
        for name in names:
            extra = per_call[name] - per_call[direct]
            ratio = "—" if name == direct else f"{extra / (per_call[guide] - per_call[direct]):.2f}"
            summary.append(f"| {language} | {path} | {name} | {per_call[name]:,.0f} | {extra:,.0f} | {ratio} |")
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
        "and cache misses are not here, and are in the timings of REPORT.md.",
        "",
        *summary,
        "",
        *details,
    ])
    (bench / "PROFILE.md").write_text(report)
    print(report)


if __name__ == "__main__":
    main()
