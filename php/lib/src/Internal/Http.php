<?php

declare(strict_types=1);

namespace Recuo\Internal;

use Psr\Log\LoggerInterface;
use Recuo\Gate;
use Recuo\Operation;
use Recuo\Permit;
use Recuo\Step;

/**
 * @internal What the HTTP adapters share besides the machine: the clock, the gate, what curl's
 * errors mean, the records. No rule lives here: every decision — the key sent, whether the
 * request is idempotent, the retries, how the end surfaces and the give-up's message — is
 * `Recuo\Operation`'s.
 */
final class Http
{
    /** The monotonic clock, in milliseconds (the regulators' clock). */
    public static function now(): int
    {
        return intdiv(\Recuo\monotonicNs(), 1_000_000);
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
     * Passes the gate for the attempt the machine's `enter` step is about, which starts
     * `$afterMs` from now (a wait already decided): a place among the requests in flight (the
     * concurrency limit's own wait, bounded by the deadline) and a start slot of the regulator,
     * reserved at that instant without blocking. Answers whether it passed, the extra wait the
     * start slot needs (ms) and the place to give back after the attempt.
     *
     * @return array{bool, int, ?Permit}
     */
    public static function enter(?Gate $gate, Step $step, int $afterMs): array
    {
        if ($gate === null) {
            return [true, 0, null];
        }
        $now = self::now();
        $until = $step->untilMs;
        $permit = null;
        if ($gate->limit !== null) {
            $left = $until === null ? null : max(0, $until - $now - $afterMs) / 1000;
            $permit = $gate->limit->acquire($left ?? 86_400.0);
            if ($permit === null) {
                return [false, 0, null];
            }
        }
        $wait = 0;
        if ($gate->regulator !== null) {
            $base = \Recuo\monotonicNs() + $afterMs * 1_000_000;
            $at = $base;
            while (($more = $gate->regulator->tryAcquireAt($at)) > 0) {
                $at += $more;
                $wait = (int) ceil(($at - $base) / 1_000_000);
                if ($until !== null && $now + $afterMs + $wait >= $until) {
                    $permit?->release();
                    return [false, 0, null];
                }
            }
        }
        return [true, max(0, $wait), $permit];
    }

    /** The machine's records, in order, to `$logger` (their level, the JSON line, the fields). */
    public static function flush(Operation $op, ?LoggerInterface $logger): void
    {
        if ($logger === null) {
            return;
        }
        while (($record = $op->pollRecord()) !== null) {
            [$level, $json] = $record;
            $logger->log($level, $json, (array) json_decode($json, true));
        }
    }

    /** The wall-clock instant of `$retryAtMs` on the monotonic clock. */
    public static function wallClock(?int $retryAtMs): ?\DateTimeImmutable
    {
        if ($retryAtMs === null) {
            return null;
        }
        $unixMs = self::unixMs() + ($retryAtMs - self::now());
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
        $retryAtMs = $op->retryAtMs;
        return [
            (string) $op->giveUpMessage(self::now(), $late),
            (string) $report->reason,
            $retryAtMs,
            self::wallClock($retryAtMs),
            $report,
        ];
    }
}
