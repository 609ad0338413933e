<?php

declare(strict_types=1);

namespace RecuoTests;

require_once __DIR__ . '/support/http.php';
require_once __DIR__ . '/support/Records.php';

use GuzzleHttp\Promise\Create;
use GuzzleHttp\Psr7\Request;
use GuzzleHttp\Psr7\Response;
use GuzzleHttp\Psr7\Utils;
use PHPUnit\Framework\TestCase;
use Psr\Http\Message\RequestInterface;
use Recuo\Guzzle\RetryMiddleware;
use Recuo\Policy;

/**
 * Recuo\Guzzle\RetryMiddleware over a handler that answers from a script and keeps what it
 * was asked (no network, no waiting): what each attempt is sent with.
 */
final class GuzzleMiddlewareTest extends TestCase
{
    /** @var list<array{RequestInterface, array<string, mixed>}> */
    private array $sent = [];

    /** @param list<Response> $answers */
    private function middleware(array $answers, ?Policy $policy = null, ?Records $records = null, ?\Recuo\Gate $gate = null): RetryMiddleware
    {
        $handler = function (RequestInterface $request, array $options) use (&$answers) {
            $this->sent[] = [$request, $options];
            $request->getBody()->getContents();
            return Create::promiseFor(array_shift($answers));
        };
        return new RetryMiddleware($handler, $policy, $gate, $records, 7);
    }

    public function testEachAttemptSaysItsWaitAndItsTimeout(): void
    {
        $records = new Records();
        $middleware = $this->middleware([new Response(503, ['Retry-After' => '2']), new Response(429), new Response(200)], null, $records);
        $response = $middleware(new Request('GET', 'https://api.example/items?token=s3cr3t'), ['timeout' => 60])->wait();
        $this->assertSame(200, $response->getStatusCode());
        $this->assertCount(3, $this->sent);
        [[, $first], [, $second], [, $third]] = $this->sent;
        $this->assertSame(0, $first['delay']);
        $this->assertGreaterThanOrEqual(2000, $second['delay'], 'the server asked for 2 s');
        $this->assertLessThanOrEqual(3000, $second['delay'], 'plus a spread of at most 1 s');
        $this->assertGreaterThanOrEqual(0, $third['delay']);
        $this->assertLessThanOrEqual(2000, $third['delay'], "guide B's backoff after the first retry");
        // The caller's 60 s is clipped to what is left of the 30 s deadline.
        $this->assertEqualsWithDelta(30.0, $first['timeout'], 0.5);
        $this->assertLessThan($first['timeout'] - 1.9, $second['timeout']);
        $this->assertFalse($this->sent[0][0]->hasHeader('Idempotency-Key'), 'a GET needs no key');
        $this->assertNotEmpty($records->seen);
        foreach ($records->seen as [, $line]) {
            $this->assertStringNotContainsString('s3cr3t', $line);
        }
    }

    public function testAPostSendsOneKeyAndABodyThatCannotBeRewoundIsNotResent(): void
    {
        $middleware = $this->middleware([new Response(503), new Response(200)], new Policy(3, 1, 2));
        $middleware(new Request('POST', 'https://api.example/orders', [], 'order'), [])->wait();
        $this->assertCount(2, $this->sent);
        $keys = array_map(static fn (array $s): string => $s[0]->getHeaderLine('Idempotency-Key'), $this->sent);
        $this->assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $keys[0]);
        $this->assertSame($keys[0], $keys[1]);
        $this->assertSame('order', (string) $this->sent[1][0]->getBody(), 'rewound for the retry');

