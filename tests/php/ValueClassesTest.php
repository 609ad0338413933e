<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;

/**
 * The extension's value classes behave as PHP's own: typed `readonly` properties (what the
 * stub says; ApiTest compares every one), an `Error` in PHP's words on a write, no dynamic
 * properties, and reads, var_dump and clones unchanged; a wrong argument type is a `TypeError`
 * in PHP's own words; the classes only recuo makes have a private constructor.
 */
final class ValueClassesTest extends TestCase
{
    /** @return array<string, array{object, string}> one object of each kind, with a property */
    public static function values(): array
    {
        $op = new \Recuo\Operation(\Recuo\Policy::guideB());
        return [
            'Policy' => [\Recuo\Policy::guideB(), 'maxAttempts'],
            'Step' => [$op->start(0, 0), 'kind'],
            'Report' => [$op->report(), 'attempts'],
            'Verdict' => [\Recuo\classify(429), 'verdict'],
            'RetryAfter' => [\Recuo\parseRetryAfter('5'), 'waitMs'],
            'Regulator' => [new \Recuo\Regulator(10.0), 'rate'],
            'Stats' => [new \Recuo\Stats(), 'initial'],
            'Gate' => [new \Recuo\Gate(), 'regulator'],
            'Plan' => [\Recuo\plan(600, '120/min', '90/min', 2.0), 'intervalMs'],
            'WhoAnswered' => [\Recuo\whoAnswered(['Server' => 'cloudflare', 'CF-Ray' => '1']), 'origin'],
        ];
    }

    /**
     * The classes declared from the core's declarations are PHP readonly classes: they
     * serialize and read back whole, and one that is not whole is refused where recuo reads it.
     */
    public function testDeclaredClassesSerializeAndAreReadBackWhole(): void
    {
        $op = new \Recuo\Operation(\Recuo\Policy::guideB());
        $report = $op->report();
        $back = unserialize(serialize($report));
        $this->assertEquals($report, $back);
        $this->assertSame(\Recuo\BatchQueue::endOf($report), \Recuo\BatchQueue::endOf($back));
        $plan = \Recuo\plan(600, '120/min', '90/min', 2.0);
        $this->assertEquals($plan, unserialize(serialize($plan)));
        $this->assertSame(667, $plan->intervalMs);

        // A report whose list holds a list (here one that holds itself through a reference,
        // as unserialize() can make) is refused, never walked.
        foreach (['a:1:{i:0;a:1:{i:0;R:5;}}', 'a:1:{i:0;a:1:{i:0;i:1;}}'] as $delays) {
            $crafted = preg_replace('/s:8:"delaysMs";a:0:\{\}/', 's:8:"delaysMs";' . $delays, serialize($report));
            try {
                \Recuo\BatchQueue::endOf(unserialize($crafted));
                $this->fail('a list inside a list was read');
            } catch (\ValueError $e) {
                $this->assertStringContainsString('a list inside a list is not a plain value', $e->getMessage());
            }
        }

        $empty = (new \ReflectionClass(\Recuo\Report::class))->newInstanceWithoutConstructor();
        $this->expectException(\ValueError::class);
        $this->expectExceptionMessage('is not initialized');
        \Recuo\BatchQueue::endOf($empty);
    }

    /** @dataProvider values */
    public function testAPropertyIsTypedAndReadOnly(object $value, string $name): void
    {
        $property = new \ReflectionProperty($value, $name);
        $this->assertTrue($property->isReadOnly());
        $this->assertTrue($property->hasType());
        $before = $value->$name;
        try {
            $value->$name = $before;
            $this->fail('written');
        } catch (\Error $e) {
            $this->assertSame(\Error::class, get_class($e));
            $this->assertSame(sprintf('Cannot modify readonly property %s::$%s', get_class($value), $name), $e->getMessage());
        }
        $this->assertSame($before, $value->$name);
    }

    /** @dataProvider values */
    public function testNoDynamicProperty(object $value, string $name): void
    {
        try {
            $value->notAProperty = 1;
            $this->fail('a dynamic property was made');
        } catch (\Error $e) {
            $this->assertSame(sprintf('Cannot create dynamic property %s::$notAProperty', get_class($value)), $e->getMessage());
        }
        $this->assertFalse(isset($value->notAProperty));
    }

    public function testReadsDumpsAndClonesAreUnchanged(): void
    {
        $policy = new \Recuo\Policy(maxAttempts: 3, deadlineMs: 1000);
        $this->assertSame(3, $policy->maxAttempts);
        $this->assertSame(1000, $policy->deadlineMs);
        $this->assertNull($policy->spreadMs);
        $this->assertTrue(isset($policy->maxAttempts));
        $this->assertFalse(isset($policy->spreadMs));
        $this->assertSame(3, (clone $policy)->maxAttempts);
        $this->assertStringContainsString('["maxAttempts"]=>' . "\n  int(3)", (function () use ($policy): string {
            ob_start();
            var_dump($policy);
            return (string) ob_get_clean();
        })());
        $this->assertSame('?Recuo\Report', (string) (new \ReflectionProperty(\Recuo\Step::class, 'report'))->getType());
    }

