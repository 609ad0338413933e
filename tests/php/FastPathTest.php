<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Attempt;

use function Recuo\comRetry;
use function Recuo\retry;

/**
 * Issue 18: `Recuo\comRetry($f)` and `Recuo\retry($f)` called with the operation alone make
 * their first attempt before any machine exists, and hand a failure to the machine. Each case
 * runs that fast path beside the same loop spelled with a default argument (which takes the
 * machine from the start): the answers must be the same.
 */
final class FastPathTest extends TestCase
{
    use Throws;

    /** A `$sleep` that waits not at all. */
    private static function noSleep(): \Closure
    {
        return static function (int $ms): void {
        };
    }

    /** A loop inside the first attempt draws from the outer loop's attempts, fast or not. */
    public function testANestedLoopDrawsFromTheFastPathsAttempts(): void
    {
        $run = static function (callable $loop): array {
            $inner = 0;
            $value = $loop(static function () use (&$inner): string {
                try {
                    comRetry(static function () use (&$inner): void {
                        $inner++;
                        throw new \RuntimeException('inner');
                    }, sleep: self::noSleep());
                } catch (\RuntimeException) {
                }
                return 'outer';
            });
            return [$value, $inner];
        };
        $fast = $run(static fn (callable $f) => comRetry($f));
        $slow = $run(static fn (callable $f) => comRetry($f, 5));
        $this->assertSame(['outer', 5], $fast);
        $this->assertSame($slow, $fast);
        $fast = $run(static fn (callable $f) => retry($f));
        $slow = $run(static fn (callable $f) => retry($f, null));
        $this->assertSame(['outer', 5], $fast);
        $this->assertSame($slow, $fast);
    }

    /** A fast loop inside another loop's attempt counts as that loop's (its first is free). */
    public function testAFastLoopInsideAnotherDrawsFromIt(): void
    {
        $calls = [];
        $e = $this->thrownBy(static function () use (&$calls): void {
            comRetry(static function () use (&$calls): void {
                $calls[] = 'outer';
                // Fast, nested: it succeeds at once and draws nothing.
                $calls[] = comRetry(static fn (): string => 'inner');
                throw new \RuntimeException('outer');
            }, sleep: self::noSleep());
        });
        $this->assertSame('outer', $e->getMessage());
        $this->assertSame(array_merge(...array_fill(0, 5, ['outer', 'inner'])), $calls);
    }

    /**
     * A first attempt that fails goes on in the machine as its first: the pool a loop inside
     * it drew from, the attempt numbers, the value.
     */
    public function testAFirstFailureIsTheMachinesFirstAttempt(): void
    {
        $run = static function (callable $loop): array {
            $seen = [];
            $inner = 0;
            $value = $loop(static function (?Attempt $attempt = null) use (&$seen, &$inner): string {
                $seen[] = $attempt?->number;
                if (count($seen) === 1) {
                    // Two of the pool's attempts: the inner loop's first is free.
                    try {
                        comRetry(static function () use (&$inner): void {
                            if (++$inner < 3) {
                                throw new \RuntimeException('inner');
                            }
                        }, sleep: self::noSleep());
                    } catch (\RuntimeException) {
                    }
                    throw new \RuntimeException('first');
                }
                return 'second';
            });
            return [$value, $seen, $inner];
        };
        // Guide A's first delay is at most 200 ms: the fast path sleeps it for real.
        $fast = $run(static fn (callable $f) => retry($f));
        $slow = $run(static fn (callable $f) => retry($f, sleep: self::noSleep()));
        $this->assertSame(['second', [0, 1], 3], $fast);
        $this->assertSame($slow, $fast);
        $fast = $run(static fn (callable $f) => comRetry($f));
        $slow = $run(static fn (callable $f) => comRetry($f, sleep: self::noSleep()));
        $this->assertSame(['second', [null, null], 3], $fast);
        $this->assertSame($slow, $fast);
    }

