<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Attempt;
use Recuo\Policy;
use Recuo\Report;
use Recuo\Verdict;

use function Recuo\classify;
use function Recuo\comRetry;
use function Recuo\retry;

/** An HTTP failure as a client library might throw it. */
final class HttpFailure extends \RuntimeException
{
    /** @param array<string, string> $headers */
    public function __construct(public readonly int $status, public readonly array $headers = [])
    {
        parent::__construct("HTTP $status");
    }
}

/** Recuo\retry: the loop of SPEC §6 with PHP callables, run by the core's one loop. */
final class RetryTest extends TestCase
{
    use Throws;

    /** @var list<string> what happened, in order */
    private array $events = [];

    /** @var list<int> */
    private array $slept = [];

    /**
     * What `Recuo\retry(...$args)` threw; the test fails when it returned. (The arguments
     * are built by the caller, so closures bind the test's own variables by reference.)
     */
    private function retryThrows(mixed ...$args): \Throwable
    {
        try {
            retry(...$args);
        } catch (\Throwable $e) {
            return $e;
        }
        $this->fail('nothing was thrown');
    }

    /** A `$sleep` that records the milliseconds it is asked to wait. */
    private function recorder(): \Closure
    {
        $this->slept = [];
        return function (int $ms): void {
            $this->events[] = "sleep $ms";
            $this->slept[] = $ms;
        };
    }

    /** An operation that throws `$make($n)` on calls 1..$failures, then returns the call count. */
    private static function failing(int $failures, int &$calls, array &$thrown, ?callable $make = null): \Closure
    {
        $make ??= static fn (int $n): \Throwable => new \RuntimeException("failure $n");
        return static function () use ($failures, &$calls, &$thrown, $make): int {
            $calls++;
            if ($calls <= $failures) {
                throw $thrown[] = $make($calls);
            }
            return $calls;
        };
    }

    /** Classifies HttpFailure by its status and headers, as an HTTP client's caller would. */
    private static function byStatus(string $method = 'GET'): \Closure
    {
        return static fn (\Throwable $e): Verdict|bool => $e instanceof HttpFailure
            ? classify($e->status, method: $method, headers: $e->headers)
            : false;
    }

    public function testReturnsTheValueOfAFirstSuccess(): void
    {
        $object = new \stdClass();
        $seen = [];
        $result = retry(
            static function (Attempt $attempt) use ($object, &$seen): \stdClass {
                $seen[] = $attempt->number;
                return $object;
            },
            sleep: $this->recorder(),
            onGiveUp: fn () => $this->fail('no give-up on success'),
        );
        $this->assertSame($object, $result);
        $this->assertSame([0], $seen);
        $this->assertSame([], $this->slept);
        $this->assertNull(retry(static fn () => null));
        $this->assertSame([1, [2]], retry(static fn (Attempt $a) => [1, [2]]));
    }

    public function testGivingUpRethrowsTheVerySameObject(): void
    {
        [$calls, $thrown] = [0, []];
        $task = static function () use (&$calls, &$thrown): void {
            $calls++;
            $thrown[] = $e = new \RuntimeException("attempt $calls", 40 + $calls);
            fail_with($e);
        };
        $caught = $this->retryThrows($task, new Policy(maxAttempts: 3), sleep: $this->recorder());
        $this->assertCount(3, $thrown);
        $this->assertSame($thrown[2], $caught);
        $this->assertSame(43, $caught->getCode());
        $this->assertNull($caught->getPrevious());
        $this->assertSame(__FILE__, $caught->getFile());
        $this->assertSame((new \ReflectionFunction($task))->getStartLine() + 2, $caught->getLine());
        $functions = array_column($caught->getTrace(), 'function');
        $this->assertSame(['RecuoTests\{closure}', 'Recuo\retry'], array_slice($functions, 0, 2));
    }

