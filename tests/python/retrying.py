"""Helpers shared by the recuo.retry tests: scripted operations and recorders."""

from __future__ import annotations

import uuid
from typing import Any

import recuo


class Failing:
    """An operation that raises `errors` in order, then returns `value`; it records each call's
    attempt context (recuo.current_attempt()) and each exception it raised."""

    def __init__(self, *errors: BaseException, value: Any = "ok") -> None:
        self.errors = list(errors)
        self.value = value
        self.attempts: list[recuo.Attempt] = []
        self.raised: list[BaseException] = []
        self.args: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    @property
    def calls(self) -> int:
        return len(self.attempts)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.attempts.append(recuo.current_attempt())
        self.args.append((args, kwargs))
        if self.errors:
            error = self.errors.pop(0)
            self.raised.append(error)
            raise error
        return self.value


class AsyncFailing(Failing):
    """The same, as an async operation (an object whose __call__ is `async def`)."""

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return super().__call__(*args, **kwargs)


def failures(n: int, kind: type[Exception] = ConnectionError) -> list[BaseException]:
    return [kind(f"failure {i + 1}") for i in range(n)]


class Events:
    """Records the hooks and sleeps of a loop, in order."""

    def __init__(self) -> None:
        self.log: list[tuple[Any, ...]] = []
        self.reports: list[recuo.Report] = []

    def on_retry(self, attempt: int, exc: Exception, delay: float) -> None:
        self.log.append(("retry", attempt, exc, delay))

    def on_give_up(self, report: recuo.Report) -> None:
        self.reports.append(report)
        self.log.append(("give_up", report))

    def sleep(self, seconds: float) -> None:
        self.log.append(("sleep", seconds))

    async def async_sleep(self, seconds: float) -> None:
        self.log.append(("async_sleep", seconds))

    @property
    def kinds(self) -> list[str]:
        return [str(e[0]) for e in self.log]

    @property
    def slept(self) -> list[float]:
        return [float(e[1]) for e in self.log if e[0] in ("sleep", "async_sleep")]


def is_uuid4(text: str) -> bool:
    parsed = uuid.UUID(text)
    return parsed.version == 4 and parsed.variant == uuid.RFC_4122 and str(parsed) == text


# With seed 1 and guide A's policy, the delays (ms) of a loop that always fails: the first two are
# tests/vectors/seeded.json's, and com_retry, recuo.retry and its async loop all draw these.
SEED_1_DELAYS_MS = [195, 277, 342, 281]
