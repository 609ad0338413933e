<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Attempt;
use Recuo\Gate;
use Recuo\Policy;
use Recuo\Record;
use Recuo\Regulator;
use Recuo\Report;

use function Recuo\classify;
use function Recuo\comRetry;
use function Recuo\retry;
use function Recuo\runBatch;

/** What an HTTP client throws: the status and the response's headers. */
final class ResponseFailure extends \RuntimeException
{
    /** @param array<mixed> $headers */
    public function __construct(public readonly int $status, public readonly array $headers = [])
    {
        parent::__construct("HTTP $status");
    }
}

/**
 * The `$records` sink of `retry()`, `comRetry()` and `runBatch()`, and `Recuo\Record` for
 * loops of one's own: the core's records of SPEC §7, redacted before PHP sees them.
 */
final class RecordsTest extends TestCase
{
    use Throws;

    private const URL = 'https://alice:hunter2@api.example.com/v1/users/ana@example.com/payments?api_key=AK123&page=2';
    private const REDACTED = 'https://api.example.com/v1/users/[email]/payments?api_key=[redacted]&page=2';
    private const SECRETS = ['alice', 'hunter2', 'ana@', 'AK123', 's3cr3t', 'sid=', 'tok-9', 'Bearer', 't0k', 'pw@'];

    /** @var list<array<string, mixed>> */
    private array $records = [];

    private function sink(): \Closure
    {
        return function (array $record): void {
            $this->records[] = $record;
        };
    }

    /**
     * The records with their clock readings checked and set aside: `start` is an RFC 3339
     * instant of this test, `elapsed_ms` and `total_ms` small whole milliseconds (the sleeps
     * are injected, so nothing takes long).
     *
     * @param list<array<string, mixed>> $records
     * @return list<array<string, mixed>>
     */
    private static function timeless(array $records, int $fromMs, int $toMs): array
    {
        foreach ($records as &$record) {
            $start = \DateTimeImmutable::createFromFormat('Y-m-d\TH:i:s.v\Z', $record['start'], new \DateTimeZone('UTC'));
            self::assertNotFalse($start, $record['start']);
            $ms = (int) $start->format('Uv');
            self::assertGreaterThanOrEqual($fromMs, $ms);
            self::assertLessThanOrEqual($toMs, $ms);
            $record['start'] = 'T';
            foreach (['elapsed_ms', 'total_ms'] as $field) {
                if (array_key_exists($field, $record)) {
                    self::assertIsInt($record[$field]);
                    self::assertGreaterThanOrEqual(0, $record[$field]);
                    self::assertLessThan(1000, $record[$field]);
                    $record[$field] = 0;
                }
            }
        }
        return $records;
    }

    private static function nowMs(): int
    {
        return (int) floor(microtime(true) * 1000);
    }

