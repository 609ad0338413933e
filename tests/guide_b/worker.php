<?php

// One worker of guide B's job, in PHP: its share of the reads as one Recuo\runBatch through
// the limits every worker shares (files in STATE): one rate RATE (such as 90/min), at most 3
// requests in flight, one retry budget. With Guzzle, within DEADLINE_S seconds for the whole
// share, starting at START_NS (CLOCK_MONOTONIC ns, hrtime's clock, the same in every process;
// 0: at once). ADAPTIVE is "adaptive" (the rate slows down after a 429) or "steady". Prints its
// stats' plain form as one JSON line, for the parent to add up.
//
//     php worker.php BASE_URL RATE DEADLINE_S START_NS STATE ADAPTIVE ID...

declare(strict_types=1);

require_once '/usr/share/php/GuzzleHttp/autoload.php';

use GuzzleHttp\Client;
use GuzzleHttp\Exception\ConnectException;
use GuzzleHttp\Exception\RequestException;
use Recuo\{ConcurrencyLimit, Gate, Policy, Regulator, RetryBudget};

[, $base, $rate, $deadline, $start, $state, $adaptive] = $argv;
$ids = array_slice($argv, 7);

$gate = new Gate(
    Regulator::shared("$state/regulator", $rate, adaptive: $adaptive === 'adaptive'),
    ConcurrencyLimit::shared("$state/limit", 3),
    RetryBudget::shared("$state/budget"),
);
$client = new Client(['timeout' => 10]); // http_errors: a 429 or 503 throws, with its response
$operations = [];
foreach ($ids as $id) {
    $operations[] = static fn () => $client->get("$base/items/$id")->getStatusCode();
}
// What recuo judges: the status and Retry-After a Guzzle error carries, or the failure.
$classify = static function (\Throwable $e): Recuo\Verdict|bool {
    if ($e instanceof RequestException && $e->hasResponse()) {
        $response = $e->getResponse();
        return Recuo\classify($response->getStatusCode(), headers: $response->getHeaders());
    }
    return $e instanceof ConnectException ? Recuo\classify(error: 'connect') : true;
};

while (hrtime(true) < (int) $start) {
    usleep(1000);
}
$report = Recuo\runBatch($operations, policy: Policy::batch(), gate: $gate, deadline: (float) $deadline, classify: $classify);
echo json_encode($report->stats), "\n";