    /** The hooks' order and arguments: attempt, hook, sleep, ..., give-up, rethrow. */
    public function testHooksInOrderWithTheirArguments(): void
    {
        [$calls, $thrown] = [0, []];
        $fail = self::failing(9, $calls, $thrown);
        $reports = [];
        $caught = $this->retryThrows(
            function (Attempt $attempt) use ($fail) {
                $this->events[] = "attempt {$attempt->number}";
                return $fail();
            },
            new Policy(maxAttempts: 3, baseMs: 100, capMs: 1000, jitter: 'none'),
            onRetry: function (int $attempt, \Throwable $e, int $delayMs) use (&$thrown): void {
                $this->assertSame($thrown[$attempt], $e);
                $this->events[] = "onRetry $attempt {$e->getMessage()} $delayMs";
            },
            onGiveUp: function (Report $report) use (&$reports): void {
                $reports[] = $report;
                $this->events[] = "onGiveUp {$report->attempts} {$report->reason}";
            },
            sleep: $this->recorder(),
        );
        $this->assertSame($thrown[2], $caught);
        $this->assertSame(
            [
                'attempt 0', 'onRetry 0 failure 1 100', 'sleep 100',
                'attempt 1', 'onRetry 1 failure 2 200', 'sleep 200',
                'attempt 2', 'onGiveUp 3 attempts_exhausted',
            ],
            $this->events,
        );
        $this->assertCount(1, $reports);
        $this->assertSame([3, 'attempts_exhausted', [100, 200]], [$reports[0]->attempts, $reports[0]->reason, $reports[0]->delaysMs]);
        $this->assertGreaterThanOrEqual(0, $reports[0]->elapsedMs);
        $this->assertLessThan(1000, $reports[0]->elapsedMs); // the sleeps were only recorded
    }

    public function testTheDefaultRetriesEveryThrowable(): void
    {
        $calls = 0;
        $result = retry(
            static function () use (&$calls): int {
                $calls++;
                return match ($calls) {
                    1 => throw new \TypeError('an Error'),
                    2 => intdiv(1, 0),
                    3 => throw new \Exception('an Exception'),
                    default => $calls,
                };
            },
            sleep: $this->recorder(),
        );
        $this->assertSame(4, $result);
    }

    public function testAServerWaitIsHonoured(): void
    {
        [$calls, $thrown] = [0, []];
        $task = self::failing(2, $calls, $thrown, static fn (int $n): \Throwable => new HttpFailure(429, ['Retry-After' => '3']));
        // With no spread, the delay is exactly the server's 3 s, far above the 100 ms cap.
        $result = retry($task, new Policy(baseMs: 10, capMs: 100, spreadMs: 0), self::byStatus(), sleep: $this->recorder());
        $this->assertSame(3, $result);
        $this->assertSame([3000, 3000], $this->slept);

        // With the default spread, min(window(n), 1 s) is added: here window(0) = 10 ms, window(1) = 20 ms.
        [$calls, $thrown] = [0, []];
        $task = self::failing(2, $calls, $thrown, static fn (int $n): \Throwable => new HttpFailure(503, ['Retry-After' => '3']));
        retry($task, new Policy(baseMs: 10, capMs: 100), self::byStatus('POST'), seed: 5, sleep: $this->recorder());
        $this->assertCount(2, $this->slept);
        $this->assertThat($this->slept[0], $this->logicalAnd($this->greaterThanOrEqual(3000), $this->lessThanOrEqual(3010)));
        $this->assertThat($this->slept[1], $this->logicalAnd($this->greaterThanOrEqual(3000), $this->lessThanOrEqual(3020)));
    }

    public function testAWaitPastTheDeadlineGivesUpAtOnceWithoutSleeping(): void
    {
        [$calls, $thrown] = [0, []];
        $task = self::failing(9, $calls, $thrown, static fn (int $n): \Throwable => new HttpFailure(429, ['Retry-After' => '5']));
        $reasons = [];
        $caught = $this->retryThrows(
            $task,
            new Policy(deadlineMs: 1000),
            self::byStatus(),
            onRetry: fn () => $this->fail('no retry'),
            onGiveUp: static function (Report $r) use (&$reasons): void {
                $reasons[] = $r->reason;
            },
            sleep: $this->recorder(),
        );
        $this->assertSame($thrown[0], $caught);
        $this->assertSame(1, $calls);
        $this->assertSame([], $this->slept);
        $this->assertSame(['wait_exceeds_deadline'], $reasons);

        // Backoff alone: a 2 s window cannot fit in a 1 s deadline.
        [$calls, $thrown] = [0, []];
        $this->retryThrows(
            self::failing(9, $calls, $thrown),
            new Policy(baseMs: 2000, capMs: 2000, jitter: 'none', deadlineMs: 1000),
            onGiveUp: static function (Report $r) use (&$reasons): void {
                $reasons[] = $r->reason;
            },
            sleep: $this->recorder(),
        );
        $this->assertSame([1, []], [$calls, $this->slept]);
        $this->assertSame('wait_exceeds_deadline', $reasons[1]);
    }

