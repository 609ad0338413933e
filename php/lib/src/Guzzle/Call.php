<?php

declare(strict_types=1);

namespace Recuo\Guzzle;

use Psr\Http\Message\RequestInterface;
use Psr\Http\Message\ResponseInterface;
use Recuo\Operation;

/** @internal One request's operation under {@see RetryMiddleware}: what its steps carry between attempts. */
final class Call
{
    /** The last answer: a response, or the exception Guzzle rejected with. */
    public ResponseInterface|\Throwable|null $last = null;

    /** The last response (also inside a `RequestException`). */
    public ?ResponseInterface $response = null;

    /** Whether the attempt under way is bounded by what is left of the deadline (its `timeout` clipped). */
    public bool $clipped = false;

    /** Whether the deadline cut the last attempt while the server was still answering (it timed out, clipped). */
    public bool $late = false;

    /** @param array<string, mixed> $options */
    public function __construct(
        public readonly Operation $op,
        public readonly RequestInterface $request,
        public readonly array $options,
        /** The wait before the next attempt is sent (ms): the machine's, then the gate's. */
        public int $delayMs,
    ) {
    }
}
