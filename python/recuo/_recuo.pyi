"""recuo's native module (Rust, pyo3); import ``recuo`` instead.

Two guides are cited by name: guide A is “Como repetir requisições com backoff exponencial (retry)”
(https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff), whose loop ``com_retry``
keeps; guide B is “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”, whose
delay ``retry_delay_ms`` computes.
"""

import os
from collections.abc import Iterable, Mapping
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any, Callable, ClassVar, Literal, Protocol, TypeVar, Union, final

from recuo._values import BatchProgress, BatchReportValue, BatchResultValue, Plan, PolicyValue, Report, RetryAfter, Stats, WhoAnswered

_T = TypeVar("_T")

__all__ = [
    "Attempt",
    "AttemptRecord",
    "BatchQueue",
    "BatchReport",
    "BatchResult",
    "ConcurrencyLimit",
    "ConfigError",
    "Gate",
    "IdempotencyKey",
    "InternalError",
    "Next",
    "Operation",
    "Permit",
    "PlanError",
    "Policy",
    "QueueFullError",
    "RedactedUrl",
    "Regulator",
    "ResultRecord",
    "RetryBudget",
    "SharedFileError",
    "StatsRecorder",
    "Step",
    "Verdict",
    "__version__",
    "backoff_window_ms",
    "classify",
    "com_retry",
    "current_attempt",
    "monotonic_ns",
    "parse_retry_after",
    "plan",
    "redact_headers",
    "redact_url",
    "redact_url_detailed",
    "retry_delay_ms",
    "run_batch",
    "who_answered",
]

__version__: str

_Jitter = Literal["full", "equal", "decorrelated", "none"]
_Rule = Literal["never", "if_idempotent", "always"]
_Transport = Literal["connect", "tls", "timeout", "reset", "other"]
_Style = Literal["client", "guide"]
_Last = Union[None, int, _Transport, Literal["late"]]
_Cause = Literal[
    "success",
    "rate_limited",
    "unavailable",
    "server_error",
    "connect",
    "timeout",
    "reset",
    "other",
    "not_idempotent",
    "permanent",
    "tls",
]
_GiveUpReason = Literal[
    "permanent",
    "attempts_exhausted",
    "wait_exceeds_deadline",
    "budget_exhausted",
    "cancelled",
    "queue_stopped",
]
_Level = Literal["debug", "info", "warning"]

class _HeaderItems(Protocol):
    """Anything with ``items()`` answering ``(name, value)`` pairs: a ``dict``, a mapping
    (``requests``, ``httpx``, ``aiohttp`` headers), an ``http.client.HTTPMessage``."""

    def items(self) -> Iterable[tuple[str | bytes, str | bytes]]: ...

_Headers = _HeaderItems | Iterable[tuple[str | bytes, str | bytes]] | None
_Request = tuple[str, str | bytes]
_Decision = Literal["done", "retry", "give_up"]

class ConfigError(ValueError):
    """A configuration recuo refuses: attempts below 1, a negative or NaN duration, a maximum
    below the base, an idempotency header name that is not an HTTP token, a status rule
    outside 400-599, or a policy's plain form (``Policy.from_dict``) with an unknown name or
    that is not plain data of the known keys.

    A subclass of ValueError. ``code`` is the core's stable number for the error (the same in
    C, Python and PHP) and ``name`` its stable lower-case name; the message is for humans.
    """

    code: int
    """1 zero_attempts, 2 negative_duration, 3 not_a_number, 4 duration_too_large,
    5 cap_below_base, 6 invalid_header_name, 7 status_out_of_range, 8 unknown_name,
    9 invalid_value."""
    name: Literal[
        "zero_attempts",
        "negative_duration",
        "not_a_number",
        "duration_too_large",
        "cap_below_base",
        "invalid_header_name",
        "status_out_of_range",
        "unknown_name",
        "invalid_value",
    ]
    """The error's stable lower-case name."""

def com_retry(
    tarefa: Callable[[], _T],
    tentativas: int = 5,
    base: float = 0.2,
    maximo: float = 5.0,
    repetir_se: Callable[[Exception], object] | None = None,
    *,
    prazo: float | None = None,
    ao_repetir: Callable[[int, Exception, float], object] | None = None,
    seed: int | None = None,
    sleep: Callable[[float], object] | None = None,
    gate: Gate | None = None,
    request: _Request | None = None,
) -> _T:
    """The retry loop of “Como repetir requisições com backoff exponencial (retry)”: call
    ``tarefa()`` up to ``tentativas`` times and return its value.

    When ``tarefa`` raises an ``Exception`` and ``repetir_se(erro)`` is true
    (``repetir_se=None`` retries every ``Exception``), wait a delay drawn uniformly from
    ``[0, min(maximo, base * 2**i)]`` seconds (full jitter; ``i`` counts retries from 0) and
    call it again. When the attempts are spent or ``repetir_se`` answers false, the task's
    exception is re-raised: the very same object, with its traceback. ``repetir_se`` may also
    answer a ``Verdict`` (from ``classify``), whose server wait is then honoured.

    ``prazo`` (seconds) limits the total time from the start of the first attempt: a wait that
    would pass it is not slept, and the task's exception is re-raised at once. ``ao_repetir``
    is called before each wait as ``ao_repetir(attempt, erro, delay_seconds)``, ``attempt``
    being the number (from 0) of the attempt that failed.

    A ``BaseException`` that is not an ``Exception`` (``KeyboardInterrupt``, ``SystemExit``)
    is never retried: it propagates at once. So does an exception raised by ``repetir_se``,
    ``ao_repetir`` or ``sleep``.

    ``base``, ``maximo`` and ``prazo`` are seconds (int or float). ``seed`` makes the jitter
    reproducible. ``sleep(seconds)`` replaces the real wait, for tests; a zero delay calls no
    sleep at all. The real wait releases the GIL and answers Ctrl-C within about 50 ms.
    ``gate`` is passed by every attempt (a place in flight, a start slot, its budget for
    every retry). Inside the task, ``current_attempt()`` gives the attempt's number and the
    operation's idempotency key; inside another retry loop, the attempts are shared.

    Each attempt and the result are logged to the ``recuo`` logger as redacted records (see
    ``recuo.retry``); ``request=("GET", url)`` names the request they describe.

    Raises ``ConfigError`` (a ``ValueError``) when ``tentativas < 1``, a duration is negative,
    NaN or infinite, or ``maximo < base``; ``TypeError`` when ``tarefa``, ``repetir_se``,
    ``ao_repetir`` or ``sleep`` is not callable or an argument has the wrong type (``bool`` is
    refused where an int is expected).
    """

