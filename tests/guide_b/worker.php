<?php

// One worker of guide B's job, in PHP: its share of the reads as one Recuo\runBatch through
// the limits every worker shares (files in STATE), with Guzzle, starting at START
// (CLOCK_MONOTONIC ns, hrtime's clock, the same in every process). Prints its stats' plain
// form as one JSON line, for the parent to add up.
//
//     php worker.php BASE_URL START_NS STATE ADAPTIVE ID...

declare(strict_types=1);

require_once '/usr/share/php/GuzzleHttp/autoload.php';

use GuzzleHttp\Client;
use GuzzleHttp\Exception\ConnectException;
use GuzzleHttp\Exception\RequestException;
use Recuo\{ConcurrencyLimit, Gate, Policy, Regulator, RetryBudget};

[, $base, $start, $state, $adaptive] = $argv;
$ids = array_slice($argv, 5);

$gate = new Gate(
    Regulator::shared("$state/regulator", '9/s', adaptive: $adaptive === 'adaptive'),
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
$report = Recuo\runBatch($operations, policy: Policy::batch(), gate: $gate, deadline: 120.0, classify: $classify);
echo json_encode($report->stats), "\n";
