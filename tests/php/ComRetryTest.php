<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Exception\ConfigError;
use Recuo\Verdict;

use function Recuo\classify;
use function Recuo\comRetry;

/** Guide A's loop with PHP semantics: Throwables caught, the very same object rethrown. */
final class ComRetryTest extends TestCase
{
    use Throws;

    /** @var list<int> */
    private array $slept = [];

    /** A `$sleep` that records the milliseconds it is asked to wait. */
    private function recorder(): \Closure
    {
        $this->slept = [];
        return function (int $ms): void {
            $this->slept[] = $ms;
        };
    }

    /** A task that throws `$make($n)` on calls 1..$failures, then returns the call count. */
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

    public function testReturnsTheValueOfAFirstSuccessWithoutSleeping(): void
    {
        $object = new \stdClass();
        $this->assertSame($object, comRetry(static fn () => $object, sleep: $this->recorder()));
        $this->assertNull(comRetry(static fn () => null, sleep: $this->recorder()));
        $this->assertSame([1, [2]], comRetry(static fn () => [1, [2]], sleep: $this->recorder()));
        $this->assertSame([], $this->slept);
    }

    public function testSucceedsOnTheThirdAttempt(): void
    {
        [$calls, $thrown] = [0, []];
        $result = comRetry(self::failing(2, $calls, $thrown), seed: 1, sleep: $this->recorder());
        $this->assertSame(3, $result);
        $this->assertSame(3, $calls);
        // Seed 1 with guide A's defaults: the draws of seeded.json's first com_retry case.
        $this->assertSame([195, 277], $this->slept);
    }

    public function testGivingUpRethrowsTheVerySameObject(): void
    {
        [$calls, $thrown] = [0, []];
        $task = static function () use (&$calls, &$thrown): void {
            $calls++;
            $thrown[] = $e = new \RuntimeException("attempt $calls", 40 + $calls);
            fail_with($e);
        };
        // Seeded: an unseeded draw of 0 ms would (rightly) not be slept, and the count below
        // would then vary from run to run.
        $caught = $this->thrownBy(fn () => comRetry($task, 3, seed: 1, sleep: $this->recorder()));
        $this->assertCount(3, $thrown);
        $this->assertSame($thrown[2], $caught);
        $this->assertSame('attempt 3', $caught->getMessage());
        $this->assertSame(43, $caught->getCode());
        $this->assertNull($caught->getPrevious());
        $this->assertSame([195, 277], $this->slept);
        // The trace is the one taken where the task created the exception, not a new one:
        // it starts in the task, which comRetry called.
        $this->assertSame(__FILE__, $caught->getFile());
        $this->assertSame((new \ReflectionFunction($task))->getStartLine() + 2, $caught->getLine());
        $functions = array_column($caught->getTrace(), 'function');
        $this->assertSame(['RecuoTests\{closure}', 'Recuo\comRetry'], array_slice($functions, 0, 2));
    }

    public function testCatchesErrorsNotOnlyExceptions(): void
    {
        $calls = 0;
        $result = comRetry(
            static function () use (&$calls): int {
                $calls++;
                if ($calls === 1) {
                    throw new \TypeError('an Error');
                }
                if ($calls === 2) {
                    return intdiv(1, 0); // DivisionByZeroError, thrown by PHP itself
                }
                return $calls;
            },
            sleep: $this->recorder(),
        );
        $this->assertSame(3, $result);

        $error = new \Error('always');
        $this->assertSame(
            $error,
            $this->thrownBy(fn () => comRetry(static fn () => throw $error, 2, sleep: $this->recorder())),
        );
    }