def retry_delay_ms(
    retry_after: str | bytes | None,
    attempt: int,
    now_ms: int | None = None,
    *,
    seed: int | None = None,
) -> float:
    """The delay before retry number ``attempt`` (from 0), in milliseconds, as
    “HTTP 429: interpretar Retry-After e repetir pedidos com segurança” computes it.

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

@final
class Policy:
    """How a policy retries: attempts, backoff, deadline, the spread added to server waits,
    the classification sets (which statuses and failures are retried, which methods are
    idempotent), the idempotency-key header and whether the server honours those keys.

    Durations are seconds (int or float), kept as whole milliseconds. ``max_attempts`` counts
    every attempt, the first included (at least 1). ``deadline`` limits the operation's total
    time from the start of its first attempt (``None``: no limit). ``spread`` is the most
    added at random to a server's wait (``None``: ``min(window, 1 s)``). ``use_date_header``
    measures server waits from the response's ``Date``. ``server_honours_keys`` says the
    server honours idempotency keys: a request sent with recuo's own key then counts as
    idempotent, so a POST's timeout, dropped connection or 500 is retried (off by default: a
    server may ignore the header).

    Immutable, comparable, hashable and picklable; the ``with_*`` methods answer a new
    policy. ``Policy.from_dict(value)`` and ``policy.to_dict()`` read and write a policy as
    one plain value, durations in milliseconds. Raises ``ConfigError`` for a policy the core
    refuses, ``TypeError`` for a wrong type, ``ValueError`` for an unknown jitter.
    """

    def __new__(
        cls,
        *,
        max_attempts: int = 5,
        base: float = 0.2,
        cap: float = 5.0,
        jitter: _Jitter = "full",
        deadline: float | None = None,
        spread: float | None = None,
        idempotency_header: str = "Idempotency-Key",
        use_date_header: bool = False,
        server_honours_keys: bool = False,
    ) -> Policy: ...
    @staticmethod
    def guide_a() -> Policy:
        """The policy of “Como repetir requisições com backoff exponencial (retry)”: 5
        attempts, 0.2 s base, 5 s cap, full jitter, no deadline."""
    @staticmethod
    def guide_b() -> Policy:
        """The policy of “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”:
        5 attempts (at most 4 retries), 1 s base, 8 s cap, full jitter, 30 s deadline."""
    @staticmethod
    def adapters() -> Policy:
        """The HTTP adapters' default: ``guide_b()``'s policy with an HTTP-date wait measured from
        the response's own ``Date``."""
    @staticmethod
    def interactive() -> Policy:
        """For one request a person waits on: the adapters' policy, whose 30 s deadline gives
        up at once on a server wait that would not fit."""
    @staticmethod
    def batch() -> Policy:
        """For the requests of a batch: the adapters' policy with no deadline of its own, so
        that the batch's deadline is the one that counts."""
    @classmethod
    def from_dict(cls, value: PolicyValue | Mapping[str, Any], /) -> Policy:
        """The policy a plain value describes: a mapping with the keys ``to_dict`` answers
        (``max_attempts``, ``base_ms``, ``cap_ms``, ``jitter``, ``deadline_ms``,
        ``spread_ms``, ``idempotency_header``, ``use_date_header``, ``server_honours_keys``,
        ``quota_403_as_rate_limit``, ``status_retry``, ``transport_retry``,
        ``idempotent_methods``), durations in whole milliseconds. A key left out takes
        ``Policy.guide_a()``'s value; the three maps list only rules that differ from the default (a status as
        an int or a decimal string).

        Raises ``TypeError`` when ``value`` is not a mapping and ``ConfigError`` otherwise:
        ``invalid_value`` for an unknown key or a value of the wrong type, ``unknown_name``
        for an unknown jitter, rule, transport failure, method or status, and the errors of
        ``Policy(...)``."""
    def to_dict(self) -> PolicyValue:
        """This policy as one plain value, every key written out (durations in milliseconds,
        ``None`` for no deadline or the default spread); the three maps list only rules that
        differ from the default, statuses as decimal strings and methods in capitals.
        ``Policy.from_dict(p.to_dict()) == p``."""
    def __reduce__(self) -> tuple[Callable[[Mapping[str, Any]], Policy], tuple[PolicyValue]]:
        """Pickles as ``Policy.from_dict(policy.to_dict())``."""
    @property
    def max_attempts(self) -> int:
        """Attempts in all, the first included."""
    @property
    def base(self) -> float:
        """The first backoff window, in seconds."""
    @property
    def cap(self) -> float:
        """The largest backoff window, in seconds."""
    @property
    def jitter(self) -> _Jitter:
        """``"full"``, ``"equal"``, ``"decorrelated"`` or ``"none"``."""
    @property
    def deadline(self) -> float | None:
        """The limit on the operation's total time in seconds, or ``None``."""
    @property
    def spread(self) -> float | None:
        """The most added at random to a server's wait, in seconds, or ``None`` for
        ``min(window, 1 s)``."""
    @property
    def idempotency_header(self) -> str:
        """The header the idempotency key is sent in."""
    @property
    def use_date_header(self) -> bool:
        """Whether server waits are measured from the response's ``Date``."""
    @property
    def server_honours_keys(self) -> bool:
        """Whether the server honours idempotency keys (a request sent with recuo's own key
        then counts as idempotent)."""
    @property
    def quota_403_as_rate_limit(self) -> bool:
        """Whether a 403 whose rate-limit headers say the quota is spent counts as a 429."""
    def status_retry(self, status: int) -> _Rule:
        """How ``status`` (400-599) is retried: ``"never"``, ``"if_idempotent"`` or
        ``"always"`` (for any method)."""
    def with_status_retry(self, status: int, rule: _Rule) -> Policy:
        """A new policy retrying ``status`` (400-599) ``"never"``, ``"if_idempotent"`` or
        ``"always"``."""
    def transport_retry(self, kind: _Transport) -> _Rule:
        """How the transport failure ``kind`` is retried."""
    def with_transport_retry(self, kind: _Transport, rule: _Rule) -> Policy:
        """A new policy retrying the transport failure ``kind`` ``"never"``,
        ``"if_idempotent"`` or ``"always"``."""
    def method_idempotent(self, method: str) -> bool:
        """Whether requests with ``method`` count as idempotent without a key."""
    def with_method_idempotent(self, method: str, idempotent: bool) -> Policy:
        """A new policy where requests with ``method`` count as idempotent without a key, or
        not."""
    def with_max_attempts(self, max_attempts: int) -> Policy:
        """A new policy with ``max_attempts`` attempts in all (at least 1), the rest
        unchanged."""
    def with_quota_403_as_rate_limit(self, enabled: bool) -> Policy:
        """A new policy where a 403 whose rate-limit headers say the quota is spent counts as
        a 429 (``True``, the default) or as a permanent error."""
    def with_server_honours_keys(self, enabled: bool) -> Policy:
        """A new policy saying whether the server honours idempotency keys."""
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __copy__(self) -> Policy: ...
    def __deepcopy__(self, memo: object, /) -> Policy: ...

