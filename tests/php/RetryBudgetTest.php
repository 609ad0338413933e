<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Exception\SharedFileError;
use Recuo\RetryBudget;

/** Recuo\RetryBudget: retries at most a ratio of recent requests plus a floor (the core's). */
final class RetryBudgetTest extends TestCase
{
    use Throws;

    private const S = 1_000_000_000;

    private string $dir = '';

    protected function setUp(): void
    {
        $this->dir = sys_get_temp_dir() . '/recuo-budget-test-' . getmypid() . '-' . bin2hex(random_bytes(4));
        mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        foreach (glob($this->dir . '/*') ?: [] as $file) {
            unlink($file);
        }
        rmdir($this->dir);
    }

    public function testRetriesAreARatioOfRequestsPlusAFloor(): void
    {
        $b = new RetryBudget(0.1, 0.5, 10);
        $t = 100 * self::S;
        // The floor alone: 0.5/s × 10 s = 5 retries.
        $granted = [];
        for ($i = 0; $i < 6; $i++) {
            $granted[] = $b->tryWithdrawAt($t);
        }
        $this->assertSame([true, true, true, true, true, false], $granted);
        // 100 requests earn 10 more.
        for ($i = 0; $i < 100; $i++) {
            $b->recordRequestAt($t);
        }
        $more = 0;
        while ($b->tryWithdrawAt($t)) {
            $more++;
        }
        $this->assertSame(10, $more);
        $this->assertSame(['requests' => 100, 'retries' => 15], $b->counts($t));
    }

    public function testOldSecondsFallOutOfTheWindow(): void
    {
        $b = new RetryBudget(0.0, 0.1, 10);
        $t = 50 * self::S;
        $this->assertTrue($b->tryWithdrawAt($t));
        $this->assertFalse($b->tryWithdrawAt($t + 9 * self::S));
        $this->assertTrue($b->tryWithdrawAt($t + 10 * self::S), 'the first retry is 10 s old');
        $this->assertSame(['requests' => 0, 'retries' => 1], $b->counts($t + 10 * self::S));
    }

    public function testTheDefaultsAreTheCores(): void
    {
        $b = new RetryBudget();
        $this->assertSame(['ratio' => 0.1, 'floorPerS' => 1.0, 'windowS' => 10], get_object_vars($b));
        $t = 7 * self::S;
        $granted = 0;
        for ($i = 0; $i < 100; $i++) {
            $granted += $b->tryWithdrawAt($t) ? 1 : 0;
        }
        $this->assertSame(10, $granted, 'the floor: 1 retry per second over 10 s');
    }

    public function testOnTheRealClock(): void
    {
        $b = new RetryBudget(0.5, 0.0, 60);
        $this->assertFalse($b->tryWithdraw(), 'no request, no floor: no retry');
        $b->recordRequest();
        $b->recordRequest();
        $this->assertTrue($b->tryWithdraw());
        $this->assertFalse($b->tryWithdraw());
        $this->assertSame(['requests' => 2, 'retries' => 1], $b->counts());
    }

    public function testTwoHandlesOnOneFileShareOneBudget(): void
    {
        $path = $this->dir . '/budget';
        $a = RetryBudget::shared($path, 0.0, 0.3, 10);
        $b = RetryBudget::shared($path, 0.0, 0.3, 10);
        $t = 20 * self::S;
        $this->assertTrue($a->tryWithdrawAt($t));
        $this->assertTrue($b->tryWithdrawAt($t));
        $this->assertTrue($a->tryWithdrawAt($t));
        $this->assertFalse($b->tryWithdrawAt($t), '0.3/s × 10 s = 3 retries between them');
        $this->assertSame(['ratio' => 0.0, 'floorPerS' => 0.3, 'windowS' => 10], get_object_vars($b));
    }