    public function testThePredicateSeesEachFailureAndDecides(): void
    {
        [$calls, $thrown, $seen] = [0, [], []];
        $task = self::failing(
            9,
            $calls,
            $thrown,
            static fn (int $n): \Throwable => $n < 3 ? new \RuntimeException("transient $n") : new \LogicException('permanent'),
        );
        $predicate = static function (\Throwable $e) use (&$seen): bool {
            $seen[] = $e;
            return $e instanceof \RuntimeException;
        };
        $caught = $this->thrownBy(fn () => comRetry($task, repetirSe: $predicate, seed: 1, sleep: $this->recorder()));
        $this->assertInstanceOf(\LogicException::class, $caught);
        $this->assertSame($thrown[2], $caught);
        $this->assertSame(3, $calls);
        $this->assertCount(3, $seen);
        foreach ($seen as $i => $e) {
            $this->assertSame($thrown[$i], $e);
        }
        $this->assertSame([195, 277], $this->slept);
    }

    public function testThePredicateIsNotAskedAfterTheLastAttempt(): void
    {
        [$calls, $thrown, $asked] = [0, [], 0];
        $task = self::failing(9, $calls, $thrown);
        $predicate = static function () use (&$asked): bool {
            $asked++;
            return true;
        };
        $caught = $this->thrownBy(fn () => comRetry($task, 2, repetirSe: $predicate, sleep: $this->recorder()));
        $this->assertSame($thrown[1], $caught);
        $this->assertSame(1, $asked);
    }

    public function testThePredicateAnswerIsReadAsAPhpCondition(): void
    {
        [$calls, $thrown] = [0, []];
        $task = self::failing(9, $calls, $thrown);
        $caught = $this->thrownBy(fn () => comRetry(
            $task,
            repetirSe: static fn (\Throwable $e): int => 0,
            sleep: $this->recorder(),
        ));
        $this->assertSame($thrown[0], $caught);
        $this->assertSame(1, $calls);

        [$calls, $thrown] = [0, []];
        comRetry(self::failing(2, $calls, $thrown), repetirSe: static fn (): string => 'yes', sleep: $this->recorder());
        $this->assertSame(3, $calls);
    }

    /**
     * Issue 10 item 5, SPEC §5: `$repetirSe` may answer a `Recuo\classify` verdict. Its
     * give-up stops the loop at once (a 404: one call, not five), and its server wait is
     * honoured (Retry-After: 6 is 6000 ms plus a spread of at most window(0) = 200 ms).
     */
    public function testThePredicateMayAnswerAVerdict(): void
    {
        [$calls, $thrown] = [0, []];
        $task = self::failing(9, $calls, $thrown);
        $caught = $this->thrownBy(fn () => comRetry(
            $task,
            repetirSe: static fn (\Throwable $e) => classify(404),
            sleep: $this->recorder(),
        ));
        $this->assertSame([1, $thrown[0], []], [$calls, $caught, $this->slept]);

        [$calls, $thrown] = [0, []];
        $result = comRetry(
            self::failing(1, $calls, $thrown),
            repetirSe: static fn (\Throwable $e) => classify(429, headers: ['Retry-After' => '6'], nowMs: 0),
            seed: 3,
            sleep: $this->recorder(),
        );
        $this->assertSame([2, 2], [$result, $calls]);
        // Seed 3 draws a spread of 19 ms from [0, 200].
        $this->assertSame([6019], $this->slept);

        // A verdict without a server wait retries as `true` does: guide A's full-jitter draws.
        [$calls, $thrown] = [0, []];
        comRetry(self::failing(2, $calls, $thrown), repetirSe: static fn () => Verdict::retry(), seed: 1, sleep: $this->recorder());
        $this->assertSame([3, [195, 277]], [$calls, $this->slept]);
        // And a success verdict on a failure means nothing to retry.
        [$calls, $thrown] = [0, []];
        $task = self::failing(9, $calls, $thrown);
        $this->thrownBy(static fn () => comRetry($task, repetirSe: static fn () => Verdict::success()));
        $this->assertSame(1, $calls);
    }

