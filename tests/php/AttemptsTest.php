<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Attempts;
use Recuo\Decision;
use Recuo\Policy;
use Recuo\Verdict;

use function Recuo\classify;

/**
 * Recuo\Attempts, the sans-IO state machine, beyond the shared scenarios (VectorsTest runs
 * every one of scenarios.json through it).
 */
final class AttemptsTest extends TestCase
{
    use Throws;

    /** @return list<mixed> */
    private static function seen(Decision $d): array
    {
        return [$d->kind, $d->delayMs, $d->nextAttempt, $d->reason, $d->retryAtMs];
    }

    /** A client with its own clock: 503, 503, 200, driven the way an event loop would. */
    public function testDrivingALoopByHand(): void
    {
        $attempts = new Attempts(new Policy(baseMs: 100, capMs: 1000, jitter: 'none'));
        $this->assertSame([0, null, 0, 0, []], [$attempts->attempts, $attempts->report()->reason, $attempts->report()->attempts, $attempts->report()->elapsedMs, $attempts->report()->delaysMs]);
        $now = 1000;
        $log = [];
        foreach ([503, 503, 200] as $status) {
            $this->assertNull($attempts->begin($now));
            $now += 10; // the request takes 10 ms
            $decision = $attempts->decide(classify($status, nowMs: 0), $now);
            $log[] = self::seen($decision);
            if ($decision->kind === 'retry') {
                $now += $decision->delayMs;
            }
        }
        $this->assertSame(
            [['retry', 100, 1, null, null], ['retry', 200, 2, null, null], ['done', null, null, null, null]],
            $log,
        );
        $report = $attempts->report();
        $this->assertSame([3, null, 330, [100, 200]], [$report->attempts, $report->reason, $report->elapsedMs, $report->delaysMs]);
        $this->assertSame(3, $attempts->attempts);
    }

    public function testBeginGivesUpWhenTheAttemptsAreSpent(): void
    {
        $attempts = new Attempts(new Policy(maxAttempts: 1));
        $this->assertNull($attempts->begin(0));
        $this->assertSame(['give_up', null, null, 'attempts_exhausted', null], self::seen($attempts->decide(Verdict::retry(), 5)));
        $this->assertSame(['give_up', null, null, 'attempts_exhausted', null], self::seen($attempts->begin(10)));
        $this->assertSame('attempts_exhausted', $attempts->report()->reason);
    }

    public function testCancellation(): void
    {
        $attempts = new Attempts(Policy::guideA());
        $attempts->cancel();
        $this->assertSame(['give_up', null, null, 'cancelled', null], self::seen($attempts->begin(0)));
        $this->assertSame(0, $attempts->attempts);

        $attempts = new Attempts(Policy::guideA());
        $this->assertNull($attempts->begin(0));
        $attempts->cancel();
        $this->assertSame('cancelled', $attempts->decide(classify(503, nowMs: 0), 1)->reason);
        // A success is a success, cancelled or not.
        $attempts = new Attempts(Policy::guideA());
        $this->assertNull($attempts->begin(0));
        $attempts->cancel();
        $this->assertSame('done', $attempts->decide(Verdict::success(), 1)->kind);
    }

    public function testServerWaitsSpreadAndTheInstantToComeBack(): void
    {
        // Guide B: 30 s deadline. Retry-After 3 s with the default spread min(window(0), 1 s).
        $attempts = new Attempts(Policy::guideB(), 1);
        $this->assertNull($attempts->begin(0));
        $d = $attempts->decide(classify(429, headers: ['Retry-After' => '3'], nowMs: 0), 200);
        $this->assertSame('retry', $d->kind);
        $this->assertThat($d->delayMs, $this->logicalAnd($this->greaterThanOrEqual(3000), $this->lessThanOrEqual(4000)));

        // A minute-long wait does not fit in 30 s: give up, and say when to come back.
        $this->assertNull($attempts->begin(200 + $d->delayMs));
        $d = $attempts->decide(classify(429, headers: ['Retry-After' => '60'], nowMs: 0), 5000);
        $this->assertSame(['give_up', null, null, 'wait_exceeds_deadline', 65000], self::seen($d));

        // A wait too long to count: no instant at all.
        $attempts = new Attempts(Policy::guideA());
        $this->assertNull($attempts->begin(0));
        $d = $attempts->decide(classify(503, headers: ['Retry-After' => '99999999999999999'], nowMs: 0), 1);
        $this->assertSame(['give_up', null, null, 'wait_exceeds_deadline', null], self::seen($d));
    }

