"""``recuo.retry``: a policy's retry loop as a call, as a decorator, and for ``async def``.

The blocking loop is the core's own (``_recuo._run``, the Rust ``drive`` with Python
effects). The asyncio loop below drives the core's ``Attempts`` state machine and awaits
``asyncio.sleep`` between attempts; every decision in it — retry or not, how long to wait,
when to stop and why — is the core's. Both loops share the two context variables of
``_recuo`` (the attempt pool of the outermost loop, and the attempt being made), so loops of
either kind nest in each other with one limit.

Both loops log the core's records (SPEC §7) to the ``recuo`` logger: the blocking loop from
Rust, the asyncio loop through a ``_Journal`` (``_recuo._journal``) that makes the same
records at the same points — an attempt's once its decision is known, then the result's.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from typing import TYPE_CHECKING, Any, Callable, TypeVar, overload

from ._limits import enter_gate
from ._recuo import (
    Attempts,
    Decision,
    Gate,
    Permit,
    Policy,
    Report,
    _attempt_pool,
    _attempts_in_context,
    _current_attempt,
    _exception_verdict,
    _give_up_report,
    _journal,
    _Journal,
    _run,
)

if TYPE_CHECKING:
    from typing_extensions import ParamSpec

    _P = ParamSpec("_P")

_T = TypeVar("_T")

Classifier = Callable[[Exception], object]
"""``classify(exc)``: a ``Verdict`` (``recuo.classify(...)``), or anything whose truth says
whether to retry."""
RetryHook = Callable[[int, Exception, float], object]
"""``on_retry(attempt, exc, delay_seconds)``, called before each sleep."""
GiveUpHook = Callable[[Report], object]
"""``on_give_up(report)``, called once when the loop gives up."""
Sleep = Callable[[float], object]
"""``sleep(seconds)`` instead of the real wait; for ``async def`` functions it may answer an
awaitable, which is awaited."""

_DEFAULT_POLICY = Policy()


class _Options:
    """The options of one ``retry``, checked once (at decoration time for a decorator)."""

    __slots__ = ("policy", "classify", "on_retry", "on_give_up", "seed", "sleep", "gate", "request", "given")

    def __init__(
        self,
        policy: Policy | None,
        classify: Classifier | None,
        on_retry: RetryHook | None,
        on_give_up: GiveUpHook | None,
        seed: int | None,
        sleep: Sleep | None,
        gate: Gate | None,
        request: tuple[str, str | bytes] | None,
    ) -> None:
        if policy is not None and not isinstance(policy, Policy):
            raise TypeError(f"policy must be a recuo.Policy or None, not {type(policy).__name__}")
        if gate is not None and not isinstance(gate, Gate):
            raise TypeError(f"gate must be a recuo.Gate or None, not {type(gate).__name__}")
        hooks = {"classify": classify, "on_retry": on_retry, "on_give_up": on_give_up, "sleep": sleep}
        for name, hook in hooks.items():
            if hook is not None and not callable(hook):
                raise TypeError(f"{name} must be callable, not {type(hook).__name__}")
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, int):
                raise TypeError(f"seed must be an int, not {type(seed).__name__}")
            if not 0 <= seed < 2**64:
                raise ValueError("seed must be between 0 and 2**64 - 1")
        if request is not None:
            if not isinstance(request, (tuple, list)) or len(request) != 2:
                raise TypeError(f"request must be a (method, url) tuple, not {type(request).__name__}")
            method, url = request
            if not isinstance(method, str):
                raise TypeError(f"request's method must be a str, not {type(method).__name__}")
            if not isinstance(url, (str, bytes)):
                raise TypeError(f"request's url must be str or bytes, not {type(url).__name__}")
        self.policy = _DEFAULT_POLICY if policy is None else policy
        self.classify = classify
        self.on_retry = on_retry
        self.on_give_up = on_give_up
        self.seed = seed
        self.sleep = sleep
        self.gate = gate
        self.request = request
        self.given = any(v is not None for v in (policy, seed, gate, request, *hooks.values()))


@overload
def retry(fn: Callable[_P, _T], /) -> Callable[_P, _T]: ...


@overload
def retry(
    fn: None = None,
    /,
    *,
    policy: Policy | None = None,
    classify: Classifier | None = None,
    on_retry: RetryHook | None = None,
    on_give_up: GiveUpHook | None = None,
    seed: int | None = None,
    sleep: Sleep | None = None,
    gate: Gate | None = None,
    request: tuple[str, str | bytes] | None = None,
) -> Callable[[Callable[_P, _T]], Callable[_P, _T]]: ...


@overload
def retry(
    fn: Callable[..., _T],
    /,
    *args: Any,
    policy: Policy | None = None,
    classify: Classifier | None = None,
    on_retry: RetryHook | None = None,
    on_give_up: GiveUpHook | None = None,
    seed: int | None = None,
    sleep: Sleep | None = None,
    gate: Gate | None = None,
    request: tuple[str, str | bytes] | None = None,
    **kwargs: Any,
) -> _T: ...


def retry(
    fn: Callable[..., Any] | None = None,
    /,
    *args: Any,
    policy: Policy | None = None,
    classify: Classifier | None = None,
    on_retry: RetryHook | None = None,
    on_give_up: GiveUpHook | None = None,
    seed: int | None = None,
    sleep: Sleep | None = None,
    gate: Gate | None = None,
    request: tuple[str, str | bytes] | None = None,
    **kwargs: Any,
) -> Any:
    """Runs a function under a retry policy: as a call, as a decorator, sync or ``async def``.

    Three forms:

    * ``recuo.retry(fn, *args, **kwargs)`` with arguments for ``fn`` or any option calls
      ``fn(*args, **kwargs)`` now and returns its value (for an ``async def`` function, a
      coroutine to await);
    * ``@recuo.retry`` (or ``recuo.retry(fn)`` alone) returns ``fn`` wrapped, keeping its
      name, docstring and signature (``functools.wraps``);
    * ``@recuo.retry(policy=..., ...)`` returns a decorator.

    ``recuo.retry(fn)`` alone wraps rather than calls, so that ``@recuo.retry`` never runs a
    function at import time; an option given as ``None`` counts as not given. To call a
    function that takes no arguments now, write ``recuo.retry(fn)()``.

    A function ``inspect.iscoroutinefunction`` calls async (an ``async def`` function, a
    ``functools.partial`` of one, an object whose ``__call__`` is one) is retried in an
    ``async def`` loop that waits with ``asyncio.sleep``: cancelling its task stops the loop
    at once — ``CancelledError`` propagates and no further attempt is made.

    ``policy`` (a ``recuo.Policy``; default ``recuo.Policy()``, guide A's 5 attempts with
    0.2 s to 5 s full-jitter backoff) sets the attempts, the backoff and the deadline.
    ``classify(exc)`` decides for each ``Exception``: it answers a ``recuo.Verdict`` (such as
    ``recuo.classify(status=..., headers=...)``, whose server wait is then honoured) or a
    truth value (true: retry; false: give up). By default every ``Exception`` is retried; a
    ``BaseException`` that is not an ``Exception`` (``KeyboardInterrupt``, ``SystemExit``)
    never is: it propagates at once.

    ``on_retry(attempt, exc, delay_seconds)`` is called before each wait (``attempt`` counts
    from 0 and is the one that failed); ``on_give_up(report)`` is called once when the loop
    gives up, with a ``recuo.Report`` (``attempts``, ``reason``, ``elapsed``, ``delays``, and
    ``retry_at`` for ``"wait_exceeds_deadline"``). Giving up re-raises the function's last
    exception: the very same object. Task cancellation also gives up, with the reason
    ``"cancelled"``, and re-raises ``CancelledError``.

    Inside the function, ``recuo.current_attempt()`` gives the attempt: its ``number``, the
    operation's ``idempotency_key`` (one UUID v4 per call, the same on every attempt) and the
    ``idempotency_header``. A loop that runs inside an attempt of another loop in the same
    context (``contextvars``) draws from that loop's attempts: an outer loop of 5 around an
    inner loop of 5 calls the innermost function 5 times, not 25.

    ``seed`` (an int) makes the jitter reproducible. ``sleep(seconds)`` replaces the real
    wait (for tests; in the async loop it may answer an awaitable); a zero delay calls no
    sleep. The real blocking wait releases the GIL and answers Ctrl-C within about 50 ms.

    ``gate`` (a ``recuo.Gate``) is passed by every attempt, first or retry: a place in flight
    (its ``limit``), then a start slot (its ``regulator``); the place is given back right
    after the attempt, before any sleep. First attempts are counted by its ``budget`` and
    every retry withdraws from it: none left gives up with ``"budget_exhausted"``. An
    adaptive regulator slows down on ``"rate_limited"`` verdicts and speeds back up on
    successes. Blocking waits at the gate release the GIL and answer Ctrl-C promptly; async
    waits use ``asyncio.sleep``, and cancelling the task while it waits gives up with
    ``"cancelled"`` without counting the attempt.

    Every attempt and the result are logged to the ``recuo`` logger as the core's records,
    redacted before Python sees them: the message is the record's JSON line and
    ``extra={"recuo": {...}}`` its fields. An attempt that succeeded logs at ``DEBUG``, one
    retried or given up on at ``INFO``; the result at ``DEBUG`` (done at once), ``INFO``
    (done after retries) or ``WARNING`` (gave up). ``request=(method, url)`` names the request
    the records describe; inside the function, ``recuo.current_attempt().record_request(...)``
    and ``.record_response(status, headers)`` say what one attempt sent and received. A
    failure's status and headers are otherwise those ``recuo.classify`` judged, or those the
    exception carries (``.status_code`` or ``.status``, and ``.headers``, on the exception or
    its ``.response``).

    Raises ``TypeError`` for an argument of the wrong type (checked when ``retry`` is called,
    so a bad decorator fails at import) and ``ValueError`` for a seed out of range. The
    option names are ``retry``'s own: to pass a keyword argument with one of these names to
    ``fn``, use the decorator or ``functools.partial``.
    """
    options = _Options(policy, classify, on_retry, on_give_up, seed, sleep, gate, request)
    if fn is None:
        if args or kwargs:
            raise TypeError("recuo.retry() got arguments for a function but no function")
        return functools.partial(_decorate, options=options)
    if not args and not kwargs and not options.given:
        return _decorate(fn, options=options)
    return _call(fn, args, kwargs, options)


def _is_async(fn: object) -> bool:
    """Whether calling ``fn`` answers a coroutine, as far as can be told before calling it."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(type(fn), "__call__", None)
    )


