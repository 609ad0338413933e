"""recuo: careful retries, the same in Rust, C, Python and PHP.

Guide A's retry loop and guide B's Retry-After delay, computed by recuo's Rust core:

>>> import recuo
>>> recuo.retry_delay_ms("12", 0)  # Retry-After: 12 means twelve seconds
12000.0
>>> recuo.parse_retry_after("soon")
RetryAfter(kind='invalid', wait_ms=None)
>>> recuo.com_retry(lambda: "done")
'done'

The policy engine: what an outcome is worth, and a retry loop that honours it.

>>> recuo.classify(429, headers={"Retry-After": "3"}, now_ms=0)
Verdict(verdict='retry', reason='rate_limited', wait_ms=3000, wait_unbounded=False)
>>> recuo.classify(error="timeout", method="POST").reason  # it may have been processed
'not_idempotent'
>>> recuo.retry(lambda n: n * 2, 21, policy=recuo.Policy(max_attempts=3))
42

``recuo.retry`` works as a call, as a decorator (``@recuo.retry``,
``@recuo.retry(policy=...)``) and with ``async def`` functions; ``recuo.Attempts`` is the
same state machine for code that runs its own loop. See docs/python.md.

Errors: ``TypeError`` for a wrong type, ``recuo.ConfigError`` (a ``ValueError`` with the
core's stable ``code`` and ``name``) for a configuration the core refuses, ``ValueError`` for
any other value out of range.
"""

from ._recuo import (
    Attempt,
    Attempts,
    ConfigError,
    Decision,
    IdempotencyKey,
    Policy,
    Report,
    RetryAfter,
    Verdict,
    __version__,
    backoff_window_ms,
    classify,
    com_retry,
    current_attempt,
    parse_retry_after,
    retry_delay_ms,
)
from ._retry import retry

__all__ = [
    "Attempt",
    "Attempts",
    "ConfigError",
    "Decision",
    "IdempotencyKey",
    "Policy",
    "Report",
    "RetryAfter",
    "Verdict",
    "__version__",
    "backoff_window_ms",
    "classify",
    "com_retry",
    "current_attempt",
    "parse_retry_after",
    "retry",
    "retry_delay_ms",
]