    public function testPermanentOutcomes(): void
    {
        foreach ([classify(404), classify(error: 'tls'), classify(error: 'reset', method: 'POST'), Verdict::giveUp()] as $verdict) {
            $attempts = new Attempts(Policy::guideA());
            $this->assertNull($attempts->begin(0));
            $this->assertSame(['give_up', null, null, 'permanent', null], self::seen($attempts->decide($verdict, 1)));
        }
    }

    public function testTheIdempotencyKey(): void
    {
        $attempts = new Attempts(Policy::guideA());
        $key = $attempts->idempotencyKey();
        $this->assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $key);
        $this->assertNull($attempts->begin(0));
        $this->assertSame('retry', $attempts->decide(classify(503, nowMs: 0), 1)->kind);
        $this->assertSame($key, $attempts->idempotencyKey());
        $this->assertNotSame($key, (new Attempts(Policy::guideA()))->idempotencyKey());
        // A seed fixes the jitter, never the key (SPEC §5).
        $this->assertNotSame((new Attempts(Policy::guideA(), 3))->idempotencyKey(), (new Attempts(Policy::guideA(), 3))->idempotencyKey());
    }

    public function testTheSeedFixesTheJitter(): void
    {
        $delays = static function (int $seed): array {
            $attempts = new Attempts(new Policy(maxAttempts: 6, jitter: 'decorrelated'), $seed);
            $out = [];
            for ($i = 0, $now = 0; $i < 5; $i++) {
                $attempts->begin($now);
                $d = $attempts->decide(Verdict::retry(), $now);
                $out[] = $d->delayMs;
                $now += $d->delayMs;
            }
            return $out;
        };
        $this->assertSame($delays(42), $delays(42));
        $this->assertNotSame($delays(42), $delays(43));
        foreach ($delays(42) as $ms) {
            $this->assertLessThanOrEqual(5000, $ms);
        }
    }

    /** The machine keeps its own copy of the policy. */
    public function testThePolicyIsCopied(): void
    {
        $policy = new Policy(maxAttempts: 2);
        $attempts = new Attempts($policy);
        unset($policy);
        $this->assertNull($attempts->begin(0));
        $this->assertSame('retry', $attempts->decide(Verdict::retry(), 0)->kind);
        $this->assertNull($attempts->begin(0));
        $this->assertSame('attempts_exhausted', $attempts->decide(Verdict::retry(), 0)->reason);
    }

    /** @return array<string, array{\Closure(): mixed, class-string<\Throwable>, string}> */
    public static function badInput(): array
    {
        $make = static fn (): Attempts => new Attempts(Policy::guideA());
        return [
            'negative seed' => [static fn () => new Attempts(Policy::guideA(), -1), \ValueError::class, 'Recuo\Attempts::__construct(): Argument #2 ($seed) must be null or greater than or equal to 0'],
            'negative begin' => [static fn () => $make()->begin(-1), \ValueError::class, 'Recuo\Attempts::begin(): Argument #1 ($nowMs) must be greater than or equal to 0'],
            'negative decide' => [static fn () => $make()->decide(Verdict::retry(), PHP_INT_MIN), \ValueError::class, 'Recuo\Attempts::decide(): Argument #2 ($nowMs) must be greater than or equal to 0'],
            'no policy' => [static fn () => new Attempts(), \ArgumentCountError::class, ''],
            'policy null' => [static fn () => new Attempts(null), \TypeError::class, 'policy'],
            'policy an array' => [static fn () => new Attempts([]), \TypeError::class, 'policy'],
            'verdict a bool' => [static fn () => $make()->decide(true, 0), \TypeError::class, 'verdict'],
            'verdict a policy' => [static fn () => $make()->decide(Policy::guideA(), 0), \TypeError::class, 'verdict'],
            'now a float' => [static fn () => $make()->begin(1.5), \TypeError::class, 'nowMs'],
            'now a string' => [static fn () => $make()->begin('0'), \TypeError::class, 'nowMs'],
        ];
    }

    /**
     * @dataProvider badInput
     * @param class-string<\Throwable> $class
     */
    public function testBadInput(\Closure $call, string $class, string $message): void
    {
        $e = $this->thrownBy($call);
        $this->assertSame($class, get_class($e));
        $this->assertStringContainsString($message, $e->getMessage());
    }

    public function testTheValuesAreNotMadeWithNew(): void
    {
        foreach ([Decision::class, \Recuo\Report::class, \Recuo\Attempt::class] as $class) {
            $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static fn () => new $class()), $class);
            $this->assertTrue((new \ReflectionClass($class))->isFinal(), $class);
        }
        $this->assertTrue((new \ReflectionClass(Attempts::class))->isFinal());
    }
}
