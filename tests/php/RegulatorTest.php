<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Exception\ConfigError;
use Recuo\Exception\SharedFileError;
use Recuo\Regulator;
use Recuo\RetryBudget;

use function Recuo\monotonicNs;

/** Recuo\Regulator: the core's GCRA regulator of starts, in this process or in a shared file. */
final class RegulatorTest extends TestCase
{
    use Throws;

    private const S = 1_000_000_000;

    private string $dir = '';

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/recuo-regulator-test-' . getmypid() . '-' . bin2hex(random_bytes(4));
        mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        foreach (glob($this->dir . '/*') ?: [] as $file) {
            unlink($file);
        }
        rmdir($this->dir);
    }

    public function testABurstThenOnePerInterval(): void
    {
        $r = new Regulator('2/s', 3);
        $t0 = 10 * self::S;
        $this->assertSame([0, 0, 0, 500_000_000], [
            $r->tryAcquireAt($t0), $r->tryAcquireAt($t0), $r->tryAcquireAt($t0), $r->tryAcquireAt($t0),
        ]);
        $this->assertSame(1, $r->tryAcquireAt($t0 + self::S / 2 - 1));
        $this->assertSame(0, $r->tryAcquireAt($t0 + self::S / 2));
        $this->assertSame(500_000_000, $r->tryAcquireAt($t0 + self::S / 2));
        // After a quiet spell the burst is back, never more.
        $later = $t0 + 100 * self::S;
        $this->assertSame([0, 0, 0, 500_000_000], [
            $r->tryAcquireAt($later), $r->tryAcquireAt($later), $r->tryAcquireAt($later), $r->tryAcquireAt($later),
        ]);
    }

    public function testOneStartPerIntervalOnAFakeClock(): void
    {
        // 90/min: one start every 666 666 667 ns, the first at once.
        $r = new Regulator('90/min');
        $allowed = [];
        for ($now = self::S; $now < self::S + 3 * self::S; $now += 1_000_000) {
            if ($r->tryAcquireAt($now) === 0) {
                $allowed[] = $now - self::S;
            }
        }
        $this->assertSame([0, 667_000_000, 1_334_000_000, 2_001_000_000, 2_668_000_000], $allowed);
    }

    public function testStartsWeighTheirCost(): void
    {
        $r = new Regulator('10/s', 10);
        $this->assertSame(0, $r->tryAcquireAt(self::S, 7));
        $this->assertSame(100_000_000, $r->tryAcquireAt(self::S, 4));
        $this->assertSame(0, $r->tryAcquireAt(self::S, 3));
        $this->assertSame(100_000_000, $r->tryAcquireAt(self::S, 1));
        $zero = $this->thrownBy(static fn () => $r->tryAcquireAt(self::S, 0));
        $this->assertSame(\ValueError::class, get_class($zero));
        $this->assertSame(
            'Recuo\Regulator::tryAcquireAt(): Argument #2 ($cost) is not valid: a start\'s cost must be at least 1',
            $zero->getMessage(),
        );
        $e = $this->thrownBy(static fn () => $r->tryAcquireAt(self::S, 11));
        $this->assertSame(\ValueError::class, get_class($e));
        $this->assertSame(
            'Recuo\Regulator::tryAcquireAt(): Argument #2 ($cost) is not valid: a start of cost 11 can never pass '
            . 'a regulator whose burst is 10',
            $e->getMessage(),
        );
        $this->assertSame(\ValueError::class, get_class($this->thrownBy(static fn () => $r->tryAcquire(11))));
        $this->assertSame(\ValueError::class, get_class($this->thrownBy(static fn () => $r->acquire(null, 11))));
    }

    public function testTheRateAndTheBurst(): void
    {
        $r = new Regulator('90/min', 4);
        // The rate of the interval in force: 1 / 666 666 667 ns.
        $this->assertEqualsWithDelta(1.5, $r->rate, 1e-9);
        $this->assertSame(4, $r->burst);
        $this->assertSame(['rate' => $r->rate, 'burst' => 4], get_object_vars($r));
        $this->assertSame(2.5, (new Regulator(2.5))->rate);
        $this->assertEqualsWithDelta(3.0, (new Regulator(3))->rate, 1e-6);
        $this->assertSame(1, (new Regulator('1/s'))->burst);
        $this->assertEqualsWithDelta(5000 / 3600, (new Regulator('5000/h'))->rate, 1e-9);
        $this->assertEqualsWithDelta(1.0, (new Regulator('86400/day'))->rate, 1e-9);
    }

    public function testAnAdaptiveRegulatorHalvesOnThrottlingAndRecoversOnSuccess(): void
    {
        $r = new Regulator('8/s', 1, adaptive: true);
        $r->onThrottled();
        $this->assertEqualsWithDelta(4.0, $r->rate, 1e-6);
        $r->onThrottled();
        $this->assertEqualsWithDelta(2.0, $r->rate, 1e-6);
        for ($i = 0; $i < 12; $i++) {
            $r->onSuccess();
        }
        $this->assertEqualsWithDelta(8.0, $r->rate, 1e-6);
        $r->onSuccess();
        $this->assertEqualsWithDelta(8.0, $r->rate, 1e-6, 'never above the configured rate');
        for ($i = 0; $i < 20; $i++) {
            $r->onThrottled();
        }
        $this->assertEqualsWithDelta(8.0 / 64, $r->rate, 1e-9, 'down to 1/64 at most');
        // The slower rate is the one in force: starts are 8 s apart.
        $this->assertSame(0, $r->tryAcquireAt(self::S));
        $this->assertSame(8 * self::S, $r->tryAcquireAt(self::S));
        // A regulator that is not adaptive does not move.
        $fixed = new Regulator('8/s');
        $fixed->onThrottled();
        $fixed->onSuccess();
        $this->assertSame(8.0, $fixed->rate);
    }

    public function testTryAcquireAnswersInSeconds(): void
    {
        $r = new Regulator('1/min');
        $this->assertSame(0.0, $r->tryAcquire());
        $wait = $r->tryAcquire();
        $this->assertGreaterThan(59.0, $wait);
        $this->assertLessThanOrEqual(60.0, $wait);
        // A refusal takes nothing: the wait does not grow.
        $this->assertLessThanOrEqual($wait, $r->tryAcquire());
    }

    public function testAcquireWaitsForItsSlot(): void
    {
        $r = new Regulator('20/s');
        $started = hrtime(true);
        $starts = [];
        for ($i = 0; $i < 4; $i++) {
            $this->assertTrue($r->acquire());
            $starts[] = hrtime(true);
        }
        // Four starts at 20/s, the first at once: at least 3 intervals of 50 ms.
        $this->assertGreaterThanOrEqual(145e6, $starts[3] - $started);
        $this->assertLessThan(2e9, $starts[3] - $started);
        for ($i = 1; $i < 4; $i++) {
            $this->assertGreaterThanOrEqual(40e6, $starts[$i] - $starts[$i - 1]);
        }
    }

    public function testAcquireWithATimeoutTakesNothingWhenTheSlotComesTooLate(): void
    {
        $r = new Regulator('1/min');
        $this->assertTrue($r->acquire(0.0));
        $started = hrtime(true);
        $this->assertFalse($r->acquire(0.05));
        $this->assertFalse($r->acquire(0));
        $this->assertLessThan(1e9, hrtime(true) - $started, 'answered at once: the slot is a minute away');
        // Nothing was reserved: the next slot is still one interval away, not three.
        $this->assertLessThanOrEqual(60.0, $r->tryAcquire());
        // A slot that comes in time is waited for.
        $fast = new Regulator('50/s');
        $this->assertTrue($fast->acquire(1.0));
        $started = hrtime(true);
        $this->assertTrue($fast->acquire(1.0));
        $this->assertGreaterThanOrEqual(15e6, hrtime(true) - $started);
    }

    public function testTheMonotonicClock(): void
    {
        $a = monotonicNs();
        usleep(1000);
        $b = monotonicNs();
        $this->assertGreaterThan(0, $a);
        $this->assertGreaterThanOrEqual($a + 1_000_000, $b);
        // The regulator counts on the same clock: a slot "now" is a slot at monotonicNs().
        $r = new Regulator('1/min');
        $this->assertSame(0, $r->tryAcquireAt(monotonicNs()));
        $this->assertGreaterThan(59 * self::S, $r->tryAcquireAt(monotonicNs()));
    }

    public function testARegulatorIsFinalAndNotCloneable(): void
    {
        $this->assertTrue((new \ReflectionClass(Regulator::class))->isFinal());
        $r = new Regulator('1/s');
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static fn () => clone $r));
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static function () use ($r): void {
            $r->burst = 5;
        }));
        $this->assertSame(1, $r->burst);
    }

    /** @return array<string, array{\Closure, class-string<\Throwable>, string}> */
    public static function badInput(): array
    {
        $r = static fn () => new Regulator('10/s', 2);
        return [
            'a zero burst' => [static fn () => new Regulator('1/s', 0), \ValueError::class, 'Recuo\Regulator::__construct(): Argument #2 ($burst) is not valid: the burst must be at least 1'],
            'a negative burst' => [static fn () => new Regulator('1/s', -1), \ValueError::class, 'Argument #2 ($burst) must be between 0 and 4294967295'],
            'a huge burst' => [static fn () => new Regulator('1/s', 1 << 40), \ValueError::class, 'Argument #2 ($burst)'],
            'a zero rate' => [static fn () => new Regulator('0/s'), \ValueError::class, 'Argument #1 ($rate) is not valid: "0/s" is not a rate'],
            'a negative rate' => [static fn () => new Regulator(-1.0), \ValueError::class, 'above zero, not -1'],
            'a NaN rate' => [static fn () => new Regulator(NAN), \ValueError::class, 'not NaN'],
            'a rate that is a word' => [static fn () => new Regulator('lots'), \ValueError::class, 'not a rate'],
            'a rate that is null' => [static fn () => new Regulator(null), \TypeError::class, 'rate'],
            'a rate that is an array' => [static fn () => new Regulator(['1/s']), \TypeError::class, 'rate'],
            'a burst that is a string' => [static fn () => new Regulator('1/s', '2'), \TypeError::class, 'burst'],
            'a negative cost' => [static fn () => $r()->tryAcquire(-1), \ValueError::class, 'Argument #1 ($cost) must be between 0 and 4294967295'],
            'a negative now' => [static fn () => $r()->tryAcquireAt(-1), \ValueError::class, 'Argument #1 ($nowNs) must be greater than or equal to 0'],
            'a negative timeout' => [static fn () => $r()->acquire(-0.5), ConfigError::class, 'Recuo\Regulator::acquire(): Argument #1 ($timeout)'],
            'a NaN timeout' => [static fn () => $r()->acquire(NAN), ConfigError::class, 'Argument #1 ($timeout)'],
            'an infinite timeout' => [static fn () => $r()->acquire(INF), ConfigError::class, 'Argument #1 ($timeout)'],
            'a timeout that is a string' => [static fn () => $r()->acquire('1'), \TypeError::class, 'timeout'],
            'an empty path' => [static fn () => Regulator::shared('', '1/s'), \ValueError::class, 'Recuo\Regulator::shared(): Argument #1 ($path) must be a file name'],
            'a path with a NUL byte' => [static fn () => Regulator::shared("/tmp/a\0b", '1/s'), \ValueError::class, 'Argument #1 ($path)'],
            'a shared zero burst' => [static fn () => Regulator::shared('/tmp/never-made', '1/s', 0), \ValueError::class, 'Argument #3 ($burst) is not valid: the burst must be at least 1'],
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

    public function testTwoHandlesOnOneFileShareOneAllowance(): void
    {
        $path = $this->dir . '/regulator';
        $a = Regulator::shared($path, '90/min', 3);
        $b = Regulator::shared($path, 1.5, 3);
        $this->assertFileExists($path);
        $this->assertSame(0, $a->tryAcquireAt(5 * self::S, 3));
        $this->assertGreaterThan(0, $b->tryAcquireAt(5 * self::S), 'one allowance, two handles');
        $this->assertEqualsWithDelta(1.5, $b->rate, 1e-9);
        $this->assertSame(3, $b->burst);
    }

    public function testASecondOpenerWithOtherSettingsIsRefusedClearly(): void
    {
        $path = $this->dir . '/regulator';
        $first = Regulator::shared($path, '90/min', 3);
        $e = $this->thrownBy(static fn () => Regulator::shared($path, '120/min', 3));
        $this->assertSame(SharedFileError::class, get_class($e));
        $this->assertInstanceOf(\RuntimeException::class, $e);
        $this->assertSame(
            "Recuo\\Regulator::shared(): shared state: $path regulates 1.500000/s with a burst of 3; this process "
            . 'asked for 2.000000/s with a burst of 3',
            $e->getMessage(),
        );
        $e = $this->thrownBy(static fn () => Regulator::shared($path, '90/min', 4));
        $this->assertSame(SharedFileError::class, get_class($e));
        $this->assertStringContainsString('with a burst of 3; this process asked for 1.500000/s with a burst of 4', $e->getMessage());
        // The first opener's allowance is untouched.
        $this->assertEqualsWithDelta(1.5, $first->rate, 1e-9);
        $this->assertSame(0, $first->tryAcquireAt(self::S, 3));
    }

    public function testAFileThatHoldsSomethingElseIsRefused(): void
    {
        $junk = $this->dir . '/junk';
        file_put_contents($junk, 'not a regulator');
        $e = $this->thrownBy(static fn () => Regulator::shared($junk, '1/s'));
        $this->assertSame(SharedFileError::class, get_class($e));
        $this->assertStringContainsString("$junk is 15 bytes, not the", $e->getMessage());
        $this->assertSame('not a regulator', file_get_contents($junk), 'left as it was');
        // A budget's file is not a regulator's.
        $budget = $this->dir . '/budget';
        RetryBudget::shared($budget);
        $this->assertSame(SharedFileError::class, get_class($this->thrownBy(static fn () => Regulator::shared($budget, '1/s'))));
        // A file that cannot be created.
        $e = $this->thrownBy(fn () => Regulator::shared($this->dir . '/missing/dir/regulator', '1/s'));
        $this->assertSame(SharedFileError::class, get_class($e));
        $this->assertStringContainsString('No such file or directory', $e->getMessage());
    }
}
