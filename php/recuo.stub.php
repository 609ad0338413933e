<?php

/**
 * IDE stubs for the `recuo` PHP extension: careful retries (backoff with jitter, Retry-After
 * and rate-limit headers read right, safe repeats, deadlines, nested loops that share one
 * limit) and the shared limits that keep a fleet of callers inside one allowance (a
 * regulator of starts, a concurrency limit, a retry budget, the planner, a batch runner).
 * docs/php.md documents them. This file only declares what the extension declares (as
 * `php --re recuo` shows it), for IDEs and static analysers: never include it where the
 * extension is loaded.
 *
 * recuo started from two guides, named below as guide A and guide B. Guide A is
 * “Como repetir requisições com backoff exponencial (retry)”
 * (https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff), which writes
 * `comRetry` and `buscarComRetry`. Guide B is
 * “HTTP 429: interpretar Retry-After e repetir pedidos com segurança”,
 * which reads `Retry-After` and runs a batch under a rate limit.
 */

namespace Recuo {
    /** The version of recuo, the same in every language it speaks. */
    const VERSION = '0.1.0';

    /**
     * Guide A's retry loop: calls `$tarefa` until it returns, at most `$tentativas` times,
     * sleeping a full-jitter delay drawn uniformly from `[0, min($maxMs, $baseMs * 2^i)]`
     * milliseconds before retry `i`.
     *
     * Every `\Throwable` from the task is caught. `$repetirSe($e)` decides whether to try
     * again (null: retry everything): a {@see Verdict} (from {@see classify()}: its give-up
     * stops the loop and its server wait is honoured, as in {@see retry()}) or any other answer,
     * read as PHP reads a condition. It is never asked after the last attempt. Giving up
     * rethrows the task's last `\Throwable`: the very same object, trace intact. A
     * `\Throwable` from `$repetirSe` or `$sleep` ends the loop and propagates as is.
     *
     * `$prazoMs` limits the operation's total time: a delay that would end past it gives up
     * at once (reason `wait_exceeds_deadline`) instead of sleeping. `$aoRepetir` is called
     * before each sleep. Inside another `retry()` or `comRetry()` (in the same request and
     * fiber), the attempts are drawn from the enclosing loop's: nested loops never multiply
     * them. `$records` receives the attempts' and the result's records (see {@see retry()}); a failure of the
     * task is recorded as the transport kind `other`.
     *
     * @template T
     * @param callable(): T $tarefa the operation; any \Throwable it throws is a failure
     * @param int $tentativas attempts in total, at least 1
     * @param int $baseMs the first window, in milliseconds (>= 0)
     * @param int $maxMs the largest window, in milliseconds (>= $baseMs)
     * @param (callable(\Throwable): (Verdict|bool))|null $repetirSe whether a failure is worth another attempt
     * @param int|null $seed fixes the jitter (>= 0), for tests and reproducible runs
     * @param (callable(int): mixed)|null $sleep replaces the real sleep; receives milliseconds (never 0)
     * @param int|null $prazoMs the deadline, in milliseconds from the start of the first attempt (>= 0)
     * @param (callable(int, \Throwable, int): mixed)|null $aoRepetir `($attempt, $e, $delayMs)` before each sleep; `$attempt` is the one that failed, from 0
     * @param Gate|null $gate every attempt passes it: a place in flight, then a start slot; retries spend its budget
     * @param (callable(array<string, mixed>): mixed)|null $records receives a record of each attempt, then one of the result, redacted (see {@see Record})
     * @param string $method the request's method, for the records ('' for a task with no HTTP meaning)
     * @param string $url the request's URL, for the records (redacted in every record)
     * @param (callable(string, float, array<string, string>): mixed)|null $metrics receives each metric point the records mean: its Prometheus name (`recuo_attempts_total`, …), its value (a count to add, or seconds to observe) and its labels
     * @return T what `$tarefa` returned
     * @throws \Throwable the task's last failure, or what `$repetirSe`, `$aoRepetir`, `$sleep` or `$records` threw
     * @throws Exception\ConfigError when `$tentativas < 1`, a duration is negative, or `$maxMs < $baseMs`
     * @throws \ValueError when `$seed` is negative or `$tentativas` exceeds 4294967295
     * @throws \LogicException when every place of the gate's concurrency limit is already taken by this thread
     * @throws Exception\SharedFileError when the gate's Redis regulator or limit cannot reach its server (no attempt is made without the server's word)
     */
    function comRetry(
        callable $tarefa,
        int $tentativas = 5,
        int $baseMs = 200,
        int $maxMs = 5000,
        ?callable $repetirSe = null,
        ?int $seed = null,
        ?callable $sleep = null,
        ?int $prazoMs = null,
        ?callable $aoRepetir = null,
        ?Gate $gate = null,
        ?callable $records = null,
        string $method = '',
        string $url = '',
        ?callable $metrics = null,
    ): mixed {
    }

    /**
     * Runs `$operation` under `$policy` (guide A's when null) until it returns or the policy
     * gives up: the one retry loop, the same in every language recuo speaks.
     *
     * Every `\Throwable` from the operation is a failure. `$classify($e)` judges it: a
     * {@see Verdict} (from {@see classify()}, so that 429 and 503 waits are honoured and
     * unsafe repeats refused) or a bool; null retries every failure. Every failure is judged,
     * the last attempt's too: a permanent one gives up `permanent`, a final 429 is
     * counted and reaches an adaptive regulator. A `success` verdict for a failure means
     * there is nothing to retry: the loop gives up (`permanent`). A delay that would end
     * past the policy's deadline, or a server wait too long to count, gives up at once
     * (`wait_exceeds_deadline`) without sleeping. Giving up calls `$onGiveUp` with the report,
     * then rethrows the operation's last `\Throwable`: the very same object, trace intact.
     * A `\Throwable` from `$classify`, `$onRetry`, `$onGiveUp` or `$sleep` propagates as is
     * and ends the loop.
     *
     * Inside another `retry()` or `comRetry()` (in the same request and fiber), the attempts
     * are drawn from the enclosing loop's: an outer loop of 5 around an inner loop of 5
     * around an operation that always fails calls it 5 times, not 25.
     *
     * With a `$gate`, every attempt, first or retry, waits for a place among the operations
     * in flight and then for a start slot of the regulator; the place is given back right
     * after the attempt, before any sleep. Retries spend the gate's budget: when it is
     * spent, the loop gives up (`budget_exhausted`). An adaptive regulator slows down on
     * each `rate_limited` verdict and speeds back up on each success.
     *
     * `$records($record)` receives the attempts' and the result's records, redacted by the core before PHP
     * sees them: one per attempt once its decision is known (before `$onRetry` and
     * `$onGiveUp`), then one for the result; each an array with the core's field names, as
     * {@see Record::attempt()} and {@see Record::result()} make them. An attempt's status and
     * headers are what the operation gave {@see Attempt::recordResponse()}, else what
     * {@see classify()} judged when `$classify` answered its verdict; a failure nothing says
     * more about is the transport kind `other`. The request is `$method` `$url`, unless the
     * attempt says otherwise ({@see Attempt::recordRequest()}). A `\Throwable` from
     * `$records` ends the loop and propagates, as a hook's does.
     *
     * @template T
     * @param callable(Attempt): T $operation receives the attempt's number and the operation's idempotency key
     * @param Policy|null $policy attempts, backoff, deadline, classification (null: {@see Policy::guideA()})
     * @param (callable(\Throwable): (Verdict|bool))|null $classify whether a failure is worth another attempt
     * @param (callable(int, \Throwable, int): mixed)|null $onRetry `($attempt, $e, $delayMs)` before each sleep; `$attempt` is the one that failed, from 0
     * @param (callable(Report): mixed)|null $onGiveUp called once when the loop gives up, before the rethrow
     * @param int|null $seed fixes the jitter (>= 0), for tests; never the idempotency key
     * @param (callable(int): mixed)|null $sleep replaces the real sleep; receives milliseconds (never 0); answering `false` cancels the loop
     * @param Gate|null $gate every attempt passes it: a place in flight, then a start slot; retries spend its budget
     * @param (callable(array<string, mixed>): mixed)|null $records receives a record of each attempt, then one of the result, redacted
     * @param string $method the request's method, for the records ('' for an operation with no HTTP meaning)
     * @param string $url the request's URL, for the records (redacted in every record)
     * @param (callable(string, float, array<string, string>): mixed)|null $metrics receives each metric point the records mean: its Prometheus name (`recuo_attempts_total`, …), its value (a count to add, or seconds to observe) and its labels
     * @return T what `$operation` returned
     * @throws \Throwable the operation's last failure, or what a callback threw
     * @throws \TypeError when `$classify` answers something other than a Verdict or a bool
     * @throws \ValueError when `$seed` is negative
     * @throws \LogicException when every place of the gate's concurrency limit is already taken by this thread
     * @throws Exception\SharedFileError when the gate's Redis regulator or limit cannot reach its server (no attempt is made without the server's word)
     */
    function retry(
        callable $operation,
        ?Policy $policy = null,
        ?callable $classify = null,
        ?callable $onRetry = null,
        ?callable $onGiveUp = null,
        ?int $seed = null,
        ?callable $sleep = null,
        ?Gate $gate = null,
        ?callable $records = null,
        string $method = '',
        string $url = '',
        ?callable $metrics = null,
    ): mixed {
    }

    /**
     * The verdict on one outcome of an HTTP request: retry, give up, or success,
     * with the reason and the wait the server asked for (Retry-After, then the rate-limit
     * headers). The verdict keeps the status (or transport failure) and the headers it
     * judged, for the records of a loop whose `$classify` answers it.
     *
     * @param int|null $status the response's status (outside 100-599 counts as 500); or null with `$error`
     * @param 'connect'|'tls'|'timeout'|'reset'|'other'|null $error the transport failure, when no status came back
     * @param string $method the request's method (case does not matter)
     * @param bool $idempotencyKey whether the request carried an idempotency key (then any method is safe to repeat)
     * @param array<string, string|int|list<string|int>>|list<array{string, string|int}> $headers
     *        the response's headers: name => value, name => list of values (PSR-7's `getHeaders()`),
     *        or a list of [name, value] pairs
     * @param int|null $nowMs now, in milliseconds since the Unix epoch (null: the system clock)
     * @param Policy|null $policy whose rules apply (null: recuo's default rules)
     * @throws \ValueError unless exactly one of `$status` and `$error` is given, or for an unknown `$error`
     * @throws \TypeError when `$headers` has another shape
     */
    function classify(
        ?int $status = null,
        ?string $error = null,
        string $method = 'GET',
        bool $idempotencyKey = false,
        array $headers = [],
        ?int $nowMs = null,
        ?Policy $policy = null,
    ): Verdict {
    }

