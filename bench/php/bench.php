<?php
// Recuo\comRetry and Recuo\retry beside guide A's pure-PHP comRetry, as ratios in one run.
//
//     php -d extension=target/release/librecuo_php.so bench/php/bench.php OUT.json [ROUNDS]
//     php -d extension=... bench/php/bench.php --loop success|failure NAME N
//
// Two paths, timed in the same process and rounds, the contenders interleaved in an order
// shuffled every round:
// - success: the task returns at once; a contender's extra cost is its time per call minus
//   calling the task directly, in the same round;
// - failure: the task fails 4 times, then succeeds, with no-op sleeps (recuo's `sleep:`, the
//   guide's injected sleep); the extra cost is over the 5 calls and 4 catches made inline.
// Each extra cost is divided by the guide function's in the same round (1.0: as cheap as the
// guide's loop). The figures go to OUT.json for bench/report/build_report.py; progress to
// stderr.

declare(strict_types=1);

const BLOCK_NS = 20_000_000; // the length of one timed block

/** Guide A's comRetry, as the guide writes it (plus `$sleep`, so the failure path can make
 * its waits no-ops as recuo's `sleep:` does). */
function comRetryGuide(
    callable $tarefa,
    int $tentativas = 5,
    int $baseMs = 200,
    int $maxMs = 5000,
    ?callable $repetirSe = null,
    ?callable $sleep = null,
): mixed {
    for ($tentativa = 0; $tentativa < $tentativas; $tentativa++) {
        try {
            return $tarefa();
        } catch (Throwable $erro) {
            if ($tentativa === $tentativas - 1 || ($repetirSe !== null && !$repetirSe($erro))) {
                throw $erro;
            }
            $ms = random_int(0, min($maxMs, $baseMs * 2 ** $tentativa));
            $sleep !== null ? $sleep($ms) : usleep($ms * 1000);
        }
    }
    throw new LogicException('unreachable');
}

/** A task that fails 4 times, then succeeds, over and over. */
function flaky(): Closure
{
    $calls = 0;
    return function () use (&$calls): int {
        $calls++;
        if ($calls % 5 !== 0) {
            throw new RuntimeException('not yet');
        }
        return $calls;
    };
}

// Each contender is a loop over $n calls, so that no wrapper of the bench's own is timed.
function contenders(): array
{
    $ok = fn (): int => 1;
    $noSleep = function (int $ms): void {
    };
    [$inline, $guide, $recuo, $recuoRetry] = [flaky(), flaky(), flaky(), flaky()];
    return [
        'success' => [
            'direct $f()' => function (int $n) use ($ok): void {
                for ($i = 0; $i < $n; $i++) {
                    $ok();
                }
            },
            'guide A comRetry (pure PHP)' => function (int $n) use ($ok): void {
                for ($i = 0; $i < $n; $i++) {
                    comRetryGuide($ok);
                }
            },
            'Recuo\comRetry' => function (int $n) use ($ok): void {
                for ($i = 0; $i < $n; $i++) {
                    Recuo\comRetry($ok);
                }
            },
            'Recuo\retry' => function (int $n) use ($ok): void {
                for ($i = 0; $i < $n; $i++) {
                    Recuo\retry($ok);
                }
            },
        ],
        'failure' => [
            'direct: 5 calls, 4 caught' => function (int $n) use ($inline): void {
                for ($i = 0; $i < $n; $i++) {
                    for ($k = 0; $k < 5; $k++) {
                        try {
                            $inline();
                            break;
                        } catch (Throwable) {
                        }
                    }
                }
            },
            'guide A comRetry (pure PHP)' => function (int $n) use ($guide, $noSleep): void {
                for ($i = 0; $i < $n; $i++) {
                    comRetryGuide($guide, sleep: $noSleep);
                }
            },
            'Recuo\comRetry' => function (int $n) use ($recuo, $noSleep): void {
                for ($i = 0; $i < $n; $i++) {
                    Recuo\comRetry($recuo, sleep: $noSleep);
                }
            },
            'Recuo\retry' => function (int $n) use ($recuoRetry, $noSleep): void {
                for ($i = 0; $i < $n; $i++) {
                    Recuo\retry($recuoRetry, sleep: $noSleep);
                }
            },
        ],
    ];
}

function perCallNs(Closure $run, int $n): float
{
    gc_collect_cycles();
    $start = hrtime(true);
    $run($n);
    return (hrtime(true) - $start) / $n;
}

/** Calls per block, so that a block takes about BLOCK_NS. */
function calibrate(Closure $run): int
{
    for ($n = 100; ; $n *= 4) {
        $spent = perCallNs($run, $n) * $n;
        if ($spent > BLOCK_NS / 4) {
            return max(100, intdiv($n * BLOCK_NS, (int) $spent));
        }
    }
}

/** Per round: every contender's extra cost over the direct baseline (the first entry). */
function measure(string $path, array $contenders, int $rounds): array
{
    $names = array_keys($contenders);
    $baseline = $names[0];
    $calls = array_map(calibrate(...), $contenders);
    $extra = array_fill_keys(array_slice($names, 1), []);
    $baseNs = [];
    $order = $names;
    for ($r = 1; $r <= $rounds; $r++) {
        shuffle($order);
        $ns = [];
        foreach ($order as $name) {
            $ns[$name] = perCallNs($contenders[$name], $calls[$name]);
        }
        $baseNs[] = $ns[$baseline];
        foreach (array_slice($names, 1) as $name) {
            $extra[$name][] = $ns[$name] - $ns[$baseline];
        }
        fwrite(STDERR, "php $path: round $r/$rounds\n");
    }
    return ['baseline' => $baseline, 'baseline_ns' => $baseNs, 'extra_ns' => $extra];
}

if (!extension_loaded('recuo')) {
    throw new RuntimeException('load the release build: php -d extension=target/release/librecuo_php.so');
}
$all = contenders();
if (($argv[1] ?? '') === '--loop') {
    // `--loop PATH NAME N`: only N calls of one contender, for a profiler (make bench-profile).
    [, , $path, $name, $n] = $argv;
    $all[$path][$name]((int) $n);
    exit(0);
}
$out = $argv[1] ?? throw new InvalidArgumentException('usage: bench.php OUT.json [ROUNDS]');
$rounds = (int) ($argv[2] ?? 20);
$results = [
    'php' => PHP_VERSION,
    'recuo' => Recuo\VERSION,
    'rounds' => $rounds,
    'success' => measure('success path', $all['success'], $rounds),
    'failure' => measure('failure path', $all['failure'], $rounds),
];
file_put_contents($out, json_encode($results, JSON_PRETTY_PRINT | JSON_THROW_ON_ERROR));