    public function testAnotherProcessSharesTheFile(): void
    {
        $path = $this->dir . '/budget';
        $here = RetryBudget::shared($path, 0.5, 0.0, 10);
        $t = 30 * self::S;
        $this->assertFalse($here->tryWithdrawAt($t));
        [$status, $out, $err] = Process::php(sprintf(
            '$b = Recuo\RetryBudget::shared(%s, 0.5, 0.0, 10); for ($i = 0; $i < 4; $i++) { $b->recordRequestAt(%d); } echo "ok";',
            var_export($path, true),
            $t,
        ));
        $this->assertSame([0, 'ok', ''], [$status, $out, $err]);
        $this->assertSame(['requests' => 4, 'retries' => 0], $here->counts($t));
        $this->assertTrue($here->tryWithdrawAt($t));
        $this->assertTrue($here->tryWithdrawAt($t));
        $this->assertFalse($here->tryWithdrawAt($t), 'half of the other process\'s 4 requests');
    }

    public function testASecondOpenerWithOtherSettingsIsRefused(): void
    {
        $path = $this->dir . '/budget';
        RetryBudget::shared($path);
        $e = $this->thrownBy(static fn () => RetryBudget::shared($path, 0.2));
        $this->assertSame(SharedFileError::class, get_class($e));
        $this->assertSame(
            "Recuo\\RetryBudget::shared(): shared state: $path holds a budget of ratio 0.1, floor 1/s, window 10 s; "
            . 'this process asked for ratio 0.2, floor 1/s, window 10 s',
            $e->getMessage(),
        );
        file_put_contents($this->dir . '/junk', 'junk');
        $this->assertSame(SharedFileError::class, get_class($this->thrownBy(fn () => RetryBudget::shared($this->dir . '/junk'))));
    }

    /** @return array<string, array{\Closure, class-string<\Throwable>, string}> */
    public static function badInput(): array
    {
        $f = 'Recuo\RetryBudget::__construct(): ';
        return [
            'a negative ratio' => [static fn () => new RetryBudget(-0.1), \ValueError::class, $f . 'the retry ratio must be between 0 and 1000, not -0.1'],
            'a NaN ratio' => [static fn () => new RetryBudget(NAN), \ValueError::class, 'the retry ratio must be between 0 and 1000, not NaN'],
            'a huge ratio' => [static fn () => new RetryBudget(1001.0), \ValueError::class, 'the retry ratio'],
            'a negative floor' => [static fn () => new RetryBudget(0.1, -1.0), \ValueError::class, $f . 'the floor must be 0 or more retries per second, not -1'],
            'an infinite floor' => [static fn () => new RetryBudget(0.1, INF), \ValueError::class, 'the floor'],
            'no window' => [static fn () => new RetryBudget(0.1, 1.0, 0), \ValueError::class, $f . 'the window must be 1 to 60 seconds, not 0'],
            'a long window' => [static fn () => new RetryBudget(0.1, 1.0, 61), \ValueError::class, 'not 61'],
            'a negative window' => [static fn () => new RetryBudget(0.1, 1.0, -1), \ValueError::class, $f . 'Argument #3 ($windowS) must be between 1 and 60'],
            'a shared bad window' => [static fn () => RetryBudget::shared('/tmp/never-made', 0.1, 1.0, 0), \ValueError::class, 'Recuo\RetryBudget::shared(): the window must be 1 to 60 seconds'],
            'an empty path' => [static fn () => RetryBudget::shared(''), \ValueError::class, 'Argument #1 ($path) must be a file name'],
            'a negative now' => [static fn () => (new RetryBudget())->tryWithdrawAt(-1), \ValueError::class, 'Argument #1 ($nowNs) must be greater than or equal to 0'],
            'a negative now for a request' => [static fn () => (new RetryBudget())->recordRequestAt(-5), \ValueError::class, 'Argument #1 ($nowNs)'],
            'a negative now for counts' => [static fn () => (new RetryBudget())->counts(-5), \ValueError::class, 'Argument #1 ($nowNs)'],
            'a string ratio' => [static fn () => new RetryBudget('0.1'), \TypeError::class, 'ratio'],
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