    /**
     * Guide B: how long to wait before retry index `$attempt`, in milliseconds.
     *
     * A Retry-After of delay-seconds or an HTTP-date gives the server's wait exactly (a past
     * date is 0); a wait beyond 2^53 - 1 ms gives `INF` (give up, never retry early). A null
     * or invalid value (bytes that are not ASCII included) gives a full-jitter draw from
     * `[0, min(8000, 1000 * 2^$attempt)]`.
     *
     * @param string|null $retryAfter the Retry-After header's value, or null when absent
     * @param int $attempt the retry index, 0 for the first retry (>= 0)
     * @param int|null $nowMs now, in milliseconds since the Unix epoch (null: the system clock);
     *                        pass the response's Date to be immune to clock skew
     * @param int|null $seed fixes the jitter (>= 0)
     * @return float milliseconds, or INF
     * @throws \ValueError when `$attempt` or `$seed` is negative
     */
    function retryDelayMs(?string $retryAfter, int $attempt, ?int $nowMs = null, ?int $seed = null): float
    {
    }

    /**
     * Reads a Retry-After value: delay-seconds or an HTTP-date (RFC 9110, all three forms).
     *
     * @param string $value the header's value (bytes; anything not ASCII is invalid)
     * @param int|null $nowMs now, in milliseconds since the Unix epoch (null: the system clock)
     */
    function parseRetryAfter(string $value, ?int $nowMs = null): RetryAfter
    {
    }

    /**
     * The backoff window `min($capMs, $baseMs * 2^$attempt)` in milliseconds, saturating.
     *
     * @param int $attempt the retry index (>= 0)
     * @param int $baseMs the first window, in milliseconds (>= 0)
     * @param int $capMs the largest window, in milliseconds (>= $baseMs)
     * @throws Exception\ConfigError when a duration is negative or `$capMs < $baseMs`
     * @throws \ValueError when `$attempt` is negative
     */
    function backoffWindowMs(int $attempt, int $baseMs = 200, int $capMs = 5000): int
    {
    }

    /**
     * What a curl transfer that failed with `$errno` means for the request: never sent
     * (`connect`: DNS, refused, a TLS handshake that failed, a connect timeout), a certificate
     * refused (`tls`), a timeout after sending (`timeout`), a connection lost after sending, a
     * body cut short included (`reset`), or anything else (`other`). The one table
     * `buscarComRetry`, the Guzzle middleware and C's `recuo_curl.h` read.
     *
     * @param int $errno curl's error number (`curl_errno()`), not 0
     * @param bool $requestSent whether any byte of the request went out (`curl_getinfo()`'s `request_size` above 0)
     * @return 'connect'|'tls'|'timeout'|'reset'|'other'
     */
    function curlTransport(int $errno, bool $requestSent): string
    {
    }

    /**
     * How an HTTP request that ended for `$reason` (null: it succeeded) reaches its caller, its
     * last attempt having come to `$status`, the transport failure `$error`, an attempt the
     * deadline cut while the server was still answering (`$late`), or nothing (no attempt was
     * made): `response` (the last response is returned), `error` (the client's own transport
     * error is raised again) or `give_up` (recuo's give-up is raised). A client adapter
     * (`client`: Guzzle, Symfony) returns the last response, as the client would without
     * recuo; guide A's `buscarComRetry` (`guide`) throws after a final 429 or 5xx. Either gives
     * up when no attempt could be made, when the deadline cut an attempt, or when the server's
     * wait does not fit the deadline.
     *
     * @param 'client'|'guide' $style
     * @param 'permanent'|'attempts_exhausted'|'wait_exceeds_deadline'|'budget_exhausted'|'queue_stopped'|'cancelled'|null $reason
     * @param 'connect'|'tls'|'timeout'|'reset'|'other'|null $error
     * @return 'response'|'error'|'give_up'
     * @throws \ValueError for an unknown style, reason or error, or both `$status` and `$error`
     */
    function httpEnding(string $style, ?string $reason = null, ?int $status = null, ?string $error = null, bool $late = false): string
    {
    }

    /**
     * The give-up's message, the same in every language: `recuo gave up after 1 attempt
     * (wait_exceeds_deadline): HTTP 429; a retry is allowed in 3600 s`. The last attempt is
     * `$status`, `$error`, `$late` or nothing, as for {@see httpEnding()}; `$retryInMs` is how
     * long until a retry would be allowed, when known (shown in whole seconds, rounded up).
     *
     * @param 'permanent'|'attempts_exhausted'|'wait_exceeds_deadline'|'budget_exhausted'|'queue_stopped'|'cancelled' $reason
     * @param 'connect'|'tls'|'timeout'|'reset'|'other'|null $error
     * @throws \ValueError for an unknown reason or error, or both `$status` and `$error`
     */
    function giveUpMessage(string $reason, int $attempts, ?int $status = null, ?string $error = null, bool $late = false, ?int $retryInMs = null): string
    {
    }

    /**
     * What a Retry-After value asks for. Made by {@see parseRetryAfter()} only; read-only.
     */
    final class RetryAfter
    {
        // <faces: RetryAfter properties>
        /** @var 'seconds'|'date'|'unbounded'|'invalid' `seconds`, `date`, `unbounded` or `invalid`. */
        public readonly string $kind;

        /** The server's finite wait in milliseconds (at most 2^53 − 1) for seconds and a date; null when unbounded or invalid. */
        public readonly ?int $waitMs;
        // </faces>

        /** Not constructible from PHP: use {@see parseRetryAfter()}. */
        private function __construct()
        {
        }
    }

    /**
     * How an operation is retried: attempts, backoff, deadline, the spread added
     * to server waits, which outcomes are worth another attempt and the
     * idempotency header. Immutable: the `with*` methods answer a changed copy.
     *
     * A policy is also one plain value, an array of the shape below: {@see Policy::fromArray()}
     * reads it, {@see Policy::toArray()} writes it, `json_encode()` and `serialize()` carry
     * it. A field left out takes guide A's value. The maps list only what differs from the
     * default classification: `status_retry` by status (`[418 => 'always']`),
     * `transport_retry` by failure (`['timeout' => 'never']`), `idempotent_methods` by method
     * (`['POST' => true]`).
     *
     * <faces: PolicyValue>
     * @phpstan-type PolicyValue array{
     *     max_attempts?: int,
     *     base_ms?: int,
     *     cap_ms?: int,
     *     jitter?: string,
     *     deadline_ms?: int|null,
     *     spread_ms?: int|null,
     *     idempotency_header?: string,
     *     use_date_header?: bool,
     *     server_honours_keys?: bool,
     *     quota_403_as_rate_limit?: bool,
     *     status_retry?: array<array-key, string>,
     *     transport_retry?: array<array-key, string>,
     *     idempotent_methods?: array<array-key, bool>,
     * }
     * </faces>
     */
    final class Policy implements \JsonSerializable
    {
        /** Attempts in all, the first included (>= 1). */
        public readonly int $maxAttempts;

        /** The first backoff window, in milliseconds. */
        public readonly int $baseMs;

        /** The largest backoff window, in milliseconds; it never shortens a server's wait. */
        public readonly int $capMs;

        /** @var 'full'|'equal'|'decorrelated'|'none' */
        public readonly string $jitter;

        /** The limit on the operation's total time in milliseconds, from the start of its first attempt; null for none. */
        public readonly ?int $deadlineMs;

        /** The fixed spread added to server waits in milliseconds; null for `min(window(n), 1000)`. */
        public readonly ?int $spreadMs;

        /** The header the idempotency key is sent in. */
        public readonly string $idempotencyHeader;

        /** Whether a response's `Date` header is "now" when server waits are measured. */
        public readonly bool $useDateHeader;

        /** Whether a 403 whose rate-limit headers say the quota is spent counts as a 429. */
        public readonly bool $quota403IsRateLimit;

        /**
         * Whether the server honours idempotency keys: a request sent with recuo's own key then
         * counts as idempotent, so a POST whose outcome is unknown (a timeout, a dropped
         * connection, a 500) is retried. Off by default: a server may ignore the header.
         */
        public readonly bool $serverHonoursKeys;

        /**
         * The defaults are guide A's: 5 attempts, 200 ms, 5 s, full jitter, no deadline.
         *
         * @param int $maxAttempts attempts in all (>= 1)
         * @param int $baseMs the first backoff window, in milliseconds (>= 0)
         * @param int $capMs the largest backoff window, in milliseconds (>= $baseMs)
         * @param 'full'|'equal'|'decorrelated'|'none' $jitter how delays are drawn from the windows
         * @param int|null $deadlineMs the limit on the total time, in milliseconds (>= 0); null for none
         * @param int|null $spreadMs the spread added to server waits, in milliseconds (>= 0); null for `min(window(n), 1000)`
         * @param string $idempotencyHeader an HTTP token
         * @param bool $useDateHeader measure server waits from the response's `Date`
         * @param bool $serverHonoursKeys your API honours idempotency keys: a request sent with recuo's key counts as idempotent
         * @throws Exception\ConfigError for attempts below 1 (`ZERO_ATTEMPTS`), a negative duration
         *         (`NEGATIVE_DURATION`), `$capMs < $baseMs` (`CAP_BELOW_BASE`) or a header name that is
         *         not an HTTP token (`INVALID_HEADER_NAME`)
         * @throws \ValueError for an unknown `$jitter` or more than 4294967295 attempts
         */
        public function __construct(
            int $maxAttempts = 5,
            int $baseMs = 200,
            int $capMs = 5000,
            string $jitter = 'full',
            ?int $deadlineMs = null,
            ?int $spreadMs = null,
            string $idempotencyHeader = 'Idempotency-Key',
            bool $useDateHeader = false,
            bool $serverHonoursKeys = false,
        ) {
        }

        /** Guide A: 5 attempts, 200 ms base, 5 s cap, full jitter, no deadline. */
        public static function guideA(): Policy
        {
        }

        /** Guide B: 5 attempts (at most 4 retries), 1 s base, 8 s cap, full jitter, a 30 s deadline. */
        public static function guideB(): Policy
        {
        }

        /**
         * The HTTP adapters' default (Guzzle, Symfony): guide B's, with an HTTP-date wait
         * measured from the response's own `Date`, so a client whose clock is wrong still waits
         * what the server meant.
         */
        public static function adapters(): Policy
        {
        }

        /**
         * For one request a person waits on: the adapters' policy, whose 30 s deadline gives
         * up at once on a server wait that would not fit, saying when a retry would be allowed.
         */
        public static function interactive(): Policy
        {
        }

        /**
         * For the requests of a batch: the adapters' policy with no deadline of its own, so
         * that the batch's deadline is the one that counts ({@see runBatch()} gives each
         * request what is left of it) and a per-minute limiter's `Retry-After: 60` is waited.
         * Outside a batch, give it a deadline.
         */
        public static function batch(): Policy
        {
        }

        /**
         * The policy `$value` describes: the plain form {@see Policy::toArray()} answers. A
         * field left out takes guide A's value; `[]` is guide A's policy. Status keys may be
         * ints or strings (`[418 => 'always']`, `['418' => 'always']`); method names are
         * matched without regard to case.
         *
         * @param PolicyValue $value the plain form
         * @throws Exception\ConfigError `INVALID_VALUE` for an unknown field or a value of the wrong
         *         type (`'3'` for a number, a negative or fractional duration; the message says
         *         which), `UNKNOWN_NAME` for a jitter, rule, transport failure, method or status
         *         recuo does not know, `STATUS_OUT_OF_RANGE` for a status outside 400-599, and the
         *         constructor's errors
         */
        public static function fromArray(array $value): Policy
        {
        }

