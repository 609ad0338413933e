<?php

declare(strict_types=1);

namespace Recuo;

/**
 * The network failure of {@see buscarComRetry()}'s last attempt (ext-curl's error): the
 * code is curl's `errno`, `$kind` what recuo made of it (a body cut short is `reset`).
 */
final class CurlError extends \RuntimeException
{
    /** @param 'connect'|'tls'|'timeout'|'reset'|'other' $kind */
    public function __construct(string $message, int $errno, public readonly string $kind)
    {
        parent::__construct($message, $errno);
    }
}
