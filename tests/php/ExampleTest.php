<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;

/** examples/php/demo.php, limits.php and records.php (what `make demo-php` runs) work and say what they should. */
final class ExampleTest extends TestCase
{
    private const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

    public function testTheDemoRuns(): void
    {
        [$status, $out, $err] = Process::run(
            [PHP_BINARY, '-n', '-d', 'extension=' . RECUO_EXTENSION, RECUO_ROOT . '/examples/php/demo.php'],
        );
        $this->assertSame('', $err);
        $this->assertSame(0, $status);
        $this->assertStringStartsWith('recuo ' . \Recuo\VERSION . ' ', $out);
        // Guide B: seconds, a date 30 s ahead, a past date, the backoff twice, and INF.
        $this->assertMatchesRegularExpression('/^  12 +attempt 2 -> 12000\.0$/m', $out);
        $this->assertMatchesRegularExpression('/\(30 s ahead\) +attempt 2 -> 30000\.0$/m', $out);
        $this->assertMatchesRegularExpression('/\(past\) +attempt 2 -> 0\.0$/m', $out);
        $this->assertMatchesRegularExpression('/^  soon .* -> (\d+)\.0\n  null .* -> \1\.0$/m', $out);
        $this->assertMatchesRegularExpression('/give up\) +attempt 2 -> INF$/m', $out);
        // Guide A: two failures, then the answer of the third attempt.
        $this->assertMatchesRegularExpression(
            '/^  attempt 1: failed.*\n  waiting \d+ ms.*\n  attempt 2: failed.*\n  waiting \d+ ms.*\n'
            . '  attempt 3: succeeded\n  comRetry returned: answer from attempt 3\n\n/m',
            $out,
        );
        // The policy engine: one key for every attempt, the server's wait plus a spread (at
        // most min(window(n), 1 s): 20 ms, then 40 ms), and an unsafe repeat refused.
        $this->assertMatchesRegularExpression(
            '/^The policy engine: .*\n'
            . '  attempt 0, Idempotency-Key: (' . self::UUID . ') -> HTTP 503\n'
            . '  classify: retry \(unavailable\), server wait 0 ms\n'
            . '  waiting (?:1?\d|20) ms .*\n'
            . '  attempt 1, Idempotency-Key: \1 -> HTTP 429\n'
            . '  classify: retry \(rate_limited\), server wait 0 ms\n'
            . '  waiting (?:[1-3]?\d|40) ms .*\n'
            . '  attempt 2, Idempotency-Key: \1 -> HTTP 201\n'
            . '  retry returned: created\n'
            . '  a POST without a key timed out: gave up after 1 attempt \(permanent\)\n'
            . "  retry rethrew the operation's own exception: timed out\n\z/m",
            $out,
        );
    }

    public function testTheLimitsDemoRuns(): void
    {
        [$status, $out, $err] = Process::run(
            [PHP_BINARY, '-n', '-d', 'extension=' . RECUO_EXTENSION, RECUO_ROOT . '/examples/php/limits.php'],
        );
        $this->assertSame('', $err);
        $this->assertSame(0, $status);
        $this->assertStringStartsWith('recuo ' . \Recuo\VERSION . " — shared limits\n", $out);
        // Guide B's plan, exactly; and a target above the allowance refused.
        $this->assertStringContainsString("  one start every 667 ms, 400 s in all, 3 requests in flight\n", $out);
        $this->assertStringContainsString('  150/min: Recuo\plan(): the target (150/min) is above the allowance (120/min)', $out);
        // Every fourth answer is a 429: requests 4, 7 and 10 succeed on their second attempt.
        for ($i = 1; $i <= 12; $i++) {
            $attempt = in_array($i, [4, 7, 10], true) ? 1 : 0;
            $this->assertMatchesRegularExpression(
                sprintf('/^  %-10s succeeded: 200 on attempt %d, 1 in flight$/m', "request $i", $attempt),
                $out,
            );
        }
        $this->assertStringContainsString("  initial 12, retries 3, successes 12, failures 0, 429s 3, not started 0\n", $out);
        // 15 starts at 20/s with a burst of 2: 14 gaps of 50 ms but one, on average at least 45 ms.
        $this->assertMatchesRegularExpression(
            '/^  spacing between starts: \d+\.\d ms at least .*, (\d+\.\d) ms on average .*; at most 1 in flight$/m',
            $out,
        );
        preg_match('/, (\d+\.\d) ms on average/', $out, $mean);
        $this->assertGreaterThanOrEqual(45.0, (float) $mean[1]);
        $this->assertStringEndsWith(
            "  worker 1: go, go\n  worker 2: wait 0.5 s (the burst is spent: one allowance)\n"
            . '  a worker asking for 90/min: Recuo\\Regulator::shared(): shared state: <file> regulates 2.000000/s '
            . "with a burst of 2; this process asked for 1.500000/s with a burst of 2\n",
            $out,
        );
    }

    public function testTheRecordsDemoRuns(): void
    {
        [$status, $out, $err] = Process::run(
            [PHP_BINARY, '-n', '-d', 'extension=' . RECUO_EXTENSION, RECUO_ROOT . '/examples/php/records.php'],
        );
        $this->assertSame('', $err);
        $this->assertSame(0, $status);
        $this->assertStringStartsWith('recuo ' . \Recuo\VERSION . " — records, redaction and who answered\n", $out);
        $this->assertStringContainsString(
            "  (as a record shows it: https://api.example.com/v1/customers/[email]?cpf=[number]&api_key=[redacted])\n",
            $out,
        );
        $this->assertMatchesRegularExpression('/^    \(HTTP 503 from the cdn, high confidence: cf-ray → Cloudflare;/m', $out);
        $this->assertMatchesRegularExpression('/^    \(HTTP 429 from the api, high confidence: x-request-id → set by the API;/m', $out);
        preg_match_all('/^  (\{.*\})$/m', $out, $lines);
        $records = array_map(static fn (string $line): array => json_decode($line, true, 512, JSON_THROW_ON_ERROR), $lines[1]);
        $this->assertSame(['attempt', 'attempt', 'attempt', 'result'], array_column($records, 'type'));
        $this->assertSame([503, 429, 200], array_column($records, 'status'));
        $this->assertSame(['8a1b2c3d4e5f-GRU', 'req-2', 'req-3'], array_column($records, 'request_id'));
        $this->assertSame(['retry', 'retry', 'done'], array_column($records, 'decision'));
        foreach (['app', 'hunter2', 'ana.souza', '123.456', 'AKx9fj3kd', 's3cr3t', 'session'] as $secret) {
            $this->assertStringNotContainsString($secret, implode("\n", $lines[1]));
        }
        $this->assertStringEndsWith("  initial 6, retries 2, successes 6, failures 0, 429s 2, at most 1 in flight\n", $out);
    }
}
