/*
 * recuo.h — the C interface of recuo, careful retries.
 *
 * Link with -lrecuo (pkg-config --cflags --libs recuo). Static linking also needs
 * -lpthread -ldl -lm (pkg-config --static --libs recuo).
 *
 * Two guides are named below. Guide A is
 * "Como repetir requisições com backoff exponencial (retry)"
 * (https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff): comRetry,
 * buscarComRetry, backoff with full jitter. Guide B is
 * "HTTP 429: interpretar Retry-After e repetir pedidos com segurança": Retry-After,
 * retryDelayMs, a batch planned under a per-minute allowance.
 *
 * Conventions (they hold for every function below):
 *
 *  - Names. Everything is prefixed recuo_ / RECUO_. Guide-compatible names keep the guides'
 *    Portuguese (recuo_com_retry, tentativas, repetir_se); the rest is English. The pairs
 *    are listed in docs/names.md.
 *  - Status. A function that can fail returns recuo_status: RECUO_OK (0) or an error code —
 *    or, from the shared limits, a "not now" that is no error (RECUO_WOULD_WAIT,
 *    RECUO_TIMED_OUT, RECUO_CANCELLED, RECUO_BUDGET_EXHAUSTED: names without ERR).
 *    The codes are stable and grouped in ranges (see recuo_status); test them with
 *    recuo_status_is_argument_error / recuo_status_is_config_error, describe them with
 *    recuo_status_message (into your buffer) or recuo_status_name. There is no thread-local
 *    "last error": where a message names values (a shared file's settings), the function
 *    takes a detail buffer of yours.
 *  - No partial success. Arguments are checked before any work; when a function returns an
 *    error, its outputs are left untouched — except the documented cases where the error
 *    is itself an answer: RECUO_ERR_TASK_FAILED fills the last error and the attempt count,
 *    RECUO_ERR_GAVE_UP, RECUO_ERR_NO_VERDICT and RECUO_ERR_NO_RESPONSE fill recuo_retry's
 *    (and recuo_retry_http's) report (and recuo_batch_run's results and stats),
 *    RECUO_WOULD_WAIT writes the wait needed,
 *    RECUO_ERR_BUFFER_TOO_SMALL writes the truncated, NUL-terminated text (never for an
 *    idempotency key: a truncated key must not be sent, so nothing is written), and a
 *    detail buffer is written on every answer.
 *  - Arguments. Inputs come before outputs (the pointers a function writes through, such as
 *    *_out). A caller's buffer is followed by its size_t length.
 *    Text with an explicit length may contain NUL bytes; a NUL-terminated char * is read up
 *    to its NUL. A NULL pointer where one is required gives RECUO_ERR_NULL_ARGUMENT, never
 *    a crash; pointers documented "may be NULL" are optional.
 *  - Text that is not UTF-8. What your program chooses (a method, a header name to set, an
 *    expected content type) must be UTF-8: RECUO_ERR_NOT_UTF8. What comes from elsewhere (a
 *    response's headers, a URL to redact or record) is never refused: each invalid byte
 *    sequence is read as U+FFFD, so no raw byte ever reaches an output (a URL with such bytes
 *    is reported malformed; a header name with such bytes is taken for a secret's).
 *  - Ownership. recuo never keeps a pointer you pass beyond the call, and never frees it.
 *    What recuo allocates is an opaque handle, released by its _free function (which accepts
 *    NULL); every _new has its _free (a permit's and a pass's is recuo_permit_release,
 *    recuo_pass_release). A handle given to another (a pool or a cancel token to a state
 *    machine or options; a regulator, limit or budget to a gate; a gate to options) is
 *    shared, not borrowed: each may be freed in any order.
 *    Strings recuo returns (recuo_version, recuo_status_name, every recuo_*_name) are
 *    static: never free them. Pointers recuo hands to a callback (a key, a verdict, a report,
 *    a record's JSON line, an attempt context) are valid during that callback only.
 *  - Opaque types. A handle's fields are private; its documentation names the Rust type
 *    behind it. Plain structs (recuo_retry_after, recuo_outcome, recuo_header,
 *    recuo_verdict, recuo_decision, recuo_report, recuo_plan_result, recuo_batch_result,
 *    recuo_stats, recuo_who_answered_result) are yours to allocate, on the stack too.
 *  - Redaction. Every record recuo builds (recuo_record_*_json, a record sink) is redacted
 *    by the core before it exists: URLs lose userinfo, secret parameters and personal data;
 *    of a response's headers only the request id and the wait headers are kept.
 *  - Enums. In C11 each enum type is a uint32_t typedef, so recuo never trusts one it is
 *    given: an argument or struct field that is none of its constants is refused with
 *    RECUO_ERR_INVALID_ENUM (recuo_retry: RECUO_ERR_NO_VERDICT). 0 is never a constant, so a
 *    struct recuo did not fill in is recognisable — except where 0 means "none"
 *    (RECUO_WAIT_NONE, RECUO_GIVE_UP_NONE). Each enum has a recuo_<enum>_name function giving
 *    the stable lower-case name every language uses ("unknown" for other numbers).
 *  - Callbacks receive the user_data pointer given to the call, run on the calling thread
 *    (except recuo_batch_run's operation, which runs on worker threads, several at once),
 *    and must return normally (no longjmp, no C++ exception across recuo).
 *  - Panics. A bug inside recuo never unwinds into C: it is caught, and the function answers
 *    RECUO_ERR_PANIC (status), NULL (pointer), NaN (double), 0 (integer) or false (bool).
 *  - Threads. Every function may be called from any thread; a handle may be used by several
 *    threads at once for reading (const pointer), but a function taking a non-const pointer
 *    (a setter, the recuo_attempts_* steps) must not run concurrently with another use of
 *    that handle. recuo_attempt_pool, recuo_cancel_token, recuo_regulator,
 *    recuo_concurrency_limit and recuo_retry_budget are made to be shared: any thread may
 *    use them at any time. A regulator or budget opened with _new_shared is shared with
 *    every process that opens the same file.
 *  - Time. Durations are milliseconds in uint64_t. Wall-clock instants are milliseconds since
 *    the Unix epoch in int64_t (recuo_now_ms), for HTTP-dates and rate-limit resets; the
 *    state machine's instants are milliseconds in uint64_t on a monotonic clock of your
 *    choice (recuo_monotonic_ms, CLOCK_MONOTONIC, a fake clock in tests). The regulator and
 *    the retry budget count in nanoseconds on recuo_monotonic_ns (CLOCK_MONOTONIC, the same
 *    in every process); their _at functions take the instant from you. Rates are doubles,
 *    events per second (recuo_rate_parse reads "90/min"). The decisions themselves never
 *    read a clock.
 *  - ABI. Within a 0.x release series the ABI may change at each minor version; compare
 *    recuo_version() with RECUO_VERSION to detect a header that does not match the library.
 */

#ifndef RECUO_H
#define RECUO_H

/* Generated by cbindgen from ffi/src: do not edit. Run `make header` after changing ffi/. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The version of this header; recuo_version() gives the library's. */
#define RECUO_VERSION "0.1.0"
#define RECUO_VERSION_MAJOR 0
#define RECUO_VERSION_MINOR 1
#define RECUO_VERSION_PATCH 0


/**
 * The most bytes of JSON `recuo_policy_from_json` reads: 64 KiB.
 */
#define RECUO_POLICY_JSON_MAX 65536

/**
 * The size of the buffer an idempotency key needs: 36 characters and the NUL.
 */
#define RECUO_IDEMPOTENCY_KEY_SIZE 37

/**
 * The size of a buffer that holds any give-up message (`recuo_give_up_message`,
 * `recuo_attempts_give_up_message`) with its NUL.
 */
#define RECUO_GIVE_UP_MESSAGE_SIZE 256

/**
 * How many starts, at the configured rate, a regulator queues ahead of now beyond its
 * burst: a start that would wait longer is answered `RECUO_QUEUE_FULL` (nothing reserved).
 */
#define RECUO_MAX_QUEUED_STARTS 4096

/**
 * How often, at most, `recuo_attempts_poll_gate` asks a program to look at a full
 * concurrency limit again, in milliseconds.
 */
#define RECUO_GATE_POLL_MS 5

/**
 * The longest record `recuo_telemetry_json` reads, in bytes.
 */
#define RECUO_TELEMETRY_RECORD_MAX (64 * 1024)

/**
 * The answer of every recuo function that can fail.
 *
 * The numbers are stable: a code is never renumbered nor reused, and a retired code stays
 * listed as reserved. They are grouped in ranges, which the `recuo_status_is_*` predicates
 * test so that C code never hard-codes them:
 *
 * * `0`: success.
 * * `1`–`99`: an argument was unusable (a NULL pointer, a buffer too small, a length too
 *   large, a value that is none of its enum's constants, text that is not UTF-8, a handle in
 *   the wrong state, an index past the end).
 * * `100`–`199`: a configuration was refused. `100`–`149`: the code is `100 +` the core's
 *   stable configuration-error code, as in Python's and PHP's exceptions; `150`–`199`: the
 *   settings of the shared limits (rates, the plan, bursts, limits, budgets, shared files).
 * * `200`–`299`: no fault of the call, but a "no" for an answer, which the other outputs
 *   explain: the operation did not succeed (`200`–`209`), or a limit said "not now"
 *   (`210`–`219`: `RECUO_WOULD_WAIT`, `RECUO_TIMED_OUT`, `RECUO_CANCELLED`, `RECUO_QUEUE_FULL`,
 *   `RECUO_HOST_PENDING`,
 *   `RECUO_BUDGET_EXHAUSTED` — their names carry no `ERR`).
 * * `300`–`399`: the system refused (a shared file could not be opened, sized, locked or
 *   mapped, or a Redis server could not be used).
 * * `900`–`999`: a bug in recuo (a panic was caught at the boundary).
 *
 * `recuo_status_message` describes a code in words, `recuo_status_name` names it.
 */
enum recuo_status
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * Success.
     */
    RECUO_OK = 0,
    /**
     * A pointer that must not be NULL was NULL.
     */
    RECUO_ERR_NULL_ARGUMENT = 1,
    /**
     * The caller's buffer was too small: what fits was written (still NUL-terminated).
     */
    RECUO_ERR_BUFFER_TOO_SMALL = 2,
    /**
     * A length was larger than `PTRDIFF_MAX`, or than the function's own bound
     * (`RECUO_POLICY_JSON_MAX` for `recuo_policy_from_json`).
     */
    RECUO_ERR_LENGTH_TOO_LARGE = 3,
    /**
     * A value of an enumeration (an argument, or a field of a struct passed in) was none of
     * its constants.
     */
    RECUO_ERR_INVALID_ENUM = 4,
    /**
     * Text that must be UTF-8 (an HTTP method, a header name to set) was not.
     */
    RECUO_ERR_NOT_UTF8 = 5,
    /**
     * An HTTP method recuo does not know: only GET, HEAD, OPTIONS, TRACE, PUT, DELETE, POST,
     * PATCH and CONNECT (in any ASCII case) can be configured.
     */
    RECUO_ERR_UNKNOWN_METHOD = 6,
    /**
     * Retired: no function answers it. A rule's status outside 400–599 is
     * `RECUO_ERR_STATUS_OUT_OF_RANGE`, the name every language gives it. Never reused.
     */
    RECUO_ERR_INVALID_STATUS = 7,
    /**
     * The state machine has already started: the setting must come before
     * `recuo_attempts_start`.
     */
    RECUO_ERR_ALREADY_STARTED = 8,
    /**
     * The operation given to `recuo_retry` (or to `recuo_batch_run`) returned without
     * writing a valid verdict (its `verdict` field left 0, or a field holding none of its
     * constants).
     */
    RECUO_ERR_NO_VERDICT = 9,
    /**
     * An index was past the end (`recuo_plan_warning` for a warning the plan does not have,
     * `recuo_who_answered_evidence` for an evidence line the answer does not have).
     */
    RECUO_ERR_INDEX_OUT_OF_RANGE = 10,
    /**
     * The operation given to `recuo_retry_http` returned without describing the response
     * (its `response_out->outcome` left 0, holding none of its constants, or headers NULL
     * with a count above 0).
     */
    RECUO_ERR_NO_RESPONSE = 11,
    /**
     * A `recuo_stats` passed in was inconsistent: its first start after its last, or counts
     * whose sum would not fit in a `uint64_t`.
     */
    RECUO_ERR_INVALID_STATS = 12,
    /**
     * A configuration error that this version of the header has no name for.
     */
    RECUO_ERR_INVALID_CONFIG = 100,
    /**
     * The number of attempts was 0 (it must be at least 1).
     */
    RECUO_ERR_ZERO_ATTEMPTS = 101,
    /**
     * A duration was negative.
     */
    RECUO_ERR_NEGATIVE_DURATION = 102,
    /**
     * A duration was NaN.
     */
    RECUO_ERR_NOT_A_NUMBER = 103,
    /**
     * A duration was infinite or too large to count in milliseconds.
     */
    RECUO_ERR_DURATION_TOO_LARGE = 104,
    /**
     * The maximum (cap) was below the base.
     */
    RECUO_ERR_CAP_BELOW_BASE = 105,
    /**
     * A header name was empty or not an HTTP token (RFC 9110 section 5.6.2).
     */
    RECUO_ERR_INVALID_HEADER_NAME = 106,
    /**
     * A retry rule was set for an HTTP status outside 400–599 (a setter, or the
     * `status_retry` of a policy's JSON).
     */
    RECUO_ERR_STATUS_OUT_OF_RANGE = 107,
    /**
     * A policy's JSON named something recuo does not know: a jitter, a retry rule, a
     * transport failure, a method, or a status that is not a number.
     */
    RECUO_ERR_UNKNOWN_NAME = 108,
    /**
     * A policy's JSON was not an object of the known fields with the right types (not JSON,
     * an unknown field, a string for a number, a negative or fractional number, `null` for a
     * count).
     */
    RECUO_ERR_INVALID_VALUE = 109,
    /**
     * A rate was refused: it must be a finite number of events per second above zero, or
     * text such as `90/min`, `1.5/s`, `5000/h` or `86400/day` (a bare number is per second).
     */
    RECUO_ERR_INVALID_RATE = 150,
    /**
     * `recuo_plan`: the target rate is above the allowance, so the server would throttle the
     * batch.
     */
    RECUO_ERR_TARGET_ABOVE_ALLOWANCE = 151,
    /**
     * `recuo_plan`: the retry fraction must be at least 0 and below 1.
     */
    RECUO_ERR_INVALID_RETRY_FRACTION = 152,
    /**
     * `recuo_plan`: the latency must be a finite number of seconds, 0 or more.
     */
    RECUO_ERR_INVALID_LATENCY = 153,
    /**
     * A regulator's burst was 0 (it must be at least 1).
     */
    RECUO_ERR_ZERO_BURST = 154,
    /**
     * A start's cost was above the regulator's burst: it could never be allowed.
     */
    RECUO_ERR_COST_ABOVE_BURST = 155,
    /**
     * A concurrency limit of 0: nothing could ever run.
     */
    RECUO_ERR_ZERO_LIMIT = 156,
    /**
     * A retry budget's settings were refused: the ratio must be 0 to 1000, the floor 0 or
     * more retries per second, the window 1 to 60 seconds.
     */
    RECUO_ERR_INVALID_BUDGET = 157,
    /**
     * A shared file or Redis key was set up with other settings (another rate or burst,
     * another budget), or a file holds something else (another kind of recuo state, a file
     * of the wrong size): processes sharing it would disagree about the allowance.
     */
    RECUO_ERR_SHARED_MISMATCH = 158,
    /**
     * A concurrency limit on Redis was asked for a lease outside 1 ms – 1 day
     * (`recuo_concurrency_limit_new_redis`).
     */
    RECUO_ERR_INVALID_LEASE = 159,
    /**
     * A regulator was asked for a start of cost 0, which would take nothing.
     */
    RECUO_ERR_ZERO_COST = 160,
    /**
     * The task failed on its last attempt, or the predicate declined to retry its failure;
     * the task's own failure code is in the `last_error_out` parameter.
     */
    RECUO_ERR_TASK_FAILED = 200,
    /**
     * `recuo_retry` gave up: the operation did not succeed, and the report says why
     * (`reason`) and what it cost (attempts, elapsed time, delays).
     */
    RECUO_ERR_GAVE_UP = 201,
    /**
     * Not an error: a start may not go now. `RECUO_WOULD_WAIT` from a regulator's
     * `_try_acquire` comes with the wait needed; from a concurrency limit's `_try_acquire`
     * it means every place is taken.
     */
    RECUO_WOULD_WAIT = 210,
    /**
     * Not an error: what was waited for did not come within the timeout (nothing was taken).
     */
    RECUO_TIMED_OUT = 211,
    /**
     * Not an error: the cancellation token was cancelled before or during the wait.
     */
    RECUO_CANCELLED = 212,
    /**
     * Not an error: the retry budget has no retry left.
     */
    RECUO_BUDGET_EXHAUSTED = 213,
    /**
     * Not an error: the start would wait beyond the 4096 starts a regulator queues ahead
     * (`RECUO_MAX_QUEUED_STARTS`); nothing was reserved, ask again later. A regulator never
     * starts more than its burst plus its rate over any span of time, however many wait.
     */
    RECUO_QUEUE_FULL = 214,
    /**
     * Not an error: a limit kept on a server the host reaches waits on a call the host must
     * run first (`recuo_host_channel_pending`); answer it, then make the same call again.
     */
    RECUO_HOST_PENDING = 215,
    /**
     * The system refused: a shared file could not be opened, sized, locked or mapped, or a
     * Redis server could not be reached or used (the detail buffer of the `_new_shared` and
     * `_new_redis` functions says why).
     */
    RECUO_ERR_IO = 300,
    /**
     * recuo panicked (a bug: please report it); the panic was caught and nothing was
     * written to the outputs.
     */
    RECUO_ERR_PANIC = 900,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_status recuo_status;
#else
typedef uint32_t recuo_status;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * What a `Retry-After` value asks for. The numbers are stable; `0` is never a kind, so a
 * zero-initialised `recuo_retry_after` that recuo did not fill in is recognisable.
 */
enum recuo_retry_after_kind
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * Delay-seconds (`"12"`): wait `wait_ms` = the seconds × 1000.
     */
    RECUO_RETRY_AFTER_SECONDS = 1,
    /**
     * An HTTP-date: wait `wait_ms` until then (0 when it has passed).
     */
    RECUO_RETRY_AFTER_DATE = 2,
    /**
     * A wait over 2^53 − 1 ms: too long to count, never to be treated as short.
     */
    RECUO_RETRY_AFTER_UNBOUNDED = 3,
    /**
     * Not a Retry-After value (empty, `-5`, `1.5`, words, non-ASCII, NUL bytes…): no server
     * wait, the backoff applies.
     */
    RECUO_RETRY_AFTER_INVALID = 4,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_retry_after_kind recuo_retry_after_kind;
#else
typedef uint32_t recuo_retry_after_kind;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * What to do about one outcome.
 */
enum recuo_verdict_kind
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * Done: nothing to retry.
     */
    RECUO_VERDICT_SUCCESS = 1,
    /**
     * Worth another attempt, after at least the server's wait if it gave one.
     */
    RECUO_VERDICT_RETRY = 2,
    /**
     * Not worth another attempt.
     */
    RECUO_VERDICT_GIVE_UP = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_verdict_kind recuo_verdict_kind;
#else
typedef uint32_t recuo_verdict_kind;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Why a verdict was reached.
 */
enum recuo_cause
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * 1xx–3xx, or a task's success.
     */
    RECUO_CAUSE_SUCCESS = 1,
    /**
     * 429, or a 403 whose rate-limit headers say the quota is spent.
     */
    RECUO_CAUSE_RATE_LIMITED = 2,
    /**
     * 503: the server refused the request.
     */
    RECUO_CAUSE_UNAVAILABLE = 3,
    /**
     * Another status in the retry sets (500, 502, 504, …).
     */
    RECUO_CAUSE_SERVER_ERROR = 4,
    /**
     * The connection could not be made: nothing was sent.
     */
    RECUO_CAUSE_CONNECT = 5,
    /**
     * A timeout after the request was sent.
     */
    RECUO_CAUSE_TIMEOUT = 6,
    /**
     * The connection dropped after the request was sent.
     */
    RECUO_CAUSE_RESET = 7,
    /**
     * Another transport failure.
     */
    RECUO_CAUSE_OTHER = 8,
    /**
     * Retryable, but the request may have taken effect and is not safe to repeat (no
     * idempotent method, no idempotency key).
     */
    RECUO_CAUSE_NOT_IDEMPOTENT = 9,
    /**
     * A status repeating will not change (4xx, 501, 505, …).
     */
    RECUO_CAUSE_PERMANENT = 10,
    /**
     * The certificate failed verification (a retry of it, when configured, has this cause
     * too).
     */
    RECUO_CAUSE_TLS = 11,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_cause recuo_cause;
#else
typedef uint32_t recuo_cause;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * The server's wait attached to a verdict. `0` is "none", so a verdict written by hand may
 * leave it out.
 */
enum recuo_wait_kind
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * The server asked for no wait: the backoff of the policy applies.
     */
    RECUO_WAIT_NONE = 0,
    /**
     * Wait at least `wait_ms` milliseconds (0 is possible: a date in the past).
     */
    RECUO_WAIT_MS = 1,
    /**
     * The server's wait is too long to count: no retry can honour it.
     */
    RECUO_WAIT_UNBOUNDED = 2,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_wait_kind recuo_wait_kind;
#else
typedef uint32_t recuo_wait_kind;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How a request failed before an HTTP status came back.
 */
enum recuo_transport
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * The request was never sent: DNS failure, connection refused, connect timeout.
     */
    RECUO_TRANSPORT_CONNECT = 1,
    /**
     * The server's certificate failed verification.
     */
    RECUO_TRANSPORT_TLS = 2,
    /**
     * No answer in time, after the request was sent.
     */
    RECUO_TRANSPORT_TIMEOUT = 3,
    /**
     * The connection dropped after the request was sent.
     */
    RECUO_TRANSPORT_RESET = 4,
    /**
     * Any other failure.
     */
    RECUO_TRANSPORT_OTHER = 5,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_transport recuo_transport;
#else
typedef uint32_t recuo_transport;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * What kind of outcome a `recuo_outcome` describes.
 */
enum recuo_outcome_kind
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * The operation succeeded (for tasks with no HTTP meaning).
     */
    RECUO_OUTCOME_SUCCESS = 1,
    /**
     * An HTTP response came back with the status in `status`.
     */
    RECUO_OUTCOME_STATUS = 2,
    /**
     * The request failed in transport, as `transport` says.
     */
    RECUO_OUTCOME_TRANSPORT = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_outcome_kind recuo_outcome_kind;
#else
typedef uint32_t recuo_outcome_kind;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * What the machine asks for next (`recuo::Step`).
 */
enum recuo_step_kind
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * Pass the gate for attempt `attempt` (a place in flight, then a start slot), giving up
     * the wait at `until_ms` when `has_until`; then `recuo_attempts_entered`.
     */
    RECUO_STEP_ENTER = 1,
    /**
     * Make attempt `attempt` now, bounded by `timeout_ms` when `has_timeout` (what is left
     * of the deadline); then `recuo_attempts_responded` (HTTP), `_succeeded` or `_failed`.
     */
    RECUO_STEP_CALL = 2,
    /**
     * Judge the failure of attempt `attempt`: `recuo_attempts_judged` with a verdict.
     */
    RECUO_STEP_CLASSIFY = 3,
    /**
     * Attempt `attempt` failed and is retried: wait `delay_ms` (nothing when 0), waking
     * early on a cancellation, then `recuo_attempts_slept`.
     */
    RECUO_STEP_SLEEP = 4,
    /**
     * The operation succeeded: `recuo_attempts_report` tells how.
     */
    RECUO_STEP_DONE = 5,
    /**
     * The operation stopped without success, for `reason` (with `retry_at_ms` when
     * `has_retry_at`).
     */
    RECUO_STEP_GAVE_UP = 6,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_step_kind recuo_step_kind;
#else
typedef uint32_t recuo_step_kind;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Why an operation stopped without succeeding. `0` is "none": not given up.
 */
enum recuo_give_up_reason
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * Not given up: the operation succeeded, or has not stopped.
     */
    RECUO_GIVE_UP_NONE = 0,
    /**
     * The outcome is not worth repeating (4xx, 501, TLS, an unsafe repeat, a verdict that
     * gave up).
     */
    RECUO_GIVE_UP_PERMANENT = 1,
    /**
     * The attempts are spent (this operation's, or those of the shared attempt pool).
     */
    RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED = 2,
    /**
     * The wait needed would pass the deadline, or the server's wait is unbounded.
     */
    RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE = 3,
    /**
     * A retry budget had no token left.
     */
    RECUO_GIVE_UP_BUDGET_EXHAUSTED = 4,
    /**
     * The operation was cancelled by its caller.
     */
    RECUO_GIVE_UP_CANCELLED = 5,
    /**
     * The batch queue the operation belongs to stopped, on another operation's reason
     * (`stopped_by`).
     */
    RECUO_GIVE_UP_QUEUE_STOPPED = 6,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_give_up_reason recuo_give_up_reason;
#else
typedef uint32_t recuo_give_up_reason;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How much a record matters, as a logger ranks it. `0` is "none".
 */
enum recuo_level
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * No record (`recuo_attempts_poll_record` had none left; `recuo_attempts_set_records`:
     * keep none).
     */
    RECUO_LEVEL_NONE = 0,
    /**
     * An attempt that succeeded; the result of an operation done at its first attempt.
     */
    RECUO_LEVEL_DEBUG = 1,
    /**
     * An attempt retried or given up on; the result of an operation that needed retries.
     */
    RECUO_LEVEL_INFO = 2,
    /**
     * The result of an operation that gave up.
     */
    RECUO_LEVEL_WARNING = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_level recuo_level;
#else
typedef uint32_t recuo_level;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Which idempotency key the attempts of a request carry.
 */
enum recuo_key_to_send
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * None.
     */
    RECUO_KEY_NONE = 1,
    /**
     * The caller's own, already among the request's headers: sent as it is.
     */
    RECUO_KEY_CALLER = 2,
    /**
     * recuo's key for the operation (`recuo_attempts_idempotency_key`), the same on every
     * attempt: add it in the policy's header (`recuo_policy_idempotency_header`).
     */
    RECUO_KEY_RECUO = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_key_to_send recuo_key_to_send;
#else
typedef uint32_t recuo_key_to_send;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * What kind of last attempt a `recuo_last` describes.
 */
enum recuo_last_kind
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * No attempt was made (the gate, the deadline or a cancellation stopped it first).
     */
    RECUO_LAST_NOTHING = 1,
    /**
     * A response with the status in `status` (its headers read; a body that failed after
     * them is a transport failure, not a response).
     */
    RECUO_LAST_STATUS = 2,
    /**
     * A transport failure of the kind in `transport`.
     */
    RECUO_LAST_TRANSPORT = 3,
    /**
     * The deadline cut the attempt while the server was still answering: the client's error
     * is an artefact of that cut.
     */
    RECUO_LAST_LATE = 4,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_last_kind recuo_last_kind;
#else
typedef uint32_t recuo_last_kind;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How an operation's end reaches its caller.
 */
enum recuo_ending
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * The last response is returned.
     */
    RECUO_ENDING_RESPONSE = 1,
    /**
     * The client's own transport error is returned, unchanged.
     */
    RECUO_ENDING_ERROR = 2,
    /**
     * recuo's give-up is returned, with its reason, the wait left (`retry_at`), the last
     * response if there is one, and the give-up message.
     */
    RECUO_ENDING_GIVE_UP = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_ending recuo_ending;
#else
typedef uint32_t recuo_ending;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How a metric adds its points up.
 */
enum recuo_instrument_kind
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * A monotonic sum: add each point's value (Prometheus `_total`).
     */
    RECUO_INSTRUMENT_COUNTER = 1,
    /**
     * A distribution: each point is one observation, in seconds.
     */
    RECUO_INSTRUMENT_HISTOGRAM = 2,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_instrument_kind recuo_instrument_kind;
#else
typedef uint32_t recuo_instrument_kind;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How one operation of a batch ended.
 */
enum recuo_batch_result_kind
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * An attempt succeeded.
     */
    RECUO_BATCH_SUCCEEDED = 1,
    /**
     * The operation gave up: `reason` says why.
     */
    RECUO_BATCH_GAVE_UP = 2,
    /**
     * The operation was never started (no attempt was made — never one started late):
     * `reason` says why.
     */
    RECUO_BATCH_NOT_STARTED = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_batch_result_kind recuo_batch_result_kind;
#else
typedef uint32_t recuo_batch_result_kind;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * What the queue answers `recuo_batch_queue_next`.
 */
