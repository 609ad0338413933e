<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\BatchQueue;
use Recuo\ConcurrencyLimit;
use Recuo\Gate;
use Recuo\Operation;
use Recuo\Policy;
use Recuo\RetryBudget;
use Recuo\StatsRecorder;
use Recuo\Step;
use Recuo\Verdict;

/**
 * The loop vectors (tests/vectors/loops.json): every operation scenario through
 * `Recuo\Operation` and every queue scenario through `Recuo\BatchQueue`, event by event, with
 * exactly the steps, reports, stats and `[level, json]` records written there.
 */
final class LoopsTest extends TestCase
{
    /** @param array<string, mixed>|null $g */
    private static function gate(?array $g): ?Gate
    {
        if ($g === null) {
            return null;
        }
        $budget = isset($g['budget'])
            ? new RetryBudget($g['budget']['ratio'], $g['budget']['floor_per_s'], $g['budget']['window_s'])
            : null;
        $limit = isset($g['limit']) ? new ConcurrencyLimit($g['limit']) : null;
        return new Gate(limit: $limit, budget: $budget);
    }

    /** @param array<string, mixed> $v */
    private static function verdict(array $v): Verdict
    {
        return match ($v['verdict']) {
            'retry' => Verdict::retry($v['wait_ms'], $v['reason']),
            'give_up' => Verdict::giveUp($v['reason']),
            default => Verdict::success(),
        };
    }

