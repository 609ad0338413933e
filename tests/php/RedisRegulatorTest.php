<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Exception\SharedFileError;
use Recuo\Regulator;

/**
 * `Recuo\Regulator::redis()`: one allowance for several machines through a Redis server — a
 * real `redis-server` this class starts on a free port of 127.0.0.1 and stops in
 * `tearDownAfterClass`. Several `php` processes, each with its own connection, share one key
 * and a fake clock (a counter in a file, advanced under `flock`, as in SharedRegulatorTest);
 * their starts, merged, never exceed `burst + rate × window` in any window and use at least
 * 95% of the starts the time allowed.
 */
final class RedisRegulatorTest extends TestCase
{
    use Throws;
    use WithRedisServer;

    private const RATE = '100/s';
    private const INTERVAL_NS = 10_000_000;
    private const BURST = 5;
    private const PROCESSES = 4;
    private const TRIES = 2_000;     // per process: each try is a round trip to the server
    private const STEP_NS = 100_000; // each try moves the fake clock 0.1 ms
    private const FIRST_NS = 1_000_000_000;
    private const MS = 1_000_000;
    private const S = 1_000_000_000;

    public function testABurstThenOnePerIntervalOnAFakeClock(): void
    {
        $r = Regulator::redis(self::url(), 'php:exact', '2/s', 3);
        $this->assertSame([2.0, 3], [$r->rate, $r->burst]);
        $t0 = 10 * self::S;
        $this->assertSame([0, 0, 0, 500 * self::MS], array_map(static fn () => $r->tryAcquireAt($t0), range(1, 4)));
        // The server counts whole microseconds.
        $this->assertSame(1_000, $r->tryAcquireAt($t0 + intdiv(self::S, 2) - 1_000));
        $this->assertSame(0, $r->tryAcquireAt($t0 + intdiv(self::S, 2)));
        $this->assertSame(500 * self::MS, $r->tryAcquireAt($t0 + intdiv(self::S, 2)));
        $this->assertSame(0, $r->tryAcquireAt($t0 + self::S));
        // Another handle — another connection, another machine — shares the allowance.
        $same = Regulator::redis(self::url(), 'php:exact', '120/min', 3);
        $this->assertSame(500 * self::MS, $same->tryAcquireAt($t0 + self::S));
        // After a quiet spell the burst is back, never more, whichever handle asks.
        $later = $t0 + 100 * self::S;
        $this->assertSame(
            [0, 0, 0, 500 * self::MS],
            [$r->tryAcquireAt($later), $same->tryAcquireAt($later), $r->tryAcquireAt($later), $same->tryAcquireAt($later)],
        );
    }

    public function testCostsWeighSeveralStarts(): void
    {
        $r = Regulator::redis(self::url(), 'php:costs', 10.0, 10);
        $this->assertSame(0, $r->tryAcquireAt(self::S, 7));
        $this->assertSame(100 * self::MS, $r->tryAcquireAt(self::S, 4));
        $this->assertSame(0, $r->tryAcquireAt(self::S, 3));
        $e = $this->thrownBy(static fn () => $r->tryAcquireAt(self::S, 11));
        $this->assertInstanceOf(\ValueError::class, $e);
        $this->assertStringContainsString('cost 11 can never pass a regulator whose burst is 10', $e->getMessage());
        $this->assertSame(0, $r->tryAcquireAt(2 * self::S, 10));
    }

    /**
     * Checks the window bound over every pair of starts, and that the starts used at least
     * 95% of what the span allowed.
     *
     * @param list<int> $starts
     */
    private function check(array $starts, int $spanNs): void
    {
        sort($starts);
        $n = count($starts);
        for ($i = 0; $i < $n; $i++) {
            for ($j = $i; $j < $n; $j++) {
                $count = $j - $i + 1;
                $allowed = self::BURST + ($starts[$j] - $starts[$i]) / self::INTERVAL_NS;
                if ($count > $allowed + 1e-9) {
                    $this->fail(sprintf('%d starts in %d ns, more than %f', $count, $starts[$j] - $starts[$i], $allowed));
                }
            }
        }
        $possible = self::BURST + $spanNs / self::INTERVAL_NS;
        $this->assertGreaterThanOrEqual(0.95 * $possible, $n, "only $n of $possible starts used");
    }

