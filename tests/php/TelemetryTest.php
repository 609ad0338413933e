<?php

declare(strict_types=1);

namespace RecuoTests;

require_once __DIR__ . '/support/http.php';
require_once '/usr/share/php/Monolog/autoload.php';

use GuzzleHttp\Client;
use GuzzleHttp\HandlerStack;
use GuzzleHttp\Promise\Create;
use GuzzleHttp\Psr7\Request;
use GuzzleHttp\Psr7\Response;
use Monolog\Handler\TestHandler;
use Monolog\Logger;
use PHPUnit\Framework\TestCase;
use Psr\Http\Message\RequestInterface;
use Recuo\Guzzle\RetryMiddleware;
use Recuo\Policy;

/**
 * Telemetry in PHP: tests/vectors/telemetry.json through the extension; then the Guzzle
 * middleware with Monolog (a real PSR-3 logger) and a metrics callback, for a request
 * retried twice after 503s: the records in the log, the points under the Prometheus names.
 */
final class TelemetryTest extends TestCase
{
    public function testEachRecordMeansTheCoresSpanAndPoints(): void
    {
        $doc = Vectors::load('telemetry.json');
        $this->assertCount(10, $doc['cases']);
        foreach ($doc['cases'] as $case) {
            $got = json_decode(\Recuo\telemetryOf(json_encode($case['record'], JSON_THROW_ON_ERROR)), true, 512, JSON_THROW_ON_ERROR);
            $this->assertEquals($case['span'], $got['span'], $case['name']);
            $this->assertEquals($case['points'], $got['points'], $case['name']);
        }
        $this->expectException(\ValueError::class);
        \Recuo\telemetryOf('{"type": "result", "reason": "tired"}');
    }

    public function testGuzzleWithMonologAndAMetricsCallback(): void
    {
        $log = new TestHandler();
        $logger = new Logger('recuo', [$log]);
        $points = [];
        $metrics = static function (string $name, float $value, array $labels) use (&$points): void {
            $points[] = [$name, $value, $labels];
        };
        $answers = [new Response(503, ['Retry-After' => '0']), new Response(503, ['Retry-After' => '0']), new Response(200)];
        $handler = static function (RequestInterface $request, array $options) use (&$answers) {
            return Create::promiseFor(array_shift($answers));
        };
        $middleware = new RetryMiddleware($handler, Policy::adapters(), null, $logger, 7, null, $metrics);
        $response = $middleware(new Request('GET', 'https://api.example/items?token=s3cr3t'), [])->wait();
        $this->assertSame(200, $response->getStatusCode());
        // Monolog got every record: three attempts and the result, none with the token.
        $this->assertCount(4, $log->getRecords());
        foreach ($log->getRecords() as $record) {
            $this->assertStringNotContainsString('s3cr3t', $record['message']);
        }
        $this->assertSame('retry', $log->getRecords()[0]['context']['decision']);
        $names = array_column($points, 0);
        $this->assertSame(
            ['recuo_attempts_total', 'recuo_retry_delay_seconds', 'recuo_attempts_total', 'recuo_retry_delay_seconds', 'recuo_attempts_total'],
            $names,
        );
        $this->assertSame(['recuo_outcome' => '503', 'recuo_reason' => 'unavailable'], $points[0][2]);
        $this->assertSame(['recuo_reason' => 'unavailable', 'recuo_wait_source' => 'server'], $points[1][2]);
        $this->assertSame(['recuo_outcome' => '200', 'recuo_reason' => 'success'], $points[4][2]);
        $this->assertSame(1.0, $points[0][1]);
        $this->assertGreaterThanOrEqual(0.0, $points[1][1]);
        $this->assertLessThanOrEqual(1.0, $points[1][1], 'Retry-After 0 plus a spread of at most 1 s');
    }

