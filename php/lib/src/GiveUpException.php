<?php

declare(strict_types=1);

namespace Recuo;

/**
 * recuo gave up on an HTTP request without another attempt because the wait the server asked
 * for does not fit the deadline (`wait_exceeds_deadline`, SPEC §4): it carries the last
 * response, the reason and the instant from which the server would accept a retry, so the
 * caller can reschedule instead of sleeping. The Guzzle and Symfony adapters throw subclasses
 * that are also their client's own exceptions.
 */
class GiveUpException extends \RuntimeException
{
    /**
     * @param string $reason the give-up reason (`wait_exceeds_deadline`)
     * @param mixed $response the last response, in the client's own type (null when there was none)
     * @param int|null $retryAtMs the instant of `$retryAt` on the monotonic clock (ms, as `Recuo\monotonicNs()` / 1e6)
     * @param \DateTimeImmutable|null $retryAt the wall-clock instant from which the server would accept a retry
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