    public function testAnExceptionFromThePredicatePropagates(): void
    {
        [$calls, $thrown] = [0, []];
        $fromPredicate = new \DomainException('predicate failed');
        $task = self::failing(9, $calls, $thrown);
        $caught = $this->thrownBy(fn () => comRetry(
            $task,
            repetirSe: static fn (\Throwable $e): bool => throw $fromPredicate,
            sleep: $this->recorder(),
        ));
        $this->assertSame($fromPredicate, $caught);
        $this->assertSame(1, $calls);
        $this->assertSame([], $this->slept);
    }

    public function testAnExceptionFromTheSleepPropagates(): void
    {
        [$calls, $thrown] = [0, []];
        $interrupted = new \RuntimeException('interrupted');
        $task = self::failing(9, $calls, $thrown);
        $caught = $this->thrownBy(fn () => comRetry(
            $task,
            seed: 1,
            sleep: static fn (int $ms) => throw $interrupted,
        ));
        $this->assertSame($interrupted, $caught);
        $this->assertSame(1, $calls);
    }

    public function testZeroDelaysNeverSleep(): void
    {
        [$calls, $thrown] = [0, []];
        $task = self::failing(9, $calls, $thrown);
        $caught = $this->thrownBy(fn () => comRetry($task, 4, 0, 0, sleep: $this->recorder()));
        $this->assertSame($thrown[3], $caught);
        $this->assertSame(4, $calls);
        $this->assertSame([], $this->slept);
    }

    /** No `$sleep`: the real sleep, with windows of at most 2 ms. */
    public function testRealSleepsWithoutAnInjectedSleep(): void
    {
        [$calls, $thrown] = [0, []];
        $this->assertSame(3, comRetry(self::failing(2, $calls, $thrown), 5, 1, 2));
        [$calls, $thrown] = [0, []];
        $this->assertSame(4, comRetry(self::failing(3, $calls, $thrown), 4, 0, 0));
    }

    public function testTheSeedFixesTheSleeps(): void
    {
        $run = function (int $seed): array {
            [$calls, $thrown] = [0, []];
            $task = self::failing(9, $calls, $thrown);
            $this->thrownBy(fn () => comRetry($task, 6, 100, 1000, null, $seed, $this->recorder()));
            return $this->slept;
        };
        $first = $run(99);
        $this->assertSame($first, $run(99));
        $this->assertNotSame($first, $run(100));
        $this->assertNotEmpty($first);
        foreach ($first as $ms) {
            $this->assertGreaterThan(0, $ms);
            $this->assertLessThanOrEqual(1000, $ms);
        }
    }

    /** @return array<string, array{\Closure(): mixed, int}> */
    public static function badConfigurations(): array
    {
        $task = static fn () => 'never called';
        return [
            'zero attempts' => [static fn () => comRetry($task, 0), ConfigError::ZERO_ATTEMPTS],
            'negative attempts' => [static fn () => comRetry($task, -3), ConfigError::ZERO_ATTEMPTS],
            'negative base' => [static fn () => comRetry($task, 5, -1), ConfigError::NEGATIVE_DURATION],
            'negative max' => [static fn () => comRetry($task, 5, 0, -1), ConfigError::NEGATIVE_DURATION],
            'max below base' => [static fn () => comRetry($task, 5, 300, 200), ConfigError::CAP_BELOW_BASE],
            'negative deadline' => [static fn () => comRetry($task, prazoMs: -1), ConfigError::NEGATIVE_DURATION],
        ];
    }

    /** @dataProvider badConfigurations */
    public function testBadConfigurationIsAConfigError(\Closure $call, int $code): void
    {
        $e = $this->thrownBy($call);
        $this->assertInstanceOf(ConfigError::class, $e);
        $this->assertInstanceOf(\ValueError::class, $e);
        $this->assertSame($code, $e->getCode());
        $this->assertStringStartsWith('Recuo\comRetry(): ', $e->getMessage());
    }

