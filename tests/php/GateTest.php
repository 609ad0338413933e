<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Attempt;
use Recuo\ConcurrencyLimit;
use Recuo\Gate;
use Recuo\Policy;
use Recuo\Regulator;
use Recuo\Report;
use Recuo\RetryBudget;

use function Recuo\classify;
use function Recuo\comRetry;
use function Recuo\retry;

/**
 * Recuo\Gate in Recuo\retry and Recuo\comRetry: every attempt, first or retry, takes a place
 * and a start slot; the place is given back before any sleep; retries spend the budget; an
 * adaptive regulator slows down on 429s.
 */
final class GateTest extends TestCase
{
    use Throws;

    /** @var list<string> */
    private array $events = [];

    /** A `$sleep` that records what the limit says while the loop sleeps. */
    private function sleepWatching(ConcurrencyLimit $limit): \Closure
    {
        return function (int $ms) use ($limit): void {
            $this->events[] = "sleep $ms ms, in flight {$limit->inFlight}";
        };
    }

    public function testTheGatesParts(): void
    {
        $regulator = new Regulator('10/s', 2);
        $limit = new ConcurrencyLimit(3);
        $budget = new RetryBudget(0.2, 0.5, 20);
        $gate = new Gate($regulator, $limit, $budget);
        $this->assertSame(3, $gate->limit->limit);
        $this->assertSame(2, $gate->regulator->burst);
        $this->assertSame(['ratio' => 0.2, 'floorPerS' => 0.5, 'windowS' => 20], get_object_vars($gate->budget));
        // Handles on the same parts: what one sees, the other sees.
        $permit = $limit->tryAcquire();
        $this->assertSame(1, $gate->limit->inFlight);
        $permit->release();
        $this->assertSame(0, $gate->regulator->tryAcquireAt(1_000_000_000, 2));
        $this->assertGreaterThan(0, $regulator->tryAcquireAt(1_000_000_000));
        $empty = new Gate();
        $this->assertSame(['regulator' => null, 'limit' => null, 'budget' => null], get_object_vars($empty));
        $this->assertNull((new Gate(limit: $limit))->regulator);
        $this->assertTrue((new \ReflectionClass(Gate::class))->isFinal());
        $this->assertInstanceOf(\TypeError::class, $this->thrownBy(static fn () => new Gate($limit)));
    }

    public function testThePlaceIsGivenBackBeforeEverySleep(): void
    {
        $limit = new ConcurrencyLimit(1);
        $caught = $this->thrownBy(function () use ($limit): void {
            retry(
                function (Attempt $attempt) use ($limit): void {
                    $this->events[] = "attempt {$attempt->number}, in flight {$limit->inFlight}";
                    throw new \RuntimeException("failure {$attempt->number}");
                },
                policy: new Policy(maxAttempts: 3, baseMs: 10, capMs: 10, jitter: 'none'),
                sleep: $this->sleepWatching($limit),
                seed: 7,
                gate: new Gate(limit: $limit),
            );
        });
        $this->assertSame('failure 2', $caught->getMessage());
        $this->assertSame([
            'attempt 0, in flight 1', 'sleep 10 ms, in flight 0',
            'attempt 1, in flight 1', 'sleep 10 ms, in flight 0',
            'attempt 2, in flight 1',
        ], $this->events);
        $this->assertSame([0, 1], [$limit->inFlight, $limit->maxInFlight]);
    }

    public function testComRetryPassesTheGateToo(): void
    {
        $limit = new ConcurrencyLimit(1);
        $calls = 0;
        $result = comRetry(
            function () use ($limit, &$calls): string {
                $calls++;
                $this->events[] = "attempt $calls, in flight {$limit->inFlight}";
                if ($calls < 3) {
                    throw new \RuntimeException('not yet');
                }
                return 'done';
            },
            baseMs: 50,
            maxMs: 50,
            seed: 1, // delays of 49 and 35 ms: two sleeps (a draw of 0 is not slept)
            sleep: $this->sleepWatching($limit),
            gate: new Gate(limit: $limit),
        );
        $this->assertSame('done', $result);
        $this->assertCount(5, $this->events);
        $this->assertSame('attempt 1, in flight 1', $this->events[0]);
        $this->assertSame('sleep 49 ms, in flight 0', $this->events[1]);
        $this->assertSame('sleep 35 ms, in flight 0', $this->events[3]);
        $this->assertSame('attempt 3, in flight 1', $this->events[4]);
        $this->assertSame(0, $limit->inFlight);
    }

    public function testEveryAttemptTakesAStartSlot(): void
    {
        $regulator = new Regulator('1/min', 3);
        $calls = 0;
        $this->thrownBy(static function () use ($regulator, &$calls): void {
            retry(
                static function () use (&$calls): void {
                    $calls++;
                    throw new \RuntimeException('down');
                },
                policy: new Policy(maxAttempts: 3, baseMs: 0, capMs: 0),
                gate: new Gate($regulator),
            );
        });
        $this->assertSame(3, $calls);
        // The three attempts took the burst: the next start is a minute away.
        $this->assertGreaterThan(59.0, $regulator->tryAcquire());
    }

