<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\ConcurrencyLimit;
use Recuo\Exception\ConfigError;
use Recuo\Permit;

/** Recuo\ConcurrencyLimit and Recuo\Permit: the core's semaphore on operations in flight. */
final class ConcurrencyLimitTest extends TestCase
{
    use Throws;

    public function testPermitsComeBackWhenReleased(): void
    {
        $limit = new ConcurrencyLimit(2);
        $this->assertSame(['limit' => 2, 'inFlight' => 0, 'maxInFlight' => 0], get_object_vars($limit));
        $a = $limit->tryAcquire();
        $b = $limit->tryAcquire();
        $this->assertInstanceOf(Permit::class, $a);
        $this->assertInstanceOf(Permit::class, $b);
        $this->assertNull($limit->tryAcquire());
        $this->assertSame([2, 2], [$limit->inFlight, $limit->maxInFlight]);
        $this->assertFalse($a->released);
        $a->release();
        $this->assertTrue($a->released);
        $this->assertSame(1, $limit->inFlight);
        // Releasing again gives nothing back twice.
        $a->release();
        $this->assertSame(1, $limit->inFlight);
        $c = $limit->tryAcquire();
        $this->assertInstanceOf(Permit::class, $c);
        $this->assertNull($limit->tryAcquire());
        $b->release();
        $c->release();
        $this->assertSame([0, 2], [$limit->inFlight, $limit->maxInFlight]);
    }

    public function testAPermitIsGivenBackWhenDestroyed(): void
    {
        $limit = new ConcurrencyLimit(1);
        $permit = $limit->tryAcquire();
        $this->assertSame(1, $limit->inFlight);
        unset($permit);
        $this->assertSame(0, $limit->inFlight);
        // A permit nobody keeps is given back at once.
        $limit->tryAcquire();
        $this->assertSame(0, $limit->inFlight);
        // One that outlives its scope holds its place until it goes.
        $holder = (static fn (ConcurrencyLimit $l): array => [$l->tryAcquire()])($limit);
        $this->assertSame(1, $limit->inFlight);
        $holder = [];
        $this->assertSame([0, 1], [$limit->inFlight, $limit->maxInFlight]);
        // A permit released and then destroyed gives nothing back twice.
        $p = $limit->tryAcquire();
        $q = null;
        $p->release();
        $q = $limit->tryAcquire();
        unset($p);
        $this->assertSame(1, $limit->inFlight);
        $this->assertInstanceOf(Permit::class, $q);
    }

    public function testAcquireTakesAFreePlaceAtOnce(): void
    {
        $limit = new ConcurrencyLimit(2);
        $a = $limit->acquire();
        $b = $limit->acquire(5.0);
        $this->assertInstanceOf(Permit::class, $a);
        $this->assertInstanceOf(Permit::class, $b);
        $this->assertSame(2, $limit->inFlight);
    }

    public function testAcquireWithATimeoutGivesUpWhenEveryPlaceIsTaken(): void
    {
        $limit = new ConcurrencyLimit(1);
        $held = $limit->acquire();
        $started = hrtime(true);
        $this->assertNull($limit->acquire(0.02));
        $waited = hrtime(true) - $started;
        $this->assertGreaterThanOrEqual(15e6, $waited);
        $this->assertLessThan(2e9, $waited);
        $this->assertNull($limit->acquire(0));
        $this->assertSame(1, $limit->inFlight);
        $held->release();
        $this->assertInstanceOf(Permit::class, $limit->acquire(0));
    }

    /** Only this thread holds the places: a wait without a timeout would never end. */
    public function testAWaitThatCouldNeverEndThrowsInsteadOfHanging(): void
    {
        $limit = new ConcurrencyLimit(2);
        $held = [$limit->acquire(), $limit->acquire()];
        $started = hrtime(true);
        $e = $this->thrownBy(static fn () => $limit->acquire());
        $this->assertLessThan(1e9, hrtime(true) - $started);
        $this->assertSame(\LogicException::class, get_class($e));
        $this->assertSame(
            'Recuo\ConcurrencyLimit::acquire(): every place of the concurrency limit (2 of 2) is taken by this PHP '
            . 'thread, and only it could give one back: waiting would never end (release a Recuo\Permit first, or '
            . 'use tryAcquire() or a timeout)',
            $e->getMessage(),
        );
        $this->assertSame(2, $limit->inFlight);
        $held[0]->release();
        $this->assertInstanceOf(Permit::class, $limit->acquire());
    }

    public function testTheClassesAreFinalReadOnlyAndNotCloneable(): void
    {
        $limit = new ConcurrencyLimit(1);
        $permit = $limit->tryAcquire();
        foreach ([ConcurrencyLimit::class, Permit::class] as $class) {
            $this->assertTrue((new \ReflectionClass($class))->isFinal(), $class);
        }
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static fn () => clone $permit));
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static fn () => clone $limit));
        $this->assertInstanceOf(\Error::class, $this->thrownBy(static fn () => new Permit()));
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static function () use ($limit): void {
            $limit->inFlight = 0;
        }));
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static function () use ($permit): void {
            $permit->released = true;
        }));
        $this->assertSame(1, $limit->inFlight);
        $this->assertFalse($permit->released);
    }

    /** @return array<string, array{\Closure, class-string<\Throwable>, string}> */
    public static function badInput(): array
    {
        $bad = 'Recuo\ConcurrencyLimit::__construct(): Argument #1 ($limit) must be between 1 and 4294967295';
        return [
            'no place' => [static fn () => new ConcurrencyLimit(0), \ValueError::class, $bad],
            'a negative limit' => [static fn () => new ConcurrencyLimit(-1), \ValueError::class, $bad],
            'a huge limit' => [static fn () => new ConcurrencyLimit(1 << 32), \ValueError::class, $bad],
            'a string' => [static fn () => new ConcurrencyLimit('2'), \TypeError::class, 'limit'],
            'a negative timeout' => [static fn () => (new ConcurrencyLimit(1))->acquire(-1.0), ConfigError::class, 'Recuo\ConcurrencyLimit::acquire(): Argument #1 ($timeout)'],
            'a NaN timeout' => [static fn () => (new ConcurrencyLimit(1))->acquire(NAN), ConfigError::class, 'Argument #1 ($timeout)'],
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