    public function testConfigErrorsAreThrownBeforeAnyAttempt(): void
    {
        $calls = 0;
        $e = $this->thrownBy(fn () => comRetry(static function () use (&$calls): void {
            $calls++;
        }, 5, 10, 5));
        $this->assertInstanceOf(ConfigError::class, $e);
        $this->assertSame('Recuo\comRetry(): the maximum (5 ms) must not be below the base (10 ms)', $e->getMessage());
        $this->assertSame(0, $calls);
    }

    public function testOutOfRangeNumbersAreValueErrors(): void
    {
        $task = static fn () => 1;
        $e = $this->thrownBy(fn () => comRetry($task, seed: -1));
        $this->assertSame(\ValueError::class, get_class($e));
        $this->assertSame('Recuo\comRetry(): Argument #6 ($seed) must be null or greater than or equal to 0', $e->getMessage());
        $e = $this->thrownBy(fn () => comRetry($task, 4294967296));
        $this->assertSame(\ValueError::class, get_class($e));
        $this->assertStringContainsString('($tentativas)', $e->getMessage());
        $this->assertSame(1, comRetry($task, 4294967295, seed: 0));
    }

    /** @return array<string, array{\Closure(): mixed}> */
    public static function wrongTypes(): array
    {
        $task = static fn () => 1;
        return [
            'task not callable' => [static fn () => comRetry('no_such_function_anywhere')],
            'task an int' => [static fn () => comRetry(5)],
            'attempts a numeric string' => [static fn () => comRetry($task, '5')],
            'attempts a float' => [static fn () => comRetry($task, 5.0)],
            'attempts null' => [static fn () => comRetry($task, null)],
            'base a string' => [static fn () => comRetry($task, 5, '200')],
            'predicate not callable' => [static fn () => comRetry($task, repetirSe: 'nope nope')],
            'seed a float' => [static fn () => comRetry($task, seed: 1.5)],
            'sleep an array' => [static fn () => comRetry($task, sleep: [1, 2])],
            'deadline a string' => [static fn () => comRetry($task, prazoMs: '1000')],
            'deadline a float' => [static fn () => comRetry($task, prazoMs: 1000.0)],
            'hook not callable' => [static fn () => comRetry($task, aoRepetir: 'nope nope')],
            'no task' => [static fn () => comRetry()],
        ];
    }

    /** @dataProvider wrongTypes */
    public function testWrongTypesAreTypeErrors(\Closure $call): void
    {
        $this->assertInstanceOf(\TypeError::class, $this->thrownBy($call));
    }

    /** `exit()` in the task is not a failure to retry: the process ends, with its status. */
    public function testExitInTheTaskIsNotRetried(): void
    {
        [$status, $out, $err] = Process::php(
            'Recuo\comRetry(function () { echo "call\n"; exit(3); }, 5, 0, 0); echo "after\n";',
        );
        $this->assertSame(['call', ''], explode("\n", $out));
        $this->assertSame('', $err);
        $this->assertSame(3, $status);
    }

    /** An uncaught failure reaches PHP's own handler as the task's exception. */
    public function testAnUncaughtFailureReachesPhp(): void
    {
        [$status, $out, $err] = Process::php(
            'Recuo\comRetry(function () { throw new LogicException("from the task"); }, 2, 0, 0);',
        );
        $this->assertSame(255, $status);
        $this->assertStringContainsString('Uncaught LogicException: from the task', $out . $err);
    }