@final
class Verdict:
    """What to do about one outcome: ``verdict`` is ``"success"``, ``"retry"`` or
    ``"give_up"``; ``reason`` names the cause; ``wait_ms`` is the server's finite wait for a
    retry (``None`` when it gave none, or an unbounded one, which ``wait_unbounded`` says).

    Made by ``classify`` or by ``Verdict.retry``, ``Verdict.give_up`` and
    ``Verdict.success``. Immutable, comparable and hashable. A verdict made by ``classify``
    also keeps, for a retry loop's records, the status it judged, the request id and the wait
    headers; equality and hashing look at the verdict alone.
    """

    @staticmethod
    def retry(
        wait_ms: int | None = None, *, unbounded: bool = False, reason: _Cause = "server_error"
    ) -> Verdict:
        """A retry, after at least the server's wait when there is one: ``wait_ms``
        milliseconds, or an unbounded wait (``unbounded=True``)."""
    @staticmethod
    def give_up(reason: _Cause = "permanent") -> Verdict:
        """Not worth another attempt; ``reason`` names the cause."""
    @staticmethod
    def success() -> Verdict:
        """Done: nothing to retry."""
    @property
    def verdict(self) -> Literal["success", "retry", "give_up"]:
        """``"success"``, ``"retry"`` or ``"give_up"``."""
    @property
    def reason(self) -> _Cause:
        """The cause's name."""
    @property
    def wait_ms(self) -> int | None:
        """The server's finite wait in milliseconds, or ``None``."""
    @property
    def wait_unbounded(self) -> bool:
        """Whether the server asked for a wait too long to count."""
    def _with_response(self, status: int, headers: _Headers = None) -> Verdict:
        """The same verdict, reached on a response of ``status`` with ``headers`` (for the
        records). Private: the loop vectors' tests use it."""
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

def classify(
    status: int | None = None,
    *,
    error: _Transport | None = None,
    method: str = "GET",
    idempotency_key: bool | str | IdempotencyKey | None = False,
    headers: _Headers = None,
    now_ms: int | None = None,
    policy: Policy | None = None,
) -> Verdict:
    """The verdict on one outcome: an HTTP ``status`` or a transport ``error``
    (``"connect"``, ``"tls"``, ``"timeout"``, ``"reset"`` or ``"other"``) — exactly one.

    ``method`` and ``idempotency_key`` (whether the request carried one) decide whether
    repeating it is safe. ``headers`` (a mapping or ``(name, value)`` pairs) give the server's
    wait as of ``now_ms`` (ms since the Unix epoch; ``None``: the system clock). ``policy``
    supplies the classification sets (default: recuo's table). ``TypeError`` when neither
    or both of ``status`` and ``error`` are given.
    """

@final
class Attempt:
    """The attempt being made: its number (from 0), the operation's idempotency key and the
    header to send it in."""

    @property
    def number(self) -> int:
        """The attempt's number: 0 for the first attempt, 1 for the first retry, ..."""
    @property
    def idempotency_key(self) -> str:
        """The operation's idempotency key (UUID v4 text), the same on every attempt."""
    @property
    def idempotency_header(self) -> str:
        """The header to send the key in."""
    def record_request(self, method: str, url: str | bytes) -> None:
        """For the records: this attempt sends ``method`` to ``url`` (redacted in every record);
        it replaces the loop's ``request=`` for this attempt and the result."""
    def record_response(self, status: int, headers: _Headers = None) -> None:
        """For the records: this attempt received ``status`` (100-999) with ``headers`` (only
        the request id and the wait headers are kept). ``ValueError`` for a status out of
        range."""

def current_attempt() -> Attempt:
    """The attempt being made by the innermost retry loop running in this context.

    Works inside ``retry`` (sync and async) and ``com_retry``. Raises ``RuntimeError`` when
    no retry loop is making an attempt in this context.
    """

