<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Attempt;
use Recuo\BatchProgress;
use Recuo\BatchReport;
use Recuo\BatchResult;
use Recuo\ConcurrencyLimit;
use Recuo\Exception\ConfigError;
use Recuo\Gate;
use Recuo\Policy;
use Recuo\Regulator;
use Recuo\RetryBudget;
use Recuo\Stats;

use function Recuo\classify;
use function Recuo\monotonicNs;
use function Recuo\retry;
use function Recuo\runBatch;

/**
 * Recuo\runBatch: operations one after the other through one policy and one gate, with a
 * deadline for the whole batch; what has not started by then is never started.
 */
final class BatchTest extends TestCase
{
    use Throws;

    /** A `$sleep` that sleeps not at all. */
    private static function noSleep(): \Closure
    {
        return static fn (int $ms) => null;
    }

    /** One call per operation, in order, with the counts so far: a retried success, a give-up, a success. */
    public function testProgressIsToldAsEachOperationEnds(): void
    {
        $told = [];
        $calls = 0;
        runBatch(
            [
                static function () use (&$calls): string {
                    if (++$calls === 1) {
                        throw new \RuntimeException('once');
                    }
                    return 'ok';
                },
                static fn () => throw new \DomainException('never'),
                static fn (): string => 'ok',
            ],
            policy: new Policy(maxAttempts: 2, baseMs: 1, capMs: 1, jitter: 'none'),
            classify: static fn (\Throwable $e): bool => $e instanceof \RuntimeException,
            sleep: self::noSleep(),
            onProgress: static function (BatchProgress $p) use (&$told): void {
                $told[] = [$p->total, $p->done, $p->succeeded, $p->failed, $p->notStarted, $p->retries];
            },
        );
        $this->assertSame([[3, 1, 1, 0, 0, 1], [3, 2, 1, 1, 0, 1], [3, 3, 2, 1, 0, 1]], $told);
    }

    public function testOperationsNeverStartedAreToldToo(): void
    {
        $told = [];
        runBatch(
            [static fn () => 1, static fn () => 2, static fn () => 3],
            gate: new Gate(new Regulator('10/s')),
            deadline: 0.15,
            onProgress: static function (BatchProgress $p) use (&$told): void {
                $told[] = [$p->done, $p->succeeded, $p->notStarted];
            },
        );
        $this->assertSame([[1, 1, 0], [2, 2, 0], [3, 2, 1]], $told);
    }

    public function testAThrowableFromOnProgressEndsTheBatch(): void
    {
        $ran = 0;
        $e = $this->thrownBy(static function () use (&$ran): void {
            runBatch(
                [static function () use (&$ran) { $ran++; }, static function () use (&$ran) { $ran++; }],
                onProgress: static fn (BatchProgress $p) => throw new \LogicException("at {$p->done}"),
            );
        });
        $this->assertSame(\LogicException::class, get_class($e));
        $this->assertSame('at 1', $e->getMessage());
        $this->assertSame(1, $ran);
    }

    /** A report crosses to another process whole through serialize(), and as plain data through JSON. */
    public function testAReportCrossesProcessesAsData(): void
    {
        $report = runBatch(
            ['ok' => static fn (): int => 7, 'broken' => static fn () => throw new \DomainException('gone')],
            policy: new Policy(maxAttempts: 2, baseMs: 1, capMs: 1, jitter: 'none'),
            sleep: self::noSleep(),
        );
        $back = unserialize(serialize($report));
        $this->assertInstanceOf(BatchReport::class, $back);
        $this->assertSame(['ok', 'broken'], array_keys($back->results));
        $this->assertSame(7, $back->results['ok']->value);
        $this->assertInstanceOf(\DomainException::class, $back->results['broken']->error);
        $this->assertSame('gone', $back->results['broken']->error->getMessage());
        $this->assertSame(2, $back->results['broken']->report->attempts);
        $this->assertSame($report->toValue(), $back->toValue());

        $plain = json_decode(json_encode($report, JSON_THROW_ON_ERROR), true, 512, JSON_THROW_ON_ERROR);
        $this->assertSame(['succeeded', 'gave_up'], array_column($plain['results'], 'status'));
        $this->assertSame([1, 2], array_column($plain['results'], 'attempts'));
        $this->assertSame([2, 1, 1, 1], [$plain['stats']['initial'], $plain['stats']['retries'], $plain['stats']['successes'], $plain['stats']['failures']]);
        $read = BatchReport::fromValue($plain);
        $this->assertSame($report->toValue(), $read->toValue());
        $this->assertNull($read->results[0]->value);
        $this->assertSame('attempts_exhausted', BatchResult::fromValue($plain['results'][1])->reason);
    }