    public function testAnUnboundedServerWaitGivesUpEvenWithoutADeadline(): void
    {
        [$calls, $thrown] = [0, []];
        $task = self::failing(9, $calls, $thrown, static fn (int $n): \Throwable => new HttpFailure(503, ['Retry-After' => '99999999999999']));
        $reason = null;
        $this->retryThrows($task, classify: self::byStatus(), onGiveUp: static function (Report $r) use (&$reason): void {
            $reason = $r->reason;
        }, sleep: $this->recorder());
        $this->assertSame([1, 'wait_exceeds_deadline', []], [$calls, $reason, $this->slept]);
    }

    /** @return array<string, array{\Closure(\Throwable): mixed, int, string}> */
    public static function verdicts(): array
    {
        return [
            'a 404 is permanent' => [static fn (\Throwable $e) => classify(404), 1, 'permanent'],
            'a POST timeout is not repeated' => [static fn (\Throwable $e) => classify(error: 'timeout', method: 'POST'), 1, 'permanent'],
            'false is permanent' => [static fn (\Throwable $e) => false, 1, 'permanent'],
            'a success verdict stops the loop' => [static fn (\Throwable $e) => Verdict::success(), 1, 'permanent'],
            'true retries' => [static fn (\Throwable $e) => true, 4, 'attempts_exhausted'],
            'a 503 retries' => [static fn (\Throwable $e) => classify(503, method: 'POST'), 4, 'attempts_exhausted'],
            'Verdict::retry retries' => [static fn (\Throwable $e) => Verdict::retry(), 4, 'attempts_exhausted'],
            'Verdict::giveUp gives up' => [static fn (\Throwable $e) => Verdict::giveUp(), 1, 'permanent'],
        ];
    }

    /** @dataProvider verdicts */
    public function testTheVerdictDecides(\Closure $classify, int $calls, string $reason): void
    {
        [$made, $thrown] = [0, []];
        $report = null;
        $caught = $this->retryThrows(
            self::failing(9, $made, $thrown),
            new Policy(maxAttempts: 4),
            $classify,
            onGiveUp: static function (Report $r) use (&$report): void {
                $report = $r;
            },
            sleep: $this->recorder(),
        );
        $this->assertSame($thrown[$calls - 1], $caught);
        $this->assertSame([$calls, $calls, $reason], [$made, $report->attempts, $report->reason]);
    }

    /** SPEC §6 step 3: the last attempt's failure is judged too (a permanent one gives up `permanent`). */
    public function testTheClassifierIsAskedAfterTheLastAttemptToo(): void
    {
        [$calls, $thrown, $asked] = [0, [], 0];
        $this->retryThrows(
            self::failing(9, $calls, $thrown),
            new Policy(maxAttempts: 2),
            static function () use (&$asked): bool {
                $asked++;
                return true;
            },
            sleep: $this->recorder(),
        );
        $this->assertSame([2, 2], [$calls, $asked]);
    }

    /**
     * Issue 10: 503 then 404 with two attempts gives up `permanent` (the last failure is
     * judged), as in every language; it said `attempts_exhausted` before.
     */
    public function testAPermanentLastAttemptGivesUpPermanent(): void
    {
        $statuses = [503, 404];
        $reason = null;
        $e = $this->retryThrows(
            static function () use (&$statuses): never {
                throw new HttpFailure(array_shift($statuses));
            },
            new Policy(maxAttempts: 2),
            self::byStatus(),
            onGiveUp: static function (Report $r) use (&$reason): void {
                $reason = [$r->attempts, $r->reason];
            },
            sleep: $this->recorder(),
        );
        $this->assertSame(404, $e->status);
        $this->assertSame([2, 'permanent'], $reason);
    }

