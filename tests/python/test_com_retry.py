"""recuo.com_retry: guide A's loop, with every sleep injected and every jitter seeded."""

from __future__ import annotations

import math
import threading
import time
import traceback
from typing import Any, Callable, NoReturn

import pytest

import recuo


class Task:
    """A task that raises `errors` in order (an Exception or BaseException each), then
    returns `value`; it records every exception it raised."""

    def __init__(self, *errors: BaseException, value: Any = "ok") -> None:
        self.errors = list(errors)
        self.value = value
        self.calls = 0
        self.raised: list[BaseException] = []

    def __call__(self) -> Any:
        self.calls += 1
        if self.errors:
            erro = self.errors.pop(0)
            self.raised.append(erro)
            raise erro
        return self.value


class Sleeps:
    """An injected sleep that records the seconds it was asked to wait."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)


def never(*_args: object) -> NoReturn:
    raise AssertionError("must not be called")


def failures(n: int) -> list[BaseException]:
    return [ConnectionError(f"failure {i + 1}") for i in range(n)]


# --- the value and the attempts ------------------------------------------------------------


def test_first_success_returns_the_value_itself_and_never_sleeps() -> None:
    value = object()
    task = Task(value=value)
    assert recuo.com_retry(task, sleep=never, repetir_se=never) is value
    assert task.calls == 1


def test_success_on_the_third_attempt() -> None:
    task = Task(*failures(2), value=42)
    sleeps = Sleeps()
    assert recuo.com_retry(task, seed=1, sleep=sleeps) == 42
    assert task.calls == 3
    # Seed 1 draws 195 ms from [0, 200] and 277 ms from [0, 400] (tests/vectors/seeded.json).
    assert [round(s * 1000) for s in sleeps.seconds] == [195, 277]
    assert all(type(s) is float for s in sleeps.seconds)


def test_the_delays_are_full_jitter_within_the_growing_windows() -> None:
    sleeps = Sleeps()
    with pytest.raises(ConnectionError):
        recuo.com_retry(Task(*failures(8)), 8, base=0.1, maximo=0.5, seed=3, sleep=sleeps)
    windows = [0.1, 0.2, 0.4, 0.5, 0.5, 0.5, 0.5]
    assert 0 < len(sleeps.seconds) <= len(windows)
    # Zero draws are skipped, so compare in order against the windows that are left.
    remaining = iter(windows)
    for s in sleeps.seconds:
        assert any(0 < s <= w for w in remaining)


def test_the_same_seed_gives_the_same_delays() -> None:
    runs = []
    for _ in range(2):
        sleeps = Sleeps()
        with pytest.raises(ConnectionError):
            recuo.com_retry(Task(*failures(5)), seed=2, sleep=sleeps)
        runs.append([round(s * 1000) for s in sleeps.seconds])
    assert runs[0] == runs[1] == [59, 7, 368, 793]


def test_a_seed_at_the_top_of_the_range_is_accepted() -> None:
    assert recuo.com_retry(Task(*failures(1)), 2, seed=2**64 - 1, sleep=Sleeps()) == "ok"


def test_the_attempts_are_spent_and_the_last_error_is_raised() -> None:
    task = Task(*failures(9))
    sleeps = Sleeps()
    with pytest.raises(ConnectionError) as caught:
        recuo.com_retry(task, tentativas=4, seed=5, sleep=sleeps)
    assert task.calls == 4
    assert caught.value is task.raised[-1]
    assert len(sleeps.seconds) <= 3


def test_one_attempt_means_no_retry() -> None:
    task = Task(*failures(2))
    with pytest.raises(ConnectionError):
        recuo.com_retry(task, tentativas=1, repetir_se=never, sleep=never)
    assert task.calls == 1


# --- the same exception object, with its traceback ------------------------------------------


def failing_task() -> NoReturn:
    raise KeyError("the task's own error")


def test_the_very_same_exception_object_is_reraised() -> None:
    thrown = ValueError("boom")
    task = Task(thrown, thrown, thrown)
    with pytest.raises(ValueError) as caught:
        recuo.com_retry(task, tentativas=3, base=0, maximo=0)
    assert caught.value is thrown


def test_the_traceback_shows_the_task_frame() -> None:
    try:
        recuo.com_retry(failing_task, tentativas=2, base=0, maximo=0)
    except KeyError as erro:
        frames = traceback.extract_tb(erro.__traceback__)
    else:
        pytest.fail("com_retry returned")
    assert frames[0].name == "test_the_traceback_shows_the_task_frame"
    assert frames[-1].name == "failing_task"
    assert frames[-1].line == 'raise KeyError("the task\'s own error")'


def test_earlier_attempts_do_not_chain_into_the_last_error() -> None:
    task = Task(*failures(3))
    with pytest.raises(ConnectionError) as caught:
        recuo.com_retry(task, tentativas=3, base=0, maximo=0)
    assert caught.value.__context__ is None
    assert caught.value.__cause__ is None


# --- BaseException is not retried -----------------------------------------------------------


class Custom(BaseException):
    pass


@pytest.mark.parametrize(
    "erro",
    [KeyboardInterrupt(), SystemExit(3), GeneratorExit(), Custom("mine")],
    ids=["KeyboardInterrupt", "SystemExit", "GeneratorExit", "custom BaseException"],
)
def test_base_exceptions_propagate_at_once(erro: BaseException) -> None:
    task = Task(erro, value="never returned")
    with pytest.raises(type(erro)) as caught:
        recuo.com_retry(task, repetir_se=never, sleep=never)
    assert caught.value is erro
    assert task.calls == 1


def test_a_base_exception_after_failures_ends_the_loop() -> None:
    stop = KeyboardInterrupt()
    task = Task(ConnectionError(), stop, value="never returned")
    with pytest.raises(KeyboardInterrupt) as caught:
        recuo.com_retry(task, base=0, maximo=0, sleep=never)
    assert caught.value is stop
    assert task.calls == 2


# --- the predicate decides ------------------------------------------------------------------


def test_the_predicate_receives_the_exception_and_can_stop_the_loop() -> None:
    permanent = PermissionError("403")
    task = Task(TimeoutError("503"), permanent, value="never returned")
    seen: list[BaseException] = []

    def repetir_se(erro: Exception) -> bool:
        seen.append(erro)
        return not isinstance(erro, PermissionError)

    with pytest.raises(PermissionError) as caught:
        recuo.com_retry(task, repetir_se=repetir_se, base=0, maximo=0)
    assert caught.value is permanent
    assert task.calls == 2
    assert seen == task.raised
    assert all(a is b for a, b in zip(seen, task.raised))


def test_the_predicate_is_not_asked_after_the_last_attempt() -> None:
    asked: list[Exception] = []

    def repetir_se(erro: Exception) -> bool:
        asked.append(erro)
        return True

    with pytest.raises(ConnectionError):
        recuo.com_retry(Task(*failures(5)), tentativas=3, base=0, maximo=0, repetir_se=repetir_se)
    assert len(asked) == 2


@pytest.mark.parametrize(
    ("answer", "calls"),
    [(True, 3), ("yes", 3), (1, 3), ([0], 3), (False, 1), (None, 1), (0, 1), ("", 1)],
)
def test_the_predicate_answer_is_read_for_its_truth(answer: object, calls: int) -> None:
    task = Task(*failures(2))
    if calls == 3:
        assert recuo.com_retry(task, repetir_se=lambda _: answer, base=0, maximo=0) == "ok"
    else:
        with pytest.raises(ConnectionError):
            recuo.com_retry(task, repetir_se=lambda _: answer, base=0, maximo=0)
    assert task.calls == calls


def test_repetir_se_none_retries_every_exception() -> None:
    task = Task(ValueError(), KeyError(), OSError(), value=7)
    assert recuo.com_retry(task, repetir_se=None, base=0, maximo=0) == 7
    assert task.calls == 4


def test_an_exception_from_the_predicate_propagates() -> None:
    task = Task(*failures(3))
    bug = RuntimeError("predicate bug")

    def repetir_se(_: Exception) -> bool:
        raise bug

    with pytest.raises(RuntimeError) as caught:
        recuo.com_retry(task, repetir_se=repetir_se, sleep=never)
    assert caught.value is bug
    assert task.calls == 1
    # As in an `except` block: raised while the task's error was being handled.
    assert caught.value.__context__ is task.raised[0]


def test_an_exception_from_the_answers_truth_propagates() -> None:
    class Undecided:
        def __bool__(self) -> bool:
            raise LookupError("no truth")

    task = Task(*failures(3))
    with pytest.raises(LookupError):
        recuo.com_retry(task, repetir_se=lambda _: Undecided(), sleep=never)
    assert task.calls == 1


# --- sleeping -------------------------------------------------------------------------------


@pytest.mark.parametrize(("base", "maximo"), [(0, 0), (0.0, 0.0), (0.0004, 0.0004), (0, 5)])
def test_zero_delays_never_call_sleep(base: float, maximo: float) -> None:
    # Every window is 0 ms (base 0, or a base that rounds to 0 ms): no delay, no sleep.
    task = Task(*failures(4))
    assert recuo.com_retry(task, tentativas=5, base=base, maximo=maximo, sleep=never) == "ok"
    assert task.calls == 5


def test_an_exception_from_the_sleep_ends_the_loop() -> None:
    task = Task(*failures(3))
    stop = KeyboardInterrupt()

    def sleep(_: float) -> None:
        raise stop

    with pytest.raises(KeyboardInterrupt) as caught:
        recuo.com_retry(task, seed=1, sleep=sleep)
    assert caught.value is stop
    assert task.calls == 1


def test_the_sleeps_return_value_is_ignored() -> None:
    assert recuo.com_retry(Task(*failures(2)), seed=1, sleep=lambda s: "ignored") == "ok"


def test_the_default_sleep_really_waits_and_retries() -> None:
    task = Task(*failures(2))
    assert recuo.com_retry(task, base=0.001, maximo=0.002, seed=4) == "ok"
    assert task.calls == 3


# --- what can be a task ---------------------------------------------------------------------


def test_any_callable_is_a_task() -> None:
    class Service:
        def fetch(self) -> str:
            return "bound method"

    assert recuo.com_retry(Service().fetch) == "bound method"
    assert recuo.com_retry(dict) == {}
    assert recuo.com_retry(Task(value=None)) is None


def test_a_task_may_itself_call_com_retry() -> None:
    inner = Task(*failures(1), value="inner")
    outer = Task(*failures(1))

    def task() -> str:
        outer()
        return str(recuo.com_retry(inner, base=0, maximo=0))

    assert recuo.com_retry(task, base=0, maximo=0) == "inner"
    assert (outer.calls, inner.calls) == (2, 2)


def test_threads_run_their_own_loops() -> None:
    results: list[object] = []

    def run(n: int) -> None:
        results.append(recuo.com_retry(Task(*failures(2), value=n), seed=n, sleep=Sleeps()))

    threads = [threading.Thread(target=run, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == list(range(8))  # type: ignore[type-var]


# --- bad input ------------------------------------------------------------------------------


def config_error(code: int, name: str, call: Callable[[], object]) -> recuo.ConfigError:
    with pytest.raises(recuo.ConfigError) as caught:
        call()
    assert (caught.value.code, caught.value.name) == (code, name)
    assert isinstance(caught.value, ValueError)
    return caught.value


@pytest.mark.parametrize("tentativas", [0, -1, -(2**70)])
def test_fewer_than_one_attempt_is_refused(tentativas: int) -> None:
    erro = config_error(1, "zero_attempts", lambda: recuo.com_retry(never, tentativas))
    assert str(erro) == "attempts must be at least 1"


def test_more_attempts_than_the_core_counts_is_a_value_error() -> None:
    recuo.com_retry(Task(), 2**32 - 1)
    for tentativas in (2**32, 2**100):
        with pytest.raises(ValueError, match="tentativas must be at most 4294967295") as caught:
            recuo.com_retry(never, tentativas)
        assert not isinstance(caught.value, recuo.ConfigError)


@pytest.mark.parametrize(
    ("kwargs", "code", "name"),
    [
        ({"base": -0.001}, 2, "negative_duration"),
        ({"maximo": -1}, 2, "negative_duration"),
        ({"base": -math.inf}, 2, "negative_duration"),
        ({"base": -(10**400)}, 2, "negative_duration"),
        ({"base": math.nan}, 3, "not_a_number"),
        ({"maximo": math.nan}, 3, "not_a_number"),
        ({"maximo": math.inf}, 4, "duration_too_large"),
        ({"maximo": 10**400}, 4, "duration_too_large"),
        ({"maximo": 1e300}, 4, "duration_too_large"),
        ({"base": 1.0, "maximo": 0.5}, 5, "cap_below_base"),
        ({"base": 0.2, "maximo": 0}, 5, "cap_below_base"),
    ],
    ids=lambda v: repr(v),
)
def test_bad_durations_are_refused(kwargs: dict[str, Any], code: int, name: str) -> None:
    config_error(code, name, lambda: recuo.com_retry(never, **kwargs))


def test_the_cap_below_base_message_names_both() -> None:
    erro = config_error(5, "cap_below_base", lambda: recuo.com_retry(never, 3, 1.0, 0.5))
    assert str(erro) == "the maximum (500 ms) must not be below the base (1000 ms)"


def test_durations_may_be_ints_or_floats() -> None:
    sleeps = Sleeps()
    assert recuo.com_retry(Task(*failures(1)), 2, 1, 2, seed=1, sleep=sleeps) == "ok"
    assert recuo.com_retry(Task(*failures(1)), 2, 1.0, 2.0, seed=1, sleep=sleeps) == "ok"
    assert sleeps.seconds[0] == sleeps.seconds[1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tentativas": True}, "tentativas must be an int, not bool"),
        ({"tentativas": 5.0}, "tentativas must be an int, not float"),
        ({"tentativas": "5"}, "tentativas must be an int, not str"),
        ({"tentativas": None}, "tentativas must be an int, not NoneType"),
        ({"base": True}, "base must be a number of seconds"),
        ({"base": "0.2"}, "base must be a number of seconds"),
        ({"maximo": None}, "maximo must be a number of seconds"),
        ({"repetir_se": 1}, "repetir_se must be callable, not int"),
        ({"sleep": "time.sleep"}, "sleep must be callable, not str"),
        ({"seed": True}, "seed must be an int, not bool"),
        ({"seed": 1.0}, "seed must be an int, not float"),
    ],
    ids=lambda v: repr(v),
)
def test_wrong_types_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        recuo.com_retry(never, **kwargs)


@pytest.mark.parametrize("tarefa", [None, 42, "task", [never]])
def test_a_task_that_cannot_be_called_is_refused(tarefa: object) -> None:
    with pytest.raises(TypeError, match="tarefa must be callable"):
        recuo.com_retry(tarefa)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", [-1, 2**64, -(2**100)])
def test_seeds_out_of_range_are_refused(seed: int) -> None:
    with pytest.raises(ValueError, match=r"seed must be between 0 and 2\*\*64 - 1"):
        recuo.com_retry(never, seed=seed)


def test_arguments_are_checked_by_name_and_count() -> None:
    with pytest.raises(TypeError):
        recuo.com_retry()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        recuo.com_retry(never, 5, 0.2, 5.0, None, 7)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        recuo.com_retry(never, attempts=5)  # type: ignore[call-arg]


# --- prazo= (the deadline) and ao_repetir= (the hook) ----------------------------------------


def test_ao_repetir_is_called_before_each_wait_with_the_attempt_the_error_and_the_delay() -> None:
    log: list[tuple[Any, ...]] = []
    task = Task(*failures(3), value="ok")
    result = recuo.com_retry(
        task,
        seed=1,
        ao_repetir=lambda attempt, erro, delay: log.append(("hook", attempt, erro, delay)),
        sleep=lambda s: log.append(("sleep", s)),
    )
    assert result == "ok"
    assert [e[0] for e in log] == ["hook", "sleep"] * 3
    hooks = [e for e in log if e[0] == "hook"]
    assert [h[1] for h in hooks] == [0, 1, 2]
    assert [h[2] for h in hooks] == task.raised
    assert [h[3] for h in hooks] == [e[1] for e in log if e[0] == "sleep"]
    assert [round(h[3] * 1000) for h in hooks] == [195, 277, 342]


def test_ao_repetir_is_not_called_when_the_loop_gives_up() -> None:
    calls: list[int] = []
    with pytest.raises(ConnectionError):
        recuo.com_retry(Task(*failures(2)), 2, ao_repetir=lambda a, e, d: calls.append(a), sleep=Sleeps())
    assert calls == [0]


def test_ao_repetir_is_called_for_zero_delays_too() -> None:
    calls: list[float] = []
    recuo.com_retry(Task(*failures(2)), base=0, maximo=0, ao_repetir=lambda a, e, d: calls.append(d), sleep=never)
    assert calls == [0.0, 0.0]


def test_an_exception_from_ao_repetir_ends_the_loop() -> None:
    task = Task(*failures(3))

    def hook(attempt: int, erro: Exception, delay: float) -> None:
        raise LookupError("hook bug")

    with pytest.raises(LookupError) as caught:
        recuo.com_retry(task, ao_repetir=hook, sleep=never)
    assert task.calls == 1
    assert caught.value.__context__ is task.raised[0]


def test_a_wait_past_prazo_is_not_slept_and_the_task_error_is_raised() -> None:
    task = Task(*failures(3))
    with pytest.raises(ConnectionError) as caught:
        recuo.com_retry(task, base=1, maximo=1, prazo=0.5, seed=1, ao_repetir=never, sleep=never)
    assert caught.value is task.raised[0]
    assert task.calls == 1


def test_prazo_counts_the_time_of_the_attempts() -> None:
    # Each attempt takes at least 30 ms: within 100 ms, at most 4 attempts start, not 100.
    calls = 0

    def slow() -> NoReturn:
        nonlocal calls
        calls += 1
        time.sleep(0.03)
        raise ConnectionError("slow")

    with pytest.raises(ConnectionError):
        recuo.com_retry(slow, 100, base=0.001, maximo=0.001, prazo=0.1)
    assert 1 <= calls <= 4


def test_a_generous_prazo_changes_nothing() -> None:
    def sleeps(**kwargs: Any) -> list[float]:
        slept = Sleeps()
        with pytest.raises(ConnectionError):
            recuo.com_retry(Task(*failures(5)), seed=9, sleep=slept, **kwargs)
        return slept.seconds

    assert sleeps(prazo=3600) == sleeps() == sleeps(prazo=None)


@pytest.mark.parametrize(
    ("prazo", "error", "name"),
    [
        (-1, recuo.ConfigError, "negative_duration"),
        (float("nan"), recuo.ConfigError, "not_a_number"),
        (math.inf, recuo.ConfigError, "duration_too_large"),
        ("30", TypeError, None),
        (True, TypeError, None),
    ],
)
def test_bad_prazo_is_refused(prazo: Any, error: type[Exception], name: str | None) -> None:
    with pytest.raises(error) as caught:
        recuo.com_retry(never, prazo=prazo)
    if name is not None:
        assert getattr(caught.value, "name") == name


def test_prazo_and_ao_repetir_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        recuo.com_retry(never, 5, 0.2, 5.0, None, 30)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="ao_repetir must be callable"):
        recuo.com_retry(never, ao_repetir=1)  # type: ignore[arg-type]


def test_repetir_se_may_answer_a_verdict_whose_server_wait_is_honoured() -> None:
    class Busy(Exception):
        pass

    slept = Sleeps()
    task = Task(Busy(), value="ok")
    verdict = recuo.classify(503, headers={"Retry-After": "3"})
    assert recuo.com_retry(task, repetir_se=lambda erro: verdict, sleep=slept) == "ok"
    assert 3.0 <= slept.seconds[0] <= 3.2  # the server's wait, plus a spread of at most 200 ms


def test_the_task_sees_its_attempt_and_one_key() -> None:
    seen: list[recuo.Attempt] = []

    def tarefa() -> str:
        seen.append(recuo.current_attempt())
        if len(seen) < 3:
            raise ConnectionError("down")
        return "ok"

    recuo.com_retry(tarefa, sleep=Sleeps())
    assert [a.number for a in seen] == [0, 1, 2]
    assert len({a.idempotency_key for a in seen}) == 1
