"""recuo's native module (Rust, pyo3); import ``recuo`` instead."""

from typing import Callable, Literal, TypeVar, final

_T = TypeVar("_T")

__all__ = [
    "ConfigError",
    "RetryAfter",
    "__version__",
    "backoff_window_ms",
    "com_retry",
    "parse_retry_after",
    "retry_delay_ms",
]

__version__: str

class ConfigError(ValueError):
    """A configuration recuo refuses: attempts below 1, a negative or NaN duration, a maximum
    below the base.

    A subclass of ValueError. ``code`` is the core's stable number for the error (the same in
    C, Python and PHP) and ``name`` its stable lower-case name; the message is for humans.
    """

    code: int
    """1 zero_attempts, 2 negative_duration, 3 not_a_number, 4 duration_too_large,
    5 cap_below_base."""
    name: Literal[
        "zero_attempts",
        "negative_duration",
        "not_a_number",
        "duration_too_large",
        "cap_below_base",
    ]
    """The error's stable lower-case name."""

@final
class RetryAfter:
    """What a Retry-After value asks for; made by ``parse_retry_after``.

    Immutable, comparable and hashable.
    """

    @property
    def kind(self) -> Literal["seconds", "date", "unbounded", "invalid"]:
        """``"seconds"``, ``"date"``, ``"unbounded"`` or ``"invalid"``."""
    @property
    def wait_ms(self) -> int | None:
        """The server's finite wait in milliseconds, or ``None`` when unbounded or invalid."""
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

def com_retry(
    tarefa: Callable[[], _T],
    tentativas: int = 5,
    base: float = 0.2,
    maximo: float = 5.0,
    repetir_se: Callable[[Exception], object] | None = None,
    *,
    seed: int | None = None,
    sleep: Callable[[float], object] | None = None,
) -> _T:
    """Guide A's retry loop: call ``tarefa()`` up to ``tentativas`` times and return its value.

    When ``tarefa`` raises an ``Exception`` and ``repetir_se(erro)`` is true
    (``repetir_se=None`` retries every ``Exception``), wait a delay drawn uniformly from
    ``[0, min(maximo, base * 2**i)]`` seconds (full jitter; ``i`` counts retries from 0) and
    call it again. When the attempts are spent or ``repetir_se`` answers false, the task's
    exception is re-raised: the very same object, with its traceback.

    A ``BaseException`` that is not an ``Exception`` (``KeyboardInterrupt``, ``SystemExit``)
    is never retried: it propagates at once. So does an exception raised by ``repetir_se``
    or by ``sleep``.

    ``base`` and ``maximo`` are seconds (int or float). ``seed`` makes the jitter
    reproducible. ``sleep(seconds)`` replaces the real wait, for tests; a zero delay calls no
    sleep at all. The real wait releases the GIL and answers Ctrl-C within about 50 ms.

    Raises ``ConfigError`` (a ``ValueError``) when ``tentativas < 1``, a duration is negative,
    NaN or infinite, or ``maximo < base``; ``TypeError`` when ``tarefa``, ``repetir_se`` or
    ``sleep`` is not callable or an argument has the wrong type (``bool`` is refused where an
    int is expected).
    """

def retry_delay_ms(
    retry_after: str | bytes | None,
    attempt: int,
    now_ms: int | None = None,
    *,
    seed: int | None = None,
) -> float:
    """Guide B's delay before retry number ``attempt`` (from 0), in milliseconds.

    Seconds (``"12"`` is 12000.0) and HTTP-dates (a past date is 0.0) give the server's wait
    exactly; a wait beyond 2**53 - 1 ms gives ``math.inf``; a missing or invalid value gives a
    full-jitter draw from ``[0, min(8000, 1000 * 2**attempt)]``. ``bytes`` are read as they
    are. ``now_ms`` is ms since the Unix epoch (``None``: the system clock). ``seed`` makes
    the jitter reproducible. ``ValueError`` for a negative ``attempt``.
    """

def parse_retry_after(value: str | bytes | None, now_ms: int | None = None) -> RetryAfter:
    """Reads a Retry-After value as of ``now_ms`` (ms since the Unix epoch; ``None``: the
    system clock): seconds, an HTTP-date in any of RFC 9110's three forms (a past date waits
    0), unbounded (beyond 2**53 - 1 ms) or invalid.
    """

def backoff_window_ms(attempt: int, base_ms: int = 200, cap_ms: int = 5000) -> int:
    """The backoff window before retry number ``attempt``: ``min(cap_ms, base_ms * 2**attempt)``
    in whole milliseconds, exact for every int.

    ``ConfigError`` when ``cap_ms < base_ms`` or a duration is negative or above 2**64 - 1;
    ``ValueError`` for a negative ``attempt``.
    """