@final
class IdempotencyKey:
    """A new idempotency key: a random UUID v4, different for every instance. ``str(key)`` is
    its text. Immutable, comparable and hashable."""

    def __new__(cls) -> IdempotencyKey: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Step:
    """What to do next, as ``Operation`` answers: ``kind`` is ``"enter"`` (pass the gate for
    ``attempt``, at most until ``until_ms``), ``"wait"`` (``poll_gate``: not through yet, look
    again in ``delay_ms``), ``"call"`` (make ``attempt``, bounded by ``timeout_ms``),
    ``"classify"`` (judge its failure), ``"sleep"`` (wait ``delay_ms``), ``"done"`` or
    ``"gave_up"`` (``reason``, ``retry_at_ms``). Immutable and comparable."""

    @property
    def kind(self) -> Literal["enter", "wait", "call", "classify", "sleep", "done", "gave_up"]:
        """The step."""
    @property
    def attempt(self) -> int | None:
        """The attempt's number (from 0) for ``enter``, ``wait``, ``call``, ``classify`` and
        ``sleep``."""
    @property
    def until_ms(self) -> int | None:
        """For ``enter``: the deadline's instant on your clock, if any."""
    @property
    def timeout_ms(self) -> int | None:
        """For ``call``: what is left of the deadline, if any."""
    @property
    def delay_ms(self) -> int | None:
        """For ``sleep`` and ``wait``: the delay in ms."""
    @property
    def delay(self) -> float | None:
        """For ``sleep`` and ``wait``: the delay in seconds."""
    @property
    def reason(self) -> _GiveUpReason | None:
        """For ``gave_up``: why."""
    @property
    def retry_at_ms(self) -> int | None:
        """For ``gave_up`` with ``"wait_exceeds_deadline"`` on a finite wait: the instant on
        your clock from which a retry would be allowed."""
    @property
    def report(self) -> Report | None:
        """For ``done`` and ``gave_up``: the report."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class Operation:
    """One operation's whole retry loop as the core's sans-IO machine: tell it what
    happened, do the ``Step`` it answers. Times are your own monotonic clock in ms. A host
    that cannot block passes the gate with ``poll_gate``; a first attempt made before the
    machine (``success_needs_machine``) is told with ``start_after_first``."""

    def __new__(
        cls,
        policy: Policy | None = None,
        *,
        seed: int | None = None,
        gate: Gate | None = None,
        stats: StatsRecorder | None = None,
        request: tuple[str, str | bytes] | None = None,
        records: _Level | None = None,
        classify_last_failure: bool = True,
        idempotency_key: IdempotencyKey | None = None,
        pool: int | None = None,
    ) -> Operation: ...
    @staticmethod
    def success_needs_machine(gate: Gate | None = None, *, stats: bool = False, records: _Level | None = None) -> bool:
        """Whether an operation under ``gate`` that counts ``stats`` and keeps records of
        ``records`` and above needs its machine when its first attempt succeeds; when it does
        not, make that attempt first and the ``Operation`` only on a failure. Decide it once
        per policy and gate."""
    @property
    def _asks_remote(self) -> bool:
        """Whether a step may ask a Redis server (the gate's budget is on Redis)."""
    @property
    def _polls_remote(self) -> bool:
        """Whether a look at the gate may ask a Redis server."""
    def start(self, now_ms: int, unix_ms: int | None = None) -> Step:
        """Starts the operation at ``now_ms`` (``unix_ms`` on the wall clock)."""
    def start_after_first(self, now_ms: int, unix_ms: int | None = None) -> Step:
        """Starts an operation whose first attempt was made before it, begun at ``now_ms``:
        answers that attempt's ``"call"``; tell its outcome next."""
    def poll_gate(self, now_ms: int) -> Step:
        """One look at the gate for ``"enter"``: a ``"wait"`` step (sleep ``delay_ms``, then
        look again), the attempt's ``"call"``, or ``"gave_up"``."""
    def poll_gate_at(self, now_ms: int, regulator_now_ns: int) -> Step:
        """``poll_gate`` with the regulator asked at ``regulator_now_ns`` on a clock of your
        own."""
    def entered(self, now_ms: int, passed: bool) -> Step:
        """The gate's answer for ``"enter"``, when you waited at the gate yourself."""
    def succeeded(self, now_ms: int) -> Step:
        """The attempt of ``"call"`` succeeded."""
    def failed(self, now_ms: int, error: BaseException | None = None) -> Step:
        """The attempt of ``"call"`` failed (raising ``error``). Its record shows what the
        attempt noted, else what the verdict saw, else what ``error`` carries."""
    def judged(self, now_ms: int, verdict: Verdict | bool) -> Step:
        """The verdict on the failure of ``"classify"``."""
    def responded(
        self,
        now_ms: int,
        status: int | None = None,
        *,
        error: _Transport | None = None,
        headers: _Headers = None,
    ) -> Step:
        """An HTTP attempt ended with ``status`` (or the transport failure ``error``) and
        ``headers``: classified by the policy."""
    def slept(self, now_ms: int) -> Step:
        """The wait of ``"sleep"`` is over."""
    def cancel(self) -> None:
        """Cancels the operation: the next step gives up ``"cancelled"``."""
    def _abandon(self, now_ms: int) -> None:
        """Cancels the operation and answers its steps until it gives up (what it holds of
        the gate goes back)."""
    def stop_queue(self, reason: _GiveUpReason) -> None:
        """Stops the operation because its batch queue stopped on ``reason``."""
    def poll_record(self) -> tuple[_Level, AttemptRecord | ResultRecord] | None:
        """The next record and its level, or ``None``."""
    def _log_records(self) -> None: ...
    @property
    def report(self) -> Report:
        """What has happened so far."""
    @property
    def key(self) -> str:
        """The operation's idempotency key (UUID v4 text)."""
    @property
    def attempt(self) -> Attempt | None:
        """The attempt being (or last) made, or ``None`` before the first ``"call"``."""
    @property
    def keeps_records(self) -> bool:
        """Whether records are kept."""
    @property
    def is_finished(self) -> bool:
        """Whether the operation has finished."""
    def ending(self, style: _Style, last: _Last) -> Literal["response", "error", "give_up"]:
        """How the operation's end reaches an HTTP adapter's caller, its last attempt having
        come to ``last`` (``None``: no attempt made; a status; a transport failure's kind;
        ``"late"``: cut by the deadline): return the last response, raise the client's error
        again, or raise ``recuo.GiveUp``."""
    def give_up_message(self, now_ms: int, last: _Last) -> str | None:
        """The give-up's message at ``now_ms``; ``None`` unless the operation gave up."""
    @property
    def policy(self) -> Policy:
        """The policy."""

@final
class Next:
    """What ``BatchQueue.next`` answers: ``kind`` is ``"start"`` (``index``, ``policy``),
    ``"not_started"`` (``index``, ``reason``, ``stopped_by``) or ``"finished"``."""

    @property
    def kind(self) -> Literal["start", "not_started", "finished"]:
        """The answer."""
    @property
    def index(self) -> int | None:
        """The operation's place in the batch."""
    @property
    def policy(self) -> Policy | None:
        """For ``"start"``: the policy, its deadline clipped to the batch's."""
    @property
    def reason(self) -> _GiveUpReason | None:
        """For ``"not_started"``: why."""
    @property
    def stopped_by(self) -> _GiveUpReason | None:
        """For ``"queue_stopped"``: the reason that stopped the queue."""

@final
class BatchQueue:
    """The core's sans-IO batch queue: which operation starts next, or why it is not
    started; when the whole queue stops."""

    def __new__(
        cls,
        policy: Policy,
        len: int,
        now_ms: int,
        deadline_ms: int | None = None,
        *,
        stop_when_a_wait_exceeds_the_deadline: bool = False,
        stats: StatsRecorder | None = None,
        requests: Iterable[_Request] | None = None,
        unix_ms: int | None = None,
    ) -> BatchQueue: ...
    def poll_record(self) -> tuple[_Level, AttemptRecord | ResultRecord] | None:
        """The next record the queue made (an operation it did not start), or ``None``."""
    @staticmethod
    def end_of(
        report: Report, *, gate_failed: bool = False
    ) -> tuple[Literal["succeeded", "gave_up", "not_started"], _GiveUpReason | None, _GiveUpReason | None]:
        """How an operation whose loop reported ``report`` ended for the batch:
        ``(status, reason, stopped_by)``."""
    def next(self, now_ms: int) -> Next:
        """The next operation to start, or why it is not started, or ``"finished"``."""
    def finished(self, index: int, reason: _GiveUpReason | None = None) -> bool:
        """Operation ``index`` ended; ``True`` when this stops the queue."""
    def ended(
        self,
        index: int,
        end: tuple[Literal["succeeded", "gave_up", "not_started"], _GiveUpReason | None, _GiveUpReason | None],
        /,
    ) -> BatchProgress:
        """Operation ``index`` ended as ``end`` (as ``end_of`` answers it): the batch's
        progress."""
    def stop(self, reason: _GiveUpReason) -> None:
        """Stops the queue on ``reason``."""
    @property
    def stopped(self) -> _GiveUpReason | None:
        """The reason the queue stopped, if it did."""
    @staticmethod
    def not_started_record(
        unix_ms: int, method: str, url: str, reason: _GiveUpReason, stopped_by: _GiveUpReason | None = None
    ) -> ResultRecord:
        """The result record of an operation the queue did not start."""
    def __len__(self) -> int: ...

_Rate = str | float
_Path = str | bytes | os.PathLike[str] | os.PathLike[bytes]

class PlanError(ValueError):
    """A plan recuo cannot make: the target rate is above the allowance, the retry fraction
    is not in [0, 1), or the latency is negative or not a number. The message is the core's.
    """

    name: Literal["target_above_allowance", "invalid_retry_fraction", "invalid_latency"]
    """The error's stable lower-case name."""

class SharedFileError(ValueError):
    """A shared state file set up with other settings (another rate or burst, another
    budget), holding another kind of recuo state, or of the wrong size — or a Redis key set
    up with other settings (a regulator's rate or burst, a limit's places or lease, a
    budget's): the second opener is refused with the settings in force and its own. (A file that cannot be opened or mapped at all raises ``OSError``; a Redis
    server that cannot be reached, ``ConnectionError``.)"""

class QueueFullError(RuntimeError):
    """A regulator refused a start because it would wait beyond the 4096 starts the regulator
    queues ahead (at its configured rate): nothing was reserved, so ask again later. A
    regulator never lets more than its burst plus its rate over any span of time start,
    however many wait; past its queue it refuses rather than start anyone early.

    A subclass of RuntimeError. ``code`` is 114 and ``name`` ``"queue_full"``, as C's
    ``RECUO_QUEUE_FULL``; the message says how long the start would have waited."""

    code: ClassVar[int]
    """114, as C's ``RECUO_QUEUE_FULL``."""
    name: ClassVar[str]
    """``"queue_full"``."""

@final
class _Reservation:
    """A start reserved by ``Regulator._reserve``, for the asyncio glue (private)."""

    @property
    def wait_ns(self) -> int:
        """The wait before the start may go, in nanoseconds (0: now)."""

class InternalError(Exception):
    """A bug inside recuo: a Rust panic, caught at the boundary.

    A subclass of Exception (never a BaseException: ``except Exception`` catches it), with
    ``code`` 900 and ``name`` ``"panic"``, as C's ``RECUO_ERR_PANIC``. The message is the
    panic's; please report it. The exception raised is pyo3's ``PanicException``, made a
    subclass of this class when recuo is imported."""

    code: ClassVar[int]
    """900, as C's ``RECUO_ERR_PANIC``."""
    name: ClassVar[str]
    """``"panic"``."""

def _force_panic() -> None:
    """For recuo's own tests only: panics inside Rust, so that a test can see a panic
    arrive as ``recuo.InternalError``."""

def _call_once(f: Callable[[], _T], /) -> _T:
    """For the bench only: calls ``f()`` once (the floor of a loop's cost per call)."""

def _set_telemetry(sink: Callable[[dict[str, Any]], object] | None) -> None:
    """Sends what each record means to telemetry to ``sink`` (``recuo.otel``'s); ``None``: nowhere."""
def _telemetry_of(record: dict[str, Any]) -> dict[str, Any]:
    """What a record's plain form means to telemetry: ``{"operation", "span", "points"}``."""
def _instruments() -> tuple[list[dict[str, str]], list[float]]:
    """The instruments the records feed, and the histograms' bucket bounds in seconds."""
def _monotonic_ms() -> int:
    """Milliseconds on ``monotonic_ns``'s clock, rounded down (private)."""

def _wait_ms_from_ns(ns: int) -> int:
    """A wait of ``ns`` nanoseconds in whole milliseconds, rounded up (private)."""

def _batch_result(plain: object, value: object, error: object, /) -> BatchResult:
    """A batch result rebuilt from its pickle (private)."""

def _batch_report(results: tuple[BatchResult, ...], stats: object, elapsed_ms: int, /) -> BatchReport:
    """A batch report rebuilt from its pickle (private)."""

def _read_value(
    name: Literal["Report", "Stats", "Plan", "WhoAnswered", "RetryAfter", "BatchProgress"], value: object, /
) -> Any:
    """The value named ``name`` whose plain form is ``value``, read by recuo's core (private:
    the classes' ``from_dict``)."""

def _stats_derived(stats: object, /) -> tuple[int, float | None]:
    """``(starts, mean_spacing_ns)`` of a ``Stats`` (private)."""

def _stats_merge(a: object, b: object, /) -> Stats:
    """``a`` and ``b`` added up; ``OverflowError`` when a count would pass 2**64 - 1
    (private)."""

def monotonic_ns() -> int:
    """Nanoseconds on the system's monotonic clock (``CLOCK_MONOTONIC``): the clock
    regulators and budgets count in, the same in every process on the machine."""

def plan(
    requests: int, allowance: _Rate, target: _Rate, latency: float, retry_fraction: float = 0.0
) -> Plan:
    """Plans ``requests`` requests sent at ``target`` under an ``allowance``, each answered in
    ``latency`` seconds, a fraction ``retry_fraction`` of all attempts being retries.

    Rates are text (``"120/min"``, ``"2/s"``, ``"5000/h"``) or numbers per second.
    ``PlanError`` when the plan cannot be made (the target above the allowance, say),
    ``ValueError`` for a bad rate or a negative count.
    """

@final
class Regulator:
    """Limits request starts to a rate with a burst (GCRA): in any window of ``w`` seconds at
    most ``burst + rate * w`` starts. ``rate`` is text (``"90/min"``, ``"1.5/s"``) or a
    number per second; ``adaptive=True`` halves the rate on ``on_throttled()`` and restores
    it on ``on_success()``. Safe to share between threads; ``Regulator.shared`` shares it
    between processes, ``Regulator.redis`` between machines. ``ValueError`` for a bad rate
    or a burst of 0."""

    def __new__(cls, rate: _Rate, burst: int = 1, *, adaptive: bool = False) -> Regulator: ...
    @staticmethod
    def shared(
        path: _Path, rate: _Rate, burst: int = 1, *, adaptive: bool = False
    ) -> Regulator:
        """A regulator in the file at ``path``, shared by every process that opens it with the
        same rate, burst and adaptive setting. On an adaptive file a 429 reported by any
        process (``on_throttled()``) halves the rate for all of them, and successes bring it
        back. ``SharedFileError`` for a file set up otherwise; ``OSError`` when it cannot be
        used."""
    @staticmethod
    def redis(
        url: str, key: str, rate: _Rate, burst: int = 1, *, adaptive: bool = False
    ) -> Regulator:
        """A regulator on the Redis server at ``url``
        (``redis://[[user]:password@]host[:port][/db]``, ``rediss://…`` for TLS, or
        ``host:port``; or ``redis+cluster://host:port,host:port/`` for a Redis Cluster: its
        seed nodes, ``rediss+cluster://…`` for TLS) under ``key``, shared by every process on
        every machine that uses it with the same rate, burst and adaptive setting, and timed
        by the server's clock. On an adaptive key the interval in force lives on the server: a
        429 reported by any holder halves the rate for all of them, and successes bring it
        back. ``SharedFileError`` for a key set up otherwise; ``ConnectionError`` when the
        server cannot be reached or used (then or later: nothing is taken)."""
    def acquire(self, timeout: float | None = None, *, cost: int = 1) -> bool:
        """Waits for a start slot of weight ``cost`` and takes it: ``True``; ``False`` at once
        (nothing reserved) when it would not come within ``timeout`` seconds;
        ``QueueFullError`` (nothing reserved) when it would come after the 4096 starts the
        regulator queues ahead. Releases the GIL; Ctrl-C raises ``KeyboardInterrupt``
        promptly."""
    async def acquire_async(self, timeout: float | None = None, *, cost: int = 1) -> bool:
        """``acquire`` for asyncio (waits with ``asyncio.sleep``; a Redis regulator's server is
        asked off the event loop)."""
    def try_acquire(self, *, cost: int = 1) -> float:
        """``0.0`` when a start may go now (and takes it), else the seconds to wait — on the
        regulator's own clock (a Redis regulator's: its server's)."""
    def try_acquire_at(self, now_ns: int, *, cost: int = 1) -> int:
        """``try_acquire`` at ``now_ns`` (your clock, in nanoseconds): ``0`` when taken, else
        the wait needed in nanoseconds."""
    def on_throttled(self) -> None:
        """A 429 was seen: an adaptive regulator halves its rate (for every process of a
        shared file or a Redis key)."""
    def on_success(self) -> None:
        """A start succeeded: an adaptive regulator gives back 1/16 of its rate (for every
        process of a shared file or a Redis key)."""
    @property
    def adaptive(self) -> bool:
        """Whether the rate adapts to 429s (a shared file's or a Redis key's own setting)."""
    def _reserve(self, max_wait_ns: int, cost: int, /) -> _Reservation | None:
        """Reserves a start now if it comes within ``max_wait_ns``: the reservation, or
        ``None``."""
    def _give_back(self, reservation: _Reservation, /) -> bool:
        """Gives back a reservation whose wait was cancelled: ``True`` when its slot is free
        again."""
    @property
    def _remote(self) -> bool:
        """Whether the regulator is kept on a Redis server (its calls are round trips)."""
    @property
    def rate(self) -> float:
        """The rate in force, in starts per second."""
    @property
    def burst(self) -> int:
        """How many starts may go at once after a quiet spell."""

@final
class Permit:
    """A place of a ``ConcurrencyLimit``, held until ``release()`` or the end of a ``with``
    block. Releasing twice is harmless."""

    def release(self) -> None:
        """Gives the place back (once)."""
    def renew(self) -> bool:
        """Extends a ``ConcurrencyLimit.redis`` place's lease from now: ``True``; ``False``
        when it had expired (the place may be someone else's now) or was released. A local
        place has no lease: ``True`` until released. ``ConnectionError`` when the server
        cannot be used."""
    @property
    def released(self) -> bool:
        """Whether the place was given back."""
    def __enter__(self) -> Permit: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> None: ...

@final
class ConcurrencyLimit:
    """At most ``limit`` requests in flight at once; ``with limit:`` and ``async with
    limit:`` hold a place for the block. ``ValueError`` for a limit of 0."""

    def __new__(cls, limit: int) -> ConcurrencyLimit: ...
    @staticmethod
    def shared(path: _Path, limit: int) -> ConcurrencyLimit:
        """A limit in the file at ``path`` (created 0600 if missing), shared by every
        process of this machine that opens it with the same ``limit``. Each place is a lock
        the kernel releases when its holder's process ends (``kill -9`` included): the place
        comes back at once, and a waiter elsewhere takes it within 10 ms. ``in_flight``
        counts every process's places, ``max_in_flight`` this object's. ``ValueError`` for
        0; ``SharedFileError`` for a file set up otherwise; ``OSError`` for a file that cannot
        be opened or is refused (a symbolic link, another user's, writable by others)."""
    @staticmethod
    def redis(url: str, key: str, limit: int, lease: float) -> ConcurrencyLimit:
        """A limit on the Redis server at ``url`` (as ``Regulator.redis``: one server, or a
        Redis Cluster named by ``redis+cluster://host:port,host:port/``) under ``key``, shared
        by every process on every machine that uses it with the same ``limit`` and ``lease``:
        each place a lease of ``lease`` seconds (0.001 to 86400) on the server's clock, freed
        when its holder dies and the lease expires; ``Permit.renew()`` extends it.
        ``SharedFileError`` for a key set up otherwise; ``ConnectionError`` when the server
        cannot be reached or used (then or later: no place is given). ``in_flight`` counts
        this process's places."""
    def acquire(self, timeout: float | None = None) -> Permit | None:
        """Waits for a place (at most ``timeout`` seconds): its ``Permit``, or ``None``.
        Releases the GIL; Ctrl-C raises ``KeyboardInterrupt`` promptly."""
    async def acquire_async(self, timeout: float | None = None) -> Permit | None:
        """``acquire`` for asyncio."""
    def try_acquire(self) -> Permit | None:
        """A place now, or ``None`` when all are taken."""
    def _hold(self, permit: Permit, /) -> None:
        """Holds the place of ``permit`` until the next ``__exit__``."""
    @property
    def _remote(self) -> bool:
        """Whether the places are kept on a Redis server."""
    def __enter__(self) -> None: ...
    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> None: ...
    async def __aenter__(self) -> None: ...
    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
        /,
    ) -> None: ...
    @property
    def limit(self) -> int:
        """The number of places."""
    @property
    def in_flight(self) -> int:
        """Places taken now."""
    @property
    def max_in_flight(self) -> int:
        """The most places ever taken at once."""