    public function testTheIdempotencyKeyIsAUuidV4SharedByEveryAttempt(): void
    {
        $keys = [];
        $headers = [];
        $operation = static function (Attempt $attempt) use (&$keys, &$headers): string {
            $keys[] = $attempt->idempotencyKey;
            $headers[] = $attempt->idempotencyHeader;
            if ($attempt->number < 2) {
                throw new \RuntimeException('again');
            }
            return $attempt->idempotencyKey;
        };
        $key = retry($operation, sleep: $this->recorder());
        $this->assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $key);
        $this->assertSame([$key, $key, $key], $keys);
        $this->assertSame(array_fill(0, 3, 'Idempotency-Key'), $headers);

        // Another operation, another key; the policy names the header.
        $keys = [];
        $headers = [];
        $other = retry($operation, new Policy(idempotencyHeader: 'X-Request-Key'), sleep: $this->recorder());
        $this->assertNotSame($key, $other);
        $this->assertSame(array_fill(0, 3, 'X-Request-Key'), $headers);

        // A seed fixes the jitter, never the key (SPEC §5).
        $seeded = static fn (int $seed): string => retry(static fn (Attempt $a): string => $a->idempotencyKey, seed: $seed);
        $this->assertNotSame($seeded(7), $seeded(7));
        $this->assertNotSame($seeded(7), $seeded(8));
        $many = [];
        for ($i = 0; $i < 200; $i++) {
            $many[retry(static fn (Attempt $a): string => $a->idempotencyKey)] = true;
        }
        $this->assertCount(200, $many);
    }

    public function testTheSeedFixesTheSleeps(): void
    {
        $run = function (int $seed): array {
            [$calls, $thrown] = [0, []];
            $this->retryThrows(self::failing(9, $calls, $thrown), new Policy(maxAttempts: 6, baseMs: 100, capMs: 1000), seed: $seed, sleep: $this->recorder());
            return $this->slept;
        };
        $first = $run(99);
        $this->assertSame($first, $run(99));
        $this->assertNotSame($first, $run(100));
    }

    /** SPEC §6: an outer loop of 5 around an inner loop of 5 calls the operation 5 times, not 25. */
    public function testNestedLoopsShareOneLimit(): void
    {
        [$calls, $thrown] = [0, []];
        $inner = self::failing(99, $calls, $thrown);
        $sleep = static fn (int $ms) => null;
        $caught = $this->thrownBy(static fn () => retry(static fn () => retry($inner, sleep: $sleep), sleep: $sleep));
        $this->assertSame(5, $calls);
        $this->assertSame($thrown[4], $caught);

        // An inner loop of 3: the outer loop's attempts still bound the total.
        [$calls, $thrown] = [0, []];
        $this->thrownBy(static fn () => retry(static fn () => retry($inner, new Policy(maxAttempts: 3), sleep: $sleep), sleep: $sleep));
        $this->assertSame(5, $calls);

        // Three levels, mixing comRetry and retry.
        [$calls, $thrown] = [0, []];
        $this->thrownBy(static fn () => comRetry(
            static fn () => retry(static fn () => comRetry($inner, sleep: $sleep), sleep: $sleep),
            sleep: $sleep,
        ));
        $this->assertSame(5, $calls);

        // When the loops are over, the next loop has its own attempts again.
        [$calls, $thrown] = [0, []];
        $this->thrownBy(static fn () => retry($inner, new Policy(maxAttempts: 7), sleep: $sleep));
        $this->assertSame(7, $calls);
    }

    public function testANestedLoopThatSucceedsCostsTheOuterLoopOneAttempt(): void
    {
        $outer = 0;
        $inner = 0;
        $result = retry(
            static function () use (&$outer, &$inner): string {
                $outer++;
                $value = retry(static function () use (&$inner): string {
                    if (++$inner < 3) {
                        throw new \RuntimeException('inner');
                    }
                    return 'inner ok';
                }, sleep: static fn (int $ms) => null);
                if ($outer < 2) {
                    throw new \RuntimeException('outer');
                }
                return $value;
            },
            sleep: static fn (int $ms) => null,
        );
        $this->assertSame(['inner ok', 2, 4], [$result, $outer, $inner]);
    }

    /** Loops in different fibers (an event loop's tasks) do not count against each other. */
    public function testLoopsInOtherFibersAreNotNested(): void
    {
        $sleep = static fn (int $ms) => null;
        $fiberCalls = 0;
        $fiber = new \Fiber(static function () use (&$fiberCalls, $sleep): string {
            return retry(static function () use (&$fiberCalls): string {
                if (++$fiberCalls === 1) {
                    \Fiber::suspend('suspended in attempt 0');
                    throw new \RuntimeException('first attempt');
                }
                return "fiber done after $fiberCalls";
            }, new Policy(maxAttempts: 2), sleep: $sleep);
        });
        $this->assertSame('suspended in attempt 0', $fiber->start());

        // The fiber's loop (2 attempts, one in use) is suspended; this loop is not inside it.
        [$calls, $thrown] = [0, []];
        $this->retryThrows(self::failing(99, $calls, $thrown), sleep: $sleep);
        $this->assertSame(5, $calls);

        $fiber->resume();
        $this->assertTrue($fiber->isTerminated());
        $this->assertSame('fiber done after 2', $fiber->getReturn());

        // A fiber destroyed while suspended inside a loop takes its limit with it.
        $doomed = new \Fiber(static fn () => retry(static fn () => \Fiber::suspend(), new Policy(maxAttempts: 2), sleep: $sleep));
        $doomed->start();
        unset($doomed);
        [$calls, $thrown] = [0, []];
        $this->retryThrows(self::failing(99, $calls, $thrown), sleep: $sleep);
        $this->assertSame(5, $calls);
    }

    public function testSleepAnsweringFalseCancels(): void
    {
        [$calls, $thrown] = [0, []];
        $reason = null;
        $caught = $this->retryThrows(
            self::failing(9, $calls, $thrown),
            onGiveUp: static function (Report $r) use (&$reason): void {
                $reason = $r->reason;
            },
            sleep: static fn (int $ms): bool => false,
            // Seeded: an unseeded first delay may draw 0 ms, which is never slept.
            seed: 1,
        );
        $this->assertSame([1, 'cancelled'], [$calls, $reason]);
        $this->assertSame($thrown[0], $caught);
        // Any other answer (null, 0, '') goes on.
        [$calls, $thrown] = [0, []];
        $this->assertSame(3, retry(self::failing(2, $calls, $thrown), sleep: static fn (int $ms): int => 0));
    }

    /** @return array<string, array{string}> */
    public static function callbacks(): array
    {
        return [['classify'], ['onRetry'], ['onGiveUp'], ['sleep']];
    }

    /**
     * A Throwable from a callback ends the loop and propagates as is.
     *
     * @dataProvider callbacks
     */
    public function testAThrowableFromACallbackPropagates(string $callback): void
    {
        [$calls, $thrown] = [0, []];
        $own = new \DomainException("from $callback");
        $args = [
            'classify' => static fn () => true,
            'onRetry' => static fn () => null,
            'onGiveUp' => static fn () => null,
            'sleep' => static fn (int $ms) => null,
        ];
        $args[$callback] = static fn () => throw $own;
        // Seeded: an unseeded delay may draw 0 ms, which is never slept (14 seeds in 2,000).
        $args['seed'] = 1;
        $caught = $this->retryThrows(self::failing(9, $calls, $thrown), new Policy(maxAttempts: 2), ...$args);
        $this->assertSame($own, $caught);
        $this->assertSame($callback === 'onGiveUp' ? 2 : 1, $calls);
    }

    public function testAClassifierAnsweringSomethingElseIsATypeError(): void
    {
        foreach (['yes' => 'string', 1 => 'int', 'null' => 'null', 'object' => 'stdClass', 'policy' => 'Recuo\Policy'] as $label => $type) {
            $answer = match ($label) {
                'null' => null,
                'object' => new \stdClass(),
                'policy' => Policy::guideA(),
                default => $label,
            };
            [$calls, $thrown] = [0, []];
            $e = $this->retryThrows(self::failing(9, $calls, $thrown), classify: static fn () => $answer, sleep: $this->recorder());
            $this->assertSame(\TypeError::class, get_class($e));
            $this->assertSame("Recuo\\retry(): \$classify must return Recuo\\Verdict or bool, $type returned", $e->getMessage());
            $this->assertSame(1, $calls);
        }
    }

    /** No `$sleep`: the real sleep, with windows of at most 2 ms. */
    public function testRealSleeps(): void
    {
        [$calls, $thrown] = [0, []];
        $this->assertSame(3, retry(self::failing(2, $calls, $thrown), new Policy(baseMs: 1, capMs: 2)));
    }

    /** @return array<string, array{\Closure(): mixed, class-string<\Throwable>, string}> */
    public static function badInput(): array
    {
        $op = static fn () => 1;
        return [
            'negative seed' => [static fn () => retry($op, seed: -1), \ValueError::class, 'Recuo\retry(): Argument #6 ($seed) must be null or greater than or equal to 0'],
            'no operation' => [static fn () => retry(), \ArgumentCountError::class, ''],
            'operation not callable' => [static fn () => retry('no_such_function_anywhere'), \TypeError::class, 'operation'],
            'policy of another class' => [static fn () => retry($op, new \stdClass()), \TypeError::class, 'policy'],
            'policy an array' => [static fn () => retry($op, []), \TypeError::class, 'policy'],
            'classify not callable' => [static fn () => retry($op, classify: 'nope nope'), \TypeError::class, 'classify'],
            'onRetry an int' => [static fn () => retry($op, onRetry: 3), \TypeError::class, 'onRetry'],
            'onGiveUp an array' => [static fn () => retry($op, onGiveUp: [1]), \TypeError::class, 'onGiveUp'],
            'seed a string' => [static fn () => retry($op, seed: '1'), \TypeError::class, 'seed'],
            'sleep a string' => [static fn () => retry($op, sleep: 'not a function'), \TypeError::class, 'sleep'],
        ];
    }

    /**
     * @dataProvider badInput
     * @param class-string<\Throwable> $class
     */
    public function testBadInput(\Closure $call, string $class, string $message): void
    {
        $e = $this->thrownBy($call);
        $this->assertSame($class, get_class($e));
        $this->assertStringContainsString($message, $e->getMessage());
    }

    /** `exit()` in the operation is not a failure to retry, and runs no hook. */
    public function testExitInTheOperationIsNotRetried(): void
    {
        [$status, $out, $err] = Process::php(
            'Recuo\retry(function () { echo "call\n"; exit(3); }, onGiveUp: function () { echo "hook\n"; }, sleep: fn ($ms) => null);'
            . ' echo "after\n";',
        );
        $this->assertSame(['call', ''], explode("\n", $out));
        $this->assertSame('', $err);
        $this->assertSame(3, $status);
    }

    /** An uncaught failure reaches PHP's own handler as the operation's exception. */
    public function testAnUncaughtFailureReachesPhp(): void
    {
        [$status, $out, $err] = Process::php(
            'Recuo\retry(function () { throw new LogicException("from the operation"); }, sleep: fn ($ms) => null);',
        );
        $this->assertSame(255, $status);
        $this->assertStringContainsString('Uncaught LogicException: from the operation', $out . $err);
    }

    /**
     * A fatal error inside nested loops jumps over them (`longjmp`); the loops' shared limit
     * goes with them, so a loop in a shutdown function has all its attempts.
     */
    public function testAFatalErrorInsideALoopLeavesNoLimitBehind(): void
    {
        [$status, $out, $err] = Process::php(<<<'PHP'
            register_shutdown_function(function () {
                $calls = 0;
                try {
                    Recuo\retry(function () use (&$calls) { $calls++; throw new Exception('again'); }, sleep: fn ($ms) => null);
                } catch (Exception $e) {
                    echo "shutdown: $calls calls\n";
                }
            });
            $n = 0;
            Recuo\retry(function () use (&$n) {
                if (++$n < 3) {
                    throw new Exception('again');
                }
                Recuo\retry(function () { trigger_error('fatal inside a loop', E_USER_ERROR); });
            }, sleep: fn ($ms) => null);
            echo "not reached\n";
            PHP);
        $this->assertSame(255, $status);
        $this->assertStringContainsString('fatal inside a loop', $out . $err);
        $this->assertStringContainsString("shutdown: 5 calls\n", $out);
        $this->assertStringNotContainsString('not reached', $out);
    }
}
