<?php

/**
 * IDE stubs for the `recuo` PHP extension: careful retries (backoff with full jitter,
 * Retry-After read right). The functions are implemented in Rust (php/src/lib.rs); this file
 * only declares them, for IDEs and static analysers. Never include it where the extension is
 * loaded. tests/php/ApiTest.php checks that it declares exactly what `php --re recuo` shows.
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
     * again (null: retry everything; its answer is read as PHP reads a condition). Giving up
     * rethrows the task's last `\Throwable`: the very same object, trace intact. A
     * `\Throwable` from `$repetirSe` or `$sleep` ends the loop and propagates as is.
     *
     * @template T
     * @param callable(): T $tarefa the operation; any \Throwable it throws is a failure
     * @param int $tentativas attempts in total, at least 1
     * @param int $baseMs the first window, in milliseconds (>= 0)
     * @param int $maxMs the largest window, in milliseconds (>= $baseMs)
     * @param (callable(\Throwable): bool)|null $repetirSe whether a failure is worth another attempt
     * @param int|null $seed fixes the jitter (>= 0), for tests and reproducible runs
     * @param (callable(int): mixed)|null $sleep replaces the real sleep; receives milliseconds (never 0)
     * @return T what `$tarefa` returned
     * @throws \Throwable the task's last failure, or what `$repetirSe` or `$sleep` threw
     * @throws Exception\ConfigError when `$tentativas < 1`, a duration is negative, or `$maxMs < $baseMs`
     * @throws \ValueError when `$seed` is negative or `$tentativas` exceeds 4294967295
     */
    function comRetry(
        callable $tarefa,
        int $tentativas = 5,
        int $baseMs = 200,
        int $maxMs = 5000,
        ?callable $repetirSe = null,
        ?int $seed = null,
        ?callable $sleep = null,
    ): mixed {
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
     * What a Retry-After value asks for. Made by {@see parseRetryAfter()} only; read-only.
     */
    final class RetryAfter
    {
        /** @var 'seconds'|'date'|'unbounded'|'invalid' */
        public readonly string $kind;

        /** The server's wait in milliseconds; null when unbounded or invalid. */
        public readonly ?int $waitMs;

        /** Not constructible from PHP: use {@see parseRetryAfter()}. */
        private function __construct()
        {
        }
    }
}

namespace Recuo\Exception {
    /**
     * A bad configuration: attempts below 1, a negative duration, a cap below the base.
     * `getCode()` is the core's stable code, one of the constants below.
     */
    class ConfigError extends \ValueError
    {
        public const ZERO_ATTEMPTS = 1;
        public const NEGATIVE_DURATION = 2;
        public const NOT_A_NUMBER = 3;
        public const DURATION_TOO_LARGE = 4;
        public const CAP_BELOW_BASE = 5;
    }
}