    /** @return array<string, array{class-string}> the classes whose objects only recuo makes */
    public static function madeByRecuo(): array
    {
        $classes = [
            \Recuo\Attempt::class, \Recuo\BatchReport::class, \Recuo\BatchResult::class,
            \Recuo\LoopPool::class, \Recuo\Next::class, \Recuo\Permit::class, \Recuo\Plan::class, \Recuo\Record::class,
            \Recuo\Report::class, \Recuo\RetryAfter::class, \Recuo\Step::class, \Recuo\Verdict::class, \Recuo\WhoAnswered::class,
        ];
        return array_combine($classes, array_map(static fn (string $class): array => [$class], $classes));
    }

    /**
     * Their constructor is private, as the stub says: `new` is refused in PHP's own words.
     *
     * @dataProvider madeByRecuo
     * @param class-string $class
     */
    public function testNewIsRefused(string $class): void
    {
        $constructor = new \ReflectionMethod($class, '__construct');
        $this->assertTrue($constructor->isPrivate());
        $this->assertSame(0, $constructor->getNumberOfParameters());
        try {
            new $class();
            $this->fail('constructed');
        } catch (\Error $e) {
            $this->assertSame(\Error::class, get_class($e));
            $this->assertSame(sprintf('Call to private %s::__construct() from scope %s', $class, self::class), $e->getMessage());
        }
    }

    /** Reflection reaches a private constructor: it refuses, and the object stays as it was. */
    public function testTheConstructorRefusesEvenThroughReflection(): void
    {
        $verdict = \Recuo\classify(429);
        try {
            (new \ReflectionMethod($verdict, '__construct'))->invoke($verdict);
            $this->fail('constructed');
        } catch (\Error $e) {
            $this->assertSame(\Error::class, get_class($e));
            $this->assertSame('Direct instantiation of Recuo\Verdict is not allowed', $e->getMessage());
        }
        $this->assertSame(['retry', 'rate_limited'], [$verdict->verdict, $verdict->reason]);
    }

    /** @return array<string, array{callable, string}> */
    public static function wrongTypes(): array
    {
        return [
            'a function' => [
                static fn () => \Recuo\comRetry(static fn () => 1, 'five'),
                'Recuo\comRetry(): Argument #2 ($tentativas) must be of type int, string given',
            ],
            'a named argument' => [
                static fn () => \Recuo\comRetry(static fn () => 1, baseMs: []),
                'Recuo\comRetry(): Argument #3 ($baseMs) must be of type int, array given',
            ],
            'a callable' => [
                static fn () => \Recuo\comRetry('no such function'),
                'Recuo\comRetry(): Argument #1 ($tarefa) must be of type callable, string given',
            ],
            'a constructor' => [
                static fn () => new \Recuo\Policy(maxAttempts: new \stdClass()),
                'Recuo\Policy::__construct(): Argument #1 ($maxAttempts) must be of type int, stdClass given',
            ],
            'a union type' => [
                static fn () => new \Recuo\Regulator([]),
                'Recuo\Regulator::__construct(): Argument #1 ($rate) must be of type string|float, array given',
            ],
            'a method' => [
                static fn () => (new \Recuo\Operation(\Recuo\Policy::guideA()))->start('now', 0),
                'Recuo\Operation::start(): Argument #1 ($nowMs) must be of type int, string given',
            ],
            'a class type' => [
                static fn () => new \Recuo\Operation(\Recuo\Policy::guideA(), gate: 'a gate'),
                'Recuo\Operation::__construct(): Argument #3 ($gate) must be of type ?Recuo\Gate, string given',
            ],
        ];
    }

    /** @dataProvider wrongTypes */
    public function testAWrongTypeIsSaidAsPhpSaysIt(callable $call, string $message): void
    {
        try {
            $call();
            $this->fail('accepted');
        } catch (\TypeError $e) {
            $this->assertSame(\TypeError::class, get_class($e));
            $this->assertSame($message, $e->getMessage());
        }
    }

    public function testOtherTypeErrorsAreLeftAlone(): void
    {
        $e = new \TypeError('Invalid value given for argument `x`.');
        $this->assertSame('Invalid value given for argument `x`.', $e->getMessage());
        try {
            throw $e;
        } catch (\TypeError $caught) {
            $this->assertSame('Invalid value given for argument `x`.', $caught->getMessage());
        }
    }
}
