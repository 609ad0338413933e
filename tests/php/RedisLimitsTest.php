<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\ConcurrencyLimit;
use Recuo\Exception\SharedFileError;
use Recuo\Gate;
use Recuo\Permit;
use Recuo\Policy;
use Recuo\Report;
use Recuo\RetryBudget;

/**
 * `Recuo\ConcurrencyLimit::redis()` (a concurrency limit with leases) and
 * `Recuo\RetryBudget::redis()` on a real `redis-server` this class starts on a free port of
 * 127.0.0.1: the same classes, gates and loops as the local limits. The rules are held by the
 * Rust side's fleet tests (redis-store/tests/fleet.rs); these check the PHP surface, and that
 * several `php` processes sharing one Redis limit through `Recuo\retry` hold `recuo serve`'s
 * requests in flight to it.
 */
final class RedisLimitsTest extends TestCase
{
    use Throws;
    use WithRedisServer;

    private const S = 1_000_000_000;

    public function testALimitOfTwoRefusesTheThirdPlaceAndGivesItBack(): void
    {
        $limit = ConcurrencyLimit::redis(self::url(), 'php:limit', 2, 5.0);
        // Another handle, with its own connection: another machine sharing the places.
        $other = ConcurrencyLimit::redis(self::url(), 'php:limit', 2, 5.0);
        $this->assertSame(2, $limit->limit);
        $a = $limit->tryAcquire();
        $b = $other->acquire(1.0);
        $this->assertInstanceOf(Permit::class, $a);
        $this->assertInstanceOf(Permit::class, $b);
        $this->assertNull($limit->tryAcquire());
        $this->assertNull($other->tryAcquire());
        $this->assertNull($limit->acquire(0.05));
        // The counts are this process's places, per handle.
        $this->assertSame([1, 1], [$limit->inFlight, $other->inFlight]);
        $b->release();
        $b->release(); // twice: harmless
        $this->assertTrue($b->released);
        $this->assertFalse($b->renew());
        $c = $limit->acquire(1.0);
        $this->assertInstanceOf(Permit::class, $c);
        $this->assertSame([2, 2], [$limit->inFlight, $limit->maxInFlight]);
        // Every place held by this thread: a wait without a timeout could end only when a
        // lease expires, and throws at once as it does for a local limit.
        $this->assertInstanceOf(\LogicException::class, $this->thrownBy(static fn () => $limit->acquire()));
        unset($c); // destroyed: its place is given back
        $this->assertInstanceOf(Permit::class, $other->tryAcquire());
        $a->release();
        $this->assertSame(0, $limit->inFlight);
    }

    public function testALeaseNotRenewedExpiresAndARenewedOneHolds(): void
    {
        $limit = ConcurrencyLimit::redis(self::url(), 'php:lease', 2, 0.3);
        $kept = $limit->tryAcquire();
        $left = $limit->tryAcquire();
        $this->assertInstanceOf(Permit::class, $kept);
        $this->assertInstanceOf(Permit::class, $left);
        $this->assertNull($limit->tryAcquire());
        for ($i = 0; $i < 3; $i++) { // 0.45 s in all: longer than a lease; $kept renews every 0.15 s
            usleep(150_000);
            $this->assertTrue($kept->renew());
        }
        // $left's lease ran out: its place came back by itself, and renewing cannot take it back.
        $this->assertFalse($left->renew());
        $late = $limit->acquire(1.0);
        $this->assertInstanceOf(Permit::class, $late);
        $this->assertNull($limit->tryAcquire(), '$kept still holds its place');
        $kept->release();
        $this->assertFalse($kept->renew());
        // A local permit has no lease: renewing it is fine until it is released.
        $local = (new ConcurrencyLimit(1))->tryAcquire();
        $this->assertInstanceOf(Permit::class, $local);
        $this->assertTrue($local->renew());
        $local->release();
        $this->assertFalse($local->renew());
    }

