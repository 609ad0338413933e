<?php

declare(strict_types=1);

namespace Recuo\Symfony;

use Symfony\Contracts\HttpClient\Exception\TransportExceptionInterface;

/**
 * recuo gave up on a Symfony HttpClient request — the server's wait does not fit the
 * deadline, or the deadline cut an attempt: a {@see \Recuo\GiveUpException} (reason,
 * `retryAt`, the last response's status and headers as `response`) and a Symfony
 * `TransportExceptionInterface`. Symfony's `AsyncResponse` wraps what its retrying code
 * throws: your code catches Symfony's `TransportException`, whose `getPrevious()` is this
 * exception.
 */
final class GiveUpException extends \Recuo\GiveUpException implements TransportExceptionInterface
{
}