@final
class RetryBudget:
    """Retries may be at most ``ratio`` of the first attempts of the last ``window_s``
    seconds plus ``floor_per_s`` per second. ``RetryBudget.shared`` shares it between
    processes. ``ValueError`` for bad settings."""

    def __new__(
        cls, ratio: float = 0.1, floor_per_s: float = 1.0, window_s: int = 10
    ) -> RetryBudget: ...
    @staticmethod
    def shared(
        path: _Path, ratio: float = 0.1, floor_per_s: float = 1.0, window_s: int = 10
    ) -> RetryBudget:
        """A budget in the file at ``path``, shared by every process that opens it with the
        same settings."""
    @staticmethod
    def redis(
        url: str, key: str, ratio: float = 0.1, floor_per_s: float = 1.0, window_s: int = 10
    ) -> RetryBudget:
        """A budget on the Redis server at ``url`` (as ``Regulator.redis``: one server, or a
        Redis Cluster named by ``redis+cluster://host:port,host:port/``) under ``key``, shared
        by every process on every machine that uses it with the same settings, counted on the
        server's clock (the ``_at`` methods: a clock every user shares, in whole seconds). In
        a gate it fails closed; its own methods raise ``ConnectionError`` when the server
        cannot be used. ``SharedFileError`` for a key set up otherwise."""
    def record_request(self) -> None:
        """Counts a first attempt now."""
    def record_request_at(self, now_ns: int) -> None:
        """Counts a first attempt at ``now_ns``."""
    def try_withdraw(self) -> bool:
        """Takes one retry now if the budget allows it."""
    def try_withdraw_at(self, now_ns: int) -> bool:
        """Takes one retry at ``now_ns`` if the budget allows it."""
    def counts(self, now_ns: int | None = None) -> tuple[int, int]:
        """``(requests, retries)`` in the window ending at ``now_ns`` (``None``: now)."""
    @property
    def ratio(self) -> float:
        """The most retries per first attempt."""
    @property
    def floor_per_s(self) -> float:
        """The retries allowed per second whatever the requests."""
    @property
    def window_s(self) -> int:
        """The window counted, in seconds."""