    public function testTheRegulatorSpacesTheAttempts(): void
    {
        $starts = [];
        retry(
            static function (Attempt $a) use (&$starts): string {
                $starts[] = hrtime(true);
                if ($a->number < 3) {
                    throw new \RuntimeException('again');
                }
                return 'ok';
            },
            policy: new Policy(maxAttempts: 4, baseMs: 0, capMs: 0),
            gate: new Gate(new Regulator('20/s')),
        );
        $this->assertCount(4, $starts);
        for ($i = 1; $i < 4; $i++) {
            $this->assertGreaterThanOrEqual(40e6, $starts[$i] - $starts[$i - 1], "attempt $i started too early");
        }
        $this->assertLessThan(3e9, $starts[3] - $starts[0]);
    }

    public function testRetriesSpendTheBudget(): void
    {
        // No ratio; a floor of 0.1/s over 10 s: one retry in all.
        $budget = new RetryBudget(0.0, 0.1, 10);
        $reports = [];
        $thrown = [];
        $run = function () use ($budget, &$reports, &$thrown): \Throwable {
            return $this->thrownBy(static function () use ($budget, &$reports, &$thrown): void {
                retry(
                    static function () use (&$thrown): void {
                        throw $thrown[] = new \RuntimeException('failure ' . count($thrown));
                    },
                    policy: new Policy(maxAttempts: 5, baseMs: 0, capMs: 0),
                    onGiveUp: static function (Report $r) use (&$reports): void {
                        $reports[] = [$r->attempts, $r->reason];
                    },
                    seed: 1,
                    gate: new Gate(budget: $budget),
                );
            });
        };
        $first = $run();
        $this->assertSame(end($thrown), $first, 'the operation\'s own last failure');
        $this->assertSame([[2, 'budget_exhausted']], $reports);
        $run();
        $this->assertSame([[2, 'budget_exhausted'], [1, 'budget_exhausted']], $reports);
        // Each loop counted its first attempt; the one retry was counted too.
        $this->assertSame(['requests' => 2, 'retries' => 1], $budget->counts());
    }

    public function testRequestsEarnRetries(): void
    {
        // Half of the requests, no floor.
        $budget = new RetryBudget(0.5, 0.0, 60);
        $outcomes = [];
        for ($op = 1; $op <= 4; $op++) {
            $calls = 0;
            try {
                $outcomes[] = retry(
                    static function () use (&$calls): string {
                        if (++$calls === 1) {
                            throw new \RuntimeException('once');
                        }
                        return 'ok';
                    },
                    policy: new Policy(baseMs: 0, capMs: 0),
                    gate: new Gate(budget: $budget),
                );
            } catch (\RuntimeException $e) {
                $outcomes[] = 'budget_exhausted';
            }
        }
        // Retries allowed: 0.5 × requests. Op 1: 0.5 → none; op 2: 1; op 3: 1.5, one spent; op 4: 2.
        $this->assertSame(['budget_exhausted', 'ok', 'budget_exhausted', 'ok'], $outcomes);
        $this->assertSame(['requests' => 4, 'retries' => 2], $budget->counts());
    }

    public function testAnAdaptiveRegulatorSlowsDownOn429sAndRecoversOnSuccess(): void
    {
        $regulator = new Regulator('1000/s', 10, adaptive: true);
        $statuses = [429, 429, 503, 200];
        $result = retry(
            static function () use (&$statuses): string {
                $status = array_shift($statuses);
                if ($status >= 400) {
                    throw new \RuntimeException("HTTP $status", $status);
                }
                return 'ok';
            },
            policy: new Policy(baseMs: 0, capMs: 0, spreadMs: 0),
            classify: static fn (\Throwable $e) => classify($e->getCode()),
            gate: new Gate($regulator),
        );
        $this->assertSame('ok', $result);
        // Halved twice (the 503 is not a rate limit), then 1/16 of the configured rate back.
        $this->assertEqualsWithDelta(250.0 + 62.5, $regulator->rate, 0.01);
    }

    /** A start slot beyond the deadline: the loop says so at once, without waiting it out. */
    public function testAStartSlotBeyondTheDeadlineGivesUpWaitExceedsDeadline(): void
    {
        $gate = new Gate(new Regulator('1/min'));
        $this->assertSame('first', retry(static fn () => 'first', gate: $gate));
        $called = false;
        $begin = hrtime(true);
        $e = $this->thrownBy(static function () use ($gate, &$called): void {
            retry(static function () use (&$called): void {
                $called = true;
            }, new Policy(deadlineMs: 100), gate: $gate);
        });
        $elapsed = hrtime(true) - $begin;
        $this->assertFalse($called);
        $this->assertSame([\Error::class, 'Recuo\retry(): gave up before the first attempt (wait_exceeds_deadline)'], [get_class($e), $e->getMessage()]);
        // Well before the deadline: the slot was known to come after it.
        $this->assertLessThan(100e6, $elapsed);
    }