        /**
         * This policy as plain data, the form {@see Policy::fromArray()} reads: every field
         * written out (null for no deadline and for the default spread), and in the three maps
         * only the rules that differ from the default classification (statuses as int keys,
         * methods in capitals). `Policy::fromArray($p->toArray())` is the same policy.
         *
         * @return PolicyValue
         */
        public function toArray(): array
        {
        }

        /**
         * The plain form, for `json_encode()`: {@see Policy::toArray()} with the three maps as
         * `\stdClass` objects, so that an empty map encodes as `{}`.
         *
         * @return array<string, mixed>
         */
        public function jsonSerialize(): array
        {
        }

        /**
         * The plain form ({@see Policy::toArray()}), for `serialize()`.
         *
         * @return array<string, mixed>
         */
        public function __serialize(): array
        {
        }

        /**
         * The policy `$data` describes, read as {@see Policy::fromArray()} reads it, for
         * `unserialize()`.
         *
         * @param array<string, mixed> $data
         * @throws Exception\ConfigError as {@see Policy::fromArray()}
         */
        public function __unserialize(array $data): void
        {
        }

        /**
         * When a status is retried.
         *
         * @param int $status 400 to 599
         * @return 'never'|'if_idempotent'|'always'
         * @throws Exception\ConfigError for a status outside 400-599 (`STATUS_OUT_OF_RANGE`)
         */
        public function statusRetry(int $status): string
        {
        }

        /**
         * A copy in which `$status` is retried `$rule` (1xx-3xx are always a success).
         *
         * @param int $status 400 to 599
         * @param 'never'|'if_idempotent'|'always' $rule
         * @throws Exception\ConfigError for a status outside 400-599 (`STATUS_OUT_OF_RANGE`, the same range in every language)
         * @throws \ValueError for an unknown rule
         */
        public function withStatusRetry(int $status, string $rule): Policy
        {
        }

        /**
         * When a transport failure is retried.
         *
         * @param 'connect'|'tls'|'timeout'|'reset'|'other' $error
         * @return 'never'|'if_idempotent'|'always'
         * @throws \ValueError for an unknown kind
         */
        public function transportRetry(string $error): string
        {
        }

        /**
         * A copy in which the transport failure `$error` is retried `$rule`.
         *
         * @param 'connect'|'tls'|'timeout'|'reset'|'other' $error
         * @param 'never'|'if_idempotent'|'always' $rule
         * @throws \ValueError for an unknown kind or rule
         */
        public function withTransportRetry(string $error, string $rule): Policy
        {
        }

        /** Whether `$method` (any case) is safe to repeat without an idempotency key. */
        public function isMethodIdempotent(string $method): bool
        {
        }

        /**
         * A copy in which `$method` is (or is not) safe to repeat without a key.
         *
         * @param string $method GET, HEAD, OPTIONS, TRACE, PUT, DELETE, POST, PATCH or CONNECT (any case)
         * @throws \ValueError when `$idempotent` is true for a method recuo does not know
         */
        public function withMethodIdempotent(string $method, bool $idempotent = true): Policy
        {
        }

        /** A copy in which a 403 with a spent quota does (or does not) count as a 429. */
        public function withQuota403IsRateLimit(bool $enabled): Policy
        {
        }

        /** A copy in which the server honours (or does not honour) idempotency keys. */
        public function withServerHonoursKeys(bool $honoured = true): Policy
        {
        }
    }

    /**
     * What to do about one outcome. Made by {@see classify()} for HTTP outcomes, or by the
     * static constructors for anything else; read-only.
     */
    final class Verdict
    {
        /** @var 'retry'|'give_up'|'success' */
        public readonly string $verdict;

        /**
         * Why: `rate_limited`, `unavailable`, `server_error`, `connect`, `timeout`, `reset`,
         * `other`, `not_idempotent`, `permanent`, `tls` or `success`.
         */
        public readonly string $reason;

        /** The wait the server asked for, in milliseconds; null for none or an unbounded one. */
        public readonly ?int $waitMs;

        /** Whether the server asked for a wait too long to honour: retrying gives up (`wait_exceeds_deadline`). */
        public readonly bool $waitUnbounded;

        /** Not constructible from PHP: use {@see classify()} or the static constructors. */
        private function __construct()
        {
        }

        /** A success: nothing to retry. */
        public static function success(): Verdict
        {
        }

        /**
         * Worth another attempt (for `$reason`, `server_error` by default), after at least
         * `$waitMs` when given.
         *
         * @param int|null $waitMs the other side's minimum wait, in milliseconds (>= 0)
         * @param string $reason a verdict's reason (`rate_limited`, `unavailable`, `server_error`, `connect`, …)
         * @throws \ValueError when `$waitMs` is negative or `$reason` is not a verdict's reason
         */
        public static function retry(?int $waitMs = null, string $reason = 'server_error'): Verdict
        {
        }

        /**
         * Not worth another attempt (for `$reason`, `permanent` by default).
         *
         * @param string $reason a verdict's reason (`permanent`, `not_idempotent`, `tls`, …)
         * @throws \ValueError when `$reason` is not a verdict's reason
         */
        public static function giveUp(string $reason = 'permanent'): Verdict
        {
        }
    }

    /**
     * What {@see retry()}'s operation knows about the attempt it is making; its properties
     * are read-only. For the records (the loops' `$records` sink), the operation may say what
     * the attempt sent and received.
     */
    final class Attempt
    {
        /** The attempt's number: 0 for the first. */
        public readonly int $number;

        /** The operation's idempotency key: a UUID v4 (lower case), the same on every attempt. */
        public readonly string $idempotencyKey;

        /** The header to send the key in (the policy's; `Idempotency-Key` by default). */
        public readonly string $idempotencyHeader;

        /** Not constructible from PHP: {@see retry()} makes one per attempt. */
        private function __construct()
        {
        }

        /**
         * For the records: this attempt sends `$method` to `$url` (redacted in every record).
         * It replaces the loop's `method:` and `url:` for this attempt's record and the result's.
         */
        public function recordRequest(string $method, string $url): void
        {
        }

        /**
         * For the records: this attempt received `$status` with `$headers` (the records keep
         * the request id and the wait headers only). Without it, a failure's record takes the
         * status and headers {@see classify()} judged, when `$classify` answered that verdict.
         *
         * @param int $status 100 to 999
         * @param array<string, string|int|list<string|int>>|list<array{string, string|int}> $headers
         *        the response's headers, in any shape {@see classify()} takes
         * @throws \ValueError for a status outside 100-999
         * @throws \TypeError when `$headers` has another shape
         */
        public function recordResponse(int $status, array $headers = []): void
        {
        }
    }

    /** What happened to one operation. Read-only. */
    final class Report
    {
        // <faces: Report properties>
        /** Attempts made. */
        public readonly int $attempts;

        /** @var 'permanent'|'attempts_exhausted'|'wait_exceeds_deadline'|'budget_exhausted'|'cancelled'|'queue_stopped'|null Why it stopped without success; null when it succeeded (or has not stopped). */
        public readonly ?string $reason;

        /** Milliseconds from the start of the first attempt to the last decision. */
        public readonly int $elapsedMs;

        /** @var list<int> The delays decided between attempts, in order. */
        public readonly array $delaysMs;

        /** @var 'permanent'|'attempts_exhausted'|'wait_exceeds_deadline'|'budget_exhausted'|'cancelled'|'queue_stopped'|null For `queue_stopped`: the reason of the operation that stopped the queue. */
        public readonly ?string $stoppedBy;

        /** For `wait_exceeds_deadline`: when the server would accept a retry, in milliseconds since the Unix epoch (null when unbounded, or for another reason). */
        public readonly ?int $retryAtUnixMs;
        // </faces>

        /** Not constructible from PHP: see {@see retry()}'s `$onGiveUp`, {@see Operation::report()} and {@see Step}'s `report`. */
        private function __construct()
        {
        }
    }

    /**
     * What the host does next, as {@see Operation} answers it; {@see Operation::pollGate()}
     * also answers `wait` (not through the gate yet: look again in `delayMs`). Read-only.
     */
    final class Step
    {
        /** @var 'enter'|'wait'|'call'|'classify'|'sleep'|'done'|'gave_up' */
        public readonly string $kind;

        /** The attempt the step is about (from 0); null for `wait`, `done` and `gave_up`. */
        public readonly ?int $attempt;

        /** For `enter`: the deadline's instant on the host's clock (ms), when there is one; give up waiting then. */
        public readonly ?int $untilMs;

        /** For `call`: what is left of the deadline (ms), when there is one; bound the attempt by it. */
        public readonly ?int $timeoutMs;

        /** For `sleep`: the delay, in milliseconds (0: no wait at all); for `wait`: how long until the next look at the gate. */
        public readonly ?int $delayMs;

        /** @var 'permanent'|'attempts_exhausted'|'wait_exceeds_deadline'|'budget_exhausted'|'queue_stopped'|'cancelled'|null for `gave_up`: why */
        public readonly ?string $reason;

        /** For `gave_up` with `wait_exceeds_deadline`: the instant (the host's clock, ms) from which the server would accept a retry. */
        public readonly ?int $retryAtMs;

        /** For `done` and `gave_up`: what happened. */
        public readonly ?Report $report;

        /** Not constructible from PHP: {@see Operation} makes them. */
        private function __construct()
        {
        }
    }

    /**
     * One operation's whole retry loop as the core's sans-IO machine, for code with
     * its own event loop or HTTP client — the same machine {@see retry()} and {@see comRetry()}
     * drive. `start()`, then answer each {@see Step} as it says: `enter` with `pollGate()`
     * (and each `wait` it answers with a sleep and `pollGate()` again) or, for a host that
     * passed the gate itself, `entered()`; `call` with `succeeded()`, `failed()` or
     * `responded()`, `classify` with `judged()`, `sleep` with `slept()`, until `done` or
     * `gave_up`. The machine owns the gate's feedback, the retry budget, the stats, the
     * records and the report; it sleeps never and reads no clock. All times are the host's
     * monotonic clock in milliseconds (>= 0; {@see monotonicMs()}).
     */
    final class Operation
    {
        /**
         * The key the request's attempts carry: `none`; `caller`, the caller's own, already on
         * the request, sent as it is; or `recuo`, one key per request — add `key()` in the
         * policy's idempotency header to every attempt.
         *
         * @var 'none'|'caller'|'recuo'
         */
        public readonly string $keySent;

        /**
         * Whether a failure of the request whose outcome is unknown (a timeout, a dropped
         * connection, a 500) may be retried: an idempotent method, the caller's own key, or
         * recuo's key to a server that honours keys.
         */
        public readonly bool $idempotent;

        /** For an operation that gave up waiting past its deadline: the instant (the host's clock, ms) from which a retry would be allowed; null otherwise. */
        public readonly ?int $retryAtMs;