    public function testStatsCrossAsTheirPlainForm(): void
    {
        $stats = runBatch([static fn () => 1, static fn () => 2])->stats;
        $this->assertEquals($stats, unserialize(serialize($stats)));
        $this->assertSame($stats->toValue(), Stats::fromValue(json_decode(json_encode($stats), true))->toValue());
        $this->assertSame(2, $stats->toValue()['initial']);
        $e = $this->thrownBy(static fn () => Stats::fromValue(['initial' => 'two']));
        $this->assertSame(\ValueError::class, get_class($e));
        $e = $this->thrownBy(static fn () => BatchResult::fromValue(['status' => 'gave_up', 'reason' => null, 'stopped_by' => null, 'attempts' => 1, 'report' => null]));
        $this->assertStringContainsString('needs its reason', $e->getMessage());
        $e = $this->thrownBy(static fn () => $stats->__unserialize($stats->toValue()));
        $this->assertStringContainsString('immutable', $e->getMessage());
    }

    public function testEveryOperationEndsOneWayAndTheStatsCountIt(): void
    {
        $gaveUp = [];
        $calls = ['flaky' => 0];
        $before = monotonicNs();
        $report = runBatch(
            [
                'first' => static fn (): string => 'one',
                'flaky' => static function (Attempt $a) use (&$calls): int {
                    $calls['flaky']++;
                    if ($a->number < 2) {
                        throw new \RuntimeException('not yet');
                    }
                    return $a->number;
                },
                'broken' => static function () use (&$gaveUp): void {
                    throw $gaveUp[] = new \DomainException('broken ' . count($gaveUp));
                },
                'null' => static fn () => null,
            ],
            policy: new Policy(maxAttempts: 3, baseMs: 10, capMs: 10, jitter: 'none'),
            seed: 5,
            sleep: self::noSleep(),
        );
        $this->assertInstanceOf(BatchReport::class, $report);
        $this->assertSame(['first', 'flaky', 'broken', 'null'], array_keys($report->results));
        $r = $report->results;
        $this->assertContainsOnlyInstancesOf(BatchResult::class, $r);
        $this->assertSame(
            ['status' => 'succeeded', 'value' => 'one', 'error' => null, 'reason' => null, 'stoppedBy' => null, 'attempts' => 1, 'report' => null],
            get_object_vars($r['first']),
        );
        $this->assertSame(['succeeded', 2, 3], [$r['flaky']->status, $r['flaky']->value, $r['flaky']->attempts]);
        $this->assertSame(3, $calls['flaky']);
        $this->assertSame('gave_up', $r['broken']->status);
        $this->assertSame($gaveUp[2], $r['broken']->error, 'the very object it threw last');
        $this->assertSame(['attempts_exhausted', 3, null], [$r['broken']->reason, $r['broken']->attempts, $r['broken']->value]);
        $this->assertSame(['succeeded', null], [$r['null']->status, $r['null']->value]);

        $s = $report->stats;
        $this->assertInstanceOf(Stats::class, $s);
        $this->assertSame(
            [
                'initial' => 4, 'retries' => 4, 'starts' => 8, 'successes' => 3, 'failures' => 1, 'notStarted' => 0,
                'throttled' => 0, 'unavailable' => 0, 'maxInFlight' => 1,
            ],
            array_diff_key(get_object_vars($s), array_flip(['minSpacingMs', 'meanSpacingMs', 'firstStartNs', 'lastStartNs'])),
        );
        $this->assertIsFloat($s->minSpacingMs);
        $this->assertGreaterThanOrEqual(0.0, $s->minSpacingMs);
        $this->assertGreaterThanOrEqual($s->minSpacingMs, $s->meanSpacingMs);
        $this->assertGreaterThanOrEqual($before, $s->firstStartNs);
        $this->assertGreaterThanOrEqual($s->firstStartNs, $s->lastStartNs);
        $this->assertEqualsWithDelta(($s->lastStartNs - $s->firstStartNs) / 7 / 1e6, $s->meanSpacingMs, 1e-6);
        $this->assertGreaterThan(0.0, $report->elapsedMs);
        $this->assertLessThan(5000.0, $report->elapsedMs);
    }