    /**
     * The key is made at the first ask, on the fast path too, and is the operation's: every
     * attempt's object answers the same one, the first attempt's as well, even when it was
     * kept and asked only after a later attempt asked for it.
     */
    public function testTheKeyIsTheOperationsOnEveryAttempt(): void
    {
        $attempts = [];
        $keys = [];
        $result = retry(static function (Attempt $attempt) use (&$attempts, &$keys): string {
            $attempts[] = $attempt;
            if ($attempt->number === 0) {
                throw new \RuntimeException('not yet');
            }
            $keys[] = $attempt->idempotencyKey;
            return 'done';
        });
        $this->assertSame('done', $result);
        $this->assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $keys[0]);
        $this->assertSame([0, 1], array_map(static fn (Attempt $a) => $a->number, $attempts));
        $this->assertSame([$keys[0], $keys[0]], array_map(static fn (Attempt $a) => $a->idempotencyKey, $attempts));
        $this->assertSame('Idempotency-Key', $attempts[0]->idempotencyHeader);

        // A success at the first attempt: a key when asked, the same at every ask, and
        // another operation's another key.
        $kept = [];
        retry(static function (Attempt $attempt) use (&$kept): void {
            $kept[] = $attempt;
        });
        retry(static function (Attempt $attempt) use (&$kept): void {
            $kept[] = $attempt;
        });
        $this->assertSame($kept[0]->idempotencyKey, $kept[0]->idempotencyKey);
        $this->assertNotSame($kept[0]->idempotencyKey, $kept[1]->idempotencyKey);
    }

    /**
     * Each fast first attempt has an attempt 0 of its own, whether the operation declares a
     * parameter or not (`func_get_args()` sees it), nested or one after another: a key made
     * by one call is never another's, and an object kept — returned, stored, weakly
     * referenced — is left as it was by the calls after it.
     */
    public function testEveryFirstAttemptHasAnAttemptOfItsOwn(): void
    {
        foreach ([static fn (callable $f) => retry($f), static fn (callable $f) => retry($f, null)] as $loop) {
            // No parameter: the attempt comes all the same.
            $args = $loop(static fn () => func_get_args());
            $this->assertCount(1, $args);
            $this->assertInstanceOf(Attempt::class, $args[0]);
            $this->assertSame(0, $args[0]->number);

            // One after another: each its number 0 and a key of its own, none kept.
            $keys = [];
            for ($i = 0; $i < 3; $i++) {
                $keys[] = $loop(static function (Attempt $attempt): string {
                    $attempt->recordRequest('POST', 'https://example.test/a');
                    return $attempt->number . ' ' . $attempt->idempotencyKey;
                });
            }
            $this->assertCount(3, array_unique($keys));
            foreach ($keys as $key) {
                $this->assertStringStartsWith('0 ', $key);
            }

            // Returned, then another call: the kept one answers as before, the new one anew.
            $kept = $loop(static fn (Attempt $attempt) => $attempt);
            $key = $kept->idempotencyKey;
            $other = $loop(static fn (Attempt $attempt) => [$attempt->number, $attempt->idempotencyKey, $attempt === $kept]);
            $this->assertSame([0, false], [$other[0], $other[2]]);
            $this->assertNotSame($key, $other[1]);
            $this->assertSame([0, $key], [$kept->number, $kept->idempotencyKey]);

            // Weakly referenced: gone once the call is over, as any object nobody holds.
            $weak = $loop(static fn (Attempt $attempt) => \WeakReference::create($attempt));
            $loop(static fn (Attempt $attempt) => $attempt->idempotencyKey);
            $this->assertNull($weak->get());

            // Nested: the inner loop's attempt is not the outer's, nor is its key.
            $seen = $loop(static function (Attempt $outer) use ($loop): array {
                $before = $outer->idempotencyKey;
                $inner = [];
                for ($i = 0; $i < 2; $i++) {
                    $inner[] = $loop(static fn (Attempt $attempt) => [$attempt->number, $attempt->idempotencyKey, $attempt === $outer]);
                }
                return [$before, $outer->number, $outer->idempotencyKey, $inner];
            });
            [$before, $number, $after, $inner] = $seen;
            $this->assertSame([0, $before], [$number, $after]);
            foreach ($inner as [$n, $k, $same]) {
                $this->assertSame([0, false], [$n, $same]);
                $this->assertNotSame($before, $k);
            }
            $this->assertNotSame($inner[0][1], $inner[1][1]);

            // A first attempt that fails after one that succeeded: the same key on its retry
            // (guide A's first delay, at most 200 ms, slept for real).
            $failedKeys = [];
            $loop(static fn (Attempt $attempt) => $attempt->idempotencyKey);
            $loop(static function (Attempt $attempt) use (&$failedKeys): void {
                $failedKeys[] = [$attempt->number, $attempt->idempotencyKey];
                if ($attempt->number === 0) {
                    throw new \RuntimeException('once');
                }
            });
            $this->assertSame([0, 1], array_column($failedKeys, 0));
            $this->assertSame($failedKeys[0][1], $failedKeys[1][1]);
        }
    }

    /** Giving up after a fast first attempt rethrows the last failure, the very object. */
    public function testGivingUpRethrowsTheLastFailure(): void
    {
        $thrown = [];
        $e = $this->thrownBy(static function () use (&$thrown): void {
            // Guide A's delays are slept for real: at most 3 s, 1.5 s on average.
            comRetry(static function () use (&$thrown): void {
                throw $thrown[] = new \RuntimeException('failure ' . (count($thrown) + 1));
            });
        });
        $this->assertCount(5, $thrown);
        $this->assertSame($thrown[4], $e);
    }

    /** The value comes back as is, references and all; a callable that is a name works too. */
    public function testValuesAndCallablesOfEveryKind(): void
    {
        $object = new \stdClass();
        $this->assertSame($object, comRetry(static fn () => $object));
        $this->assertNull(retry(static function (): void {
        }));
        $this->assertSame('5', comRetry(static fn () => '5'));
        $this->assertSame(PHP_INT_MAX, comRetry(static fn () => PHP_INT_MAX));
        $this->assertIsInt(comRetry('time'));
        $invokable = new class () {
            public function __invoke(): string
            {
                return 'invoked';
            }
        };
        $this->assertSame('invoked', comRetry($invokable));
        $this->assertSame('invoked', retry($invokable));
        $this->assertSame('invoked', comRetry([$invokable, '__invoke']));
    }

    /** A fatal error inside a fast first attempt leaves no pool behind for a shutdown loop. */
    public function testAFatalErrorInTheFirstAttemptLeavesNoLimitBehind(): void
    {
        [$status, $out, $err] = Process::php(<<<'PHP'
            register_shutdown_function(function () {
                $calls = 0;
                try {
                    Recuo\comRetry(function () use (&$calls) { $calls++; throw new Exception('again'); }, sleep: fn ($ms) => null);
                } catch (Exception $e) {
                    echo "shutdown: $calls calls\n";
                }
            });
            Recuo\comRetry(function () { trigger_error('fatal in a first attempt', E_USER_ERROR); });
            echo "not reached\n";
            PHP);
        $this->assertSame(255, $status);
        $this->assertStringContainsString('fatal in a first attempt', $out . $err);
        $this->assertStringContainsString("shutdown: 5 calls\n", $out);
        $this->assertStringNotContainsString('not reached', $out);
    }

    /** `exit()` inside a fast first attempt ends the script, no loop in its way. */
    public function testExitInTheFirstAttemptEndsTheScript(): void
    {
        [$status, $out] = Process::php(<<<'PHP'
            Recuo\retry(function () { echo "first\n"; exit(3); });
            echo "not reached\n";
            PHP);
        $this->assertSame(3, $status);
        $this->assertSame("first\n", $out);
    }
}