    public function testProcessesShareOneAllowanceThroughRedis(): void
    {
        $dir = sys_get_temp_dir() . '/recuo-redis-regulator-' . getmypid() . '-' . bin2hex(random_bytes(4));
        mkdir($dir);
        try {
            file_put_contents("$dir/clock", pack('P', 0));
            $children = [];
            for ($i = 0; $i < self::PROCESSES; $i++) {
                $pipes = [];
                $process = proc_open(
                    [
                        PHP_BINARY, '-n', '-d', 'extension=' . RECUO_EXTENSION, __DIR__ . '/support/regulator_child.php',
                        $dir, self::RATE, (string) self::BURST, (string) self::TRIES, (string) self::STEP_NS,
                        self::url(), 'php:machines',
                    ],
                    [1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
                    $pipes,
                );
                $this->assertIsResource($process);
                $children[] = [$process, $pipes];
            }
            // Let them connect, then start the clock: they run together.
            usleep(300_000);
            $clock = fopen("$dir/clock", 'r+b');
            $this->assertIsResource($clock);
            flock($clock, LOCK_EX);
            fwrite($clock, pack('P', self::FIRST_NS));
            fflush($clock);
            flock($clock, LOCK_UN);
            fclose($clock);

            $starts = [];
            foreach ($children as $i => [$process, $pipes]) {
                $out = (string) stream_get_contents($pipes[1]);
                $err = (string) stream_get_contents($pipes[2]);
                fclose($pipes[1]);
                fclose($pipes[2]);
                $this->assertSame(0, proc_close($process), "process $i: $err");
                $this->assertSame('', $err, "process $i");
                $mine = array_map('intval', array_filter(explode("\n", $out), static fn (string $l): bool => $l !== ''));
                $this->assertNotEmpty($mine, "process $i made no start");
                array_push($starts, ...$mine);
            }
            $bytes = (string) file_get_contents("$dir/clock");
            $span = unpack('P', $bytes)[1] - self::FIRST_NS;
            $this->assertSame(self::PROCESSES * self::TRIES * self::STEP_NS, $span, 'every try moved the clock once');
            $this->assertGreaterThan(50, count($starts));
            $this->assertSame(count($starts), count(array_unique($starts)), 'no instant given twice');
            $this->check($starts, $span);
        } finally {
            foreach (glob("$dir/*") ?: [] as $file) {
                unlink($file);
            }
            rmdir($dir);
        }
    }

    public function testAnotherRateOnTheKeyIsRefused(): void
    {
        Regulator::redis(self::url(), 'php:k', '90/min', 3);
        // Another process, as another machine would be.
        $code = sprintf(
            'try { Recuo\Regulator::redis(%s, "php:k", "120/min", 3); echo "opened"; } '
            . 'catch (Recuo\Exception\SharedFileError $e) { echo get_class($e), ": ", $e->getMessage(); }',
            var_export(self::url(), true),
        );
        [$status, $out, $err] = Process::php($code);
        $this->assertSame(0, $status, $err);
        $this->assertSame(
            SharedFileError::class . ': Recuo\Regulator::redis(): shared state: the Redis key "php:k" regulates one '
            . 'start every 666666 µs with a burst of 3; this process asked for one every 500000 µs with a burst of 3',
            $out,
        );
        $e = $this->thrownBy(static fn () => Regulator::redis(self::url(), 'php:k', '90/min', 4));
        $this->assertInstanceOf(SharedFileError::class, $e);
        $this->assertInstanceOf(\RuntimeException::class, $e);
        $this->assertStringContainsString('with a burst of 4', $e->getMessage());
        // The same settings written otherwise, and another key with the other rate: fine.
        $this->assertSame(3, Regulator::redis(self::url(), 'php:k', 1.5, 3)->burst);
        $this->assertSame(3, Regulator::redis(self::url(), 'php:k2', '120/min', 3)->burst);
    }

    public function testAnUnreachableServerIsASharedFileError(): void
    {
        $port = RedisServer::freePort();
        $e = $this->thrownBy(static fn () => Regulator::redis("127.0.0.1:$port", 'k', '1/s'));
        $this->assertInstanceOf(SharedFileError::class, $e);
        $this->assertStringStartsWith("Recuo\\Regulator::redis(): shared state: Redis at 127.0.0.1:$port: ", $e->getMessage());
        $e = $this->thrownBy(static fn () => Regulator::redis('redis://', 'k', '1/s'));
        $this->assertInstanceOf(SharedFileError::class, $e);
        $this->assertStringContainsString('names no host', $e->getMessage());
        // A password this server does not have: refused, and the password is not repeated.
        $e = $this->thrownBy(static fn () => Regulator::redis(str_replace('//', '//:s3cr3t@', self::url()), 'k', '1/s'));
        $this->assertInstanceOf(SharedFileError::class, $e);
        $this->assertStringContainsString('AUTH', $e->getMessage());
        $this->assertStringNotContainsString('s3cr3t', $e->getMessage());
    }

    public function testArgumentsAreChecked(): void
    {
        $e = $this->thrownBy(static fn () => Regulator::redis(self::url(), 'php:z', '1/s', 0));
        $this->assertInstanceOf(\ValueError::class, $e);
        $this->assertStringContainsString('Argument #4 ($burst)', $e->getMessage());
        $e = $this->thrownBy(static fn () => Regulator::redis(self::url(), 'php:z', '0/s'));
        $this->assertInstanceOf(\ValueError::class, $e);
        $this->assertStringContainsString('Argument #3 ($rate)', $e->getMessage());
        $e = $this->thrownBy(static fn () => Regulator::redis(self::url(), "\xff", '1/s'));
        $this->assertInstanceOf(\ValueError::class, $e);
        $this->assertSame('Recuo\Regulator::redis(): Argument #2 ($key) must be valid UTF-8', $e->getMessage());
        $parameters = (new \ReflectionMethod(Regulator::class, 'redis'))->getParameters();
        $this->assertSame(
            ['url: string', 'key: string', 'rate: string|float', 'burst: int', 'adaptive: bool'],
            array_map(static fn (\ReflectionParameter $p): string => $p->getName() . ': ' . $p->getType(), $parameters),
        );
    }

    public function testTheServersClockPacesRealStarts(): void
    {
        $r = Regulator::redis(self::url(), 'php:real', '2/s', 2);
        $this->assertSame(0.0, $r->tryAcquire());
        $this->assertSame(0.0, $r->tryAcquire());
        $wait = $r->tryAcquire();
        $this->assertGreaterThan(0.0, $wait);
        $this->assertLessThanOrEqual(0.5, $wait);
        // acquire() waits for the next slot, as long as the server says.
        $before = hrtime(true);
        $this->assertTrue($r->acquire(5.0));
        $took = (hrtime(true) - $before) / 1e9;
        $this->assertGreaterThanOrEqual($wait - 0.05, $took);
        $this->assertLessThan($wait + 3.0, $took);
        // The next slot is one interval away: not within 0 s, and nothing is reserved.
        $this->assertFalse($r->acquire(0.0));
    }

    public function testAGateOverARedisRegulator(): void
    {
        $gate = new \Recuo\Gate(regulator: Regulator::redis(self::url(), 'php:gate', '1000/s', 1));
        $this->assertSame('sent', \Recuo\retry(static fn () => 'sent', gate: $gate));
    }

    public function testALostServerIsASharedFileErrorAndNothingIsTaken(): void
    {
        $own = RedisServer::start();
        try {
            $r = Regulator::redis($own->url(), 'php:lost', '1000/s', 1);
            $gate = new \Recuo\Gate(regulator: $r);
            $this->assertSame(0.0, $r->tryAcquire());
        } finally {
            $own->stop();
        }
        foreach ([
            'tryAcquire' => static fn () => $r->tryAcquire(),
            'tryAcquireAt' => static fn () => $r->tryAcquireAt(5 * self::S),
            'acquire' => static fn () => $r->acquire(1.0),
            'retry' => static fn () => \Recuo\retry(static fn () => 'never sent', gate: $gate),
        ] as $what => $call) {
            $e = $this->thrownBy($call);
            $this->assertInstanceOf(SharedFileError::class, $e, $what);
            $this->assertStringContainsString('shared state:', $e->getMessage(), $what);
        }
    }
}
