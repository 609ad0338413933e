<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\ConcurrencyLimit;
use Recuo\Exception\SharedFileError;

/**
 * The concurrency limit in a shared file (`ConcurrencyLimit::shared`): 4 `php` processes on
 * a limit of 1, one holds and 3 wait; each holder in turn is killed with `kill -9`, and the
 * next waiter starts within the bound docs/limits.md states (250 ms after the kill), never
 * two at once. Then what it refuses and what it counts.
 */
final class SharedLimitTest extends TestCase
{
    private const CHILDREN = 4;
    private const BOUND_NS = 250_000_000;

    /** A child: waits for the place (at most 20 s), says when it has it, holds it 20 s. */
    private const CHILD = <<<'PHP'
        $limit = Recuo\ConcurrencyLimit::shared($argv[1], 1);
        $permit = $limit->tryAcquire();
        if ($permit === null) {
            echo "waiting\n";
            $permit = $limit->acquire(20.0);
        }
        if ($permit !== null) {
            echo 'started ', Recuo\monotonicNs(), "\n";
            sleep(20);
        }
        PHP;

    private string $dir = '';

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/recuo-shared-limit-' . getmypid() . '-' . bin2hex(random_bytes(4));
        mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        foreach (glob($this->dir . '/*') ?: [] as $file) {
            unlink($file);
        }
        rmdir($this->dir);
    }

    /**
     * The next line any child wrote within `$timeout` seconds: [child, word, instant], or
     * null.
     *
     * @param array<int, resource> $outs
     * @param array<int, string> $buffers
     * @return array{int, string, int}|null
     */
    private static function next(array $outs, array &$buffers, float $timeout): ?array
    {
        $until = hrtime(true) + (int) ($timeout * 1e9);
        for (;;) {
            foreach ($buffers as $i => $buffer) {
                $nl = strpos($buffer, "\n");
                if ($nl !== false) {
                    $buffers[$i] = substr($buffer, $nl + 1);
                    $words = explode(' ', substr($buffer, 0, $nl));
                    return [$i, $words[0], (int) ($words[1] ?? 0)];
                }
            }
            $left = $until - hrtime(true);
            if ($left <= 0) {
                return null;
            }
            $read = array_values($outs);
            $write = $except = null;
            if (@stream_select($read, $write, $except, 0, (int) min($left / 1000, 999_999)) > 0) {
                foreach ($read as $stream) {
                    $i = array_search($stream, $outs, true);
                    $chunk = fread($stream, 4096);
                    if ($chunk === false || $chunk === '') {
                        unset($outs[$i]);
                        continue;
                    }
                    $buffers[$i] .= $chunk;
                }
            }
        }
    }

    public function testAKilledHolderFreesItsPlaceForTheNextWaiterAtOnce(): void
    {
        $path = $this->dir . '/limit';
        $watcher = ConcurrencyLimit::shared($path, 1);
        $children = $outs = $buffers = [];
        for ($i = 0; $i < self::CHILDREN; $i++) {
            $pipes = [];
            $process = proc_open(
                [PHP_BINARY, '-n', '-d', 'extension=' . RECUO_EXTENSION, '-r', self::CHILD, $path],
                [1 => ['pipe', 'w']],
                $pipes,
            );
            $this->assertIsResource($process);
            $children[$i] = $process;
            $outs[$i] = $pipes[1];
            $buffers[$i] = '';
        }
        try {
            $holder = null;
            $waiting = 0;
            while ($holder === null || $waiting < self::CHILDREN - 1) {
                $said = self::next($outs, $buffers, 30.0);
                $this->assertNotNull($said, 'every child starts or waits');
                if ($said[1] === 'started') {
                    $this->assertNull($holder, 'two children started at once');
                    $holder = $said[0];
                } else {
                    $waiting++;
                }
            }
            $delays = [];
            for ($k = 1; $k < self::CHILDREN; $k++) {
                $this->assertNull(self::next($outs, $buffers, 0.1), 'nobody starts while one holds');
                $this->assertSame(1, $watcher->inFlight);
                $killedAt = \Recuo\monotonicNs();
                $this->assertTrue(proc_terminate($children[$holder], 9));
                $said = self::next($outs, $buffers, 5.0);
                $this->assertNotNull($said, 'a waiter takes the place');
                $this->assertSame('started', $said[1]);
                $this->assertNotSame($holder, $said[0]);
                $delays[] = $said[2] - $killedAt;
                $holder = $said[0];
            }
            foreach ($delays as $delay) {
                $this->assertGreaterThan(0, $delay);
                $this->assertLessThanOrEqual(self::BOUND_NS, $delay, 'delays (ns): ' . implode(', ', $delays));
            }
        } finally {
            foreach ($children as $i => $process) {
                proc_terminate($process, 9);
                fclose($outs[$i]);
                proc_close($process);
            }
        }
        $this->assertSame(0, $watcher->inFlight);
        $permit = $watcher->tryAcquire();
        $this->assertNotNull($permit);
        $this->assertSame([1, 1], [$watcher->inFlight, $watcher->maxInFlight]);
        $permit->release();
    }

    public function testHandlesOnOneFileShareItsPlaces(): void
    {
        $path = $this->dir . '/limit';
        $a = ConcurrencyLimit::shared($path, 2);
        $b = ConcurrencyLimit::shared($path, 2);
        $this->assertSame(2, $a->limit);
        $first = $a->tryAcquire();
        $second = $b->tryAcquire();
        $this->assertNotNull($first);
        $this->assertNotNull($second);
        $this->assertNull($a->tryAcquire());
        $this->assertNull($b->acquire(0.02));
        $this->assertSame([2, 2], [$a->inFlight, $b->inFlight]);
        // Another process's place may come back: waiting without a timeout is no dead end
        // while this process holds fewer than all.
        $first->release();
        $this->assertSame([1, 1, 1], [$a->inFlight, $a->maxInFlight, $b->maxInFlight]);
        $third = $a->acquire();
        $this->assertNotNull($third);
        $second->release();
        $fourth = $a->tryAcquire();
        $this->assertNotNull($fourth);
        // This handle holds every place: only this thread could give one back.
        $this->expectException(\LogicException::class);
        try {
            $a->acquire();
        } finally {
            $third->release();
            $fourth->release();
        }
    }

    public function testOtherSettingsAndHostileFilesAreRefused(): void
    {
        $path = $this->dir . '/limit';
        ConcurrencyLimit::shared($path, 2);
        try {
            ConcurrencyLimit::shared($path, 3);
            $this->fail('another limit was accepted');
        } catch (SharedFileError $e) {
            $this->assertSame(
                "Recuo\\ConcurrencyLimit::shared(): shared state: $path holds a concurrency limit of 2; this process asked for 3",
                $e->getMessage(),
            );
        }
        file_put_contents($this->dir . '/junk', str_repeat('x', 24));
        try {
            ConcurrencyLimit::shared($this->dir . '/junk', 2);
            $this->fail('junk was accepted');
        } catch (SharedFileError $e) {
            $this->assertStringContainsString("lacks recuo's mark", $e->getMessage());
        }
        $this->assertSame(str_repeat('x', 24), file_get_contents($this->dir . '/junk'));
        symlink($path, $this->dir . '/link');
        try {
            ConcurrencyLimit::shared($this->dir . '/link', 2);
            $this->fail('a symbolic link was followed');
        } catch (SharedFileError $e) {
            $this->assertStringContainsString('symbolic link', $e->getMessage());
        }
        foreach ([[$path, 0], [$path, -1], [$path, 4294967296], ['', 1], ["a\0b", 1]] as [$p, $n]) {
            try {
                ConcurrencyLimit::shared($p, $n);
                $this->fail("accepted $n places");
            } catch (\ValueError $e) {
                $this->assertStringStartsWith('Recuo\ConcurrencyLimit::shared(): Argument #', $e->getMessage());
            }
        }
    }
}