    /** A seeded run with an injected sleep: the attempts, then the result, exactly. */
    public function testTheRecordsOfASeededRunAreExact(): void
    {
        $answers = [
            [503, ['Retry-After' => '1', 'X-Request-Id' => 'req-0', 'Set-Cookie' => 'sid=s3cr3t']],
            [429, [['RateLimit-Remaining', '0'], ['RateLimit-Reset', '2'], ['CF-Ray', 'ray-1'], ['Authorization', 'Bearer tok-9']]],
            [201, ['X-Request-Id' => ['req-2'], 'Location' => 'https://u:pw@api.example.com/v1/payments/7?token=t0k']],
        ];
        $sleeps = [];
        $from = self::nowMs();
        $value = retry(
            static function (Attempt $attempt) use (&$answers): string {
                [$status, $headers] = array_shift($answers);
                if ($status >= 400) {
                    throw new ResponseFailure($status, $headers);
                }
                $attempt->recordResponse($status, $headers);
                return 'created';
            },
            policy: new Policy(baseMs: 100, capMs: 1000),
            classify: static fn (ResponseFailure $e) => classify($e->status, method: 'POST', idempotencyKey: true, headers: $e->headers, nowMs: 0),
            seed: 7,
            sleep: static function (int $ms) use (&$sleeps): void {
                $sleeps[] = $ms;
            },
            records: $this->sink(),
            method: 'POST',
            url: self::URL,
        );
        $to = self::nowMs() + 1;
        $this->assertSame('created', $value);
        $this->assertSame([1003, 2061], $sleeps);
        $attempt = static fn (array $fields): array => ['type' => 'attempt', 'start' => 'T', 'elapsed_ms' => 0, 'method' => 'POST', 'url' => self::REDACTED] + $fields;
        $this->assertSame(
            [
                $attempt(['status' => 503, 'request_id' => 'req-0', 'wait_headers' => ['Retry-After' => '1'], 'delay_ms' => 1003, 'decision' => 'retry', 'reason' => 'unavailable']),
                $attempt(['status' => 429, 'request_id' => 'ray-1', 'wait_headers' => ['RateLimit-Remaining' => '0', 'RateLimit-Reset' => '2'], 'delay_ms' => 2061, 'decision' => 'retry', 'reason' => 'rate_limited']),
                $attempt(['status' => 201, 'request_id' => 'req-2', 'wait_headers' => [], 'delay_ms' => null, 'decision' => 'done', 'reason' => 'success']),
                ['type' => 'result', 'start' => 'T', 'method' => 'POST', 'url' => self::REDACTED, 'result' => 'success', 'attempts' => 3, 'reason' => null, 'total_ms' => 0],
            ],
            self::timeless($this->records, $from, $to),
        );
        // Every record starts when its attempt did; the result when the first did.
        $this->assertSame($this->records[0]['start'], $this->records[3]['start']);
        $text = Texts::of($this->records);
        foreach (self::SECRETS as $secret) {
            $this->assertStringNotContainsString($secret, $text);
        }
    }

