<?php

declare(strict_types=1);

namespace Recuo\Guzzle;

use GuzzleHttp\Exception\GuzzleException;
use Psr\Http\Message\RequestInterface;
use Psr\Http\Message\ResponseInterface;
use Recuo\Report;

/**
 * recuo gave up on a Guzzle request — the server's wait does not fit the deadline, the
 * deadline cut an attempt, or no attempt could be made: a {@see \Recuo\GiveUpException}
 * (reason, `retryAt`, the last response) that a Guzzle user already catches as a
 * `GuzzleException`.
 */
final class GiveUpException extends \Recuo\GiveUpException implements GuzzleException
{
    public function __construct(
        string $message,
        string $reason,
        private readonly RequestInterface $request,
        ?ResponseInterface $response,
        ?int $retryAtMs,
        ?\DateTimeImmutable $retryAt,
        ?Report $report,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, $reason, $response, $retryAtMs, $retryAt, $report, $previous);
    }

    /** The request, as it was sent (with its `Idempotency-Key`). */
    public function getRequest(): RequestInterface
    {
        return $this->request;
    }

    /** The last response (the one whose wait does not fit), or null. */
    public function getResponse(): ?ResponseInterface
    {
        return $this->response instanceof ResponseInterface ? $this->response : null;
    }
}