        /**
         * @param int|null $seed fixes the jitter (>= 0); never the idempotency key
         * @param Gate|null $gate every attempt passes it (`enter`); its budget pays for retries; an adaptive regulator hears of 429s and successes
         * @param StatsRecorder|null $stats counts the operation's starts, causes and result
         * @param string $method the request's method: it decides `responded()`'s classification, and names the request in the records
         * @param string $url the request's URL, for the records (redacted in every record)
         * @param 'debug'|'info'|'warning'|null $records keeps the records of that level and above for `pollRecord()`; null keeps none
         * @param bool $classifyLastFailure false is guide A's loop: the last attempt's failure is never judged (it gives up `attempts_exhausted`)
         * @param bool $keyGiven the request already carries the caller's own idempotency key (or the caller sends `key()`) and the caller vouches for it: the request counts as idempotent
         * @param int|null $pool what is left of an enclosing loop's attempts, shared with it (nested loops share one limit)
         * @param bool $nested this operation runs inside an attempt that already drew from `$pool`
         * @param bool|null $sendKeys whether recuo adds its own key to the request: null for methods that are not idempotent; `keySent` says what to send
         * @param bool $replayable false for a request whose body cannot be sent twice (a stream read once): one attempt, judged and recorded, then it gives up `attempts_exhausted` with no retry decided and no retry budget spent
         * @param LoopPool|null $loopPool where the attempts come from, as {@see LoopPool} chose it (instead of `$pool` and `$nested`)
         * @throws \ValueError for a negative `$seed`, an unknown `$records` level, a `$pool` out of range, or both `$pool` and `$loopPool`
         */
        public function __construct(
            Policy $policy,
            ?int $seed = null,
            ?Gate $gate = null,
            ?StatsRecorder $stats = null,
            string $method = '',
            string $url = '',
            ?string $records = null,
            bool $classifyLastFailure = true,
            bool $keyGiven = false,
            ?int $pool = null,
            bool $nested = false,
            ?bool $sendKeys = null,
            bool $replayable = true,
            ?LoopPool $loopPool = null,
        ) {
        }

        /**
         * Whether an operation with `$gate`, stats (`$stats`) and records of `$records` and
         * above needs its machine when its first attempt succeeds: when it does not, a host may
         * make that attempt before creating the operation, and create it only on a failure
         * (`startAfterFirst()`). Decide it once per policy and gate, and keep the answer.
         *
         * @param 'debug'|'info'|'warning'|null $records
         * @throws \ValueError for an unknown `$records` level
         */
        public static function successNeedsMachine(?Gate $gate = null, bool $stats = false, ?string $records = null): bool
        {
        }

        /** Starts the operation at `$nowMs`, which is `$unixMs` on the wall clock (ms since the Unix epoch, the records' times). */
        public function start(int $nowMs, int $unixMs): Step
        {
        }

        /**
         * Starts the operation whose first attempt was already made, begun at `$nowMs`
         * (`$unixMs` on the wall clock), before the operation existed — when a success needs
         * no machine, a host may make the first attempt first and create the operation only
         * when it fails. Answers that attempt's `call`, counted and recorded as begun then;
         * tell its outcome next. That attempt passed no gate; give the operation the pool
         * that counts it as drawn ({@see LoopPool::afterFirst()}).
         */
        public function startAfterFirst(int $nowMs, int $unixMs): Step
        {
        }

        /**
         * For a host that cannot block: one look at the gate for `enter` — a place in flight
         * first, then a start slot, within the deadline. Answers `wait` (sleep `delayMs`,
         * then look again: never more than 5 ms while the concurrency limit is full) or the
         * step after the gate: the attempt's `call`, or `gave_up` (`wait_exceeds_deadline`
         * when the place or the slot would come after the deadline; `cancelled` or
         * `queue_stopped` once stopped). The operation holds the place until the attempt
         * ends, and gives back a start slot it reserved and did not use.
         *
         * @throws Exception\SharedFileError when a limit or regulator on Redis cannot be reached (nothing is held; look again later)
         * @throws \OverflowException when the regulator queues too many starts ahead already
         */
        public function pollGate(int $nowMs): Step
        {
        }

        /**
         * As `pollGate()`, the regulator asked at `$regulatorNowNs` on a clock every user of
         * it shares (tests and simulations; {@see monotonicNs()} is the real one).
         *
         * @throws Exception\SharedFileError when a limit or regulator on Redis cannot be reached
         * @throws \OverflowException when the regulator queues too many starts ahead already
         */
        public function pollGateAt(int $nowMs, int $regulatorNowNs): Step
        {
        }

        /** The gate's answer for `enter`: `$passed` is false when the wait was cancelled or reached `untilMs`. */
        public function entered(int $nowMs, bool $passed): Step
        {
        }

        /** The attempt of `call` succeeded. */
        public function succeeded(int $nowMs): Step
        {
        }

        /**
         * The attempt of `call` failed: answers `classify` (or, in guide A's loop with no
         * attempt left, gives up). For its record: the attempt received `$status` with
         * `$headers`, if it says so; its error carried `$errorStatus` with `$errorHeaders` (a
         * response attached to an exception). The record shows what the attempt said, else
         * what the verdict's classifier saw (`judged()`), else what the error carried.
         *
         * @param int|null $status 100 to 999
         * @param array<string, string|int|list<string|int>>|list<array{string, string|int}> $headers in any shape {@see classify()} takes
         * @param int|null $errorStatus 100 to 999
         * @param array<string, string|int|list<string|int>>|list<array{string, string|int}> $errorHeaders in any shape {@see classify()} takes
         * @throws \ValueError for a status outside 100-999
         */
        public function failed(int $nowMs, ?int $status = null, array $headers = [], ?int $errorStatus = null, array $errorHeaders = []): Step
        {
        }

        /**
         * The verdict on the failure of `classify`. For the record, what the classifier saw:
         * `$status` with `$headers`, or the status and headers a {@see classify()} verdict
         * judged. A `success` verdict gives up (`permanent`).
         *
         * @param int|null $status 100 to 999
         * @param array<string, string|int|list<string|int>>|list<array{string, string|int}> $headers in any shape {@see classify()} takes
         * @throws \ValueError for a status outside 100-999
         */
        public function judged(int $nowMs, Verdict $verdict, ?int $status = null, array $headers = []): Step
        {
        }

        /**
         * An HTTP attempt of `call` ended with `$status` or the transport failure `$error`
         * (exactly one) and the response's `$headers`; the machine classifies it by the policy.
         *
         * @param 'connect'|'tls'|'timeout'|'reset'|'other'|null $error
         * @param array<string, string|int|list<string|int>>|list<array{string, string|int}> $headers in any shape {@see classify()} takes
         * @throws \ValueError unless exactly one of `$status` and `$error` is given, or for an unknown `$error`
         */
        public function responded(int $nowMs, ?int $status = null, ?string $error = null, array $headers = []): Step
        {
        }

        /** The wait of `sleep` is over (or was cut short). */
        public function slept(int $nowMs): Step
        {
        }

        /** Cancels the operation (the caller's own cancellation): the next step gives up `cancelled`. */
        public function cancel(): void
        {
        }

        /**
         * Stops the operation because its batch queue stopped on another operation's `$reason`:
         * it gives up `queue_stopped`, and its report's `stoppedBy` names `$reason`.
         *
         * @param 'permanent'|'attempts_exhausted'|'wait_exceeds_deadline'|'budget_exhausted'|'queue_stopped'|'cancelled' $reason
         */
        public function stopQueue(string $reason): void
        {
        }

        /** What the attempt being made says it sent (for its record and the result's). */
        public function attemptRequest(string $method, string $url): void
        {
        }

        /**
         * The next record, in the order they were made: `[level, json]`, the level and the
         * core's JSON line (`json_decode($json, true)` gives the array the loops' `$records` receive).
         *
         * @return array{0: 'debug'|'info'|'warning', 1: string}|null null when there is none
         */
        public function pollRecord(): ?array
        {
        }

        /**
         * What the record `pollRecord()` answered last means to telemetry, as JSON (the same
         * mapping in every language): `{"operation", "span", "points"}`, each point with its
         * `instrument` (OpenTelemetry's name), `prometheus` name, `value`, `attributes` and
         * `labels` (the attributes under their Prometheus names); null when none was polled.
         */
        public function recordTelemetry(): ?string
        {
        }

        /** What has happened so far. */
        public function report(): Report
        {
        }

        /** The operation's idempotency key: a UUID v4 from the operating system's random source, made at the first call, then the same. */
        public function key(): string
        {
        }

        /**
         * How the operation's end reaches the caller, its last attempt being what `responded()`
         * was told — or, with `$late`, an attempt the deadline cut while the server was still
         * answering (see {@see httpEnding()}).
         *
         * @param 'client'|'guide' $style
         * @return 'response'|'error'|'give_up'
         * @throws \ValueError for an unknown `$style`
         */
        public function ending(string $style = 'client', bool $late = false): string
        {
        }

        /** The give-up's message at `$nowMs` (see {@see giveUpMessage()}); null unless the operation gave up. */
        public function giveUpMessage(int $nowMs, bool $late = false): ?string
        {
        }
    }

    /** What {@see BatchQueue::next()} answers. Read-only. */
    final class Next
    {
        /** @var 'start'|'not_started'|'finished' */
        public readonly string $kind;

        /** The operation's place in the batch (from 0); null for `finished`. */
        public readonly ?int $index;

        /** For `start`: the policy to run the operation under, its deadline clipped to what is left of the batch's. */
        public readonly ?Policy $policy;

        /** @var 'wait_exceeds_deadline'|'queue_stopped'|'cancelled'|null for `not_started`: why */
        public readonly ?string $reason;

        /** @var 'permanent'|'attempts_exhausted'|'wait_exceeds_deadline'|'budget_exhausted'|'queue_stopped'|'cancelled'|null for `queue_stopped`: the reason that stopped the queue */
        public readonly ?string $stoppedBy;

        /** Not constructible from PHP: {@see BatchQueue} makes them. */
        private function __construct()
        {
        }
    }

    /**
     * The core's batch queue (sans-IO), the one {@see runBatch()} drives: which operation
     * starts next and under which policy (its deadline clipped to the batch's), or why it is
     * not started; when the whole queue stops.
     */
    final class BatchQueue
    {
        /** @var 'permanent'|'attempts_exhausted'|'wait_exceeds_deadline'|'budget_exhausted'|'queue_stopped'|'cancelled'|null the reason the queue stopped; null while it runs */
        public readonly ?string $stopped;

        /**
         * @param int $len the number of operations (>= 0)
         * @param int $nowMs the host's monotonic clock, in milliseconds (>= 0)
         * @param int|null $deadlineMs no operation starts or waits past this many milliseconds from now
         * @param bool $stopOnUnreachableWait an operation that gives up `wait_exceeds_deadline` stops the queue
         * @param StatsRecorder|null $stats counts the operations never started
         * @param list<array{string, string}>|null $requests the operations' `[method, url]`, by index: the queue then makes the record of each operation it does not start (`pollRecord()`; the URL redacted)
         * @param int|null $unixMs the wall clock at `$nowMs`, in milliseconds since the Unix epoch (the records' times); now when null
         * @throws \ValueError for a negative `$len`, `$nowMs` or `$deadlineMs`
         * @throws \TypeError when `$requests` holds something other than `[method, url]` pairs of strings
         */
        public function __construct(Policy $policy, int $len, int $nowMs, ?int $deadlineMs = null, bool $stopOnUnreachableWait = false, ?StatsRecorder $stats = null, ?array $requests = null, ?int $unixMs = null)
        {
        }

