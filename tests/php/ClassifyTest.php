<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Verdict;

use function Recuo\classify;

/**
 * Recuo\classify beyond the shared vectors (VectorsTest runs every case of classify.json):
 * the shapes headers come in, the system clock, out-of-range statuses, bad input, and the
 * verdicts PHP code makes itself.
 */
final class ClassifyTest extends TestCase
{
    use Throws;

    /** @return list<mixed> */
    private static function seen(Verdict $v): array
    {
        return [$v->verdict, $v->reason, $v->waitMs, $v->waitUnbounded];
    }

    public function testTheDefaultsAreAGetWithoutAKeyOrHeaders(): void
    {
        $this->assertSame(['retry', 'server_error', null, false], self::seen(classify(500)));
        $this->assertSame(['give_up', 'not_idempotent', null, false], self::seen(classify(500, method: 'POST')));
        $this->assertSame(['retry', 'server_error', null, false], self::seen(classify(500, method: 'POST', idempotencyKey: true)));
        $this->assertSame(['retry', 'connect', null, false], self::seen(classify(error: 'connect', method: 'POST')));
        $this->assertSame(['success', 'success', null, false], self::seen(classify(204)));
    }

    /** @return array<string, array{array<mixed>}> */
    public static function headerShapes(): array
    {
        return [
            'name => value' => [['Retry-After' => '7']],
            'name => int' => [['Retry-After' => 7]],
            'PSR-7 name => [values]' => [['Retry-After' => ['7']]],
            'list of pairs' => [[['Retry-After', '7']]],
            'list of pairs with an int' => [[['Retry-After', 7]]],
            'any case' => [['retry-after' => '7']],
            'mixed shapes' => [['X-Other' => ['a', 'b'], 0 => ['Retry-After', '7']]],
        ];
    }

    /** @dataProvider headerShapes */
    public function testHeaderShapes(array $headers): void
    {
        $this->assertSame(['retry', 'rate_limited', 7000, false], self::seen(classify(429, headers: $headers, nowMs: 0)));
    }

    public function testHeadersHeldByReference(): void
    {
        $value = '7';
        $pair = ['Retry-After', &$value];
        $headers = [&$pair];
        $this->assertSame(7000, classify(503, headers: $headers, nowMs: 0)->waitMs);
    }

    public function testServerWaits(): void
    {
        $now = 784111777000; // Sun, 06 Nov 1994 08:49:37 GMT
        $this->assertSame(12000, classify(503, headers: ['Retry-After' => '12'], nowMs: $now)->waitMs);
        $this->assertSame(30000, classify(429, headers: ['Retry-After' => 'Sun, 06 Nov 1994 08:50:07 GMT'], nowMs: $now)->waitMs);
        $this->assertSame(0, classify(429, headers: ['Retry-After' => 'Sun, 06 Nov 1994 08:00:00 GMT'], nowMs: $now)->waitMs);
        $this->assertSame(['retry', 'unavailable', null, true], self::seen(classify(503, headers: ['Retry-After' => '99999999999999999999'], nowMs: $now)));
        // An invalid Retry-After counts as absent: no wait, and the rate-limit hints apply.
        $this->assertNull(classify(429, headers: ['Retry-After' => 'soon'], nowMs: $now)->waitMs);
        $this->assertSame(5000, classify(429, headers: ['Retry-After' => 'soon', 'RateLimit' => '"default";r=0;t=5'], nowMs: $now)->waitMs);
        // Bytes that are not UTF-8 make a value invalid, never an error.
        $this->assertNull(classify(429, headers: ['Retry-After' => "1\xff"], nowMs: $now)->waitMs);
        $this->assertNull(classify(429, headers: ["Retry-After\xff" => '1'], nowMs: $now)->waitMs);
        // A give-up carries no wait, whatever the headers say.
        $this->assertNull(classify(404, headers: ['Retry-After' => '12'], nowMs: $now)->waitMs);
    }

    public function testNowDefaultsToTheSystemClock(): void
    {
        $inAMinute = gmdate('D, d M Y H:i:s \G\M\T', time() + 60);
        $wait = classify(429, headers: ['Retry-After' => $inAMinute])->waitMs;
        $this->assertGreaterThan(55000, $wait);
        $this->assertLessThanOrEqual(60000, $wait);
    }

    /** Statuses outside 100-599 are read as 500 (RFC 9110 §15), even beyond 16 bits. */
    public function testOutOfRangeStatusesAre500(): void
    {
        foreach ([0, 99, 600, 999, 65535, 65536, -1, PHP_INT_MAX, PHP_INT_MIN] as $status) {
            $this->assertSame(['retry', 'server_error'], [classify($status)->verdict, classify($status)->reason], (string) $status);
            $this->assertSame('not_idempotent', classify($status, method: 'POST')->reason, (string) $status);
        }
    }