    public function testAnotherSettingOnTheKeyIsRefused(): void
    {
        ConcurrencyLimit::redis(self::url(), 'php:limit-k', 3, 10.0);
        // Another process, as another machine would be.
        $code = sprintf(
            'try { Recuo\ConcurrencyLimit::redis(%s, "php:limit-k", 4, 10.0); echo "opened"; } '
            . 'catch (Recuo\Exception\SharedFileError $e) { echo get_class($e), ": ", $e->getMessage(); }',
            var_export(self::url(), true),
        );
        [$status, $out, $err] = Process::php($code);
        $this->assertSame(0, $status, $err);
        $this->assertSame(
            SharedFileError::class . ': Recuo\ConcurrencyLimit::redis(): shared state: the Redis key "php:limit-k" '
            . 'limits 3 requests in flight with leases of 10000 ms; this process asked for 4 with leases of 10000 ms',
            $out,
        );
        $e = $this->thrownBy(static fn () => ConcurrencyLimit::redis(self::url(), 'php:limit-k', 3, 5.0));
        $this->assertInstanceOf(SharedFileError::class, $e);
        $this->assertStringContainsString('asked for 3 with leases of 5000 ms', $e->getMessage());
        RetryBudget::redis(self::url(), 'php:budget-k', 0.1, 0.5, 10);
        $e = $this->thrownBy(static fn () => RetryBudget::redis(self::url(), 'php:budget-k', 0.2, 0.5, 10));
        $this->assertInstanceOf(SharedFileError::class, $e);
        $this->assertStringStartsWith('Recuo\RetryBudget::redis(): shared state: the Redis key "php:budget-k" holds', $e->getMessage());
        $this->assertStringContainsString('asked for ratio 0.2', $e->getMessage());
    }

    public function testArgumentsAreCheckedAsTheLocalConstructorsCheckThem(): void
    {
        $cases = [
            'Argument #3 ($limit) must be between 1 and 4294967295' => static fn () => ConcurrencyLimit::redis(self::url(), 'php:z', 0, 1.0),
            'Argument #4 ($lease) must be from 0.001 to 86400 seconds' => static fn () => ConcurrencyLimit::redis(self::url(), 'php:z', 1, 0.0),
            'Argument #4 ($lease) must be from 0.001 to 86400 seconds ' => static fn () => ConcurrencyLimit::redis(self::url(), 'php:z', 1, NAN),
            'Argument #2 ($key) must be valid UTF-8' => static fn () => ConcurrencyLimit::redis(self::url(), "\xff", 1, 1.0),
            'ratio' => static fn () => RetryBudget::redis(self::url(), 'php:z', -1.0),
            'Argument #5 ($windowS)' => static fn () => RetryBudget::redis(self::url(), 'php:z', 0.1, 1.0, -1),
            'window' => static fn () => RetryBudget::redis(self::url(), 'php:z', 0.1, 1.0, 61),
        ];
        foreach ($cases as $message => $call) {
            $e = $this->thrownBy($call);
            $this->assertInstanceOf(\ValueError::class, $e, $message);
            $this->assertStringContainsString(trim($message), $e->getMessage());
        }
        $describe = static fn (string $class): array => array_map(
            static fn (\ReflectionParameter $p): string => $p->getName() . ': ' . $p->getType(),
            (new \ReflectionMethod($class, 'redis'))->getParameters(),
        );
        $this->assertSame(['url: string', 'key: string', 'limit: int', 'lease: float'], $describe(ConcurrencyLimit::class));
        $this->assertSame(
            ['url: string', 'key: string', 'ratio: float', 'floorPerS: float', 'windowS: int'],
            $describe(RetryBudget::class),
        );
    }

    public function testAnUnreachableServerIsASharedFileErrorAtOnce(): void
    {
        $port = RedisServer::freePort();
        $started = hrtime(true);
        foreach ([
            'Recuo\ConcurrencyLimit::redis' => static fn () => ConcurrencyLimit::redis("127.0.0.1:$port", 'k', 1, 1.0),
            'Recuo\RetryBudget::redis' => static fn () => RetryBudget::redis("127.0.0.1:$port", 'k'),
        ] as $function => $call) {
            $e = $this->thrownBy($call);
            $this->assertInstanceOf(SharedFileError::class, $e);
            $this->assertStringStartsWith("$function(): shared state: Redis at 127.0.0.1:$port: ", $e->getMessage());
        }
        $this->assertLessThan(2.0, (hrtime(true) - $started) / 1e9);
        // A password this server does not have: refused, and the password is not repeated.
        $e = $this->thrownBy(static fn () => ConcurrencyLimit::redis(str_replace('//', '//:s3cr3t@', self::url()), 'k', 1, 1.0));
        $this->assertInstanceOf(SharedFileError::class, $e);
        $this->assertStringNotContainsString('s3cr3t', $e->getMessage());
    }

