<?php

declare(strict_types=1);

// recuo in PHP: guide B's delays for a few Retry-After values, guide A's comRetry
// succeeding on its third attempt, and the policy engine (Recuo\retry with Recuo\classify)
// honouring a server's wait and refusing an unsafe repeat. Run with `make demo-php`.

use function Recuo\comRetry;
use function Recuo\retryDelayMs;

printf("recuo %s — PHP %s\n\n", Recuo\VERSION, PHP_VERSION);

// A fixed "now" keeps the output the same on every run: Sun, 06 Nov 1994 08:49:37 GMT.
$nowMs = 784111777000;
$thirtySecondsAhead = gmdate('D, d M Y H:i:s \G\M\T', intdiv($nowMs, 1000) + 30);

echo "Guide B: retryDelayMs(retryAfter, attempt, nowMs) in milliseconds\n";
foreach ([
    '12' => '12',
    $thirtySecondsAhead . ' (30 s ahead)' => $thirtySecondsAhead,
    'Sun, 06 Nov 1994 08:00:00 GMT (past)' => 'Sun, 06 Nov 1994 08:00:00 GMT',
    'soon (invalid: backoff)' => 'soon',
    'null (no header: backoff)' => null,
    '99999999999999999999 (too far: give up)' => '99999999999999999999',
] as $label => $retryAfter) {
    // Seeded, so the jittered fallbacks print the same numbers every time.
    printf("  %-44s attempt 2 -> %s\n", $label, var_export(retryDelayMs($retryAfter, 2, $nowMs, 42), true));
}

echo "\nGuide A: comRetry(tarefa, tentativas: 5, baseMs: 20, maxMs: 40)\n";
$attempt = 0;
$result = comRetry(
    function () use (&$attempt): string {
        $attempt++;
        if ($attempt < 3) {
            echo "  attempt $attempt: failed (RuntimeException)\n";
            throw new RuntimeException("temporary failure $attempt");
        }
        echo "  attempt $attempt: succeeded\n";
        return "answer from attempt $attempt";
    },
    tentativas: 5,
    baseMs: 20,
    maxMs: 40,
    repetirSe: fn (Throwable $e): bool => $e instanceof RuntimeException,
    seed: 4,
    // Only to show the waits: without `sleep:`, comRetry sleeps by itself.
    sleep: function (int $ms): void {
        echo "  waiting $ms ms (full jitter)\n";
        usleep($ms * 1000);
    },
);
echo "  comRetry returned: $result\n";

echo "\nThe policy engine: Recuo\\retry with Recuo\\classify (a POST with an idempotency key)\n";
// A stand-in for an HTTP client: 503 and 429 with Retry-After: 0, then 201.
$answers = [[503, ['Retry-After' => '0']], [429, ['Retry-After' => '0']], [201, []]];
$headers = [];
$policy = new Recuo\Policy(baseMs: 20, capMs: 40, deadlineMs: 30_000);
$result = Recuo\retry(
    function (Recuo\Attempt $attempt) use (&$answers, &$headers): string {
        [$status, $headers] = array_shift($answers);
        printf("  attempt %d, %s: %s -> HTTP %d\n", $attempt->number, $attempt->idempotencyHeader, $attempt->idempotencyKey, $status);
        if ($status >= 400) {
            throw new RuntimeException("HTTP $status", $status);
        }
        return "created";
    },
    policy: $policy,
    classify: function (Throwable $e) use (&$headers): Recuo\Verdict {
        $verdict = Recuo\classify($e->getCode(), method: 'POST', idempotencyKey: true, headers: $headers);
        echo "  classify: $verdict->verdict ($verdict->reason), server wait $verdict->waitMs ms\n";
        return $verdict;
    },
    onRetry: function (int $attempt, Throwable $e, int $delayMs): void {
        echo "  waiting $delayMs ms (the server's wait plus a spread)\n";
    },
    seed: 4,
);
echo "  retry returned: $result\n";

// A POST without a key that timed out may have been processed: not repeated.
try {
    Recuo\retry(
        fn () => throw new RuntimeException('timed out'),
        policy: $policy,
        classify: fn (Throwable $e) => Recuo\classify(error: 'timeout', method: 'POST'),
        onGiveUp: function (Recuo\Report $report): void {
            echo "  a POST without a key timed out: gave up after $report->attempts attempt ($report->reason)\n";
        },
    );
} catch (RuntimeException $e) {
    echo "  retry rethrew the operation's own exception: {$e->getMessage()}\n";
}
