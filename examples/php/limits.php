<?php

declare(strict_types=1);

// recuo's shared limits in PHP: guide B's plan; a batch of requests through one gate (a
// regulator of starts, a concurrency limit, a retry budget) against a server that sometimes
// answers 429; and one regulator shared through a file. Run with `make demo-php`.

use Recuo\Attempt;
use Recuo\BatchResult;
use Recuo\ConcurrencyLimit;
use Recuo\Exception\SharedFileError;
use Recuo\Gate;
use Recuo\Policy;
use Recuo\Regulator;
use Recuo\RetryBudget;

printf("recuo %s — shared limits\n\n", Recuo\VERSION);

echo "Guide B's plan: plan(600, '120/min', '90/min', 2.0)\n";
$plan = Recuo\plan(600, '120/min', '90/min', 2.0);
printf(
    "  one start every %d ms, %.0f s in all, %.0f requests in flight\n",
    $plan->intervalMs,
    $plan->durationS,
    $plan->inFlight,
);
try {
    Recuo\plan(600, '120/min', '150/min', 2.0);
} catch (Recuo\Exception\PlanError $e) {
    echo "  150/min: {$e->getMessage()}\n";
}

echo "\nTwelve requests through one gate: 20/s (burst 2), 2 in flight, a retry budget\n";
/** A stand-in server: every fourth request is answered 429 with Retry-After: 0. */
$server = static function (): int {
    static $requests = 0;
    return ++$requests % 4 === 0 ? 429 : 200;
};
$limit = new ConcurrencyLimit(2);
$gate = new Gate(new Regulator('20/s', burst: 2), $limit, new RetryBudget());
$operations = [];
for ($i = 1; $i <= 12; $i++) {
    $operations["request $i"] = static function (Attempt $attempt) use ($server, $limit): string {
        $status = $server();
        if ($status !== 200) {
            throw new RuntimeException("HTTP $status", $status);
        }
        return "200 on attempt {$attempt->number}, {$limit->inFlight} in flight";
    };
}
$report = Recuo\runBatch(
    $operations,
    policy: new Policy(baseMs: 10, capMs: 100),
    gate: $gate,
    deadline: 30.0,
    classify: static fn (Throwable $e) => Recuo\classify($e->getCode(), headers: ['Retry-After' => '0']),
    seed: 7,
);
foreach ($report->results as $name => $result) {
    /** @var BatchResult $result */
    printf("  %-10s %s: %s\n", $name, $result->status, $result->value ?? $result->error?->getMessage());
}
$s = $report->stats;
printf(
    "  initial %d, retries %d, successes %d, failures %d, 429s %d, not started %d\n",
    $s->initial,
    $s->retries,
    $s->successes,
    $s->failures,
    $s->throttled,
    $s->notStarted,
);
printf(
    "  spacing between starts: %.1f ms at least (the burst lets two go together), %.1f ms on average"
    . " (20/s: one every 50 ms); at most %d in flight\n",
    $s->minSpacingMs,
    $s->meanSpacingMs,
    $s->maxInFlight,
);

echo "\nOne regulator for every process: Regulator::shared(file, '120/min', burst: 2)\n";
$file = sys_get_temp_dir() . '/recuo-demo-' . getmypid() . '.regulator';
$worker1 = Regulator::shared($file, '120/min', burst: 2);
$worker2 = Regulator::shared($file, '120/min', burst: 2);
printf("  worker 1: %s, %s\n", $worker1->tryAcquire() === 0.0 ? 'go' : 'wait', $worker1->tryAcquire() === 0.0 ? 'go' : 'wait');
printf("  worker 2: wait %.1f s (the burst is spent: one allowance)\n", ceil($worker2->tryAcquire() * 10) / 10);
try {
    Regulator::shared($file, '90/min', burst: 2);
} catch (SharedFileError $e) {
    echo '  a worker asking for 90/min: ', str_replace($file, '<file>', $e->getMessage()), "\n";
}
unlink($file);