@final
class Gate:
    """What every attempt of a loop passes: a place in flight (``limit``), then a start slot
    (``regulator``); first attempts are counted by the ``budget`` and retries withdraw from
    it. Each part optional and shared."""

    def __new__(
        cls,
        *,
        regulator: Regulator | None = None,
        limit: ConcurrencyLimit | None = None,
        budget: RetryBudget | None = None,
    ) -> Gate: ...
    @property
    def regulator(self) -> Regulator | None:
        """The regulator, or ``None``."""
    @property
    def limit(self) -> ConcurrencyLimit | None:
        """The concurrency limit, or ``None``."""
    @property
    def budget(self) -> RetryBudget | None:
        """The retry budget, or ``None``."""

@final
class BatchResult:
    """How one operation of a batch ended: ``"succeeded"`` (``value``), ``"gave_up"``
    (``error``, the very exception, ``reason`` and ``report``) or ``"not_started"``."""

    def to_dict(self) -> BatchResultValue:
        """The plain form: everything but the operation's own value and error."""
    @staticmethod
    def from_dict(value: BatchResultValue | Mapping[str, Any], /) -> BatchResult:
        """The result whose plain form is ``value`` (value and error ``None``)."""
    def __reduce__(self) -> tuple[Any, ...]: ...
    @property
    def status(self) -> Literal["succeeded", "gave_up", "not_started"]:
        """``"succeeded"``, ``"gave_up"`` or ``"not_started"``."""
    @property
    def value(self) -> Any:
        """The operation's value when it succeeded, else ``None``."""
    @property
    def error(self) -> BaseException | None:
        """The operation's last exception when it gave up, else ``None``."""
    @property
    def reason(self) -> _GiveUpReason | None:
        """Why it gave up or was not started, else ``None``."""
    @property
    def stopped_by(self) -> _GiveUpReason | None:
        """For ``"queue_stopped"``: the reason that stopped the queue."""
    @property
    def report(self) -> Report | None:
        """The report of an operation that gave up, else ``None``."""
    @property
    def attempts(self) -> int:
        """The calls made of the operation."""

