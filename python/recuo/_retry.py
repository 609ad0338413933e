"""``recuo.retry``: a policy's retry loop as a call, as a decorator, and for ``async def``.

Both loops drive the core's operation machine (``recuo.Operation``): the blocking loop from
Rust (``_recuo._Loop``, made once per decoration, a loop over the machine's steps with Python
effects), the asyncio loop below, which does each ``Step`` the machine answers — looking at
the gate, calling the function, asking the classifier, awaiting ``asyncio.sleep`` — and
forwards the machine's records to the ``recuo`` logger. Every decision, count and record is
the machine's.
Both loops share the two context variables of ``_recuo`` (the attempt pool of the outermost
loop, and the attempt being made), so loops of either kind nest in each other with one limit.

Most calls succeed at once: when the core says a success needs no machine
(``Operation.success_needs_machine``, asked once per set of options: no gate, or one with
nothing in it), both loops make the first attempt before the machine exists — the ``Attempt``
made current (set in the context by the asyncio loop; pushed on its thread by the blocking
loop, see ``python/src/current.rs``), which finds its loop's pool only if a nested loop asks,
the clock read once — and start the machine after it (``start_after_first``) only on a
failure, or when the ``recuo`` logger takes a success's ``DEBUG`` records: the machine then
goes on as if it had made that attempt itself.

The gate is the machine's own gate step (``Operation.poll_gate``): the asyncio loop looks,
sleeps as long as the machine says with ``asyncio.sleep``, and looks again; the machine holds
the place in flight until the attempt ends.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import time
import warnings
from typing import TYPE_CHECKING, Any, Callable, TypeVar, overload

from . import _http
from ._recuo import (
    Gate,
    Operation,
    Policy,
    Step,
    Verdict,
    _attempt_pool,
    _monotonic_ms,
    _current_attempt,
    _first_attempt,
    _Loop,
    _operation_after_first,
    _operation_in_context,
)
from ._values import Report

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
_LOGGER = logging.getLogger("recuo")


class _Options:
    """The options of one ``retry``, checked once (at decoration time for a decorator)."""

    __slots__ = (
        "policy",
        "classify",
        "on_retry",
        "on_give_up",
        "seed",
        "sleep",
        "gate",
        "request",
        "given",
        "first_before",
        "run",
    )

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
        for_call: bool = False,
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
        if classify is None:
            # HTTP-aware by default: an exception that carries a response is judged
            # by its status and headers, the HTTP clients' transport errors by their kind;
            # every other Exception is retried.
            classify = functools.partial(
                _http.classify_failure, policy=self.policy, method=None if request is None else request[0]
            )
        self.classify = classify
        self.on_retry = on_retry
        self.on_give_up = on_give_up
        self.seed = seed
        self.sleep = sleep
        self.gate = gate
        self.request = request
        self.given = any(v is not None for v in (policy, seed, gate, request, *hooks.values()))
        # The core's answer, asked once: with this gate (and no stats), a success needs no
        # machine, so the asyncio loop makes the first attempt before it (the blocking loop
        # asks the same question once, in ``_Loop``).
        self.first_before = not Operation.success_needs_machine(gate)
        # The blocking loop, made once: ``run(fn, args, kwargs)``, whose first attempt is
        # made before the core's machine. For ``recuo.call`` (``for_call``), which tells an
        # async function only by its first attempt, a coroutine answered (or the call
        # refused) by a function ``_is_async`` names goes to the asyncio loop.
        handoff = self._handoff if for_call else None
        self.run = _Loop(self.policy, classify, on_retry, on_give_up, seed, sleep, gate, request, handoff).run

    def _handoff(
        self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any] | None, first: Any, error: Any
    ) -> Any:
        """The first attempt of ``recuo.call(fn)`` answered the coroutine ``first`` (or
        raised ``error`` when called): the asyncio loop, which awaits it as its first
        attempt, when ``fn`` is async; else ``None``."""
        if not _is_async(fn):
            return None
        kwargs = {} if kwargs is None else kwargs
        return _run_async(fn, args, kwargs, self, _raising(error) if first is None else first)


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

    ``recuo.retry`` decorates; ``recuo.call(fn, *args, **kwargs)`` calls now:

    * ``@recuo.retry`` (or ``recuo.retry(fn)``) returns ``fn`` wrapped, keeping its name,
      docstring and signature (``functools.wraps``);
    * ``@recuo.retry(policy=..., ...)`` returns a decorator.

    The old call form — ``recuo.retry(fn, *args, **kwargs)`` with arguments for ``fn`` or an
    option — still calls ``fn`` now, with a ``DeprecationWarning``: write ``recuo.call``.
    An option given as ``None`` counts as not given.

    A function ``inspect.iscoroutinefunction`` calls async (an ``async def`` function, a
    ``functools.partial`` of one, an object whose ``__call__`` is one) is retried in an
    ``async def`` loop that waits with ``asyncio.sleep``: cancelling its task stops the loop
    at once — ``CancelledError`` propagates and no further attempt is made.

    ``policy`` (a ``recuo.Policy``; default ``recuo.Policy()``: 5 attempts with 0.2 s to 5 s
    full-jitter backoff, as “Como repetir requisições com backoff exponencial (retry)” has
    them) sets the attempts, the backoff and the deadline.
    ``classify(exc)`` decides for each ``Exception``: it answers a ``recuo.Verdict`` (such as
    ``recuo.classify(status=..., headers=...)``, whose server wait is then honoured) or a
    truth value (true: retry; false: give up). By default it is HTTP-aware: an
    exception that carries an HTTP response (requests' ``HTTPError``, httpx's
    ``HTTPStatusError``, urllib's ``HTTPError``, aiohttp's ``ClientResponseError``) is judged
    by its status and headers — a 404 is not retried, a 429's ``Retry-After`` is honoured —
    and those clients' transport errors by their kind (``connect``, ``tls``, ``timeout``,
    ``reset``), with the request's method (the response's, else ``request=``'s, else GET);
    every other ``Exception`` is retried. A ``BaseException`` that is not an ``Exception``
    (``KeyboardInterrupt``, ``SystemExit``) never is: it propagates at once.

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
    warnings.warn(
        "recuo.retry(fn, ...) with arguments or options calls fn at once, and is deprecated: "
        "call it with recuo.call(fn, *args, **options), or decorate with @recuo.retry(**options)",
        DeprecationWarning,
        stacklevel=2,
    )
    return _call(fn, args, kwargs, options)


def _typed_call(
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
) -> _T:
    """Calls ``fn(*args, **kwargs)`` now under a retry policy and answers its value (for an
    ``async def`` function, a coroutine to await): the call form of ``recuo.retry``, whose
    options it takes (``policy``, ``classify``, ``on_retry``, ``on_give_up``, ``seed``,
    ``sleep``, ``gate``, ``request``). ``recuo.call(fn)`` calls ``fn()``; ``recuo.retry``
    only ever decorates."""
    # What ``call`` (below, which binds no option's name) does when given keywords: their
    # options bound here.
    if (
        policy is None
        and classify is None
        and on_retry is None
        and on_give_up is None
        and seed is None
        and sleep is None
        and gate is None
        and request is None
    ):
        # No option: the loop made once. Without a gate its first attempt needs no machine,
        # and the loop itself tells an async function by the coroutine it answers.
        return _call_run(fn, args, kwargs)
    options = _options_for_call(policy, classify, on_retry, on_give_up, seed, sleep, gate, request)
    if gate is None:
        return options.run(fn, args, kwargs)
    return _call(fn, args, kwargs, options)  # type: ignore[no-any-return]


if TYPE_CHECKING:
    call = _typed_call
else:

    def call(fn, /, *args, **kwargs):
        # Options are keywords, and most calls give none: one test instead of binding eight
        # keyword-only parameters (a dict lookup each) and testing each for None.
        if not kwargs:
            return _call_run(fn, args, None)
        return _typed_call(fn, *args, **kwargs)

    call.__doc__ = _typed_call.__doc__
    call.__signature__ = inspect.signature(_typed_call)


_last_call: tuple[tuple[Any, ...], _Options] | None = None


def _options_for_call(
    policy: Policy | None,
    classify: Classifier | None,
    on_retry: RetryHook | None,
    on_give_up: GiveUpHook | None,
    seed: int | None,
    sleep: Sleep | None,
    gate: Gate | None,
    request: tuple[str, str | bytes] | None,
) -> _Options:
    """The options of a ``recuo.call``: those of the last call when it was given the very
    same objects (all immutable, or shared by reference: a ``request`` list, which could
    have changed, is checked anew), else checked now."""
    global _last_call
    last = _last_call
    if last is not None:
        given = last[0]
        if (
            given[0] is policy
            and given[1] is classify
            and given[2] is on_retry
            and given[3] is on_give_up
            and given[4] is seed
            and given[5] is sleep
            and given[6] is gate
            and given[7] is request
        ):
            return last[1]
    options = _Options(policy, classify, on_retry, on_give_up, seed, sleep, gate, request, for_call=True)
    if request is None or type(request) is tuple:
        _last_call = ((policy, classify, on_retry, on_give_up, seed, sleep, gate, request), options)
    return options


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

    run = options.run

    @functools.wraps(fn)
    def retrying(*args: Any, **kwargs: Any) -> Any:
        return run(fn, args, kwargs)

    return retrying


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], options: _Options) -> Any:
    if not callable(fn):
        raise TypeError(f"recuo.retry() calls a callable, not {type(fn).__name__}")
    if _is_async(fn):
        return _run_async(fn, args, kwargs, options)
    return _run_sync(fn, args, kwargs, options)


def _run_sync(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], o: _Options) -> Any:
    # A coroutine answered (nothing awaited, nothing retried) raises TypeError there.
    return o.run(fn, args, kwargs)


def _now_ms() -> int:
    """The asyncio loop's monotonic clock, in whole milliseconds (the core's reading)."""
    return _monotonic_ms()


def _unix_ms() -> int:
    """The wall clock, in ms since the Unix epoch (the records' times)."""
    return time.time_ns() // 1_000_000


async def _run_async(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], o: _Options, first: Any = None
) -> Any:
    """The asyncio loop. When a success needs no machine (``o.first_before``), its first
    attempt is made before the machine (one context set, the clocks read once) and the
    machine is started after it (``start_after_first``) only on a failure, or when the
    ``recuo`` logger takes a success's records; ``first`` is that attempt's coroutine when
    the blocking loop made it already (``recuo.call`` telling an async function)."""
    if first is None and not o.first_before:
        op, token = _operation_in_context(o.policy, o.seed, o.gate, o.request)
        try:
            step = await _http.asked(op, op.start, _now_ms(), _unix_ms())
            return await _drive(op, fn, args, kwargs, o, step, None, None)
        finally:
            if token is not None:
                _attempt_pool.reset(token)
    frame, attempt_token = _first_attempt(o.policy)
    started, unix = _now_ms(), _unix_ms()
    try:
        try:
            result = await (fn(*args, **kwargs) if first is None else first)
        finally:
            _current_attempt.reset(attempt_token)
    except asyncio.CancelledError as cancelled:
        op, token = _operation_after_first(o.policy, o.seed, o.gate, o.request, frame, started, unix)
        try:
            op.cancel()
            step = op.failed(_now_ms(), cancelled)
            _end(op, op.judged(_now_ms(), True) if step.kind == "classify" else step, o, None)
        finally:
            if token is not None:
                _attempt_pool.reset(token)
        raise
    except Exception as exc:
        # Driven on out of this block: what the hooks raise is chained to the loop's last
        # exception, not to this one.
        failed: Exception | None = exc
        result = None
    else:
        failed = None
        if not (_http.TELEMETRY or _LOGGER.isEnabledFor(logging.DEBUG)):
            return result  # nobody takes the records of a success at once
    op, token = _operation_after_first(o.policy, o.seed, o.gate, o.request, frame, started, unix)
    try:
        if failed is None:
            step = await _http.asked(op, op.succeeded, _now_ms())
        else:
            step = await _http.asked(op, op.failed, _now_ms(), failed)
        return await _drive(op, fn, args, kwargs, o, step, failed, result)
    finally:
        if token is not None:
            _attempt_pool.reset(token)


