<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Attempt;
use Recuo\Exception\ConfigError;
use Recuo\Operation;
use Recuo\Policy;
use Recuo\Record;
use Recuo\Verdict;

use function Recuo\backoffWindowMs;
use function Recuo\classify;
use function Recuo\comRetry;
use function Recuo\curlTransport;
use function Recuo\parseRetryAfter;
use function Recuo\redactHeaders;
use function Recuo\redactUrl;
use function Recuo\redactUrlDetailed;
use function Recuo\retry;
use function Recuo\retryDelayMs;
use function Recuo\whoAnswered;

/**
 * Every case of the shared vectors in tests/vectors/, answered by the PHP surface. The Rust,
 * C and Python tests read the same files: all four must agree.
 */
final class VectorsTest extends TestCase
{
    /** @return array<string, array{array<string, mixed>}> */
    public static function retryAfterCases(): array
    {
        return Vectors::cases('retry_after.json', 'cases', static fn (array $c): string => $c['name']);
    }

    /** @dataProvider retryAfterCases */
    public function testRetryAfter(array $case): void
    {
        $parsed = parseRetryAfter($case['value'], $case['now_ms']);
        $this->assertSame($case['kind'], $parsed->kind);
        $this->assertSame($case['wait_ms'], $parsed->waitMs);
    }

    public function testThereAreAtLeastSixtyRetryAfterCases(): void
    {
        $this->assertGreaterThanOrEqual(60, count(Vectors::load('retry_after.json')['cases']));
    }

