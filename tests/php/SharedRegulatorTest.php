<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Exception\SharedFileError;
use Recuo\Regulator;

/**
 * The regulator's promise across processes, held to it as core/tests/regulator_limits.rs
 * does: several `php` processes share one regulator file and one fake clock (a counter in a
 * file, advanced under `flock`), each making a bounded number of tries; their starts, merged,
 * never exceed `burst + rate × window` in any window, and use at least 95% of the starts
 * the time allowed (no lost permits).
 */
final class SharedRegulatorTest extends TestCase
{
    private const RATE = '100/s';
    private const INTERVAL_NS = 10_000_000;
    private const BURST = 5;
    private const PROCESSES = 4;
    private const TRIES = 5_000;     // per process
    private const STEP_NS = 100_000; // each try moves the fake clock 0.1 ms
    private const FIRST_NS = 1_000_000_000;

    private string $dir = '';

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/recuo-shared-regulator-' . getmypid() . '-' . bin2hex(random_bytes(4));
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

    /** The fake clock's reading (0: not started). */
    private function clock(): int
    {
        $bytes = (string) file_get_contents($this->dir . '/clock');
        return strlen($bytes) === 8 ? unpack('P', $bytes)[1] : 0;
    }

    public function testProcessesShareOneAllowanceThroughAFile(): void
    {
        file_put_contents($this->dir . '/clock', pack('P', 0));
        $children = [];
        for ($i = 0; $i < self::PROCESSES; $i++) {
            $pipes = [];
            $process = proc_open(
                [
                    PHP_BINARY, '-n', '-d', 'extension=' . RECUO_EXTENSION, __DIR__ . '/support/regulator_child.php',
                    $this->dir, self::RATE, (string) self::BURST, (string) self::TRIES, (string) self::STEP_NS,
                ],
                [1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
                $pipes,
            );
            $this->assertIsResource($process);
            $children[] = [$process, $pipes];
        }
        // Let them open the regulator, then start the clock: they run together.
        usleep(300_000);
        $clock = fopen($this->dir . '/clock', 'r+b');
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
        $span = $this->clock() - self::FIRST_NS;
        $this->assertSame(self::PROCESSES * self::TRIES * self::STEP_NS, $span, 'every try moved the clock once');
        $this->assertGreaterThan(100, count($starts));
        $this->assertSame(count($starts), count(array_unique($starts)), 'no instant given twice');
        $this->check($starts, $span);
    }

    /** The same check in one process with two handles on the file: the check itself works. */
    public function testTheCheckHoldsForTwoHandlesInOneProcess(): void
    {
        $path = $this->dir . '/regulator';
        $handles = [Regulator::shared($path, self::RATE, self::BURST), Regulator::shared($path, self::RATE, self::BURST)];
        $now = self::FIRST_NS;
        $starts = [];
        for ($i = 0; $i < 4_000; $i++) {
            if ($handles[$i % 2]->tryAcquireAt($now) === 0) {
                $starts[] = $now;
            }
            $now += self::STEP_NS;
        }
        // The burst, then one per 10 ms: 5 + floor(399.9 ms / 10 ms).
        $this->assertSame(44, count($starts));
        $this->check($starts, $now - self::FIRST_NS);
    }

    public function testAProcessOpeningTheFileWithAnotherRateIsRefused(): void
    {
        $path = $this->dir . '/regulator';
        Regulator::shared($path, self::RATE, self::BURST);
        $code = sprintf(
            'try { Recuo\Regulator::shared(%s, "120/min", %d); echo "opened"; } '
            . 'catch (Recuo\Exception\SharedFileError $e) { echo get_class($e), ": ", $e->getMessage(); }',
            var_export($path, true),
            self::BURST,
        );
        [$status, $out, $err] = Process::php($code);
        $this->assertSame(0, $status, $err);
        $this->assertSame(
            SharedFileError::class . ": Recuo\\Regulator::shared(): shared state: $path regulates 100.000000/s with "
            . 'a burst of 5; this process asked for 2.000000/s with a burst of 5',
            $out,
        );
        // A process that opens it with the same settings shares it.
        [$status, $out] = Process::php(sprintf(
            '$r = Recuo\Regulator::shared(%s, "100/s", 5); echo $r->tryAcquireAt(7_000_000_000, 5);',
            var_export($path, true),
        ));
        $this->assertSame([0, '0'], [$status, $out]);
        $here = Regulator::shared($path, '100/s', 5);
        $this->assertSame(10_000_000, $here->tryAcquireAt(7_000_000_000), 'the other process took the burst');
    }
}