        /** The next operation to start at `$nowMs`, or why it is not started, or `finished`. */
        public function next(int $nowMs): Next
        {
        }

        /**
         * Operation `$index` ended: succeeded (`$reason` null) or gave up for `$reason`.
         *
         * @return bool true when this stops the queue: stop the operations still running ({@see Operation::stopQueue()} with `stopped`)
         */
        public function finished(int $index, ?string $reason = null): bool
        {
        }

        /**
         * Operation `$index` ended as `$end` — what {@see BatchQueue::endOf()} answers, or
         * `not_started` for a {@see Next} the queue did not start — with its `$reason` and
         * `$stoppedBy`: the batch's progress, for a progress display. Tell the queue of every
         * operation's end exactly once.
         *
         * @param 'succeeded'|'gave_up'|'not_started' $end
         * @throws \ValueError for an unknown end or reason, or a give-up without its reason
         */
        public function ended(int $index, string $end, ?string $reason = null, ?string $stoppedBy = null): BatchProgress
        {
        }

        /** Stops the queue on `$reason` (the caller's own stop: `'cancelled'`): nothing more starts. */
        public function stop(string $reason): void
        {
        }

        /**
         * The next record the queue made — a `warning` for each operation it did not start,
         * when given `$requests` — in order, as {@see Operation::pollRecord()} answers them.
         *
         * @return array{0: 'debug'|'info'|'warning', 1: string}|null null when there is none
         */
        public function pollRecord(): ?array
        {
        }

        /**
         * What the record `pollRecord()` answered last means to telemetry, as JSON (the same
         * mapping in every language): `{"operation", "span", "points"}`, each point with its
         * `instrument` (OpenTelemetry's name), `prometheus` name, `value`, `attributes` and
         * `labels` (the attributes under their Prometheus names); null when none was polled.
         */
        public function recordTelemetry(): ?string
        {
        }

        /**
         * How an operation of the batch whose loop reported `$report` ended for the batch: a
         * give-up before any attempt is `not_started` — unless its gate could not be used
         * (`$gateFailed`), which is a give-up to report as such.
         *
         * @return 'succeeded'|'gave_up'|'not_started'
         */
        public static function endOf(Report $report, bool $gateFailed = false): string
        {
        }
    }

    /**
     * Where one loop's attempts come from, as the rule for nested loops says: a loop inside
     * another draws from the outermost loop's attempts, so they share one limit. A host that
     * runs {@see Operation}s inside one another keeps the pool a loop `owned` as its
     * context's pool (per request, per fiber) until that loop ends, and passes it as
     * `$enclosing` to the loops inside. Read-only.
     */
    final class LoopPool
    {
        /** Attempts left in the pool (shared with every loop that draws from it). */
        public readonly int $remaining;

        /** Whether the loop's first attempt is already drawn (an enclosing loop's attempt, or one made before its machine). */
        public readonly bool $nested;

        /** Whether the pool is the loop's own: the context's pool until the loop ends. */
        public readonly bool $owned;

        /**
         * The pool of a loop of `$maxAttempts` that starts inside `$enclosing` (the pool of the
         * outermost loop running in the same context, if any): it joins that pool — unless it
         * is an operation of a batch, which owns a pool of its own, as does a loop with no
         * enclosing one.
         *
         * @throws \ValueError for `$maxAttempts` below 0 or above 4294967295
         */
        public static function choose(?LoopPool $enclosing, int $maxAttempts, bool $batchOperation = false): LoopPool
        {
        }

        /**
         * As `choose()`, for a loop whose first attempt was made before its machine
         * ({@see Operation::startAfterFirst()}): that attempt counts as drawn — from the
         * enclosing pool, as a nested loop's first attempt is, or from a pool of its own of
         * `$maxAttempts - 1`.
         *
         * @throws \ValueError for `$maxAttempts` below 0 or above 4294967295
         */
        public static function afterFirst(?LoopPool $enclosing, int $maxAttempts, bool $batchOperation = false): LoopPool
        {
        }

        /** Not constructible from PHP: see `choose()` and `afterFirst()`. */
        private function __construct()
        {
        }
    }

    /**
     * The planning arithmetic: how a batch of `$requests` sent at `$target` fits an
     * `$allowance`. Guide B: `plan(600, '120/min', '90/min', 2.0)` is 667 ms between starts,
     * 400 s in all, 3 requests in flight.
     *
     * @param int $requests requests in the batch (>= 0)
     * @param string|float $allowance the account's allowance: `'120/min'`, `'2/s'`, `'5000/h'`, `'86400/day'`, or a number per second
     * @param string|float $target the rate to send at, written the same way
     * @param float $latencyS how long a request takes to answer, in seconds (>= 0)
     * @param float $retryFraction the share of all attempts that are retries, in [0, 1)
     * @throws Exception\PlanError when the target is above the allowance, the latency is negative or the fraction is not in [0, 1)
     * @throws \ValueError for a rate that is not one, or a negative `$requests`
     */
    function plan(int $requests, string|float $allowance, string|float $target, float $latencyS, float $retryFraction = 0.0): Plan
    {
    }

    /**
     * The system's monotonic clock (`CLOCK_MONOTONIC`) in nanoseconds: the clock every
     * regulator and budget counts in, the same for every process on the machine.
     */
    function monotonicNs(): int
    {
    }

    /**
     * The same clock in whole milliseconds, rounded down: the one reading to tell a
     * {@see Operation} its instants in (`$nowMs`).
     */
    function monotonicMs(): int
    {
    }

    /**
     * A wait of `$ns` nanoseconds in whole milliseconds, rounded up: a wait never ends before
     * what it was asked to wait.
     *
     * @throws \ValueError for a negative `$ns`
     */
    function waitMsFromNs(int $ns): int
    {
    }

    /**
     * Runs a queue of operations through one policy and one gate, one after the other, with
     * a deadline for the whole queue: what has not started when it passes is never started
     * (reported `not_started`, `wait_exceeds_deadline`), and no operation waits past it (its
     * policy's deadline is cut to what is left; a wait for the gate ends when it passes). The
     * queue is the core's {@see BatchQueue}, each operation's loop its {@see Operation}.
     *
     * Each operation runs as in {@see retry()}: every `\Throwable` it throws is a failure,
     * judged by `$classify`. Each counts its own attempts, even inside another loop; loops
     * inside an operation draw from it. A `\Throwable` from `$classify`, `$sleep`,
     * `$records` or `$onProgress` ends the batch and propagates.
     *
     * @param array<array-key, callable(Attempt): mixed> $operations the operations, in order; the report keeps their keys
     * @param Policy|null $policy attempts, backoff, deadline, classification of each operation (null: {@see Policy::guideA()})
     * @param Gate|null $gate every attempt of every operation passes it
     * @param float|null $deadline the limit on the whole batch, in seconds (>= 0); null for none
     * @param (callable(\Throwable): (Verdict|bool))|null $classify whether a failure is worth another attempt (null: every one is)
     * @param int|null $seed fixes the jitter of every operation (>= 0), for tests; never the idempotency keys
     * @param (callable(int): mixed)|null $sleep replaces the real sleep; receives milliseconds (never 0); answering `false` cancels that operation
     * @param (callable(array<string, mixed>): mixed)|null $records receives the records of every attempt and of every operation's result, redacted;
     *        each operation says what it sends with {@see Attempt::recordRequest()}; an operation never started has a result record
     *        of its own (given up, with its reason, no attempt)
     * @param bool $stopOnUnreachableWait an operation that gives up `wait_exceeds_deadline` stops the queue: the rest are not started (`queue_stopped`, `stoppedBy`)
     * @param (callable(BatchProgress): mixed)|null $onProgress told the batch's progress as each operation ends, started or not: one call per operation, in order
     * @param (callable(string, float, array<string, string>): mixed)|null $metrics receives each metric point the records mean: its Prometheus name, its value (a count to add, or seconds to observe) and its labels
     * @throws \TypeError when an entry of `$operations` is not callable
     * @throws Exception\ConfigError when `$deadline` is negative or not a number
     * @throws \ValueError when `$seed` is negative
     * @throws \LogicException when every place of the gate's concurrency limit is already taken by this thread
     * @throws Exception\SharedFileError when the gate's Redis regulator or limit cannot reach its server (no attempt is made without the server's word)
     */
    function runBatch(
        array $operations,
        ?Policy $policy = null,
        ?Gate $gate = null,
        ?float $deadline = null,
        ?callable $classify = null,
        ?int $seed = null,
        ?callable $sleep = null,
        ?callable $records = null,
        bool $stopOnUnreachableWait = false,
        ?callable $onProgress = null,
        ?callable $metrics = null,
    ): BatchReport {
    }

    /**
     * What a record, given as JSON (the plain form every language's telemetry vectors use:
     * `{"type": "attempt", …}` or `{"type": "result", …}`), means to telemetry, as JSON:
     * `{"operation", "span", "points"}` — the same mapping in every language. A record recuo
     * cannot read is a `\ValueError`.
     */
    function telemetryOf(string $record): string
    {
    }

    /**
     * `$url` with its secrets and personal data replaced: userinfo removed, the
     * values of sensitive query parameters `[redacted]`, e-mail addresses `[email]` and long
     * numbers (CPF, CNPJ, card and phone numbers: 11 digits or more) `[number]` in the path
     * and query values. Never throws: a malformed URL is redacted as far as it can be read
     * (see {@see redactUrlDetailed()}), and bytes that are not UTF-8 are percent-encoded.
     */
    function redactUrl(string $url): string
    {
    }

    /**
     * As {@see redactUrl()}, and whether the URL was malformed (then redacted as far as it
     * could be read, never shown as it came).
     *
     * @return array{url: string, malformed: bool}
     */
    function redactUrlDetailed(string $url): array
    {
    }

    /**
     * Response or request headers with the values of sensitive ones (`Authorization`,
     * `Cookie`, `Set-Cookie`, and every name with `token`, `secret`, `key`, `auth`,
     * `session`, `signature`, … in it, in any case) `[redacted]`, and the URLs inside the
     * others (`Location`, `Link`) redacted as {@see redactUrl()} does. Never throws for a
     * header's bytes: those that are not UTF-8 become U+FFFD.
     *
     * @param array<string, string|int|list<string|int>>|list<array{string, string|int}> $headers
     *        name => value, name => list of values (PSR-7's `getHeaders()`), or a list of [name, value] pairs
     * @return list<array{string, string}> [name, value] pairs, in order
     * @throws \TypeError when `$headers` has another shape
     */
    function redactHeaders(array $headers): array
    {
    }

    /**
     * Who most likely answered: the API, a proxy or a CDN, judged from the response's
     * headers (`cf-ray`, `x-amz-cf-id`, `x-served-by`, `via`, `x-cache`, `server`, a request
     * id, …) and, when given, from whether its content type is the one the API sends. Never
     * certain from a brand alone.
     *
     * @param array<string, string|int|list<string|int>>|list<array{string, string|int}> $headers
     *        the response's headers, in any shape {@see classify()} takes; names in any case
     * @param string|null $expectedContentType what the API sends (`application/json`); null to leave the body out of it
     * @throws \TypeError when `$headers` has another shape
     */
    function whoAnswered(array $headers, ?string $expectedContentType = null): WhoAnswered
    {
    }