async def _drive(
    op: Operation,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    o: _Options,
    step: Step,
    last: Exception | None,
    result: Any,
) -> Any:
    """The machine's loop with asyncio from ``step`` on: do each step ``op`` answers, and
    tell it what happened (``last`` is the exception of the attempt just made, ``result``
    its value). A cancelled task cancels the operation (``"cancelled"``) and propagates."""
    while True:
        with _chained(last):
            op._log_records()
        kind = step.kind
        if kind == "enter":
            step = await _gate(op, step, o, last)
        elif kind == "call":
            token = _current_attempt.set(op.attempt)
            try:
                try:
                    result = await fn(*args, **kwargs)
                finally:
                    _current_attempt.reset(token)
            except Exception as exc:
                last = exc
                step = await _http.asked(op, op.failed, _now_ms(), exc)
            except asyncio.CancelledError as cancelled:
                # The task was cancelled: the operation gives up "cancelled" (what it holds of
                # the gate goes back), its records and on_give_up as for any give-up.
                op.cancel()
                step = op.failed(_now_ms(), cancelled)
                _end(op, op.judged(_now_ms(), True) if step.kind == "classify" else step, o, None)
                raise
            except BaseException:
                # KeyboardInterrupt, SystemExit and the like end the loop at once, as they
                # are; what the operation holds of the gate goes back now.
                op._abandon(_now_ms())
                raise
            else:
                step = await _http.asked(op, op.succeeded, _now_ms())
        elif kind == "classify":
            with _chained(last):
                answer = True if o.classify is None else o.classify(last)  # type: ignore[arg-type]
            step = await _http.asked(op, op.judged, _now_ms(), answer if isinstance(answer, Verdict) else bool(answer))
        elif kind == "sleep":
            if o.on_retry is not None:
                with _chained(last):
                    o.on_retry(step.attempt or 0, last, step.delay or 0.0)  # type: ignore[arg-type]
            if step.delay_ms:
                try:
                    await _sleep(o.sleep, step.delay or 0.0)
                except asyncio.CancelledError:
                    op.cancel()
                    _end(op, op.slept(_now_ms()), o, None)
                    raise
            step = await _http.asked(op, op.slept, _now_ms())
        elif kind == "done":
            return result
        else:  # "gave_up": the function's own last exception, unchanged
            _end(op, step, o, last)
            if last is None:
                # The enclosing loops' attempts ran out (nested loops racing for one pool).
                raise RuntimeError(f"recuo gave up before the first attempt ({step.reason})")
            raise last


