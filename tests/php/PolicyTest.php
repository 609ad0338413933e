<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Exception\ConfigError;
use Recuo\Policy;

use function Recuo\classify;

/** Recuo\Policy: presets, named arguments, validation with the core's codes, the rule sets. */
final class PolicyTest extends TestCase
{
    use Throws;

    /** @return array<string, mixed> */
    private static function settings(Policy $p): array
    {
        return [
            'maxAttempts' => $p->maxAttempts,
            'baseMs' => $p->baseMs,
            'capMs' => $p->capMs,
            'jitter' => $p->jitter,
            'deadlineMs' => $p->deadlineMs,
            'spreadMs' => $p->spreadMs,
            'idempotencyHeader' => $p->idempotencyHeader,
            'useDateHeader' => $p->useDateHeader,
            'quota403IsRateLimit' => $p->quota403IsRateLimit,
        ];
    }

    public function testThePresets(): void
    {
        $a = [
            'maxAttempts' => 5, 'baseMs' => 200, 'capMs' => 5000, 'jitter' => 'full', 'deadlineMs' => null,
            'spreadMs' => null, 'idempotencyHeader' => 'Idempotency-Key', 'useDateHeader' => false,
            'quota403IsRateLimit' => true,
        ];
        $this->assertSame($a, self::settings(Policy::guideA()));
        $this->assertSame($a, self::settings(new Policy()));
        $this->assertSame(
            array_replace($a, ['baseMs' => 1000, 'capMs' => 8000, 'deadlineMs' => 30000]),
            self::settings(Policy::guideB()),
        );
    }

    public function testNamedArguments(): void
    {
        $p = new Policy(
            maxAttempts: 3,
            baseMs: 50,
            capMs: 400,
            jitter: 'decorrelated',
            deadlineMs: 2000,
            spreadMs: 0,
            idempotencyHeader: 'X-Request-Key',
            useDateHeader: true,
        );
        $this->assertSame(
            [
                'maxAttempts' => 3, 'baseMs' => 50, 'capMs' => 400, 'jitter' => 'decorrelated', 'deadlineMs' => 2000,
                'spreadMs' => 0, 'idempotencyHeader' => 'X-Request-Key', 'useDateHeader' => true,
                'quota403IsRateLimit' => true,
            ],
            self::settings($p),
        );
        foreach (['full', 'equal', 'decorrelated', 'none'] as $jitter) {
            $this->assertSame($jitter, (new Policy(jitter: $jitter))->jitter);
        }
        $this->assertSame(0, (new Policy(baseMs: 0, capMs: 0))->capMs);
        $this->assertSame(PHP_INT_MAX, (new Policy(capMs: PHP_INT_MAX))->capMs);
        $this->assertSame(4294967295, (new Policy(maxAttempts: 4294967295))->maxAttempts);
    }

    /** @return array<string, array{\Closure(): mixed, int, string}> */
    public static function badPolicies(): array
    {
        return [
            'zero attempts' => [static fn () => new Policy(maxAttempts: 0), ConfigError::ZERO_ATTEMPTS, 'Argument #1 ($maxAttempts): attempts must be at least 1'],
            'negative attempts' => [static fn () => new Policy(maxAttempts: -1), ConfigError::ZERO_ATTEMPTS, '($maxAttempts)'],
            'negative base' => [static fn () => new Policy(baseMs: -1), ConfigError::NEGATIVE_DURATION, 'Argument #2 ($baseMs)'],
            'negative cap' => [static fn () => new Policy(capMs: -5), ConfigError::NEGATIVE_DURATION, 'Argument #3 ($capMs)'],
            'cap below base' => [static fn () => new Policy(baseMs: 300, capMs: 200), ConfigError::CAP_BELOW_BASE, 'the maximum (200 ms) must not be below the base (300 ms)'],
            'negative deadline' => [static fn () => new Policy(deadlineMs: -1), ConfigError::NEGATIVE_DURATION, 'Argument #5 ($deadlineMs)'],
            'negative spread' => [static fn () => new Policy(spreadMs: PHP_INT_MIN), ConfigError::NEGATIVE_DURATION, 'Argument #6 ($spreadMs)'],
            'empty header' => [static fn () => new Policy(idempotencyHeader: ''), ConfigError::INVALID_HEADER_NAME, 'Argument #7 ($idempotencyHeader)'],
            'header with a space' => [static fn () => new Policy(idempotencyHeader: 'Idempotency Key'), ConfigError::INVALID_HEADER_NAME, 'HTTP token'],
            'header with a colon' => [static fn () => new Policy(idempotencyHeader: 'Key:'), ConfigError::INVALID_HEADER_NAME, 'HTTP token'],
            'header not UTF-8' => [static fn () => new Policy(idempotencyHeader: "Key\xff"), ConfigError::INVALID_HEADER_NAME, 'HTTP token'],
            'header with NUL' => [static fn () => new Policy(idempotencyHeader: "Key\0"), ConfigError::INVALID_HEADER_NAME, 'HTTP token'],
        ];
    }

