"""recuo: careful retries, the same in Rust, C, Python, PHP and JavaScript.

Two guides are cited by name. Guide A is “Como repetir requisições com backoff exponencial (retry)”
(https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff); guide B is
“HTTP 429: interpretar Retry-After e repetir pedidos com segurança”. Guide A's retry loop and
guide B's Retry-After delay, computed by recuo's Rust core:

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
>>> recuo.call(lambda n: n * 2, 21, policy=recuo.Policy(max_attempts=3))
42

``recuo.call(fn, *args)`` calls now, ``@recuo.retry`` and ``@recuo.retry(policy=...)``
decorate, sync or ``async def``; by default they read the HTTP errors of requests, httpx,
aiohttp and urllib by their status and transport kind. ``recuo.httpx.RetryTransport``,
``recuo.requests.RetryAdapter`` and ``recuo.aiohttp.RetryMiddleware`` retry inside those
clients (``pip install recuo[httpx]`` and so on; ``import recuo`` imports none of them),
``recuo.buscar_com_retry(url)`` is guide A's fetch over urllib; ``recuo.Operation`` is the
same machine (the core's) for code that runs its own loop, ``recuo.BatchQueue`` the batch's.

The shared limits: plan a batch, then keep every thread and process inside the allowance.

>>> recuo.plan(600, "120/min", "90/min", latency=2)  # guide B's example
Plan(interval_ms=667, duration_s=400.0, retries=0.0, in_flight=3.0, warnings=())
>>> regulator = recuo.Regulator("2/s", burst=1)
>>> regulator.try_acquire_at(10**9), regulator.try_acquire_at(10**9)  # go; then wait 0.5 s
(0, 500000000)
>>> gate = recuo.Gate(regulator=recuo.Regulator("1000/s"), limit=recuo.ConcurrencyLimit(2),
...                   budget=recuo.RetryBudget())
>>> recuo.call(lambda: "sent", gate=gate)
'sent'

``recuo.Regulator``, ``recuo.ConcurrencyLimit``, ``recuo.RetryBudget`` and ``recuo.Gate``
work across threads, the regulator and the budget across processes too (``.shared(path,
...)``), the regulator across machines (``Regulator.redis(url, key, ...)``);
``recuo.run_batch`` runs a queue of operations through one gate. See docs/python.md.

Records you can trust: redaction, who answered, and the stats of a batch.

>>> recuo.redact_url("https://ana:pw@api.example.com/v1/users/ana@example.com?api_key=k1&page=2")
'https://api.example.com/v1/users/[email]?api_key=[redacted]&page=2'
>>> recuo.redact_headers({"Authorization": "Bearer s3cr3t", "Accept": "application/json"})
[('Authorization', '[redacted]'), ('Accept', 'application/json')]
>>> recuo.who_answered({"CF-Ray": "8a1b2c3d4e5f-GRU", "Server": "cloudflare"}).origin
'cdn'

Every loop logs its attempts and results, redacted, to the ``recuo`` logger (``logging``;
the message is the record's JSON line, ``extra={"recuo": {...}}`` its fields), and
``recuo.run_batch`` answers a ``recuo.Stats``.

Errors: ``TypeError`` for a wrong type, ``recuo.ConfigError`` (a ``ValueError`` with the
core's stable ``code`` and ``name``) for a configuration the core refuses,
``recuo.PlanError`` for a plan that cannot be made, ``recuo.SharedFileError`` for a shared
file or Redis key set up otherwise, ``ConnectionError`` for a Redis server out of reach,
``recuo.QueueFullError`` for a start a regulator would queue beyond the 4096 it queues ahead,
``ValueError`` for any other value out of range, and ``recuo.InternalError`` (an
``Exception``, never a ``BaseException``) for a bug inside recuo — a Rust panic caught at the
boundary.
"""

import logging as _logging

from ._recuo import (
    Attempt,
    AttemptRecord,
    BatchQueue,
    BatchReport,
    BatchResult,
    ConcurrencyLimit,
    ConfigError,
    Gate,
    IdempotencyKey,
    InternalError,
    Next,
    Operation,
    Permit,
    PlanError,
    Policy,
    QueueFullError,
    RedactedUrl,
    Regulator,
    ResultRecord,
    RetryBudget,
    SharedFileError,
    StatsRecorder,
    Step,
    Verdict,
    __version__,
    backoff_window_ms,
    classify,
    com_retry,
    current_attempt,
    monotonic_ns,
    parse_retry_after,
    plan,
    redact_headers,
    redact_url,
    redact_url_detailed,
    retry_delay_ms,
    run_batch,
    who_answered,
)
from ._buscar import Resposta, buscar_com_retry
from ._http import GiveUp
from ._retry import call, retry
from ._values import (
    BatchProgress,
    BatchProgressValue,
    BatchReportValue,
    BatchResultValue,
    BatchStatus,
    Confidence,
    GiveUpReason,
    Origin,
    Plan,
    PlanValue,
    PolicyValue,
    Report,
    ReportValue,
    RetryAfter,
    RetryAfterKind,
    RetryAfterValue,
    Stats,
    StatsValue,
    WhoAnswered,
    WhoAnsweredValue,
)

# A library's logger: records reach the handlers the application configures, and none are
# printed by logging's last-resort handler when it configures none.
_logging.getLogger("recuo").addHandler(_logging.NullHandler())

__all__ = [
    "Attempt",
    "AttemptRecord",
    "BatchProgress",
    "BatchProgressValue",
    "BatchQueue",
    "BatchReport",
    "BatchReportValue",
    "BatchResult",
    "BatchResultValue",
    "BatchStatus",
    "ConcurrencyLimit",
    "Confidence",
    "ConfigError",
    "Gate",
    "GiveUp",
    "GiveUpReason",
    "IdempotencyKey",
    "InternalError",
    "Next",
    "Operation",
    "Origin",
    "Permit",
    "Plan",
    "PlanError",
    "PlanValue",
    "Policy",
    "PolicyValue",
    "QueueFullError",
    "RedactedUrl",
    "Regulator",
    "Report",
    "ReportValue",
    "Resposta",
    "ResultRecord",
    "RetryAfter",
    "RetryAfterKind",
    "RetryAfterValue",
    "RetryBudget",
    "SharedFileError",
    "Stats",
    "StatsRecorder",
    "StatsValue",
    "Step",
    "Verdict",
    "WhoAnswered",
    "WhoAnsweredValue",
    "__version__",
    "backoff_window_ms",
    "buscar_com_retry",
    "call",
    "classify",
    "com_retry",
    "current_attempt",
    "monotonic_ns",
    "parse_retry_after",
    "plan",
    "redact_headers",
    "redact_url",
    "redact_url_detailed",
    "retry",
    "retry_delay_ms",
    "run_batch",
    "who_answered",
]