enum recuo_batch_next_kind
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * Start operation `index` under `policy` (the batch's, its deadline clipped to what is
     * left of the batch's).
     */
    RECUO_BATCH_NEXT_START = 1,
    /**
     * Operation `index` is not started, for `reason` (with `stopped_by`).
     */
    RECUO_BATCH_NEXT_NOT_STARTED = 2,
    /**
     * Every operation has been handed out.
     */
    RECUO_BATCH_NEXT_FINISHED = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_batch_next_kind recuo_batch_next_kind;
#else
typedef uint32_t recuo_batch_next_kind;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Where an answer most likely came from.
 */
enum recuo_origin
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * The API the request was for.
     */
    RECUO_ORIGIN_API = 1,
    /**
     * A proxy or gateway in between.
     */
    RECUO_ORIGIN_PROXY = 2,
    /**
     * A content delivery network in front of the API.
     */
    RECUO_ORIGIN_CDN = 3,
    /**
     * Nothing points anywhere.
     */
    RECUO_ORIGIN_UNKNOWN = 4,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_origin recuo_origin;
#else
typedef uint32_t recuo_origin;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How sure a `recuo_who_answered` answer is. A brand alone (`Server: cloudflare`, a branded
 * error page) is never enough for `RECUO_CONFIDENCE_HIGH`.
 */
enum recuo_confidence
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * One weak hint.
     */
    RECUO_CONFIDENCE_LOW = 1,
    /**
     * A clear signal, or several hints that agree.
     */
    RECUO_CONFIDENCE_MEDIUM = 2,
    /**
     * Independent signals that agree, one of them more than a brand.
     */
    RECUO_CONFIDENCE_HIGH = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_confidence recuo_confidence;
#else
typedef uint32_t recuo_confidence;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * What was decided after an attempt, as `recuo_record_attempt_json` records it. (`4` and
 * `5`, the start of an attempt and the pass through a gate, are retired.)
 */
enum recuo_decision_kind
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * The operation succeeded: stop.
     */
    RECUO_DECISION_DONE = 1,
    /**
     * Sleep `delay_ms`, then make attempt `next_attempt`.
     */
    RECUO_DECISION_RETRY = 2,
    /**
     * Stop without success, for `reason`.
     */
    RECUO_DECISION_GIVE_UP = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_decision_kind recuo_decision_kind;
#else
typedef uint32_t recuo_decision_kind;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * How backoff delays are drawn from the window `w = min(cap, base · 2^n)`.
 */
enum recuo_jitter
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * Uniform in `[0, w]` (the default; guides A and B).
     */
    RECUO_JITTER_FULL = 1,
    /**
     * `w/2` plus uniform in `[0, w − w/2]`.
     */
    RECUO_JITTER_EQUAL = 2,
    /**
     * `min(cap, uniform[base, 3 · previous])`, `previous` starting at `base` (AWS).
     */
    RECUO_JITTER_DECORRELATED = 3,
    /**
     * Exactly `w`: for tests, and for callers who add their own spread.
     */
    RECUO_JITTER_NONE = 4,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_jitter recuo_jitter;
#else
typedef uint32_t recuo_jitter;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * When an HTTP status or a transport failure is retried (the classification's sets).
 */
enum recuo_status_rule
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * Never retried: the verdict gives up (`permanent`, or `tls` for a TLS failure).
     */
    RECUO_RULE_NEVER = 1,
    /**
     * Retried when the request is idempotent (an idempotent method, or an idempotency key);
     * otherwise the verdict gives up with `not_idempotent`. Default for 500, 502, 504, other
     * 5xx and for the `timeout`, `reset` and `other` transport failures.
     */
    RECUO_RULE_IF_IDEMPOTENT = 2,
    /**
     * Retried for any method: the request was refused or never sent. Default for 429, 503
     * and `connect`.
     */
    RECUO_RULE_ALWAYS = 3,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_status_rule recuo_status_rule;
#else
typedef uint32_t recuo_status_rule;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * Which contract a request's caller expects when the operation ends.
 */
enum recuo_style
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
    /**
     * A client adapter: the last response is returned, as the client would have returned it
     * without recuo.
     */
    RECUO_STYLE_CLIENT = 1,
    /**
     * Guide A's `buscarComRetry` (`recuo_curl_perform`): after the last attempt a 429 or a
     * 5xx is a give-up; other statuses are returned.
     */
    RECUO_STYLE_GUIDE = 2,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum recuo_style recuo_style;
#else
typedef uint32_t recuo_style;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

/**
 * What an attempt of `recuo_retry_http` tells recuo besides its verdict: an opaque handle,
 * valid during the operation's call only, on which the operation calls
 * `recuo_attempt_context_set_response`. Backed by a Rust struct holding what the attempt's
 * record keeps of the response (its outcome, request id and wait headers, redacted).
 */
typedef struct recuo_attempt_context recuo_attempt_context;

/**
 * A shared count of attempts, so that nested retry loops share one limit: in C
 * this is explicit — create one pool for the outermost operation, sized by its policy's
 * attempts, and hand the same pool to the inner ones (`recuo_attempts_set_pool`,
 * `recuo_retry_options_set_pool`). Backed by a `recuo::AttemptPool` (an atomic count).
 *
 * Safe to use from several threads at once. Free it with `recuo_attempt_pool_free`; the
 * state machines and options it was given to keep their own reference, so it may be freed
 * before them.
 */
typedef struct recuo_attempt_pool recuo_attempt_pool;

/**
 * The operation machine: the one that Rust, Python, PHP and JavaScript call `Operation`,
 * named `recuo_attempts` in C because `recuo_operation_fn` is already the type of the
 * operation `recuo_retry` calls. One handle per operation (its own copy of the policy, the
 * attempts, the delays, the gate, stats and records it was given, the wait left after a
 * `wait_exceeds_deadline` give-up, and a record polled into a buffer too small for it); use
 * it from one thread at a time.
 *
 * The loop (`recuo_step`): `recuo_attempts_start` → ENTER: pass the gate,
 * `recuo_attempts_entered` → CALL: make the attempt, `recuo_attempts_responded` (or
 * `_succeeded` / `_failed` → CLASSIFY: `recuo_attempts_judged`) → SLEEP: wait,
 * `recuo_attempts_slept` → … → DONE or GAVE_UP. Times are milliseconds on a monotonic clock
 * of your choice (`recuo_monotonic_ms`, `CLOCK_MONOTONIC`, a fake clock in tests).
 */
typedef struct recuo_attempts recuo_attempts;

/**
 * A queue of operations under one policy and one deadline: a `recuo::BatchQueue`, plus a
 * record polled into a buffer too small for it. Use it from one thread at a time (guard it
 * with a mutex when workers share it).
 */
typedef struct recuo_batch_queue recuo_batch_queue;

/**
 * A flag that cancels operations, from any thread: a `recuo::CancelToken` (a mutex-guarded
 * flag and a condition variable). Cancelling wakes a `recuo_retry` sleeping between attempts
 * at once; a `recuo_retry` whose operation is running stops before the next attempt. It stays
 * cancelled.
 *
 * Create it with `recuo_cancel_token_new`, hand it to `recuo_retry_options_set_cancel_token`
 * (or to a wait of the shared limits: `recuo_regulator_acquire`, `_acquire_until`,
 * `recuo_concurrency_limit_acquire`, `recuo_gate_wait`, which it wakes at once or within a
 * few milliseconds), call `recuo_cancel_token_cancel` from any thread, free it with
 * `recuo_cancel_token_free` once no thread calls it any more (options keep their own
 * reference to the flag).
 */
typedef struct recuo_cancel_token recuo_cancel_token;

/**
 * Options for `recuo_com_retry_with_options`: an opaque handle, so that options can be added
 * without changing any signature. Backed by a Rust struct holding an optional jitter seed and
 * an optional sleep callback.
 *
 * Create it with `recuo_com_retry_options_new`, set what you need, pass it to any number of
 * calls (also from several threads at once, as long as no setter runs meanwhile: the calls
 * only read it), and release it with `recuo_com_retry_options_free`.
 */
typedef struct recuo_com_retry_options recuo_com_retry_options;

/**
 * At most `limit` requests in flight at once: a semaphore, backed by a
 * `recuo::ConcurrencyLimit` (a mutex-guarded count and a condition variable), or — from
 * `recuo_concurrency_limit_new_redis` — a limit kept on a Redis server, shared by every
 * handle on the same server and key, on any machine, each place a lease.
 *
 * Every function takes a `const` pointer: one handle may be used by any number of threads
 * at once. Permits and gates keep their own reference, so the handle may be freed before
 * them.
 */
typedef struct recuo_concurrency_limit recuo_concurrency_limit;

/**
 * What every attempt passes: a place among the requests in flight (a concurrency limit),
 * **then** a start slot (a regulator) — in that order, so starts stay spaced as the
 * regulator says — and a retry budget that every retry draws on (a first attempt is
 * counted by it). Each part is optional. Backed by a `recuo::Gate`.
 *
 * The gate keeps its own references to the parts it is given (`recuo_gate_set_*`): the
 * caller may free its regulator, limit and budget handles right after. Options and batch
 * runs given the gate keep their own reference to the gate as it is then (a later setter
 * does not change them). Functions taking a `const` pointer may run on any number of
 * threads at once; the setters must not run concurrently with another use of the gate.
 */
typedef struct recuo_gate recuo_gate;

/**
 * A channel between one limit kept on a Redis server and the host that reaches the server.
 */
typedef struct recuo_host_channel recuo_host_channel;

/**
 * A passage through a gate, from `recuo_gate_wait`: holds the place in flight until
 * `recuo_pass_release` (its `_free`). Backed by a `recuo::Pass`. Release it as soon as the
 * attempt is over — before any backoff sleep — from any thread.
 */
typedef struct recuo_pass recuo_pass;

/**
 * One place in flight, taken from a `recuo_concurrency_limit`, given back by
 * `recuo_permit_release` (its `_free`). Backed by a `recuo::Permit`. Release it as soon as
 * the request is over — before any backoff sleep — from any thread. A place on Redis is a
 * lease: `recuo_permit_renew` extends it.
 */
typedef struct recuo_permit recuo_permit;

/**
 * A retry policy: attempts, backoff, deadline, server-wait spread, the classification and
 * the idempotency header. An opaque handle backed by the values as set plus the
 * `recuo::Policy` the core builds from them.
 *
 * Create it with `recuo_policy_new` (guide A's defaults), `recuo_policy_new_guide_b` or
 * `recuo_policy_new_adapters` (the HTTP adapters' default),
 * change it with the `recuo_policy_set_*` functions, release it with `recuo_policy_free`.
 * Every function that uses a policy reads it during the call only (the state machine and
 * `recuo_retry` keep their own copy), so a policy may be changed or freed afterwards. Several
 * threads may use one policy at once, as long as no setter runs meanwhile.
 */
typedef struct recuo_policy recuo_policy;

/**
 * Limits request *starts* to a rate with a burst: after a quiet spell up to
 * `burst` starts may go at once, then one per interval (1 / rate); in any window of time
 * `W`, at most `burst + rate · W` starts. Backed by a `recuo::Regulator` (GCRA: one
 * "theoretical arrival time" moved with a compare-and-swap — no lock, no timer thread).
 *
 * Every function takes a `const` pointer: one handle may be used by any number of threads
 * at once. A regulator from `recuo_regulator_new_shared` lives in a file, and every handle
 * on that file — in this process or another — shares one allowance; one from
 * `recuo_regulator_new_redis` lives on a Redis server, shared by every handle on the same
 * server and key, on any machine. A gate given this regulator keeps its own reference, so
 * the handle may be freed before the gate.
 *
 * Instants are nanoseconds on the regulator's own clock: `recuo_monotonic_ns()`
 * (`CLOCK_MONOTONIC`, the same clock in every process on the machine), or the Redis
 * server's clock; the `_at` function takes them from you instead (a fake clock in tests).
 */
typedef struct recuo_regulator recuo_regulator;

/**
 * Allows a retry only while the retries of the last `window_s` seconds stay within
 * `ratio × requests + floor_per_s × window_s` (as Finagle's RetryBudget, gRPC
 * retry throttling and the AWS retry quota). Backed by a `recuo::RetryBudget`: lock-free
 * per-second counters, in this process or in a file (`recuo_retry_budget_new_shared`).
 *
 * Every function takes a `const` pointer: one handle may be used by any number of threads
 * at once (threads that withdraw at the very same instant may overshoot the budget by at
 * most one retry each). Gates keep their own reference, so the handle may be freed before
 * them. Instants are nanoseconds on `recuo_monotonic_ns()`; the `_at` functions take them
 * from you (a fake clock in tests).
 */
typedef struct recuo_retry_budget recuo_retry_budget;

/**
 * Options for `recuo_retry` and `recuo_retry_http`: an opaque handle, so that options can be
 * added without changing any signature. Backed by a Rust struct holding an optional jitter
 * seed, an optional sleep callback, an optional cancellation flag, attempt pool, gate and
 * stats recorder (shared references), the optional hooks, an optional record sink with the
 * request's method and URL (copies), and optional clock callbacks.
 *
 * Create it with `recuo_retry_options_new`, set what you need, pass it to any number of
 * `recuo_retry` calls (also from several threads at once, as long as no setter runs
 * meanwhile: the calls only read it), release it with `recuo_retry_options_free`.
 */
typedef struct recuo_retry_options recuo_retry_options;

/**
 * A stats recorder for a C program with its own loop (the state machine, its own threads):
 * a `recuo::StatsRecorder`, one timeline behind a mutex, which any number of threads may
 * use at once. `recuo_retry_options_set_stats_recorder` makes `recuo_retry` and
 * `recuo_retry_http` record into it too. Free it with `recuo_stats_recorder_free`; options
 * given it keep their own reference.
 */
typedef struct recuo_stats_recorder recuo_stats_recorder;

/**
 * A parsed `Retry-After` value: a plain struct, filled in by `recuo_parse_retry_after`.
 */
typedef struct recuo_retry_after {
    /**
     * Which form the value had.
     */
    recuo_retry_after_kind kind;
    /**
     * The server's wait in milliseconds for `SECONDS` and `DATE` (at most 2^53 − 1); 0 for
     * `UNBOUNDED` and `INVALID`.
     */
    uint64_t wait_ms;
} recuo_retry_after;

/**
 * A sleep replacing the real one: asked to wait `ms` milliseconds (never 0). Receives the
 * call's `user_data`. For tests (record the delays) and for callers with their own timers.
 */
typedef void (*recuo_sleep_fn)(uint64_t ms, void *user_data);

/**
 * The task `recuo_com_retry` runs: returns 0 on success, any other value (the caller's own
 * failure code, handed back unchanged) on failure. Receives the call's `user_data`.
 */
typedef int (*recuo_task_fn)(void *user_data);

/**
 * A verdict: what `recuo_classify` answers, and what `recuo_attempts_judged` and the
 * operation of `recuo_retry` take. A plain struct, yours to allocate; you may also fill one
 * by hand for an operation with no HTTP meaning, e.g.
 * `(recuo_verdict){.verdict = RECUO_VERDICT_RETRY, .cause = RECUO_CAUSE_SERVER_ERROR}` (no
 * server wait).
 *
 * `wait` and `wait_ms` are read for `RECUO_VERDICT_RETRY` only; `cause` is informational
 * (it never changes a decision) but must be one of its constants, and not
 * `RECUO_CAUSE_SUCCESS` for a retry or a give-up (as in every recuo language).
 */
typedef struct recuo_verdict {
    /**
     * A `recuo_verdict_kind` constant (never 0 once recuo filled it).
     */
    recuo_verdict_kind verdict;
    /**
     * A `recuo_cause` constant: why.
     */
    recuo_cause cause;
    /**
     * A `recuo_wait_kind` constant: the server's wait, for a retry.
     */
    recuo_wait_kind wait;
    /**
     * The server's wait in milliseconds when `wait` is `RECUO_WAIT_MS`, else 0.
     */
    uint64_t wait_ms;
} recuo_verdict;

/**
 * The predicate `repetir_se`: answers whether the failure code `error` is worth another
 * attempt — or, instead, writes a verdict into `*verdict_out` (all zeros on entry), e.g.
 * `recuo_classify`'s for the HTTP outcome behind `error`: then the verdict decides and the
 * answer is ignored (a give-up stops, a retry's server wait is honoured). Receives
 * the call's `user_data`.
 */
typedef bool (*recuo_retry_predicate_fn)(int error,
                                         struct recuo_verdict *verdict_out,
                                         void *user_data);

/**
 * What one attempt came to: a plain struct, yours to fill (on the stack too).
 *
 * `kind` says which of the other fields is read: `status` for `RECUO_OUTCOME_STATUS` (any
 * number; codes outside 100–599 are treated as 500, RFC 9110 section 15), `transport` for
 * `RECUO_OUTCOME_TRANSPORT`; the unused field is ignored. Values that are none of their
 * enum's constants are refused with `RECUO_ERR_INVALID_ENUM`.
 */
typedef struct recuo_outcome {
    /**
     * A `recuo_outcome_kind` constant.
     */
    recuo_outcome_kind kind;
    /**
     * The HTTP status, for `RECUO_OUTCOME_STATUS`.
     */
    uint16_t status;
    /**
     * A `recuo_transport` constant, for `RECUO_OUTCOME_TRANSPORT`.
     */
    recuo_transport transport;
} recuo_outcome;

/**
 * One response header: a name and a value, each given as bytes with their length (they may
 * contain NUL bytes; they need no terminator). A plain struct, yours to fill.
 *
 * Header bytes come from a server, so they are never refused: bytes that are not UTF-8 are
 * read as U+FFFD, which no header recuo understands accepts — such a header counts as
 * present but invalid (a `Retry-After: 12\xff` gives no wait; a name with such bytes matches
 * nothing), exactly as a non-ASCII value does in every language recuo speaks.
 */
typedef struct recuo_header {
    /**
     * The header's name (matched without regard to ASCII case); NULL only with `name_len` 0.
     */
    const char *name;
    /**
     * The name's length in bytes.
     */
    size_t name_len;
    /**
     * The header's value (blanks around it are ignored); NULL only with `value_len` 0.
     */
    const char *value;
    /**
     * The value's length in bytes.
     */
    size_t value_len;
} recuo_header;

/**
 * A step of the operation machine: a plain struct recuo fills in (every field, every
 * time; the fields a kind does not use are 0).
 */
typedef struct recuo_step {
    /**
     * A `recuo_step_kind` constant.
     */
    recuo_step_kind kind;
    /**
     * The attempt the step is about, from 0 (for DONE and GAVE_UP: the last one).
     */
    uint32_t attempt;
    /**
     * For `RECUO_STEP_SLEEP`: the delay, ms.
     */
    uint64_t delay_ms;
    /**
     * Whether `until_ms` holds an instant.
     */
    bool has_until;
    /**
     * For `RECUO_STEP_ENTER`: the deadline's instant on the caller's monotonic clock.
     */
    uint64_t until_ms;
    /**
     * Whether `timeout_ms` holds a time.
     */
    bool has_timeout;
    /**
     * For `RECUO_STEP_CALL`: what is left of the deadline, ms.
     */
    uint64_t timeout_ms;
    /**
     * For `RECUO_STEP_GAVE_UP`: why; else `RECUO_GIVE_UP_NONE`.
     */
    recuo_give_up_reason reason;
    /**
     * Whether `retry_at_ms` holds an instant.
     */
    bool has_retry_at;
    /**
     * For `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` with a finite wait: the instant on the
     * caller's monotonic clock from which the server would accept a retry.
     */
    uint64_t retry_at_ms;
} recuo_step;

/**
 * What happened to one operation: a plain struct recuo fills in. The delays
 * themselves are copied into a buffer of yours (see `recuo_attempts_report`, `recuo_retry`).
 */
typedef struct recuo_report {
    /**
     * Attempts made.
     */
    uint32_t attempts;
    /**
     * Why the operation gave up; `RECUO_GIVE_UP_NONE` when it succeeded or has not stopped.
     */
    recuo_give_up_reason reason;
    /**
     * Milliseconds from the start of the operation to its last step.
     */
    uint64_t elapsed_ms;
    /**
     * How many delays were decided between attempts (each one slept, or to be slept).
     */
    size_t delay_count;
    /**
     * Whether `retry_after_ms` holds a wait.
     */
    bool has_retry_after;
    /**
     * For `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` with a finite wait: how many milliseconds
     * after the give-up the server would accept a retry (clock-independent). Else 0.
     */
    uint64_t retry_after_ms;
    /**
     * For `RECUO_GIVE_UP_QUEUE_STOPPED`: the reason that stopped the queue; else
     * `RECUO_GIVE_UP_NONE`.
     */
    recuo_give_up_reason stopped_by;
    /**
     * Whether `retry_at_unix_ms` holds an instant.
     */
    bool has_retry_at_unix_ms;
    /**
     * For `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` with a finite wait: when the server would
     * accept a retry, in milliseconds since the Unix epoch (on the wall clock the operation
     * was started with). Else 0.
     */
    int64_t retry_at_unix_ms;
} recuo_report;

/**
 * What one request is to its operation: a plain struct recuo fills in.
 */
typedef struct recuo_request_plan {
    /**
     * A `recuo_key_to_send` constant: the key every attempt carries.
     */
    recuo_key_to_send key;
    /**
     * Whether a failure whose outcome is unknown (a timeout, a reset, a 500) may be retried.
     */
    bool idempotent;
} recuo_request_plan;

/**
 * What the last attempt of an operation came to, as the caller saw it: a plain struct, yours
 * to fill (on the stack too). `kind` says which other field is read: `status` for
 * `RECUO_LAST_STATUS`, `transport` for `RECUO_LAST_TRANSPORT`; the unused field is ignored.
 * Values that are none of their enum's constants are refused with `RECUO_ERR_INVALID_ENUM`.
 */
typedef struct recuo_last {
    /**
     * A `recuo_last_kind` constant.
     */
    recuo_last_kind kind;
    /**
     * The HTTP status, for `RECUO_LAST_STATUS`.
     */
    uint16_t status;
    /**
     * A `recuo_transport` constant, for `RECUO_LAST_TRANSPORT`.
     */
    recuo_transport transport;
} recuo_last;

/**
 * The hook called before each sleep of `recuo_retry`: `attempt` is the attempt that just
 * failed, `verdict` its verdict (valid during the call), `delay_ms` the delay about to be
 * slept (possibly 0, then nothing is slept). Receives the call's `user_data`.
 */
typedef void (*recuo_on_retry_fn)(uint32_t attempt,
                                  const struct recuo_verdict *verdict,
                                  uint64_t delay_ms,
                                  void *user_data);

/**
 * The hook called once when `recuo_retry` gives up, before it returns, with the report
 * (valid during the call). Receives the call's `user_data`.
 */
typedef void (*recuo_on_give_up_fn)(const struct recuo_report *report, void *user_data);

/**
 * Where records go: called with one record as a JSON object on one line (no newline at the
 * end; `json_line` is also NUL-terminated, and `len` excludes the NUL), and the call's
 * `user_data`. The line is valid during the call only: copy it to keep it. Every URL and
 * header in it was redacted before it was built — it may be logged as it is.
 */
typedef void (*recuo_record_sink_fn)(const char *json_line, size_t len, void *user_data);

/**
 * One attribute of a metric point: its OpenTelemetry key (`recuo.reason`), the Prometheus
 * label for it (`recuo_reason`) and its value, NUL-terminated UTF-8.
 */
typedef struct recuo_metric_attribute {
    /**
     * The OpenTelemetry attribute key.
     */
    const char *key;
    /**
     * The Prometheus label name.
     */
    const char *label;
    /**
     * The value.
     */
    const char *value;
} recuo_metric_attribute;

/**
 * One metric point, valid during the callback only (copy what you keep):
 *
 * | `prometheus_name` | `otel_name` (`unit`) | kind | attributes |
 * |---|---|---|---|
 * | `recuo_attempts_total` | `recuo.attempts` (`{attempt}`) | counter | `recuo.outcome` (a status, a transport failure, `success`), `recuo.reason` |
 * | `recuo_retry_delay_seconds` | `recuo.retry.delay` (`s`) | histogram | `recuo.reason`, `recuo.wait.source` (`server`, `backoff`) |
 * | `recuo_give_ups_total` | `recuo.give_ups` (`{operation}`) | counter | `recuo.reason` |
 * | `recuo_gate_wait_seconds` | `recuo.gate.wait` (`s`) | histogram | none |
 * | `recuo_budget_refusals_total` | `recuo.budget.refusals` (`{retry}`) | counter | none |
 */
typedef struct recuo_metric_point {
    /**
     * The Prometheus name (base units, `_total` on counters).
     */
    const char *prometheus_name;
    /**
     * The OpenTelemetry name (dotted, no unit).
     */
    const char *otel_name;
    /**
     * The OpenTelemetry unit (`s`, or `{attempt}` for a count of things).
     */
    const char *unit;
    /**
     * A counter or a histogram.
     */
    recuo_instrument_kind kind;
    /**
     * The count to add (counters) or the value observed, in seconds (histograms).
     */
    double value;
    /**
     * The attributes (NULL when there are none).
     */
    const struct recuo_metric_attribute *attributes;
    /**
     * How many.
     */
    size_t attribute_count;
} recuo_metric_point;

/**
 * Receives each metric point a record means, with the call's `user_data`, on the thread that
 * made the record.
 */
typedef void (*recuo_metrics_fn)(const struct recuo_metric_point *point, void *user_data);

/**
 * A monotonic clock replacing the real one in `recuo_retry` and `recuo_retry_http`:
 * milliseconds that never go back, any origin. Receives the call's `user_data`.
 */
typedef uint64_t (*recuo_monotonic_clock_fn)(void *user_data);

/**
 * A wall clock replacing the real one in the records of `recuo_retry` and
 * `recuo_retry_http`: milliseconds since the Unix epoch. Receives the call's `user_data`.
 */
typedef int64_t (*recuo_wall_clock_fn)(void *user_data);

/**
 * The operation `recuo_retry` runs: make attempt number `attempt` (from 0), sending
 * `idempotency_key` (a NUL-terminated UUID v4 of 36 characters, the same on every attempt of
 * this `recuo_retry` call; valid during the call only — copy it to keep it) in the header
 * named by `recuo_policy_idempotency_header`, then write the verdict on what happened into
 * `*verdict_out`: with `recuo_classify` for an HTTP outcome, or by hand for a task with no
 * HTTP meaning (`RECUO_VERDICT_SUCCESS`, or `RECUO_VERDICT_RETRY` /
 * `RECUO_VERDICT_GIVE_UP` with a cause).
 *
 * `*verdict_out` is all zeros when the operation is called; if it is still 0, or holds a
 * field that is none of its constants, when the operation returns, `recuo_retry` stops with
 * `RECUO_ERR_NO_VERDICT` (so a failed `recuo_classify` can never pass for a success).
 * Whatever the operation points to (headers, method) only has to live until its own
 * `recuo_classify` call returns: recuo copies the verdict, never the pointers.
 */
typedef void (*recuo_operation_fn)(uint32_t attempt,
                                   const char *idempotency_key,
                                   struct recuo_verdict *verdict_out,
                                   void *user_data);

/**
 * The operation `recuo_retry_http` runs: `recuo_operation_fn` for an HTTP request, which also
 * tells recuo what came back. Make attempt number `attempt` (from 0), sending
 * `idempotency_key` as `recuo_operation_fn` says; then, before returning, call
 * `recuo_attempt_context_set_response(context, …)` with the outcome and the response's
 * headers, and write the verdict into `*verdict_out` (`recuo_classify` with the same outcome
 * and headers, or by hand). `context` is valid during the call only.
 *
 * A call that returns without a response set stops the loop with `RECUO_ERR_NO_RESPONSE`
 * (one without a valid verdict, with `RECUO_ERR_NO_VERDICT`): a forgotten call can never
 * pass for an answer.
 */
typedef void (*recuo_http_operation_fn)(uint32_t attempt,
                                        const char *idempotency_key,
                                        struct recuo_attempt_context *context,
                                        struct recuo_verdict *verdict_out,
                                        void *user_data);

/**
 * What a batch will take: a plain struct `recuo_plan` fills in.
 */
typedef struct recuo_plan_result {
    /**
     * Milliseconds between two starts at the target rate (rounded): 667 for 90/min.
     */
    uint64_t interval_ms;
    /**
     * The least time the batch can take at the target rate, retries included, in seconds.
     */
    double duration_s;
    /**
     * The expected number of retries: `requests · f / (1 − f)` for a retry fraction `f`.
     */
    double retries;
    /**
     * The mean number of requests in flight (Little's law: target rate × latency).
     */
    double in_flight;
    /**
     * How many warnings the plan has (read them with `recuo_plan_warning`).
     */
    size_t warning_count;
} recuo_plan_result;

/**
 * One operation of a batch, called by `recuo_batch_run` **on a worker thread**, possibly
 * at the same time as other operations of the batch (up to `workers` at once): make
 * attempt number `attempt` (from 0) of operation number `index` (from 0, below `count`),
 * sending `idempotency_key` (NUL-terminated, the same on every attempt of this operation,
 * another for each operation; valid during the call only), then write the verdict into
 * `*verdict_out` (`recuo_classify`, or by hand) — exactly as `recuo_operation_fn`, whose
 * rules apply (all zeros on entry; left so, or holding no constant, it counts as a missing
 * verdict).
 *
 * `user_data` is the batch's, shared by every worker: whatever the operation touches through
 * it must be safe to use from several threads at once (one slot per `index`, atomics, or a
 * mutex). The operation must return normally.
 */
typedef void (*recuo_batch_operation_fn)(size_t index,
                                         uint32_t attempt,
                                         const char *idempotency_key,
                                         struct recuo_verdict *verdict_out,
                                         void *user_data);

/**
 * How far a batch has come: what `recuo_batch_run`'s progress callback is given, and what
 * `recuo_batch_queue_ended` answers, each time an operation ends. `done` goes up by one at
 * each call, and `done == succeeded + failed + not_started`.
 */
typedef struct recuo_batch_progress {
    /**
     * Operations in the batch.
     */
    uint64_t total;
    /**
     * Operations ended, whichever way.
     */
    uint64_t done;
    /**
     * Operations that succeeded.
     */
    uint64_t succeeded;
    /**
     * Operations that gave up after at least one attempt.
     */
    uint64_t failed;
    /**
     * Operations never started (the batch's deadline came first, or the batch stopped).
     */
    uint64_t not_started;
    /**
     * Retries started so far, by every operation of the batch.
     */
    uint64_t retries;
} recuo_batch_progress;

/**
 * Told, with the batch's `user_data`, each time an operation of a `recuo_batch_run` ends —
 * started or not: the batch's progress (valid during the call only). Called on a worker
 * thread, one call at a time, in order (`done` goes up by one each call); keep it short, as
 * the other workers wait for it. It must return normally.
 */
typedef void (*recuo_batch_progress_fn)(const struct recuo_batch_progress *progress, void *user_data);

/**
 * What became of one operation of a batch: a plain struct `recuo_batch_run` fills in, one
 * per operation, in the order of the indexes.
 */
typedef struct recuo_batch_result {
    /**
     * A `recuo_batch_result_kind` constant.
     */
    recuo_batch_result_kind kind;
    /**
     * For `RECUO_BATCH_GAVE_UP`: why (`permanent`, `attempts_exhausted`,
     * `wait_exceeds_deadline` — also when the batch's deadline left no time for the wait —
     * `budget_exhausted`, `queue_stopped`); for `RECUO_BATCH_NOT_STARTED`: why it was not
     * started (`wait_exceeds_deadline`: the batch's deadline passed; `queue_stopped`: the
     * queue stopped, see `stopped_by`; `cancelled`); else `RECUO_GIVE_UP_NONE`.
     */
    recuo_give_up_reason reason;
    /**
     * The attempts made (0 for `RECUO_BATCH_NOT_STARTED`).
     */
    uint32_t attempts;
    /**
     * Whether the operation's last attempt returned without a valid verdict (then it gave
     * up as `permanent`, and `recuo_batch_run` answers `RECUO_ERR_NO_VERDICT`).
     */
    bool no_verdict;
    /**
     * Whether the operation's gate could not be used — a Redis limit, regulator or budget
     * whose server is out of reach (then it gave up with no attempt, and `recuo_batch_run`
     * answers `RECUO_ERR_IO`).
     */
    bool gate_error;
    /**
     * For a reason `RECUO_GIVE_UP_QUEUE_STOPPED`: the reason that stopped the queue (another
     * operation's `wait_exceeds_deadline`); else `RECUO_GIVE_UP_NONE`.
     */
    recuo_give_up_reason stopped_by;
} recuo_batch_result;

/**
 * A batch's stats: a plain struct `recuo_batch_run`, `recuo_stats_merge` and
 * `recuo_stats_recorder_snapshot` fill in, mirroring `recuo::Stats`. Instants are
 * nanoseconds on `recuo_monotonic_ns()` (or on the clock a recorder was given).
 */
typedef struct recuo_stats {
    /**
     * First attempts started.
     */
    uint64_t initial;
    /**
     * Retries started.
     */
    uint64_t retries;
    /**
     * Operations that succeeded.
     */
    uint64_t successes;
    /**
     * Operations that gave up (final failures).
     */
    uint64_t failures;
    /**
     * Operations never started (the deadline came first).
     */
    uint64_t not_started;
    /**
     * Rate-limited answers seen (`RECUO_CAUSE_RATE_LIMITED`: 429, or a 403 with a spent
     * quota).
     */
    uint64_t throttled;
    /**
     * `RECUO_CAUSE_UNAVAILABLE` answers seen (503).
     */
    uint64_t unavailable;
    /**
     * The most attempts in flight at once.
     */
    uint64_t max_in_flight;
    /**
     * Whether there were at least two starts (then the spacings below are set).
     */
    bool has_spacing;
    /**
     * The shortest time between two consecutive starts, in nanoseconds; else 0.
     */
    uint64_t min_spacing_ns;
    /**
     * The mean time between consecutive starts, in nanoseconds; else 0.
     */
    double mean_spacing_ns;
    /**
     * Whether any attempt started (then the instants below are set).
     */
    bool has_starts;
    /**
     * The first start; else 0.
     */
    uint64_t first_start_ns;
    /**
     * The last start; else 0.
     */
    uint64_t last_start_ns;
    /**
     * How long the batch took, in milliseconds (0 from a recorder's snapshot; the longer of
     * the two from a merge).
     */
    uint64_t elapsed_ms;
} recuo_stats;

/**
 * The queue's answer: a plain struct recuo fills in.
 */
typedef struct recuo_batch_next {
    /**
     * A `recuo_batch_next_kind` constant.
     */
    recuo_batch_next_kind kind;
    /**
     * The operation's place in the batch, from 0 (0 for FINISHED).
     */
    size_t index;
    /**
     * For START: a new policy to run the operation under (`recuo_attempts_new`); yours to
     * free with `recuo_policy_free`. Else NULL.
     */
    struct recuo_policy *policy;
    /**
     * For START: whether the policy has a deadline, and which (ms).
     */
    bool has_deadline;
    /**
     * For START with a deadline: the policy's deadline, ms.
     */
    uint64_t deadline_ms;
    /**
     * For NOT_STARTED: `wait_exceeds_deadline` (the batch's deadline passed),
     * `queue_stopped` (see `stopped_by`) or `cancelled` (`recuo_batch_queue_stop`).
     */
    recuo_give_up_reason reason;
    /**
     * For `queue_stopped`: the reason that stopped the queue.
     */
    recuo_give_up_reason stopped_by;
} recuo_batch_next;

/**
 * The request of one operation of a batch, as its records name it: a plain struct, yours
 * to fill. The bytes need no terminator.
 */
typedef struct recuo_request_line {
    /**
     * The HTTP method (UTF-8); NULL only with `method_len` 0 (empty: no HTTP meaning).
     */
    const char *method;
    /**
     * The method's length in bytes.
     */
    size_t method_len;
    /**
     * The URL (redacted in the records; bytes that are not UTF-8 read as U+FFFD); NULL only
     * with `url_len` 0.
     */
    const char *url;
    /**
     * The URL's length in bytes.
     */
    size_t url_len;
} recuo_request_line;

/**
 * The answer of `recuo_who_answered`: a plain struct recuo fills in. The evidence lines
 * themselves are copied into a buffer of yours by `recuo_who_answered_evidence`.
 */
typedef struct recuo_who_answered_result {
    /**
     * A `recuo_origin` constant: the most likely origin.
     */
    recuo_origin origin;
    /**
     * A `recuo_confidence` constant: how sure.
     */
    recuo_confidence confidence;
    /**
     * How many evidence lines there are (what points there, and what points elsewhere).
     */
    size_t evidence_count;
} recuo_who_answered_result;

/**
 * What was decided after an attempt, for its record (`recuo_record_attempt_json`): a plain
 * struct, yours to fill — from the `recuo_step` that followed the attempt's verdict
 * (`RECUO_STEP_SLEEP`: retry; `_DONE`; `_GAVE_UP`), or by hand for a loop of your own.
 */
typedef struct recuo_decision {
    /**
     * What was decided: a `recuo_decision_kind` constant.
     */
    recuo_decision_kind kind;
    /**
     * For `RECUO_DECISION_RETRY`: milliseconds to wait before the next attempt; else 0.
     */
    uint64_t delay_ms;
    /**
     * For `RECUO_DECISION_RETRY`: the number of the next attempt, counted from 0; else 0.
     * (Not recorded.)
     */
    uint32_t next_attempt;
    /**
     * For `RECUO_DECISION_GIVE_UP`: why; else `RECUO_GIVE_UP_NONE`.
     */
    recuo_give_up_reason reason;
    /**
     * Whether `retry_at_ms` holds an instant.
     */
    bool has_retry_at;
    /**
     * For `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` with a finite wait: the instant, on the
     * caller's monotonic clock, from which the server would accept a retry. Else 0. (Not
     * recorded.)
     */
    uint64_t retry_at_ms;
} recuo_decision;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/**
 * For recuo's own tests only: panics inside the boundary, so that a test can see a panic
 * arrive as a status. Always returns `RECUO_ERR_PANIC` (the default panic hook prints the
 * panic message on standard error).
 */
recuo_status recuo_test_force_panic(void);

/**
 * The version of the library actually loaded, such as `"0.1.0"`: compare it with the
 * `RECUO_VERSION` macro to detect a header/library mismatch.
 *
 * The string is static: never free it. NULL only if recuo panicked.
 */
const char *recuo_version(void);

/**
 * Writes a description of the status `code` into the caller's buffer `buf` of `len` bytes,
 * always NUL-terminated, and stores the number of bytes written (without the NUL) in
 * `*written` when `written` is not NULL.
 *
 * Returns `RECUO_OK` when the whole message fitted, `RECUO_ERR_BUFFER_TOO_SMALL` when it was
 * truncated (what fits is still written and terminated; with `len == 0` nothing is written),
 * and `RECUO_ERR_NULL_ARGUMENT` when `buf` is NULL. 128 bytes always suffice. An unknown
 * code gets a message saying so. The text is ASCII English, for humans: compare codes, or
 * `recuo_status_name`, never messages.
 *
 * # Safety
 * `buf` must point to `len` writable bytes; `written` must be NULL or point to a `size_t`.
 */
recuo_status recuo_status_message(uint32_t code, char *buf, size_t len, size_t *written);

/**
 * The stable name of the status `code` (`"ok"`, `"null_argument"`, `"cap_below_base"`, …), or
 * `"unknown"` for a number that is no status.
 *
 * The string is static: never free it. NULL only if recuo panicked.
 */
const char *recuo_status_name(uint32_t code);

/**
 * Whether `code` is a configuration error (`100`–`199`): the arguments were well-formed but
 * the values are refused (zero attempts, a maximum below the base, …).
 */
bool recuo_status_is_config_error(uint32_t code);

/**
 * Whether `code` is an argument error (`1`–`99`): a NULL pointer, a buffer too small, a
 * length too large.
 */
bool recuo_status_is_argument_error(uint32_t code);

/**
 * The system clock now, in milliseconds since the Unix epoch: the `now_ms` the Retry-After
 * functions expect when the response carries no `Date` header (the core's
 * `recuo::unix_now_ms`).
 *
 * Negative before 1970; saturates at the ends of `int64_t`. 0 only if recuo panicked.
 */
int64_t recuo_now_ms(void);

/**
 * A monotonic clock in milliseconds: never goes back, unaffected by changes of the wall
 * clock — `recuo_monotonic_ns` rounded down to whole milliseconds, the one reading every
 * language gives the operation machine. Only differences mean something: it is the
 * `now_ms` the `recuo_attempts_*` functions expect.
 *
 * 0 if the clock cannot be read, or if recuo panicked.
 */
uint64_t recuo_monotonic_ms(void);

/**
 * A wait of `ns` nanoseconds in whole milliseconds, rounded up (a wait never ends before
 * what it was asked to wait): 1 ns is 1 ms, 1 000 000 ns is 1 ms, 1 000 001 ns is 2 ms.
 * 0 also if recuo panicked.
 */
uint64_t recuo_wait_ms_from_ns(uint64_t ns);

/**
 * The system's monotonic clock (`CLOCK_MONOTONIC`) in nanoseconds: the clock of the
 * regulator and the retry budget. Unlike `recuo_monotonic_ms` it has the system's origin
 * (usually the boot), so every process on the machine reads the same clock — which is what
 * lets processes share a regulator or a budget in a file. The `_at` functions
 * (`recuo_regulator_try_acquire_at`, `recuo_retry_budget_try_withdraw_at`, …) take instants
 * on it, or on a fake clock of yours in tests.
 *
 * 0 if the clock cannot be read, or if recuo panicked.
 */
uint64_t recuo_monotonic_ns(void);

/**
 * Reads the `len` bytes at `value` as a `Retry-After` value, as of `now_ms` (milliseconds
 * since the Unix epoch; pass the response's `Date` when it has one, else `recuo_now_ms()`),
 * and stores the result in `*out`.
 *
 * The length is explicit, so bytes after a NUL are read too (`"12\0x"` is invalid, not 12 s).
 * Spaces and tabs around the value are ignored; anything that is not one or more ASCII
 * digits or an RFC 9110 HTTP-date is `RECUO_RETRY_AFTER_INVALID`, which is an answer, not an
 * error. `value` may be NULL when `len` is 0.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` when `out` is NULL or `value` is NULL with
 * `len > 0`; `RECUO_ERR_LENGTH_TOO_LARGE` when `len > PTRDIFF_MAX`. On an error `*out` is
 * left untouched.
 *
 * # Safety
 * `value` must point to `len` readable bytes (or be NULL with `len == 0`); `out` must be NULL
 * or point to a writable `recuo_retry_after`.
 */
recuo_status recuo_parse_retry_after(const char *value,
                                     size_t len,
                                     int64_t now_ms,
                                     struct recuo_retry_after *out);

/**
 * Guide B's `retryDelayMs`: how long to wait, in milliseconds, before retry index `attempt`
 * (the first retry is 0), given the response's `Retry-After` header and the time `now_ms`
 * (milliseconds since the Unix epoch, e.g. `recuo_now_ms()`).
 *
 * * Seconds (`"12"`) or an HTTP-date: exactly the server's wait (a past date is 0).
 * * A wait over 2^53 − 1 ms: `INFINITY` (from `<math.h>`) — give up, never wait "a little".
 * * NULL (no header) or an invalid value (including non-UTF-8 bytes): full jitter, a uniform
 *   draw from `[0, min(8000, 1000 · 2^attempt)]`, from a generator seeded by the operating
 *   system.
 *
 * Never fails; NaN only if recuo panicked (a bug).
 *
 * # Safety
 * `retry_after` must be NULL or a NUL-terminated string.
 */
double recuo_retry_delay_ms(const char *retry_after, uint32_t attempt, int64_t now_ms);

/**
 * `recuo_retry_delay_ms` with the jitter drawn from a generator seeded with `seed`: the same
 * arguments always give the same delay (in every language recuo speaks), for exact tests.
 *
 * # Safety
 * `retry_after` must be NULL or a NUL-terminated string.
 */
double recuo_retry_delay_ms_seeded(const char *retry_after,
                                   uint32_t attempt,
                                   int64_t now_ms,
                                   uint64_t seed);

/**
 * `recuo_retry_delay_ms` for a header given as `len` bytes (a NUL among them is part of the
 * value, which then is invalid, as every other language reads it): NULL `value` is no header.
 * `seed` NULL draws from a generator seeded by the operating system; else as
 * `recuo_retry_delay_ms_seeded`.
 *
 * # Safety
 * `value` must be NULL or point to `len` readable bytes; `seed` NULL or a readable `uint64_t`.
 */
double recuo_retry_delay_ms_bytes(const uint8_t *value,
                                  size_t len,
                                  uint32_t attempt,
                                  int64_t now_ms,
                                  const uint64_t *seed);

/**
 * The name of the `recuo_retry_after_kind` constant `kind` (`"seconds"`, `"date"`,
 * `"unbounded"`, `"invalid"`: the names every language uses), or `"unknown"`. Static: never
 * free it. NULL only if recuo panicked.
 */
const char *recuo_retry_after_kind_name(uint32_t kind);

/**
 * The backoff window for retry index `n`: `min(cap_ms, base_ms · 2^n)` milliseconds,
 * saturating (no overflow for any `n`, `base_ms`, `cap_ms`). Full jitter draws the delay
 * uniformly from `[0, window]`.
 *
 * Stores the window in `*window_ms_out` and returns `RECUO_OK`; returns
 * `RECUO_ERR_CAP_BELOW_BASE` when `cap_ms < base_ms` and `RECUO_ERR_NULL_ARGUMENT` when
 * `window_ms_out` is NULL, writing nothing.
 *
 * # Safety
 * `window_ms_out` must be NULL or point to a writable `uint64_t`.
 */
recuo_status recuo_backoff_window_ms(uint64_t base_ms,
                                     uint64_t cap_ms,
                                     uint32_t n,
                                     uint64_t *window_ms_out);

/**
 * A new options handle with the defaults: jitter seeded by the operating system, real sleeps.
 * Free it with `recuo_com_retry_options_free`. NULL only if recuo panicked.
 */
struct recuo_com_retry_options *recuo_com_retry_options_new(void);

/**
 * Releases an options handle. NULL is accepted and ignored.
 *
 * # Safety
 * `options` must be NULL or come from `recuo_com_retry_options_new` and not have been freed;
 * it must not be used afterwards.
 */
void recuo_com_retry_options_free(struct recuo_com_retry_options *options);

/**
 * Draws the jitter from a generator seeded with `seed`, so the delays are the same on every
 * run and in every language recuo speaks. Returns `RECUO_OK`, or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `options` must be NULL or a live handle from `recuo_com_retry_options_new`.
 */
recuo_status recuo_com_retry_options_set_seed(struct recuo_com_retry_options *options,
                                              uint64_t seed);

/**
 * Replaces the real sleep with `sleep_ms`, called with each non-zero delay in milliseconds
 * and the call's `user_data`; NULL restores the real sleep. Returns `RECUO_OK`, or
 * `RECUO_ERR_NULL_ARGUMENT` when `options` is NULL.
 *
 * # Safety
 * `options` must be NULL or a live handle from `recuo_com_retry_options_new`.
 */
recuo_status recuo_com_retry_options_set_sleep(struct recuo_com_retry_options *options,
                                               recuo_sleep_fn sleep_ms);

/**
 * Guide A's `comRetry`: calls `task(user_data)` up to `tentativas` times until it returns 0.
 * Between attempts it sleeps a full-jitter delay drawn from `[0, min(max_ms, base_ms · 2^i)]`
 * before attempt `i + 1` (a zero delay is not slept at all), as long as
 * `repetir_se(error, verdict_out, user_data)` answers true for the failure code, or the
 * verdict it writes says retry (then a server wait in it replaces the delay, and a verdict
 * that gives up stops at once); a NULL `repetir_se` retries every failure. The predicate is
 * not asked after the last attempt (guide A's loop).
 *
 * Returns:
 * * `RECUO_OK`: the task succeeded; `*last_error_out` = 0.
 * * `RECUO_ERR_TASK_FAILED`: the attempts ran out, or `repetir_se` answered false;
 *   `*last_error_out` = the task's last return value, unchanged.
 * * `RECUO_ERR_NULL_ARGUMENT` when `task` is NULL, `RECUO_ERR_ZERO_ATTEMPTS` when
 *   `tentativas` is 0, `RECUO_ERR_CAP_BELOW_BASE` when `max_ms < base_ms`: checked before any
 *   attempt, and the outputs are left untouched.
 *
 * `*attempts_out` receives the number of calls of `task` (with `RECUO_OK` and
 * `RECUO_ERR_TASK_FAILED`). Both outputs may be NULL. Guide A's defaults are
 * `tentativas = 5`, `base_ms = 200`, `max_ms = 5000`.
 *
 * Sleeps are real (the calling thread blocks) and the jitter is seeded by the operating system
 * the first time a delay is drawn; `recuo_com_retry_with_options` changes both. The
 * callbacks run on the calling thread and must return normally (no `longjmp`, no C++
 * exception).
 *
 * # Safety
 * `task` and `repetir_se` must be safe to call with `user_data`; `last_error_out` and
 * `attempts_out` must each be NULL or point to a writable value of their type.
 */
recuo_status recuo_com_retry(recuo_task_fn task,
                             void *user_data,
                             uint32_t tentativas,
                             uint64_t base_ms,
                             uint64_t max_ms,
                             recuo_retry_predicate_fn repetir_se,
                             int *last_error_out,
                             uint32_t *attempts_out);

/**
 * `recuo_com_retry` with options (a seed, a sleep callback): see
 * `recuo_com_retry_options_new`. NULL `options` means the defaults, exactly as
 * `recuo_com_retry`. The options are only read, and not kept after the call returns.
 *
 * # Safety
 * As `recuo_com_retry`; `options` must be NULL or a live handle, not modified during the call.
 */
recuo_status recuo_com_retry_with_options(recuo_task_fn task,
                                          void *user_data,
                                          uint32_t tentativas,
                                          uint64_t base_ms,
                                          uint64_t max_ms,
                                          recuo_retry_predicate_fn repetir_se,
                                          const struct recuo_com_retry_options *options,
                                          int *last_error_out,
                                          uint32_t *attempts_out);

/**
 * The name of the `recuo_transport` constant `transport` (`"connect"`, `"tls"`,
 * `"timeout"`, `"reset"`, `"other"`), or `"unknown"`. Static. NULL only if recuo panicked.
 */
const char *recuo_transport_name(uint32_t transport);

/**
 * What a libcurl transfer that failed with the `CURLcode` `code` (not `CURLE_OK`) means for
 * the request, `request_sent` saying whether any byte of it went out
 * (`CURLINFO_REQUEST_SIZE` above 0): never sent (DNS, refused, a TLS handshake that failed, a
 * connect timeout) is `RECUO_TRANSPORT_CONNECT`; a certificate refused
 * `RECUO_TRANSPORT_TLS`; a timeout after sending `RECUO_TRANSPORT_TIMEOUT`; a connection
 * lost after sending (a body cut short included) `RECUO_TRANSPORT_RESET`; any other code
 * `RECUO_TRANSPORT_OTHER`. The one table `recuo_curl.h` and PHP's `buscarComRetry` use;
 * `RECUO_TRANSPORT_OTHER` only if recuo panicked.
 */
recuo_transport recuo_curl_code_transport(uint32_t code, bool request_sent);

/**
 * A new policy with guide A's defaults: 5 attempts, base 200 ms, cap 5000 ms, full jitter,
 * no deadline, server waits spread by `uniform[0, min(window(n), 1000 ms)]`, the
 * default classification table, the key sent as `Idempotency-Key`, the response's `Date`
 * not used as "now". Free it with `recuo_policy_free`. NULL only if recuo panicked.
 */
struct recuo_policy *recuo_policy_new(void);

/**
 * A new policy with guide B's values: guide A's, but base 1000 ms, cap 8000 ms and a
 * 30000 ms deadline (5 attempts: at most 4 retries). Free it with `recuo_policy_free`. NULL
 * only if recuo panicked.
 */
struct recuo_policy *recuo_policy_new_guide_b(void);

/**
 * A new policy with the HTTP adapters' default (what `recuo_curl_perform` users get when
 * they have no policy of their own in mind): guide B's values (5 attempts, base 1000 ms, cap
 * 8000 ms, a 30000 ms deadline, so that `Retry-After: 3600` gives up at once), with the
 * response's valid `Date` header taken as "now" for its server waits, so that a client whose
 * clock is wrong still waits what the server meant. Free it with `recuo_policy_free`. NULL
 * only if recuo panicked.
 */
struct recuo_policy *recuo_policy_new_adapters(void);

/**
 * A new policy for one request a person waits on: the adapters' default (guide B's values,
 * the response's `Date` taken as "now"), whose 30000 ms deadline gives up at once on a server
 * wait that would not fit, saying when a retry would be allowed. Free it with
 * `recuo_policy_free`. NULL only if recuo panicked.
 */
struct recuo_policy *recuo_policy_new_interactive(void);

/**
 * A new policy for the requests of a batch: the adapters' default with no deadline of its
 * own, so that the batch's deadline (`recuo_batch_run`'s `deadline_ms`, or the queue's) is
 * the one that counts — each request gets what is left of it, and a per-minute limiter's
 * `Retry-After: 60` is waited rather than given up on. Outside a batch, give it a deadline.
 * Free it with `recuo_policy_free`. NULL only if recuo panicked.
 */
struct recuo_policy *recuo_policy_new_batch(void);

/**
 * A policy as one value: its plain form, JSON text, read by the core (every language reads
 * and writes the same form). For a policy that comes from a file, another process or another
 * language; in C code, the setters are the typed way.
 *
 * The `len` bytes at `json` must be one JSON object (UTF-8, at most
 * `RECUO_POLICY_JSON_MAX` bytes; no NUL terminator needed). Every field is optional: a field
 * left out takes guide A's value.
 *
 * * `max_attempts`: attempts in all, the first included (at least 1; default 5).
 * * `base_ms`, `cap_ms`: the first and the largest backoff window, in milliseconds (defaults
 *   200 and 5000; the cap not below the base).
 * * `jitter`: `"full"` (the default), `"equal"`, `"decorrelated"` or `"none"`.
 * * `deadline_ms`: the operation's whole time from the start of its first attempt, in
 *   milliseconds; `null` (the default): no deadline.
 * * `spread_ms`: the most added at random to a server's wait, in milliseconds; `null` (the
 *   default): the smaller of the backoff window and 1000 ms.
 * * `idempotency_header`: the header that carries the idempotency key (default
 *   `"Idempotency-Key"`).
 * * `use_date_header` (default false): measure an HTTP-date wait from the response's own
 *   `Date`. `server_honours_keys` (default false): a request sent with recuo's own key
 *   counts as idempotent. `quota_403_as_rate_limit` (default true): a 403 whose rate-limit
 *   headers say the quota is spent counts as a 429.
 * * `status_retry`: statuses (400–599, written as strings) whose rule changes, each to
 *   `"never"`, `"if_idempotent"` or `"always"`, e.g. `{"408": "always"}`.
 * * `transport_retry`: transport failures (`"connect"`, `"tls"`, `"timeout"`, `"reset"`,
 *   `"other"`) whose rule changes, to the same rules.
 * * `idempotent_methods`: methods whose idempotency changes, e.g. `{"POST": true}` (any
 *   ASCII case).
 *
 * For example `{"max_attempts": 3, "base_ms": 500, "deadline_ms": 10000}`.
 *
 * On success `*out` receives a new policy (free it with `recuo_policy_free`). Returns
 * `RECUO_OK`; with `*out` left untouched: `RECUO_ERR_INVALID_VALUE` (not JSON, not an object, a
 * field recuo does not know, a value of the wrong type: a string for a number, a negative
 * or fractional number, `null` where a number must be), `RECUO_ERR_UNKNOWN_NAME` (a jitter,
 * rule, transport failure, method or status that is no name recuo knows),
 * `RECUO_ERR_STATUS_OUT_OF_RANGE` (a status outside 400–599), the setters' errors
 * (`RECUO_ERR_ZERO_ATTEMPTS`, `RECUO_ERR_CAP_BELOW_BASE`, `RECUO_ERR_INVALID_HEADER_NAME`),
 * `RECUO_ERR_NOT_UTF8`, `RECUO_ERR_LENGTH_TOO_LARGE` (above `RECUO_POLICY_JSON_MAX`),
 * `RECUO_ERR_NULL_ARGUMENT` (`out`, or `json` with `len > 0`).
 *
 * # Safety
 * `json` must point to `len` readable bytes (or be NULL with `len == 0`); `out` must be NULL
 * or point to a writable `recuo_policy *`.
 */
recuo_status recuo_policy_from_json(const char *json, size_t len, struct recuo_policy **out);

/**
 * Releases a policy. NULL is accepted and ignored. State machines made from it keep their
 * own copy and stay usable.
 *
 * # Safety
 * `policy` must be NULL or come from `recuo_policy_new*` and not have been freed; it must not
 * be used afterwards.
 */
void recuo_policy_free(struct recuo_policy *policy);

/**
 * Checks the policy as the core will when it is used: `RECUO_OK`, or the configuration
 * error (`RECUO_ERR_CAP_BELOW_BASE` when the cap is below the base), or
 * `RECUO_ERR_NULL_ARGUMENT`. A setter that refuses its own value already said so; what only
 * shows once every value is set (the cap against the base) shows here, and in every function
 * that uses the policy.
 *
 * # Safety
 * `policy` must be NULL or a live handle.
 */
recuo_status recuo_policy_validate(const struct recuo_policy *policy);

/**
 * Sets the most attempts an operation gets, the first included. Returns `RECUO_OK`;
 * `RECUO_ERR_ZERO_ATTEMPTS` for 0 (the policy is left unchanged); `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_policy_set_max_attempts(struct recuo_policy *policy, uint32_t max_attempts);

/**
 * Sets the first backoff window, in milliseconds. Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT`; a base above the cap is reported by `recuo_policy_validate`
 * and where the policy is used.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_policy_set_base_ms(struct recuo_policy *policy, uint64_t base_ms);

/**
 * Sets the largest backoff window (the cap), in milliseconds. It never shortens a server's
 * wait. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`; a cap below the base is
 * reported by `recuo_policy_validate` and where the policy is used.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_policy_set_cap_ms(struct recuo_policy *policy, uint64_t cap_ms);

/**
 * Sets the jitter mode: one of the `recuo_jitter` constants. Returns `RECUO_OK`;
 * `RECUO_ERR_INVALID_ENUM` for another number (the policy is left unchanged);
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_policy_set_jitter(struct recuo_policy *policy, uint32_t jitter);

/**
 * Limits the operation's total time to `deadline_ms` milliseconds from the start of its
 * first attempt: a retry whose delay would end after it is not made (the operation gives up
 * with `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE`). Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_policy_set_deadline_ms(struct recuo_policy *policy, uint64_t deadline_ms);

/**
 * Removes the deadline (the default of guide A). Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_policy_clear_deadline(struct recuo_policy *policy);

/**
 * Fixes the spread added to a server's wait: the delay is `W + uniform[0, spread_ms]`.
 * Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_policy_set_spread_ms(struct recuo_policy *policy, uint64_t spread_ms);

/**
 * Restores the default spread, `min(window(n), 1000 ms)` for retry index `n`. Returns
 * `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_policy_clear_spread(struct recuo_policy *policy);

/**
 * Whether a valid `Date` header in the response is "now" when server waits are computed
 * (which makes them immune to the client's clock skew). Default false. Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_policy_set_use_date_header(struct recuo_policy *policy, bool use_date_header);

/**
 * Says whether the server honours idempotency keys (default false): when it does, a request
 * that carries recuo's own key counts as idempotent whatever its method, so a POST whose
 * outcome is unknown (a timeout, a reset, a 500) may be retried; when it does not, only the
 * method (or a key of the caller's own) makes a request idempotent. Read by
 * `recuo_plan_request` and `recuo_attempts_set_plan`. Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_policy_set_server_honours_keys(struct recuo_policy *policy, bool yes);

/**
 * Sets the name of the header the idempotency key is sent in (default `Idempotency-Key`):
 * the `len` bytes at `name`, which must form an HTTP token (RFC 9110 section 5.6.2). recuo
 * does not send headers itself; read the name back with `recuo_policy_idempotency_header`.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_INVALID_HEADER_NAME` for an empty name or one that is not a
 * token, `RECUO_ERR_NOT_UTF8` for bytes that are not UTF-8 (the policy is left unchanged in
 * both cases); `RECUO_ERR_NULL_ARGUMENT` when `policy` is NULL, or `name` is NULL with
 * `len > 0`; `RECUO_ERR_LENGTH_TOO_LARGE`.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread; `name` must point to
 * `len` readable bytes (or be NULL with `len == 0`).
 */
recuo_status recuo_policy_set_idempotency_header(struct recuo_policy *policy,
                                                 const char *name,
                                                 size_t len);

/**
 * Sets when the HTTP status `status` (400–599) is retried: `rule` is one of the
 * `recuo_status_rule` constants. The defaults: 429 and 503 ALWAYS; 500,
 * 502, 504 and the other 5xx but 501 and 505 IF_IDEMPOTENT; everything else NEVER. Statuses
 * below 400 are successes whatever their rule; a 403 whose rate-limit headers say the quota
 * is spent is a 429 while `recuo_policy_set_quota_403_is_rate_limit` is on.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_STATUS_OUT_OF_RANGE` for a status outside 400–599 (the same
 * range in every language),
 * `RECUO_ERR_INVALID_ENUM` for an unknown rule (the policy is left unchanged in both cases);
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_policy_set_status_retry(struct recuo_policy *policy,
                                           uint16_t status,
                                           uint32_t rule);

/**
 * Sets when the transport failure `transport` (a `recuo_transport` constant) is retried:
 * `rule` is one of the `recuo_status_rule` constants. The defaults: `connect` ALWAYS (the
 * request was never sent); `timeout`, `reset`, `other` IF_IDEMPOTENT; `tls` NEVER (retrying
 * cannot fix a certificate, and would hide an interception).
 *
 * Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM` for an unknown transport or rule (the policy
 * is left unchanged); `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_policy_set_transport_retry(struct recuo_policy *policy,
                                              uint32_t transport,
                                              uint32_t rule);

/**
 * Sets whether requests with the HTTP method named by the `len` bytes at `method` are
 * idempotent (safe to repeat without an idempotency key). The method is one of GET, HEAD,
 * OPTIONS, TRACE, PUT, DELETE, POST, PATCH, CONNECT, in any ASCII case; by default the first
 * six are idempotent. Any other method is never idempotent unless the request carries a key.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_UNKNOWN_METHOD` for another method, `RECUO_ERR_NOT_UTF8`
 * (the policy is left unchanged in both cases); `RECUO_ERR_NULL_ARGUMENT`;
 * `RECUO_ERR_LENGTH_TOO_LARGE`.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread; `method` must point
 * to `len` readable bytes (or be NULL with `len == 0`).
 */
recuo_status recuo_policy_set_method_idempotent(struct recuo_policy *policy,
                                                const char *method,
                                                size_t len,
                                                bool idempotent);

/**
 * Whether a 403 whose rate-limit headers say the quota is spent (`X-RateLimit-Remaining: 0`,
 * or `RateLimit` with `r=0`) is treated as a 429, with its reset as the server's wait
 * (default true: GitHub answers so). Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `policy` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_policy_set_quota_403_is_rate_limit(struct recuo_policy *policy, bool yes);

/**
 * The most attempts (as set). 0 when `policy` is NULL.
 *
 * # Safety
 * `policy` must be NULL or a live handle.
 */
uint32_t recuo_policy_max_attempts(const struct recuo_policy *policy);

/**
 * The base, in milliseconds (as set). 0 when `policy` is NULL.
 *
 * # Safety
 * `policy` must be NULL or a live handle.
 */
uint64_t recuo_policy_base_ms(const struct recuo_policy *policy);

/**
 * The cap, in milliseconds (as set). 0 when `policy` is NULL.
 *
 * # Safety
 * `policy` must be NULL or a live handle.
 */
uint64_t recuo_policy_cap_ms(const struct recuo_policy *policy);

/**
 * The jitter mode: a `recuo_jitter` constant. 0 when `policy` is NULL.
 *
 * # Safety
 * `policy` must be NULL or a live handle.
 */
uint32_t recuo_policy_jitter(const struct recuo_policy *policy);

/**
 * Whether the policy has a deadline; when it has, and `deadline_ms_out` is not NULL, stores
 * it there. False when `policy` is NULL.
 *
 * # Safety
 * `policy` must be NULL or a live handle; `deadline_ms_out` NULL or a writable `uint64_t`.
 */
bool recuo_policy_deadline_ms(const struct recuo_policy *policy, uint64_t *deadline_ms_out);

/**
 * Whether the policy has a fixed spread (`recuo_policy_set_spread_ms`); when it has, and
 * `spread_ms_out` is not NULL, stores it there. False when `policy` is NULL, and for the
 * default spread `min(window(n), 1000 ms)`.
 *
 * # Safety
 * `policy` must be NULL or a live handle; `spread_ms_out` NULL or a writable `uint64_t`.
 */
bool recuo_policy_spread_ms(const struct recuo_policy *policy, uint64_t *spread_ms_out);

/**
 * Whether the response's `Date` is "now" for server waits. False when `policy` is NULL.
 *
 * # Safety
 * `policy` must be NULL or a live handle.
 */
bool recuo_policy_use_date_header(const struct recuo_policy *policy);

/**
 * Whether the server honours idempotency keys (`recuo_policy_set_server_honours_keys`).
 * False when `policy` is NULL.
 *
 * # Safety
 * `policy` must be NULL or a live handle.
 */
bool recuo_policy_server_honours_keys(const struct recuo_policy *policy);

/**
 * Whether a 403 with a spent quota is a 429. False when `policy` is NULL.
 *
 * # Safety
 * `policy` must be NULL or a live handle.
 */
bool recuo_policy_quota_403_is_rate_limit(const struct recuo_policy *policy);

/**
 * Writes the idempotency header's name into `buf` (`len` bytes), as `recuo_status_message`
 * writes text: NUL-terminated, `*written` (when not NULL) = its length without the NUL.
 * Returns `RECUO_OK`, `RECUO_ERR_BUFFER_TOO_SMALL` (truncated, still terminated),
 * `RECUO_ERR_NULL_ARGUMENT` when `policy` or `buf` is NULL.
 *
 * # Safety
 * `policy` must be NULL or a live handle; `buf` must point to `len` writable bytes;
 * `written` must be NULL or point to a `size_t`.
 */
recuo_status recuo_policy_idempotency_header(const struct recuo_policy *policy,
                                             char *buf,
                                             size_t len,
                                             size_t *written);

/**
 * Writes the policy as one value — its plain form, one JSON object on one line — into `buf`
 * (`buf_len` bytes), NUL-terminated; `*written` (when not NULL) receives its length without
 * the NUL. What `recuo_policy_from_json` reads back into the same policy, and what every
 * language writes for it.
 *
 * Every field is written (see `recuo_policy_from_json` for their meaning): `max_attempts`,
 * `base_ms`, `cap_ms`, `jitter`, `deadline_ms` and `spread_ms` (`null` when none),
 * `idempotency_header`, `use_date_header`, `server_honours_keys`, `quota_403_as_rate_limit`;
 * the three maps `status_retry`, `transport_retry` and `idempotent_methods` list only the
 * rules that differ from the default classification (statuses as strings, methods in
 * capitals), so guide A's policy writes them empty.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written, cut at a character
 * boundary and NUL-terminated: no longer a JSON object — call again with a larger buffer);
 * with nothing written: `RECUO_ERR_NULL_ARGUMENT` (`policy` or `buf`),
 * `RECUO_ERR_LENGTH_TOO_LARGE`, or the policy's configuration error (a cap set below the
 * base: `RECUO_ERR_CAP_BELOW_BASE`).
 *
 * # Safety
 * `policy` must be NULL or a live handle; `buf` must point to `buf_len` writable bytes;
 * `written` must be NULL or point to a `size_t`.
 */
recuo_status recuo_policy_to_json(const struct recuo_policy *policy,
                                  char *buf,
                                  size_t buf_len,
                                  size_t *written);

/**
 * The rule for the HTTP status `status`: a `recuo_status_rule` constant. 0 when `policy` is
 * NULL or `status` is outside 400–599.
 *
 * # Safety
 * `policy` must be NULL or a live handle.
 */
uint32_t recuo_policy_status_retry(const struct recuo_policy *policy, uint16_t status);

/**
 * The rule for the transport failure `transport` (a `recuo_transport` constant): a
 * `recuo_status_rule` constant. 0 when `policy` is NULL or `transport` is no constant.
 *
 * # Safety
 * `policy` must be NULL or a live handle.
 */
uint32_t recuo_policy_transport_retry(const struct recuo_policy *policy, uint32_t transport);

/**
 * Whether the method named by the `len` bytes at `method` is idempotent under this policy
 * (ASCII case ignored). False when `policy` is NULL, for NULL `method` with `len > 0`, for
 * text that is not UTF-8 and for methods recuo does not know.
 *
 * # Safety
 * `policy` must be NULL or a live handle; `method` must point to `len` readable bytes (or be
 * NULL with `len == 0`).
 */
bool recuo_policy_method_idempotent(const struct recuo_policy *policy,
                                    const char *method,
                                    size_t len);

/**
 * The name of the `recuo_jitter` constant `jitter` (`"full"`, `"equal"`, `"decorrelated"`,
 * `"none"`), or `"unknown"`. Static: never free it. NULL only if recuo panicked.
 */
const char *recuo_jitter_name(uint32_t jitter);

/**
 * The name of the `recuo_status_rule` constant `rule` (`"never"`, `"if_idempotent"`,
 * `"always"`), or `"unknown"`. Static: never free it. NULL only if recuo panicked.
 */
const char *recuo_status_rule_name(uint32_t rule);

/**
 * Classifies one outcome under `policy`: success, retry (with the server's wait,
 * from `Retry-After` or the rate-limit headers) or give up, and why. Stores the
 * verdict in `*out`.
 *
 * * `outcome`: what the attempt came to.
 * * `method`, `method_len`: the request's HTTP method (ASCII case ignored; a method recuo
 *   does not know is never idempotent); it must be UTF-8. NULL only with `method_len` 0.
 * * `has_idempotency_key`: whether the request carried an idempotency key (then any method
 *   is safe to repeat).
 * * `headers`, `header_count`: the response's headers, in order (the first of a name wins);
 *   NULL only with `header_count` 0. Bytes that are not UTF-8 make that header invalid,
 *   never the call (see `recuo_header`).
 * * `now_ms`: the wall clock, milliseconds since the Unix epoch (`recuo_now_ms()`), for
 *   HTTP-dates and rate-limit resets; with `recuo_policy_set_use_date_header`, a valid
 *   `Date` header in `headers` takes its place.
 *
 * Returns `RECUO_OK`; the policy's configuration error (e.g. `RECUO_ERR_CAP_BELOW_BASE`);
 * `RECUO_ERR_NULL_ARGUMENT` (`policy`, `outcome`, `out`, or a pointer with a non-zero
 * length); `RECUO_ERR_INVALID_ENUM` for an outcome field that is no constant;
 * `RECUO_ERR_NOT_UTF8` for a method that is not UTF-8; `RECUO_ERR_LENGTH_TOO_LARGE`. On an
 * error `*out` is left untouched. Nothing is kept after the call.
 *
 * # Safety
 * Every pointer must be NULL or valid for its length; `out` must be NULL or point to a
 * writable `recuo_verdict`.
 */
recuo_status recuo_classify(const struct recuo_policy *policy,
                            const struct recuo_outcome *outcome,
                            const char *method,
                            size_t method_len,
                            bool has_idempotency_key,
                            const struct recuo_header *headers,
                            size_t header_count,
                            int64_t now_ms,
                            struct recuo_verdict *out);

/**
 * The name of the `recuo_outcome_kind` constant `kind` (`"success"`, `"status"`,
 * `"transport"`), or `"unknown"`. Static. NULL only if recuo panicked.
 */
const char *recuo_outcome_kind_name(uint32_t kind);

/**
 * The name of the `recuo_verdict_kind` constant `verdict` (`"success"`, `"retry"`,
 * `"give_up"`), or `"unknown"`. Static. NULL only if recuo panicked.
 */
const char *recuo_verdict_kind_name(uint32_t verdict);

/**
 * The name of the `recuo_cause` constant `cause` (`"success"`, `"rate_limited"`,
 * `"unavailable"`, `"server_error"`, `"connect"`, `"timeout"`, `"reset"`, `"other"`,
 * `"not_idempotent"`, `"permanent"`, `"tls"`: the names every language uses), or
 * `"unknown"`. Static. NULL only if recuo panicked.
 */
const char *recuo_cause_name(uint32_t cause);

/**
 * The name of the `recuo_wait_kind` constant `wait` (`"none"`, `"ms"`, `"unbounded"`), or
 * `"unknown"`. Static. NULL only if recuo panicked.
 */
const char *recuo_wait_kind_name(uint32_t wait);

/**
 * A new pool of `attempts` attempts (0 is allowed: every draw fails). Free it with
 * `recuo_attempt_pool_free`. NULL only if recuo panicked.
 */
struct recuo_attempt_pool *recuo_attempt_pool_new(uint32_t attempts);

/**
 * Releases a pool handle (the count lives on while a state machine or options use it).
 * NULL is accepted and ignored.
 *
 * # Safety
 * `pool` must be NULL or come from `recuo_attempt_pool_new` and not have been freed.
 */
void recuo_attempt_pool_free(struct recuo_attempt_pool *pool);

/**
 * Attempts left in the pool. 0 when `pool` is NULL.
 *
 * # Safety
 * `pool` must be NULL or a live handle.
 */
uint32_t recuo_attempt_pool_remaining(const struct recuo_attempt_pool *pool);

/**
 * The pool a loop that starts now draws its attempts from, by the one rule every language
 * follows; your program only keeps the answer where it keeps per-context state (a
 * thread-local, the request).
 *
 * * `enclosing` (NULL: none): the pool of the context — that of the outermost loop running
 *   on this thread (or in this request), if any.
 * * `max_attempts`: the loop's policy's attempts.
 * * `batch_operation`: the loop is one operation of a batch: it owns a pool of its own
 *   even inside another loop.
 * * `after_first`: the loop's first attempt was made before its machine
 *   (`recuo_attempts_start_after_first`): that attempt counts as drawn.
 *
 * Stores in `*pool_out` a new handle (free it with `recuo_attempt_pool_free`): the
 * enclosing pool itself (the same count) when the loop joins it, else a pool of its own
 * of `max_attempts` (`max_attempts - 1` after a first attempt). `*nested` (pass it to
 * `recuo_attempts_set_pool`) says whether the loop's first attempt is already drawn.
 * `*owned` says whether the pool is the loop's own: then make it the context's pool for
 * the loops nested inside, until this loop ends (and put back the one before).
 *
 * Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (an output); nothing is written on an
 * error.
 *
 * # Safety
 * `enclosing` must be NULL or a live handle; `pool_out`, `nested` and `owned` NULL or
 * writable.
 */
recuo_status recuo_loop_pool_choose(const struct recuo_attempt_pool *enclosing,
                                    uint32_t max_attempts,
                                    bool batch_operation,
                                    bool after_first,
                                    struct recuo_attempt_pool **pool_out,
                                    bool *nested,
                                    bool *owned);

/**
 * Creates the machine of one operation under `policy` (copied: the policy may be changed
 * or freed afterwards) and stores it in `*out`; jitter from the operating system's entropy.
 * Free it with `recuo_attempts_free`.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT`; the policy's configuration error (then
 * `*out` is untouched).
 *
 * # Safety
 * `policy` must be NULL or a live handle; `out` NULL or a writable pointer.
 */
recuo_status recuo_attempts_new(const struct recuo_policy *policy, struct recuo_attempts **out);

/**
 * `recuo_attempts_new` with the jitter drawn from a generator seeded with `seed` (the same
 * seed and outcomes give the same delays on every run and in every language). The
 * idempotency key still comes from the operating system's random source.
 *
 * # Safety
 * As `recuo_attempts_new`.
 */
recuo_status recuo_attempts_new_seeded(const struct recuo_policy *policy,
                                       uint64_t seed,
                                       struct recuo_attempts **out);

/**
 * Releases a machine. NULL is accepted and ignored.
 *
 * # Safety
 * `attempts` must be NULL or come from `recuo_attempts_new*` and not have been freed.
 */
void recuo_attempts_free(struct recuo_attempts *attempts);

/**
 * Makes this operation draw its attempts from `pool` (nested loops share one limit).
 * `nested` = false for the outermost operation (each of its attempts takes one from the
 * pool); true for an operation running inside an attempt of an enclosing one that already
 * took from the pool: its first attempt is that one and takes nothing, the later ones take
 * one each. When the pool is empty, the machine gives up with
 * `RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED`.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED` once started (nothing changes);
 * `RECUO_ERR_NULL_ARGUMENT`. The machine keeps its own reference to the pool.
 *
 * # Safety
 * `attempts` and `pool` must each be NULL or a live handle.
 */
recuo_status recuo_attempts_set_pool(struct recuo_attempts *attempts,
                                     const struct recuo_attempt_pool *pool,
                                     bool nested);

/**
 * Sends every attempt through `gate`: with a regulator or a
 * concurrency limit, each attempt's step is first `RECUO_STEP_ENTER` — a program that may
 * block passes it with `recuo_gate_wait`, then `recuo_attempts_entered`; one that must not
 * block (an event loop) asks the machine itself with `recuo_attempts_poll_gate` and waits
 * as long as it says, without blocking, between looks. Its budget counts first attempts and
 * pays for retries (none left: `RECUO_GIVE_UP_BUDGET_EXHAUSTED`); an adaptive regulator
 * slows down on a `rate_limited` verdict and speeds back up on a success. The machine keeps
 * its own reference to the gate's parts.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED`; `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `attempts` and `gate` must each be NULL or a live handle.
 */
recuo_status recuo_attempts_set_gate(struct recuo_attempts *attempts,
                                     const struct recuo_gate *gate);

/**
 * Counts this operation's starts, causes and result into `recorder` (shared by
 * as many operations as you like). Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED`;
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `attempts` and `recorder` must each be NULL or a live handle.
 */
recuo_status recuo_attempts_set_stats_recorder(struct recuo_attempts *attempts,
                                               const struct recuo_stats_recorder *recorder);

/**
 * Names the request the operation sends: its HTTP method (`method_len` bytes, UTF-8; it
 * decides the classification of `recuo_attempts_responded`; empty means GET there) and its
 * URL (`url_len` bytes; redacted in the records; bytes that are not UTF-8 read as U+FFFD).
 * Both are copied.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED`; `RECUO_ERR_NULL_ARGUMENT`;
 * `RECUO_ERR_NOT_UTF8` (`method`); `RECUO_ERR_LENGTH_TOO_LARGE`.
 *
 * # Safety
 * `attempts` must be NULL or a live handle; `method` and `url` NULL or valid for their
 * lengths.
 */
recuo_status recuo_attempts_set_request(struct recuo_attempts *attempts,
                                        const char *method,
                                        size_t method_len,
                                        const char *url,
                                        size_t url_len);

/**
 * Keeps the records of level `min_level` and above (a `recuo_level` constant;
 * `RECUO_LEVEL_NONE`: none, the default), for `recuo_attempts_poll_record`.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM`; `RECUO_ERR_ALREADY_STARTED`;
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `attempts` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_attempts_set_records(struct recuo_attempts *attempts, uint32_t min_level);

/**
 * Whether the failure of an attempt after which none is left is judged too: true by
 * default (a permanent last failure gives up `permanent`); false is guide
 * A's loop (`recuo_attempts_failed` then gives up `attempts_exhausted` at once).
 *
 * Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED`; `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `attempts` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_attempts_set_classify_last_failure(struct recuo_attempts *attempts, bool yes);

/**
 * Says the caller sends an idempotency key of its own with every attempt: the request is
 * then idempotent whatever its method for `recuo_attempts_responded`.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED`; `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `attempts` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_attempts_set_own_key(struct recuo_attempts *attempts);

/**
 * Starts the operation at `now_ms` on your monotonic clock, which is `unix_ms` on the wall
 * clock (the records' times): the first step. Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT`. Every step function answers out of turn by repeating the step
 * the machine waits on.
 *
 * # Safety
 * `attempts` must be NULL or a live handle not in use by another thread; `out` NULL or a
 * writable `recuo_step`.
 */
recuo_status recuo_attempts_start(struct recuo_attempts *attempts,
                                  uint64_t now_ms,
                                  int64_t unix_ms,
                                  struct recuo_step *out);

/**
 * Whether an operation whose first attempt succeeds still needs its machine, given its
 * gate (`gate`, NULL: none), whether it counts stats (`stats`) and the records it keeps
 * (`min_level`, a `recuo_level` constant; `RECUO_LEVEL_NONE`: none). Stores the answer in
 * `*out`. When false, make attempt 0 before creating any machine: a success then needs
 * nothing more; on a failure create the machine and start it with
 * `recuo_attempts_start_after_first`. Ask once per policy and gate and keep the answer
 * (the gate's parts do not change what it says). A gate with a regulator, a limit or a
 * budget needs the machine, as do stats and records of level debug.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM`; `RECUO_ERR_NULL_ARGUMENT` (`out`).
 *
 * # Safety
 * `gate` must be NULL or a live handle; `out` NULL or a writable `bool`.
 */
recuo_status recuo_success_needs_machine(const struct recuo_gate *gate,
                                         bool stats,
                                         uint32_t min_level,
                                         bool *out);

/**
 * Starts the operation whose first attempt you already made, before creating the machine
 * (see `recuo_success_needs_machine`: when a success needs no machine, make attempt 0
 * first and create the machine only if it fails). `now_ms` is when that attempt began on
 * your monotonic clock, `unix_ms` the same instant on the wall clock. Stores that attempt's
 * `RECUO_STEP_CALL` (attempt 0), counted and recorded as begun at `now_ms`: tell its
 * outcome next (`recuo_attempts_responded`, `_failed`, `_failed_noted`, `_succeeded`). The
 * attempt passed no gate: the gate is not entered for it. Give the machine the pool
 * `recuo_loop_pool_choose` answers with `after_first` true, so that the attempt counts as
 * drawn. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`; on a started machine, the step it
 * waits on.
 *
 * # Safety
 * As `recuo_attempts_start`.
 */
recuo_status recuo_attempts_start_after_first(struct recuo_attempts *attempts,
                                              uint64_t now_ms,
                                              int64_t unix_ms,
                                              struct recuo_step *out);

/**
 * The gate's answer for `RECUO_STEP_ENTER`, at `now_ms`: `passed` is false when the wait
 * was cancelled or reached `until_ms` (an attempt not made is not counted).
 *
 * # Safety
 * As `recuo_attempts_start`.
 */
recuo_status recuo_attempts_entered(struct recuo_attempts *attempts,
                                    uint64_t now_ms,
                                    bool passed,
                                    struct recuo_step *out);

/**
 * One look at the gate for `RECUO_STEP_ENTER` at `now_ms`, without blocking: for a program
 * that must not block its thread (an event loop). The machine takes a place in flight
 * first, then a start slot from the regulator, within the deadline. On `RECUO_OK`:
 *
 * * `*wait_ms > 0`: not yet — wait that long (without blocking; a cancellation may end the
 *   wait early), then look again. While the concurrency limit is full the wait is never
 *   more than 5 ms; once a start slot is reserved, it is the time until that slot. `*out`
 *   is left untouched.
 * * `*wait_ms == 0`: `*out` is the next step — the attempt's `RECUO_STEP_CALL`, or the
 *   give-up (`RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` when the place or the slot would come
 *   after the deadline; `RECUO_GIVE_UP_CANCELLED` or `RECUO_GIVE_UP_QUEUE_STOPPED` after
 *   `recuo_attempts_cancel` or `recuo_attempts_stop_queue`).
 *
 * The machine holds the place itself until the attempt ends (there is no pass to release),
 * and gives back a reserved slot it did not use. Do not also call `recuo_gate_wait` or
 * `recuo_attempts_entered` for this step. Out of turn (the machine waits on another step)
 * it answers `*wait_ms == 0` and that step.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_IO` when the limit or the regulator is on a store (Redis)
 * that cannot be used — nothing is held and the machine still waits at `RECUO_STEP_ENTER`
 * (look again later, or `recuo_attempts_cancel`); `RECUO_ERR_NULL_ARGUMENT`. On an error
 * the outputs are untouched.
 *
 * # Safety
 * As `recuo_attempts_start`; `wait_ms` NULL or a writable `uint64_t`.
 */
recuo_status recuo_attempts_poll_gate(struct recuo_attempts *attempts,
                                      uint64_t now_ms,
                                      uint64_t *wait_ms,
                                      struct recuo_step *out);

/**
 * `recuo_attempts_poll_gate` with the regulator asked at `regulator_now_ns` on a clock
 * every user of the regulator shares (a fake clock in tests, as the regulator's `_at`
 * functions take), instead of its own.
 *
 * # Safety
 * As `recuo_attempts_poll_gate`.
 */
recuo_status recuo_attempts_poll_gate_at(struct recuo_attempts *attempts,
                                         uint64_t now_ms,
                                         uint64_t regulator_now_ns,
                                         uint64_t *wait_ms,
                                         struct recuo_step *out);

/**
 * The attempt of `RECUO_STEP_CALL` succeeded at `now_ms`.
 *
 * # Safety
 * As `recuo_attempts_start`.
 */
recuo_status recuo_attempts_succeeded(struct recuo_attempts *attempts,
                                      uint64_t now_ms,
                                      struct recuo_step *out);

/**
 * The attempt of `RECUO_STEP_CALL` failed at `now_ms`: answers `RECUO_STEP_CLASSIFY` (or,
 * with `recuo_attempts_set_classify_last_failure(false)` and no attempt left, gives up).
 *
 * # Safety
 * As `recuo_attempts_start`.
 */
recuo_status recuo_attempts_failed(struct recuo_attempts *attempts,
                                   uint64_t now_ms,
                                   struct recuo_step *out);

/**
 * As `recuo_attempts_failed`, saying what the attempt's record shows it received. The
 * record shows, first, what the attempt said it received (`seen`: an outcome and its
 * response's headers); else what the verdict's classifier saw (`recuo_attempts_judged_seen`);
 * else what the attempt's error carried (`error_seen`: a response attached to the error);
 * else an error with no HTTP meaning. Either outcome may be NULL: nothing said (its headers
 * are then not read).
 *
 * Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM` (an outcome's field is no constant);
 * `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_LENGTH_TOO_LARGE` (nothing changes on an error).
 *
 * # Safety
 * As `recuo_attempts_start`; each outcome NULL or readable; each `headers` must point to
 * its `header_count` readable `recuo_header`s (or be NULL with 0).
 */
recuo_status recuo_attempts_failed_noted(struct recuo_attempts *attempts,
                                         uint64_t now_ms,
                                         const struct recuo_outcome *seen,
                                         const struct recuo_header *seen_headers,
                                         size_t seen_header_count,
                                         const struct recuo_outcome *error_seen,
                                         const struct recuo_header *error_headers,
                                         size_t error_header_count,
                                         struct recuo_step *out);

/**
 * The verdict `*verdict` (from `recuo_classify`, or written by hand) on the failure of
 * `RECUO_STEP_CLASSIFY`, at `now_ms`. Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM` (a field
 * of `*verdict` is no constant; nothing changes); `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * As `recuo_attempts_start`; `verdict` NULL or a readable `recuo_verdict`.
 */
recuo_status recuo_attempts_judged(struct recuo_attempts *attempts,
                                   uint64_t now_ms,
                                   const struct recuo_verdict *verdict,
                                   struct recuo_step *out);

/**
 * As `recuo_attempts_judged`, with what the verdict's classifier saw of the attempt
 * (`seen`: an outcome and its response's headers; NULL: nothing): the attempt's record
 * shows it unless the attempt itself said what it received (see
 * `recuo_attempts_failed_noted`). Returns as `recuo_attempts_judged`, and
 * `RECUO_ERR_LENGTH_TOO_LARGE`.
 *
 * # Safety
 * As `recuo_attempts_judged`; `seen` NULL or readable; `seen_headers` must point to
 * `seen_header_count` readable `recuo_header`s (or be NULL with 0).
 */
recuo_status recuo_attempts_judged_seen(struct recuo_attempts *attempts,
                                        uint64_t now_ms,
                                        const struct recuo_verdict *verdict,
                                        const struct recuo_outcome *seen,
                                        const struct recuo_header *seen_headers,
                                        size_t seen_header_count,
                                        struct recuo_step *out);

/**
 * The HTTP attempt of `RECUO_STEP_CALL` ended at `now_ms` with `*outcome` (a status or a
 * transport failure) and the response's headers: the machine classifies it by the policy
 * with the request's method (`recuo_attempts_set_request`) and keeps what its
 * record needs. Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM`; `RECUO_ERR_NULL_ARGUMENT`;
 * `RECUO_ERR_LENGTH_TOO_LARGE` (nothing changes on an error).
 *
 * # Safety
 * As `recuo_attempts_start`; `outcome` NULL or readable; `headers` must point to
 * `header_count` readable `recuo_header`s (or be NULL with 0).
 */
recuo_status recuo_attempts_responded(struct recuo_attempts *attempts,
                                      uint64_t now_ms,
                                      const struct recuo_outcome *outcome,
                                      const struct recuo_header *headers,
                                      size_t header_count,
                                      struct recuo_step *out);

/**
 * The verdict `recuo_attempts_responded` would act on for this outcome at `now_ms` — the
 * policy's classification with the operation's method and key — into `*out`; nothing
 * changes. A host whose retry budget answers through it (a budget on Redis through the
 * host's own client) asks the budget first: `recuo_attempts_failed_noted` with the response,
 * then `recuo_attempts_judged_seen` with this verdict, is `recuo_attempts_responded`.
 * Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT`; an outcome or header error.
 *
 * # Safety
 * `attempts` NULL or a live handle; `outcome` NULL or readable; `headers` must point to
 * `header_count` readable `recuo_header`s (or be NULL with 0); `out` NULL or writable.
 */
recuo_status recuo_attempts_response_verdict(const struct recuo_attempts *attempts,
                                             uint64_t now_ms,
                                             const struct recuo_outcome *outcome,
                                             const struct recuo_header *headers,
                                             size_t header_count,
                                             struct recuo_verdict *out);

/**
 * The wait of `RECUO_STEP_SLEEP` is over at `now_ms` (or was cut short by a cancellation).
 *
 * # Safety
 * As `recuo_attempts_start`.
 */
recuo_status recuo_attempts_slept(struct recuo_attempts *attempts,
                                  uint64_t now_ms,
                                  struct recuo_step *out);

/**
 * Cancels the operation (your own cancellation): the next step asked for gives up
 * `RECUO_GIVE_UP_CANCELLED` — an attempt in flight still ends as it ends. Call it on the
 * thread that drives the machine. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `attempts` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_attempts_cancel(struct recuo_attempts *attempts);

/**
 * Stops the operation because its batch queue stopped on `reason` (a `recuo_give_up_reason`
 * constant, another operation's: `recuo_batch_queue_finished` said so): it gives up
 * `RECUO_GIVE_UP_QUEUE_STOPPED`, with `stopped_by` = `reason` in its report. Returns
 * `RECUO_OK`; `RECUO_ERR_INVALID_ENUM` (no constant, or NONE); `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `attempts` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_attempts_stop_queue(struct recuo_attempts *attempts, uint32_t reason);

/**
 * Takes the next record the machine made (with `recuo_attempts_set_records`), in order: its
 * level in `*level_out` and its JSON line (redacted, see `recuo_record_attempt_json` and
 * `recuo_record_result_json`) into `buf` (`len` bytes, NUL-terminated; `*written`, when not
 * NULL, receives its length). None left: `*level_out` = `RECUO_LEVEL_NONE` and `buf` holds
 * an empty string.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written; the record stays
 * first in line: call again with a larger buffer); `RECUO_ERR_NULL_ARGUMENT` (`attempts`,
 * `level_out`, `buf`).
 *
 * # Safety
 * `attempts` must be NULL or a live handle not in use by another thread; `level_out` NULL
 * or writable; `buf` must point to `len` writable bytes; `written` NULL or writable.
 */
recuo_status recuo_attempts_poll_record(struct recuo_attempts *attempts,
                                        recuo_level *level_out,
                                        char *buf,
                                        size_t len,
                                        size_t *written);

/**
 * What the record `recuo_attempts_poll_record` gave last means to telemetry, as JSON (see
 * `recuo_telemetry_json`: its operation's number, its span, its metric points), into `buf`
 * (`len` bytes, NUL-terminated; `*written`, when not NULL, receives its length); an empty
 * string when no record was polled yet, or the last poll found none.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written);
 * `RECUO_ERR_NULL_ARGUMENT` (`attempts`, `buf`).
 *
 * # Safety
 * `attempts` must be NULL or a live handle not in use by another thread; `buf` must point to
 * `len` writable bytes; `written` NULL or writable.
 */
recuo_status recuo_attempts_record_telemetry(struct recuo_attempts *attempts,
                                             char *buf,
                                             size_t len,
                                             size_t *written);

/**
 * Writes the operation's idempotency key into `buf` (`len` bytes, at least
 * `RECUO_IDEMPOTENCY_KEY_SIZE` = 37): a UUID v4 of 36 lower-case characters
 * (`xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`) and a NUL, from the operating system's
 * random source. It is created at the first call and the same on every later call for this
 * operation; send it with every attempt, in the header named by
 * `recuo_policy_idempotency_header`, and never with another operation. `*written` (when not
 * NULL) receives 36.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` when `len < 37` — then nothing at all is
 * written (a truncated key must never be sent); `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `attempts` must be NULL or a live handle not in use by another thread; `buf` must point to
 * `len` writable bytes; `written` NULL or a writable `size_t`.
 */
recuo_status recuo_attempts_idempotency_key(struct recuo_attempts *attempts,
                                            char *buf,
                                            size_t len,
                                            size_t *written);

/**
 * The operation so far: stores the report in `*out`, copies the first
 * `min(delays_len, out->delay_count)` delays (milliseconds, in order) into `delays`, and
 * stores how many were copied in `*delays_written` (when not NULL). Copying fewer delays than
 * there are is not an error: compare `*delays_written` with `out->delay_count`. `delays` may
 * be NULL when `delays_len` is 0.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (`attempts`, `out`, or `delays` with
 * `delays_len > 0`); `RECUO_ERR_LENGTH_TOO_LARGE`. On an error nothing is written.
 *
 * # Safety
 * `attempts` must be NULL or a live handle; `out` NULL or a writable `recuo_report`;
 * `delays` must point to `delays_len` writable `uint64_t`s (or be NULL with `delays_len ==
 * 0`); `delays_written` NULL or a writable `size_t`.
 */
recuo_status recuo_attempts_report(const struct recuo_attempts *attempts,
                                   struct recuo_report *out,
                                   uint64_t *delays,
                                   size_t delays_len,
                                   size_t *delays_written);

/**
 * The name of the `recuo_give_up_reason` constant `reason` (`"none"`, `"permanent"`,
 * `"attempts_exhausted"`, `"wait_exceeds_deadline"`, `"budget_exhausted"`, `"cancelled"`,
 * `"queue_stopped"`: the names every language uses), or `"unknown"`. Static. NULL only if
 * recuo panicked.
 */
const char *recuo_give_up_reason_name(uint32_t reason);

/**
 * The name of the `recuo_step_kind` constant `kind` (`"enter"`, `"call"`, `"classify"`,
 * `"sleep"`, `"done"`, `"gave_up"`: as the loop vectors write them), or `"unknown"`.
 * Static. NULL only if recuo panicked.
 */
const char *recuo_step_kind_name(uint32_t kind);

/**
 * The name of the `recuo_level` constant `level` (`"none"`, `"debug"`, `"info"`,
 * `"warning"`), or `"unknown"`. Static. NULL only if recuo panicked.
 */
const char *recuo_level_name(uint32_t level);

/**
 * The plan of a request under `policy`: the key its attempts carry and whether it counts as
 * idempotent, into `*out`. The rules, the same in every language:
 *
 * * a request that already carries the policy's idempotency header (`callers_key`) sends
 *   the caller's key as it is, and counts as idempotent (the caller vouches for it);
 * * otherwise recuo adds its own key when `send_keys` says so: `1` yes, `0` no, `-1` the
 *   default — to methods the policy does not call idempotent (POST, PATCH);
 * * a request is idempotent when its method is (GET, HEAD, OPTIONS, TRACE, PUT and DELETE
 *   by default, in any ASCII case), or when it carries recuo's key and the policy says the
 *   server honours keys (`recuo_policy_set_server_honours_keys`).
 *
 * * `method`, `method_len`: the HTTP method, UTF-8.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (`policy`, `out`, or `method` NULL with a
 * non-zero length); `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_LENGTH_TOO_LARGE`;
 * `RECUO_ERR_INVALID_ENUM` (`send_keys` not -1, 0 or 1); the policy's configuration error.
 * On an error `*out` is untouched.
 *
 * # Safety
 * `policy` must be NULL or a live handle; `method` NULL or `method_len` readable bytes; `out`
 * NULL or a writable `recuo_request_plan`.
 */
recuo_status recuo_plan_request(const struct recuo_policy *policy,
                                const char *method,
                                size_t method_len,
                                bool callers_key,
                                int32_t send_keys,
                                struct recuo_request_plan *out);

/**
 * How an operation that ended for `reason` (a `recuo_give_up_reason` constant;
 * `RECUO_GIVE_UP_NONE`: it succeeded) reaches a caller of `style` (a `recuo_style`
 * constant), its last attempt having come to `*last`; into `*out`. The rules, the same in
 * every language:
 *
 * * a success returns its response;
 * * no attempt made, or an attempt the deadline cut, gives up;
 * * a transport failure returns the client's own error;
 * * a response is returned — but a server wait past the deadline
 *   (`RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE`) gives up carrying it, and in
 *   `RECUO_STYLE_GUIDE` a last 429 or 5xx gives up.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (`last`, `out`); `RECUO_ERR_INVALID_ENUM`.
 * On an error `*out` is untouched.
 *
 * # Safety
 * `last` must be NULL or a readable `recuo_last`; `out` NULL or a writable `recuo_ending`.
 */
recuo_status recuo_ending_for(uint32_t style,
                              uint32_t reason,
                              const struct recuo_last *last,
                              recuo_ending *out);

/**
 * The message of a give-up, the same in every language, into `buf` (`len` bytes),
 * NUL-terminated; `*written` (when not NULL) receives its length without the NUL. For
 * example `recuo gave up after 2 attempts (wait_exceeds_deadline): HTTP 429; a retry is
 * allowed in 3600 s`.
 *
 * * `reason`: a `recuo_give_up_reason` constant other than `RECUO_GIVE_UP_NONE`;
 * * `attempts`: the attempts made;
 * * `last`: what the last one came to;
 * * `has_retry_in`, `retry_in_ms`: how long from now until a retry would be allowed, when
 *   known (shown in whole seconds, rounded up; 0 says "now").
 *
 * 256 bytes always suffice. Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is
 * written, NUL-terminated); `RECUO_ERR_NULL_ARGUMENT` (`buf`, `last`);
 * `RECUO_ERR_INVALID_ENUM` (`RECUO_GIVE_UP_NONE` too: there is no give-up to tell), with
 * nothing written.
 *
 * # Safety
 * `last` must be NULL or a readable `recuo_last`; `buf` must point to `len` writable bytes;
 * `written` NULL or a writable `size_t`.
 */
recuo_status recuo_give_up_message(uint32_t reason,
                                   uint32_t attempts,
                                   const struct recuo_last *last,
                                   bool has_retry_in,
                                   uint64_t retry_in_ms,
                                   char *buf,
                                   size_t len,
                                   size_t *written);

/**
 * Plans the machine's request (as `recuo_plan_request` does, by the machine's own policy)
 * and sends it as planned: a request the plan calls idempotent has a failure whose outcome
 * is unknown judged retryable. The plan is also stored in `*out` when `out` is not NULL:
 * with `RECUO_KEY_RECUO`, add `recuo_attempts_idempotency_key` to every attempt in the
 * policy's header; with `RECUO_KEY_CALLER`, send your own as it is.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED` (nothing changes); the errors of
 * `recuo_plan_request`. On an error nothing is written.
 *
 * # Safety
 * `attempts` must be NULL or a live handle not in use by another thread; `method` NULL or
 * `method_len` readable bytes; `out` NULL or a writable `recuo_request_plan`.
 */
recuo_status recuo_attempts_set_plan(struct recuo_attempts *attempts,
                                     const char *method,
                                     size_t method_len,
                                     bool callers_key,
                                     int32_t send_keys,
                                     struct recuo_request_plan *out);

/**
 * `recuo_attempts_set_plan`, with the caller's key found among the request's own `headers`
 * (`header_count` of them; NULL only with 0): the request carries the caller's key when one
 * of them is named as the policy's idempotency header (`recuo_policy_idempotency_header`,
 * without regard to ASCII case). Header bytes that are not UTF-8 are read as U+FFFD.
 *
 * Returns the statuses of `recuo_attempts_set_plan`, and `RECUO_ERR_NULL_ARGUMENT` for
 * `headers` (or a header's bytes) NULL with a non-zero length.
 *
 * # Safety
 * As `recuo_attempts_set_plan`; `headers` must point to `header_count` readable
 * `recuo_header`s (or be NULL with 0), each pointing to its bytes.
 */
recuo_status recuo_attempts_set_plan_for_headers(struct recuo_attempts *attempts,
                                                 const char *method,
                                                 size_t method_len,
                                                 const struct recuo_header *headers,
                                                 size_t header_count,
                                                 int32_t send_keys,
                                                 struct recuo_request_plan *out);

/**
 * Says whether the request's body can be sent again (default true). A body that cannot — a
 * stream read once — gets one attempt: its outcome is judged and recorded, and the operation
 * gives up `RECUO_GIVE_UP_ATTEMPTS_EXHAUSTED` with no retry decided and no budget spent.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED` (nothing changes);
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `attempts` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_attempts_set_replayable(struct recuo_attempts *attempts, bool yes);

/**
 * How the machine's operation reaches a caller of `style` (a `recuo_style` constant), its
 * last attempt having come to `*last`, into `*out` — `recuo_ending_for` with the machine's
 * reason; `RECUO_ENDING_RESPONSE` while it runs.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_INVALID_ENUM`. On an error
 * `*out` is untouched.
 *
 * # Safety
 * `attempts` must be NULL or a live handle; `last` NULL or a readable `recuo_last`; `out`
 * NULL or a writable `recuo_ending`.
 */
recuo_status recuo_attempts_ending(const struct recuo_attempts *attempts,
                                   uint32_t style,
                                   const struct recuo_last *last,
                                   recuo_ending *out);

/**
 * The message of the machine's give-up (as `recuo_give_up_message` words it: its reason,
 * its attempts, `*last`, and the wait left at `now_ms` on your monotonic clock after a
 * server wait past the deadline), into `buf` (`len` bytes), NUL-terminated; `*written`
 * (when not NULL) receives its length without the NUL. An operation that did not give up
 * (it succeeded, or still runs) has no message: "" is written.
 *
 * 256 bytes always suffice. Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is
 * written, NUL-terminated); `RECUO_ERR_NULL_ARGUMENT` (`attempts`, `last`, `buf`);
 * `RECUO_ERR_INVALID_ENUM`, with nothing written.
 *
 * # Safety
 * `attempts` must be NULL or a live handle; `last` NULL or a readable `recuo_last`; `buf`
 * must point to `len` writable bytes; `written` NULL or a writable `size_t`.
 */
recuo_status recuo_attempts_give_up_message(const struct recuo_attempts *attempts,
                                            uint64_t now_ms,
                                            const struct recuo_last *last,
                                            char *buf,
                                            size_t len,
                                            size_t *written);

/**
 * The name of the `recuo_key_to_send` constant `key` (`"none"`, `"caller"`, `"recuo"`: the
 * names every language uses), or `"unknown"`. Static. NULL only if recuo panicked.
 */
const char *recuo_key_to_send_name(uint32_t key);

/**
 * The name of the `recuo_style` constant `style` (`"client"`, `"guide"`), or `"unknown"`.
 * Static. NULL only if recuo panicked.
 */
const char *recuo_style_name(uint32_t style);

/**
 * The name of the `recuo_ending` constant `ending` (`"response"`, `"error"`, `"give_up"`),
 * or `"unknown"`. Static. NULL only if recuo panicked.
 */
const char *recuo_ending_name(uint32_t ending);

/**
 * The name of the `recuo_last_kind` constant `kind` (`"nothing"`, `"status"`,
 * `"transport"`, `"late"`), or `"unknown"`. Static. NULL only if recuo panicked.
 */
const char *recuo_last_kind_name(uint32_t kind);

/**
 * A new token, not cancelled. Free it with `recuo_cancel_token_free`. NULL only if recuo
 * panicked.
 */
struct recuo_cancel_token *recuo_cancel_token_new(void);

/**
 * Releases a token handle. NULL is accepted and ignored.
 *
 * # Safety
 * `token` must be NULL or come from `recuo_cancel_token_new`, not have been freed, and not
 * be in use by another thread.
 */
void recuo_cancel_token_free(struct recuo_cancel_token *token);

/**
 * Cancels: every `recuo_retry` using this token stops (a sleeping one wakes at once, and
 * gives up with `RECUO_GIVE_UP_CANCELLED`). Callable from any thread, any number of times.
 * Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `token` must be NULL or a live handle.
 */
recuo_status recuo_cancel_token_cancel(const struct recuo_cancel_token *token);

/**
 * Whether the token was cancelled. False when `token` is NULL.
 *
 * # Safety
 * `token` must be NULL or a live handle.
 */
bool recuo_cancel_token_is_cancelled(const struct recuo_cancel_token *token);

/**
 * Tells `recuo_retry_http` what the attempt running came to: `outcome` (a status, a
 * transport failure, or a success for a task with no HTTP meaning) and the response's
 * headers (`headers`, `header_count`; NULL only with 0). recuo copies them before this
 * returns (your buffers may go at once); a second call replaces the first. The records keep
 * of the headers only the request id and the wait headers; header bytes that are not UTF-8
 * are read as U+FFFD (see `recuo_header`).
 *
 * Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (`context`, `outcome`, or a pointer NULL
 * with a non-zero length); `RECUO_ERR_INVALID_ENUM` (a field of `outcome` that is none of
 * its constants); `RECUO_ERR_LENGTH_TOO_LARGE`. On an error nothing is set.
 *
 * # Safety
 * `context` must be NULL or the handle passed to the running operation; `outcome` NULL or a
 * readable `recuo_outcome`; `headers` must point to `header_count` readable `recuo_header`s
 * (or be NULL with 0), each pointing to its bytes.
 */
recuo_status recuo_attempt_context_set_response(struct recuo_attempt_context *context,
                                                const struct recuo_outcome *outcome,
                                                const struct recuo_header *headers,
                                                size_t header_count);

/**
 * New options with the defaults: jitter seeded by the operating system, real sleeps
 * and clocks, no cancellation token, no attempt pool, no gate, no hooks, no record sink (and
 * an empty method and URL), no stats recorder. Free them with
 * `recuo_retry_options_free`. NULL only if recuo panicked.
 */
struct recuo_retry_options *recuo_retry_options_new(void);

/**
 * Releases an options handle. NULL is accepted and ignored.
 *
 * # Safety
 * `options` must be NULL or come from `recuo_retry_options_new` and not have been freed.
 */
void recuo_retry_options_free(struct recuo_retry_options *options);

/**
 * Draws the jitter from a generator seeded with `seed`: the same seed and outcomes give the
 * same delays on every run. The idempotency key still comes from the operating system's
 * random source (a seed never makes a key). Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `options` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_retry_options_set_seed(struct recuo_retry_options *options, uint64_t seed);

/**
 * Replaces the real sleep with `sleep_ms`, called with each non-zero delay and the call's
 * `user_data` (for tests, and for callers with their own timers); NULL restores the real
 * sleep. A cancellation cannot interrupt your sleep: it is seen when it returns. Returns
 * `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `options` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_retry_options_set_sleep(struct recuo_retry_options *options,
                                           recuo_sleep_fn sleep_ms);

/**
 * Makes `recuo_retry` stop when `token` is cancelled (see `recuo_cancel_token`); NULL
 * removes the token. The options keep their own reference to the flag. Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT` (for `options`).
 *
 * # Safety
 * `options` must be NULL or a live handle not in use by another thread; `token` NULL or a
 * live handle.
 */
recuo_status recuo_retry_options_set_cancel_token(struct recuo_retry_options *options,
                                                  const struct recuo_cancel_token *token);

/**
 * Makes `recuo_retry` draw its attempts from `pool` (nested loops share one limit);
 * `nested` as in `recuo_attempts_set_pool` (false for the outermost loop, true for a loop
 * running inside an attempt of one). NULL removes the pool. The options keep their own
 * reference to the count. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT` (for `options`).
 *
 * # Safety
 * `options` must be NULL or a live handle not in use by another thread; `pool` NULL or a
 * live handle.
 */
recuo_status recuo_retry_options_set_pool(struct recuo_retry_options *options,
                                          const struct recuo_attempt_pool *pool,
                                          bool nested);

/**
 * Sets the hook called before each sleep (see `recuo_on_retry_fn`); NULL removes it.
 * Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `options` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_retry_options_set_on_retry(struct recuo_retry_options *options,
                                              recuo_on_retry_fn on_retry);

/**
 * Sets the hook called once on giving up (see `recuo_on_give_up_fn`); NULL removes it.
 * Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `options` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_retry_options_set_on_give_up(struct recuo_retry_options *options,
                                                recuo_on_give_up_fn on_give_up);

/**
 * Sends every attempt of `recuo_retry` through `gate`; NULL removes the
 * gate. The options keep their own reference to the gate as it is now (its regulator, limit
 * and budget are shared, not copied), so the handle may be freed or changed afterwards
 * without changing the options. With a gate, `recuo_retry`:
 *
 * * before each attempt, first or retry, waits for a place in flight, then for a start
 *   slot (blocking the calling thread; the options' cancellation token wakes it, and the
 *   loop then gives up with `RECUO_GIVE_UP_CANCELLED`);
 * * gives the place back as soon as the operation returns — before the hook and any sleep;
 * * takes a retry from the gate's budget before each sleep: none left, and it gives up with
 *   `RECUO_GIVE_UP_BUDGET_EXHAUSTED` (attempt 0 is counted by the budget);
 * * tells an adaptive regulator to slow down on a `RECUO_CAUSE_RATE_LIMITED` verdict and to
 *   speed back up on a success;
 * * stops with the gate's error when its regulator or limit is on a Redis server that
 *   cannot be used (`RECUO_ERR_IO`, or `RECUO_ERR_SHARED_MISMATCH`): that attempt is not
 *   made, and the report says what was (see `recuo_retry`).
 *
 * A sleep callback (`recuo_retry_options_set_sleep`) replaces the sleeps between attempts
 * only: waiting at the gate is always real. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`
 * (for `options`).
 *
 * # Safety
 * `options` must be NULL or a live handle not in use by another thread; `gate` NULL or a
 * live handle.
 */
recuo_status recuo_retry_options_set_gate(struct recuo_retry_options *options,
                                          const struct recuo_gate *gate);

/**
 * Sends the records of every `recuo_retry_http` and `recuo_retry` call made with these
 * options to `sink`, as JSON lines (see `recuo_record_sink_fn`), with the call's
 * `user_data`, on the calling thread; NULL removes the sink.
 *
 * * `recuo_retry_http` hands over one attempt record per attempt made, just after the
 *   decision that followed it — before the `on_retry` hook and the sleep, or before the
 *   result — then one result record: the start (RFC 3339, UTC), elapsed time, method,
 *   redacted URL, status or transport failure, request id, wait headers, the delay chosen,
 *   the decision (`retry`, `give_up`, `done`) and its reason (see
 *   `recuo_record_attempt_json`), and the result (`success` or `gave_up`, the attempts, the
 *   reason, the total time: see `recuo_record_result_json`). The `on_give_up` hook runs
 *   after the records.
 * * `recuo_retry`, whose operation tells recuo nothing of the response, hands over the same
 *   records with no HTTP meaning (a failed attempt as transport `other`).
 *
 * The records are the operation machine's journal, the same in every language.
 *
 * Every URL and header is redacted by the core before a record exists; the records name the
 * request set by `recuo_retry_options_set_request`. A loop that stops with
 * `RECUO_ERR_NO_VERDICT` or `RECUO_ERR_NO_RESPONSE` ends as a permanent failure does: the
 * attempt's record, then a result record with reason `permanent`. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `options` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_retry_options_set_record_sink(struct recuo_retry_options *options,
                                                 recuo_record_sink_fn sink);

/**
 * Hands the metric points of every `recuo_retry_http` and `recuo_retry` call made with these
 * options to `metrics` (see `recuo_metric_point`), with the call's `user_data`, on the
 * calling thread, as each attempt's decision and the result are made: attempts by outcome and
 * reason, retry delays, give-ups, time waited at the gate, budget refusals — the names a
 * Prometheus exporter or an OpenTelemetry meter takes as they are. NULL removes it. Returns
 * `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `options` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_retry_options_set_metrics(struct recuo_retry_options *options,
                                             recuo_metrics_fn metrics);

/**
 * Names the request the records describe: its HTTP method (`method_len` bytes, UTF-8; empty
 * for a task with no HTTP meaning) and its URL (`url_len` bytes, as you request it: the
 * records show it redacted; bytes that are not UTF-8 are replaced by U+FFFD there). Both are
 * copied. The options hold one request: set it before each call (or use one options handle
 * per request). Only the records read it.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (`options`, or a pointer NULL with a
 * non-zero length); `RECUO_ERR_NOT_UTF8` (`method`); `RECUO_ERR_LENGTH_TOO_LARGE`. On an
 * error the options are unchanged.
 *
 * # Safety
 * `options` must be NULL or a live handle not in use by another thread; `method` and `url`
 * NULL or valid for their lengths.
 */
recuo_status recuo_retry_options_set_request(struct recuo_retry_options *options,
                                             const char *method,
                                             size_t method_len,
                                             const char *url,
                                             size_t url_len);

/**
 * Replaces the clocks of `recuo_retry` and `recuo_retry_http` (for tests and simulations:
 * with the sleep callback, a fake clock makes a run exact): `monotonic_ms` for the
 * deadline, the report's elapsed time, the records' elapsed times and the stats' instants
 * (as milliseconds × 1 000 000); `unix_ms` for the records' start times. Either may be NULL:
 * the real clock. Both receive the call's `user_data`. Waiting at a gate stays real. Returns
 * `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `options` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_retry_options_set_clock(struct recuo_retry_options *options,
                                           recuo_monotonic_clock_fn monotonic_ms,
                                           recuo_wall_clock_fn unix_ms);

/**
 * Makes `recuo_retry` and `recuo_retry_http` count into `recorder`, as every loop
 * counts (the operation machine does): each attempt's start (first attempt or retry, at
 * `recuo_monotonic_ns()`'s milliseconds × 1 000 000 unless a clock is set) and end, the 429s
 * and 503s among the verdicts (the last attempt's too), and how the operation ended (success, failure, or never started
 * when no attempt was made). Several calls, on several threads, may share one recorder; read
 * it with `recuo_stats_recorder_snapshot`. NULL removes the recorder. The options keep their
 * own reference. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT` (for `options`).
 *
 * # Safety
 * `options` must be NULL or a live handle not in use by another thread; `recorder` NULL or a
 * live handle.
 */
recuo_status recuo_retry_options_set_stats_recorder(struct recuo_retry_options *options,
                                                    const struct recuo_stats_recorder *recorder);

/**
 * Runs `operation` under `policy` until it succeeds or the policy gives up:
 * attempt 0, then, while its verdict says retry and the policy allows, a delay (the backoff,
 * or the server's wait plus the spread; a real sleep on the calling thread, woken at once by
 * a cancellation) and the next attempt. The idempotency key is created once, before attempt
 * 0, and handed to every attempt. The loop is the core's operation machine driven by
 * `recuo::drive`, as in Rust, Python and PHP. With a gate (`recuo_retry_options_set_gate`)
 * every attempt passes it. A record sink on the options receives the machine's records
 * (with no HTTP meaning: the response is `recuo_retry_http`'s); a stats recorder counts the
 * attempts.
 *
 * * `policy`: read at the start (a copy is used; validated: a configuration error is
 *   returned before any attempt).
 * * `operation`, `user_data`: see `recuo_operation_fn`; `user_data` also goes to the sleep
 *   callback, the clocks, the hooks and the record sink. Everything runs on the calling
 *   thread.
 * * `options`: NULL for the defaults (see `recuo_retry_options_new`); only read.
 * * `report_out` (may be NULL): attempts made, reason, elapsed milliseconds (from the start
 *   of the loop to its last step), number of
 *   delays, and for a wait past the deadline how long until the server would accept a retry.
 * * `delays`, `delays_len`, `delays_written` (may be NULL, 0, NULL): the first
 *   `min(delays_len, report.delay_count)` delays, in order, and how many were copied.
 *
 * Returns:
 * * `RECUO_OK`: an attempt succeeded (`report.reason` is `RECUO_GIVE_UP_NONE`).
 * * `RECUO_ERR_GAVE_UP`: the policy gave up; `report.reason` says why (permanent,
 *   attempts_exhausted, wait_exceeds_deadline, budget_exhausted, cancelled, the last
 *   attempt's verdict included: a permanent last failure is `permanent`). The
 *   `on_give_up` hook ran once, just before the return. The operation's own last result is
 *   whatever it left in `user_data`.
 * * `RECUO_ERR_IO` (or another status of the gate's store): the gate could not be passed —
 *   its regulator or concurrency limit is on a Redis server that could not be used (no
 *   place and no start without the server's word). The attempt it was for was not made;
 *   the report says what the loop did until then (its reason is what a refused entry comes
 *   to, `RECUO_GIVE_UP_WAIT_EXCEEDS_DEADLINE` or `RECUO_GIVE_UP_CANCELLED`); the
 *   `on_give_up` hook does not run (the policy did not give up).
 * * `RECUO_ERR_NO_VERDICT`: the operation returned without a valid verdict; the loop stopped
 *   there as on a permanent failure (no hook; the report, records and stats say
 *   `permanent`).
 * * Before any attempt, with the outputs untouched: `RECUO_ERR_NULL_ARGUMENT` (`policy`,
 *   `operation`, or `delays` with `delays_len > 0`), `RECUO_ERR_LENGTH_TOO_LARGE`, the
 *   policy's configuration error.
 *
 * # Safety
 * `policy` and `options` must be NULL or live handles, not changed during the call;
 * `operation` and the callbacks of `options` must be safe to call with `user_data` and must
 * return normally; the outputs must be NULL or writable for their lengths.
 */
recuo_status recuo_retry(const struct recuo_policy *policy,
                         recuo_operation_fn operation,
                         void *user_data,
                         const struct recuo_retry_options *options,
                         struct recuo_report *report_out,
                         uint64_t *delays,
                         size_t delays_len,
                         size_t *delays_written);

/**
 * `recuo_retry` for an operation that also tells recuo the response of each attempt
 * (`recuo_http_operation_fn`, `recuo_attempt_context_set_response`), so that every attempt
 * can be recorded: with a record sink on the options
 * (`recuo_retry_options_set_record_sink`, `recuo_retry_options_set_request`), each attempt
 * gives one attempt record — after the decision that followed it, before the `on_retry`
 * hook and the sleep — and the operation one result record at the end, all redacted by the
 * core before the sink sees them.
 *
 * Everything else is `recuo_retry`: the same arguments, the same loop, options, hooks and
 * outputs, and the same returns, plus `RECUO_ERR_NO_RESPONSE` when the operation returned
 * without setting the response (the loop stopped there as on a permanent failure, no
 * hook).
 *
 * # Safety
 * As `recuo_retry`.
 */
recuo_status recuo_retry_http(const struct recuo_policy *policy,
                              recuo_http_operation_fn operation,
                              void *user_data,
                              const struct recuo_retry_options *options,
                              struct recuo_report *report_out,
                              uint64_t *delays,
                              size_t delays_len,
                              size_t *delays_written);

/**
 * Reads a rate written as text — `90/min`, `1.5/s`, `5000/h`, `86400/day` (the units may
 * also be spelled `sec`, `second`, `m`, `minute`, `hour`, `d`, in any case; spaces around
 * the number and the unit are ignored; a bare number is per second) — and stores it in
 * `*per_second_out` as events per second (`90/min` gives 1.5).
 *
 * * `text`, `len`: the text, exactly `len` bytes (a NUL inside makes it no rate); NULL
 *   only with `len` 0.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_INVALID_RATE` for anything that is not a rate above zero
 * (`0/min`, `-5/s`, `abc`, `NaN/s`, `1e3/s`, `5/fortnight`, empty text);
 * `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_LENGTH_TOO_LARGE`. On an
 * error `*per_second_out` is untouched.
 *
 * # Safety
 * `text` must point to `len` readable bytes (or be NULL with `len` 0); `per_second_out` NULL
 * or a writable `double`.
 */
recuo_status recuo_rate_parse(const char *text, size_t len, double *per_second_out);

/**
 * Writes the rate `per_second` (events per second) as recuo writes rates: per minute when
 * that is a whole number and the rate is below 1000/s (`1.5` gives `90/min`), else per
 * second (`5000/s`, `0.01/s`). The text goes into `buf` (`len` bytes), NUL-terminated;
 * `*written` (when not NULL) receives its length without the NUL. 64 bytes always suffice
 * for rates from 1e-6/s to 1e12/s.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (truncated, terminated);
 * `RECUO_ERR_INVALID_RATE` for a rate that is not finite and above zero (nothing written);
 * `RECUO_ERR_NULL_ARGUMENT` for `buf`.
 *
 * # Safety
 * `buf` must point to `len` writable bytes; `written` must be NULL or a writable `size_t`.
 */
recuo_status recuo_rate_format(double per_second, char *buf, size_t len, size_t *written);

/**
 * Plans `requests` requests sent at `target_per_s` under an allowance of `allowance_per_s`
 * (both in events per second: `recuo_rate_parse` reads `"90/min"`), each answered in
 * `latency_s` seconds, with a fraction `retry_fraction` (0 ≤ f < 1) of all attempts being
 * retries, and stores the plan in `*out`:
 *
 * * `interval_ms` = 1000 / target (rounded); `duration_s` = (requests + retries) / target;
 * * `retries` = requests · f / (1 − f); `in_flight` = target · latency;
 * * `warning_count`: things worth knowing that do not stop the plan (a target at or near
 *   the allowance, very many requests in flight); read each with `recuo_plan_warning`.
 *
 * Guide B: `recuo_plan(600, 2.0, 1.5, 2.0, 0.0, &p)` gives 667 ms, 400 s, 3 in flight.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_TARGET_ABOVE_ALLOWANCE` (the server would throttle the
 * batch: aim at or below the allowance); `RECUO_ERR_INVALID_RATE` (a rate not finite and
 * above zero); `RECUO_ERR_INVALID_RETRY_FRACTION`; `RECUO_ERR_INVALID_LATENCY` (negative,
 * infinite or NaN); `RECUO_ERR_NULL_ARGUMENT`. On an error `*out` is untouched.
 *
 * # Safety
 * `out` must be NULL or a writable `recuo_plan_result`.
 */
recuo_status recuo_plan(uint64_t requests,
                        double allowance_per_s,
                        double target_per_s,
                        double latency_s,
                        double retry_fraction,
                        struct recuo_plan_result *out);

/**
 * Writes warning number `index` (from 0, below the plan's `warning_count`) of the plan that
 * `recuo_plan` makes with the same first five arguments, as English text, into `buf` (`len`
 * bytes), NUL-terminated; `*written` (when not NULL) receives its length without the NUL.
 * (The plan is recomputed: it is pure arithmetic, and no handle is needed.) 256 bytes
 * always suffice.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (truncated, terminated);
 * `RECUO_ERR_INDEX_OUT_OF_RANGE` when the plan has no warning `index` (nothing written);
 * `recuo_plan`'s errors; `RECUO_ERR_NULL_ARGUMENT` for `buf`.
 *
 * # Safety
 * `buf` must point to `len` writable bytes; `written` must be NULL or a writable `size_t`.
 */
recuo_status recuo_plan_warning(uint64_t requests,
                                double allowance_per_s,
                                double target_per_s,
                                double latency_s,
                                double retry_fraction,
                                size_t index,
                                char *buf,
                                size_t len,
                                size_t *written);

/**
 * Creates a regulator for this process — `per_second` starts per second on average
 * (`recuo_rate_parse` reads `"90/min"` as 1.5), up to `burst` at once — and stores it in
 * `*out`. Free it with `recuo_regulator_free`.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_INVALID_RATE` (not finite, not above zero, or so slow that
 * the starts the regulator queues cannot be counted: below one start every 12 days with a
 * burst of 1);
 * `RECUO_ERR_ZERO_BURST`; `RECUO_ERR_NULL_ARGUMENT` for `out`. On an error `*out` is
 * untouched.
 *
 * # Safety
 * `out` must be NULL or a writable pointer.
 */
recuo_status recuo_regulator_new(double per_second, uint32_t burst, struct recuo_regulator **out);

/**
 * Opens the regulator in the file at `path` (created if missing), shared by every process
 * and thread that opens the same file — one allowance for C programs, PHP-FPM workers and
 * Python processes alike — and stores a handle to it in `*out`. The state in the file is
 * only atomics once set up, so a process that dies mid-call leaves nothing locked.
 *
 * * `path`, `path_len`: the file's path, exactly `path_len` bytes (any bytes: a path need
 *   not be UTF-8).
 * * `per_second`, `burst`: as `recuo_regulator_new`. The first opener sets them; every later
 *   opener must ask for the same ones.
 * * `detail`, `detail_len` (may be NULL, 0): on an error, the reason in English,
 *   NUL-terminated and truncated to fit — for a mismatch it names the file's settings and
 *   those asked for, for an I/O error the system's reason; on success, an empty string.
 *   256 bytes are plenty.
 *
 * The file is opened without following a symbolic link and created `0600` with its space
 * reserved (a full disk fails here, not with SIGBUS later); every value read from it is
 * clamped to this handle's settings.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_INVALID_RATE`; `RECUO_ERR_ZERO_BURST`;
 * `RECUO_ERR_SHARED_MISMATCH` when the file was set up with another rate, burst or adaptive
 * setting, or holds something else (another kind of recuo state, a file of the wrong size,
 * contents that are no recuo state — refused, never set up again) — two processes must not
 * believe in two different allowances; `RECUO_ERR_IO` when the file cannot be opened,
 * sized, locked or mapped, or is refused as unsafe (a symbolic link, not a regular file,
 * another user's, or writable by its group or others); `RECUO_ERR_NULL_ARGUMENT` (`out`, or
 * `path` with a non-zero length); `RECUO_ERR_LENGTH_TOO_LARGE`. On an error `*out` is untouched.
 *
 * # Safety
 * `path` must point to `path_len` readable bytes; `out` NULL or a writable pointer;
 * `detail` NULL or `detail_len` writable bytes.
 */
recuo_status recuo_regulator_new_shared(const char *path,
                                        size_t path_len,
                                        double per_second,
                                        uint32_t burst,
                                        struct recuo_regulator **out,
                                        char *detail,
                                        size_t detail_len);

/**
 * `recuo_regulator_new_shared` with the adaptive setting: `adaptive` true sets the file up
 * adaptive — a 429 reported by any process on it (`recuo_regulator_on_throttled`) halves
 * the rate for every process, and each success reported by any of them
 * (`recuo_regulator_on_success`) gives back 1/16 of the configured rate, up to it. The
 * setting is recorded in the file with the rate and burst when the file is set up; every
 * later opener must ask for the same one (`RECUO_ERR_SHARED_MISMATCH` otherwise, the detail
 * naming both). `recuo_regulator_new_shared` opens a file that is not adaptive.
 *
 * # Safety
 * As `recuo_regulator_new_shared`.
 */
recuo_status recuo_regulator_new_shared_with(const char *path,
                                             size_t path_len,
                                             double per_second,
                                             uint32_t burst,
                                             bool adaptive,
                                             struct recuo_regulator **out,
                                             char *detail,
                                             size_t detail_len);

/**
 * Opens the regulator kept on the Redis server at `url` under `key`, shared by every process
 * on every machine that uses the same server and key, and stores a handle to it in `*out`.
 * Each check is one atomic script on the server, timed by the server's clock, so the
 * machines' own clocks do not matter. The handle keeps one connection (reopened when a kept
 * one turns out lost); each call — connecting, authenticating, the command and its reply —
 * ends within 5 s, however slowly the server trickles bytes, and a reply is bounded in size
 * (4 MiB at most).
 *
 * * `url`, `url_len`: `redis://[[user]:password@]host[:port][/db]` or `host:port`, exactly
 *   `url_len` bytes of UTF-8 (the port defaults to 6379, the database to 0; with a user,
 *   `AUTH user password` is sent, as Redis 6 ACLs expect), or `rediss://…` for TLS — TLS
 *   or an error, never a silent downgrade: rustls verifies the server's certificate and
 *   name against the system's roots, or those `SSL_CERT_FILE` / `SSL_CERT_DIR` name.
 *   For a Redis Cluster, `redis+cluster://[user:password@]host:port[,host:port…]/` names
 *   some of its nodes (seeds; `rediss+cluster://` for TLS): recuo finds the others and runs
 *   each check on the master of the key's slot; while that slot has no master (a
 *   failover) a call asks again until its 5 s are up (docs/limits.md says what a failover
 *   may cost). A cluster node named by a plain `redis://` URL is refused, the detail
 *   naming the cluster form.
 * * `key`, `key_len`: the key, UTF-8; the state lives in `{KEY}:tat` and the settings in
 *   `{KEY}:settings` (one cluster slot; on a Redis Cluster the key may not be empty).
 * * `per_second`, `burst`: as `recuo_regulator_new`. The first user of the key sets them;
 *   every later one must ask for the same ones.
 * * `detail`, `detail_len` (may be NULL, 0): on an error, the reason in English,
 *   NUL-terminated and truncated to fit — for a mismatch it names the key's settings and
 *   those asked for, for an I/O error the server's address and the system's reason (never
 *   the password); on success, an empty string. 256 bytes are plenty.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_INVALID_RATE`; `RECUO_ERR_ZERO_BURST`;
 * `RECUO_ERR_SHARED_MISMATCH` when the key was set up with another rate, burst or adaptive
 * setting; `RECUO_ERR_IO` when the server cannot be reached or used (a bad URL, a refused
 * connection, a timeout, an error reply); `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_NULL_ARGUMENT`
 * (`out`, or `url` or `key` with a non-zero length); `RECUO_ERR_LENGTH_TOO_LARGE`. On an
 * error `*out` is untouched.
 *
 * Then `recuo_regulator_try_acquire` and the blocking acquires ask the server, and answer
 * `RECUO_ERR_IO` when it cannot be used (nothing is taken: fewer starts, never more).
 * The key is not adaptive: `recuo_regulator_new_redis_with` sets one up adaptive.
 *
 * # Safety
 * `url` must point to `url_len` readable bytes and `key` to `key_len`; `out` NULL or a
 * writable pointer; `detail` NULL or `detail_len` writable bytes.
 */
recuo_status recuo_regulator_new_redis(const char *url,
                                       size_t url_len,
                                       const char *key,
                                       size_t key_len,
                                       double per_second,
                                       uint32_t burst,
                                       struct recuo_regulator **out,
                                       char *detail,
                                       size_t detail_len);

/**
 * `recuo_regulator_new_redis` with the adaptive setting: `adaptive` true sets the key up
 * adaptive. The setting is recorded on the server with the rate and burst when the key is
 * set up, and every later user of the key must ask for the same one
 * (`RECUO_ERR_SHARED_MISMATCH` otherwise). On an adaptive key the interval in force lives
 * on the server, under `{KEY}:interval`: a 429 reported by any holder on any machine
 * (`recuo_regulator_on_throttled`, one round trip) halves the rate for all of them, and
 * successes (`recuo_regulator_on_success`) give back 1/16 of the configured rate each, by
 * the same rule as in one process, applied atomically by a script on the server. A
 * handle reports a success only while the interval in force it last heard of (from a
 * reservation or a report) is slower than the configured one, so a regulator at full
 * speed costs no round trip per success. A report the server cannot take is lost (the
 * regulator keeps its last interval; nothing else changes).
 *
 * # Safety
 * As `recuo_regulator_new_redis`.
 */
recuo_status recuo_regulator_new_redis_with(const char *url,
                                            size_t url_len,
                                            const char *key,
                                            size_t key_len,
                                            double per_second,
                                            uint32_t burst,
                                            bool adaptive,
                                            struct recuo_regulator **out,
                                            char *detail,
                                            size_t detail_len);

/**
 * Releases a regulator handle (a shared regulator's file stays, with its state, and so does
 * a Redis regulator's key; a gate holding this regulator keeps it alive). NULL is accepted and ignored.
 *
 * # Safety
 * `regulator` must be NULL or come from `recuo_regulator_new*`, not have been freed, and not
 * be in use by another thread.
 */
void recuo_regulator_free(struct recuo_regulator *regulator);

/**
 * Answers at once whether a start of weight `cost` may go now (on the regulator's own
 * clock: `recuo_monotonic_ns()`, or a Redis regulator's server's), and if so takes it:
 *
 * * `RECUO_OK`: go now (the start is counted); `*wait_ns_out` receives 0.
 * * `RECUO_WOULD_WAIT` (not an error): not now; nothing is taken, and `*wait_ns_out`
 *   receives the nanoseconds until such a start would be allowed (sleep that long and try
 *   again, or use `recuo_regulator_acquire`).
 * * `RECUO_ERR_COST_ABOVE_BURST`: the cost exceeds the burst and could never go;
 *   `RECUO_ERR_ZERO_COST`: a cost of 0 would take nothing;
 *   `RECUO_ERR_IO`: a Redis regulator's server could not be used (nothing is taken);
 *   `RECUO_ERR_NULL_ARGUMENT` for `regulator`. Then `*wait_ns_out` is untouched.
 *
 * A cost of 1 is one request; a larger cost weighs as many (allowances counted in tokens).
 * `wait_ns_out` may be NULL.
 *
 * # Safety
 * `regulator` must be NULL or a live handle; `wait_ns_out` NULL or a writable `uint64_t`.
 */
recuo_status recuo_regulator_try_acquire(const struct recuo_regulator *regulator,
                                         uint32_t cost,
                                         uint64_t *wait_ns_out);

/**
 * `recuo_regulator_try_acquire` at the instant `now_ns` of your choosing: nanoseconds on
 * `recuo_monotonic_ns()`, or on a fake clock (the regulator reads no clock here, so a test
 * can assert exact sequences; every user of one regulator must use the same clock — for a
 * Redis regulator shared between machines, a clock they all share, which
 * `recuo_monotonic_ns()` is not: use `recuo_regulator_try_acquire` there). The answers are
 * the same as `recuo_regulator_try_acquire`'s; a Redis server counts in whole
 * microseconds.
 *
 * # Safety
 * As `recuo_regulator_try_acquire`.
 */
recuo_status recuo_regulator_try_acquire_at(const struct recuo_regulator *regulator,
                                            uint64_t now_ns,
                                            uint32_t cost,
                                            uint64_t *wait_ns_out);

/**
 * Waits for a start slot of weight `cost` and takes it, blocking the calling thread.
 * Slots are handed out in the order they are asked for, so no caller starves.
 *
 * * `cancel` (may be NULL): cancelling it wakes the wait at once.
 *
 * Returns `RECUO_OK` (start now); `RECUO_CANCELLED` (not an error: the token was cancelled
 * before or during the wait; the slot that had been reserved is spent unused — the
 * regulator errs on the side of fewer starts, never more); `RECUO_QUEUE_FULL` (not an
 * error: the start would wait beyond the `RECUO_MAX_QUEUED_STARTS` queued ahead; nothing
 * was reserved or waited for: ask again later); `RECUO_ERR_COST_ABOVE_BURST`;
 * `RECUO_ERR_ZERO_COST`;
 * `RECUO_ERR_IO` (a Redis regulator's server could not be used; nothing was waited for);
 * `RECUO_ERR_NULL_ARGUMENT` for `regulator`.
 *
 * # Safety
 * `regulator` and `cancel` must each be NULL or a live handle.
 */
recuo_status recuo_regulator_acquire(const struct recuo_regulator *regulator,
                                     uint32_t cost,
                                     const struct recuo_cancel_token *cancel);

/**
 * Waits for a start slot of weight `cost` only if it comes within `timeout_ms`
 * milliseconds, and takes it.
 *
 * Returns `RECUO_OK` (start now); `RECUO_TIMED_OUT` (not an error: the slot would come
 * later than the timeout; nothing was reserved and nothing was waited); `RECUO_CANCELLED`
 * (as `recuo_regulator_acquire`); `RECUO_QUEUE_FULL` (as `recuo_regulator_acquire`, when the
 * timeout is longer than the queue); `RECUO_ERR_COST_ABOVE_BURST`; `RECUO_ERR_ZERO_COST`;
 * `RECUO_ERR_IO` (as
 * `recuo_regulator_acquire`); `RECUO_ERR_NULL_ARGUMENT`.
 * A `timeout_ms` of 0 is a try that reserves nothing; `UINT64_MAX` waits as long as it
 * takes.
 *
 * # Safety
 * `regulator` and `cancel` must each be NULL or a live handle.
 */
recuo_status recuo_regulator_acquire_until(const struct recuo_regulator *regulator,
                                           uint32_t cost,
                                           uint64_t timeout_ms,
                                           const struct recuo_cancel_token *cancel);

/**
 * Makes a regulator of this process adaptive (or not): told "slow down" by
 * `recuo_regulator_on_throttled` (a 429) it halves its rate, down to 1/64 of the configured
 * one, and each `recuo_regulator_on_success` gives back 1/16 of the configured rate, up to
 * it — as the AWS SDK's adaptive mode does. Every handle and gate sharing the regulator sees
 * the setting.
 *
 * A shared file's or a Redis key's setting is made when it is set up
 * (`recuo_regulator_new_shared_with`, `recuo_regulator_new_redis_with`), and every process
 * that opens it must agree: no process switches it for the others. Asking a shared or Redis
 * regulator for its own setting answers `RECUO_OK`; asking for the other one answers
 * `RECUO_ERR_SHARED_MISMATCH` and changes nothing.
 * Safe from any thread. Returns `RECUO_OK`, `RECUO_ERR_SHARED_MISMATCH` or
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `regulator` must be NULL or a live handle.
 */
recuo_status recuo_regulator_set_adaptive(const struct recuo_regulator *regulator, bool adaptive);

/**
 * A rate-limited answer (429, or a 403 with a spent quota) was seen: an adaptive regulator
 * halves its rate; a fixed one ignores it. `recuo_retry` with a gate, the batch runner and
 * a machine holding the gate (`recuo_attempts_set_gate`) call it for you. Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `regulator` must be NULL or a live handle.
 */
recuo_status recuo_regulator_on_throttled(const struct recuo_regulator *regulator);

/**
 * An attempt succeeded: an adaptive regulator gives back 1/16 of its configured rate, up to
 * it; a fixed one ignores it. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `regulator` must be NULL or a live handle.
 */
recuo_status recuo_regulator_on_success(const struct recuo_regulator *regulator);

/**
 * The rate in force, in starts per second (below the configured rate while an adaptive
 * regulator is slowed down). NaN when `regulator` is NULL.
 *
 * # Safety
 * `regulator` must be NULL or a live handle.
 */
double recuo_regulator_rate_per_s(const struct recuo_regulator *regulator);

/**
 * The burst: how many starts may go at once after a quiet spell. 0 when `regulator` is
 * NULL.
 *
 * # Safety
 * `regulator` must be NULL or a live handle.
 */
uint32_t recuo_regulator_burst(const struct recuo_regulator *regulator);

/**
 * Creates a concurrency limit of `limit` places and stores it in `*out`. Free it with
 * `recuo_concurrency_limit_free`.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_ZERO_LIMIT` for a limit of 0 (nothing could ever run);
 * `RECUO_ERR_NULL_ARGUMENT` for `out`. On an error `*out` is untouched.
 *
 * # Safety
 * `out` must be NULL or a writable pointer.
 */
recuo_status recuo_concurrency_limit_new(uint32_t limit, struct recuo_concurrency_limit **out);

/**
 * Opens the concurrency limit kept in the file at `path` — at most `limit` requests in
 * flight for every process of this machine that opens the same file — and stores a handle
 * to it in `*out`. Free it with `recuo_concurrency_limit_free`.
 *
 * Each place is a lock on one byte of the file (an open-file-description lock: Linux 3.15 or
 * later), which the kernel releases when its holder's process ends — `kill -9` included:
 * a dead holder's place comes back at once, and a waiter in another process takes it
 * within 10 ms (waiters look again every 1 ms, then less often, at least every 10 ms).
 * `recuo_concurrency_limit_in_flight` counts the places held by every process;
 * `recuo_concurrency_limit_max_in_flight` only this handle's. A child made by `fork()`
 * while this process holds places shares those locks until it exits or first uses the
 * handle (it then opens the file again for itself): open the limit in each worker.
 *
 * * `path`, `path_len`: the file, exactly `path_len` bytes (no NUL needed). It is created
 *   with mode 0600 if missing; it is never opened through a symbolic link and must be a
 *   regular file of this process's user that nobody else may write. The first opener sets
 *   the limit; every later one must ask for the same.
 * * `limit`: the places, as `recuo_concurrency_limit_new`.
 * * `detail`, `detail_len` (may be NULL, 0): on an error, the reason in English,
 *   NUL-terminated and truncated to fit; on success, an empty string. 256 bytes are plenty.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_ZERO_LIMIT`; `RECUO_ERR_SHARED_MISMATCH` when the file
 * holds a limit of another number of places, another kind of state, or is not a recuo
 * state (never set up again over what it holds); `RECUO_ERR_IO` when the file cannot be
 * opened, is refused (a symbolic link, another user's, writable by others), or the kernel
 * has no such locks; `RECUO_ERR_NULL_ARGUMENT` (`out`, or `path` with a non-zero length);
 * `RECUO_ERR_LENGTH_TOO_LARGE`. On an error `*out` is untouched.
 *
 * # Safety
 * `path` must point to `path_len` readable bytes; `out` NULL or a writable pointer;
 * `detail` NULL or `detail_len` writable bytes.
 */
recuo_status recuo_concurrency_limit_new_shared(const char *path,
                                                size_t path_len,
                                                uint32_t limit,
                                                struct recuo_concurrency_limit **out,
                                                char *detail,
                                                size_t detail_len);

/**
 * Opens the concurrency limit kept on the Redis server at `url` under `key` — at most
 * `limit` requests in flight for every process on every machine that uses the same server
 * and key — and stores a handle to it in `*out`. Each place is a lease of `lease_ms`
 * milliseconds, an owner token with an expiry kept in one sorted set on the server (timed
 * by the server's clock): a holder that dies — `kill -9`, a lost machine — frees its place
 * when its lease ends, never later. A request that may outlast its lease renews it
 * (`recuo_permit_renew`); a gate does not, so give a gate's limit a lease longer than its
 * longest attempt. Releasing twice or after the lease expired is harmless.
 *
 * The handle keeps one connection (reopened when a kept one turns out lost); each call ends
 * within 5 s, however slowly the server answers, as `recuo_regulator_new_redis` says.
 *
 * * `url`, `url_len`: as `recuo_regulator_new_redis`: `redis://[[user]:password@]host[:port][/db]`,
 *   `rediss://…` for TLS, or `host:port`, exactly `url_len` bytes of UTF-8 — or
 *   `redis+cluster://host:port,host:port/` for a Redis Cluster (seed nodes;
 *   `rediss+cluster://` for TLS).
 * * `key`, `key_len`: the key, UTF-8; the leases live in `{KEY}:leases` and the settings in
 *   `{KEY}:settings`.
 * * `limit`: the places, as `recuo_concurrency_limit_new`; `lease_ms`: 1 ms to 1 day. The
 *   first user of the key sets them; every later one must ask for the same ones.
 * * `detail`, `detail_len` (may be NULL, 0): on an error, the reason in English,
 *   NUL-terminated and truncated to fit — for a mismatch both settings, for an I/O error the
 *   server's address and what went wrong (never the password); on success, an empty
 *   string. 256 bytes are plenty.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_ZERO_LIMIT`; `RECUO_ERR_INVALID_LEASE`;
 * `RECUO_ERR_SHARED_MISMATCH` when the key was set up with another limit or lease;
 * `RECUO_ERR_IO` when the server cannot be reached or used (a bad URL, a refused
 * connection, a timeout, an error reply, a build without Redis support);
 * `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_NULL_ARGUMENT` (`out`, or `url` or `key` with a non-zero
 * length); `RECUO_ERR_LENGTH_TOO_LARGE`. On an error `*out` is untouched.
 *
 * Then the acquires ask the server, and answer `RECUO_ERR_IO` when it cannot be used (no
 * place is given without the server's word); `recuo_concurrency_limit_in_flight` and
 * `_max_in_flight` count this process's places only.
 *
 * # Safety
 * `url` must point to `url_len` readable bytes and `key` to `key_len`; `out` NULL or a
 * writable pointer; `detail` NULL or `detail_len` writable bytes.
 */
recuo_status recuo_concurrency_limit_new_redis(const char *url,
                                               size_t url_len,
                                               const char *key,
                                               size_t key_len,
                                               uint32_t limit,
                                               uint64_t lease_ms,
                                               struct recuo_concurrency_limit **out,
                                               char *detail,
                                               size_t detail_len);

/**
 * Releases a concurrency-limit handle (the permits taken from it, and the gates holding
 * it, keep the semaphore alive; a Redis limit's key stays). NULL is accepted and ignored.
 *
 * # Safety
 * `limit` must be NULL or come from `recuo_concurrency_limit_new*`, not have been freed, and
 * not be in use by another thread.
 */
void recuo_concurrency_limit_free(struct recuo_concurrency_limit *limit);

/**
 * Takes a place now if one is free, and stores the permit in `*out`.
 *
 * Returns `RECUO_OK` (release the permit with `recuo_permit_release`); `RECUO_WOULD_WAIT`
 * (not an error: every place is taken; `*out` untouched); `RECUO_ERR_IO` (a Redis limit's
 * server, or a shared file's locks, could not be used: no place); `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `limit` must be NULL or a live handle; `out` NULL or a writable pointer.
 */
recuo_status recuo_concurrency_limit_try_acquire(const struct recuo_concurrency_limit *limit,
                                                 struct recuo_permit **out);

/**
 * Waits for a place, blocking the calling thread, at most `timeout_ms` milliseconds
 * (`UINT64_MAX`: as long as it takes), and stores the permit in `*out`.
 *
 * * `cancel` (may be NULL): cancelling it ends the wait within a few milliseconds.
 *
 * A Redis limit asks the server every 5–50 ms while it waits.
 *
 * Returns `RECUO_OK`; `RECUO_TIMED_OUT` (not an error: no place came in time);
 * `RECUO_CANCELLED` (not an error); `RECUO_ERR_IO` (a Redis limit's server could not be
 * used, within its deadline per call: no place); `RECUO_ERR_NULL_ARGUMENT`. Unless
 * `RECUO_OK`, `*out` is untouched.
 *
 * # Safety
 * `limit` and `cancel` must each be NULL or a live handle; `out` NULL or a writable pointer.
 */
recuo_status recuo_concurrency_limit_acquire(const struct recuo_concurrency_limit *limit,
                                             uint64_t timeout_ms,
                                             const struct recuo_cancel_token *cancel,
                                             struct recuo_permit **out);

/**
 * Gives the place back (the permit's `_free`; for a Redis limit, its lease is released on
 * the server — a lease already expired, or a server out of reach, is no error: the lease
 * ends by itself). NULL is accepted and ignored. May be called from any thread, also after
 * the limit's handle was freed.
 *
 * # Safety
 * `permit` must be NULL or come from a `recuo_concurrency_limit_*acquire` and not have been
 * released.
 */
void recuo_permit_release(struct recuo_permit *permit);

/**
 * Extends the permit's lease from now, by the limit's `lease_ms` (a long request does this
 * before its lease ends), and stores in `*renewed_out` whether it was renewed: `false` when
 * the lease had already expired — the place is not taken back, it may be someone else's by
 * now. A permit of a limit in this process has no lease: `true`. May be called from any
 * thread while the request runs.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_IO` (the Redis server could not be used; `*renewed_out`
 * untouched); `RECUO_ERR_NULL_ARGUMENT` (`permit` or `renewed_out`).
 *
 * # Safety
 * `permit` must be NULL or a live permit; `renewed_out` NULL or a writable `bool`.
 */
recuo_status recuo_permit_renew(const struct recuo_permit *permit, bool *renewed_out);

/**
 * Requests in flight now (permits held; for a Redis limit, this process's; for a shared
 * file, every process's, as the kernel counts the locks). 0 when `limit` is NULL.
 *
 * # Safety
 * `limit` must be NULL or a live handle.
 */
uint32_t recuo_concurrency_limit_in_flight(const struct recuo_concurrency_limit *limit);

/**
 * The most requests that were ever in flight at once (for a Redis limit or a shared file,
 * this process's).
 * 0 when `limit` is NULL.
 *
 * # Safety
 * `limit` must be NULL or a live handle.
 */
uint32_t recuo_concurrency_limit_max_in_flight(const struct recuo_concurrency_limit *limit);

/**
 * The number of places. 0 when `limit` is NULL.
 *
 * # Safety
 * `limit` must be NULL or a live handle.
 */
uint32_t recuo_concurrency_limit_limit(const struct recuo_concurrency_limit *limit);

/**
 * Creates a retry budget for this process and stores it in `*out`: retries may be at most
 * `ratio` (0 to 1000; 0.1 is 10%) of the first attempts counted in the last `window_s`
 * seconds (1 to 60), plus `floor_per_s` retries per second (0 or more). Free it with
 * `recuo_retry_budget_free`.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_INVALID_BUDGET` (a ratio outside 0–1000, a negative or NaN
 * floor, a window outside 1–60 s); `RECUO_ERR_NULL_ARGUMENT` for `out`. On an error `*out`
 * is untouched.
 *
 * # Safety
 * `out` must be NULL or a writable pointer.
 */
recuo_status recuo_retry_budget_new(double ratio,
                                    double floor_per_s,
                                    uint32_t window_s,
                                    struct recuo_retry_budget **out);

/**
 * Creates a retry budget with the defaults — ratio 0.1 (10%), a floor of 1 retry per
 * second, a window of 10 s — and stores it in `*out`. Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `out` must be NULL or a writable pointer.
 */
recuo_status recuo_retry_budget_new_default(struct recuo_retry_budget **out);

/**
 * Opens the retry budget in the file at `path` (created if missing), shared by every
 * process that opens it, and stores a handle in `*out`. The first opener sets `ratio`,
 * `floor_per_s` and `window_s` (as `recuo_retry_budget_new`); every later opener must ask
 * for the same.
 *
 * * `detail`, `detail_len` (may be NULL, 0): on an error, the reason in English,
 *   NUL-terminated and truncated to fit (a mismatch names the file's settings and those
 *   asked for); on success, an empty string. 256 bytes are plenty.
 *
 * The file is checked as `recuo_regulator_new_shared` checks its own, and its counts
 * saturate instead of wrapping.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_INVALID_BUDGET`; `RECUO_ERR_SHARED_MISMATCH` (the file holds
 * other settings, or something else); `RECUO_ERR_IO` (also for a file refused as unsafe);
 * `RECUO_ERR_NULL_ARGUMENT` (`out`, or
 * `path` with a non-zero length); `RECUO_ERR_LENGTH_TOO_LARGE`. On an error `*out` is
 * untouched.
 *
 * # Safety
 * `path` must point to `path_len` readable bytes; `out` NULL or a writable pointer;
 * `detail` NULL or `detail_len` writable bytes.
 */
recuo_status recuo_retry_budget_new_shared(const char *path,
                                           size_t path_len,
                                           double ratio,
                                           double floor_per_s,
                                           uint32_t window_s,
                                           struct recuo_retry_budget **out,
                                           char *detail,
                                           size_t detail_len);

/**
 * Opens the retry budget kept on the Redis server at `url` under `key`, shared by every
 * process on every machine that uses the same server and key, and stores a handle in
 * `*out`: the local budget's rule (retries in the last `window_s` seconds stay within
 * `ratio × requests + floor_per_s × window_s`), counted per second on the server by its
 * own clock. The settings are checked as `recuo_retry_budget_new` checks them; the first
 * user of the key sets them, every later one must ask for the same.
 *
 * * `url`, `url_len`, `key`, `key_len`: as `recuo_regulator_new_redis`, a Redis Cluster's
 *   `redis+cluster://host:port,host:port/` (seed nodes; `rediss+cluster://` for TLS)
 *   included; the counts live in `{KEY}:budget`, the settings in `{KEY}:settings`.
 * * `detail`, `detail_len` (may be NULL, 0): on an error, the reason in English,
 *   NUL-terminated and truncated to fit (a mismatch names both settings, an I/O error the
 *   server and what went wrong, never the password); on success, an empty string.
 *
 * It fails closed: while the server cannot be used, `recuo_retry_budget_try_withdraw`,
 * `_record_request` and `_counts` answer `RECUO_ERR_IO` (no retry without the server's word,
 * a request not counted earns nothing), and in a gate no retry is allowed
 * (`budget_exhausted`). The `_at` functions' instants are a clock every user of the key
 * shares (the server counts whole seconds); the others count on the server's clock.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_INVALID_BUDGET`; `RECUO_ERR_SHARED_MISMATCH` (the key holds
 * other settings); `RECUO_ERR_IO` (the server cannot be reached or used, or a build without
 * Redis support); `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_NULL_ARGUMENT` (`out`, or `url` or `key`
 * with a non-zero length); `RECUO_ERR_LENGTH_TOO_LARGE`. On an error `*out` is untouched.
 *
 * # Safety
 * `url` must point to `url_len` readable bytes and `key` to `key_len`; `out` NULL or a
 * writable pointer; `detail` NULL or `detail_len` writable bytes.
 */
recuo_status recuo_retry_budget_new_redis(const char *url,
                                          size_t url_len,
                                          const char *key,
                                          size_t key_len,
                                          double ratio,
                                          double floor_per_s,
                                          uint32_t window_s,
                                          struct recuo_retry_budget **out,
                                          char *detail,
                                          size_t detail_len);

/**
 * Releases a budget handle (a shared budget's file stays, and a Redis budget's key; a gate
 * holding the budget keeps it alive). NULL is accepted and ignored.
 *
 * # Safety
 * `budget` must be NULL or come from `recuo_retry_budget_new*`, not have been freed, and
 * not be in use by another thread.
 */
void recuo_retry_budget_free(struct recuo_retry_budget *budget);

/**
 * Counts a first attempt now: it earns `ratio` retries. (A gate counts attempt 0 for you.)
 * Returns `RECUO_OK`, `RECUO_ERR_NULL_ARGUMENT`, or `RECUO_ERR_IO` for a Redis budget whose
 * server cannot be used (nothing counted).
 *
 * # Safety
 * `budget` must be NULL or a live handle.
 */
recuo_status recuo_retry_budget_record_request(const struct recuo_retry_budget *budget);

/**
 * `recuo_retry_budget_record_request` at the instant `now_ns` (nanoseconds on
 * `recuo_monotonic_ns()`, or on a fake clock; for a Redis budget, a clock every user of the
 * key shares — the server counts whole seconds).
 *
 * # Safety
 * `budget` must be NULL or a live handle.
 */
recuo_status recuo_retry_budget_record_request_at(const struct recuo_retry_budget *budget,
                                                  uint64_t now_ns);

/**
 * Takes one retry from the budget now, if it allows one.
 *
 * Returns `RECUO_OK` (retry: it is counted); `RECUO_BUDGET_EXHAUSTED` (not an error: no
 * retry left — give up with `RECUO_GIVE_UP_BUDGET_EXHAUSTED` rather than add load);
 * `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_IO` for a Redis budget whose server cannot be used
 * (no retry taken: give up as for an exhausted budget).
 *
 * # Safety
 * `budget` must be NULL or a live handle.
 */
recuo_status recuo_retry_budget_try_withdraw(const struct recuo_retry_budget *budget);

/**
 * `recuo_retry_budget_try_withdraw` at the instant `now_ns` (as
 * `recuo_retry_budget_record_request_at` takes it).
 *
 * # Safety
 * `budget` must be NULL or a live handle.
 */
recuo_status recuo_retry_budget_try_withdraw_at(const struct recuo_retry_budget *budget,
                                                uint64_t now_ns);

/**
 * The first attempts and the retries counted in the window ending now, stored in
 * `*requests_out` and `*retries_out` (each may be NULL). Returns `RECUO_OK`,
 * `RECUO_ERR_NULL_ARGUMENT` (for `budget`), or `RECUO_ERR_IO` for a Redis budget whose server
 * cannot be used (unless `RECUO_OK`, nothing is written).
 *
 * # Safety
 * `budget` must be NULL or a live handle; the outputs NULL or writable `uint64_t`s.
 */
recuo_status recuo_retry_budget_counts(const struct recuo_retry_budget *budget,
                                       uint64_t *requests_out,
                                       uint64_t *retries_out);

/**
 * `recuo_retry_budget_counts` for the window ending at the instant `now_ns`.
 *
 * # Safety
 * As `recuo_retry_budget_counts`.
 */
recuo_status recuo_retry_budget_counts_at(const struct recuo_retry_budget *budget,
                                          uint64_t now_ns,
                                          uint64_t *requests_out,
                                          uint64_t *retries_out);

/**
 * A new gate that lets everything through (no regulator, no limit, no budget). Free it with
 * `recuo_gate_free`. NULL only if recuo panicked.
 */
struct recuo_gate *recuo_gate_new(void);

/**
 * Releases a gate handle (options and batch runs given it keep their own reference).
 * NULL is accepted and ignored.
 *
 * # Safety
 * `gate` must be NULL or come from `recuo_gate_new`, not have been freed, and not be in use
 * by another thread.
 */
void recuo_gate_free(struct recuo_gate *gate);

/**
 * Limits the starts of every attempt through the gate with `regulator` (the gate keeps its
 * own reference: `regulator` may be freed afterwards); NULL removes the regulator. Returns
 * `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT` (for `gate`).
 *
 * # Safety
 * `gate` must be NULL or a live handle not in use by another thread; `regulator` NULL or a
 * live handle.
 */
recuo_status recuo_gate_set_regulator(struct recuo_gate *gate,
                                      const struct recuo_regulator *regulator);

/**
 * Limits the requests in flight through the gate with `limit` (the gate keeps its own
 * reference); NULL removes the limit. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT` (for
 * `gate`).
 *
 * # Safety
 * `gate` must be NULL or a live handle not in use by another thread; `limit` NULL or a live
 * handle.
 */
recuo_status recuo_gate_set_limit(struct recuo_gate *gate,
                                  const struct recuo_concurrency_limit *limit);

/**
 * Makes every retry through the gate draw on `budget`, and counts every first attempt in it
 * (the gate keeps its own reference); NULL removes the budget. Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT` (for `gate`).
 *
 * # Safety
 * `gate` must be NULL or a live handle not in use by another thread; `budget` NULL or a
 * live handle.
 */
recuo_status recuo_gate_set_budget(struct recuo_gate *gate,
                                   const struct recuo_retry_budget *budget);

/**
 * Whether passing `gate`, or counting in its budget, asks a remote store (Redis): a
 * program with an event loop then calls `recuo_attempts_poll_gate` (and the other step
 * functions of a machine given this gate) off its loop, on a worker thread. False for NULL.
 *
 * # Safety
 * `gate` must be NULL or a live handle.
 */
bool recuo_gate_is_remote(const struct recuo_gate *gate);

/**
 * Passes the gate for the `RECUO_STEP_ENTER` of a machine that holds it
 * (`recuo_attempts_set_gate`): waits for a place in flight, then for a start slot, at most
 * `timeout_ms` when `has_timeout` (the step's `until_ms` minus now), without touching the
 * budget (the machine counts it). Stores the pass in `*out`; tell the machine with
 * `recuo_attempts_entered(…, true, …)`, make the attempt, then release the pass before any
 * sleep.
 *
 * Returns `RECUO_OK`; `RECUO_CANCELLED` (the token was cancelled) or `RECUO_TIMED_OUT` (the
 * time ran out) — nothing held, `*out` untouched: tell the machine
 * `recuo_attempts_entered(…, false, …)`; `RECUO_ERR_IO` (a Redis regulator or limit
 * whose server cannot be used: nothing held; tell the machine `false` too, and report the
 * error); `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `gate` and `cancel` must each be NULL or a live handle; `out` NULL or a writable pointer.
 */
recuo_status recuo_gate_wait(const struct recuo_gate *gate,
                             bool has_timeout,
                             uint64_t timeout_ms,
                             const struct recuo_cancel_token *cancel,
                             struct recuo_pass **out);

/**
 * Leaves the gate: gives the place in flight back (the pass's `_free`). NULL is accepted
 * and ignored. May be called from any thread.
 *
 * # Safety
 * `pass` must be NULL or come from `recuo_gate_wait` and not have been released.
 */
void recuo_pass_release(struct recuo_pass *pass);

/**
 * A new, empty channel in `*out`: free it with `recuo_host_channel_free` (the limit made on
 * it keeps its own reference). Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `out` must be NULL or a writable pointer.
 */
recuo_status recuo_host_channel_new(struct recuo_host_channel **out);

/**
 * Releases a channel handle. NULL is accepted and ignored.
 *
 * # Safety
 * `channel` must be NULL or come from `recuo_host_channel_new`, not have been freed, and
 * not be in use by another thread.
 */
void recuo_host_channel_free(struct recuo_host_channel *channel);

/**
 * The call the channel's limit waits on, as JSON into `buf` (`buf_len` bytes, NUL-terminated;
 * its length without the NUL in `*written`), or the empty text when it waits on none.
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (call again with a larger buffer: a
 * script's text is a few kilobytes); `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_LENGTH_TOO_LARGE`.
 *
 * # Safety
 * `channel` NULL or a live handle; `buf` `buf_len` writable bytes; `written` NULL or a
 * `size_t`.
 */
recuo_status recuo_host_channel_pending(const struct recuo_host_channel *channel,
                                        char *buf,
                                        size_t buf_len,
                                        size_t *written);

/**
 * The next call the channel queued whose reply nothing waits for, as JSON (as
 * `recuo_host_channel_pending`), taken from the queue only when it fits; the empty text when
 * none is left. Run them in order.
 *
 * # Safety
 * As `recuo_host_channel_pending`.
 */
recuo_status recuo_host_channel_take_notice(const struct recuo_host_channel *channel,
                                            char *buf,
                                            size_t buf_len,
                                            size_t *written);

/**
 * The reply to the pending call: its `count` integers (Redis's integers, or the numbers it
 * answered as text). Returns `RECUO_OK`, `RECUO_ERR_NULL_ARGUMENT` or
 * `RECUO_ERR_LENGTH_TOO_LARGE` (over 64 integers: no reply of recuo's scripts is so long).
 *
 * # Safety
 * `channel` NULL or a live handle; `reply` `count` readable integers (NULL with 0).
 */
recuo_status recuo_host_channel_answer(const struct recuo_host_channel *channel,
                                       const int64_t *reply,
                                       size_t count);

/**
 * Whether the limit's key agrees with this user's settings: `RECUO_OK`;
 * `RECUO_HOST_PENDING` until the settings' call is answered; `RECUO_ERR_SHARED_MISMATCH`
 * with both settings named in `detail` (a key set up otherwise: every user must agree, and
 * the limit is not used); `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `channel` NULL or a live handle; `detail` NULL or `detail_len` writable bytes.
 */
recuo_status recuo_host_channel_settled(const struct recuo_host_channel *channel,
                                        char *detail,
                                        size_t detail_len);

/**
 * A regulator kept under `key` on the Redis server the host reaches through `channel`:
 * `per_second` starts a second, `burst` at once, adaptive or not, as
 * `recuo_regulator_new_redis_with` — its key's settings the channel's first call.
 * Returns `RECUO_OK`; `RECUO_ERR_INVALID_RATE`; `RECUO_ERR_ZERO_BURST`; `RECUO_ERR_NOT_UTF8`;
 * `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_LENGTH_TOO_LARGE`.
 *
 * # Safety
 * `key` `key_len` readable bytes; `channel` a live handle; `out` NULL or writable.
 */
recuo_status recuo_regulator_new_host(const char *key,
                                      size_t key_len,
                                      double per_second,
                                      uint32_t burst,
                                      bool adaptive,
                                      const struct recuo_host_channel *channel,
                                      struct recuo_regulator **out);

/**
 * A concurrency limit kept under `key` on the Redis server the host reaches through
 * `channel`: `limit` places, each a lease of `lease_ms` (1 ms to 1 day), as
 * `recuo_concurrency_limit_new_redis`. A gate's look only asks (the host waits between
 * looks). Returns `RECUO_OK`; `RECUO_ERR_ZERO_LIMIT`; `RECUO_ERR_INVALID_LEASE`;
 * `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_LENGTH_TOO_LARGE`.
 *
 * # Safety
 * As `recuo_regulator_new_host`.
 */
recuo_status recuo_concurrency_limit_new_host(const char *key,
                                              size_t key_len,
                                              uint32_t limit,
                                              uint64_t lease_ms,
                                              const struct recuo_host_channel *channel,
                                              struct recuo_concurrency_limit **out);

/**
 * A retry budget kept under `key` on the Redis server the host reaches through `channel`,
 * with the local budget's rule and settings (`recuo_retry_budget_new`). Returns `RECUO_OK`;
 * `RECUO_ERR_INVALID_BUDGET`; `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_NULL_ARGUMENT`;
 * `RECUO_ERR_LENGTH_TOO_LARGE`.
 *
 * # Safety
 * As `recuo_regulator_new_host`.
 */
recuo_status recuo_retry_budget_new_host(const char *key,
                                         size_t key_len,
                                         double ratio,
                                         double floor_per_s,
                                         uint32_t window_s,
                                         const struct recuo_host_channel *channel,
                                         struct recuo_retry_budget **out);

/**
 * Whether `recuo_attempts_judged` with `*verdict` at `now_ms` would take a retry from the
 * gate's budget, in `*out`: a host whose budget is kept on a server it reaches asks the
 * budget for that retry first (see the module's protocol). Nothing changes. Returns
 * `RECUO_OK`, `RECUO_ERR_INVALID_ENUM` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `attempts` NULL or a live handle; `verdict` NULL or readable; `out` NULL or writable.
 */
recuo_status recuo_attempts_would_draw_on_budget(struct recuo_attempts *attempts,
                                                 uint64_t now_ms,
                                                 const struct recuo_verdict *verdict,
                                                 bool *out);

/**
 * The name of the `recuo_batch_result_kind` constant `kind` (`"succeeded"`, `"gave_up"`,
 * `"not_started"`), or `"unknown"`. Static. NULL only if recuo panicked.
 */
const char *recuo_batch_result_kind_name(uint32_t kind);

/**
 * Runs `count` operations through one policy and one gate, `workers` at a time, with a
 * deadline for the whole batch, and reports what became of each and the batch's stats.
 * Blocks the calling thread until every operation has ended or the deadline
 * has passed; the operations run on worker threads recuo starts and joins.
 *
 * * `policy`: each operation runs the retry loop of `recuo_retry` under it (read at the
 *   start; a configuration error is returned before anything runs). Its own deadline, if
 *   any, still applies to each operation, never beyond the batch's.
 * * `gate` (may be NULL: none): every attempt, first or retry, passes it — a place in flight,
 *   then a start slot; the place is given back before any sleep; retries draw on its budget;
 *   an adaptive regulator slows down on 429s (see `recuo_retry_options_set_gate`).
 * * `count`, `operation`, `user_data`: the operations `0 … count − 1` (see
 *   `recuo_batch_operation_fn`: it runs on worker threads). `count` may be 0.
 * * `workers`: how many operations run at the same time (0 counts as 1).
 * * `deadline_ms`: a limit on the whole batch's time, in milliseconds (0: none). When it
 *   passes, operations not yet started are not started (`RECUO_BATCH_NOT_STARTED`), those
 *   waiting at the gate stop waiting (not started, if it was their first attempt), and no
 *   operation sleeps past it (`wait_exceeds_deadline`).
 * * `on_progress` (may be NULL): told the batch's progress as each operation ends (see
 *   `recuo_batch_progress_fn`), with `user_data`.
 * * `results`: `count` entries (NULL only when `count` is 0), filled in index order.
 * * `stats_out` (may be NULL): the batch's stats.
 *
 * The jitter and idempotency keys come from the operating system's generator (a batch is
 * concurrent, so its order is not reproducible anyway).
 *
 * Returns `RECUO_OK` (every operation ended one way or another: read `results`);
 * `RECUO_ERR_NO_VERDICT` when an operation returned without a valid verdict — it gave up
 * as `permanent` with `no_verdict` set, the batch went on, and `results` and `*stats_out`
 * are filled; `RECUO_ERR_IO` when an operation's gate could not be used (a Redis limit,
 * regulator or budget out of reach: `gate_error` set, no attempt made; `results` and
 * `*stats_out` filled); before anything runs, with the outputs untouched: `RECUO_ERR_NULL_ARGUMENT`
 * (`policy`, `operation`, `results` with `count > 0`), `RECUO_ERR_LENGTH_TOO_LARGE`, the
 * policy's configuration error.
 *
 * # Safety
 * `policy` and `gate` must be NULL or live handles, not changed during the call;
 * `operation` must be safe to call with `user_data` from several threads at once and must
 * return normally; `results` must point to `count` writable `recuo_batch_result`s;
 * `stats_out` NULL or a writable `recuo_stats`.
 */
recuo_status recuo_batch_run(const struct recuo_policy *policy,
                             const struct recuo_gate *gate,
                             size_t count,
                             recuo_batch_operation_fn operation,
                             void *user_data,
                             uint32_t workers,
                             uint64_t deadline_ms,
                             recuo_batch_progress_fn on_progress,
                             struct recuo_batch_result *results,
                             struct recuo_stats *stats_out);

/**
 * A queue of `len` operations under `policy` (copied), started at `now_ms` on your
 * monotonic clock; with `has_deadline`, none of them starts or waits past `deadline_ms`
 * from now. With `stop_on_unreachable_wait`, the whole queue stops when one operation gives
 * up `wait_exceeds_deadline`. `recorder` (may be NULL) counts the operations not started.
 * Stores the queue in `*out`; free it with `recuo_batch_queue_free`.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT`; the policy's configuration error.
 *
 * # Safety
 * `policy` and `recorder` must be NULL or live handles; `out` NULL or writable.
 */
recuo_status recuo_batch_queue_new(const struct recuo_policy *policy,
                                   size_t len,
                                   uint64_t now_ms,
                                   bool has_deadline,
                                   uint64_t deadline_ms,
                                   bool stop_on_unreachable_wait,
                                   const struct recuo_stats_recorder *recorder,
                                   struct recuo_batch_queue **out);

/**
 * Releases a queue. NULL is accepted and ignored.
 *
 * # Safety
 * `queue` must be NULL or come from `recuo_batch_queue_new` and not have been freed.
 */
void recuo_batch_queue_free(struct recuo_batch_queue *queue);

/**
 * The next operation at `now_ms`, or why it is not started, or FINISHED, into `*out`.
 * Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `queue` must be NULL or a live handle not in use by another thread; `out` NULL or
 * writable.
 */
recuo_status recuo_batch_queue_next(struct recuo_batch_queue *queue,
                                    uint64_t now_ms,
                                    struct recuo_batch_next *out);

/**
 * Operation `index` ended: succeeded (`reason` = `RECUO_GIVE_UP_NONE`) or gave up for
 * `reason`. `*stops` (may be NULL) receives whether this stops the queue now: then stop the
 * operations still running with `recuo_attempts_stop_queue` and `recuo_batch_queue_stopped`'s
 * reason. Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM`; `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `queue` must be NULL or a live handle not in use by another thread; `stops` NULL or
 * writable.
 */
recuo_status recuo_batch_queue_finished(struct recuo_batch_queue *queue,
                                        size_t index,
                                        uint32_t reason,
                                        bool *stops);

/**
 * Operation `index` ended as a `recuo_batch_result` says — its `kind`, `reason` and
 * `stopped_by`, as `recuo_attempts_batch_result` gave them, or the `RECUO_BATCH_NOT_STARTED`
 * and reasons `recuo_batch_queue_next` answered: `*out` (may be NULL) receives the batch's
 * progress, for a progress display. Tell the queue of every operation's end exactly once,
 * after `recuo_batch_queue_finished` for one that started. Returns `RECUO_OK`;
 * `RECUO_ERR_INVALID_ENUM` (a kind or reason that is no constant, or a give-up without its
 * reason); `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `queue` must be NULL or a live handle not in use by another thread; `out` NULL or a
 * writable `recuo_batch_progress`.
 */
recuo_status recuo_batch_queue_ended(struct recuo_batch_queue *queue,
                                     size_t index,
                                     uint32_t kind,
                                     uint32_t reason,
                                     uint32_t stopped_by,
                                     struct recuo_batch_progress *out);

/**
 * Stops the queue on `reason` (your own stop: `RECUO_GIVE_UP_CANCELLED`): nothing more
 * starts. Returns `RECUO_OK`; `RECUO_ERR_INVALID_ENUM` (no constant, or NONE);
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `queue` must be NULL or a live handle not in use by another thread.
 */
recuo_status recuo_batch_queue_stop(struct recuo_batch_queue *queue, uint32_t reason);

/**
 * The reason the queue stopped: a `recuo_give_up_reason` constant (`RECUO_GIVE_UP_NONE`:
 * it did not, or `queue` is NULL).
 *
 * # Safety
 * `queue` must be NULL or a live handle.
 */
uint32_t recuo_batch_queue_stopped(const struct recuo_batch_queue *queue);

/**
 * Makes the queue keep a record of each operation it does not start (a warning, as the
 * result record of every operation that gave up), for `recuo_batch_queue_poll_record`:
 * operation `i` is named by `requests[i]` (`count` of them, copied; an index past them is
 * named by an empty request), its time measured on the wall clock from `unix_ms`, the wall
 * clock's time when the queue was created. The operations you start keep their own
 * records (`recuo_attempts_set_records`).
 *
 * Returns `RECUO_OK`; `RECUO_ERR_ALREADY_STARTED` after the first `recuo_batch_queue_next`
 * (nothing changes); `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_NOT_UTF8` (a method);
 * `RECUO_ERR_LENGTH_TOO_LARGE`.
 *
 * # Safety
 * `queue` must be NULL or a live handle not in use by another thread; `requests` must
 * point to `count` readable `recuo_request_line`s (or be NULL with 0), each valid for its
 * lengths.
 */
recuo_status recuo_batch_queue_set_records(struct recuo_batch_queue *queue,
                                           const struct recuo_request_line *requests,
                                           size_t count,
                                           int64_t unix_ms);

/**
 * Takes the next record the queue made (`recuo_batch_queue_set_records`), in order, as
 * `recuo_attempts_poll_record` does: its level in `*level_out` and its JSON line (redacted)
 * into `buf` (`len` bytes, NUL-terminated; `*written`, when not NULL, receives its length).
 * None left: `*level_out` = `RECUO_LEVEL_NONE` and `buf` holds an empty string.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written; the record stays
 * first in line); `RECUO_ERR_NULL_ARGUMENT` (`queue`, `level_out`, `buf`).
 *
 * # Safety
 * `queue` must be NULL or a live handle not in use by another thread; `level_out` NULL or
 * writable; `buf` must point to `len` writable bytes; `written` NULL or writable.
 */
recuo_status recuo_batch_queue_poll_record(struct recuo_batch_queue *queue,
                                           recuo_level *level_out,
                                           char *buf,
                                           size_t len,
                                           size_t *written);

/**
 * What the record `recuo_batch_queue_poll_record` gave last means to telemetry, as JSON
 * (as `recuo_attempts_record_telemetry`); an empty string when none was polled.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written);
 * `RECUO_ERR_NULL_ARGUMENT` (`queue`, `buf`).
 *
 * # Safety
 * `queue` must be NULL or a live handle not in use by another thread; `buf` must point to
 * `len` writable bytes; `written` NULL or writable.
 */
recuo_status recuo_batch_queue_record_telemetry(struct recuo_batch_queue *queue,
                                                char *buf,
                                                size_t len,
                                                size_t *written);

/**
 * How the operation of `attempts` ended, for the batch it belongs to, into `*out`: it
 * succeeded; it gave up after at least one attempt; or it gave up before any attempt,
 * which is an operation never started (`RECUO_BATCH_NOT_STARTED`, with its reason) — unless
 * its gate could not be used (`gate_failed`: a store out of reach), an error reported as a
 * give-up with `gate_error` set. `no_verdict` is false. Ask once the machine has finished
 * (before, it answers as the operation stands).
 *
 * Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `attempts` must be NULL or a live handle; `out` NULL or a writable `recuo_batch_result`.
 */
recuo_status recuo_attempts_batch_result(const struct recuo_attempts *attempts,
                                         bool gate_failed,
                                         struct recuo_batch_result *out);

/**
 * The name of the `recuo_batch_next_kind` constant `kind` (`"start"`, `"not_started"`,
 * `"finished"`: as the loop vectors write them), or `"unknown"`. Static. NULL only if recuo
 * panicked.
 */
const char *recuo_batch_next_kind_name(uint32_t kind);

/**
 * Adds up two stats — of two batches, or two threads' recorders — into `*out` (which may be
 * `a` or `b`), with the core's `Stats::merge`: the counts add up; the spacing is that of the
 * merged timeline as far as it can be known (the shorter of the two minimums, the first of
 * the first starts and the last of the last ones, the mean recomputed over all starts);
 * `max_in_flight` adds up (an upper bound when the two ran at the same time); `elapsed_ms`
 * is the longer of the two (the stats are taken to have run side by side).
 *
 * `mean_spacing_ns` of the inputs is not read (it follows from the rest); their `bool`
 * fields are read as bytes, any non-zero byte meaning true.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_INVALID_STATS` when an input's
 * first start is after its last (with `has_starts`), or the counts would add up beyond
 * `UINT64_MAX`. On an error `*out` is untouched.
 *
 * # Safety
 * `a` and `b` must be NULL or point to readable `recuo_stats`; `out` NULL or to a writable
 * one.
 */
recuo_status recuo_stats_merge(const struct recuo_stats *a,
                               const struct recuo_stats *b,
                               struct recuo_stats *out);

/**
 * A new, empty recorder. Free it with `recuo_stats_recorder_free`. NULL only if recuo
 * panicked.
 */
struct recuo_stats_recorder *recuo_stats_recorder_new(void);

/**
 * Releases a recorder handle (the recording lives on while options use it). NULL is
 * accepted and ignored.
 *
 * # Safety
 * `recorder` must be NULL or come from `recuo_stats_recorder_new` and not have been freed.
 */
void recuo_stats_recorder_free(struct recuo_stats_recorder *recorder);

/**
 * Attempt number `attempt` (0 for a first attempt, more for a retry) starts at `now_ns`
 * (nanoseconds on a clock that does not go back: `recuo_monotonic_ns()`, or a fake one).
 * Call `recuo_stats_recorder_end` when it is over. Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `recorder` must be NULL or a live handle.
 */
recuo_status recuo_stats_recorder_start(const struct recuo_stats_recorder *recorder,
                                        uint32_t attempt,
                                        uint64_t now_ns);

/**
 * An attempt started earlier is over (it is no longer in flight). Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `recorder` must be NULL or a live handle.
 */
recuo_status recuo_stats_recorder_end(const struct recuo_stats_recorder *recorder);

/**
 * An attempt's verdict had the `recuo_cause` `cause`: `RECUO_CAUSE_RATE_LIMITED` counts in
 * `throttled`, `RECUO_CAUSE_UNAVAILABLE` in `unavailable`, the others in nothing. Returns
 * `RECUO_OK`, `RECUO_ERR_INVALID_ENUM` (nothing counted) or `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `recorder` must be NULL or a live handle.
 */
recuo_status recuo_stats_recorder_saw(const struct recuo_stats_recorder *recorder, uint32_t cause);

/**
 * An operation ended: it succeeded (`success` true) or gave up. Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `recorder` must be NULL or a live handle.
 */
recuo_status recuo_stats_recorder_finished(const struct recuo_stats_recorder *recorder,
                                           bool success);

/**
 * An operation was never started (a deadline came first). Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT`.
 *
 * # Safety
 * `recorder` must be NULL or a live handle.
 */
recuo_status recuo_stats_recorder_not_started(const struct recuo_stats_recorder *recorder);

/**
 * The stats so far, into `*out` (instants on the clock the starts were recorded with;
 * `elapsed_ms` is 0: a recorder does not time anything itself). Returns `RECUO_OK` or
 * `RECUO_ERR_NULL_ARGUMENT` (`*out` untouched).
 *
 * # Safety
 * `recorder` must be NULL or a live handle; `out` NULL or a writable `recuo_stats`.
 */
recuo_status recuo_stats_recorder_snapshot(const struct recuo_stats_recorder *recorder,
                                           struct recuo_stats *out);

/**
 * Redacts the URL `url` (`url_len` bytes) and writes the result into `buf` (`buf_len`
 * bytes), NUL-terminated; `*written` (when not NULL) receives its length without the NUL,
 * and `*malformed_out` (when not NULL) whether the URL was malformed.
 *
 * The rules are the core's, the same in every language: userinfo (`user:password@`)
 * removed; the values of sensitive query parameters (`api_key`, `access_token`,
 * `X-Amz-Signature`, … — any name containing token, secret, password, key, auth, session,
 * signature, credential, and a few more) replaced by `[redacted]`; e-mail addresses
 * (`[email]`) and numbers of 11 or more digits once separators are removed (CPF, CNPJ, card
 * and phone numbers: `[number]`) masked in the path and query values. The host is never
 * touched. A malformed URL (spaces or control characters, an odd scheme, no host after
 * `://`) is redacted as far as it can be read and reported as malformed, never shown as it
 * came.
 *
 * Bytes that are not UTF-8 are replaced by U+FFFD before redaction (no raw byte reaches the
 * output) and make the URL malformed. `url` may contain NUL bytes; it may be NULL only with
 * `url_len` 0 (the empty URL).
 *
 * A buffer of `3 * url_len + 11` bytes always suffices (redaction can make a URL longer:
 * `?sid=` becomes `?sid=[redacted]`).
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` — what fits is written, cut at a
 * character boundary and NUL-terminated (a cut redacted URL still holds no secret), and
 * `*malformed_out` is written; `RECUO_ERR_NULL_ARGUMENT` (`buf`, or `url` with a non-zero
 * length) and `RECUO_ERR_LENGTH_TOO_LARGE`, with nothing written.
 *
 * # Safety
 * `url` must be NULL or point to `url_len` readable bytes; `buf` must point to `buf_len`
 * writable bytes; `written` NULL or a writable `size_t`; `malformed_out` NULL or a writable
 * `bool`.
 */
recuo_status recuo_redact_url(const char *url,
                              size_t url_len,
                              char *buf,
                              size_t buf_len,
                              size_t *written,
                              bool *malformed_out);

/**
 * Redacts the value of one header, named `name` (`name_len` bytes), whose value is `value`
 * (`value_len` bytes), and writes the result into `buf` (`buf_len` bytes), NUL-terminated;
 * `*written` (when not NULL) receives its length without the NUL. Call it for each header
 * you print or log: the name itself stays as it is.
 *
 * The rules are the core's: the value of a sensitive header (`Authorization`,
 * `Proxy-Authorization`, `Cookie`, `Set-Cookie`, and every name containing token, secret,
 * password, passwd, key, auth, session, signature or credential, in any case) becomes
 * `[redacted]`; in other values, URLs (`Location`, `Link`, …) are redacted as
 * `recuo_redact_url` does, and e-mail addresses and long numbers are masked.
 *
 * Header bytes come from a server, so they are never refused: bytes of a value that are not
 * UTF-8 are replaced by U+FFFD (no raw byte reaches the output); a name that is not UTF-8
 * cannot be judged, so its value is taken for a secret and becomes `[redacted]`.
 * `name` and `value` may contain NUL bytes, and be NULL only with a length of 0.
 *
 * A buffer of `3 * value_len + 11` bytes always suffices.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written, cut at a character
 * boundary and NUL-terminated); `RECUO_ERR_NULL_ARGUMENT` (`buf`, or `name` or `value` with
 * a non-zero length) and `RECUO_ERR_LENGTH_TOO_LARGE`, with nothing written.
 *
 * # Safety
 * `name` and `value` must be NULL or point to their lengths of readable bytes; `buf` must
 * point to `buf_len` writable bytes; `written` NULL or a writable `size_t`.
 */
recuo_status recuo_redact_header_value(const char *name,
                                       size_t name_len,
                                       const char *value,
                                       size_t value_len,
                                       char *buf,
                                       size_t buf_len,
                                       size_t *written);

/**
 * Whether a header or query parameter called `name` (`name_len` bytes) holds a secret, so
 * that its value is redacted: the core's rule (see `recuo_redact_header_value`), matched in
 * any case and after percent-decoding (`api%5Fkey` is `api_key`). A name that is not UTF-8
 * cannot be judged: true. False when `name` is NULL with a non-zero length (and for the
 * empty name), or if recuo panicked.
 *
 * # Safety
 * `name` must be NULL or point to `name_len` readable bytes.
 */
bool recuo_is_sensitive_name(const char *name, size_t name_len);

/**
 * Judges who answered a response — the API, a proxy or a CDN — from its headers, and stores
 * the answer in `*out`: the origin, a confidence, and how many evidence lines support it
 * (read them with `recuo_who_answered_evidence`). The judgement is the core's, the same in
 * every language:
 *
 * * headers only a CDN sets point to it: `cf-ray`, `cf-cache-status` (Cloudflare),
 *   `x-amz-cf-id`, `x-amz-cf-pop` (CloudFront), `x-fastly-request-id`, `x-served-by:
 *   cache-…` (Fastly), `x-akamai-*`, `akamai-grn` (Akamai), `x-azure-ref` (Azure Front
 *   Door), `x-msedge-ref`;
 * * `via`, `x-cache`, and a `server` naming a proxy (nginx, envoy, …) point to a proxy or a
 *   cache; a `server` naming a CDN is a brand, weak evidence, never enough for
 *   `RECUO_CONFIDENCE_HIGH`;
 * * a request id, rate-limit headers and the content type the API sends point to the API —
 *   whose answer stays the API's when it merely passed through a CDN.
 *
 * * `headers`, `header_count`: the response's headers (names in any case); NULL only with
 *   `header_count` 0. Header bytes are never refused: bytes that are not UTF-8 are read as
 *   U+FFFD (see `recuo_header`).
 * * `expected_content_type`, `expected_len`: the media type the API sends (e.g.
 *   `application/json`), or NULL when you do not say — then the content type is not
 *   weighed. A response whose content type is another (HTML where JSON was expected) was
 *   made elsewhere. It must be UTF-8.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (`out`, or `headers` or a header's bytes
 * NULL with a non-zero length); `RECUO_ERR_NOT_UTF8` (`expected_content_type`);
 * `RECUO_ERR_LENGTH_TOO_LARGE`. On an error `*out` is untouched.
 *
 * # Safety
 * `headers` must point to `header_count` readable `recuo_header`s (or be NULL with 0), each
 * pointing to its bytes; `expected_content_type` NULL or `expected_len` readable bytes;
 * `out` NULL or a writable `recuo_who_answered_result`.
 */
recuo_status recuo_who_answered(const struct recuo_header *headers,
                                size_t header_count,
                                const char *expected_content_type,
                                size_t expected_len,
                                struct recuo_who_answered_result *out);

/**
 * Copies evidence line number `index` (from 0, below `evidence_count`) of the answer
 * `recuo_who_answered` gives for the same arguments into `buf` (`buf_len` bytes),
 * NUL-terminated; `*written` (when not NULL) receives its length without the NUL. The
 * judgement is made again (it is a pure function of the headers), so the headers must be
 * the same. A line is UTF-8 text for humans (`cf-ray → Cloudflare`, `server: cloudflare →
 * Cloudflare (a brand, weak evidence)`); it may quote a header's value.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written, cut at a character
 * boundary and NUL-terminated); `RECUO_ERR_INDEX_OUT_OF_RANGE` for an `index` at or past the
 * count (nothing written); and the errors of `recuo_who_answered`, or
 * `RECUO_ERR_NULL_ARGUMENT` for `buf`, with nothing written.
 *
 * # Safety
 * As `recuo_who_answered`; `buf` must point to `buf_len` writable bytes; `written` NULL or a
 * writable `size_t`.
 */
recuo_status recuo_who_answered_evidence(const struct recuo_header *headers,
                                         size_t header_count,
                                         const char *expected_content_type,
                                         size_t expected_len,
                                         size_t index,
                                         char *buf,
                                         size_t buf_len,
                                         size_t *written);

/**
 * The name of the `recuo_origin` constant `origin` (`"api"`, `"proxy"`, `"cdn"`,
 * `"unknown"`: the names every language uses), or `"unknown"` for a number that is no
 * constant. Static. NULL only if recuo panicked.
 */
const char *recuo_origin_name(uint32_t origin);

/**
 * The name of the `recuo_confidence` constant `confidence` (`"low"`, `"medium"`, `"high"`),
 * or `"unknown"`. Static. NULL only if recuo panicked.
 */
const char *recuo_confidence_name(uint32_t confidence);

/**
 * The name of the `recuo_decision_kind` constant `kind` (`"done"`, `"retry"`, `"give_up"`:
 * as a record writes it), or `"unknown"`. Static. NULL only if recuo panicked.
 */
const char *recuo_decision_kind_name(uint32_t kind);

/**
 * Builds the record of one attempt, as a JSON line, into `buf` (`buf_len` bytes),
 * NUL-terminated; `*written` (when not NULL) receives its length without the NUL. For a C
 * program that runs a retry loop of its own with its own HTTP client (a machine keeps its
 * records itself: `recuo_attempts_set_records`): call it once the attempt is judged, with
 * what the attempt was and what was decided.
 *
 * The record is the core's, as every language writes it:
 *
 * ```text
 * {"type":"attempt","start":"2026-11-30T10:26:05.123Z","elapsed_ms":250,"method":"GET",
 *  "url":"https://api.example.com/users/[email]?api_key=[redacted]","status":429,
 *  "request_id":"req-7","wait_headers":{"Retry-After":"12"},"delay_ms":12345,
 *  "decision":"retry","reason":"rate_limited"}
 * ```
 *
 * (one line). The URL is redacted (see `recuo_redact_url`; `"url_malformed":true` follows
 * it when it was malformed, or not UTF-8); of the headers only the request id
 * (`X-Request-Id`, `X-Amzn-RequestId`, `X-Amz-Request-Id`, `CF-Ray`, `X-Correlation-Id`: the
 * first found) and the wait headers (`Retry-After`, `RateLimit*`, `X-RateLimit-*`) are kept.
 *
 * * `start_unix_ms`: when the attempt started, milliseconds since the Unix epoch
 *   (`recuo_now_ms()`), shown in RFC 3339, UTC; `elapsed_ms`: how long it took.
 * * `method`, `method_len`: the HTTP method (UTF-8; may be empty for a task with no HTTP
 *   meaning); `url`, `url_len`: the URL as requested — redacted here. Bytes of the URL that
 *   are not UTF-8 are replaced by U+FFFD (and the URL is marked malformed).
 * * `outcome`: what the attempt came to; `headers`, `header_count`: the response's headers
 *   (NULL only with 0; bytes that are not UTF-8 read as U+FFFD).
 * * `verdict`: the attempt's verdict (from `recuo_classify`, or written by hand);
 *   `decision`: what was decided after it — `RECUO_DECISION_DONE`, `_RETRY` (its
 *   `delay_ms` is recorded) or `_GIVE_UP` (with its reason).
 *
 * The record's `decision` is the decision's name; its `reason` is the verdict's cause
 * (`success`, `rate_limited`, `unavailable`, `not_idempotent`, `tls`, …), or, for a give-up
 * of the loop's own (`attempts_exhausted`, `wait_exceeds_deadline`, `budget_exhausted`,
 * `cancelled`), that reason.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written, cut at a character
 * boundary and NUL-terminated: no longer a JSON object — call again with a larger buffer,
 * the line is built again the same); and with nothing written: `RECUO_ERR_NULL_ARGUMENT`
 * (`outcome`, `verdict`, `decision`, `buf`, or a pointer with a non-zero length),
 * `RECUO_ERR_INVALID_ENUM` (a field of `outcome`, `verdict` or `decision` that is none of its
 * constants, or a give-up with `RECUO_GIVE_UP_NONE`),
 * `RECUO_ERR_NOT_UTF8` (`method`), `RECUO_ERR_LENGTH_TOO_LARGE`.
 *
 * # Safety
 * Every pointer must be NULL or valid for its length (`outcome`, `verdict`, `decision`: one
 * readable struct each); `buf` must point to `buf_len` writable bytes; `written` NULL or a
 * writable `size_t`.
 */
recuo_status recuo_record_attempt_json(int64_t start_unix_ms,
                                       uint64_t elapsed_ms,
                                       const char *method,
                                       size_t method_len,
                                       const char *url,
                                       size_t url_len,
                                       const struct recuo_outcome *outcome,
                                       const struct recuo_header *headers,
                                       size_t header_count,
                                       const struct recuo_verdict *verdict,
                                       const struct recuo_decision *decision,
                                       char *buf,
                                       size_t buf_len,
                                       size_t *written);

/**
 * Builds the record of one operation's result, as a JSON line, into `buf` (`buf_len`
 * bytes), NUL-terminated; `*written` (when not NULL) receives its length without the NUL.
 * For a C program driving the state machine: call it once the operation is over, with the
 * report of `recuo_attempts_report`.
 *
 * ```text
 * {"type":"result","start":"2026-11-30T10:26:05.123Z","method":"POST",
 *  "url":"https://api.example.com/pay?token=[redacted]","result":"gave_up","attempts":5,
 *  "reason":"attempts_exhausted","total_ms":1234}
 * ```
 *
 * (one line). `result` is `success` when the report's reason is `RECUO_GIVE_UP_NONE` (then
 * `reason` is `null`), else `gave_up` with the reason's name; `attempts` and `total_ms` are
 * the report's `attempts` and `elapsed_ms`. `start_unix_ms` is when the first attempt
 * started (ms since the Unix epoch); `method` and `url` as in `recuo_record_attempt_json`.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (truncated, NUL-terminated); with
 * nothing written: `RECUO_ERR_NULL_ARGUMENT` (`report`, `buf`, or a pointer with a non-zero
 * length), `RECUO_ERR_INVALID_ENUM` (the report's `reason`), `RECUO_ERR_NOT_UTF8`
 * (`method`), `RECUO_ERR_LENGTH_TOO_LARGE`.
 *
 * # Safety
 * `method` and `url` must be NULL or valid for their lengths; `report` NULL or a readable
 * `recuo_report`; `buf` must point to `buf_len` writable bytes; `written` NULL or a writable
 * `size_t`.
 */
recuo_status recuo_record_result_json(int64_t start_unix_ms,
                                      const char *method,
                                      size_t method_len,
                                      const char *url,
                                      size_t url_len,
                                      const struct recuo_report *report,
                                      char *buf,
                                      size_t buf_len,
                                      size_t *written);

/**
 * What one record means to telemetry, as JSON, into `buf` (`buf_len` bytes, NUL-terminated;
 * `*written`, when not NULL, receives its length): `{"span": {"name", "kind", "start_unix_ms",
 * "end_unix_ms", "error", "attributes": {…}}, "points": [{"instrument", "prometheus",
 * "value", "attributes": {…}}, …]}` — the span an OpenTelemetry exporter would send and the
 * metric points, as `recuo_metric_point` gives them.
 *
 * The record is JSON (`len` bytes, at most `RECUO_TELEMETRY_RECORD_MAX`): an attempt,
 * `{"type": "attempt", "start_unix_ms", "elapsed_ms", "method", "url", "status" or
 * "transport" (neither: a success with no HTTP meaning), "headers": [[name, value], …],
 * "delay_ms", "decision", "reason", "attempt" (from 0), "server_wait", "gate_wait_ms"}`, or
 * a result, `{"type": "result", "start_unix_ms", "method", "url", "attempts", "reason",
 * "stopped_by", "total_ms"}`. The URL and headers are redacted as a record's are.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written, NUL-terminated);
 * with nothing written: `RECUO_ERR_INVALID_VALUE` (not such a record, or a name recuo does
 * not know), `RECUO_ERR_NOT_UTF8`, `RECUO_ERR_LENGTH_TOO_LARGE`, `RECUO_ERR_NULL_ARGUMENT`
 * (`buf`, or `record` with `len > 0`).
 *
 * # Safety
 * `record` must point to `len` readable bytes (or be NULL with `len == 0`); `buf` must point
 * to `buf_len` writable bytes; `written` NULL or a writable `size_t`.
 */
recuo_status recuo_telemetry_json(const char *record,
                                  size_t len,
                                  char *buf,
                                  size_t buf_len,
                                  size_t *written);

/**
 * The instruments the records feed, as JSON, into `buf` (`buf_len` bytes, NUL-terminated;
 * `*written`, when not NULL, receives its length): `{"instruments": [{"otel_name", "unit",
 * "kind", "prometheus", "description"}, …], "buckets_s": [0.005, …]}` — what a host creates
 * its counters and histograms from before the first point.
 *
 * Returns `RECUO_OK`; `RECUO_ERR_BUFFER_TOO_SMALL` (what fits is written);
 * `RECUO_ERR_NULL_ARGUMENT` (`buf`).
 *
 * # Safety
 * `buf` must point to `buf_len` writable bytes; `written` NULL or a writable `size_t`.
 */
recuo_status recuo_telemetry_instruments_json(char *buf, size_t buf_len, size_t *written);

/**
 * Reserves a start slot of weight `cost` if it comes within `max_wait_ns`, without waiting
 * for it (on the regulator's own clock: `recuo_monotonic_ns()`, or a Redis regulator's
 * server's): the non-blocking half of `recuo_regulator_acquire`, for a caller that waits
 * with its own timer.
 *
 * * `RECUO_OK`: the slot is reserved; `*wait_ns_out` receives the nanoseconds until it may
 *   start (0: now). A caller that then gives up waiting spends the slot unused (fewer
 *   starts, never more).
 * * `RECUO_WOULD_WAIT` (not an error): the slot would come later than `max_wait_ns`;
 *   nothing is reserved, and `*wait_ns_out` receives the wait it would need.
 * * `RECUO_QUEUE_FULL` (not an error): the start would wait beyond the
 *   `RECUO_MAX_QUEUED_STARTS` queued ahead, though within `max_wait_ns`: nothing is
 *   reserved, `*wait_ns_out` receives the wait it would need; ask again when that wait,
 *   less the queue's longest, has passed.
 * * `RECUO_ERR_COST_ABOVE_BURST`, `RECUO_ERR_ZERO_COST`, `RECUO_ERR_IO` (a Redis server could not be used;
 *   nothing is reserved), `RECUO_ERR_NULL_ARGUMENT` for `regulator`: `*wait_ns_out` is
 *   untouched.
 *
 * `wait_ns_out` may be NULL; `max_wait_ns` `UINT64_MAX` is no limit.
 *
 * # Safety
 * `regulator` must be NULL or a live handle; `wait_ns_out` NULL or a writable `uint64_t`.
 */
recuo_status recuo_regulator_reserve(const struct recuo_regulator *regulator,
                                     uint32_t cost,
                                     uint64_t max_wait_ns,
                                     uint64_t *wait_ns_out);

/**
 * `recuo_regulator_reserve` at the instant `now_ns` of your choosing, on a time base every
 * user of the regulator shares (a fake clock in tests, the vectors of `gcra.json`): the same
 * answers. A Redis server counts in whole microseconds.
 *
 * # Safety
 * As `recuo_regulator_reserve`.
 */
recuo_status recuo_regulator_reserve_at(const struct recuo_regulator *regulator,
                                        uint64_t now_ns,
                                        uint32_t cost,
                                        uint64_t max_wait_ns,
                                        uint64_t *wait_ns_out);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* RECUO_H */