    /** Who answered, as {@see whoAnswered()} judges it. Read-only. */
    final class WhoAnswered
    {
        // <faces: WhoAnswered properties>
        /** @var 'api'|'proxy'|'cdn'|'unknown' The most likely origin. */
        public readonly string $origin;

        /** @var list<string> What points there (and what points elsewhere), one line each. */
        public readonly array $evidence;

        /** @var 'low'|'medium'|'high' How sure. */
        public readonly string $confidence;
        // </faces>

        /** Not constructible from PHP: use {@see whoAnswered()}. */
        private function __construct()
        {
        }
    }

    /**
     * The attempts' and results' records for PHP code with a loop of its own (an event loop, a
     * queue worker): the very records the loops hand to their `$records` sink,
     * redacted by the core, as arrays or as the core's JSON lines.
     *
     * An attempt record holds `type` (`attempt`), `start` (RFC 3339, UTC), `elapsed_ms`,
     * `method`, `url` (redacted; `url_malformed: true` when it could not be read), `status` or
     * `transport` (or `outcome: success`), `request_id`, `wait_headers` (name => value),
     * `delay_ms`, `decision` and `reason`. A result record holds `type` (`result`), `start`,
     * `method`, `url`, `result` (`success` or `gave_up`), `attempts`, `reason` and `total_ms`.
     */
    final class Record
    {
        /** Not constructible: the methods are static. */
        private function __construct()
        {
        }

        /**
         * The record of one attempt.
         *
         * @param int $startMs when it started, in milliseconds since the Unix epoch
         * @param int $elapsedMs how long it took (>= 0)
         * @param string $method the HTTP method ('' for an operation with no HTTP meaning)
         * @param string $url the URL: redacted here
         * @param int|null $status the status received (100-999); null with `$error`, or for a success with no HTTP meaning
         * @param 'connect'|'tls'|'timeout'|'reset'|'other'|null $error the transport failure, when no status came back
         * @param array<string, string|int|list<string|int>>|list<array{string, string|int}> $headers
         *        the response's headers (any shape {@see classify()} takes): only the request id and the wait headers are kept
         * @param int|null $delayMs the delay chosen before the next attempt (>= 0)
         * @param 'done'|'retry'|'give_up' $decision what was decided
         * @param string $reason why: a verdict's reason (`rate_limited`, `not_idempotent`, …, `success`) or a give-up reason (`attempts_exhausted`, …)
         * @return array<string, mixed>
         * @throws \ValueError for an unknown `$error`, `$decision` or `$reason`, both `$status` and `$error`, a status outside 100-999 or a negative duration
         * @throws \TypeError when `$headers` has another shape
         */
        public static function attempt(
            int $startMs,
            int $elapsedMs,
            string $method,
            string $url,
            ?int $status = null,
            ?string $error = null,
            array $headers = [],
            ?int $delayMs = null,
            string $decision = 'done',
            string $reason = 'success',
        ): array {
        }

        /**
         * As {@see Record::attempt()}, as the core's JSON line (no newline at the end).
         *
         * @param 'connect'|'tls'|'timeout'|'reset'|'other'|null $error
         * @param array<string, string|int|list<string|int>>|list<array{string, string|int}> $headers
         * @param 'done'|'retry'|'give_up' $decision
         * @throws \ValueError as {@see Record::attempt()}
         * @throws \TypeError when `$headers` has another shape
         */
        public static function attemptJson(
            int $startMs,
            int $elapsedMs,
            string $method,
            string $url,
            ?int $status = null,
            ?string $error = null,
            array $headers = [],
            ?int $delayMs = null,
            string $decision = 'done',
            string $reason = 'success',
        ): string {
        }

        /**
         * The record of one operation's result.
         *
         * @param int $startMs when its first attempt started, in milliseconds since the Unix epoch
         * @param string $method the HTTP method
         * @param string $url the URL: redacted here
         * @param int $attempts attempts made (0 to 4294967295)
         * @param int $totalMs from the start of the first attempt to the end (>= 0)
         * @param 'permanent'|'attempts_exhausted'|'wait_exceeds_deadline'|'budget_exhausted'|'queue_stopped'|'cancelled'|null $reason why it gave up; null for a success
         * @return array<string, mixed>
         * @throws \ValueError for an unknown `$reason`, a negative duration or count
         */
        public static function result(int $startMs, string $method, string $url, int $attempts, int $totalMs, ?string $reason = null): array
        {
        }

        /**
         * As {@see Record::result()}, as the core's JSON line (no newline at the end).
         *
         * @param 'permanent'|'attempts_exhausted'|'wait_exceeds_deadline'|'budget_exhausted'|'queue_stopped'|'cancelled'|null $reason
         * @throws \ValueError as {@see Record::result()}
         */
        public static function resultJson(int $startMs, string $method, string $url, int $attempts, int $totalMs, ?string $reason = null): string
        {
        }
    }

    /** What a batch will take, as {@see plan()} works it out. Read-only. */
    final class Plan
    {
        // <faces: Plan properties>
        /** Time between two starts at the target rate, in milliseconds (rounded). */
        public readonly int $intervalMs;

        /** The least time the batch can take at the target rate, retries included, in seconds. */
        public readonly float $durationS;

        /** The expected number of retries (`requests · f / (1 − f)`). */
        public readonly float $retries;

        /** Mean requests in flight (Little's law: rate × latency). */
        public readonly float $inFlight;

        /** @var list<string> Things worth knowing that do not stop the plan. */
        public readonly array $warnings;
        // </faces>

        /** Not constructible from PHP: use {@see plan()}. */
        private function __construct()
        {
        }
    }

    /**
     * Limits request starts to a rate with a burst (GCRA): after a quiet spell up to
     * `burst` starts may go at once, then one per interval; in any window of time `W`, at
     * most `burst + rate * W` starts. Retries pass the same regulator as first attempts (give
     * it to a {@see Gate}). {@see Regulator::shared()} puts it in a file that every process
     * opening it shares; {@see Regulator::redis()} on a Redis server that every machine
     * using it shares. Not cloneable: pass the object itself around.
     */
    final class Regulator
    {
        /** The rate in force, in starts per second (below the configured one while an adaptive regulator slows down). */
        public readonly float $rate;

        /** How many starts may go at once after a quiet spell. */
        public readonly int $burst;

        /**
         * A regulator for this process.
         *
         * @param string|float $rate `'90/min'`, `'1.5/s'`, `'5000/h'`, `'86400/day'`, or a number per second (> 0)
         * @param int $burst starts that may go at once (>= 1)
         * @param bool $adaptive halve the rate on each {@see onThrottled()} (down to 1/64), give back 1/16 on each {@see onSuccess()}
         * @throws \ValueError for a rate that is not one, or a burst of 0
         */
        public function __construct(string|float $rate, int $burst = 1, bool $adaptive = false)
        {
        }

        /**
         * A regulator in the file at `$path` (created when missing), shared by every process
         * that opens the same file: PHP-FPM workers, CLI jobs, Python and C programs alike.
         * A process that dies leaves nothing locked. On an adaptive file a 429 reported by any
         * process ({@see onThrottled()}) halves the rate for every process, and successes
         * bring it back; the setting is made when the file is set up, and every process that
         * opens it must agree.
         *
         * @param string $path the state file (a few dozen bytes)
         * @param string|float $rate as for the constructor
         * @param int $burst as for the constructor
         * @param bool $adaptive as for the constructor, for every process of the file
         * @throws Exception\SharedFileError when the file cannot be opened or mapped, holds something else, or was set up with another rate, burst or adaptive setting
         * @throws \ValueError for a rate that is not one, a burst of 0, or an empty path
         */
        public static function shared(string $path, string|float $rate, int $burst = 1, bool $adaptive = false): Regulator
        {
        }

        /**
         * A regulator on the Redis server at `$url` under `$key`, shared by every process on
         * every machine that uses the same server and key. Each check is one atomic script on
         * the server, timed by the server's clock: {@see tryAcquire()} and {@see acquire()}
         * need no clock of yours. A server lost later makes them throw, taking nothing.
         * On an adaptive key the interval in force lives on the server: a 429 reported by any
         * holder halves the rate for all of them, and successes bring it back; the setting is
         * made when the key is set up, and every process that uses it must agree.
         *
         * @param string $url `redis://[[user]:password@]host[:port][/db]`, `rediss://…` for TLS, or `host:port` (port 6379, database 0 by default); `redis+cluster://host:port,host:port/` for a Redis Cluster (seed nodes; `rediss+cluster://…` for TLS)
         * @param string $key the key: the state lives in `{KEY}:tat`, the settings in `{KEY}:settings`, an adaptive key's interval in force in `{KEY}:interval`
         * @param string|float $rate as for the constructor; every user of the key must ask for the same
         * @param int $burst as for the constructor; every user of the key must ask for the same
         * @param bool $adaptive as for the constructor, for every holder of the key; every user of the key must ask for the same
         * @throws Exception\SharedFileError when the key was set up with another rate, burst or adaptive setting, or the server cannot be reached or used
         * @throws \ValueError for a rate that is not one, a burst of 0, or a URL or key that is not UTF-8
         */
        public static function redis(string $url, string $key, string|float $rate, int $burst = 1, bool $adaptive = false): Regulator
        {
        }

        /**
         * Answers at once: 0.0 when a start of weight `$cost` may go now (and takes it), else
         * the seconds to wait before it could (and takes nothing) — on the regulator's own
         * clock: the monotonic clock, or a Redis regulator's server's.
         *
         * @param int $cost what the start weighs (<= burst)
         * @throws \ValueError when `$cost` is above the burst or negative
         * @throws Exception\SharedFileError when a Redis regulator's server cannot be used (nothing is taken)
         */
        public function tryAcquire(int $cost = 1): float
        {
        }

        /**
         * As {@see tryAcquire()} at `$nowNs`: 0 when the start may go (and takes it), else the
         * nanoseconds to wait. For fake clocks in tests (every user of the regulator must share
         * the clock: for a Redis regulator, every machine; the server counts microseconds).
         *
         * @param int $nowNs a reading of {@see monotonicNs()}, or of a fake clock (>= 0)
         * @param int $cost what the start weighs (<= burst)
         * @throws \ValueError when `$nowNs` is negative or `$cost` is above the burst
         * @throws Exception\SharedFileError when a Redis regulator's server cannot be used (nothing is taken)
         */
        public function tryAcquireAt(int $nowNs, int $cost = 1): int
        {
        }

        /**
         * Waits for a start slot of weight `$cost` and takes it. Slots are handed out in the
         * order they are asked for, so no caller starves.
         *
         * @param float|null $timeout wait only if the slot comes within this many seconds (>= 0); null: as long as it takes
         * @param int $cost what the start weighs (<= burst)
         * @return bool true when the slot is taken; false when it would not come in time (nothing is taken)
         * @throws Exception\ConfigError when `$timeout` is negative or not a number
         * @throws \ValueError when `$cost` is 0, above the burst or negative
         * @throws \OverflowException when the slot would come after the 4096 starts the regulator queues ahead (nothing is taken; ask again later)
         * @throws Exception\SharedFileError when a Redis regulator's server cannot be used (nothing is taken)
         */
        public function acquire(?float $timeout = null, int $cost = 1): bool
        {
        }

