<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;

/** examples/php/demo.php (what `make demo-php` runs) works and says what it should. */
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
}
