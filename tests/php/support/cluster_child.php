<?php

declare(strict_types=1);

// A process of RedisClusterTest, in one of two roles:
//
// - `tls URL`: on a TLS cluster (the certificate trusted through SSL_CERT_FILE, read at this
//   process's first TLS connection), a regulator, a limit, a budget and a loop through a gate
//   over them; prints what they answered, as JSON.
// - `failover URL API END_MS REGULATOR LIMIT BUDGET`: until END_MS (unix ms), one operation
//   after another — a GET of API through `Recuo\retry` behind one gate of a Redis regulator
//   (30/s, burst 3), a Redis limit (2 places, leases of 2 s) and a Redis budget, a deadline of
//   2 s; prints, as JSON, per operation: when it began (unix ms), how long it took (ms), how it
//   ended ("ok", "gate_error": the gate's SharedFileError with no attempt, "waited": gave up
//   before the first attempt, else what was thrown) and when its attempts started (unix ms).
//
// Usage: php -n -d extension=... cluster_child.php tls URL
//        php -n -d extension=... cluster_child.php failover URL API END_MS REGULATOR LIMIT BUDGET

use Recuo\ConcurrencyLimit;
use Recuo\Exception\SharedFileError;
use Recuo\Gate;
use Recuo\Policy;
use Recuo\Regulator;
use Recuo\RetryBudget;

// A warning is an exception of the operation, never a line on stdout.
set_error_handler(static function (int $severity, string $message): bool {
    throw new ErrorException($message, 0, $severity);
});

function unix_ms(): int
{
    return (int) (microtime(true) * 1000);
}

/** One GET of `$api` (`http://127.0.0.1:port`); throws unless the answer is a 200. */
function get(string $api): void
{
    $address = substr($api, strlen('http://'));
    $socket = stream_socket_client("tcp://$address", $errno, $error, 5.0);
    stream_set_timeout($socket, 5);
    fwrite($socket, "GET / HTTP/1.1\r\nHost: $address\r\nConnection: close\r\n\r\n");
    $status = (string) fgets($socket);
    fclose($socket);
    if (!str_starts_with($status, 'HTTP/1.1 200')) {
        throw new RuntimeException("GET $api: " . ($status === '' ? 'no answer' : trim($status)));
    }
}

function tls(string $url): void
{
    $s = 1_000_000_000;
    $regulator = Regulator::redis($url, 'php-tls-reg', '1/s', 2);
    $starts = [$regulator->tryAcquire() === 0.0, $regulator->tryAcquire() === 0.0, $regulator->tryAcquire() === 0.0];
    $limit = ConcurrencyLimit::redis($url, 'php-tls-lim', 2, 10.0);
    $permits = [$limit->tryAcquire(), $limit->tryAcquire(), $limit->tryAcquire()];
    $places = array_map(static fn (?Recuo\Permit $p): bool => $p !== null, $permits);
    $budget = RetryBudget::redis($url, 'php-tls-bud', 0.1, 0.5, 10);
    for ($i = 0; $i < 20; $i++) {
        $budget->recordRequestAt(1_000 * $s);
    }
    $granted = 0;
    for ($i = 0; $i < 10; $i++) {
        $granted += (int) $budget->tryWithdrawAt(1_000 * $s);
    }
    $permits[0]?->release();
    $gate = new Gate(Regulator::redis($url, 'php-tls-gate', '100/s', 5), $limit, $budget);
    $sent = Recuo\retry(static fn (): string => 'sent', gate: $gate);
    try {
        ConcurrencyLimit::redis(str_replace(':apppw@', ':nope@', $url), 'php-tls-lim', 2, 10.0);
        $wrong = 'opened';
    } catch (SharedFileError $e) {
        $wrong = $e->getMessage();
    }
    echo json_encode(compact('starts', 'places', 'granted', 'sent', 'wrong'), JSON_THROW_ON_ERROR), "\n";
}

/** @param list<string> $names the regulator's, the limit's and the budget's */
function failover(string $url, string $api, int $endMs, array $names): void
{
    [$regulator, $limit, $budget] = $names;
    $gate = new Gate(
        Regulator::redis($url, $regulator, 30.0, 3),
        ConcurrencyLimit::redis($url, $limit, 2, 2.0),
        RetryBudget::redis($url, $budget, 0.1, 1.0, 10),
    );
    $policy = new Policy(maxAttempts: 3, deadlineMs: 2_000);
    $ops = [];
    while (unix_ms() < $endMs) {
        $at = unix_ms();
        $began = hrtime(true);
        $starts = [];
        try {
            Recuo\retry(static function () use ($api, &$starts): void {
                $starts[] = unix_ms();
                get($api);
            }, $policy, gate: $gate);
            $end = 'ok';
        } catch (SharedFileError $e) {
            $end = $starts === [] ? 'gate_error' : "after an attempt: {$e->getMessage()}";
        } catch (Throwable $e) {
            $waited = $e::class === Error::class
                && $e->getMessage() === 'Recuo\retry(): gave up before the first attempt (wait_exceeds_deadline)';
            $end = $waited && $starts === [] ? 'waited' : $e::class . ": {$e->getMessage()}";
        }
        $ops[] = [$at, intdiv(hrtime(true) - $began, 1_000_000), $end, $starts];
    }
    echo json_encode($ops, JSON_THROW_ON_ERROR), "\n";
}

match ($argv[1] ?? '') {
    'tls' => tls($argv[2]),
    'failover' => failover($argv[2], $argv[3], (int) $argv[4], array_slice($argv, 5, 3)),
    default => throw new InvalidArgumentException('usage: cluster_child.php tls URL | failover URL API END_MS REGULATOR LIMIT BUDGET'),
};