@final
class BatchReport:
    """What ``run_batch`` did: ``results``, ``stats`` and ``elapsed`` (seconds). Pickles (its
    results' values and errors as pickle does), and ``to_dict()``/``from_dict()`` give its
    plain form, for another process."""

    def to_dict(self) -> BatchReportValue:
        """The plain form: ``results``, ``stats`` and ``elapsed_ms``."""
    @staticmethod
    def from_dict(value: BatchReportValue | Mapping[str, Any], /) -> BatchReport:
        """The report whose plain form is ``value`` (values and errors ``None``)."""
    def __reduce__(self) -> tuple[Any, ...]: ...
    @property
    def results(self) -> tuple[BatchResult, ...]:
        """One ``BatchResult`` per operation, in order."""
    @property
    def stats(self) -> Stats:
        """The batch's stats."""
    @property
    def elapsed(self) -> float:
        """How long the batch took, in seconds."""

def run_batch(
    operations: Iterable[Callable[[], object]],
    *,
    policy: Policy | None = None,
    gate: Gate | None = None,
    workers: int = 1,
    deadline: float | None = None,
    classify: Callable[[Exception], object] | None = None,
    stop_when_a_wait_exceeds_the_deadline: bool = False,
    on_progress: Callable[[BatchProgress], object] | None = None,
) -> BatchReport:
    """Runs ``operations`` through one ``policy`` and one ``gate``, ``workers`` at a time,
    with a ``deadline`` (seconds) for the whole batch, on the core's ``BatchQueue``: what has
    not started when it passes is never started, and nothing waits past it. Ctrl-C stops the
    batch and raises ``KeyboardInterrupt``. Each operation's attempts and result are logged as
    ``retry`` logs them; an operation never started logs a result record (no attempt, its
    ``reason``)."""

# Records, redaction, who answered and stats.

@final
class StatsRecorder:
    """Records a batch's stats from any number of threads, in one timeline: ``start(attempt)``
    and ``end()`` around each attempt, ``saw(cause)`` for each verdict on a failure,
    ``finished(success)`` and ``not_started()`` per operation, ``snapshot()`` for the
    ``Stats`` so far. Thread-safe."""

    def __new__(cls) -> StatsRecorder: ...
    def start(self, attempt: int, now_ns: int | None = None) -> None:
        """Attempt number ``attempt`` (0: a first attempt) starts now, or at ``now_ns`` on the
        monotonic clock."""
    def end(self) -> None:
        """The attempt started last by this caller is over."""
    def saw(self, cause: _Cause | Verdict) -> None:
        """A failure was judged ``cause`` (``"rate_limited"`` and ``"unavailable"`` are
        counted)."""
    def finished(self, success: bool) -> None:
        """An operation ended: it succeeded or gave up."""
    def not_started(self) -> None:
        """An operation was never started."""
    def snapshot(self) -> Stats:
        """The stats so far."""

@final
class AttemptRecord:
    """One attempt's record, for code that runs its own loop: the same record, redacted the
    same way, as the loops log. ``status`` or ``error`` (neither: a success with no HTTP
    meaning); of ``headers`` only the request id and the wait headers are kept.
    ``to_json()`` is the core's JSON line. Immutable and comparable."""

    def __new__(
        cls,
        start_ms: int,
        elapsed_ms: int,
        method: str,
        url: str | bytes,
        *,
        status: int | None = None,
        error: _Transport | None = None,
        headers: _Headers = None,
        delay_ms: int | None = None,
        decision: _Decision,
        reason: _Cause | _GiveUpReason,
    ) -> AttemptRecord: ...
    @property
    def start(self) -> str:
        """When the attempt started: RFC 3339 in UTC."""
    @property
    def start_ms(self) -> int:
        """When the attempt started, in ms since the Unix epoch."""
    @property
    def elapsed_ms(self) -> int:
        """How long it took, in ms."""
    @property
    def method(self) -> str:
        """The HTTP method."""
    @property
    def url(self) -> str:
        """The URL, redacted."""
    @property
    def url_malformed(self) -> bool:
        """Whether the URL was malformed."""
    @property
    def status(self) -> int | None:
        """The HTTP status received, or ``None``."""
    @property
    def transport(self) -> _Transport | None:
        """The transport failure, or ``None``."""
    @property
    def request_id(self) -> str | None:
        """The request id the response carried, or ``None``."""
    @property
    def wait_headers(self) -> list[tuple[str, str]]:
        """The wait headers seen."""
    @property
    def delay_ms(self) -> int | None:
        """The delay chosen before the next attempt, in ms, or ``None``."""
    @property
    def decision(self) -> _Decision:
        """``"done"``, ``"retry"`` or ``"give_up"``."""
    @property
    def reason(self) -> _Cause | _GiveUpReason:
        """The verdict's reason or the give-up reason."""
    def to_json(self) -> str:
        """The record as one line of JSON."""
    def to_dict(self) -> dict[str, Any]:
        """``json.loads(self.to_json())``."""
    def __eq__(self, value: object, /) -> bool: ...