    /** `$aoRepetir($attempt, $e, $delayMs)` runs before each sleep, with the sleep's delay. */
    public function testTheHookSeesEachRetryBeforeItsSleep(): void
    {
        [$calls, $thrown, $events] = [0, [], []];
        $task = self::failing(9, $calls, $thrown);
        $sleep = static function (int $ms) use (&$events): void {
            $events[] = "sleep $ms";
        };
        $hook = static function (int $attempt, \Throwable $e, int $delayMs) use (&$events, &$thrown): void {
            $events[] = $e === $thrown[$attempt] ? "hook $attempt $delayMs" : 'hook with another error';
        };
        $caught = $this->thrownBy(static fn () => comRetry($task, 4, seed: 1, sleep: $sleep, aoRepetir: $hook));
        $this->assertSame($thrown[3], $caught);
        // Seed 1 with guide A's windows: the draws of testSucceedsOnTheThirdAttempt, then one more.
        $this->assertSame(['hook 0 195', 'sleep 195', 'hook 1 277', 'sleep 277'], array_slice($events, 0, 4));
        $this->assertCount(6, $events);
        $this->assertMatchesRegularExpression('/^hook 2 (\d+)$/', $events[4]);
        $this->assertSame('sleep ' . substr($events[4], 7), $events[5]);
    }

    /** The hook runs for zero delays too (nothing is slept then). */
    public function testTheHookRunsForZeroDelays(): void
    {
        [$calls, $thrown, $hooked] = [0, [], []];
        $task = self::failing(9, $calls, $thrown);
        $hook = static function (int $attempt, \Throwable $e, int $delayMs) use (&$hooked): void {
            $hooked[] = [$attempt, $delayMs];
        };
        $this->thrownBy(fn () => comRetry($task, 3, 0, 0, sleep: $this->recorder(), aoRepetir: $hook));
        $this->assertSame([[0, 0], [1, 0]], $hooked);
        $this->assertSame([], $this->slept);
    }

    public function testAnExceptionFromTheHookPropagates(): void
    {
        [$calls, $thrown] = [0, []];
        $fromHook = new \DomainException('hook failed');
        $task = self::failing(9, $calls, $thrown);
        $caught = $this->thrownBy(fn () => comRetry($task, sleep: $this->recorder(), aoRepetir: static fn () => throw $fromHook));
        $this->assertSame($fromHook, $caught);
        $this->assertSame(1, $calls);
        $this->assertSame([], $this->slept);
    }

    /** A delay that would end past `$prazoMs` gives up at once: no sleep, the last failure rethrown. */
    public function testTheDeadlineStopsTheLoopInsteadOfSleepingPastIt(): void
    {
        [$calls, $thrown, $hooked] = [0, [], 0];
        $task = self::failing(9, $calls, $thrown);
        // Windows of exactly 1000 ms (base = max = 1000, and the full-jitter draw lands in
        // [0, 1000]); a 0 ms deadline fits only a zero draw, which seed 3 does not make.
        $hook = static function () use (&$hooked): void {
            $hooked++;
        };
        $caught = $this->thrownBy(fn () => comRetry($task, 5, 1000, 1000, seed: 3, sleep: $this->recorder(), prazoMs: 0, aoRepetir: $hook));
        $this->assertSame($thrown[0], $caught);
        $this->assertSame([1, 0, []], [$calls, $hooked, $this->slept]);

        // A deadline the delays fit in changes nothing.
        [$calls, $thrown] = [0, []];
        $this->assertSame(3, comRetry(self::failing(2, $calls, $thrown), seed: 1, sleep: $this->recorder(), prazoMs: 60000));
        $this->assertSame([195, 277], $this->slept);
    }

    /** With real sleeps, the deadline counts the time actually spent. */
    public function testTheDeadlineCountsRealTime(): void
    {
        [$calls, $thrown] = [0, []];
        $task = static function () use (&$calls, &$thrown): void {
            $calls++;
            usleep(30_000);
            throw $thrown[] = new \RuntimeException("slow $calls");
        };
        $started = hrtime(true);
        $caught = $this->thrownBy(static fn () => comRetry($task, 50, 1, 1, prazoMs: 100));
        $elapsedMs = (hrtime(true) - $started) / 1e6;
        $this->assertSame(end($thrown), $caught);
        $this->assertGreaterThanOrEqual(3, $calls);
        $this->assertLessThan(10, $calls);
        $this->assertLessThan(1000, $elapsedMs);
    }
}
