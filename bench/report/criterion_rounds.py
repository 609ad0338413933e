"""Runs recuo-bench's criterion benches ROUNDS times and keeps each round's medians.

    python3 criterion_rounds.py TARGET_DIR OUT.json ROUNDS [criterion options...]

After each round it reads criterion's estimates (TARGET_DIR/criterion/**/new/estimates.json,
with benchmark.json beside it naming the group and the function) and records the median time
per iteration of every benchmark. OUT.json maps group -> function -> [median ns, one per
round]; bench/report/build_report.py turns them into ratios, round by round. Criterion's own
output goes to TARGET_DIR/bench/criterion.log; progress to stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BENCHES = ["regulator", "retry_after", "decide"]


def medians(criterion_dir: Path) -> dict[str, dict[str, float]]:
    found: dict[str, dict[str, float]] = {}
    for estimates in criterion_dir.glob("**/new/estimates.json"):
        bench = json.loads((estimates.parent / "benchmark.json").read_text())
        median = json.loads(estimates.read_text())["median"]["point_estimate"]
        found.setdefault(bench["group_id"], {})[bench["function_id"]] = median
    return found


def main() -> None:
    target, out, rounds, options = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    command = ["cargo", "bench", "-q", "-p", "recuo-bench"]
    for bench in BENCHES:
        command += ["--bench", bench]
    command += ["--", *options]
    log = target / "bench" / "criterion.log"
    results: dict[str, dict[str, list[float]]] = {}
    with log.open("w") as sink:
        for r in range(1, rounds + 1):
            print(f"criterion: round {r}/{rounds} ({', '.join(BENCHES)})", file=sys.stderr, flush=True)
            # Last round's estimates must not pass for this round's.
            for old in (target / "criterion").glob("**/new/estimates.json"):
                old.unlink()
            # Every other round, each group runs its peer first: a load that comes and goes
            # on a shared machine then favours neither side.
            env = dict(os.environ, RECUO_BENCH_PEER_FIRST=str(r % 2))
            subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT, check=True, env=env)
            for group, functions in medians(target / "criterion").items():
                for function, ns in functions.items():
                    results.setdefault(group, {}).setdefault(function, []).append(ns)
    out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
