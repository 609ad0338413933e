<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Exception\ConfigError;

use function Recuo\backoffWindowMs;
use function Recuo\comRetry;
use function Recuo\parseRetryAfter;
use function Recuo\retryDelayMs;

/**
 * Every case of the shared vectors in tests/vectors/, answered by the PHP surface. The Rust,
 * C and Python tests read the same files: all four must agree.
 */
final class VectorsTest extends TestCase
{
    /** @return array<string, array{array<string, mixed>}> */
    public static function retryAfterCases(): array
    {
        return Vectors::cases('retry_after.json', 'cases', static fn (array $c): string => $c['name']);
    }

    /** @dataProvider retryAfterCases */
    public function testRetryAfter(array $case): void
    {
        $parsed = parseRetryAfter($case['value'], $case['now_ms']);
        $this->assertSame($case['kind'], $parsed->kind);
        $this->assertSame($case['wait_ms'], $parsed->waitMs);
    }

    public function testThereAreAtLeastSixtyRetryAfterCases(): void
    {
        $this->assertGreaterThanOrEqual(60, count(Vectors::load('retry_after.json')['cases']));
    }

    /** The vectors hold NUL bytes and non-ASCII text; they must reach the extension as bytes. */
    public function testVectorsWithNulAndNonAsciiArePassedAsBytes(): void
    {
        $values = array_column(Vectors::load('retry_after.json')['cases'], 'value', 'name');
        $this->assertSame("12\0", $values['trailing NUL']);
        $this->assertSame("\0" . '12', $values['leading NUL']);
        $this->assertSame("\u{661}\u{662}", $values['arabic-indic digits']);
        $this->assertSame(4, strlen($values['arabic-indic digits']));
        $this->assertSame('invalid', parseRetryAfter($values['trailing NUL'], 0)->kind);
        // Cut at the NUL, the same bytes would be a valid "12": the length must travel too.
        $this->assertSame('seconds', parseRetryAfter('12', 0)->kind);
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function windowCases(): array
    {
        return Vectors::cases(
            'backoff.json',
            'windows',
            static fn (array $c): string => "base {$c['base_ms']} cap {$c['cap_ms']} n {$c['n']}",
        );
    }

    /** @dataProvider windowCases */
    public function testBackoffWindow(array $case): void
    {
        $this->assertSame(
            $case['window_ms'],
            backoffWindowMs($case['n'], $case['base_ms'], $case['cap_ms']),
        );
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function windowErrorCases(): array
    {
        return Vectors::cases(
            'backoff.json',
            'errors',
            static fn (array $c): string => "base {$c['base_ms']} cap {$c['cap_ms']}",
        );
    }

    /** @dataProvider windowErrorCases */
    public function testBackoffWindowErrors(array $case): void
    {
        $this->assertSame('cap_below_base', $case['error']);
        try {
            backoffWindowMs(0, $case['base_ms'], $case['cap_ms']);
            $this->fail('no ConfigError');
        } catch (ConfigError $e) {
            $this->assertSame(ConfigError::CAP_BELOW_BASE, $e->getCode());
        }
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function retryDelayCases(): array
    {
        return Vectors::cases(
            'seeded.json',
            'retry_delay_ms',
            static fn (array $c): string => sprintf(
                '%s attempt %d seed %d',
                var_export($c['retry_after'], true),
                $c['attempt'],
                $c['seed'],
            ),
        );
    }

    /** @dataProvider retryDelayCases */
    public function testSeededRetryDelay(array $case): void
    {
        $delay = retryDelayMs($case['retry_after'], $case['attempt'], $case['now_ms'], $case['seed']);
        if ($case['unbounded'] ?? false) {
            $this->assertSame(INF, $delay);
        } else {
            $this->assertSame((float) $case['delay_ms'], $delay);
        }
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function comRetryCases(): array
    {
        return Vectors::cases(
            'seeded.json',
            'com_retry',
            static fn (array $c): string => sprintf(
                'seed %d, %d attempts, %d failures',
                $c['seed'],
                $c['tentativas'],
                $c['failures'],
            ),
        );
    }

    /** @dataProvider comRetryCases */
    public function testSeededComRetry(array $case): void
    {
        $calls = 0;
        $sleeps = [];
        $thrown = null;
        $task = static function () use (&$calls, &$thrown, $case): int {
            $calls++;
            if ($calls <= $case['failures']) {
                throw $thrown = new \RuntimeException("failure $calls");
            }
            return $calls;
        };
        $sleep = static function (int $ms) use (&$sleeps): void {
            $sleeps[] = $ms;
        };
        try {
            $result = comRetry($task, $case['tentativas'], $case['base_ms'], $case['max_ms'], null, $case['seed'], $sleep);
            $this->assertSame('ok', $case['outcome']);
            $this->assertSame($case['calls'], $result);
        } catch (\RuntimeException $e) {
            $this->assertSame('error', $case['outcome']);
            $this->assertSame($thrown, $e);
        }
        $this->assertSame($case['calls'], $calls);
        $this->assertSame($case['sleeps_ms'], $sleeps);
    }
}