    public function testTheKeysAndTheirOrderAreKept(): void
    {
        $report = runBatch([7 => static fn () => 'a', 'x' => static fn () => 'b', 2 => static fn () => 'c', "\xff" => static fn () => 'd']);
        $this->assertSame([7, 'x', 2, "\xff"], array_keys($report->results));
        $this->assertSame(['a', 'b', 'c', 'd'], array_map(static fn (BatchResult $r) => $r->value, array_values($report->results)));
        $empty = runBatch([]);
        $this->assertSame([], $empty->results);
        $this->assertSame([0, null, null, 0], [$empty->stats->starts, $empty->stats->minSpacingMs, $empty->stats->meanSpacingMs, $empty->stats->maxInFlight]);
    }

    public function testNothingStartsAfterTheDeadline(): void
    {
        $starts = [];
        $ops = [];
        for ($i = 0; $i < 10; $i++) {
            $ops[] = static function () use (&$starts, $i): int {
                $starts[$i] = hrtime(true);
                usleep(30_000);
                return $i;
            };
        }
        $begin = hrtime(true);
        $report = runBatch($ops, deadline: 0.1);
        $elapsed = hrtime(true) - $begin;
        $statuses = array_map(static fn (BatchResult $r) => $r->status, $report->results);
        $started = array_keys(array_filter($statuses, static fn (string $s) => $s === 'succeeded'));
        $notStarted = array_keys(array_filter($statuses, static fn (string $s) => $s === 'not_started'));
        $this->assertSame(array_keys($starts), $started, 'only what started succeeded');
        $this->assertGreaterThanOrEqual(2, count($started));
        $this->assertLessThanOrEqual(4, count($started));
        $this->assertSame(range(count($started), 9), $notStarted);
        foreach ($starts as $i => $at) {
            $this->assertLessThan(100e6, $at - $begin, "operation $i started after the deadline");
        }
        foreach ($notStarted as $i) {
            $this->assertSame(0, $report->results[$i]->attempts);
            $this->assertNull($report->results[$i]->error);
        }
        $this->assertSame(count($notStarted), $report->stats->notStarted);
        $this->assertSame(count($started), $report->stats->successes);
        // Bounded: the deadline, plus the operation under way when it passed.
        $this->assertLessThan(300e6, $elapsed);
    }

    public function testAWaitForTheGateEndsAtTheDeadline(): void
    {
        $called = [];
        $ops = [];
        for ($i = 0; $i < 5; $i++) {
            $ops[] = static function () use (&$called, $i): int {
                $called[] = $i;
                return $i;
            };
        }
        $begin = hrtime(true);
        // One start every 500 ms: the second would wait past the 150 ms deadline.
        $report = runBatch($ops, gate: new Gate(new Regulator('2/s')), deadline: 0.15);
        $elapsed = hrtime(true) - $begin;
        $this->assertSame([0], $called);
        $this->assertSame(
            ['succeeded', 'not_started', 'not_started', 'not_started', 'not_started'],
            array_map(static fn (BatchResult $r) => $r->status, $report->results),
        );
        $this->assertSame([1, 4], [$report->stats->successes, $report->stats->notStarted]);
        // Issue 10: nobody cancelled them; the deadline came first (never a bare `cancelled`).
        $this->assertSame(
            [null, 'wait_exceeds_deadline', 'wait_exceeds_deadline', 'wait_exceeds_deadline', 'wait_exceeds_deadline'],
            array_map(static fn (BatchResult $r) => $r->reason, $report->results),
        );
        // The slot is known to come after the deadline: the queue says so at once.
        $this->assertLessThan(140e6, $elapsed, 'it did not wait out the deadline for a slot after it');
    }

