<?php

declare(strict_types=1);

namespace RecuoTests;

use Psr\Log\AbstractLogger;

/** The records a PSR-3 logger is given: level, message and the record's fields. */
final class Records extends AbstractLogger
{
    /** @var list<array{string, string, array<string, mixed>}> */
    public array $seen = [];

    public function log($level, $message, array $context = []): void
    {
        $this->seen[] = [(string) $level, (string) $message, $context];
    }

    /** @return list<array<string, mixed>> the attempts' records that decided a retry */
    public function retries(): array
    {
        return array_values(array_filter(
            array_column($this->seen, 2),
            static fn (array $r): bool => ($r['type'] ?? '') === 'attempt' && ($r['decision'] ?? '') === 'retry',
        ));
    }
}
