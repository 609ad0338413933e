<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Exception\ConfigError;

use function Recuo\comRetry;

/** A named function, so that traces can be checked. */
function fail_with(\Throwable $e): never
{
    throw $e;
}

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
        $caught = $this->thrownBy(fn () => comRetry($task, 3, sleep: $this->recorder()));
        $this->assertCount(3, $thrown);
        $this->assertSame($thrown[2], $caught);
        $this->assertSame('attempt 3', $caught->getMessage());
        $this->assertSame(43, $caught->getCode());
        $this->assertNull($caught->getPrevious());
        $this->assertCount(2, $this->slept);
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
        $caught = $this->thrownBy(fn () => comRetry($task, repetirSe: $predicate, sleep: $this->recorder()));
        $this->assertInstanceOf(\LogicException::class, $caught);
        $this->assertSame($thrown[2], $caught);
        $this->assertSame(3, $calls);
        $this->assertCount(3, $seen);
        foreach ($seen as $i => $e) {
            $this->assertSame($thrown[$i], $e);
        }
        $this->assertCount(2, $this->slept);
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
}
