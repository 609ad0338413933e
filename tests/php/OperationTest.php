<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Operation;
use Recuo\Policy;
use Recuo\Verdict;

use function Recuo\classify;

/**
 * Recuo\Operation driven by hand, one judged attempt at a time, beyond the shared scenarios
 * (VectorsTest runs every one of scenarios.json this way, LoopsTest every one of loops.json
 * event by event).
 */
final class OperationTest extends TestCase
{
    use Throws;

    /** A client with its own clock: 503, 503, 200, driven the way an event loop would. */
    public function testDrivingALoopByHand(): void
    {
        $op = new Operation(new Policy(baseMs: 100, capMs: 1000, jitter: 'none'));
        $report = $op->report();
        $this->assertSame([0, null, 0, []], [$report->attempts, $report->reason, $report->elapsedMs, $report->delaysMs]);
        $now = 1000;
        $log = [];
        foreach ([503, 503, 200] as $i => $status) {
            $this->assertSame('call', ($i === 0 ? $op->start($now, 0) : $op->slept($now))->kind);
            $now += 10; // the request takes 10 ms
            $step = ByHand::decide($op, classify($status, nowMs: 0), $now);
            $log[] = ByHand::decision($step);
            if ($step->kind === 'sleep') {
                $now += $step->delayMs;
            }
        }
        $this->assertSame(
            [['retry', 100, 1, null, null], ['retry', 200, 2, null, null], ['done', null, null, null, null]],
            $log,
        );
        $report = $op->report();
        $this->assertSame([3, null, 330, [100, 200]], [$report->attempts, $report->reason, $report->elapsedMs, $report->delaysMs]);
    }

    public function testItGivesUpWhenTheAttemptsAreSpent(): void
    {
        $op = new Operation(new Policy(maxAttempts: 1));
        $this->assertSame('call', $op->start(0, 0)->kind);
        $this->assertSame(['give_up', null, null, 'attempts_exhausted', null], ByHand::decision(ByHand::decide($op, Verdict::retry(), 5)));
        $this->assertSame('attempts_exhausted', $op->report()->reason);
    }

    public function testCancellation(): void
    {
        $op = new Operation(Policy::guideA());
        $op->cancel();
        $this->assertSame(['give_up', null, null, 'cancelled', null], ByHand::decision($op->start(0, 0)));
        $this->assertSame(0, $op->report()->attempts);

        $op = new Operation(Policy::guideA());
        $this->assertSame('call', $op->start(0, 0)->kind);
        $op->cancel();
        $this->assertSame('cancelled', ByHand::decide($op, classify(503, nowMs: 0), 1)->reason);
        // A success is a success, cancelled or not.
        $op = new Operation(Policy::guideA());
        $this->assertSame('call', $op->start(0, 0)->kind);
        $op->cancel();
        $this->assertSame('done', ByHand::decide($op, Verdict::success(), 1)->kind);
    }

    public function testServerWaitsSpreadAndTheInstantToComeBack(): void
    {
        // Guide B: 30 s deadline. Retry-After 3 s with the default spread min(window(0), 1 s).
        $op = new Operation(Policy::guideB(), 1);
        $op->start(0, 0);
        $step = ByHand::decide($op, classify(429, headers: ['Retry-After' => '3'], nowMs: 0), 200);
        $this->assertSame('sleep', $step->kind);
        $this->assertThat($step->delayMs, $this->logicalAnd($this->greaterThanOrEqual(3000), $this->lessThanOrEqual(4000)));

        // A minute-long wait does not fit in 30 s: give up, and say when to come back.
        $this->assertSame('call', $op->slept(200 + $step->delayMs)->kind);
        $step = ByHand::decide($op, classify(429, headers: ['Retry-After' => '60'], nowMs: 0), 5000);
        $this->assertSame(['give_up', null, null, 'wait_exceeds_deadline', 65000], ByHand::decision($step));

        // A wait too long to count: no instant at all.
        $op = new Operation(Policy::guideA());
        $op->start(0, 0);
        $step = ByHand::decide($op, classify(503, headers: ['Retry-After' => '99999999999999999'], nowMs: 0), 1);
        $this->assertSame(['give_up', null, null, 'wait_exceeds_deadline', null], ByHand::decision($step));
    }