    /** SPEC §6 step 3: a final 429 (no attempt left) still reaches an adaptive regulator. */
    public function testAFinal429SlowsAnAdaptiveRegulator(): void
    {
        $regulator = new Regulator('1000/s', 10, adaptive: true);
        $e = $this->thrownBy(static fn () => retry(
            static fn () => throw new \RuntimeException('HTTP 429', 429),
            policy: new Policy(maxAttempts: 1),
            classify: static fn (\Throwable $e) => classify($e->getCode()),
            gate: new Gate($regulator),
        ));
        $this->assertSame(429, $e->getCode());
        $this->assertEqualsWithDelta(500.0, $regulator->rate, 0.01);
    }

    public function testAGateWithoutABudgetNeverRefusesARetry(): void
    {
        $calls = 0;
        $this->thrownBy(static function () use (&$calls): void {
            retry(
                static function () use (&$calls): void {
                    $calls++;
                    throw new \RuntimeException('down');
                },
                policy: new Policy(maxAttempts: 6, baseMs: 0, capMs: 0),
                onGiveUp: static function (Report $r): void {
                    \PHPUnit\Framework\Assert::assertSame('attempts_exhausted', $r->reason);
                },
                gate: new Gate(limit: new ConcurrencyLimit(1), regulator: new Regulator('10000/s', 10)),
            );
        });
        $this->assertSame(6, $calls);
    }

    /** Every place held by the caller: the loop could only wait forever, so it throws at once. */
    /**
     * `Recuo\buscarComRetry` passes the gate by the machine's step, sleeping (`sleep`) what it
     * says: a full limit is looked at every 5 ms at most, until the deadline, and then it gives
     * up `wait_exceeds_deadline` with nothing sent.
     */
    public function testBuscarComRetryWaitsAtTheGateAsTheMachineSays(): void
    {
        require_once __DIR__ . '/support/http.php';
        $limit = new ConcurrencyLimit(1);
        $held = $limit->tryAcquire();
        $slept = [];
        $sleep = static function (int $ms) use (&$slept): void {
            $slept[] = $ms;
            usleep($ms * 1000);
        };
        try {
            \Recuo\buscarComRetry('http://127.0.0.1:9/never', ['gate' => new Gate(limit: $limit), 'prazoMs' => 40, 'sleep' => $sleep]);
            $this->fail('no give-up');
        } catch (\Recuo\GiveUpException $e) {
            $this->assertSame('wait_exceeds_deadline', $e->reason);
            $this->assertSame(0, $e->report?->attempts);
            $this->assertNull($e->response, 'nothing sent');
        }
        $this->assertNotEmpty($slept);
        $this->assertLessThanOrEqual(5, max($slept));
        $this->assertGreaterThanOrEqual(20, array_sum($slept), 'looked at until the deadline');
        $held?->release();
    }

    public function testAFullLimitThrowsInsteadOfHanging(): void
    {
        $limit = new ConcurrencyLimit(1);
        $held = $limit->tryAcquire();
        $called = false;
        $e = $this->thrownBy(static function () use ($limit, &$called): void {
            retry(static function () use (&$called): void {
                $called = true;
            }, gate: new Gate(limit: $limit));
        });
        $this->assertSame(\LogicException::class, get_class($e));
        $this->assertStringStartsWith('Recuo\retry(): every place of the concurrency limit (1 of 1) is taken', $e->getMessage());
        $this->assertFalse($called);
        $this->assertSame(1, $limit->inFlight);
        // A loop inside an attempt that holds the only place: the same.
        $held->release();
        $gate = new Gate(limit: $limit);
        $e = $this->thrownBy(static function () use ($gate): void {
            // The inner loop's \LogicException is the outer operation's failure: not retried here.
            retry(static fn () => retry(static fn () => 'inner', gate: $gate), classify: static fn () => false, gate: $gate);
        });
        $this->assertSame(\LogicException::class, get_class($e));
        $this->assertSame(0, $limit->inFlight, 'the outer attempt gave its place back');
        // With a place for each, nested loops pass.
        $two = new Gate(limit: new ConcurrencyLimit(2));
        $this->assertSame('inner', retry(static fn () => retry(static fn () => 'inner', gate: $two), gate: $two));
    }

    public function testThePlaceIsGivenBackWhenTheOperationSucceedsOrACallbackThrows(): void
    {
        $limit = new ConcurrencyLimit(1);
        $gate = new Gate(limit: $limit);
        $this->assertSame(42, retry(static fn () => 42, gate: $gate));
        $this->assertSame(0, $limit->inFlight);
        $boom = new \LogicException('from the classifier');
        $e = $this->thrownBy(static function () use ($gate, $boom): void {
            retry(
                static fn () => throw new \RuntimeException('down'),
                classify: static fn () => throw $boom,
                gate: $gate,
            );
        });
        $this->assertSame($boom, $e);
        $this->assertSame(0, $limit->inFlight);
        $this->assertSame(1, $limit->maxInFlight);
    }
}