    public function testNoRetryWaitsPastTheDeadline(): void
    {
        $begin = hrtime(true);
        $slept = [];
        $report = runBatch(
            [static fn () => throw new \RuntimeException('down'), static fn () => 'up'],
            policy: new Policy(baseMs: 1000, capMs: 1000, jitter: 'none'),
            deadline: 0.5,
            sleep: static function (int $ms) use (&$slept): void {
                $slept[] = $ms;
            },
        );
        $this->assertSame([], $slept, 'a 1 s delay would pass the 0.5 s deadline');
        $this->assertSame(['gave_up', 'wait_exceeds_deadline', 1], [
            $report->results[0]->status, $report->results[0]->reason, $report->results[0]->attempts,
        ]);
        $this->assertSame('up', $report->results[1]->value);
        $this->assertLessThan(400e6, hrtime(true) - $begin);
        // The policy's own deadline still counts when it is the shorter.
        $report = runBatch(
            [static fn () => throw new \RuntimeException('down')],
            policy: new Policy(baseMs: 100, capMs: 100, jitter: 'none', deadlineMs: 50),
            deadline: 60.0,
            sleep: self::noSleep(),
        );
        $this->assertSame('wait_exceeds_deadline', $report->results[0]->reason);
    }

    public function testADeadlineOfZeroStartsNothing(): void
    {
        $called = false;
        $report = runBatch([static function () use (&$called): void {
            $called = true;
        }], deadline: 0.0);
        $this->assertFalse($called);
        $this->assertSame('not_started', $report->results[0]->status);
        $this->assertSame([1, 0], [$report->stats->notStarted, $report->stats->starts]);
    }

    public function testTheClassifierJudgesAndThe429sAnd503sAreCounted(): void
    {
        $answers = [429, 503, 200, 404];
        $op = static function () use (&$answers): string {
            $status = array_shift($answers);
            if ($status >= 400) {
                throw new \RuntimeException("HTTP $status", $status);
            }
            return 'ok';
        };
        $report = runBatch(
            ['a' => $op, 'b' => $op],
            policy: new Policy(baseMs: 1, capMs: 1, spreadMs: 0),
            classify: static fn (\Throwable $e) => classify($e->getCode()),
            seed: 2,
            sleep: self::noSleep(),
        );
        $this->assertSame(['succeeded', 3], [$report->results['a']->status, $report->results['a']->attempts]);
        $this->assertSame(['gave_up', 'permanent'], [$report->results['b']->status, $report->results['b']->reason]);
        $this->assertSame([1, 1, 1, 1], [
            $report->stats->throttled, $report->stats->unavailable, $report->stats->successes, $report->stats->failures,
        ]);
    }

    public function testTheGatesBudgetIsSharedByTheWholeBatch(): void
    {
        $budget = new RetryBudget(0.0, 0.2, 10); // two retries in all
        $limit = new ConcurrencyLimit(1);
        $inFlight = [];
        $failing = static function () use ($limit, &$inFlight): void {
            $inFlight[] = $limit->inFlight;
            throw new \RuntimeException('down');
        };
        $report = runBatch(
            [$failing, $failing, $failing],
            policy: new Policy(maxAttempts: 3, baseMs: 0, capMs: 0),
            gate: new Gate(limit: $limit, budget: $budget),
        );
        $this->assertSame(
            [['attempts_exhausted', 3], ['budget_exhausted', 1], ['budget_exhausted', 1]],
            array_map(static fn (BatchResult $r) => [$r->reason, $r->attempts], $report->results),
        );
        $this->assertSame([1, 1, 1, 1, 1], $inFlight);
        $this->assertSame([0, 1], [$limit->inFlight, $limit->maxInFlight]);
        $this->assertSame(['requests' => 3, 'retries' => 2], $budget->counts());
    }

    /** The seed fixes every sleep; the keys come from the operating system (SPEC §5), one per operation. */
    public function testTheSeedFixesTheWholeBatchAndEveryOperationHasItsOwnKey(): void
    {
        $run = static function (): array {
            $keys = [];
            $slept = [];
            $op = static function (Attempt $a) use (&$keys): void {
                $keys[] = $a->idempotencyKey;
                throw new \RuntimeException('down');
            };
            runBatch(
                [$op, $op],
                policy: new Policy(maxAttempts: 3, baseMs: 100, capMs: 1000),
                seed: 11,
                sleep: static function (int $ms) use (&$slept): void {
                    $slept[] = $ms;
                },
            );
            return [$keys, $slept];
        };
        [$keys, $slept] = $run();
        [$again, $sleptAgain] = $run();
        // The seed fixes the jitter, never the keys (SPEC §5).
        $this->assertSame($slept, $sleptAgain);
        $this->assertSame([], array_intersect($keys, $again));
        $this->assertCount(6, $keys);
        $this->assertSame([$keys[0], $keys[0]], [$keys[1], $keys[2]], 'one key for every attempt of an operation');
        $this->assertSame([$keys[3], $keys[3]], [$keys[4], $keys[5]]);
        $this->assertNotSame($keys[0], $keys[3], 'never the key of another operation');
        $this->assertCount(4, $slept);
    }