    public function testPermanentOutcomes(): void
    {
        foreach ([classify(404), classify(error: 'tls'), classify(error: 'reset', method: 'POST'), Verdict::giveUp()] as $verdict) {
            $op = new Operation(Policy::guideA());
            $op->start(0, 0);
            $this->assertSame(['give_up', null, null, 'permanent', null], ByHand::decision(ByHand::decide($op, $verdict, 1)));
        }
    }

    /** The key made before the first attempt is every attempt's (LoopsTest: never from the seed). */
    public function testTheKeyOutlivesARetry(): void
    {
        $op = new Operation(Policy::guideA());
        $key = $op->key();
        $op->start(0, 0);
        $this->assertSame('sleep', ByHand::decide($op, classify(503, nowMs: 0), 1)->kind);
        $this->assertSame($key, $op->key());
    }

    public function testTheSeedFixesTheJitter(): void
    {
        $delays = static function (int $seed): array {
            $op = new Operation(new Policy(maxAttempts: 6, jitter: 'decorrelated'), $seed);
            $out = [];
            for ($i = 0, $now = 0; $i < 5; $i++) {
                $i === 0 ? $op->start($now, 0) : $op->slept($now);
                $step = ByHand::decide($op, Verdict::retry(), $now);
                $out[] = $step->delayMs;
                $now += $step->delayMs;
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
        $op = new Operation($policy);
        unset($policy);
        $op->start(0, 0);
        $this->assertSame('sleep', ByHand::decide($op, Verdict::retry(), 0)->kind);
        $this->assertSame('call', $op->slept(0)->kind);
        $this->assertSame('attempts_exhausted', ByHand::decide($op, Verdict::retry(), 0)->reason);
    }

    /** @return array<string, array{\Closure(): mixed, class-string<\Throwable>, string}> */
    public static function badInput(): array
    {
        $make = static fn (): Operation => new Operation(Policy::guideA());
        return [
            'negative seed' => [static fn () => new Operation(Policy::guideA(), -1), \ValueError::class, 'Recuo\Operation::__construct(): Argument #2 ($seed) must be null or greater than or equal to 0'],
            'negative slept' => [static fn () => $make()->slept(-1), \ValueError::class, 'Recuo\Operation::slept(): Argument #1 ($nowMs) must be greater than or equal to 0'],
            'negative judged' => [static fn () => $make()->judged(PHP_INT_MIN, Verdict::retry()), \ValueError::class, 'Recuo\Operation::judged(): Argument #1 ($nowMs) must be greater than or equal to 0'],
            // The give-up reasons as the core lists them, in every language.
            'unknown stop reason' => [static fn () => $make()->stopQueue('success'), \ValueError::class, 'Recuo\Operation::stopQueue(): Argument #1 ($reason) must be "permanent", "attempts_exhausted", "wait_exceeds_deadline", "budget_exhausted", "cancelled" or "queue_stopped"'],
            'no policy' => [static fn () => new Operation(), \ArgumentCountError::class, ''],
            'policy null' => [static fn () => new Operation(null), \TypeError::class, 'policy'],
            'policy an array' => [static fn () => new Operation([]), \TypeError::class, 'policy'],
            'verdict a bool' => [static fn () => $make()->judged(0, true), \TypeError::class, 'verdict'],
            'verdict a policy' => [static fn () => $make()->judged(0, Policy::guideA()), \TypeError::class, 'verdict'],
            'now a float' => [static fn () => $make()->start(1.5, 0), \TypeError::class, 'nowMs'],
            'now a string' => [static fn () => $make()->slept('0'), \TypeError::class, 'nowMs'],
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
        foreach ([\Recuo\Step::class, \Recuo\Report::class, \Recuo\Attempt::class] as $class) {
            $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static fn () => new $class()), $class);
            $this->assertTrue((new \ReflectionClass($class))->isFinal(), $class);
        }
        $this->assertTrue((new \ReflectionClass(Operation::class))->isFinal());
    }
}