    public function testTheBudgetRefusesRetriesBeyondItsRatioOnASharedFakeClock(): void
    {
        $budget = RetryBudget::redis(self::url(), 'php:budget-clock', 0.5, 0.1, 10);
        $same = RetryBudget::redis(self::url(), 'php:budget-clock', 0.5, 0.1, 10);
        $this->assertSame([0.5, 0.1, 10], [$budget->ratio, $budget->floorPerS, $budget->windowS]);
        $t = 1_000 * self::S;
        // The floor alone: 0.1/s over 10 s, one retry.
        $this->assertTrue($budget->tryWithdrawAt($t));
        $this->assertFalse($same->tryWithdrawAt($t));
        // Four requests earn two more, whichever handle counts them or withdraws.
        for ($i = 0; $i < 2; $i++) {
            $budget->recordRequestAt($t);
            $same->recordRequestAt($t);
        }
        $this->assertTrue($same->tryWithdrawAt($t + self::S));
        $this->assertTrue($budget->tryWithdrawAt($t + self::S));
        $this->assertFalse($budget->tryWithdrawAt($t + self::S));
        $this->assertSame(['requests' => 4, 'retries' => 3], $same->counts($t + self::S));
        $this->assertSame(['requests' => 0, 'retries' => 0], $budget->counts($t + 11 * self::S));
    }

    public function testTheBudgetIsSharedByProcesses(): void
    {
        $budget = RetryBudget::redis(self::url(), 'php:budget', 0.1, 0.5, 10);
        for ($i = 0; $i < 40; $i++) {
            $budget->recordRequest();
        }
        $code = sprintf(
            '$b = Recuo\RetryBudget::redis(%s, "php:budget", 0.1, 0.5, 10); $n = 0; '
            . 'for ($i = 0; $i < 10; $i++) { $n += (int) $b->tryWithdraw(); } echo $n;',
            var_export(self::url(), true),
        );
        $children = array_map(static fn (): array => self::start([PHP_BINARY, '-n', '-d', 'extension=' . RECUO_EXTENSION, '-r', $code]), range(1, 3));
        $granted = array_sum(array_map(fn (array $child): int => (int) $this->finish($child), $children));
        // 10% of 40 requests plus 0.5/s over 10 s: 9 retries for all the processes together.
        $this->assertSame(9, $granted);
        $this->assertSame(['requests' => 40, 'retries' => 9], $budget->counts());
        $this->assertFalse($budget->tryWithdraw());
    }

    public function testAGatesRedisBudgetSpendsRetriesForEveryLoop(): void
    {
        $budget = RetryBudget::redis(self::url(), 'php:budget-gate', 0.0, 0.1, 10); // one retry
        $gate = new Gate(budget: $budget);
        $reports = [];
        $onGiveUp = static function (Report $r) use (&$reports): void {
            $reports[] = [$r->attempts, $r->reason];
        };
        for ($i = 0; $i < 2; $i++) {
            $e = $this->thrownBy(static fn () => \Recuo\retry(
                static fn () => throw new \RuntimeException('down'),
                policy: new Policy(maxAttempts: 5, baseMs: 0, capMs: 0),
                onGiveUp: $onGiveUp,
                gate: $gate,
            ));
            $this->assertSame('down', $e->getMessage());
        }
        $this->assertSame([[2, 'budget_exhausted'], [1, 'budget_exhausted']], $reports);
        $this->assertSame(['requests' => 2, 'retries' => 1], $gate->budget?->counts());
    }

