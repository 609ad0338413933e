"""``run_batch``'s progress and the batch presets: the calls a seeded batch makes, exactly, and
a server's 60 s wait inside a 10-minute batch, waited under ``Policy.batch()`` and given up on
under ``Policy.interactive()`` (on a fake clock: ``sleep``)."""

from __future__ import annotations

import functools
import json
import pickle
from collections.abc import Callable

import pytest

import recuo


class Unavailable(Exception):
    pass


class NotFound(Exception):
    pass


def quick() -> recuo.Policy:
    return recuo.Policy(max_attempts=3, base=0.001, cap=0.001, jitter="none")


def classify(e: Exception) -> object:
    return recuo.Verdict.give_up() if isinstance(e, NotFound) else recuo.Verdict.retry()


def flaky_and_missing() -> tuple[Callable[[], str], Callable[[], str]]:
    """An operation that fails once, then succeeds; one that is never found."""
    calls = {0: 0}

    def flaky() -> str:
        calls[0] += 1
        if calls[0] == 1:
            raise Unavailable()
        return "ok"

    def missing() -> str:
        raise NotFound("gone")

    return flaky, missing


def test_progress_is_told_once_per_operation_in_order() -> None:
    flaky, missing = flaky_and_missing()
    told: list[recuo.BatchProgress] = []
    report = recuo.run_batch(
        [flaky, missing, lambda: "ok"], policy=quick(), classify=classify, on_progress=told.append
    )
    assert [r.status for r in report.results] == ["succeeded", "gave_up", "succeeded"]
    assert [(p.done, p.succeeded, p.failed, p.not_started, p.retries) for p in told] == [
        (1, 1, 0, 0, 1),
        (2, 1, 1, 0, 1),
        (3, 2, 1, 0, 1),
    ]
    assert {p.total for p in told} == {3}
    assert told[-1] == recuo.BatchProgress(total=3, done=3, succeeded=2, failed=1, not_started=0, retries=1)


def test_operations_never_started_are_told_too() -> None:
    told: list[recuo.BatchProgress] = []
    paced = recuo.Gate(regulator=recuo.Regulator("10/s"))  # one start every 100 ms
    report = recuo.run_batch([lambda: 1] * 4, gate=paced, deadline=0.15, on_progress=told.append)
    assert report.stats.not_started == 2
    assert [(p.done, p.succeeded, p.not_started) for p in told] == [(1, 1, 0), (2, 2, 0), (3, 2, 1), (4, 2, 2)]


def test_many_workers_tell_every_count_once_in_order() -> None:
    told: list[int] = []
    recuo.run_batch([lambda: 1] * 40, workers=4, on_progress=lambda p: told.append(p.done))
    assert told == list(range(1, 41))


def test_an_exception_in_on_progress_stops_the_batch_and_propagates() -> None:
    def boom(p: recuo.BatchProgress) -> None:
        raise RuntimeError(f"progress {p.done}")

    with pytest.raises(RuntimeError, match="progress 1"):
        recuo.run_batch([lambda: 1] * 3, on_progress=boom)


def test_on_progress_must_be_callable() -> None:
    with pytest.raises(TypeError, match="on_progress"):
        recuo.run_batch([lambda: 1], on_progress=3)  # type: ignore[arg-type]


def test_progress_is_plain_data() -> None:
    p = recuo.BatchProgress(total=3, done=1, succeeded=1, failed=0, not_started=0, retries=2)
    assert p.to_dict() == {"total": 3, "done": 1, "succeeded": 1, "failed": 0, "not_started": 0, "retries": 2}
    assert recuo.BatchProgress.from_dict(p.to_dict()) == p
    assert pickle.loads(pickle.dumps(p)) == p


def test_the_presets_differ_only_in_the_deadline() -> None:
    batch = recuo.Policy.batch().to_dict()
    interactive = recuo.Policy.interactive().to_dict()
    assert interactive == recuo.Policy.adapters().to_dict()
    assert (batch["deadline_ms"], interactive["deadline_ms"]) == (None, 30000)
    assert {k: v for k, v in batch.items() if k != "deadline_ms"} == {
        k: v for k, v in interactive.items() if k != "deadline_ms"
    }


