"""``run_batch``'s progress and the batch presets: the calls a seeded batch makes, exactly, and
a server's 60 s wait inside a 10-minute batch, waited under ``Policy.batch()`` and given up on
under ``Policy.interactive()`` (on a fake clock: ``sleep``)."""

from __future__ import annotations

import pickle

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


def test_progress_is_told_once_per_operation_in_order() -> None:
    calls = {0: 0}

    def flaky() -> str:
        calls[0] += 1
        if calls[0] == 1:
            raise Unavailable()
        return "ok"

    def missing() -> str:
        raise NotFound()

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
