<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Exception\ConfigError;
use Recuo\RetryAfter;

use function Recuo\backoffWindowMs;
use function Recuo\parseRetryAfter;
use function Recuo\retryDelayMs;

/** Guide B's delay, Retry-After parsing and the backoff window, beyond the shared vectors. */
final class RetryAfterTest extends TestCase
{
    use Throws;

    /** Sun, 06 Nov 1994 08:49:37 GMT, in milliseconds since the epoch. */
    private const NOW_MS = 784111777000;

    public function testTwelveMeansTwelveSeconds(): void
    {
        $this->assertSame(12000.0, retryDelayMs('12', 0, self::NOW_MS));
        $this->assertSame(12000.0, retryDelayMs('12', 9));
    }

    public function testAnHttpDateWaitsUntilThenAndThePastIsZero(): void
    {
        $this->assertSame(30000.0, retryDelayMs('Sun, 06 Nov 1994 08:50:07 GMT', 0, self::NOW_MS));
        $this->assertSame(0.0, retryDelayMs('Sun, 06 Nov 1994 08:49:07 GMT', 0, self::NOW_MS));
    }

    public function testAnUnboundedWaitIsInfinite(): void
    {
        $this->assertSame(INF, retryDelayMs('99999999999999', 0, self::NOW_MS));
        $this->assertSame(INF, retryDelayMs(str_repeat('9', 400), 3, self::NOW_MS, 1));
        $this->assertSame('unbounded', parseRetryAfter('9007199254741', 0)->kind);
        $this->assertNull(parseRetryAfter('9007199254741', 0)->waitMs);
        $this->assertSame(9007199254740000, parseRetryAfter('9007199254740', 0)->waitMs);
    }

    public function testMissingOrInvalidValuesGiveTheSeededJitterWindow(): void
    {
        foreach ([0 => 1000, 1 => 2000, 2 => 4000, 3 => 8000, 40 => 8000, PHP_INT_MAX => 8000] as $attempt => $window) {
            foreach (range(1, 20) as $seed) {
                $delay = retryDelayMs(null, $attempt, self::NOW_MS, $seed);
                $this->assertGreaterThanOrEqual(0.0, $delay);
                $this->assertLessThanOrEqual((float) $window, $delay);
                $this->assertSame(floor($delay), $delay);
                // Null, empty and garbage are all "no server wait": the same draw for a seed.
                $this->assertSame($delay, retryDelayMs('', $attempt, self::NOW_MS, $seed));
                $this->assertSame($delay, retryDelayMs('soon', $attempt, self::NOW_MS, $seed));
            }
        }
    }

    /** PHP strings are bytes: bytes that are not UTF-8 are an invalid value, never an error. */
    public function testBytesThatAreNotUtf8AreInvalid(): void
    {
        foreach (["\xff", "1\xff2", "\xc3\xa912", "12\0", "\x80"] as $bytes) {
            $parsed = parseRetryAfter($bytes, self::NOW_MS);
            $this->assertSame('invalid', $parsed->kind);
            $this->assertNull($parsed->waitMs);
            $this->assertSame(retryDelayMs(null, 2, self::NOW_MS, 7), retryDelayMs($bytes, 2, self::NOW_MS, 7));
        }
    }

    /** Without `$nowMs`, the system clock: a date an hour ahead is (nearly) an hour away. */
    public function testNowDefaultsToTheSystemClock(): void
    {
        $inAnHour = gmdate('D, d M Y H:i:s \G\M\T', time() + 3600);
        $delay = retryDelayMs($inAnHour, 0);
        $this->assertGreaterThan(3_000_000.0, $delay);
        $this->assertLessThanOrEqual(3_600_000.0, $delay);
        $parsed = parseRetryAfter($inAnHour);
        $this->assertSame('date', $parsed->kind);
        $this->assertGreaterThan(3_000_000, $parsed->waitMs);
        $this->assertSame(0.0, retryDelayMs('Sun, 06 Nov 1994 08:49:37 GMT', 0));
    }