    /** The vectors hold NUL bytes and non-ASCII text; they must reach the extension as bytes. */
    public function testVectorsWithNulAndNonAsciiArePassedAsBytes(): void
    {
        $values = array_column(Vectors::load('retry_after.json')['cases'], 'value', 'name');
        $this->assertSame("12\0", $values['trailing NUL']);
        $this->assertSame("\0" . '12', $values['leading NUL']);
        $this->assertSame("\u{661}\u{662}", $values['arabic-indic digits']);
        $this->assertSame(4, strlen($values['arabic-indic digits']));
        $this->assertSame('invalid', parseRetryAfter($values['trailing NUL'], 0)->kind);
        // Cut at the NUL, the same bytes would be a valid "12": the length must travel too.
        $this->assertSame('seconds', parseRetryAfter('12', 0)->kind);
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function windowCases(): array
    {
        return Vectors::cases(
            'backoff.json',
            'windows',
            static fn (array $c): string => "base {$c['base_ms']} cap {$c['cap_ms']} n {$c['n']}",
        );
    }

    /** @dataProvider windowCases */
    public function testBackoffWindow(array $case): void
    {
        $this->assertSame(
            $case['window_ms'],
            backoffWindowMs($case['n'], $case['base_ms'], $case['cap_ms']),
        );
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function windowErrorCases(): array
    {
        return Vectors::cases(
            'backoff.json',
            'errors',
            static fn (array $c): string => "base {$c['base_ms']} cap {$c['cap_ms']}",
        );
    }

    /** @dataProvider windowErrorCases */
    public function testBackoffWindowErrors(array $case): void
    {
        $this->assertSame('cap_below_base', $case['error']);
        try {
            backoffWindowMs(0, $case['base_ms'], $case['cap_ms']);
            $this->fail('no ConfigError');
        } catch (ConfigError $e) {
            $this->assertSame(ConfigError::CAP_BELOW_BASE, $e->getCode());
        }
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function retryDelayCases(): array
    {
        return Vectors::cases(
            'seeded.json',
            'retry_delay_ms',
            static fn (array $c): string => sprintf(
                '%s attempt %d seed %d',
                var_export($c['retry_after'], true),
                $c['attempt'],
                $c['seed'],
            ),
        );
    }

    /** @dataProvider retryDelayCases */
    public function testSeededRetryDelay(array $case): void
    {
        $delay = retryDelayMs($case['retry_after'], $case['attempt'], $case['now_ms'], $case['seed']);
        if ($case['unbounded'] ?? false) {
            $this->assertSame(INF, $delay);
        } else {
            $this->assertSame((float) $case['delay_ms'], $delay);
        }
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function comRetryCases(): array
    {
        return Vectors::cases(
            'seeded.json',
            'com_retry',
            static fn (array $c): string => sprintf(
                'seed %d, %d attempts, %d failures',
                $c['seed'],
                $c['tentativas'],
                $c['failures'],
            ),
        );
    }

    /** @dataProvider comRetryCases */
    public function testSeededComRetry(array $case): void
    {
        $calls = 0;
        $sleeps = [];
        $thrown = null;
        $task = static function () use (&$calls, &$thrown, $case): int {
            $calls++;
            if ($calls <= $case['failures']) {
                throw $thrown = new \RuntimeException("failure $calls");
            }
            return $calls;
        };
        $sleep = static function (int $ms) use (&$sleeps): void {
            $sleeps[] = $ms;
        };
        try {
            $result = comRetry($task, $case['tentativas'], $case['base_ms'], $case['max_ms'], null, $case['seed'], $sleep);
            $this->assertSame('ok', $case['outcome']);
            $this->assertSame($case['calls'], $result);
        } catch (\RuntimeException $e) {
            $this->assertSame('error', $case['outcome']);
            $this->assertSame($thrown, $e);
        }
        $this->assertSame($case['calls'], $calls);
        $this->assertSame($case['sleeps_ms'], $sleeps);
    }

    /**
     * A vector's outcome, as `Recuo\classify` takes it: an int is a status, a string a
     * transport failure.
     *
     * @param array<string, mixed> $case
     */
    private static function classifyCase(array $case, int $nowMs, ?Policy $policy = null, ?array $headers = null): Verdict
    {
        $outcome = $case['outcome'];
        return classify(
            status: is_int($outcome) ? $outcome : null,
            error: is_string($outcome) ? $outcome : null,
            method: $case['method'],
            idempotencyKey: $case['idempotency_key'],
            headers: $headers ?? $case['headers'],
            nowMs: $nowMs,
            policy: $policy,
        );
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function classifyCases(): array
    {
        return Vectors::cases('classify.json', 'cases', static fn (array $c): string => $c['name']);
    }

    /** @dataProvider classifyCases */
    public function testClassify(array $case): void
    {
        $expected = [$case['verdict'], $case['reason'], $case['wait_ms'], $case['wait_unbounded']];
        $verdict = self::classifyCase($case, $case['now_ms']);
        $this->assertSame($expected, [$verdict->verdict, $verdict->reason, $verdict->waitMs, $verdict->waitUnbounded]);
        // Guide A's policy has the same rules as no policy at all.
        $verdict = self::classifyCase($case, $case['now_ms'], Policy::guideA());
        $this->assertSame($expected, [$verdict->verdict, $verdict->reason, $verdict->waitMs, $verdict->waitUnbounded]);
        // The same headers as `name => value` and as PSR-7's `name => [values]` answer alike,
        // when no name repeats.
        $names = array_map(static fn (array $pair): string => strtolower($pair[0]), $case['headers']);
        if (count(array_unique($names)) === count($names)) {
            foreach ([false, true] as $lists) {
                $map = [];
                foreach ($case['headers'] as [$name, $value]) {
                    $map[$name] = $lists ? [$value] : $value;
                }
                $verdict = self::classifyCase($case, $case['now_ms'], null, $map);
                $this->assertSame($expected, [$verdict->verdict, $verdict->reason, $verdict->waitMs, $verdict->waitUnbounded]);
            }
        }
    }

    public function testThereAreAtLeastFortyClassifyCases(): void
    {
        $this->assertGreaterThanOrEqual(40, count(Vectors::load('classify.json')['cases']));
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function scenarios(): array
    {
        return Vectors::cases('scenarios.json', 'scenarios', static fn (array $s): string => $s['name']);
    }

    /**
     * Each scenario through `Recuo\Operation` driven by its own clock, as PHP code with its
     * own loop drives it: start (or, after a sleep, `slept()`) at `begin_ms`, classify at the
     * wall clock `now_ms + end_ms`, cancel when asked, then `succeeded()` or `failed()` and
     * `judged()` at `end_ms`; the step answered is the scenario's decision; then the report.
     *
     * @dataProvider scenarios
     */
    public function testScenario(array $scenario): void
    {
        $policy = Vectors::policy($scenario['policy']);
        $op = new Operation($policy, 0);
        foreach ($scenario['steps'] as $i => $step) {
            $begun = $i === 0 ? $op->start($step['begin_ms'], $scenario['now_ms']) : $op->slept($step['begin_ms']);
            $this->assertSame('call', $begun->kind, "step $i");
            $verdict = self::classifyCase($step, $scenario['now_ms'] + $step['end_ms'], $policy);
            if ($step['cancel']) {
                $op->cancel();
            }
            $e = $step['expect'];
            $this->assertSame(
                [
                    $e['decision'],
                    $e['delay_ms'] ?? null,
                    $e['next_attempt'] ?? null,
                    $e['reason'] ?? null,
                    $e['retry_at_ms'] ?? null,
                ],
                ByHand::decision(ByHand::decide($op, $verdict, $step['end_ms'])),
                "step $i",
            );
        }
        $want = $scenario['report'];
        $report = $op->report();
        $this->assertSame(
            [$want['attempts'], $want['reason'], $want['elapsed_ms'], $want['delays_ms']],
            [$report->attempts, $report->reason, $report->elapsedMs, $report->delaysMs],
        );
    }

    public function testThereAreScenariosForEveryDecision(): void
    {
        $kinds = [];
        $reasons = [];
        foreach (Vectors::load('scenarios.json')['scenarios'] as $scenario) {
            foreach ($scenario['steps'] as $step) {
                $kinds[$step['expect']['decision']] = true;
                if (isset($step['expect']['reason'])) {
                    $reasons[$step['expect']['reason']] = true;
                }
            }
        }
        ksort($kinds);
        ksort($reasons);
        $this->assertSame(['done', 'give_up', 'retry'], array_keys($kinds));
        $this->assertSame(
            ['attempts_exhausted', 'cancelled', 'permanent', 'wait_exceeds_deadline'],
            array_keys($reasons),
        );
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function redactionCases(): array
    {
        return Vectors::cases('redaction.json', 'cases', static fn (array $c): string => $c['name']);
    }

    /**
     * The redacted URL, the redacted headers and every record made from them — by
     * `Record::attemptJson()`, by `Record::attempt()`, and by `retry()`'s `$records` sink,
     * the headers reaching it both through `classify()`'s verdict and through
     * `Attempt::recordResponse()` — hold none of the case's secrets; the URL and headers keep
     * what must be kept.
     *
     * @dataProvider redactionCases
     */
    public function testRedaction(array $case): void
    {
        $url = redactUrl($case['url']);
        $this->assertSame(['url' => $url, 'malformed' => $case['malformed']], redactUrlDetailed($case['url']));
        if ($case['redacted_url'] !== null) {
            $this->assertSame($case['redacted_url'], $url);
        }
        $headers = redactHeaders($case['headers']);
        $this->assertSame(array_column($case['headers'], 0), array_column($headers, 0), 'header names are kept, in order');
        $shown = $url;
        foreach ($headers as [$name, $value]) {
            $shown .= "\n$name: $value";
        }
        foreach ($case['keep'] as $keep) {
            $this->assertStringContainsString($keep, $shown);
        }

        $line = Record::attemptJson(0, 1, 'GET', $case['url'], 503, headers: $case['headers'], delayMs: 10, decision: 'retry', reason: 'unavailable');
        $this->assertStringContainsString('"status":503', $line);
        $array = Record::attempt(0, 1, 'GET', $case['url'], 503, headers: $case['headers'], delayMs: 10, decision: 'retry', reason: 'unavailable');
        $this->assertSame(json_decode($line, true), $array);

        $records = [];
        $thrown = new \RuntimeException('Service Unavailable');
        try {
            retry(
                static function (Attempt $attempt) use ($case, $thrown): never {
                    if ($attempt->number === 1) {
                        $attempt->recordResponse(503, $case['headers']);
                    }
                    throw $thrown;
                },
                policy: new Policy(maxAttempts: 2),
                classify: static fn () => classify(503, headers: $case['headers'], nowMs: 0),
                seed: 1,
                sleep: static fn (int $ms) => null,
                records: static function (array $record) use (&$records): void {
                    $records[] = $record;
                },
                method: 'GET',
                url: $case['url'],
            );
            $this->fail('the operation always fails');
        } catch (\RuntimeException $e) {
            $this->assertSame($thrown, $e);
        }
        $this->assertSame(['attempt', 'attempt', 'result'], array_column($records, 'type'));
        $this->assertSame([503, 503], array_column($records, 'status'));
        $this->assertSame(array_fill(0, 3, $url), array_column($records, 'url'));

        $every = [$shown, $line, Texts::of($array), Texts::of($records)];
        foreach ($case['secrets'] as $secret) {
            foreach ($every as $text) {
                $this->assertStringNotContainsString($secret, $text);
            }
        }
    }

    public function testThereAreAtLeastFortyRedactionCases(): void
    {
        $this->assertGreaterThanOrEqual(40, count(Vectors::load('redaction.json')['cases']));
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function originCases(): array
    {
        return Vectors::cases('origin.json', 'cases', static fn (array $c): string => $c['name']);
    }

    /** @dataProvider originCases */
    public function testWhoAnswered(array $case): void
    {
        $who = whoAnswered($case['headers'], $case['expected_content_type']);
        $this->assertSame(
            [$case['origin'], $case['confidence']],
            [$who->origin, $who->confidence],
            implode("\n", $who->evidence),
        );
        $this->assertTrue(array_is_list($who->evidence));
        foreach ($case['evidence_contains'] as $needle) {
            $found = array_filter($who->evidence, static fn (string $line): bool => str_contains($line, $needle));
            $this->assertNotEmpty($found, "no evidence line with \"$needle\" in: " . implode(' | ', $who->evidence));
        }
        foreach ($case['evidence_excludes'] ?? [] as $needle) {
            $found = array_filter($who->evidence, static fn (string $line): bool => str_contains($line, $needle));
            $this->assertEmpty($found, "an evidence line with \"$needle\": " . implode(' | ', $who->evidence));
        }
        // PSR-7's shape (name => list of values) reads the same.
        $psr7 = [];
        foreach ($case['headers'] as [$name, $value]) {
            $psr7[$name][] = $value;
        }
        $again = whoAnswered($psr7, $case['expected_content_type']);
        $this->assertSame([$who->origin, $who->confidence, $who->evidence], [$again->origin, $again->confidence, $again->evidence]);
    }

    public function testThereAreOriginCasesForEveryOrigin(): void
    {
        $cases = Vectors::load('origin.json')['cases'];
        $origins = array_unique(array_column($cases, 'origin'));
        sort($origins);
        $this->assertSame(['api', 'cdn', 'proxy', 'unknown'], $origins);
    }

    /**
     * tests/vectors/curl.json: the one curl table, as `buscarComRetry` and the Guzzle
     * middleware read it (`Internal\Http::curlKind` from curl_getinfo()'s `request_size`).
     */
    public function testCurlCodes(): void
    {
        $codes = Vectors::load('curl.json')['codes'];
        $this->assertGreaterThanOrEqual(60, count($codes));
        foreach ($codes as $c) {
            $this->assertSame($c['kind'], curlTransport($c['code'], $c['sent']), "{$c['name']} ({$c['code']}), sent: " . var_export($c['sent'], true));
            $info = ['request_size' => $c['sent'] ? 120 : 0];
            $this->assertSame($c['kind'], \Recuo\Internal\Http::curlKind($c['code'], $info), $c['name']);
        }
    }
}