def _poll(op: Operation, now_ms: int) -> Step:
    """One look at the gate: the machine's ``poll_gate``."""
    return op.poll_gate(now_ms)


async def _wait_at_gate(seconds: float) -> None:
    """The wait a look at the gate asked for."""
    await asyncio.sleep(seconds)


async def _gate(op: Operation, step: Step, o: _Options, last: Exception | None) -> Step:
    """The machine's gate step (``"enter"``) with asyncio: look at the gate, wait as long as
    the machine says, look again — until it answers the attempt's ``"call"`` or gives up.
    The machine holds the place in flight until the attempt ends. A cancelled task gives up
    ``"cancelled"`` (a reserved start slot goes back) and propagates."""
    until = step.until_ms
    while True:
        polled = await _http.look_remote(op, until) if op._polls_remote else _poll(op, _now_ms())
        if polled.kind != "wait":
            return polled
        try:
            await _wait_at_gate(polled.delay or 0.0)
        except asyncio.CancelledError:
            op.cancel()
            _end(op, _poll(op, _now_ms()), o, last)
            raise


async def _raising(error: BaseException) -> Any:
    """An async function's first attempt that raised when called (its arguments refused)."""
    raise error


class _chained:
    """Raised while handling ``last`` (by a classifier or a hook): chain it, as an
    ``except`` block would."""

    def __init__(self, last: BaseException | None) -> None:
        self.last = last

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, raised: BaseException | None, tb: object) -> None:
        last = self.last
        if raised is not None and last is not None and raised is not last and raised.__context__ is None:
            raised.__context__ = last


def _end(op: Operation, step: Step, o: _Options, last: Exception | None) -> None:
    """The machine gave up (``step``): its last records, then ``on_give_up``."""
    with _chained(last):
        op._log_records()
        if step.kind == "gave_up" and o.on_give_up is not None:
            o.on_give_up(op.report)


async def _sleep(sleep: Sleep | None, seconds: float) -> None:
    if sleep is None:
        await asyncio.sleep(seconds)
        return
    result = sleep(seconds)
    if inspect.isawaitable(result):
        await result


_CALL_OPTIONS = _Options(None, None, None, None, None, None, None, None, for_call=True)
_call_run = _CALL_OPTIONS.run