    /** Each record is the core's JSON line, decoded: `json_encode` gives the line back. */
    public function testARecordIsTheCoresJsonLineDecoded(): void
    {
        $e = $this->thrownBy(fn () => retry(
            static function (Attempt $attempt): never {
                throw new ResponseFailure(429, ['Retry-After' => '12', 'X-RateLimit-Remaining' => '0', 'X-Request-Id' => 'req-7']);
            },
            policy: new Policy(maxAttempts: 1),
            classify: static fn (ResponseFailure $e) => classify($e->status, headers: $e->headers, nowMs: 0),
            records: $this->sink(),
            method: 'GET',
            url: 'https://u:pw@api.example.com/users/ana@example.com?api_key=k1&page=2',
        ));
        $this->assertInstanceOf(ResponseFailure::class, $e);
        [$attempt, $result] = $this->records;
        $line = json_encode($attempt, JSON_FORCE_OBJECT | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
        $expected = Record::attemptJson(
            (int) (new \DateTimeImmutable($attempt['start']))->format('Uv'),
            $attempt['elapsed_ms'],
            'GET',
            'https://u:pw@api.example.com/users/ana@example.com?api_key=k1&page=2',
            429,
            headers: ['Retry-After' => '12', 'X-RateLimit-Remaining' => '0', 'X-Request-Id' => 'req-7'],
            decision: 'give_up',
            reason: 'attempts_exhausted',
        );
        $this->assertSame($expected, $line);
        $this->assertSame(
            Record::resultJson(
                (int) (new \DateTimeImmutable($result['start']))->format('Uv'),
                'GET',
                'https://api.example.com/users/[email]?api_key=[redacted]&page=2',
                1,
                $result['total_ms'],
                'attempts_exhausted',
            ),
            json_encode($result, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE),
        );
    }

    /** @return array<string, array{int, string, bool, string, string}> */
    public static function givingUp(): array
    {
        return [
            // The verdict gave up: its cause says more than the loop's `permanent`.
            '404' => [404, 'GET', false, 'permanent', 'permanent'],
            'POST without a key' => [500, 'POST', false, 'not_idempotent', 'permanent'],
            // The loop gave up on a verdict that would retry: its own reason.
            'attempts spent' => [503, 'GET', false, 'attempts_exhausted', 'attempts_exhausted'],
        ];
    }

    /** @dataProvider givingUp */
    public function testTheLastAttemptSaysWhyItGaveUp(int $status, string $method, bool $key, string $attemptReason, string $resultReason): void
    {
        $thrown = new ResponseFailure($status);
        $e = $this->thrownBy(fn () => retry(
            static fn () => throw $thrown,
            policy: new Policy(maxAttempts: 2, baseMs: 10, capMs: 10, jitter: 'none'),
            classify: static fn (ResponseFailure $e) => classify($e->status, method: $method, idempotencyKey: $key),
            sleep: static fn (int $ms) => null,
            records: $this->sink(),
            method: $method,
            url: '/orders',
        ));
        $this->assertSame($thrown, $e);
        $last = $this->records[count($this->records) - 2];
        $result = $this->records[count($this->records) - 1];
        $this->assertSame(['attempt', 'give_up', $attemptReason, null, $status], [$last['type'], $last['decision'], $last['reason'], $last['delay_ms'], $last['status']]);
        $this->assertSame(['result', 'gave_up', $resultReason], [$result['type'], $result['result'], $result['reason']]);
        $this->assertSame(count($this->records) - 1, $result['attempts']);
    }

    /** A wait past the deadline gives up at once: no delay, the loop's reason. */
    public function testAWaitPastTheDeadline(): void
    {
        $this->thrownBy(fn () => retry(
            static fn () => throw new ResponseFailure(429, ['Retry-After' => '86400']),
            policy: Policy::guideB(),
            classify: static fn (ResponseFailure $e) => classify($e->status, headers: $e->headers),
            records: $this->sink(),
        ));
        $this->assertSame(
            [['attempt', 429, ['Retry-After' => '86400'], null, 'give_up', 'wait_exceeds_deadline'], ['result', 'wait_exceeds_deadline', 1]],
            [
                [$this->records[0]['type'], $this->records[0]['status'], $this->records[0]['wait_headers'], $this->records[0]['delay_ms'], $this->records[0]['decision'], $this->records[0]['reason']],
                [$this->records[1]['type'], $this->records[1]['reason'], $this->records[1]['attempts']],
            ],
        );
        // Without `method:` and `url:`, an operation with no HTTP meaning.
        $this->assertSame(['', ''], [$this->records[0]['method'], $this->records[0]['url']]);
    }

    /** Each attempt's record comes once its decision is known: before the hooks. */
    public function testRecordsComeBeforeTheHooks(): void
    {
        $events = [];
        $this->thrownBy(static function () use (&$events): void {
            retry(
                static function (Attempt $attempt) use (&$events): never {
                    $events[] = "attempt $attempt->number";
                    throw new \RuntimeException('down');
                },
                policy: new Policy(maxAttempts: 3),
                onRetry: static function (int $attempt) use (&$events): void {
                    $events[] = "onRetry $attempt";
                },
                onGiveUp: static function (Report $report) use (&$events): void {
                    $events[] = "onGiveUp $report->reason";
                },
                seed: 3,
                sleep: static function (int $ms) use (&$events): void {
                    $events[] = 'sleep';
                },
                records: static function (array $record) use (&$events): void {
                    $events[] = "record $record[type] " . ($record['decision'] ?? $record['result']);
                },
            );
        });
        $this->assertSame(
            [
                'attempt 0', 'record attempt retry', 'onRetry 0', 'sleep',
                'attempt 1', 'record attempt retry', 'onRetry 1', 'sleep',
                'attempt 2', 'record attempt give_up', 'record result gave_up', 'onGiveUp attempts_exhausted',
            ],
            $events,
        );
    }

    /** What the attempt says it sent and received wins over the loop's request and the verdict's headers. */
    public function testTheAttemptSaysWhatItSentAndReceived(): void
    {
        $this->thrownBy(fn () => retry(
            static function (Attempt $attempt): never {
                if ($attempt->number === 1) {
                    $attempt->recordRequest('PUT', "https://api.example.com/v2/items/1?token=second");
                    $attempt->recordResponse(502, ['X-Correlation-Id' => 'corr-1']);
                }
                throw new ResponseFailure(503, ['X-Request-Id' => 'from-classify']);
            },
            policy: new Policy(maxAttempts: 2),
            classify: static fn (ResponseFailure $e) => classify($e->status, headers: $e->headers),
            seed: 1,
            sleep: static fn (int $ms) => null,
            records: $this->sink(),
            method: 'GET',
            url: 'https://api.example.com/v1/items/1?token=first',
        ));
        $fields = static fn (array $r): array => [$r['method'], $r['url'], $r['status'] ?? null, $r['request_id'] ?? null];
        $this->assertSame(
            [
                ['GET', 'https://api.example.com/v1/items/1?token=[redacted]', 503, 'from-classify'],
                ['PUT', 'https://api.example.com/v2/items/1?token=[redacted]', 502, 'corr-1'],
                // The result describes the request the last attempt sent.
                ['PUT', 'https://api.example.com/v2/items/1?token=[redacted]', null, null],
            ],
            array_map($fields, $this->records),
        );
    }

    /** A failure nothing says more about is the transport kind `other`; a bare success is `outcome: success`. */
    public function testOutcomesWithNoHttpMeaning(): void
    {
        $calls = 0;
        $value = comRetry(
            static function () use (&$calls): int {
                if (++$calls < 2) {
                    throw new \RuntimeException('flaky');
                }
                return 42;
            },
            seed: 5,
            sleep: static fn (int $ms) => null,
            records: $this->sink(),
            method: 'GET',
            url: 'https://h.example.com/x?session=abc',
        );
        $this->assertSame(42, $value);
        [$failed, $succeeded, $result] = $this->records;
        $this->assertSame(['other', 'retry', 'server_error'], [$failed['transport'], $failed['decision'], $failed['reason']]);
        $this->assertArrayNotHasKey('status', $failed);
        $this->assertSame(['success', 'done', 'success', null], [$succeeded['outcome'], $succeeded['decision'], $succeeded['reason'], $succeeded['request_id']]);
        $this->assertSame(['success', 2, 'https://h.example.com/x?session=[redacted]'], [$result['result'], $result['attempts'], $result['url']]);
    }

    /** Guide A's `$repetirSe` answering no: the attempt gives up, `permanent`. */
    public function testComRetryRecordsAPermanentFailure(): void
    {
        $this->thrownBy(fn () => comRetry(
            static fn () => throw new \DomainException('bad input'),
            repetirSe: static fn (\Throwable $e) => !$e instanceof \DomainException,
            records: $this->sink(),
        ));
        $this->assertSame(
            [['attempt', 'give_up', 'permanent', 'other'], ['result', 'gave_up', 'permanent', 1]],
            [
                [$this->records[0]['type'], $this->records[0]['decision'], $this->records[0]['reason'], $this->records[0]['transport']],
                [$this->records[1]['type'], $this->records[1]['result'], $this->records[1]['reason'], $this->records[1]['attempts']],
            ],
        );
    }

    /**
     * SPEC §6 step 3: the last attempt's failure is judged too, with records or without: a
     * final 429 is counted in the stats, its status and headers are recorded, and the loop
     * gives up `attempts_exhausted` (it would retry, but no attempt is left).
     */
    public function testTheLastFailureIsJudged(): void
    {
        $run = function (bool $withRecords): array {
            $asked = 0;
            $this->records = [];
            $report = runBatch(
                [static fn () => throw new ResponseFailure(429, ['Retry-After' => '1'])],
                policy: new Policy(maxAttempts: 1),
                classify: static function (ResponseFailure $e) use (&$asked) {
                    $asked++;
                    return classify($e->status, headers: $e->headers, nowMs: 0);
                },
                records: $withRecords ? $this->sink() : null,
            );
            return [$asked, $report->results[0]->reason, $report->stats->throttled];
        };
        $this->assertSame([1, 'attempts_exhausted', 1], $run(false));
        $this->assertSame([1, 'attempts_exhausted', 1], $run(true));
        $this->assertSame(
            [429, ['Retry-After' => '1'], 'give_up', 'attempts_exhausted'],
            [$this->records[0]['status'], $this->records[0]['wait_headers'], $this->records[0]['decision'], $this->records[0]['reason']],
        );
        // A `Throwable` from that question ends the loop as `$classify`'s always does.
        $boom = new \LogicException('classifier down');
        $this->assertSame($boom, $this->thrownBy(fn () => retry(
            static fn () => throw new \RuntimeException('down'),
            policy: new Policy(maxAttempts: 1),
            classify: static fn () => throw $boom,
            records: $this->sink(),
        )));
    }

    /** The transport failure `classify()` judged is the attempt's. */
    public function testATransportFailureFromClassify(): void
    {
        $this->thrownBy(fn () => retry(
            static fn () => throw new \RuntimeException('connection refused'),
            policy: new Policy(maxAttempts: 1),
            classify: static fn () => classify(error: 'connect', method: 'POST'),
            records: $this->sink(),
            method: 'POST',
            url: '/pay',
        ));
        $this->assertSame(['connect', 'give_up', 'attempts_exhausted'], [$this->records[0]['transport'], $this->records[0]['decision'], $this->records[0]['reason']]);
    }

    /** Every operation of a batch: its attempts, its result; one the deadline kept from starting: a result of its own. */
    public function testBatchRecords(): void
    {
        $operations = [];
        foreach (['alice', 'bob', 'carol'] as $user) {
            $operations[$user] = static function (Attempt $attempt) use ($user): string {
                $attempt->recordRequest('GET', "https://$user:secret-$user@api.example.com/users/$user");
                if ($user === 'alice' && $attempt->number === 0) {
                    throw new ResponseFailure(503);
                }
                $attempt->recordResponse(200);
                return "synced $user";
            };
        }
        $report = runBatch(
            $operations,
            policy: new Policy(baseMs: 1, capMs: 1),
            gate: new Gate(new Regulator('1/min', burst: 3)),
            deadline: 0.2,
            classify: static fn (ResponseFailure $e) => classify($e->status),
            seed: 2,
            sleep: static fn (int $ms) => null,
            records: $this->sink(),
        );
        $this->assertSame(['succeeded', 'succeeded', 'not_started'], array_map(static fn ($r) => $r->status, array_values($report->results)));
        $summary = array_map(
            static fn (array $r): string => $r['type'] === 'attempt'
                ? "attempt $r[url] " . ($r['status'] ?? '-') . " $r[decision]"
                : "result $r[url] $r[result] $r[attempts] " . ($r['reason'] ?? '-'),
            $this->records,
        );
        $this->assertSame(
            [
                'attempt https://api.example.com/users/alice 503 retry',
                'attempt https://api.example.com/users/alice 200 done',
                'result https://api.example.com/users/alice success 2 -',
                'attempt https://api.example.com/users/bob 200 done',
                'result https://api.example.com/users/bob success 1 -',
                'result  gave_up 0 wait_exceeds_deadline',
            ],
            $summary,
        );
        $this->assertStringNotContainsString('secret-', Texts::of($this->records));
    }

    /** A `Throwable` from the sink ends the loop and propagates, as a hook's does. */
    public function testASinkThatThrows(): void
    {
        $boom = new \LogicException('the log is full');
        $calls = 0;
        // On the first attempt's record: no second attempt.
        $e = $this->thrownBy(static function () use (&$calls, $boom): void {
            retry(
                static function () use (&$calls): never {
                    $calls++;
                    throw new \RuntimeException('down');
                },
                sleep: static fn (int $ms) => null,
                records: static fn (array $r) => throw $boom,
            );
        });
        $this->assertSame([$boom, 1], [$e, $calls]);
        // On a success's records: the value is lost, the sink's failure propagates.
        $this->assertSame($boom, $this->thrownBy(static fn () => retry(static fn () => 1, records: static fn (array $r) => throw $boom)));
        // On giving up: it replaces the operation's failure, and `$onGiveUp` is not called.
        $gaveUp = false;
        $e = $this->thrownBy(static function () use (&$gaveUp, $boom): void {
            retry(
                static fn () => throw new \RuntimeException('down'),
                policy: new Policy(maxAttempts: 1),
                onGiveUp: static function () use (&$gaveUp): void {
                    $gaveUp = true;
                },
                records: static fn (array $r) => $r['type'] === 'result' ? throw $boom : null,
            );
        });
        $this->assertSame([$boom, false], [$e, $gaveUp]);
        // In a batch: it ends the batch.
        $this->assertSame($boom, $this->thrownBy(static fn () => runBatch([static fn () => 1], records: static fn (array $r) => throw $boom)));
    }

    /** A record's URL is given as bytes: what is not UTF-8 is percent-encoded, never passed on raw. */
    public function testNonUtf8InTheRequest(): void
    {
        retry(
            static fn () => 1,
            records: $this->sink(),
            method: "G\xffT",
            url: "https://api.example.com/users/\xe9mile@example.com/x\xfe?token=\xff\xfe",
        );
        $this->assertSame('https://api.example.com/users/[email]/x%FE?token=[redacted]', $this->records[0]['url']);
        $this->assertSame("G\u{FFFD}T", $this->records[0]['method']);
        foreach ($this->records as $record) {
            $this->assertTrue(mb_check_encoding(Texts::of($record), 'UTF-8'));
        }
    }

    public function testRecordAttemptAndResultForALoopOfOnesOwn(): void
    {
        // docs/records.md's example, made by PHP code.
        $headers = [
            'Authorization' => 'Bearer s3cr3t',
            'Retry-After' => '12',
            'X-RateLimit-Remaining' => '0',
            'X-Request-Id' => 'req-7',
            'Set-Cookie' => 'sid=abc',
        ];
        $line = Record::attemptJson(
            784_111_777_123,
            250,
            'GET',
            'https://u:pw@api.example.com/users/ana@example.com?api_key=k1&page=2',
            429,
            headers: $headers,
            delayMs: 12_345,
            decision: 'retry',
            reason: 'rate_limited',
        );
        $this->assertSame(
            '{"type":"attempt","start":"1994-11-06T08:49:37.123Z","elapsed_ms":250,"method":"GET","url":"https://api.example.com/users/[email]?api_key=[redacted]&page=2","status":429,"request_id":"req-7","wait_headers":{"Retry-After":"12","X-RateLimit-Remaining":"0"},"delay_ms":12345,"decision":"retry","reason":"rate_limited"}',
            $line,
        );
        $this->assertSame(
            json_decode($line, true),
            Record::attempt(784_111_777_123, 250, 'GET', 'https://u:pw@api.example.com/users/ana@example.com?api_key=k1&page=2', 429, headers: $headers, delayMs: 12_345, decision: 'retry', reason: 'rate_limited'),
        );
        $this->assertSame(
            '{"type":"result","start":"1970-01-01T00:00:00.000Z","method":"POST","url":"/pay?token=[redacted]","result":"gave_up","attempts":5,"reason":"attempts_exhausted","total_ms":1234}',
            Record::resultJson(0, 'POST', '/pay?token=x"y', 5, 1234, 'attempts_exhausted'),
        );
        $this->assertSame(
            ['type' => 'result', 'start' => '1970-01-01T00:00:00.001Z', 'method' => 'GET', 'url' => '/', 'result' => 'success', 'attempts' => 1, 'reason' => null, 'total_ms' => 0],
            Record::result(1, 'GET', '/', 1, 0),
        );
        // A transport failure, a malformed URL, a bare success, a date before 1970.
        $this->assertSame(
            '{"type":"attempt","start":"1969-12-31T23:59:59.999Z","elapsed_ms":0,"method":"GET","url":"/a\n\"b\\\\","url_malformed":true,"transport":"reset","request_id":null,"wait_headers":{},"delay_ms":null,"decision":"give_up","reason":"not_idempotent"}',
            Record::attemptJson(-1, 0, 'GET', "/a\n\"b\\", error: 'reset', decision: 'give_up', reason: 'not_idempotent'),
        );
        $this->assertSame(['success', 'done', 'success'], [
            Record::attempt(0, 0, '', '')['outcome'],
            Record::attempt(0, 0, '', '')['decision'],
            Record::attempt(0, 0, '', '')['reason'],
        ]);
    }

    /** @return array<string, array{\Closure, class-string<\Throwable>, string}> */
    public static function badRecords(): array
    {
        return [
            'status and error' => [static fn () => Record::attempt(0, 0, 'GET', '/', 500, 'timeout'), \ValueError::class, 'Recuo\Record::attempt(): at most one of Argument #5 ($status) and Argument #6 ($error) may be given'],
            'status out of range' => [static fn () => Record::attempt(0, 0, 'GET', '/', 1000), \ValueError::class, 'Recuo\Record::attempt(): Argument #5 ($status) must be between 100 and 999'],
            'unknown error' => [static fn () => Record::attemptJson(0, 0, 'GET', '/', error: 'dns'), \ValueError::class, 'Recuo\Record::attemptJson(): Argument #6 ($error) must be null or "connect", "tls", "timeout", "reset" or "other"'],
            'negative elapsed' => [static fn () => Record::attempt(0, -1, 'GET', '/'), \ValueError::class, 'Argument #2 ($elapsedMs) must be greater than or equal to 0'],
            'negative delay' => [static fn () => Record::attempt(0, 0, 'GET', '/', delayMs: -5), \ValueError::class, 'Argument #8 ($delayMs) must be greater than or equal to 0'],
            'unknown decision' => [static fn () => Record::attempt(0, 0, 'GET', '/', decision: 'maybe'), \ValueError::class, 'Argument #9 ($decision) must be "done", "retry" or "give_up"'],
            // A free-text reason could carry an exception's message, secrets and all.
            'free-text reason' => [static fn () => Record::attempt(0, 0, 'GET', '/', reason: 'token abc expired'), \ValueError::class, 'Argument #10 ($reason) must be a verdict\'s reason'],
            'bad headers' => [static fn () => Record::attempt(0, 0, 'GET', '/', headers: [['a']]), \TypeError::class, 'Recuo\Record::attempt(): Argument #7 ($headers) must map header names'],
            'unknown result reason' => [static fn () => Record::result(0, 'GET', '/', 1, 0, 'success'), \ValueError::class, 'Recuo\Record::result(): Argument #6 ($reason) must be null, "permanent", "attempts_exhausted", "wait_exceeds_deadline", "budget_exhausted", "cancelled" or "queue_stopped"'],
            'negative attempts' => [static fn () => Record::resultJson(0, 'GET', '/', -1, 0), \ValueError::class, 'Argument #4 ($attempts) must be between 0 and 4294967295'],
            'negative total' => [static fn () => Record::result(0, 'GET', '/', 1, -1), \ValueError::class, 'Argument #5 ($totalMs) must be greater than or equal to 0'],
            'response status' => [static fn () => retry(static fn (Attempt $a) => $a->recordResponse(99), policy: new Policy(maxAttempts: 1)), \ValueError::class, 'Recuo\Attempt::recordResponse(): Argument #1 ($status) must be between 100 and 999'],
            'response headers' => [static fn () => retry(static fn (Attempt $a) => $a->recordResponse(200, [1.5]), policy: new Policy(maxAttempts: 1)), \TypeError::class, 'Recuo\Attempt::recordResponse(): Argument #2 ($headers)'],
            'records not callable' => [static fn () => retry(static fn () => 1, records: 'no_such_function'), \TypeError::class, 'records'],
        ];
    }

    /**
     * @dataProvider badRecords
     * @param class-string<\Throwable> $class
     */
    public function testBadInput(\Closure $call, string $class, string $message): void
    {
        $e = $this->thrownBy($call);
        $this->assertInstanceOf($class, $e);
        $this->assertStringContainsString($message, $e->getMessage());
    }

    /** Only the records' own classes: `Record` has static methods only. */
    public function testRecordIsNotConstructible(): void
    {
        $this->assertTrue((new \ReflectionClass(Record::class))->isFinal());
        $this->assertInstanceOf(\Error::class, $this->thrownBy(static fn () => new Record()));
    }
}
