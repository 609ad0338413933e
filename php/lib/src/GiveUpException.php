<?php

declare(strict_types=1);

namespace Recuo;

/**
 * recuo gave up on an HTTP request: the wait the server asked for does not fit the deadline
 * (`wait_exceeds_deadline`: no long sleep, `retryAt` says when to come back), the deadline cut
 * an attempt while the server was still answering, no attempt could be made, or — for
 * {@see buscarComRetry()}, as the function of the guide
 * “Como repetir requisições com backoff exponencial (retry)” does — the last attempt ended on
 * a 429 or a 5xx. It carries the last response (if any), the reason, the instant from which a retry would
 * be allowed and the report; its message is the same in every language:
 * `recuo gave up after 3 attempts (attempts_exhausted): HTTP 503`. The Guzzle and Symfony
 * adapters throw subclasses that are also their client's own exceptions.
 */
class GiveUpException extends \RuntimeException
{
    /**
     * @param string $reason the give-up reason (`wait_exceeds_deadline`, `attempts_exhausted`, ...)
     * @param mixed $response the last response, in the client's own type (null when there was none)
     * @param int|null $retryAtMs the instant of `$retryAt` on the monotonic clock (ms, as `Recuo\monotonicMs()` reads it)
     * @param \DateTimeImmutable|null $retryAt the wall-clock instant from which a retry would be allowed (for `wait_exceeds_deadline`)
     * @param Report|null $report the operation's report: attempts, elapsed time, delays
     */
    public function __construct(
        string $message,
        public readonly string $reason,
        public readonly mixed $response = null,
        public readonly ?int $retryAtMs = null,
        public readonly ?\DateTimeImmutable $retryAt = null,
        public readonly ?Report $report = null,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, 0, $previous);
    }
}
