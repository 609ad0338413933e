<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\BatchQueue;
use Recuo\ConcurrencyLimit;
use Recuo\Gate;
use Recuo\LoopPool;
use Recuo\Operation;
use Recuo\Permit;
use Recuo\Policy;
use Recuo\Regulator;
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
    /**
     * The gate of a scenario, and the places of its limit others hold at the start (`held`);
     * its regulator's `taken` slots are spent at ns 0.
     *
     * @param array<string, mixed>|null $g
     * @return array{?Gate, list<Permit>}
     */
    private static function gate(?array $g): array
    {
        if ($g === null) {
            return [null, []];
        }
        $budget = isset($g['budget'])
            ? new RetryBudget($g['budget']['ratio'], $g['budget']['floor_per_s'], $g['budget']['window_s'])
            : null;
        $limit = isset($g['limit']) ? new ConcurrencyLimit($g['limit']) : null;
        $regulator = null;
        if (isset($g['regulator'])) {
            $regulator = new Regulator($g['regulator']['rate'], $g['regulator']['burst']);
            for ($i = 0; $i < ($g['regulator']['taken'] ?? 0); $i++) {
                self::assertSame(0, $regulator->tryAcquireAt(0));
            }
        }
        $held = [];
        for ($i = 0; $limit !== null && $i < ($g['held'] ?? 0); $i++) {
            $held[] = $limit->tryAcquire() ?? throw new \LogicException('a place to hold');
        }
        return [new Gate($regulator, $limit, $budget), $held];
    }

    /**
     * What an attempt received, as `failed()` and `judged()` take it.
     *
     * @param array{status: int, headers: list<array{string, string}>}|null $seen
     * @return array{?int, list<array{string, string}>}
     */
    private static function seen(?array $seen): array
    {
        return $seen === null ? [null, []] : [$seen['status'], $seen['headers']];
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

    /** A step as the vectors write it (a look at the gate that says wait, too). */
    private static function step(Step $s): array
    {
        return match ($s->kind) {
            'wait' => ['gate' => 'wait', 'delay_ms' => $s->delayMs],
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
        [$gate, $held] = self::gate($sc['gate']);
        $pool = $sc['pool'] ?? [];
        $loopPool = null;
        if (isset($pool['after_first'])) {
            $enclosing = $pool['enclosing'] === null ? null : LoopPool::choose(null, $pool['enclosing']);
            $loopPool = LoopPool::afterFirst($enclosing, $sc['policy']['max_attempts']);
        }
        $op = new Operation(
            Vectors::policy($sc['policy']),
            gate: $gate,
            stats: $stats,
            method: $sc['request']['method'],
            url: $sc['request']['url'],
            records: 'debug',
            classifyLastFailure: !$sc['guide'],
            keyGiven: $sc['key_given'],
            pool: $pool['remaining'] ?? null,
            nested: $pool['nested'] ?? false,
            loopPool: $loopPool,
        );
        $last = null;
        foreach ($sc['events'] as $i => $ev) {
            $at = $ev['at'] ?? 0;
            $step = match ($ev['do']) {
                'start' => $op->start($at, $sc['unix_ms']),
                'first' => $op->startAfterFirst($at, $sc['unix_ms']),
                'poll_gate' => $op->pollGateAt($at, $at * 1_000_000),
                'release' => array_pop($held)?->release(),
                'enter' => $op->entered($at, $ev['passed']),
                'respond' => $op->responded($at, $ev['status'], headers: $ev['headers'] ?? []),
                'transport' => $op->responded($at, error: $ev['kind']),
                'fail' => $op->failed($at, ...self::seen($ev['seen'] ?? null), ...array_combine(
                    ['errorStatus', 'errorHeaders'],
                    self::seen($ev['error_seen'] ?? null),
                )),
                'succeed' => $op->succeeded($at),
                'judge' => $op->judged($at, self::verdict($ev['verdict']), ...self::seen($ev['seen'] ?? null)),
                'slept' => $op->slept($at),
                'cancel' => $op->cancel(),
                'stop_queue' => $op->stopQueue($ev['reason']),
            };
            if ($step === null) {
                continue;
            }
            $this->assertSame($ev['expect'], self::step($step), "event $i");
            if ($step->kind !== 'wait') {
                $last = $step;
            }
        }
        $this->assertContains($last?->kind, ['done', 'gave_up']);
        $r = $last->report;
        $this->assertSame(
            $sc['report'],
            [
                'attempts' => $r->attempts, 'reason' => $r->reason, 'elapsed_ms' => $r->elapsedMs, 'delays_ms' => $r->delaysMs,
                'stopped_by' => $r->stoppedBy, 'retry_at_unix_ms' => $r->retryAtUnixMs,
            ],
        );
        $this->assertSame($sc['stats'], self::stats($stats));
        $records = [];
        while (($record = $op->pollRecord()) !== null) {
            $records[] = $record;
        }
        $this->assertSame($sc['records'], $records);
        // The machine's report is the last step's.
        $this->assertSame($r->attempts, $op->report()->attempts);
        $this->assertSame($r->retryAtUnixMs, $op->report()->retryAtUnixMs);
    }

    /** @return array<string, int> the counts of a recorder, as the vectors write them */
    private static function stats(StatsRecorder $stats): array
    {
        $s = $stats->snapshot();
        return [
            'initial' => $s->initial, 'retries' => $s->retries, 'successes' => $s->successes, 'failures' => $s->failures,
            'not_started' => $s->notStarted, 'throttled' => $s->throttled, 'unavailable' => $s->unavailable,
        ];
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

    /** @return array<string, array{array<string, mixed>}> */
    public static function pools(): array
    {
        return Vectors::cases('loops.json', 'pools', static fn (array $p): string => $p['name']);
    }

    /**
     * The pool a loop draws from: the enclosing loop's, or one of its own.
     *
     * @dataProvider pools
     * @param array<string, mixed> $case
     */
    public function testPool(array $case): void
    {
        $enclosing = $case['enclosing'] === null ? null : LoopPool::choose(null, $case['enclosing']);
        $chosen = $case['after_first']
            ? LoopPool::afterFirst($enclosing, $case['max_attempts'], $case['batch'])
            : LoopPool::choose($enclosing, $case['max_attempts'], $case['batch']);
        $this->assertSame($case['expect'], ['remaining' => $chosen->remaining, 'nested' => $chosen->nested, 'owned' => $chosen->owned]);
        if ($enclosing !== null && !$chosen->owned) {
            // The very pool: an attempt drawn from the enclosing one is drawn from it.
            $op = new Operation(new Policy(maxAttempts: 5), loopPool: $enclosing);
            $this->assertSame('call', $op->start(0, 0)->kind);
            $this->assertSame($case['enclosing'] - 1, $enclosing->remaining);
            $this->assertSame($enclosing->remaining, $chosen->remaining);
        }
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function firstSuccesses(): array
    {
        return Vectors::cases('loops.json', 'success_needs_machine', static fn (array $c): string => $c['name']);
    }

    /**
     * Whether a first attempt's success needs the machine.
     *
     * @dataProvider firstSuccesses
     * @param array<string, mixed> $case
     */
    public function testSuccessNeedsMachine(array $case): void
    {
        [$gate] = self::gate($case['gate']);
        $this->assertSame($case['expect'], Operation::successNeedsMachine($gate, $case['stats'], $case['records']));
    }

    /** A wait in nanoseconds is slept in whole milliseconds, rounded up. */
    public function testWaitMsFromNs(): void
    {
        $pairs = Vectors::load('loops.json')['wait_ms_from_ns'];
        $this->assertNotEmpty($pairs);
        foreach ($pairs as [$ns, $ms]) {
            $this->assertSame($ms, \Recuo\waitMsFromNs($ns), "$ns ns");
        }
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function batches(): array
    {
        return Vectors::cases('loops.json', 'batches', static fn (array $b): string => $b['name']);
    }

    /**
     * A queue and its operations on one fake clock: each operation made from the queue's
     * policy, with its request, debug records and the shared stats; the queue's own records.
     *
     * @dataProvider batches
     * @param array<string, mixed> $b
     */
    public function testBatch(array $b): void
    {
        $stats = new StatsRecorder();
        $requests = array_map(static fn (array $r): array => [$r['method'], $r['url']], $b['requests']);
        $queue = new BatchQueue(
            Vectors::policy($b['policy']),
            $b['len'],
            0,
            $b['deadline_ms'],
            $b['stop_on_unreachable_wait'],
            $stats,
            $requests,
            $b['unix_ms'],
        );
        /** @var array<int, Operation> $ops */
        $ops = [];
        $ends = [];
        $progress = [];
        foreach ($b['events'] as $i => $ev) {
            $at = $ev['at'] ?? 0;
            $n = $ev['op'] ?? null;
            switch ($ev['do']) {
                case 'next':
                    $next = $queue->next($at);
                    $got = match ($next->kind) {
                        'start' => ['next' => 'start', 'index' => $next->index, 'deadline_ms' => $next->policy->deadlineMs],
                        'not_started' => ['next' => 'not_started', 'index' => $next->index, 'reason' => $next->reason, 'stopped_by' => $next->stoppedBy],
                        'finished' => ['next' => 'finished'],
                    };
                    if ($next->kind === 'start') {
                        [$method, $url] = $requests[$next->index];
                        $ops[$next->index] = new Operation($next->policy, stats: $stats, method: $method, url: $url, records: 'debug');
                    } elseif ($next->kind === 'not_started') {
                        $ends[$next->index] = ['end' => 'not_started', 'reason' => $next->reason, 'stopped_by' => $next->stoppedBy];
                        $progress[] = self::progress($queue->ended($next->index, 'not_started', $next->reason, $next->stoppedBy));
                    }
                    break;
                case 'finished':
                    $report = $ops[$n]->report();
                    $ends[$n] = ['end' => BatchQueue::endOf($report), 'reason' => $report->reason, 'stopped_by' => $report->stoppedBy];
                    $got = ['stops' => $queue->finished($n, $report->reason)];
                    $progress[] = self::progress($queue->ended($n, $ends[$n]['end'], $report->reason, $report->stoppedBy));
                    break;
                case 'stop_queue':
                    $ops[$n]->stopQueue((string) $queue->stopped);
                    continue 2;
                default:
                    $step = match ($ev['do']) {
                        'start' => $ops[$n]->start($at, $b['unix_ms'] + $at),
                        'slept' => $ops[$n]->slept($at),
                        'respond' => $ops[$n]->responded($at, $ev['status'], headers: $ev['headers'] ?? []),
                        'transport' => $ops[$n]->responded($at, error: $ev['kind']),
                    };
                    $got = self::step($step);
            }
            $this->assertSame($ev['expect'], $got, "event $i");
        }
        ksort($ends);
        $this->assertSame($b['results'], $ends);
        $this->assertSame($b['progress'], $progress);
        $records = [];
        foreach ($ops as $n => $op) {
            $records[(string) $n] = [];
            while (($record = $op->pollRecord()) !== null) {
                $records[(string) $n][] = $record;
            }
        }
        $records['queue'] = [];
        while (($record = $queue->pollRecord()) !== null) {
            $records['queue'][] = $record;
        }
        $this->assertSame($b['records'], $records);
        $this->assertSame($b['stats'], self::stats($stats));
    }

    /**
     * A batch's progress as the vectors write it.
     *
     * @return array<string, int>
     */
    private static function progress(\Recuo\BatchProgress $p): array
    {
        return [
            'total' => $p->total, 'done' => $p->done, 'succeeded' => $p->succeeded,
            'failed' => $p->failed, 'not_started' => $p->notStarted, 'retries' => $p->retries,
        ];
    }

    public function testEveryScenarioAndQueueIsRun(): void
    {
        $doc = Vectors::load('loops.json');
        $this->assertSame(count($doc['scenarios']), count(self::scenarios()));
        $this->assertSame(count($doc['queues']), count(self::queues()));
        $this->assertSame(count($doc['pools']), count(self::pools()));
        $this->assertSame(count($doc['success_needs_machine']), count(self::firstSuccesses()));
        $this->assertSame(count($doc['batches']), count(self::batches()));
        $this->assertGreaterThanOrEqual(25, count($doc['scenarios']));
        $this->assertGreaterThanOrEqual(3, count($doc['queues']));
        $this->assertGreaterThanOrEqual(7, count($doc['pools']));
        $this->assertGreaterThanOrEqual(1, count($doc['batches']));
    }

    /** A batch queue's requests are `[method, url]` pairs of strings. */
    public function testBatchQueueRequestsArePairs(): void
    {
        foreach ([[['GET']], [['GET', 1]], ['a' => 'GET /']] as $requests) {
            try {
                new BatchQueue(Policy::guideA(), 1, 0, requests: $requests);
                $this->fail('nothing thrown');
            } catch (\TypeError $e) {
                $this->assertStringContainsString('Argument #7 ($requests) must list [method, url] pairs of strings', $e->getMessage());
            }
        }
        // Without requests the queue makes no records; with them, one per operation not started.
        $quiet = new BatchQueue(Policy::guideA(), 1, 0, 0);
        $this->assertSame('not_started', $quiet->next(1)->kind);
        $this->assertNull($quiet->pollRecord());
        $told = new BatchQueue(Policy::guideA(), 1, 0, 0, requests: [['POST', 'https://api.example/x?key=s3cret']], unixMs: 0);
        $this->assertSame('not_started', $told->next(1)->kind);
        [$level, $json] = $told->pollRecord();
        $this->assertSame('warning', $level);
        $this->assertSame(
            ['type' => 'result', 'start' => '1970-01-01T00:00:00.001Z', 'method' => 'POST', 'url' => 'https://api.example/x?key=[redacted]',
                'result' => 'gave_up', 'attempts' => 0, 'reason' => 'wait_exceeds_deadline', 'total_ms' => 0],
            json_decode($json, true),
        );
        $this->assertNull($told->pollRecord());
    }

    /** A gate step with nothing to pass goes through at once; a stopped operation gives up at the next look. */
    public function testPollGateWithoutAGateAndAfterCancel(): void
    {
        $op = new Operation(Policy::guideA(), gate: new Gate());
        $this->assertSame('call', $op->start(0, 0)->kind, 'an empty gate is not entered');
        $limited = new Operation(Policy::guideA(), gate: new Gate(limit: new ConcurrencyLimit(1)));
        $this->assertSame('enter', $limited->start(0, 0)->kind);
        $limited->cancel();
        $step = $limited->pollGate(\Recuo\monotonicMs());
        $this->assertSame(['gave_up', 'cancelled'], [$step->kind, $step->reason]);
        $this->assertNull($step->attempt);
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
            // As in Python: a retry or a give-up names any cause but success, as the message says.
            [static fn () => Verdict::retry(reason: 'success'), 'Argument #2 ($reason) must be a verdict\'s reason: "rate_limited"'],
            [static fn () => Verdict::giveUp('success'), 'Argument #1 ($reason)'],
            [static fn () => $op->failed(0, 99), 'Argument #2 ($status)'],
            [static fn () => $op->failed(0, errorStatus: 1000), 'Argument #4 ($errorStatus)'],
            [static fn () => $op->judged(0, Verdict::success(), 42), 'Argument #3 ($status)'],
            [static fn () => $op->pollGateAt(0, -1), 'Argument #2 ($regulatorNowNs)'],
            [static fn () => $op->startAfterFirst(-1, 0), 'Argument #1 ($nowMs)'],
            [static fn () => LoopPool::choose(null, -1), 'Argument #2 ($maxAttempts)'],
            [static fn () => new Operation(Policy::guideA(), pool: 1, loopPool: LoopPool::choose(null, 1)), 'at most one of Argument #10 ($pool) and Argument #14 ($loopPool)'],
            [static fn () => Operation::successNeedsMachine(records: 'trace'), 'Argument #3 ($records)'],
            [static fn () => \Recuo\waitMsFromNs(-1), 'Argument #1 ($ns)'],
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