    public function testProcessesSharingARedisLimitHoldTheServersRequestsInFlight(): void
    {
        [$api, $serve] = HttpServers::serve(['--allowance', '100000/s', '--burst', '10000', '--fail-rate', '0', '--latency', '60ms']);
        try {
            // Four processes, one request at a time each: four at once without the limit of 2.
            $code = sprintf(
                '$gate = new Recuo\Gate(limit: Recuo\ConcurrencyLimit::redis(%s, "php:fleet", 2, 10.0)); $ok = 0; '
                . 'for ($i = 0; $i < 10; $i++) { '
                . '$body = Recuo\retry(static fn () => file_get_contents(%s . "/items/$i"), gate: $gate); '
                . '$ok += (int) is_string($body); } echo "$ok ok";',
                var_export(self::url(), true),
                var_export($api, true),
            );
            $children = array_map(static fn (): array => self::start([PHP_BINARY, '-n', '-d', 'extension=' . RECUO_EXTENSION, '-r', $code]), range(1, 4));
            $this->assertSame(array_fill(0, 4, '10 ok'), array_map(fn (array $child): string => $this->finish($child), $children));
            $served = HttpServers::stats($api);
        } finally {
            HttpServers::stop($serve);
        }
        $this->assertSame(40, $served['ok']);
        $this->assertSame(2, $served['max_in_flight'], json_encode($served, JSON_THROW_ON_ERROR));
    }

    public function testALostServerIsASharedFileErrorInTheLoops(): void
    {
        $own = RedisServer::start();
        try {
            $limit = ConcurrencyLimit::redis($own->url(), 'php:lost', 2, 5.0);
            $budget = RetryBudget::redis($own->url(), 'php:lost-budget');
            $held = $limit->tryAcquire();
            $this->assertInstanceOf(Permit::class, $held);
            $gate = new Gate(limit: $limit);
        } finally {
            $own->stop();
        }
        $sent = 0;
        $send = static function () use (&$sent): string {
            $sent++;
            return 'sent';
        };
        $started = hrtime(true);
        foreach ([
            'Recuo\ConcurrencyLimit::tryAcquire' => static fn () => $limit->tryAcquire(),
            'Recuo\ConcurrencyLimit::acquire' => static fn () => $limit->acquire(1.0),
            'Recuo\Permit::renew' => static fn () => $held->renew(),
            'Recuo\retry' => static fn () => \Recuo\retry($send, gate: $gate),
            'Recuo\comRetry' => static fn () => \Recuo\comRetry($send, gate: $gate),
            'Recuo\runBatch' => static fn () => \Recuo\runBatch([$send], gate: $gate),
            'Recuo\RetryBudget::recordRequest' => static fn () => $budget->recordRequest(),
            'Recuo\RetryBudget::tryWithdraw' => static fn () => $budget->tryWithdraw(),
            'Recuo\RetryBudget::counts' => static fn () => $budget->counts(),
        ] as $function => $call) {
            $e = $this->thrownBy($call);
            $this->assertInstanceOf(SharedFileError::class, $e, $function);
            $this->assertStringStartsWith("$function(): shared state: Redis at ", $e->getMessage(), $function);
        }
        $this->assertSame(0, $sent, 'nothing went without the server\'s word');
        $held->release(); // the place comes back with its lease: nothing to throw
        $this->assertLessThan(10.0, (hrtime(true) - $started) / 1e9);
    }

    /**
     * @param list<string> $command
     * @return array{resource, array<int, resource>}
     */
    private static function start(array $command): array
    {
        $pipes = [];
        $process = proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        if (!is_resource($process)) {
            throw new \RuntimeException('cannot start ' . implode(' ', $command));
        }
        return [$process, $pipes];
    }

    /** @param array{resource, array<int, resource>} $child its output, once it exited 0 with nothing on stderr */
    private function finish(array $child): string
    {
        [$process, $pipes] = $child;
        $out = (string) stream_get_contents($pipes[1]);
        $err = (string) stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        $this->assertSame(0, proc_close($process), $err);
        $this->assertSame('', $err);
        return $out;
    }
}
