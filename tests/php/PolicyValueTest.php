<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Exception\ConfigError;
use Recuo\Policy;

/**
 * A policy as one plain value: Policy::fromArray() and toArray() on the shared vectors
 * (tests/vectors/policies.json), json_encode() and serialize() round trips.
 */
final class PolicyValueTest extends TestCase
{
    use Throws;

    private const FILE = 'policies.json';

    /** @return array<string, array{array<string, mixed>}> */
    public static function validCases(): array
    {
        return Vectors::cases(self::FILE, 'valid', static fn (array $c): string => $c['name']);
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function invalidCases(): array
    {
        return Vectors::cases(self::FILE, 'invalid', static fn (array $c): string => $c['name']);
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function presets(): array
    {
        return Vectors::cases(self::FILE, 'presets', static fn (array $c): string => $c['name']);
    }

    /**
     * Each preset, made by its name in PHP's casing, writes its plain form.
     *
     * @dataProvider presets
     * @param array<string, mixed> $case
     */
    public function testEachPresetWritesItsPlainForm(array $case): void
    {
        $method = lcfirst(str_replace('_', '', ucwords($case['name'], '_')));
        $policy = Policy::$method();
        $this->assertInstanceOf(Policy::class, $policy);
        $this->assertSame($case['expect'], $policy->toArray());
    }

    /** The ConfigError constant named after `$e`'s code, in lower case: the core's name. */
    private static function errorName(\Throwable $e): string
    {
        $names = array_flip((new \ReflectionClass(ConfigError::class))->getConstants());
        return strtolower($names[$e->getCode()] ?? 'no constant for code ' . $e->getCode());
    }

    /**
     * The vector's `expect` as JSON text, empty maps as `{}`: the vector decoded without
     * `$associative`, so that its objects stay objects, and encoded again.
     */
    private static function expectJson(string $name): string
    {
        $text = (string) file_get_contents(RECUO_ROOT . '/tests/vectors/' . self::FILE);
        foreach (json_decode($text, false, 512, JSON_THROW_ON_ERROR)->valid as $case) {
            if ($case->name === $name) {
                return json_encode($case->expect, JSON_THROW_ON_ERROR);
            }
        }
        throw new \RuntimeException("no valid case named $name");
    }

    /**
     * @dataProvider validCases
     * @param array<string, mixed> $case
     */
    public function testAValidValueAnswersItsPlainForm(array $case): void
    {
        // json_decode($text, true) read `{}` as `[]`: "all defaults", and empty maps.
        $policy = Policy::fromArray($case['value']);
        $this->assertSame($case['expect'], $policy->toArray());
        // The plain form reads back as the same policy.
        $this->assertSame($case['expect'], Policy::fromArray($policy->toArray())->toArray());
    }

    /**
     * @dataProvider validCases
     * @param array<string, mixed> $case
     */
    public function testJsonEncodeGivesThePlainFormAndReadsBack(array $case): void
    {
        $policy = Policy::fromArray($case['value']);
        $json = json_encode($policy, JSON_THROW_ON_ERROR);
        $this->assertSame(self::expectJson($case['name']), $json);
        $back = Policy::fromArray(json_decode($json, true, 512, JSON_THROW_ON_ERROR));
        $this->assertSame($policy->toArray(), $back->toArray());
    }

    /**
     * @dataProvider validCases
     * @param array<string, mixed> $case
     */
    public function testSerializeRoundTrips(array $case): void
    {
        $policy = Policy::fromArray($case['value']);
        $back = unserialize(serialize($policy));
        $this->assertInstanceOf(Policy::class, $back);
        $this->assertNotSame($policy, $back);
        $this->assertEquals($policy, $back);
        $this->assertTrue($back == $policy);
        $this->assertSame($case['expect'], $back->toArray());
    }

    /**
     * @dataProvider invalidCases
     * @param array<string, mixed> $case
     */
    public function testAnInvalidValueIsRefusedByName(array $case): void
    {
        $e = $this->thrownBy(static fn () => Policy::fromArray($case['value']));
        $this->assertSame(ConfigError::class, $e::class, $e->getMessage());
        $this->assertSame($case['error'], self::errorName($e));
        $this->assertStringStartsWith('Recuo\Policy::fromArray(): Argument #1 ($value): ', $e->getMessage());
    }

    public function testTheNewCodesAreTheCores(): void
    {
        $this->assertSame(8, ConfigError::UNKNOWN_NAME);
        $this->assertSame(9, ConfigError::INVALID_VALUE);
        $e = $this->thrownBy(static fn () => Policy::fromArray(['jitter' => 'wild']));
        $this->assertSame(ConfigError::UNKNOWN_NAME, $e->getCode());
        $this->assertSame('Recuo\Policy::fromArray(): Argument #1 ($value): unknown jitter name', $e->getMessage());
    }

    /** serde's words follow the core's message, for humans. */
    public function testAnInvalidValueSaysWhatSerdeSaw(): void
    {
        $e = $this->thrownBy(static fn () => Policy::fromArray(['base_ms' => -1]));
        $this->assertSame(ConfigError::INVALID_VALUE, $e->getCode());
        $this->assertSame(
            'Recuo\Policy::fromArray(): Argument #1 ($value): not a policy value: an object of the known '
            . 'fields with the right types (invalid value: integer `-1`, expected u64)',
            $e->getMessage(),
        );
        $e = $this->thrownBy(static fn () => Policy::fromArray(['max_attempts' => 3.0]));
        $this->assertSame(ConfigError::INVALID_VALUE, $e->getCode());
        $this->assertStringEndsWith('(invalid type: floating point `3.0`, expected u32)', $e->getMessage());
    }

    /** What is not JSON data (an object, a string that is not UTF-8, a cycle) is not a policy value. */
    public function testWhatIsNotDataIsRefused(): void
    {
        $prefix = 'Recuo\Policy::fromArray(): Argument #1 ($value): not a policy value: an object of the '
            . 'known fields with the right types ';
        $e = $this->thrownBy(static fn () => Policy::fromArray(['status_retry' => new \ArrayObject([418 => 'always'])]));
        $this->assertSame(ConfigError::INVALID_VALUE, $e->getCode());
        $this->assertSame($prefix . '(a value of type ArrayObject at ["status_retry"])', $e->getMessage());
        $e = $this->thrownBy(static fn () => Policy::fromArray(['idempotent_methods' => ["P\xffST" => true]]));
        $this->assertSame($prefix . '(a key that is not UTF-8 at ["idempotent_methods"]["P' . "\u{FFFD}" . 'ST"])', $e->getMessage());
        $e = $this->thrownBy(static fn () => Policy::fromArray(['idempotency_header' => "X-\xff"]));
        $this->assertSame($prefix . '(a string that is not UTF-8 at ["idempotency_header"])', $e->getMessage());
        $cycle = [];
        $cycle['status_retry'] = &$cycle;
        $e = $this->thrownBy(static fn () => Policy::fromArray($cycle));
        $this->assertSame(ConfigError::INVALID_VALUE, $e->getCode());
        $this->assertStringContainsString('(arrays nested deeper than 8 levels at ["status_retry"]["status_retry"]', $e->getMessage());
    }

    /** Statuses are int keys in PHP (`[418 => ...]`); a string key says the same. */
    public function testStatusKeysMayBeIntsOrStrings(): void
    {
        foreach ([[418 => 'always'], ['418' => 'always']] as $rules) {
            $policy = Policy::fromArray(['status_retry' => $rules, 'idempotent_methods' => ['post' => true]]);
            $this->assertSame('always', $policy->statusRetry(418));
            $this->assertTrue($policy->isMethodIdempotent('POST'));
            $this->assertSame([418 => 'always'], $policy->toArray()['status_retry']);
            $this->assertSame(['POST' => true], $policy->toArray()['idempotent_methods']);
        }
    }

    /** The plain form of a policy built with named arguments and `with*` methods. */
    public function testToArrayWritesEverySetting(): void
    {
        $policy = (new Policy(maxAttempts: 3, baseMs: 100, capMs: 900, jitter: 'equal', deadlineMs: 5000))
            ->withStatusRetry(404, 'always')
            ->withTransportRetry('connect', 'never')
            ->withMethodIdempotent('patch')
            ->withQuota403IsRateLimit(false);
        $this->assertSame(
            [
                'max_attempts' => 3,
                'base_ms' => 100,
                'cap_ms' => 900,
                'jitter' => 'equal',
                'deadline_ms' => 5000,
                'spread_ms' => null,
                'idempotency_header' => 'Idempotency-Key',
                'use_date_header' => false,
                'server_honours_keys' => false,
                'quota_403_as_rate_limit' => false,
                'status_retry' => [404 => 'always'],
                'transport_retry' => ['connect' => 'never'],
                'idempotent_methods' => ['PATCH' => true],
            ],
            $policy->toArray(),
        );
        $this->assertSame($policy->toArray(), Policy::fromArray($policy->toArray())->toArray());
        $this->assertSame($policy->toArray(), unserialize(serialize($policy))->toArray());
        $this->assertSame(Policy::guideB()->toArray(), Policy::fromArray(['base_ms' => 1000, 'cap_ms' => 8000, 'deadline_ms' => 30000])->toArray());
    }

    /** json_encode() gives the plain form: empty maps as `{}`, non-empty ones as objects. */
    public function testJsonEncodeWritesMapsAsObjects(): void
    {
        $this->assertInstanceOf(\JsonSerializable::class, Policy::guideA());
        $this->assertSame(
            '{"max_attempts":5,"base_ms":200,"cap_ms":5000,"jitter":"full","deadline_ms":null,'
            . '"spread_ms":null,"idempotency_header":"Idempotency-Key","use_date_header":false,'
            . '"server_honours_keys":false,"quota_403_as_rate_limit":true,"status_retry":{},'
            . '"transport_retry":{},"idempotent_methods":{}}',
            json_encode(Policy::guideA(), JSON_THROW_ON_ERROR),
        );
        $json = json_encode(Policy::guideA()->withStatusRetry(418, 'always'), JSON_THROW_ON_ERROR);
        $this->assertStringContainsString('"status_retry":{"418":"always"},"transport_retry":{},', $json);
        $maps = Policy::guideA()->jsonSerialize();
        $this->assertEquals(new \stdClass(), $maps['transport_retry']);
    }

    /** unserialize() reads the data as fromArray() does: bad data throws the same errors. */
    public function testUnserializeChecksTheData(): void
    {
        $text = serialize(Policy::guideA());
        $this->assertStringStartsWith('O:12:"Recuo\Policy":13:{s:12:"max_attempts";i:5;', $text);
        $bad = 'O:12:"Recuo\Policy":1:{s:12:"max_attempts";i:0;}';
        $e = $this->thrownBy(static fn () => unserialize($bad));
        $this->assertSame(ConfigError::class, $e::class);
        $this->assertSame(ConfigError::ZERO_ATTEMPTS, $e->getCode());
        $this->assertSame('Recuo\Policy::__unserialize(): Argument #1 ($data): attempts must be at least 1', $e->getMessage());
        $e = $this->thrownBy(static fn () => unserialize('O:12:"Recuo\Policy":1:{s:4:"base";i:1;}'));
        $this->assertSame(ConfigError::INVALID_VALUE, $e->getCode());
        // Left out fields take guide A's values, as in fromArray().
        $this->assertSame(
            Policy::fromArray(['max_attempts' => 2])->toArray(),
            unserialize('O:12:"Recuo\Policy":1:{s:12:"max_attempts";i:2;}')->toArray(),
        );
    }

    public function testAPolicyIsNotChangedByUnserializeAfterItIsMade(): void
    {
        $policy = \Recuo\Policy::guideA();
        $same = $policy;
        try {
            $policy->__unserialize(['max_attempts' => 9]);
            $this->fail('a made policy was changed');
        } catch (\ValueError $e) {
            $this->assertStringContainsString('a policy is immutable', $e->getMessage());
        }
        $this->assertSame(5, $same->maxAttempts);
        $this->assertSame(3, unserialize(serialize(\Recuo\Policy::fromArray(['max_attempts' => 3])))->maxAttempts);
    }
}
