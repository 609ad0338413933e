<?php

declare(strict_types=1);

namespace Recuo\Internal;

use Psr\Log\LoggerInterface;
use Recuo\Operation;
use Recuo\Step;

/**
 * @internal What the HTTP adapters share besides the machine: the clock, the waits at the gate,
 * what curl's errors mean, the records. No rule lives here: every decision — the key sent,
 * whether the request is idempotent, the gate, the retries, how the end surfaces, the give-up's
 * message and when a retry would be allowed — is `Recuo\Operation`'s.
 */
final class Http
{
    /** The monotonic clock, in milliseconds: the one reading the machine is told its instants in. */
    public static function now(): int
    {
        return \Recuo\monotonicMs();
    }

    /** The wall clock, in milliseconds since the Unix epoch (the records' times). */
    public static function unixMs(): int
    {
        return (int) floor(microtime(true) * 1000);
    }

    /**
     * What a curl error means for the request: the core's one table (`Recuo\curlTransport`,
     * shared with C's `recuo_curl.h`), told whether any byte of the request was sent
     * (`request_size`).
     *
     * @param array<string, mixed> $info curl_getinfo()'s answer (Guzzle's handler context)
     * @return 'connect'|'tls'|'timeout'|'reset'|'other'
     */
    public static function curlKind(int $errno, array $info): string
    {
        return \Recuo\curlTransport($errno, (int) ($info['request_size'] ?? 0) > 0);
    }

    /**
     * The machine's gate step for its `enter`: looks at the gate as the machine says — a place
     * in flight, then a start slot, within the deadline — and `$sleep`s (ms) each wait it
     * answers, until the step after the gate (`call`, or `gave_up`).
     *
     * @param callable(int): mixed $sleep
     */
    public static function pass(Operation $op, callable $sleep): Step
    {
        $step = $op->pollGate(self::now());
        while ($step->kind === 'wait') {
            $sleep((int) $step->delayMs);
            $step = $op->pollGate(self::now());
        }
        return $step;
    }

    /**
     * The machine's records, in order, to `$logger` (their level, the JSON line, the fields),
     * and each record's metric points to `$metrics` (see {@see self::points()}).
     *
     * @param null|callable(string, float, array<string, string>): void $metrics
     */
    public static function flush(Operation $op, ?LoggerInterface $logger, ?callable $metrics = null): void
    {
        if ($logger === null && $metrics === null) {
            return;
        }
        while (($record = $op->pollRecord()) !== null) {
            [$level, $json] = $record;
            if ($metrics !== null) {
                self::points($op->recordTelemetry(), $metrics);
            }
            $logger?->log($level, $json, (array) json_decode($json, true));
        }
    }

    /**
     * Hands each metric point of a record's telemetry (the core's JSON) to `$metrics`: its
     * Prometheus name, its value (a count to add, or seconds to observe) and its labels.
     *
     * @param callable(string, float, array<string, string>): void $metrics
     */
    public static function points(?string $telemetry, callable $metrics): void
    {
        if ($telemetry === null) {
            return;
        }
        /** @var array{points: list<array{prometheus: string, value: int|float, labels: array<string, string>}>} $t */
        $t = json_decode($telemetry, true, 8, JSON_THROW_ON_ERROR);
        foreach ($t['points'] as $p) {
            $metrics($p['prometheus'], (float) $p['value'], $p['labels']);
        }
    }

    /** The records an operation keeps: every one when a logger or a metrics callback takes them. */
    public static function records(?LoggerInterface $logger, ?callable $metrics): ?string
    {
        return $logger === null && $metrics === null ? null : 'debug';
    }

    /** The instant `$unixMs` (milliseconds since the Unix epoch), as a date. */
    public static function wallClock(?int $unixMs): ?\DateTimeImmutable
    {
        if ($unixMs === null) {
            return null;
        }
        return (new \DateTimeImmutable('@' . intdiv($unixMs, 1000)))
            ->modify('+' . ($unixMs % 1000) . ' milliseconds') ?: null;
    }

    /**
     * What recuo's give-up carries, all of it the machine's: the one message, the reason, the
     * instant a retry would be allowed (on the monotonic clock and the wall clock) and the
     * report. `$late`: the deadline cut the last attempt while the server was still answering.
     *
     * @return array{string, string, ?int, ?\DateTimeImmutable, \Recuo\Report}
     */
    public static function giveUp(Operation $op, bool $late): array
    {
        $report = $op->report();
        return [
            (string) $op->giveUpMessage(self::now(), $late),
            (string) $report->reason,
            $op->retryAtMs,
            self::wallClock($report->retryAtUnixMs),
            $report,
        ];
    }
}