    /** @dataProvider badPolicies */
    public function testBadPoliciesAreConfigErrorsWithTheCoresCode(\Closure $make, int $code, string $message): void
    {
        $e = $this->thrownBy($make);
        $this->assertInstanceOf(ConfigError::class, $e);
        $this->assertInstanceOf(\ValueError::class, $e);
        $this->assertSame($code, $e->getCode());
        $this->assertStringStartsWith('Recuo\Policy::__construct(): ', $e->getMessage());
        $this->assertStringContainsString($message, $e->getMessage());
    }

    /** @return array<string, array{\Closure(): mixed, class-string<\Throwable>, string}> */
    public static function badArguments(): array
    {
        $p = Policy::guideA();
        return [
            'unknown jitter' => [static fn () => new Policy(jitter: 'Full'), \ValueError::class, 'Argument #4 ($jitter) must be "full", "equal", "decorrelated" or "none"'],
            'too many attempts' => [static fn () => new Policy(maxAttempts: 4294967296), \ValueError::class, 'Argument #1 ($maxAttempts) must be less than or equal to 4294967295'],
            'status below 400' => [static fn () => $p->withStatusRetry(399, 'always'), ConfigError::class, 'Recuo\Policy::withStatusRetry(): Argument #1 ($status): a retry rule can be set for statuses 400 to 599, not 399'],
            'status above 599' => [static fn () => $p->withStatusRetry(600, 'always'), ConfigError::class, '($status): a retry rule can be set for statuses 400 to 599, not 600'],
            'negative status' => [static fn () => $p->statusRetry(-500), ConfigError::class, 'Recuo\Policy::statusRetry(): Argument #1 ($status)'],
            'unknown rule' => [static fn () => $p->withStatusRetry(408, 'sometimes'), \ValueError::class, 'Argument #2 ($rule) must be "never", "if_idempotent" or "always"'],
            'unknown transport' => [static fn () => $p->withTransportRetry('dns', 'always'), \ValueError::class, 'Argument #1 ($error) must be "connect", "tls", "timeout", "reset" or "other"'],
            'unknown transport read' => [static fn () => $p->transportRetry('TLS'), \ValueError::class, '($error)'],
            'unknown method' => [static fn () => $p->withMethodIdempotent('BREW'), \ValueError::class, 'Argument #1 ($method) must be GET, HEAD'],
            'attempts a string' => [static fn () => new Policy(maxAttempts: '5'), \TypeError::class, 'maxAttempts'],
            'base a float' => [static fn () => new Policy(baseMs: 1.0), \TypeError::class, 'baseMs'],
            'jitter null' => [static fn () => new Policy(jitter: null), \TypeError::class, 'jitter'],
            'deadline a string' => [static fn () => new Policy(deadlineMs: '1000'), \TypeError::class, 'deadlineMs'],
            'date header an int' => [static fn () => new Policy(useDateHeader: 1), \TypeError::class, 'useDateHeader'],
            'status a string' => [static fn () => $p->withStatusRetry('408', 'always'), \TypeError::class, 'status'],
            'idempotent a string' => [static fn () => $p->withMethodIdempotent('POST', 'yes'), \TypeError::class, 'idempotent'],
        ];
    }

    /**
     * @dataProvider badArguments
     * @param class-string<\Throwable> $class
     */
    public function testBadArguments(\Closure $call, string $class, string $message): void
    {
        $e = $this->thrownBy($call);
        $this->assertSame($class, get_class($e));
        $this->assertStringContainsString($message, $e->getMessage());
    }

    public function testStatusRules(): void
    {
        $p = Policy::guideA();
        $rules = [];
        foreach ([400, 403, 404, 408, 422, 429, 500, 501, 502, 503, 504, 505, 599] as $status) {
            $rules[$status] = $p->statusRetry($status);
        }
        $this->assertSame(
            [
                400 => 'never', 403 => 'never', 404 => 'never', 408 => 'never', 422 => 'never', 429 => 'always',
                500 => 'if_idempotent', 501 => 'never', 502 => 'if_idempotent', 503 => 'always',
                504 => 'if_idempotent', 505 => 'never', 599 => 'if_idempotent',
            ],
            $rules,
        );

        $q = $p->withStatusRetry(408, 'if_idempotent')->withStatusRetry(500, 'always')->withStatusRetry(503, 'never');
        $this->assertSame(['if_idempotent', 'always', 'never'], [$q->statusRetry(408), $q->statusRetry(500), $q->statusRetry(503)]);
        // The original is unchanged: `with*` answers a copy.
        $this->assertSame(['never', 'if_idempotent', 'always'], [$p->statusRetry(408), $p->statusRetry(500), $p->statusRetry(503)]);
        $this->assertNotSame($p, $q);

        $this->assertSame(['retry', 'server_error'], self::judge(408, 'GET', $q));
        $this->assertSame(['give_up', 'not_idempotent'], self::judge(408, 'POST', $q));
        $this->assertSame(['retry', 'server_error'], self::judge(500, 'POST', $q));
        $this->assertSame(['give_up', 'permanent'], self::judge(503, 'GET', $q));
        $this->assertSame(['give_up', 'permanent'], self::judge(408, 'GET', $p));
        // A 429 taken out of the sets is permanent, whatever its headers say.
        $this->assertSame(['give_up', 'permanent'], self::judge(429, 'GET', $p->withStatusRetry(429, 'never')));
    }