@final
class ResultRecord:
    """One operation's result record, for code that runs its own loop; ``reason`` is the
    give-up reason, or ``None`` for a success. ``to_json()`` is the core's JSON line.
    Immutable and comparable."""

    def __new__(
        cls,
        start_ms: int,
        method: str,
        url: str | bytes,
        *,
        attempts: int,
        total_ms: int,
        reason: _GiveUpReason | None = None,
        stopped_by: _GiveUpReason | None = None,
    ) -> ResultRecord: ...
    @property
    def start(self) -> str:
        """When the first attempt started: RFC 3339 in UTC."""
    @property
    def start_ms(self) -> int:
        """When the first attempt started, in ms since the Unix epoch."""
    @property
    def method(self) -> str:
        """The HTTP method."""
    @property
    def url(self) -> str:
        """The URL, redacted."""
    @property
    def result(self) -> Literal["success", "gave_up"]:
        """``"success"`` or ``"gave_up"``."""
    @property
    def attempts(self) -> int:
        """Attempts made."""
    @property
    def reason(self) -> _GiveUpReason | None:
        """Why it gave up, or ``None``."""
    @property
    def stopped_by(self) -> _GiveUpReason | None:
        """For ``"queue_stopped"``: the reason that stopped the queue."""
    @property
    def total_ms(self) -> int:
        """From the start of the first attempt to the end, in ms."""
    def to_json(self) -> str:
        """The record as one line of JSON."""
    def to_dict(self) -> dict[str, Any]:
        """``json.loads(self.to_json())``."""
    def __eq__(self, value: object, /) -> bool: ...

def redact_url(url: str | bytes, /) -> str:
    """``url`` with userinfo removed, sensitive query values ``[redacted]``, e-mail addresses
    ``[email]`` and long numbers ``[number]``. Never raises for any text; URL bytes that are
    not UTF-8 are percent-encoded."""

@final
class RedactedUrl:
    """A redacted ``url`` and whether the URL given was ``malformed``. Immutable, comparable
    and hashable."""

    @property
    def url(self) -> str:
        """The URL with secrets and personal data replaced."""
    @property
    def malformed(self) -> bool:
        """Whether the URL given was malformed."""
    def __eq__(self, value: object, /) -> bool: ...
    def __hash__(self) -> int: ...

def redact_url_detailed(url: str | bytes, /) -> RedactedUrl:
    """As ``redact_url``, with whether the URL was malformed."""

def redact_headers(headers: _Headers, /) -> list[tuple[str, str]]:
    """``headers`` as ``(name, value)`` pairs in order, the values of sensitive headers
    ``[redacted]`` and URLs in the others redacted. Header bytes are read as UTF-8 when valid,
    else ISO-8859-1."""

def who_answered(headers: _Headers, expected_content_type: str | None = None) -> WhoAnswered:
    """Who answered, judged from the response's ``headers`` and, when given, whether its
    content type is the ``expected_content_type`` the API sends."""

# Private: the Python glue of recuo.retry (recuo/_retry.py) uses these.

@final
class _AttemptPool:
    """The attempts left to the outermost loop of a context."""

    def __new__(cls, remaining: int) -> _AttemptPool: ...
    @property
    def remaining(self) -> int:
        """Attempts left."""
    def _take(self) -> bool:
        """Takes one attempt: ``False`` when none is left."""

def _loop_pool(
    enclosing: _AttemptPool | None, max_attempts: int, batch_operation: bool, after_first: bool, /
) -> tuple[_AttemptPool, bool, bool]:
    """The core's rule for the pool a loop draws from: ``(pool, nested, owned)``."""

_GATE_POLL_MS: int
_attempt_pool: ContextVar[_AttemptPool | None]
_current_attempt: ContextVar[Attempt | None]

@final
class _Loop:
    """A blocking loop's options, checked once."""

    def __new__(
        cls,
        policy: Policy,
        classify: Callable[[Exception], object] | None,
        on_retry: Callable[[int, Exception, float], object] | None,
        on_give_up: Callable[[Report], object] | None,
        seed: int | None,
        sleep: Callable[[float], object] | None,
        gate: Gate | None,
        request: _Request | None,
        handoff: Callable[[Callable[..., Any], tuple[Any, ...], dict[str, Any] | None, Any, Any], Any] | None = None,
        /,
    ) -> _Loop: ...
    def run(self, function: Callable[..., _T], args: tuple[Any, ...], kwargs: dict[str, Any] | None, /) -> _T:
        """``function(*args, **kwargs)`` under this loop's options."""

def _first_attempt(policy: Policy, /) -> tuple[Attempt, Token[Attempt | None]]:
    """The asyncio loop's first attempt, set as the current one, and the token to reset."""

def _operation_after_first(
    policy: Policy,
    seed: int | None,
    gate: Gate | None,
    request: _Request | None,
    first: Attempt,
    now_ms: int,
    unix_ms: int,
    /,
) -> tuple[Operation, Token[_AttemptPool | None] | None]:
    """The machine after a first attempt made before it, at its "call" for that attempt."""

def _operation_in_context(
    policy: Policy,
    seed: int | None,
    gate: Gate | None,
    request: _Request | None,
    /,
    idempotency_key: IdempotencyKey | None = None,
) -> tuple[Operation, Token[_AttemptPool | None] | None]:
    """A new Operation drawing from this context's attempt pool, and the token to reset."""

def _request_operation(
    policy: Policy,
    seed: int | None,
    gate: Gate | None,
    method: str,
    url: str,
    headers: Iterable[str | bytes],
    send_keys: bool | None,
    replayable: bool,
    /,
) -> tuple[Operation, Token[_AttemptPool | None] | None, str | None]:
    """One HTTP request's Operation with the core's plan of it, the token to reset, and
    recuo's key to send (``None``: none)."""

def _request_plan(
    policy: Policy, method: str, callers_key: bool, send_keys: bool | None, /
) -> tuple[Literal["none", "caller", "recuo"], bool]:
    """The core's plan of a request: the key it carries and whether it is idempotent."""

def _ending(
    style: _Style, reason: _GiveUpReason | None, last: _Last, /
) -> Literal["response", "error", "give_up"]:
    """How an operation that ended for ``reason`` surfaces."""

def _give_up_message(reason: _GiveUpReason, attempts: int, last: _Last, retry_in_ms: int | None, /) -> str:
    """The give-up's one message."""