    /**
     * SPEC §6: with `stopOnUnreachableWait`, a server wait beyond the deadline (a spent daily
     * quota) stops the queue; the rest say why they were not started, never a bare `cancelled`.
     */
    public function testAWaitBeyondTheDeadlineStopsTheQueue(): void
    {
        $calls = 0;
        $op = static function () use (&$calls): never {
            $calls++;
            throw new \RuntimeException('Too Many Requests', 429);
        };
        $records = [];
        $report = runBatch(
            [$op, $op, $op],
            policy: Policy::guideB(),
            deadline: 30.0,
            classify: static fn (\Throwable $e) => classify($e->getCode(), headers: ['Retry-After' => '86400'], nowMs: 0),
            sleep: self::noSleep(),
            records: static function (array $r) use (&$records): void {
                $records[] = [$r['type'], $r['reason'], $r['stopped_by'] ?? null];
            },
            stopOnUnreachableWait: true,
        );
        $this->assertSame(1, $calls);
        $this->assertSame(
            [['gave_up', 'wait_exceeds_deadline', null, 1], ['not_started', 'queue_stopped', 'wait_exceeds_deadline', 0], ['not_started', 'queue_stopped', 'wait_exceeds_deadline', 0]],
            array_map(static fn (BatchResult $r) => [$r->status, $r->reason, $r->stoppedBy, $r->attempts], $report->results),
        );
        $this->assertSame(
            [['attempt', 'wait_exceeds_deadline', null], ['result', 'wait_exceeds_deadline', null], ['result', 'queue_stopped', 'wait_exceeds_deadline'], ['result', 'queue_stopped', 'wait_exceeds_deadline']],
            $records,
        );
        $this->assertSame([2, 1, 1], [$report->stats->notStarted, $report->stats->failures, $report->stats->throttled]);

        // Without it, each operation finds out for itself.
        $calls = 0;
        runBatch([$op, $op], policy: Policy::guideB(), classify: static fn (\Throwable $e) => classify($e->getCode(), headers: ['Retry-After' => '86400'], nowMs: 0));
        $this->assertSame(2, $calls);
    }

    public function testSleepAnsweringFalseCancelsThatOperationOnly(): void
    {
        $report = runBatch(
            [static fn () => throw new \RuntimeException('down'), static fn () => 'next'],
            policy: new Policy(baseMs: 100, capMs: 100, jitter: 'none'),
            sleep: static fn (int $ms) => false,
        );
        $this->assertSame(['gave_up', 'cancelled', 1], [
            $report->results[0]->status, $report->results[0]->reason, $report->results[0]->attempts,
        ]);
        $this->assertSame('next', $report->results[1]->value);
    }

    /** Each operation counts its own attempts, even inside another loop; loops inside it draw from it. */
    public function testOperationsAreNotAttemptsOfAnEnclosingLoop(): void
    {
        $calls = 0;
        $failing = static function () use (&$calls): void {
            $calls++;
            throw new \RuntimeException('down');
        };
        $policy = new Policy(maxAttempts: 2, baseMs: 0, capMs: 0);
        $report = retry(static fn () => runBatch([$failing, $failing, $failing], policy: $policy));
        $this->assertSame(6, $calls, 'two attempts for each of the three');
        $this->assertSame(3, $report->stats->failures);
        $calls = 0;
        $sdk = static fn () => retry($failing, sleep: self::noSleep()); // five attempts of its own
        $report = runBatch([$sdk], policy: $policy);
        $this->assertSame(2, $calls, 'the loop inside the operation drew from its two');
        $this->assertSame('gave_up', $report->results[0]->status);
    }

