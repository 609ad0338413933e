<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Exception\SharedFileError;
use Recuo\Regulator;

/**
 * An adaptive regulator shared by two processes — in a file, and on Redis (a real
 * `redis-server` this class starts and stops): a 429 reported by process A (another `php`)
 * halves the rate process B reserves at, and B's successes give it back for both. Both
 * reserve at the same fake instants, so every wait is exact.
 */
final class SharedAdaptiveRegulatorTest extends TestCase
{
    use Throws;
    use WithRedisServer;

    private const MS = 1_000_000;
    private const T = 1_000_000_000_000; // the fake instant both processes reserve at, ns

    /** Process A: `$open` (PHP code giving `$r`), one start at T, a 429; prints the interval. */
    private function processA(string $open): string
    {
        [$status, $out, $err] = Process::php(
            $open . sprintf(
                ' if ($r->tryAcquireAt(%d) !== 0) { exit(3); } $r->onThrottled(); echo round(1e9 / $r->rate);',
                self::T,
            ),
        );
        $this->assertSame(0, $status, $err);
        return $out;
    }

    private function bSeesTheCut(Regulator $b): void
    {
        // A's start at T holds the slot until T + 100 ms; B's first start takes it, and its
        // next one comes 200 ms later — the halved rate — not 100 ms.
        $this->assertSame(0, $b->tryAcquireAt(self::T + 100 * self::MS));
        $this->assertSame(5.0, $b->rate);
        $this->assertSame(200 * self::MS, $b->tryAcquireAt(self::T + 100 * self::MS));
        // Each success gives back 1/16 of 10/s: 5.625/s, then 10/s after eight.
        $b->onSuccess();
        $this->assertSame(177_777_778.0, round(1e9 / $b->rate));
        for ($i = 0; $i < 7; $i++) {
            $b->onSuccess();
        }
        $this->assertSame(10.0, $b->rate);
    }

    public function testA429InOneProcessHalvesTheRateOfAnotherThroughAFile(): void
    {
        $path = sys_get_temp_dir() . '/recuo-adaptive-' . getmypid() . '-' . bin2hex(random_bytes(4));
        try {
            $b = Regulator::shared($path, '10/s', 1, true);
            $out = $this->processA(sprintf('$r = Recuo\Regulator::shared(%s, "10/s", 1, true);', var_export($path, true)));
            $this->assertSame('200000000', $out);
            $this->bSeesTheCut($b);
            $this->assertSame(10.0, Regulator::shared($path, '10/s', 1, adaptive: true)->rate);
            $e = $this->thrownBy(static fn () => Regulator::shared($path, '10/s', 1));
            $this->assertInstanceOf(SharedFileError::class, $e);
            $this->assertSame(
                "Recuo\\Regulator::shared(): shared state: $path regulates 10.000000/s with a burst of 1, adaptive "
                . '(a 429 slows every holder); this process asked for 10.000000/s with a burst of 1, not adaptive '
                . '(the settings are made when the file is set up, and every process that opens it must agree)',
                $e->getMessage(),
            );
        } finally {
            @unlink($path);
        }
    }

    public function testA429InOneProcessHalvesTheRateOfAnotherThroughRedis(): void
    {
        $b = Regulator::redis(self::url(), 'php:adaptive', '10/s', 1, true);
        $out = $this->processA(sprintf('$r = Recuo\Regulator::redis(%s, "php:adaptive", "10/s", 1, true);', var_export(self::url(), true)));
        $this->assertSame('200000000', $out);
        $this->bSeesTheCut($b);
        $e = $this->thrownBy(static fn () => Regulator::redis(self::url(), 'php:adaptive', '10/s', 1));
        $this->assertInstanceOf(SharedFileError::class, $e);
        $this->assertStringContainsString(
            'with a burst of 1, adaptive (a 429 slows every holder); this process asked for one every 100000 µs '
            . 'with a burst of 1, not adaptive',
            $e->getMessage(),
        );
        // A key that is not adaptive ignores a 429.
        $plain = Regulator::redis(self::url(), 'php:plain', '10/s', 1);
        $plain->onThrottled();
        $this->assertSame(10.0, $plain->rate);
    }
}
