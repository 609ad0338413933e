"""Guide B's job, against a real rate limiter: a batch of reads from 4 worker processes per
language sharing one regulator (a 9/s target), one concurrency limit of 3 and one retry budget,
through nginx's ``limit_req`` (12 requests a second, a burst of 3, 429 past it) in front of
``recuo serve --latency 300ms`` — so requests are really in flight, and counted by the server.

Python's workers are 2 with requests and 2 with httpx; PHP's use Guzzle; Node's share their
limits on a Redis server. What must hold, for each: no 429 from nginx; the batch done within
1.05 times the planner's figure; at most 3 requests in flight by the server's count; the
workers' merged stats equal to nginx's access log. Then, in Python, the allowance cut mid-run
(nginx reloaded at 6/s): with the adaptive shared regulator, the share of 429s over the next
20 s is at most a third of what the same run without it sees.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import pytest

import recuo
from conftest import ROOT
from redis_server import redis_server
from serving import nginx, recuo_serve, stats

HERE = Path(__file__).resolve().parent
WORKERS = 4
TARGET = "9/s"
LIMIT = 3
ALLOWANCE = 12
LATENCY_S = 0.3
PHP_EXTENSION = Path(os.environ.get("RECUO_PHP_EXTENSION", ROOT / "target" / "debug" / "librecuo_php.so"))


# How each language's worker k is started: base URL, the shared rate (TARGET), the deadline of
# its share (DEADLINE_S), start instant, where the shared limits live (a folder, or a Redis
# URL), "adaptive" or "steady", its reads.
Command = Callable[[int, str, int, str, str, list[str]], list[str]]
DEADLINE_S = "120"

COMMANDS: dict[str, Command] = {
    "python": lambda k, base, start, state, mode, ids: [
        sys.executable, str(HERE / "worker.py"), "requests" if k < 2 else "httpx",
        base, TARGET, DEADLINE_S, str(start), state, mode, *ids,
    ],
    "php": lambda k, base, start, state, mode, ids: [
        "php", "-d", f"extension={PHP_EXTENSION}", str(HERE / "worker.php"),
        base, TARGET, DEADLINE_S, str(start), state, mode, *ids,
    ],
    "node": lambda k, base, start, state, mode, ids: [
        "node", str(node_worker()), base, TARGET, DEADLINE_S, str(start), state, mode, *ids,
    ],
}


def node_worker() -> Path:
    """worker.mjs where `import ... from 'recuo'` finds the package of js/, as an installed
    one would be found: beside a node_modules/recuo of its own."""
    folder = Path(tempfile.gettempdir()) / f"recuo-guide-b-node-{os.getpid()}"
    (folder / "node_modules").mkdir(parents=True, exist_ok=True)
    link = folder / "node_modules" / "recuo"
    if not link.exists():
        link.symlink_to(ROOT / "js", target_is_directory=True)
    shutil.copyfile(HERE / "worker.mjs", folder / "worker.mjs")
    return folder / "worker.mjs"


@dataclass
class Job:
    """What one run of the job came to: the workers' merged stats, the batch's time as nginx
    saw it (from the first request's arrival to the last one's answer), nginx's log (status,
    end, duration), the server's count of requests in flight, and when the allowance was cut
    (Unix seconds), if it was."""

    stats: recuo.Stats
    elapsed_s: float
    log: list[tuple[int, float, float]]
    max_in_flight: int
    cut_at: float | None


def run(language: str, reads: int, *, fail_rate: float = 0.0, adaptive: bool = False, cut_after_s: float | None = None) -> Job:
    """Guide B's job: ``reads`` reads shared out among 4 workers of ``language``; with
    ``cut_after_s``, nginx's allowance is cut to 6/s that long after the start."""
    serve = ("--allowance", "100000/min", "--burst", "1000", "--latency", "300ms", "--fail-rate", str(fail_rate), "--seed", "7")
    with (
        recuo_serve(*serve) as upstream,
        nginx(ALLOWANCE, burst=3, upstream=upstream) as server,
        tempfile.TemporaryDirectory(prefix="recuo-guide-b-") as folder,
        (redis_server() if language == "node" else nullcontext(folder)) as state,
    ):
        shares = [[str(i) for i in range(k, reads, WORKERS)] for k in range(WORKERS)]
        # Every worker waits for one instant, late enough for the slowest to have loaded.
        start = time.monotonic_ns() + 3_000_000_000
        mode = "adaptive" if adaptive else "steady"
        procs = [
            subprocess.Popen(
                COMMANDS[language](k, server.url, start, state, mode, share),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
            for k, share in enumerate(shares)
        ]
        cut_at = None
        if cut_after_s is not None:
            time.sleep(max(0.0, (start - time.monotonic_ns()) / 1e9 + cut_after_s))
            server.reload(6)
            cut_at = time.time()
        outputs = [proc.communicate(timeout=240) for proc in procs]
        for proc, (out, err) in zip(procs, outputs):
            assert proc.returncode == 0, f"{language} worker: {err}{out}"
        printed = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
        merged = sum((recuo.Stats.from_dict(stats) for stats in printed), recuo.Stats())
        seen = stats(upstream)
        log = server.entries()
        elapsed = max(at for _, at, _ in log) - min(at - took for _, at, took in log)
        return Job(merged, elapsed, log, seen["max_in_flight"], cut_at)


def assert_counts_match_the_log(job: Job) -> None:
    """The workers' merged stats are what nginx logged: every attempt a line, every 429 and
    every 503 seen a line of its own, every success a 200."""
    statuses = [status for status, _, _ in job.log]
    s = job.stats
    assert (s.initial + s.retries, s.throttled, s.unavailable, s.successes) == (
        len(statuses),
        statuses.count(429),
        statuses.count(503),
        statuses.count(200),
    )


def ready(language: str) -> str | None:
    """Why ``language``'s workers cannot run here, or None."""
    if not Path(shutil.which("nginx") or "/usr/sbin/nginx").exists():
        return "nginx (nginx-light) is not installed"
    if language == "php" and not PHP_EXTENSION.exists():
        return f"{PHP_EXTENSION} is not built (make build-php)"
    if language == "node" and not (ROOT / "js" / "recuo.wasm").exists():
        return "js/recuo.wasm is not built (make wasm)"
    return None


READS = 108
_steady: dict[str, Job] = {}


def steady_job(language: str) -> Job:
    """The job of ``READS`` reads in ``language``, run once for the tests that read it."""
    if why := ready(language):
        pytest.fail(why)
    if language not in _steady:
        _steady[language] = run(language, READS)
        job = _steady[language]
        plan = recuo.plan(READS, f"{ALLOWANCE}/s", TARGET, LATENCY_S)
        statuses = [status for status, _, _ in job.log]
        print(
            f"\n{language}: {READS} reads in {job.elapsed_s:.2f} s (the plan: {plan.duration_s:.2f} s, "
            f"{job.elapsed_s / plan.duration_s:.3f}x), {statuses.count(429)} x 429, "
            f"at most {job.max_in_flight} in flight by the server's count"
        )
    return _steady[language]


@pytest.mark.parametrize("language", ["python", "php", "node"])
def test_the_job_keeps_under_the_allowance_and_its_stats_are_the_log(language: str) -> None:
    job = steady_job(language)
    statuses = [status for status, _, _ in job.log]
    assert statuses.count(429) == 0
    assert job.max_in_flight <= LIMIT
    assert (job.stats.successes, job.stats.failures) == (READS, 0)
    assert_counts_match_the_log(job)


@pytest.mark.parametrize("language", ["python", "php", "node"])
def test_the_job_ends_on_the_planners_schedule(language: str) -> None:
    job = steady_job(language)
    plan = recuo.plan(READS, f"{ALLOWANCE}/s", TARGET, LATENCY_S)
    slowest = max(job.log, key=lambda entry: entry[2])
    assert job.elapsed_s <= 1.05 * plan.duration_s, (
        f"{language}: {job.elapsed_s:.2f} s; {job.stats.to_dict()}; "
        f"the slowest request {slowest[2]:.3f} s ({slowest[0]})"
    )


@pytest.mark.parametrize("language", ["python", "php", "node"])
def test_503s_are_retried_and_every_attempt_is_counted(language: str) -> None:
    if why := ready(language):
        pytest.fail(why)
    reads = 36
    job = run(language, reads, fail_rate=0.1)
    statuses = [status for status, _, _ in job.log]
    print(f"{language}: {len(statuses)} requests for {reads} reads, {statuses.count(503)} x 503")
    assert statuses.count(429) == 0
    assert statuses.count(503) > 0 and job.stats.retries > 0
    assert job.max_in_flight <= LIMIT
    assert job.stats.successes + job.stats.failures == reads
    assert_counts_match_the_log(job)


def share_of_429s(job: Job, seconds: float) -> float:
    assert job.cut_at is not None
    window = [status for status, at, _ in job.log if job.cut_at <= at < job.cut_at + seconds]
    assert len(window) >= 40, f"only {len(window)} requests in the {seconds} s after the cut"
    return window.count(429) / len(window)


# In Python. PHP's workers wait out each 429's `Retry-After: 1` in the one thread of their
# process, which holds that process's other reads too, so its steady run falls well under
# 9/s after the cut (17.8% of 429s, against 10.4% adaptive) and is no yardstick. Node's run
# (through Redis) passes, but its adaptive share spreads too widely to gate on (8.4%, 9.1%,
# 11.1% against a bound near 11.1%): `make test-guide-b-cut LANGUAGES=node` runs it.
@pytest.mark.parametrize("language", os.environ.get("RECUO_GUIDE_B_CUT_LANGUAGES", "python").split())
def test_an_adaptive_regulator_follows_a_cut_allowance(language: str) -> None:
    # On a quiet machine (make test runs this file alone, after every other suite) Python's
    # shares come out nearly the same run after run: 33.0-33.3% steady, 9.2-9.8% adaptive —
    # the adaptive rule's own rhythm (halved by a 429, back to 9/s after 8 successes) sets it.
    if why := ready(language):
        pytest.fail(why)
    steady = run(language, 220, cut_after_s=2.0)
    adaptive = run(language, 220, adaptive=True, cut_after_s=2.0)
    steady_share, adaptive_share = share_of_429s(steady, 20), share_of_429s(adaptive, 20)
    print(f"{language}: 429s over the 20 s after the cut to 6/s: {steady_share:.1%} steady, {adaptive_share:.1%} adaptive")
    assert steady_share > 0
    assert adaptive_share <= steady_share / 3
    assert_counts_match_the_log(steady)
    assert_counts_match_the_log(adaptive)


@pytest.mark.parametrize("worker", ["worker.py", "worker.php", "worker.mjs"])
def test_the_recipes_page_shows_the_worker_that_runs_here(worker: str) -> None:
    """The recipe users read (docs/recipes.md's guide B job) is the file these tests run."""
    code = (HERE / worker).read_text().rstrip()
    recipes = (ROOT / "docs" / "recipes.md").read_text()
    section = recipes.split("\n## 600 calls from four workers against 120 a minute\n", 1)[1].split("\n## ", 1)[0]
    assert code in section
