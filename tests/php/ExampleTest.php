<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;

/** examples/php/demo.php (what `make demo-php` runs) works and says what it should. */
final class ExampleTest extends TestCase
{
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
            . '  attempt 3: succeeded\n  comRetry returned: answer from attempt 3\n\z/m',
            $out,
        );
    }
}