    public function testTransportRules(): void
    {
        $p = Policy::guideA();
        $rules = [];
        foreach (['connect', 'tls', 'timeout', 'reset', 'other'] as $kind) {
            $rules[$kind] = $p->transportRetry($kind);
        }
        $this->assertSame(
            ['connect' => 'always', 'tls' => 'never', 'timeout' => 'if_idempotent', 'reset' => 'if_idempotent', 'other' => 'if_idempotent'],
            $rules,
        );
        $q = $p->withTransportRetry('timeout', 'always')->withTransportRetry('connect', 'never');
        $this->assertSame(['always', 'never'], [$q->transportRetry('timeout'), $q->transportRetry('connect')]);
        $this->assertSame(['retry', 'timeout'], self::judge('timeout', 'POST', $q));
        $this->assertSame(['give_up', 'permanent'], self::judge('connect', 'GET', $q));
        $this->assertSame(['give_up', 'not_idempotent'], self::judge('timeout', 'POST', $p));
        // A failed certificate may be retried only when the caller says so.
        $this->assertSame(['give_up', 'tls'], self::judge('tls', 'GET', $p));
        $this->assertSame(['retry', 'tls'], self::judge('tls', 'GET', $p->withTransportRetry('tls', 'if_idempotent')));
    }

    public function testIdempotentMethods(): void
    {
        $p = Policy::guideA();
        foreach (['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE', 'get', 'Put'] as $method) {
            $this->assertTrue($p->isMethodIdempotent($method), $method);
        }
        foreach (['POST', 'PATCH', 'CONNECT', 'BREW', '', "GET\0"] as $method) {
            $this->assertFalse($p->isMethodIdempotent($method), $method);
        }
        $q = $p->withMethodIdempotent('post')->withMethodIdempotent('DELETE', false);
        $this->assertTrue($q->isMethodIdempotent('POST'));
        $this->assertFalse($q->isMethodIdempotent('delete'));
        $this->assertSame(['retry', 'server_error'], self::judge(500, 'POST', $q));
        $this->assertSame(['give_up', 'not_idempotent'], self::judge(500, 'DELETE', $q));
        // Removing a method recuo does not know changes nothing.
        $this->assertFalse($p->withMethodIdempotent('BREW', false)->isMethodIdempotent('BREW'));
    }

    public function testTheQuota403Rule(): void
    {
        $headers = ['X-RateLimit-Remaining' => '0', 'X-RateLimit-Reset' => '30'];
        $p = Policy::guideA();
        $v = classify(403, headers: $headers, nowMs: 0, policy: $p);
        $this->assertSame(['retry', 'rate_limited', 30000], [$v->verdict, $v->reason, $v->waitMs]);
        $q = $p->withQuota403IsRateLimit(false);
        $this->assertFalse($q->quota403IsRateLimit);
        $this->assertTrue($p->quota403IsRateLimit);
        $v = classify(403, headers: $headers, nowMs: 0, policy: $q);
        $this->assertSame(['give_up', 'permanent', null], [$v->verdict, $v->reason, $v->waitMs]);
    }

    public function testTheDateHeaderSetting(): void
    {
        // The server's Date says it is 08:49:37; Retry-After names 08:50:07: 30 s, whatever
        // the client's clock says (here an hour later).
        $headers = ['Date' => 'Sun, 06 Nov 1994 08:49:37 GMT', 'Retry-After' => 'Sun, 06 Nov 1994 08:50:07 GMT'];
        $later = 784111777000 + 3_600_000;
        $this->assertSame(30000, classify(429, headers: $headers, nowMs: $later, policy: new Policy(useDateHeader: true))->waitMs);
        $this->assertSame(0, classify(429, headers: $headers, nowMs: $later, policy: new Policy())->waitMs);
    }

    public function testPoliciesAreImmutableValues(): void
    {
        $p = new Policy(maxAttempts: 3);
        $e = $this->thrownBy(static function () use ($p): void {
            $p->maxAttempts = 9;
        });
        $this->assertInstanceOf(\Throwable::class, $e);
        $this->assertSame(3, $p->maxAttempts);
        $copy = clone $p;
        $this->assertSame(3, $copy->maxAttempts);
        $this->assertEquals(new Policy(), Policy::guideA());
        $this->assertNotEquals(new Policy(), Policy::guideB());
        $this->assertTrue((new \ReflectionClass(Policy::class))->isFinal());
    }

    /** @return array{string, string} */
    private static function judge(int|string $outcome, string $method, Policy $policy): array
    {
        $v = is_int($outcome)
            ? classify($outcome, method: $method, nowMs: 0, policy: $policy)
            : classify(error: $outcome, method: $method, nowMs: 0, policy: $policy);
        return [$v->verdict, $v->reason];
    }
}