def _decorate(fn: Callable[..., Any], *, options: _Options) -> Callable[..., Any]:
    if not callable(fn):
        raise TypeError(f"recuo.retry() decorates a callable, not {type(fn).__name__}")
    if _is_async(fn):

        @functools.wraps(fn)
        async def retrying_async(*args: Any, **kwargs: Any) -> Any:
            return await _run_async(fn, args, kwargs, options)

        return retrying_async

    @functools.wraps(fn)
    def retrying(*args: Any, **kwargs: Any) -> Any:
        return _run_sync(fn, args, kwargs, options)

    return retrying


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], options: _Options) -> Any:
    if not callable(fn):
        raise TypeError(f"recuo.retry() calls a callable, not {type(fn).__name__}")
    if _is_async(fn):
        return _run_async(fn, args, kwargs, options)
    return _run_sync(fn, args, kwargs, options)


def _run_sync(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], o: _Options) -> Any:
    result = _run(
        fn, args, kwargs, o.policy, o.classify, o.on_retry, o.on_give_up, o.seed, o.sleep, o.gate, o.request
    )
    if inspect.iscoroutine(result):
        # The blocking loop saw a coroutine as a success: nothing was awaited, so nothing was
        # retried. Say so instead of handing back a coroutine that would run unretried.
        result.close()
        raise TypeError(
            f"{getattr(fn, '__qualname__', fn)!r} returned a coroutine, but recuo.retry cannot "
            "tell it is async: pass the async def function itself (not a lambda around it)"
        )
    return result