    public function testAMetricsCallbackAloneKeepsTheRecordsItNeeds(): void
    {
        $points = [];
        $answers = [new Response(200)];
        $handler = static function (RequestInterface $request, array $options) use (&$answers) {
            return Create::promiseFor(array_shift($answers));
        };
        $stack = HandlerStack::create($handler);
        $stack->push(\Recuo\Guzzle\retry(metrics: static function (string $name, float $value, array $labels) use (&$points): void {
            $points[] = $name;
        }));
        $client = new Client(['handler' => $stack]);
        $this->assertSame(200, $client->request('GET', 'https://api.example/')->getStatusCode());
        $this->assertSame(['recuo_attempts_total'], $points);
    }

    public function testTheExtensionsLoopsTakeAMetricsCallbackToo(): void
    {
        $points = [];
        $metrics = static function (string $name, float $value, array $labels) use (&$points): void {
            $points[] = [$name, $value, $labels];
        };
        $calls = 0;
        $value = \Recuo\retry(
            static function () use (&$calls) {
                if (++$calls < 3) {
                    throw new \RuntimeException('down');
                }
                return 'ok';
            },
            new Policy(3, 1, 1, 'none'),
            sleep: static fn (int $ms) => true,
            metrics: $metrics,
        );
        $this->assertSame('ok', $value);
        $this->assertSame(
            ['recuo_attempts_total', 'recuo_retry_delay_seconds', 'recuo_attempts_total', 'recuo_retry_delay_seconds', 'recuo_attempts_total'],
            array_column($points, 0),
        );
        $this->assertSame(['recuo_outcome' => 'other', 'recuo_reason' => 'server_error'], $points[0][2]);
        $this->assertSame(['recuo_reason' => 'server_error', 'recuo_wait_source' => 'backoff'], $points[1][2]);
        $this->assertSame(0.001, $points[1][1]);

        $points = [];
        $report = \Recuo\runBatch(
            [static fn () => 1, static function () {
                throw new \RuntimeException('no');
            }],
            new Policy(1, 1, 1, 'none'),
            metrics: $metrics,
        );
        $this->assertCount(2, $report->results);
        $this->assertSame(['recuo_attempts_total', 'recuo_attempts_total', 'recuo_give_ups_total'], array_column($points, 0));
        $this->assertSame(['recuo_reason' => 'attempts_exhausted'], $points[2][2]);

        $this->expectException(\RuntimeException::class);
        \Recuo\retry(static fn () => 1, metrics: static function (): void {
            throw new \RuntimeException('the callback failed');
        });
    }

    public function testBuscarComRetryTakesALoggerAndAMetricsCallback(): void
    {
        $log = new TestHandler();
        $points = [];
        try {
            \Recuo\buscarComRetry('http://127.0.0.1:9/never', [
                'tentativas' => 2, 'baseMs' => 1, 'maxMs' => 1, 'sleep' => static fn (int $ms) => null,
                'logger' => new Logger('recuo', [$log]),
                'metrics' => static function (string $name, float $value, array $labels) use (&$points): void {
                    $points[] = [$name, $labels['recuo_outcome'] ?? $labels['recuo_reason'] ?? ''];
                },
            ]);
            $this->fail('nothing listens on port 9');
        } catch (\Recuo\CurlError $e) {
            $this->assertSame('connect', $e->kind);
        }
        $this->assertCount(3, $log->getRecords(), 'two attempts and the result');
        $this->assertSame(
            [['recuo_attempts_total', 'connect'], ['recuo_retry_delay_seconds', 'connect'], ['recuo_attempts_total', 'connect'], ['recuo_give_ups_total', 'attempts_exhausted']],
            $points,
        );
    }

    public function testTheBatchQueueAndTheOperationSayTheLastRecordsTelemetry(): void
    {
        $op = new \Recuo\Operation(Policy::adapters(), records: 'debug', method: 'GET', url: 'https://api.example/x');
        $this->assertNull($op->recordTelemetry());
        $op->start(0, 1_000);
        $op->responded(10, 200);
        $this->assertNotNull($op->pollRecord());
        $t = json_decode((string) $op->recordTelemetry(), true);
        $this->assertSame('GET', $t['span']['name']);
        $this->assertGreaterThan(0, $t['operation']);
    }
}
