<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;

/**
 * The extension's value classes behave as PHP's own: typed `readonly` properties (what the
 * stub says; ApiTest compares every one), an `Error` in PHP's words on a write, no dynamic
 * properties, and reads, var_dump and clones unchanged.
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
        ];
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
}