def _now_ms() -> int:
    """The asyncio loop's monotonic clock, in whole milliseconds."""
    return time.monotonic_ns() // 1_000_000


async def _run_async(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], o: _Options) -> Any:
    attempts, token = _attempts_in_context(o.policy, o.seed)
    try:
        return await _async_loop(attempts, fn, args, kwargs, o, _journal(o.request))
    finally:
        if token is not None:
            _attempt_pool.reset(token)


async def _async_loop(
    attempts: Attempts,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    o: _Options,
    journal: _Journal | None,
) -> Any:
    """SPEC §6's loop, as the core's ``drive`` runs it: begin, pass the gate, attempt,
    classify, decide, hook, sleep — with every decision taken by ``attempts``, and the
    records logged where the blocking loop logs them."""
    last: Exception | None = None
    while True:
        refused = attempts.begin(_now_ms())
        if refused is not None:
            # The enclosing loops' attempts ran out (nested loops racing for one pool).
            _give_up(attempts, refused, o, last, journal)
            if last is None:
                raise RuntimeError(f"recuo gave up before the first attempt ({refused.reason})")
            raise last
        attempt = attempts.attempt
        assert attempt is not None  # begun just now
        permit = await _pass_gate(attempts, attempt.number, o, last, journal)
        token = _current_attempt.set(attempt)
        if journal is not None:
            journal.started()
        try:
            try:
                result = await fn(*args, **kwargs)
            finally:
                # The place in flight is given back before anything else, any sleep above all.
                if permit is not None:
                    permit.release()
        except asyncio.CancelledError as cancelled:
            if journal is not None:
                journal.ended(attempt, cancelled)
            _cancel(attempts, o, journal)
            raise
        except Exception as exc:
            if journal is not None:
                journal.ended(attempt, exc)
            decision = _decide(attempts, exc, o, journal)
            if decision.kind != "retry":
                _give_up(attempts, decision, o, None, journal)
                raise
            if journal is not None:
                journal.retry(decision.delay_ms or 0)
            if o.on_retry is not None:
                o.on_retry(attempt.number, exc, decision.delay or 0.0)
            last = exc
        else:
            if journal is not None:
                journal.ended(attempt, None)
            if o.gate is not None and o.gate.regulator is not None:
                o.gate.regulator.on_success()
            if journal is not None:
                journal.done(attempts.attempts)
            return result
        finally:
            _current_attempt.reset(token)
        delay = decision.delay or 0.0
        if delay > 0:
            try:
                await _sleep(o.sleep, delay)
            except asyncio.CancelledError:
                _cancel(attempts, o, journal)
                raise