        $this->sent = [];
        $middleware = $this->middleware([new Response(503), new Response(200)], new Policy(3, 1, 2));
        $response = $middleware(new Request('POST', 'https://api.example/orders', [], new \GuzzleHttp\Psr7\NoSeekStream(Utils::streamFor('once'))), [])->wait();
        $this->assertSame(503, $response->getStatusCode(), 'the last response, as without recuo');
        $this->assertCount(1, $this->sent);
    }

    /**
     * A body that cannot be rewound gets one attempt, as the machine says: judged and recorded,
     * no retry decided, no retry budget spent, and a result record.
     */
    public function testABodyThatCannotBeRewoundIsOneAttemptOfTheMachine(): void
    {
        $records = new Records();
        $budget = new \Recuo\RetryBudget(0.1, 100.0, 10);
        $middleware = $this->middleware([new Response(503, ['Retry-After' => '0']), new Response(200)], new Policy(3, 1, 2), $records, new \Recuo\Gate(budget: $budget));
        $body = new \GuzzleHttp\Psr7\NoSeekStream(Utils::streamFor('once'));
        $response = $middleware(new Request('POST', 'https://api.example/orders', ['Idempotency-Key' => 'pay-8'], $body), [])->wait();
        $this->assertSame(503, $response->getStatusCode());
        $this->assertCount(1, $this->sent);
        $types = array_map(static fn (array $r): string => $r['type'] . ':' . ($r['decision'] ?? $r['reason'] ?? ''), array_column($records->seen, 2));
        $this->assertSame(['attempt:give_up', 'result:attempts_exhausted'], $types);
        $this->assertSame(0, $budget->counts()['retries']);
    }

    /** A 200 whose body curl cut short is a dropped connection: retried for a GET. */
    public function testABodyCutShortIsADroppedConnection(): void
    {
        $cut = function (RequestInterface $request, array $options) {
            $this->sent[] = [$request, $options];
            if (count($this->sent) === 1) {
                $context = ['errno' => 18, 'error' => 'transfer closed with 990 bytes remaining to read', 'request_size' => 60];
                return Create::rejectionFor(new \GuzzleHttp\Exception\RequestException('cURL error 18', $request, new Response(200, ['Content-Length' => '1000']), null, $context));
            }
            return Create::promiseFor(new Response(200, [], 'whole'));
        };
        $middleware = new RetryMiddleware($cut, new Policy(3, 1, 2));
        $this->assertSame('whole', (string) $middleware(new Request('GET', 'https://api.example/items'), [])->wait()->getBody());
        $this->assertCount(2, $this->sent);
    }

    /**
     * The machine's gate step: a start slot's wait is the attempt's `delay` (nothing blocks),
     * a place in flight is the machine's until the attempt ends, and a limit still full at the
     * deadline gives up `wait_exceeds_deadline` with nothing sent.
     */
    public function testTheGateStepIsTheMachines(): void
    {
        $policy = new Policy(3, 1, 2, deadlineMs: 5000);
        $slots = new \Recuo\Regulator('1/s');
        $this->assertSame(0.0, $slots->tryAcquire(), 'the only slot of this second, taken');
        $started = microtime(true);
        $response = $this->middleware([new Response(200)], $policy, null, new \Recuo\Gate($slots))(new Request('GET', 'https://api.example/'), [])->wait();
        $this->assertSame(200, $response->getStatusCode());
        [[, $options]] = $this->sent;
        $this->assertGreaterThan(900, $options['delay'], "the next slot, a second later: Guzzle's delay");
        $this->assertLessThan(0.9, microtime(true) - $started, 'nothing slept that second');

        $this->sent = [];
        $limit = new \Recuo\ConcurrencyLimit(1);
        $response = $this->middleware([new Response(200)], $policy, null, new \Recuo\Gate(limit: $limit))(new Request('GET', 'https://api.example/'), [])->wait();
        $this->assertSame(200, $response->getStatusCode());
        $this->assertSame(0, $limit->inFlight, 'the place was given back when the attempt ended');

        $this->sent = [];
        $held = $limit->tryAcquire();
        $this->assertNotNull($held);
        $started = microtime(true);
        try {
            $this->middleware([new Response(200)], new Policy(3, 1, 2, deadlineMs: 60), null, new \Recuo\Gate(limit: $limit))(new Request('GET', 'https://api.example/'), [])->wait();
            $this->fail('no give-up');
        } catch (\Recuo\Guzzle\GiveUpException $e) {
            $this->assertSame('wait_exceeds_deadline', $e->reason);
            $this->assertSame(0, $e->report?->attempts);
        }
        $this->assertGreaterThanOrEqual(0.055, microtime(true) - $started, 'the full limit was looked at until the deadline');
        $this->assertSame([], $this->sent, 'nothing sent');
        $held->release();
    }

    public function testAttemptsExhaustedAnswerTheLastResponse(): void
    {
        $middleware = $this->middleware([new Response(503), new Response(503)], new Policy(2, 1, 2));
        $this->assertSame(503, $middleware(new Request('GET', 'https://api.example/'), [])->wait()->getStatusCode());
        $this->assertCount(2, $this->sent);
    }
}