        /** A 429 was seen: an adaptive regulator halves its rate (down to 1/64 of the configured one). */
        public function onThrottled(): void
        {
        }

        /** A start succeeded: an adaptive regulator gives back 1/16 of the configured rate, up to it. */
        public function onSuccess(): void
        {
        }
    }

    /**
     * At most `limit` operations in flight at once: each holds a {@see Permit}. PHP objects
     * never leave their thread, so only this thread can give a place back: a wait without a
     * timeout while every place is taken could never end, and throws instead. Shared between
     * machines by {@see redis()}. Not cloneable.
     */
    final class ConcurrencyLimit
    {
        /** The number of places. */
        public readonly int $limit;

        /** Places taken now (of a limit in a shared file: by every process). */
        public readonly int $inFlight;

        /** The most places that were ever taken at once (of a shared file or Redis: by this process). */
        public readonly int $maxInFlight;

        /**
         * @param int $limit places (>= 1)
         * @throws \ValueError for a limit below 1 or above 4294967295
         */
        public function __construct(int $limit)
        {
        }

        /**
         * A limit in the file at `$path` (created with mode 0600 when missing): at most
         * `$limit` operations in flight for every process of this machine that opens the same
         * file — PHP-FPM workers, CLI jobs, Python and C programs alike. Each place is a lock
         * the kernel releases when its holder's process ends (`kill -9` included, Linux 3.15
         * or later): the place comes back at once, and a waiter in another process takes it
         * within 10 ms. `inFlight` counts every process's places, `maxInFlight` this
         * process's.
         *
         * @param string $path the file; never opened through a symbolic link, it must belong to this user and be writable by nobody else
         * @param int $limit places (>= 1); every opener of the file must ask for the same
         * @throws Exception\SharedFileError when the file cannot be used, holds something else, or was set up with another limit
         * @throws \ValueError for an empty path or one with a NUL byte, or a limit below 1 or above 4294967295
         */
        public static function shared(string $path, int $limit): ConcurrencyLimit
        {
        }

        /**
         * A limit on the Redis server at `$url` under `$key`: at most `$limit` operations in
         * flight for every process on every machine that uses the same server and key. Each
         * place is a lease of `$lease` seconds on the server's clock: a holder that dies frees
         * its place when its lease expires, and {@see Permit::renew()} extends one (choose a
         * lease longer than the slowest operation: a gate does not renew it). A server lost
         * later makes {@see tryAcquire()}, {@see acquire()}, {@see Permit::renew()} and a
         * gate's loop throw, taking nothing. `inFlight` and `maxInFlight` count this
         * process's places.
         *
         * @param string $url as for {@see Regulator::redis()}: one server, or `redis+cluster://host:port,host:port/` for a Redis Cluster
         * @param string $key the key: the places live in `{KEY}:leases`, the settings in `{KEY}:settings`
         * @param int $limit places (>= 1); every user of the key must ask for the same
         * @param float $lease seconds a place lasts unless renewed (0.001 to 86400); every user of the key must ask for the same
         * @throws Exception\SharedFileError when the key was set up with another limit or lease, or the server cannot be reached or used
         * @throws \ValueError for a limit below 1 or above 4294967295, a lease out of range, or a URL or key that is not UTF-8
         */
        public static function redis(string $url, string $key, int $limit, float $lease): ConcurrencyLimit
        {
        }

        /**
         * A place now, or null when every place is taken.
         *
         * @throws Exception\SharedFileError when a Redis limit's server cannot be used (no place is taken)
         */
        public function tryAcquire(): ?Permit
        {
        }

        /**
         * A place, waiting for one.
         *
         * @param float|null $timeout wait at most this many seconds (>= 0); null: until one is free
         * @return Permit|null null when none came in time
         * @throws \LogicException when `$timeout` is null and every place is taken (by this thread: the wait would never end)
         * @throws Exception\ConfigError when `$timeout` is negative or not a number
         * @throws Exception\SharedFileError when a Redis limit's server cannot be used (no place is taken)
         */
        public function acquire(?float $timeout = null): ?Permit
        {
        }
    }

    /**
     * One place of a {@see ConcurrencyLimit}, given back by {@see release()} or when the
     * object is destroyed, whichever comes first. Not cloneable.
     */
    final class Permit
    {
        /** Whether the place was given back. */
        public readonly bool $released;

        /** Not constructible from PHP: use {@see ConcurrencyLimit::tryAcquire()} or {@see ConcurrencyLimit::acquire()}. */
        private function __construct()
        {
        }

        /** Gives the place back. Releasing twice does nothing. */
        public function release(): void
        {
        }

        /**
         * Extends the lease of a {@see ConcurrencyLimit::redis()} place from now (a long
         * operation does this before its lease ends). A local place has no lease: true until
         * released.
         *
         * @return bool true; false when the lease had already expired (the place may be someone else's now, and is not taken back) or the permit was released
         * @throws Exception\SharedFileError when the Redis server cannot be used
         */
        public function renew(): bool
        {
        }
    }

    /**
     * Retries may be at most `ratio` of the requests of the last `windowS` seconds, plus
     * `floorPerS` retries per second (Finagle's RetryBudget, gRPC retry throttling, the AWS
     * retry quota): when it is spent, a loop whose {@see Gate} holds it gives up
     * (`budget_exhausted`) instead of adding load. Not cloneable.
     */
    final class RetryBudget
    {
        /** Retries allowed per request (0.1: 10%). */
        public readonly float $ratio;

        /** Retries allowed per second whatever the requests. */
        public readonly float $floorPerS;

        /** The window the budget remembers, in seconds. */
        public readonly int $windowS;

        /**
         * A budget for this process. The defaults: 10% of the requests, plus 1 retry per
         * second, over 10 s.
         *
         * @param float $ratio 0 to 1000
         * @param float $floorPerS >= 0
         * @param int $windowS 1 to 60
         * @throws \ValueError for settings out of those ranges
         */
        public function __construct(float $ratio = 0.1, float $floorPerS = 1.0, int $windowS = 10)
        {
        }

        /**
         * A budget in the file at `$path` (created when missing), shared by every process
         * that opens it.
         *
         * @throws Exception\SharedFileError when the file cannot be opened or mapped, holds something else, or was set up with other settings
         * @throws \ValueError for settings out of range, or an empty path
         */
        public static function shared(string $path, float $ratio = 0.1, float $floorPerS = 1.0, int $windowS = 10): RetryBudget
        {
        }

        /**
         * A budget on the Redis server at `$url` under `$key`, shared by every process on
         * every machine that uses the same server and key with the same settings, counted per
         * second on the server's clock (the `…At()` methods: at a clock every user of the key
         * shares, in whole seconds). In a {@see Gate} it fails closed: while the server cannot
         * be used no retry is allowed (`budget_exhausted`); its own methods throw instead.
         *
         * @param string $url as for {@see ConcurrencyLimit::redis()}
         * @param string $key the key: the counts live in `{KEY}:budget`, the settings in `{KEY}:settings`
         * @throws Exception\SharedFileError when the key was set up with other settings, or the server cannot be reached or used (then, or later from this budget's methods)
         * @throws \ValueError for settings out of range (as for the constructor), or a URL or key that is not UTF-8
         */
        public static function redis(string $url, string $key, float $ratio = 0.1, float $floorPerS = 1.0, int $windowS = 10): RetryBudget
        {
        }

        /**
         * Counts a first attempt: it earns retries. (Loops count theirs when the budget is in their gate.)
         *
         * @throws Exception\SharedFileError when a Redis budget's server cannot be used
         */
        public function recordRequest(): void
        {
        }

        /**
         * As {@see recordRequest()} at `$nowNs`, for fake clocks in tests.
         *
         * @param int $nowNs a reading of {@see monotonicNs()}, or of a fake clock (>= 0)
         * @throws \ValueError when `$nowNs` is negative
         * @throws Exception\SharedFileError when a Redis budget's server cannot be used
         */
        public function recordRequestAt(int $nowNs): void
        {
        }

        /**
         * Takes one retry if the budget allows it: true; false when it is spent.
         *
         * @throws Exception\SharedFileError when a Redis budget's server cannot be used
         */
        public function tryWithdraw(): bool
        {
        }

        /**
         * As {@see tryWithdraw()} at `$nowNs`, for fake clocks in tests.
         *
         * @param int $nowNs a reading of {@see monotonicNs()}, or of a fake clock (>= 0)
         * @throws \ValueError when `$nowNs` is negative
         * @throws Exception\SharedFileError when a Redis budget's server cannot be used
         */
        public function tryWithdrawAt(int $nowNs): bool
        {
        }

        /**
         * The requests and the retries counted in the window ending at `$nowNs`.
         *
         * @param int|null $nowNs a reading of {@see monotonicNs()} or of a fake clock (>= 0); null: now
         * @return array{requests: int, retries: int}
         * @throws \ValueError when `$nowNs` is negative
         * @throws Exception\SharedFileError when a Redis budget's server cannot be used
         */
        public function counts(?int $nowNs = null): array
        {
        }
    }

    /**
     * What every attempt of {@see retry()}, {@see comRetry()} and {@see runBatch()} passes:
     * a place among the operations in flight, then a start slot from the
     * regulator — in that order, so that starts stay spaced as the regulator says. The place
     * is given back right after the attempt, before any sleep; first attempts are counted by
     * the budget, and retries draw on it. Each part is optional and shared with whoever else
     * holds it. Read-only.
     */
    final class Gate
    {
        /** The regulator (another handle on the same one), or null. */
        public readonly ?Regulator $regulator;

        /** The concurrency limit (another handle on the same one), or null. */
        public readonly ?ConcurrencyLimit $limit;

        /** The retry budget (another handle on the same one), or null. */
        public readonly ?RetryBudget $budget;

        /** With none of the three, the gate lets everything through. */
        public function __construct(?Regulator $regulator = null, ?ConcurrencyLimit $limit = null, ?RetryBudget $budget = null)
        {
        }
    }

    /** How one operation of {@see runBatch()} ended. Read-only. */
    final class BatchResult implements \JsonSerializable
    {
        /** @var 'succeeded'|'gave_up'|'not_started' */
        public readonly string $status;

        /** What the operation returned; null unless it succeeded. */
        public readonly mixed $value;

        /** The operation's last failure, the very object it threw; null unless it gave up. */
        public readonly ?\Throwable $error;

        /** @var 'permanent'|'attempts_exhausted'|'wait_exceeds_deadline'|'budget_exhausted'|'queue_stopped'|'cancelled'|null why it gave up or was not started; null when it succeeded */
        public readonly ?string $reason;

        /** @var 'permanent'|'attempts_exhausted'|'wait_exceeds_deadline'|'budget_exhausted'|'queue_stopped'|'cancelled'|null for `queue_stopped`: the reason of the operation that stopped the queue */
        public readonly ?string $stoppedBy;