async def _pass_gate(
    attempts: Attempts, number: int, o: _Options, last: Exception | None, journal: _Journal | None
) -> Permit | None:
    """Waits at the gate, if any, for attempt ``number``. Cancelled meanwhile, the operation
    gives up with ``"cancelled"`` and that attempt is not counted (as in the core's loop)."""
    if o.gate is None:
        return None
    try:
        return await enter_gate(o.gate, number)
    except asyncio.CancelledError:
        _give_up(attempts, attempts.refuse_cancelled(_now_ms()), o, last, journal)
        raise


def _decide(attempts: Attempts, exc: Exception, o: _Options, journal: _Journal | None) -> Decision:
    if attempts.is_spent:
        # No attempt left anyway: the classifier is not asked.
        return attempts.exhaust(_now_ms())
    verdict = _exception_verdict(True if o.classify is None else o.classify(exc))
    if journal is not None:
        journal.judged(verdict)
    gate = o.gate
    if gate is None:
        return attempts.decide(verdict, _now_ms())
    if verdict.reason == "rate_limited" and gate.regulator is not None:
        gate.regulator.on_throttled()
    return attempts.decide(verdict, _now_ms(), budget=gate.budget)


def _give_up(
    attempts: Attempts, decision: Decision, o: _Options, last: Exception | None, journal: _Journal | None
) -> None:
    """The records of the give-up, then ``on_give_up``."""
    try:
        if journal is not None:
            journal.give_up(decision.reason or "permanent", attempts.report().attempts)
        if o.on_give_up is not None:
            o.on_give_up(_give_up_report(attempts, decision, _now_ms()))
    except BaseException as raised:
        # Raised while giving up on `last`: chain it, as an `except` block would.
        if last is not None and raised is not last and raised.__context__ is None:
            raised.__context__ = last
        raise


def _cancel(attempts: Attempts, o: _Options, journal: _Journal | None) -> None:
    """The task was cancelled: the operation gives up with ``"cancelled"``."""
    attempts.cancel()
    decision = attempts.begin(_now_ms())
    if decision is not None:
        _give_up(attempts, decision, o, None, journal)


async def _sleep(sleep: Sleep | None, seconds: float) -> None:
    if sleep is None:
        await asyncio.sleep(seconds)
        return
    result = sleep(seconds)
    if inspect.isawaitable(result):
        await result