    /** A step as the vectors write it. */
    private static function step(Step $s): array
    {
        return match ($s->kind) {
            'enter' => ['step' => 'enter', 'attempt' => $s->attempt, 'until_ms' => $s->untilMs],
            'call' => ['step' => 'call', 'attempt' => $s->attempt, 'timeout_ms' => $s->timeoutMs],
            'classify' => ['step' => 'classify', 'attempt' => $s->attempt],
            'sleep' => ['step' => 'sleep', 'attempt' => $s->attempt, 'delay_ms' => $s->delayMs],
            'done' => ['step' => 'done'],
            'gave_up' => ['step' => 'gave_up', 'reason' => $s->reason, 'retry_at_ms' => $s->retryAtMs],
        };
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function scenarios(): array
    {
        return Vectors::cases('loops.json', 'scenarios', static fn (array $s): string => $s['name']);
    }

    /**
     * @dataProvider scenarios
     * @param array<string, mixed> $sc
     */
    public function testScenario(array $sc): void
    {
        $stats = new StatsRecorder();
        $op = new Operation(
            Vectors::policy($sc['policy']),
            gate: self::gate($sc['gate']),
            stats: $stats,
            method: $sc['request']['method'],
            url: $sc['request']['url'],
            records: 'debug',
            classifyLastFailure: !$sc['guide'],
            keyGiven: $sc['key_given'],
            pool: $sc['pool']['remaining'] ?? null,
            nested: $sc['pool']['nested'] ?? false,
        );
        $last = null;
        foreach ($sc['events'] as $i => $ev) {
            $at = $ev['at'] ?? 0;
            $step = match ($ev['do']) {
                'start' => $op->start($at, $sc['unix_ms']),
                'enter' => $op->entered($at, $ev['passed']),
                'respond' => $op->responded($at, $ev['status'], headers: $ev['headers'] ?? []),
                'transport' => $op->responded($at, error: $ev['kind']),
                'fail' => $op->failed($at),
                'succeed' => $op->succeeded($at),
                'judge' => $op->judged($at, self::verdict($ev['verdict'])),
                'slept' => $op->slept($at),
                'cancel' => $op->cancel(),
                'stop_queue' => $op->stopQueue($ev['reason']),
            };
            if ($step === null) {
                continue;
            }
            $this->assertSame($ev['expect'], self::step($step), "event $i");
            $last = $step;
        }
        $this->assertContains($last?->kind, ['done', 'gave_up']);
        $r = $last->report;
        $this->assertSame(
            $sc['report'],
            ['attempts' => $r->attempts, 'reason' => $r->reason, 'elapsed_ms' => $r->elapsedMs, 'delays_ms' => $r->delaysMs, 'stopped_by' => $r->stoppedBy],
        );
        $s = $stats->snapshot();
        $this->assertSame(
            $sc['stats'],
            [
                'initial' => $s->initial, 'retries' => $s->retries, 'successes' => $s->successes, 'failures' => $s->failures,
                'not_started' => $s->notStarted, 'throttled' => $s->throttled, 'unavailable' => $s->unavailable,
            ],
        );
        $records = [];
        while (($record = $op->pollRecord()) !== null) {
            $records[] = $record;
        }
        $this->assertSame($sc['records'], $records);
        // The machine's report is the last step's.
        $this->assertSame($r->attempts, $op->report()->attempts);
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function queues(): array
    {
        return Vectors::cases('loops.json', 'queues', static fn (array $q): string => $q['name']);
    }

    /**
     * @dataProvider queues
     * @param array<string, mixed> $q
     */
    public function testQueue(array $q): void
    {
        $stats = new StatsRecorder();
        $queue = new BatchQueue(Vectors::policy($q['policy']), $q['len'], 0, $q['deadline_ms'], $q['stop_on_unreachable_wait'], $stats);
        foreach ($q['events'] as $i => $ev) {
            if ($ev['do'] === 'stop') {
                $queue->stop($ev['reason']);
                $this->assertSame($ev['reason'], $queue->stopped);
                continue;
            }
            if ($ev['do'] === 'finished') {
                $got = ['stops' => $queue->finished($ev['index'], $ev['reason'])];
            } else {
                $next = $queue->next($ev['at']);
                $got = match ($next->kind) {
                    'start' => ['next' => 'start', 'index' => $next->index, 'deadline_ms' => $next->policy->deadlineMs],
                    'not_started' => ['next' => 'not_started', 'index' => $next->index, 'reason' => $next->reason, 'stopped_by' => $next->stoppedBy],
                    'finished' => ['next' => 'finished'],
                };
            }
            $this->assertSame($ev['expect'], $got, "event $i");
        }
        $this->assertSame($q['not_started'], $stats->snapshot()->notStarted);
    }

    public function testEveryScenarioAndQueueIsRun(): void
    {
        $doc = Vectors::load('loops.json');
        $this->assertSame(count($doc['scenarios']), count(self::scenarios()));
        $this->assertSame(count($doc['queues']), count(self::queues()));
        $this->assertGreaterThanOrEqual(15, count($doc['scenarios']));
        $this->assertGreaterThanOrEqual(3, count($doc['queues']));
    }

    /** The key is made once, from the operating system (never from the seed), and kept. */
    public function testTheKey(): void
    {
        $op = new Operation(Policy::guideA(), seed: 1);
        $key = $op->key();
        $this->assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $key);
        $this->assertSame($key, $op->key());
        $this->assertNotSame($key, (new Operation(Policy::guideA(), seed: 1))->key());
    }

    public function testBadInput(): void
    {
        $op = new Operation(Policy::guideA());
        foreach ([
            [static fn () => new Operation(Policy::guideA(), records: 'trace'), 'Argument #7 ($records)'],
            [static fn () => new Operation(Policy::guideA(), seed: -1), 'Argument #2 ($seed)'],
            [static fn () => $op->start(-1, 0), 'Argument #1 ($nowMs)'],
            [static fn () => $op->responded(0), 'exactly one of Argument #2 ($status) and Argument #3 ($error)'],
            [static fn () => $op->responded(0, error: 'dns'), 'Argument #3 ($error)'],
            [static fn () => $op->stopQueue('tired'), 'Argument #1 ($reason)'],
            [static fn () => new BatchQueue(Policy::guideA(), -1, 0), 'Argument #2 ($len)'],
            [static fn () => Verdict::retry(reason: 'bored'), 'Argument #2 ($reason)'],
        ] as [$call, $message]) {
            try {
                $call();
                $this->fail("nothing thrown: $message");
            } catch (\ValueError $e) {
                $this->assertStringContainsString($message, $e->getMessage());
            }
        }
    }
}
