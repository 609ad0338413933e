"""The core's costs that do not move with noise: instructions and allocations per call.

    python3 core_instructions.py INSTRUCTIONS_BINARY OUT.json

Runs recuo-bench's `instructions` binary (bench/src/bin/instructions.rs) for every case, under
`valgrind --tool=callgrind --toggle-collect='*measured_*'` at two lengths: the difference in
instructions over the difference in calls is the cost of one call, counted only inside the
measured functions (the fresh state each decision gets is made outside them). Without
valgrind, the allocations alone. OUT.json maps case -> {"instructions": per call or null,
"allocations": per call}; bench/report/build_report.py and callgrind.py read it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# One decision under guide B's policy (benches/decide.rs), and Retry-After "120"
# (benches/retry_after.rs): recuo's side, then its baselines.
CASES = [
    *(f"decide/{outcome}/{side}" for outcome in ("backoff", "server-wait", "give-up")
      for side in ("recuo", "hand-rolled")),
    "retry-after-seconds/recuo", "retry-after-seconds/std-parse", "retry-after-seconds/str-parse",
]
SHORT, LONG = 1_000, 3_000


def run(binary: str, case: str, n: int, out: Path | None) -> tuple[int | None, int]:
    """(instructions inside the measured calls or None, allocations) for n calls."""
    command = [binary, case, str(n)]
    if out is not None:
        command = ["valgrind", "--tool=callgrind", "--toggle-collect=*measured_*",
                   f"--callgrind-out-file={out}", *command]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    allocations = json.loads(done.stdout.strip().splitlines()[-1])["allocations"]
    if out is None:
        return None, allocations
    total = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), flags=re.M)
    assert total, f"no total in {out}"
    return int(total.group(1)), allocations


def counts(binary: str) -> dict[str, dict[str, float | None]]:
    valgrind = shutil.which("valgrind") is not None
    found: dict[str, dict[str, float | None]] = {}
    with tempfile.TemporaryDirectory() as work:
        for case in CASES:
            print(f"instructions: {case}", file=sys.stderr, flush=True)
            out = Path(work) / "callgrind.out" if valgrind else None
            (short_ir, _), (long_ir, allocations) = (run(binary, case, n, out) for n in (SHORT, LONG))
            per_call = None if short_ir is None or long_ir is None else (long_ir - short_ir) / (LONG - SHORT)
            found[case] = {"instructions": per_call, "allocations": allocations / LONG}
    return found


def main() -> None:
    binary, out = sys.argv[1], Path(sys.argv[2])
    out.write_text(json.dumps(counts(binary), indent=1))


if __name__ == "__main__":
    main()