    /** Batches in fibers interleave: each keeps its own attempts, stats and places. */
    public function testBatchesInFibersInterleave(): void
    {
        $limit = new ConcurrencyLimit(2);
        $gate = new Gate(limit: $limit);
        $log = [];
        $batch = static function (string $name) use ($gate, $limit, &$log): \Fiber {
            return new \Fiber(static function () use ($name, $gate, $limit, &$log): BatchReport {
                $op = static function (Attempt $a) use ($name, $limit, &$log): string {
                    $log[] = "$name attempt {$a->number}, in flight {$limit->inFlight}";
                    \Fiber::suspend();
                    if ($a->number === 0) {
                        throw new \RuntimeException("$name failed once");
                    }
                    return "$name done";
                };
                return runBatch([$op], policy: new Policy(maxAttempts: 2, baseMs: 0, capMs: 0), gate: $gate);
            });
        };
        [$a, $b] = [$batch('a'), $batch('b')];
        $a->start();
        $b->start();
        // A third batch would wait for a place that only the suspended fibers could give back.
        $c = $batch('c');
        $this->assertSame(\LogicException::class, get_class($this->thrownBy(static fn () => $c->start())));
        $a->resume();
        $b->resume();
        $a->resume();
        $b->resume();
        $this->assertSame([
            'a attempt 0, in flight 1', 'b attempt 0, in flight 2',
            'a attempt 1, in flight 2', 'b attempt 1, in flight 2',
        ], $log);
        foreach (['a' => $a, 'b' => $b] as $name => $fiber) {
            $this->assertTrue($fiber->isTerminated());
            $report = $fiber->getReturn();
            $this->assertSame("$name done", $report->results[0]->value);
            $this->assertSame([1, 1, 1], [$report->stats->initial, $report->stats->retries, $report->stats->successes]);
        }
        $this->assertSame([0, 2], [$limit->inFlight, $limit->maxInFlight]);
    }

    public function testAThrowableFromACallbackEndsTheBatch(): void
    {
        $boom = new \LogicException('classifier');
        $second = false;
        $e = $this->thrownBy(static function () use ($boom, &$second): void {
            runBatch(
                [static fn () => throw new \RuntimeException('down'), static function () use (&$second): void {
                    $second = true;
                }],
                classify: static fn () => throw $boom,
            );
        });
        $this->assertSame($boom, $e);
        $this->assertFalse($second);
    }

    public function testTheReportIsReadOnly(): void
    {
        $report = runBatch([static fn () => 1]);
        foreach ([BatchReport::class, BatchResult::class] as $class) {
            $this->assertTrue((new \ReflectionClass($class))->isFinal(), $class);
            $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static fn () => new $class()), $class);
        }
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static function () use ($report): void {
            $report->stats->initial = 2;
        }));
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static function () use ($report): void {
            $report->results = [];
        }));
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static function () use ($report): void {
            $report->results[0]->value = 2;
        }));
        // The results are a PHP array: changing a copy changes nothing in the report.
        $results = $report->results;
        $results[] = 'more';
        $this->assertCount(1, $report->results);
        $this->assertSame(1, $report->results[0]->value);
    }

    /** @return array<string, array{\Closure, class-string<\Throwable>, string}> */
    public static function badInput(): array
    {
        $ok = static fn () => null;
        return [
            'not a callable' => [static fn () => runBatch([$ok, 'a' => 42]), \TypeError::class, 'Recuo\runBatch(): Argument #1 ($operations) must hold callables; key "a" holds int'],
            'a string that is no function' => [static fn () => runBatch(['no_such_function_anywhere']), \TypeError::class, 'index 0 holds string'],
            'not an array' => [static fn () => runBatch($ok), \TypeError::class, 'operations'],
            'a negative deadline' => [static fn () => runBatch([$ok], deadline: -1.0), ConfigError::class, 'Recuo\runBatch(): Argument #4 ($deadline)'],
            'a NaN deadline' => [static fn () => runBatch([$ok], deadline: NAN), ConfigError::class, 'Argument #4 ($deadline)'],
            'a negative seed' => [static fn () => runBatch([$ok], seed: -1), \ValueError::class, 'Argument #6 ($seed)'],
            'a classifier answering a string' => [static fn () => runBatch([static fn () => throw new \RuntimeException('x')], classify: static fn () => 'yes'), \TypeError::class, 'Recuo\runBatch(): $classify must return Recuo\Verdict or bool, string returned'],
        ];
    }

    /**
     * @dataProvider badInput
     * @param class-string<\Throwable> $class
     */
    public function testBadInput(\Closure $call, string $class, string $message): void
    {
        $e = $this->thrownBy($call);
        $this->assertSame($class, get_class($e), $e->getMessage());
        $this->assertStringContainsString($message, $e->getMessage());
    }
}