    public function testMethodsAreReadWithoutRegardToCase(): void
    {
        $this->assertSame('retry', classify(error: 'timeout', method: 'put')->verdict);
        $this->assertSame('give_up', classify(error: 'timeout', method: 'BREW')->verdict);
        $this->assertSame('give_up', classify(error: 'timeout', method: "GET\xff")->verdict);
        $this->assertSame('give_up', classify(error: 'timeout', method: '')->verdict);
    }

    /** @return array<string, array{\Closure(): mixed, class-string<\Throwable>, string}> */
    public static function badInput(): array
    {
        $shape = 'Recuo\classify(): Argument #5 ($headers) must map header names to strings (or to lists of strings) or list [name, value] pairs; ';
        return [
            'neither status nor error' => [static fn () => classify(), \ValueError::class, 'Recuo\classify(): exactly one of Argument #1 ($status) and Argument #2 ($error) must be given'],
            'both' => [static fn () => classify(500, 'reset'), \ValueError::class, 'exactly one of'],
            'unknown error' => [static fn () => classify(error: 'dns'), \ValueError::class, 'Recuo\classify(): Argument #2 ($error) must be null or "connect", "tls", "timeout", "reset" or "other"'],
            'error in capitals' => [static fn () => classify(error: 'TIMEOUT'), \ValueError::class, '($error)'],
            'a null value' => [static fn () => classify(429, headers: ['Retry-After' => null]), \TypeError::class, $shape . 'key "Retry-After" holds null'],
            'a float value' => [static fn () => classify(429, headers: ['Retry-After' => 1.5]), \TypeError::class, 'key "Retry-After" holds float'],
            'an object value' => [static fn () => classify(429, headers: ['Retry-After' => new \stdClass()]), \TypeError::class, 'holds stdClass'],
            'a list with an array' => [static fn () => classify(429, headers: ['Retry-After' => [['1']]]), \TypeError::class, 'holds a list with array'],
            'a bare string in a list' => [static fn () => classify(429, headers: ['Retry-After: 1']), \TypeError::class, 'index 0 holds string'],
            'a short pair' => [static fn () => classify(429, headers: [['Retry-After']]), \TypeError::class, 'index 0 holds array'],
            'a long pair' => [static fn () => classify(429, headers: [['Retry-After', '1', 'x']]), \TypeError::class, 'index 0 holds array'],
            'a pair with keys' => [static fn () => classify(429, headers: [['name' => 'Retry-After', 'value' => '1']]), \TypeError::class, 'index 0 holds array'],
            'a pair with an int name' => [static fn () => classify(429, headers: [[5, '1']]), \TypeError::class, 'index 0 holds a pair whose name is not a string'],
            'a pair with a null value' => [static fn () => classify(429, headers: [['Retry-After', null]]), \TypeError::class, 'index 0 holds a pair whose value is not a string'],
            'status a string' => [static fn () => classify('500'), \TypeError::class, 'status'],
            'status a float' => [static fn () => classify(500.0), \TypeError::class, 'status'],
            'error an int' => [static fn () => classify(error: 5), \TypeError::class, 'error'],
            'method null' => [static fn () => classify(500, method: null), \TypeError::class, 'method'],
            'key a string' => [static fn () => classify(500, idempotencyKey: 'yes'), \TypeError::class, 'idempotencyKey'],
            'headers a string' => [static fn () => classify(500, headers: 'Retry-After: 1'), \TypeError::class, 'headers'],
            'headers null' => [static fn () => classify(500, headers: null), \TypeError::class, 'headers'],
            'now a float' => [static fn () => classify(500, nowMs: 1.0), \TypeError::class, 'nowMs'],
            'policy of another class' => [static fn () => classify(500, policy: new \stdClass()), \TypeError::class, 'policy'],
            'unknown named argument' => [static fn () => classify(500, header: []), \Error::class, 'Unknown named parameter $header'],
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

    public function testVerdictsMadeInPhp(): void
    {
        $this->assertSame(['success', 'success', null, false], self::seen(Verdict::success()));
        $this->assertSame(['retry', 'server_error', null, false], self::seen(Verdict::retry()));
        $this->assertSame(['retry', 'server_error', 2500, false], self::seen(Verdict::retry(2500)));
        $this->assertSame(['retry', 'server_error', 0, false], self::seen(Verdict::retry(waitMs: 0)));
        $this->assertSame(['give_up', 'permanent', null, false], self::seen(Verdict::giveUp()));
        $e = $this->thrownBy(static fn () => Verdict::retry(-1));
        $this->assertSame(\ValueError::class, get_class($e));
        $this->assertSame('Recuo\Verdict::retry(): Argument #1 ($waitMs) must be null or greater than or equal to 0', $e->getMessage());
    }

    public function testVerdictsAreNotMadeWithNew(): void
    {
        $this->assertInstanceOf(\Error::class, $this->thrownBy(static fn () => new Verdict()));
        $this->assertTrue((new \ReflectionClass(Verdict::class))->isFinal());
    }
}