# --- a batch's values across processes ---------------------------------------------------


def flaky_report() -> recuo.BatchReport:
    flaky, missing = flaky_and_missing()

    # Starts at 0, 250 (the retry), 500 and 750 ms; the fourth's slot, at 1 s, is past the deadline.
    paced = recuo.Gate(regulator=recuo.Regulator("4/s"))
    return recuo.run_batch(
        [flaky, missing, lambda: 3, lambda: 4], policy=quick(), classify=classify, gate=paced, deadline=0.875
    )


def test_a_report_pickles_with_its_values_and_errors() -> None:
    report = flaky_report()
    again = pickle.loads(pickle.dumps(report))
    assert [r.to_dict() for r in again.results] == [r.to_dict() for r in report.results]
    assert [r.value for r in again.results] == ["ok", None, 3, None]
    assert isinstance(again.results[1].error, NotFound) and again.results[1].error.args == ("gone",)
    assert again.stats == report.stats
    assert again.to_dict() == report.to_dict()


def test_a_report_as_plain_data_reads_back() -> None:
    report = flaky_report()
    plain = report.to_dict()
    assert [(r["status"], r["reason"], r["attempts"]) for r in plain["results"]] == [
        ("succeeded", None, 2),
        ("gave_up", "permanent", 1),
        ("succeeded", None, 1),
        ("not_started", "wait_exceeds_deadline", 0),
    ]
    assert plain["results"][1]["report"] is not None and plain["results"][1]["report"]["attempts"] == 1
    assert plain["stats"] == report.stats.to_dict()
    assert plain["elapsed_ms"] == int(report.elapsed * 1000)
    back = recuo.BatchReport.from_dict(json.loads(json.dumps(plain)))
    assert back.to_dict() == plain
    assert [r.value for r in back.results] == [None] * 4
    assert recuo.BatchResult.from_dict(plain["results"][3]).reason == "wait_exceeds_deadline"


@pytest.mark.parametrize(
    "value",
    [
        {"status": "gave_up", "reason": None, "stopped_by": None, "attempts": 1, "report": None},
        {"status": "done", "reason": None, "stopped_by": None, "attempts": 1, "report": None},
        {"status": "succeeded", "reason": None, "stopped_by": None, "attempts": -1, "report": None},
        {"status": "succeeded"},
    ],
)
def test_what_is_not_a_result_is_refused(value: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="not a recuo.BatchResult"):
        recuo.BatchResult.from_dict(value)


def test_stats_report_and_policy_pickle_and_read_back_from_plain_data() -> None:
    report = flaky_report()
    stats = report.stats
    assert pickle.loads(pickle.dumps(stats)) == stats
    assert recuo.Stats.from_dict(json.loads(json.dumps(stats.to_dict()))) == stats
    gave_up = report.results[1].report
    assert gave_up is not None
    assert pickle.loads(pickle.dumps(gave_up)) == gave_up
    assert recuo.Report.from_dict(json.loads(json.dumps(gave_up.to_dict()))) == gave_up
    policy = recuo.Policy.batch()
    assert pickle.loads(pickle.dumps(policy)) == policy
    assert recuo.Policy.from_dict(json.loads(json.dumps(policy.to_dict()))) == policy


def work(n: int) -> recuo.BatchReport:
    """A worker process's batch: its report goes back to the parent by pickle."""
    return recuo.run_batch([functools.partial(int.__mul__, i, n) for i in range(3)])


def test_workers_in_other_processes_send_their_reports_back() -> None:
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(2) as pool:
        reports = pool.map(work, [1, 2])
    assert [[r.value for r in report.results] for report in reports] == [[0, 1, 2], [0, 2, 4]]
    total = reports[0].stats + reports[1].stats
    assert (total.initial, total.successes, total.failures) == (6, 6, 0)
