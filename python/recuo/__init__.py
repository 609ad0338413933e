"""recuo: careful retries, the same in Rust, C, Python and PHP.

Guide A's retry loop and guide B's Retry-After delay, computed by recuo's Rust core:

>>> import recuo
>>> recuo.retry_delay_ms("12", 0)  # Retry-After: 12 means twelve seconds
12000.0
>>> recuo.parse_retry_after("soon")
RetryAfter(kind='invalid', wait_ms=None)
>>> recuo.com_retry(lambda: "done")
'done'

Errors: ``TypeError`` for a wrong type, ``recuo.ConfigError`` (a ``ValueError`` with the
core's stable ``code`` and ``name``) for a configuration the core refuses, ``ValueError`` for
any other value out of range.
"""

from ._recuo import (
    ConfigError,
    RetryAfter,
    __version__,
    backoff_window_ms,
    com_retry,
    parse_retry_after,
    retry_delay_ms,
)

__all__ = [
    "ConfigError",
    "RetryAfter",
    "__version__",
    "backoff_window_ms",
    "com_retry",
    "parse_retry_after",
    "retry_delay_ms",
]
