<?php

declare(strict_types=1);

namespace Recuo;

/** What {@see buscarComRetry()} answers: the last response and the operation's report. */
final class Resposta
{
    /**
     * @param array<string, list<string>> $headers the response's headers, names in lower case
     */
    public function __construct(
        public readonly int $status,
        public readonly array $headers,
        public readonly string $body,
        public readonly string $url,
        public readonly Report $report,
    ) {
    }

    /** 2xx. */
    public function ok(): bool
    {
        return $this->status >= 200 && $this->status < 300;
    }

    /** The first value of header `$name` (any case), or null. */
    public function header(string $name): ?string
    {
        return $this->headers[strtolower($name)][0] ?? null;
    }

    /** The body decoded as JSON (associative arrays); throws \JsonException. */
    public function json(): mixed
    {
        return json_decode($this->body, true, 512, JSON_THROW_ON_ERROR);
    }
}
