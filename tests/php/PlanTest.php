<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Exception\PlanError;
use Recuo\Plan;

use function Recuo\plan;

/** Recuo\plan: the planning arithmetic of SPEC §8, the core's. */
final class PlanTest extends TestCase
{
    use Throws;

    /** @return array<string, array{string|float|int, string|float|int}> */
    public static function guideBRates(): array
    {
        return [
            'per minute' => ['120/min', '90/min'],
            'long names' => ['120/minute', '90/minute'],
            'per second' => ['2/s', '1.5/s'],
            'floats per second' => [2.0, 1.5],
            'an int per second' => [2, 1.5],
            'bare numbers' => ['2', '1.5'],
            'per hour' => ['7200/h', '5400/hour'],
            'spaces and case' => [' 120 / MIN ', '90/Min'],
        ];
    }

    /**
     * Guide B: 120/min allowance, 90/min target, 600 requests, 2 s each → 667 ms, 400 s, 3 in
     * flight, however the rates are written.
     *
     * @dataProvider guideBRates
     */
    public function testGuideBsExampleExactly(string|float|int $allowance, string|float|int $target): void
    {
        $plan = plan(600, $allowance, $target, 2.0);
        $this->assertInstanceOf(Plan::class, $plan);
        $this->assertSame(667, $plan->intervalMs);
        $this->assertSame(400.0, $plan->durationS);
        $this->assertSame(3.0, $plan->inFlight);
        $this->assertSame(0.0, $plan->retries);
        $this->assertSame([], $plan->warnings);
        // An int latency is a float, as PHP reads it.
        $this->assertEquals($plan, plan(600, $allowance, $target, 2));
    }

    public function testRetriesLengthenTheBatch(): void
    {
        $plan = plan(600, '120/min', '90/min', 2.0, 0.2);
        $this->assertSame(150.0, $plan->retries);
        $this->assertSame(500.0, $plan->durationS);
        $this->assertSame(667, $plan->intervalMs);
        $this->assertSame(0.0, plan(0, '1/s', '1/s', 0.0)->durationS);
    }

    public function testWarnings(): void
    {
        $this->assertCount(1, plan(10, '2/s', '2/s', 0.1)->warnings);
        $this->assertStringContainsString('equals the allowance', plan(10, '2/s', '2/s', 0.1)->warnings[0]);
        $this->assertStringContainsString('95% of the allowance', plan(10, '100/s', '95/s', 0.1)->warnings[0]);
        $many = plan(10, '1000/s', '500/s', 1.0);
        $this->assertSame(500.0, $many->inFlight);
        $this->assertStringContainsString('in flight', $many->warnings[0]);
    }

    public function testATargetAboveTheAllowanceIsAPlanErrorWithTheCoresMessage(): void
    {
        try {
            plan(600, '120/min', '150/min', 2.0);
            $this->fail('no error');
        } catch (PlanError $e) {
            $this->assertInstanceOf(\ValueError::class, $e);
            $this->assertSame(
                'Recuo\plan(): the target (150/min) is above the allowance (120/min): the server would '
                . 'throttle the batch; aim at or below the allowance',
                $e->getMessage(),
            );
            $this->assertSame(0, $e->getCode());
        }
    }

    public function testAPlanIsAReadOnlyFinalClassMadeByPlanOnly(): void
    {
        $plan = plan(600, '120/min', '90/min', 2.0);
        $this->assertSame(
            ['intervalMs' => 667, 'durationS' => 400.0, 'retries' => 0.0, 'inFlight' => 3.0, 'warnings' => []],
            get_object_vars($plan),
        );
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static function () use ($plan): void {
            $plan->intervalMs = 1;
        }));
        $this->assertSame(667, $plan->intervalMs);
        $this->assertTrue((new \ReflectionClass(Plan::class))->isFinal());
        $this->assertInstanceOf(\Error::class, $this->thrownBy(static fn () => new Plan()));
    }

    /** @return array<string, array{\Closure, class-string<\Throwable>, string}> */
    public static function badInput(): array
    {
        return [
            'a bad fraction' => [static fn () => plan(1, '1/s', '1/s', 1.0, 1.0), PlanError::class, 'retry fraction must be at least 0 and below 1, not 1'],
            'a negative fraction' => [static fn () => plan(1, '1/s', '1/s', 1.0, -0.1), PlanError::class, 'retry fraction'],
            'a NaN latency' => [static fn () => plan(1, '1/s', '1/s', NAN), PlanError::class, 'latency must be a number of seconds'],
            'a negative latency' => [static fn () => plan(1, '1/s', '1/s', -1.0), PlanError::class, 'latency'],
            'an infinite latency' => [static fn () => plan(1, '1/s', '1/s', INF), PlanError::class, 'latency'],
            'negative requests' => [static fn () => plan(-1, '1/s', '1/s', 1.0), \ValueError::class, 'Argument #1 ($requests) must be greater than or equal to 0'],
            'a zero rate' => [static fn () => plan(1, '0/min', '1/s', 1.0), \ValueError::class, 'Argument #2 ($allowance) is not valid: "0/min" is not a rate'],
            'a word' => [static fn () => plan(1, '1/s', 'fast', 1.0), \ValueError::class, 'Argument #3 ($target) is not valid: "fast" is not a rate: write it as N/s, N/min, N/h or N/day'],
            'an unknown unit' => [static fn () => plan(1, '5/fortnight', '1/s', 1.0), \ValueError::class, 'Argument #2 ($allowance)'],
            'an exponent' => [static fn () => plan(1, '1e3/s', '1/s', 1.0), \ValueError::class, 'not a rate'],
            'an empty string' => [static fn () => plan(1, '', '1/s', 1.0), \ValueError::class, 'not a rate'],
            'a negative number' => [static fn () => plan(1, -2.0, '1/s', 1.0), \ValueError::class, 'a rate must be a finite number above zero, not -2'],
            'zero' => [static fn () => plan(1, 0, '1/s', 1.0), \ValueError::class, 'above zero, not 0'],
            'NaN' => [static fn () => plan(1, NAN, '1/s', 1.0), \ValueError::class, 'not NaN'],
            'INF' => [static fn () => plan(1, INF, '1/s', 1.0), \ValueError::class, 'not inf'],
            'a NUL byte' => [static fn () => plan(1, "1/s\0", '1/s', 1.0), \ValueError::class, 'not a rate'],
            'not UTF-8' => [static fn () => plan(1, "\xff/s", '1/s', 1.0), \ValueError::class, 'not a rate'],
            'an array' => [static fn () => plan(1, [], '1/s', 1.0), \TypeError::class, 'allowance'],
            'null' => [static fn () => plan(1, null, '1/s', 1.0), \TypeError::class, 'allowance'],
            'a bool' => [static fn () => plan(1, '1/s', true, 1.0), \TypeError::class, 'target'],
            'a string latency' => [static fn () => plan(1, '1/s', '1/s', '2'), \TypeError::class, 'latencyS'],
            'a float count' => [static fn () => plan(1.5, '1/s', '1/s', 1.0), \TypeError::class, 'requests'],
        ];
    }

    /**
     * @dataProvider badInput
     * @param class-string<\Throwable> $class
     */
    public function testBadInput(\Closure $call, string $class, string $message): void
    {
        try {
            $call();
            $this->fail('nothing was thrown');
        } catch (\Throwable $e) {
            $this->assertSame($class, get_class($e), $e->getMessage());
            $this->assertStringContainsString($message, $e->getMessage());
        }
    }
}