    public function testNegativeAttemptsAndSeedsAreValueErrors(): void
    {
        $e = $this->thrownBy(static fn () => retryDelayMs(null, -1));
        $this->assertSame(\ValueError::class, get_class($e));
        $this->assertSame('Recuo\retryDelayMs(): Argument #2 ($attempt) must be greater than or equal to 0', $e->getMessage());
        $e = $this->thrownBy(static fn () => retryDelayMs('12', 0, null, -5));
        $this->assertSame(\ValueError::class, get_class($e));
        $this->assertStringContainsString('($seed)', $e->getMessage());
        $e = $this->thrownBy(static fn () => backoffWindowMs(-1));
        $this->assertSame(\ValueError::class, get_class($e));
        $this->assertStringContainsString('($attempt)', $e->getMessage());
    }

    /** @return array<string, array{\Closure(): mixed}> */
    public static function wrongTypes(): array
    {
        return [
            'retryAfter an int' => [static fn () => retryDelayMs(12, 0)],
            'retryAfter an array' => [static fn () => retryDelayMs([], 0)],
            'attempt a string' => [static fn () => retryDelayMs(null, '1')],
            'attempt a float' => [static fn () => retryDelayMs(null, 1.0)],
            'attempt null' => [static fn () => retryDelayMs(null, null)],
            'attempt missing' => [static fn () => retryDelayMs(null)],
            'nowMs a string' => [static fn () => retryDelayMs(null, 0, '0')],
            'parse an int' => [static fn () => parseRetryAfter(12)],
            'parse null' => [static fn () => parseRetryAfter(null)],
            'window of a string' => [static fn () => backoffWindowMs('1')],
            'window with a float cap' => [static fn () => backoffWindowMs(1, 200, 5000.0)],
        ];
    }

    /** @dataProvider wrongTypes */
    public function testWrongTypesAreTypeErrors(\Closure $call): void
    {
        $this->assertInstanceOf(\TypeError::class, $this->thrownBy($call));
    }

    public function testRetryAfterIsAReadOnlyFinalClass(): void
    {
        $parsed = parseRetryAfter('120', self::NOW_MS);
        $this->assertInstanceOf(RetryAfter::class, $parsed);
        $this->assertSame(['kind' => 'seconds', 'waitMs' => 120000], get_object_vars($parsed));
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static function () use ($parsed): void {
            $parsed->kind = 'date';
        }));
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static function () use ($parsed): void {
            $parsed->waitMs = 1;
        }));
        $this->assertSame('seconds', $parsed->kind);
        $this->assertSame(120000, $parsed->waitMs);
        $this->assertTrue((new \ReflectionClass(RetryAfter::class))->isFinal());
        $this->assertInstanceOf(\Error::class, $this->thrownBy(static fn () => new RetryAfter()));
    }

    public function testEveryKind(): void
    {
        $kinds = [];
        foreach (['12', 'Sun, 06 Nov 1994 08:49:47 GMT', '99999999999999', 'soon'] as $value) {
            $parsed = parseRetryAfter($value, self::NOW_MS);
            $kinds[$parsed->kind] = $parsed->waitMs;
        }
        $this->assertSame(['seconds' => 12000, 'date' => 10000, 'unbounded' => null, 'invalid' => null], $kinds);
    }

    public function testBackoffWindowDefaultsAreGuideAs(): void
    {
        $this->assertSame([200, 400, 800, 1600, 3200, 5000, 5000], array_map(backoffWindowMs(...), range(0, 6)));
        $this->assertSame(5000, backoffWindowMs(PHP_INT_MAX));
        $this->assertSame(0, backoffWindowMs(PHP_INT_MAX, 0, 0));
        $this->assertSame(PHP_INT_MAX, backoffWindowMs(PHP_INT_MAX, 1, PHP_INT_MAX));
    }

    public function testBackoffWindowConfigErrors(): void
    {
        foreach ([
            [static fn () => backoffWindowMs(0, 10, 5), ConfigError::CAP_BELOW_BASE, 'Recuo\backoffWindowMs(): the maximum (5 ms) must not be below the base (10 ms)'],
            [static fn () => backoffWindowMs(0, -1), ConfigError::NEGATIVE_DURATION, 'Recuo\backoffWindowMs(): Argument #2 ($baseMs): a duration must not be negative'],
            [static fn () => backoffWindowMs(0, 0, -1), ConfigError::NEGATIVE_DURATION, 'Recuo\backoffWindowMs(): Argument #3 ($capMs): a duration must not be negative'],
        ] as [$call, $code, $message]) {
            $e = $this->thrownBy($call);
            $this->assertInstanceOf(ConfigError::class, $e);
            $this->assertSame($code, $e->getCode());
            $this->assertSame($message, $e->getMessage());
        }
    }
}