        /** How many times the operation was called (0 when not started). */
        public readonly int $attempts;

        /** The report of an operation that gave up; null otherwise. */
        public readonly ?Report $report;

        /** Not constructible from PHP: see {@see runBatch()}. */
        private function __construct()
        {
        }

        /**
         * The plain form every language shares (`status`, `reason`, `stopped_by`, `attempts`, `report`: everything but the operation's own value and error; `serialize()` keeps those too): for `json_encode()`, a file, or
         * another process. `BatchResult::fromValue()` reads it back.
         *
         * @return array<string, mixed>
         */
        public function toValue(): array
        {
        }

        /**
         * The result whose plain form is `$value`, its value and error null.
         *
         * @param array<string, mixed> $value
         * @throws \ValueError for a missing or unknown field or a value of the wrong type
         */
        public static function fromValue(array $value): BatchResult
        {
        }

        /** @return array<string, mixed> */
        public function jsonSerialize(): array
        {
        }

        /** @return array<string, mixed> */
        public function __serialize(): array
        {
        }

        /**
         * @param array<string, mixed> $data
         * @throws \ValueError for data that is not its serialized form, or an object already made
         */
        public function __unserialize(array $data): void
        {
        }
    }

    /**
     * What a batch did: attempts started, operations ended, 429s and 503s seen, the
     * spacing between starts and the most in flight; spacings in milliseconds. Read-only:
     * {@see Stats::merge()} adds two up. Made by {@see runBatch()} (its report's `stats`), by
     * a {@see StatsRecorder}, or empty by `new Stats()`.
     */
    final class Stats implements \JsonSerializable
    {
        /** First attempts started. */
        public readonly int $initial;

        /** Retries started. */
        public readonly int $retries;

        /** Attempts started: first attempts and retries. */
        public readonly int $starts;

        /** Operations that succeeded. */
        public readonly int $successes;

        /** Operations that gave up. */
        public readonly int $failures;

        /** Operations never started: the deadline came first. */
        public readonly int $notStarted;

        /** Rate-limited answers seen (429, or a 403 with a spent quota), as classified. */
        public readonly int $throttled;

        /** 503 answers seen, as classified. */
        public readonly int $unavailable;

        /** The shortest time between two consecutive starts, in milliseconds; null with fewer than two starts. */
        public readonly ?float $minSpacingMs;

        /** The mean time between consecutive starts, in milliseconds; null with fewer than two starts. */
        public readonly ?float $meanSpacingMs;

        /** The first start, on {@see monotonicNs()}'s clock; null with none. */
        public readonly ?int $firstStartNs;

        /** The last start, on {@see monotonicNs()}'s clock; null with none. */
        public readonly ?int $lastStartNs;

        /** The most attempts in flight at once (1 at most in a {@see runBatch()}: its operations run one after the other). */
        public readonly int $maxInFlight;

        /** Empty stats: nothing started, nothing seen (what {@see Stats::merge()} adds up from). */
        public function __construct()
        {
        }

        /**
         * Every property, by name.
         *
         * @return array{initial: int, retries: int, starts: int, successes: int, failures: int, notStarted: int,
         *     throttled: int, unavailable: int, minSpacingMs: ?float, meanSpacingMs: ?float, firstStartNs: ?int,
         *     lastStartNs: ?int, maxInFlight: int}
         */
        public function toArray(): array
        {
        }

        /**
         * These stats and `$other`'s added up, as the core merges them: counts add up; the
         * shortest spacing of either and the span of both; `maxInFlight` adds up (an upper
         * bound when both ran at once). Neither is changed.
         */
        public function merge(Stats $other): Stats
        {
        }

        /**
         * The plain form every language shares (snake_case, spacings in nanoseconds: `initial`, `retries`, `successes`, `failures`, `not_started`, `throttled`, `unavailable`, `min_spacing_ns`, `first_start_ns`, `last_start_ns`, `max_in_flight`): for `json_encode()`, a file, or
         * another process. `Stats::fromValue()` reads it back.
         *
         * @return array<string, mixed>
         */
        public function toValue(): array
        {
        }

        /**
         * The stats whose plain form is `$value`.
         *
         * @param array<string, mixed> $value
         * @throws \ValueError for a missing or unknown field or a value of the wrong type
         */
        public static function fromValue(array $value): Stats
        {
        }

        /** @return array<string, mixed> */
        public function jsonSerialize(): array
        {
        }

        /** @return array<string, mixed> */
        public function __serialize(): array
        {
        }

        /**
         * @param array<string, mixed> $data
         * @throws \ValueError for data that is not its serialized form, or an object already made
         */
        public function __unserialize(array $data): void
        {
        }
    }

    /**
     * Records what a loop of your own does, in one timeline (the recorder {@see runBatch()}
     * uses): {@see StatsRecorder::start()} and {@see StatsRecorder::end()} each attempt,
     * {@see StatsRecorder::saw()} each failure's cause, {@see StatsRecorder::finished()} each
     * operation; {@see StatsRecorder::snapshot()} answers the stats so far.
     */
    final class StatsRecorder
    {
        /** An empty recorder. */
        public function __construct()
        {
        }

        /**
         * An attempt starts: number `$attempt` of its operation (0 for the first, then the
         * retries), at `$nowNs`. Call {@see StatsRecorder::end()} when it is over.
         *
         * @param int $attempt from 0 (0 to 4294967295)
         * @param int|null $nowNs now on {@see monotonicNs()}'s clock (null: that clock); a clock of your own must never go back
         * @throws \ValueError for a negative `$attempt` or `$nowNs`
         */
        public function start(int $attempt, ?int $nowNs = null): void
        {
        }

        /** An attempt started earlier is over. */
        public function end(): void
        {
        }

        /**
         * An attempt failed for `$cause`: 429s (`rate_limited`) and 503s (`unavailable`) are counted.
         *
         * @param string $cause a verdict's reason ({@see Verdict::$reason})
         * @throws \ValueError for a name that is not a verdict's reason
         */
        public function saw(string $cause): void
        {
        }

        /** An operation ended: it succeeded, or it gave up. */
        public function finished(bool $success): void
        {
        }

        /** An operation was never started. */
        public function notStarted(): void
        {
        }

        /** The stats so far. */
        public function snapshot(): Stats
        {
        }
    }

    /**
     * How far a batch has come, as {@see runBatch()}'s `$onProgress` is told each time an
     * operation ends. Made by recuo only; read-only.
     */
    final class BatchProgress
    {
        // <faces: BatchProgress properties>
        /** Operations in the batch. */
        public readonly int $total;

        /** Operations ended, whichever way. */
        public readonly int $done;

        /** Operations that succeeded. */
        public readonly int $succeeded;

        /** Operations that gave up after at least one attempt. */
        public readonly int $failed;

        /** Operations never started (the batch's deadline came first, or the batch stopped). */
        public readonly int $notStarted;

        /** Retries started so far, by every operation of the batch. */
        public readonly int $retries;
        // </faces>

        /** Not constructible from PHP: see {@see runBatch()}. */
        private function __construct()
        {
        }
    }

    /** What {@see runBatch()} did. Read-only. */
    final class BatchReport implements \JsonSerializable
    {
        /** @var array<array-key, BatchResult> one per operation, under the operation's key, in order */
        public readonly array $results;

        /** The batch's stats. */
        public readonly Stats $stats;

        /** How long the batch took, in milliseconds. */
        public readonly float $elapsedMs;

        /** Not constructible from PHP: see {@see runBatch()}. */
        private function __construct()
        {
        }

        /**
         * The plain form every language shares (`results` (each result's `toValue()`, in order: the keys stay in `$results`), `stats` (`Stats::toValue()`), `elapsed_ms` in whole milliseconds; `serialize()` keeps the keys, values and errors too): for `json_encode()`, a file, or
         * another process. `BatchReport::fromValue()` reads it back.
         *
         * @return array<string, mixed>
         */
        public function toValue(): array
        {
        }

        /**
         * The report whose plain form is `$value`, its results under the keys 0, 1, … with null values and errors.
         *
         * @param array<string, mixed> $value
         * @throws \ValueError for a missing or unknown field or a value of the wrong type
         */
        public static function fromValue(array $value): BatchReport
        {
        }

        /** @return array<string, mixed> */
        public function jsonSerialize(): array
        {
        }

        /** @return array<string, mixed> */
        public function __serialize(): array
        {
        }

        /**
         * @param array<string, mixed> $data
         * @throws \ValueError for data that is not its serialized form, or an object already made
         */
        public function __unserialize(array $data): void
        {
        }
    }
}

namespace Recuo\Exception {
    /**
     * A bad configuration: attempts below 1, a negative duration, a cap below the base, a
     * header name that is not an HTTP token, a retry rule for a status outside 400-599; in a
     * policy's plain form ({@see \Recuo\Policy::fromArray()}), a name recuo does not know
     * (`UNKNOWN_NAME`) or data that is not a policy value (`INVALID_VALUE`). `getCode()` is the
     * core's stable code, one of the constants below.
     */
    class ConfigError extends \ValueError
    {
        public const ZERO_ATTEMPTS = 1;
        public const NEGATIVE_DURATION = 2;
        public const NOT_A_NUMBER = 3;
        public const DURATION_TOO_LARGE = 4;
        public const CAP_BELOW_BASE = 5;
        public const INVALID_HEADER_NAME = 6;
        public const STATUS_OUT_OF_RANGE = 7;
        public const UNKNOWN_NAME = 8;
        public const INVALID_VALUE = 9;
    }

    /**
     * A plan that cannot be made: the target is above the allowance (the server
     * would throttle the batch), the latency is negative, or the retry fraction is not in
     * [0, 1). The message is the core's.
     */
    class PlanError extends \ValueError
    {
    }

    /**
     * A shared state file that cannot be used: it cannot be opened, sized or mapped, it
     * holds another kind of state (or anything of the wrong size), or it was set up with
     * other settings — another rate or burst for a regulator, other settings for a budget —
     * and two processes must not believe in two different allowances. The message names the
     * file, its settings and the ones asked for. A Redis key set up with other settings, or
     * its server out of reach ({@see Regulator::redis()}, {@see ConcurrencyLimit::redis()},
     * {@see RetryBudget::redis()}), throws it too: the message says which.
     */
    class SharedFileError extends \RuntimeException
    {
    }

    /**
     * A bug inside recuo: a Rust panic, caught at the boundary. An ordinary `\Exception`
     * (never an `\Error`), whose code is 900, as C's `RECUO_ERR_PANIC`; the message names
     * the function and the panic. Please report it.
     */
    class InternalError extends \RuntimeException
    {
    }
}

namespace Recuo\Testing {
    /**
     * For recuo's own tests only: panics inside the extension, so that a test can see a
     * panic arrive as an {@see \Recuo\Exception\InternalError}.
     *
     * @throws \Recuo\Exception\InternalError always
     */
    function forcePanic(): void
    {
    }

    /**
     * For recuo's own tests only: stats whose retries are 2**64 - 1 (read as PHP's largest
     * int), a count no PHP code can reach, so that a test can see a merge that would overflow
     * refused.
     */
    function fullStats(): \Recuo\Stats
    {
    }
}
