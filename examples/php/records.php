<?php

declare(strict_types=1);

// recuo's records in PHP: every attempt of a retried request and its result as JSON lines,
// with no credential or personal data in them; who answered an error page; the stats of a
// batch. Run with `make demo-php`.

use Recuo\Attempt;
use Recuo\Policy;

printf("recuo %s — records, redaction and who answered\n\n", Recuo\VERSION);

/** What an HTTP client might throw: the status and the response's headers. */
final class ResponseError extends RuntimeException
{
    /** @param array<string, string> $headers */
    public function __construct(public readonly int $status, public readonly array $headers = [])
    {
        parent::__construct("HTTP $status");
    }
}

/** A stand-in server: a CDN's error page, a 429 with Retry-After, then the answer. */
$answers = [
    [503, ['CF-Ray' => '8a1b2c3d4e5f-GRU', 'Server' => 'cloudflare', 'Content-Type' => 'text/html']],
    [429, ['Retry-After' => '1', 'X-Request-Id' => 'req-2', 'Set-Cookie' => 'session=s3cr3t', 'Content-Type' => 'application/json']],
    [200, ['X-Request-Id' => 'req-3', 'Content-Type' => 'application/json']],
];
$url = 'https://app:hunter2@api.example.com/v1/customers/ana.souza@example.com?cpf=123.456.789-09&api_key=AKx9fj3kd';
echo "GET $url\n";
echo "  (as a record shows it: ", Recuo\redactUrl($url), ")\n\n";

echo "The records, one JSON line each (a PSR-3 logger would take the arrays as they are):\n";
$body = Recuo\retry(
    function (Attempt $attempt) use (&$answers): string {
        [$status, $headers] = array_shift($answers);
        if ($status >= 400) {
            throw new ResponseError($status, $headers);
        }
        $attempt->recordResponse($status, $headers);
        return '{"name": "Ana"}';
    },
    policy: new Policy(baseMs: 100, capMs: 1000),
    classify: function (ResponseError $e): Recuo\Verdict {
        $who = Recuo\whoAnswered($e->headers, 'application/json');
        printf("    (HTTP %d from the %s, %s confidence: %s)\n", $e->status, $who->origin, $who->confidence, implode('; ', $who->evidence));
        return Recuo\classify($e->status, headers: $e->headers);
    },
    sleep: fn (int $ms) => null, // a demo does not wait
    records: function (array $record): void {
        echo '  ', json_encode($record, JSON_FORCE_OBJECT | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";
    },
    method: 'GET',
    url: $url,
);
echo "  retry returned: $body\n";

echo "\nA batch's stats (every third sync is throttled once):\n";
$operations = [];
foreach (['alice', 'bob', 'carol', 'dave', 'erin', 'frank'] as $i => $user) {
    $operations[$user] = function (Attempt $attempt) use ($i): string {
        if ($i % 3 === 2 && $attempt->number === 0) {
            throw new ResponseError(429, ['Retry-After' => '0']);
        }
        return 'synced';
    };
}
$stats = Recuo\runBatch(
    $operations,
    classify: fn (ResponseError $e) => Recuo\classify($e->status, headers: $e->headers),
    sleep: fn (int $ms) => null,
)->stats;
printf(
    "  initial %d, retries %d, successes %d, failures %d, 429s %d, at most %d in flight\n",
    $stats->initial,
    $stats->retries,
    $stats->successes,
    $stats->failures,
    $stats->throttled,
    $stats->maxInFlight,
);
