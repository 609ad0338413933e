<?php

declare(strict_types=1);

namespace RecuoTests;

require_once __DIR__ . '/support/http.php';
require_once __DIR__ . '/support/HttpServers.php';
require_once __DIR__ . '/support/DebianDeprecations.php';
require_once __DIR__ . '/support/Records.php';

use GuzzleHttp\Client;
use GuzzleHttp\Exception\GuzzleException;
use GuzzleHttp\HandlerStack;
use GuzzleHttp\Pool;
use GuzzleHttp\Psr7\Request;
use PHPUnit\Framework\TestCase;
use Recuo\GiveUpException;
use Recuo\Policy;
use Recuo\Symfony\RetryStrategy;
use Symfony\Component\HttpClient\HttpClient;

/**
 * The HTTP adapters — Guzzle's middleware (a plain client and a `Pool`), Symfony's
 * `RetryStrategy::client()` (Symfony HttpClient on the machine), and `Recuo\buscarComRetry` —
 * against `recuo serve` and a real nginx `limit_req` on 127.0.0.1: every call ends 200, the
 * servers saw the refusals, no retry came back before the server's wait, one key per POST;
 * `Retry-After: 3600` gives up at once; a shared regulator keeps several processes under
 * nginx's rate.
 */
final class HttpAdaptersTest extends TestCase
{
    use DebianDeprecations;

    private const GETS = 20;
    private const POSTS = 5;

    private static string $api;
    /** @var resource */
    private static mixed $serve;
    private static string $backend;
    /** @var resource */
    private static mixed $backendProcess;
    private static Nginx $nginx;

    public static function setUpBeforeClass(): void
    {
        // 20 requests a second per X-Api-Key after a burst of 5, 5% of 503s: each client
        // meets refusals; every refusal says `Retry-After: 1`.
        [self::$api, self::$serve] = HttpServers::serve(['--allowance', '1200/min', '--burst', '5', '--fail-rate', '0.05', '--latency', '2ms', '--seed', '7']);
        // nginx's own backend: never refuses.
        [self::$backend, self::$backendProcess] = HttpServers::serve(['--allowance', '1000000/min', '--burst', '1000', '--fail-rate', '0', '--latency', '1ms']);
        self::$nginx = Nginx::start(self::$backend, 20);
    }

    public static function tearDownAfterClass(): void
    {
        self::$nginx->stop();
        HttpServers::stop(self::$serve);
        HttpServers::stop(self::$backendProcess);
    }

    /** A Guzzle client with recuo's middleware (default policy unless given), and `$records`. */
    private static function guzzle(string $base, string $apiKey, Records $records, ?Policy $policy = null, ?\Recuo\Gate $gate = null): Client
    {
        $stack = HandlerStack::create();
        $stack->push(\Recuo\Guzzle\retry($policy, $gate, $records));
        return new Client(['handler' => $stack, 'base_uri' => $base, 'headers' => ['X-Api-Key' => $apiKey]]);
    }

    /**
     * What `recuo serve` saw for the requests between `$before` and now: the refusals, the
     * early retries and the keys the POSTs sent (and how often each).
     *
     * @param array<string, mixed> $before
     * @return array{throttled: int, unavailable: int, early: int, keys: array<string, int>}
     */
    private static function seenSince(array $before): array
    {
        $after = HttpServers::stats(self::$api);
        return [
            'throttled' => $after['throttled'] - $before['throttled'],
            'unavailable' => $after['unavailable'] - $before['unavailable'],
            'early' => $after['early_retries'],
            'keys' => array_diff_key($after['requests_per_idempotency_key'], $before['requests_per_idempotency_key']),
        ];
    }

    /** @param array{throttled: int, unavailable: int, early: int, keys: array<string, int>} $seen */
    private function assertServerSaw(array $seen, int $conflicts = 0): void
    {
        $this->assertGreaterThan(0, $seen['throttled'] + $seen['unavailable'], 'the server refused some');
        $this->assertSame(0, $seen['early'], 'no retry came back before the Retry-After');
        $this->assertCount(self::POSTS, $seen['keys'], 'one key per POST');
        foreach ($seen['keys'] as $count) {
            $this->assertGreaterThanOrEqual(1, $count);
            $this->assertLessThanOrEqual(5, $count);
        }
        $this->assertSame($conflicts, HttpServers::stats(self::$api)['idempotency_key_conflicts']);
    }

    /** Every retry that followed a server's wait waited at least that long. */
    private function assertWaitsHonoured(Records $records): void
    {
        foreach ($records->retries() as $record) {
            $after = $record['wait_headers']['retry-after'] ?? null;
            if ($after !== null) {
                $this->assertGreaterThanOrEqual(1000 * (int) $after, $record['delay_ms']);
            }
            $this->assertStringNotContainsString('secret', json_encode($record));
        }
    }

    public function testGuzzleClientRetriesTheRefusals(): void
    {
        $before = HttpServers::stats(self::$api);
        $records = new Records();
        $client = self::guzzle(self::$api, 'guzzle-plain', $records);
        for ($i = 0; $i < self::GETS; $i++) {
            $this->assertSame(200, $client->get("/items/$i?token=secret")->getStatusCode());
        }
        for ($i = 0; $i < self::POSTS; $i++) {
            $this->assertSame(200, $client->post('/orders', ['body' => "order $i"])->getStatusCode());
        }
        $this->assertServerSaw(self::seenSince($before));
        $this->assertNotEmpty($records->retries(), 'the middleware retried');
        $this->assertWaitsHonoured($records);
    }

    public function testGuzzlePoolStaysAsynchronous(): void
    {
        $before = HttpServers::stats(self::$api);
        $records = new Records();
        // All 25 at once: the retries' waits are Guzzle's `delay`, so they overlap.
        $client = self::guzzle(self::$api, 'guzzle-pool', $records, new Policy(10, 1000, 8000, 'full', 30_000));
        $requests = static function (): \Generator {
            for ($i = 0; $i < self::GETS; $i++) {
                yield new Request('GET', "/items/pool-$i");
            }
            for ($i = 0; $i < self::POSTS; $i++) {
                yield new Request('POST', '/orders', [], "order $i");
            }
        };
        $statuses = [];
        $started = microtime(true);
        (new Pool($client, $requests(), [
            'concurrency' => self::GETS + self::POSTS,
            'fulfilled' => function ($response, $index) use (&$statuses): void {
                $statuses[$index] = $response->getStatusCode();
            },
            'rejected' => function ($reason, $index) use (&$statuses): void {
                $statuses[$index] = $reason;
            },
        ]))->promise()->wait();
        $elapsed = microtime(true) - $started;
        ksort($statuses);
        $this->assertSame(array_fill(0, self::GETS + self::POSTS, 200), $statuses);
        $seen = self::seenSince($before);
        $this->assertGreaterThanOrEqual(15, $seen['throttled'], 'most of the first wave was refused');
        $this->assertServerSaw($seen);
        $this->assertWaitsHonoured($records);
        // Twenty refusals waited at once, not one after the other.
        $this->assertLessThan(15, $elapsed);
    }

    public function testSymfonyRetryableHttpClient(): void
    {
        $before = HttpServers::stats(self::$api);
        $records = new Records();
        $client = RetryStrategy::client(HttpClient::create(['headers' => ['X-Api-Key' => 'symfony']]), logger: $records);
        for ($i = 0; $i < self::GETS; $i++) {
            $this->assertSame(200, $client->request('GET', self::$api . "/items/sf-$i")->getStatusCode());
        }
        for ($i = 0; $i < self::POSTS; $i++) {
            $options = RetryStrategy::withIdempotencyKey(['body' => "order $i"]);
            $this->assertSame(200, $client->request('POST', self::$api . '/orders', $options)->getStatusCode());
        }
        $this->assertServerSaw(self::seenSince($before));
        $this->assertNotEmpty($records->retries());
        $this->assertWaitsHonoured($records);
    }

    public function testBuscarComRetry(): void
    {
        $before = HttpServers::stats(self::$api);
        $slept = [];
        $sleep = function (int $ms) use (&$slept): void {
            $slept[] = $ms;
            usleep($ms * 1000);
        };
        $options = ['cabecalhos' => ['X-Api-Key' => 'buscar'], 'sleep' => $sleep];
        for ($i = 0; $i < self::GETS; $i++) {
            $resposta = \Recuo\buscarComRetry(self::$api . "/items/b-$i", $options);
            $this->assertSame(200, $resposta->status);
            $this->assertSame('application/json', $resposta->header('Content-Type'));
            $this->assertTrue($resposta->json()['ok']);
        }
        for ($i = 0; $i < self::POSTS; $i++) {
            $resposta = \Recuo\buscarComRetry(self::$api . '/orders', $options + ['metodo' => 'POST', 'dados' => "order $i"]);
            $this->assertSame(200, $resposta->status);
        }
        $this->assertServerSaw(self::seenSince($before));
        $this->assertNotEmpty($slept);
        $this->assertGreaterThanOrEqual(1000, min($slept), 'every wait was a Retry-After: 1 at least');
    }

    public function testBuscarComRetryReturnsOther4xxAtOnceAndRetriesNetworkFailures(): void
    {
        $quick = ['tentativas' => 3, 'baseMs' => 1, 'maxMs' => 2];
        $resposta = \Recuo\buscarComRetry(self::$nginx->base . '/gone', $quick);
        $this->assertSame([404, 1, 'permanent'], [$resposta->status, $resposta->report->attempts, $resposta->report->reason]);
        // A 500 may have been processed: a GET is tried again, a POST (with the key recuo made) is
        // not; as guide A's function does, the last 500 is thrown, carrying the response.
        $thrown = static function (string $url, array $opcoes): array {
            try {
                \Recuo\buscarComRetry($url, $opcoes);
            } catch (\Recuo\GiveUpException $e) {
                return [$e->response?->status, $e->report?->attempts, $e->reason, $e->getMessage()];
            }
            return [];
        };
        $this->assertSame(
            [500, 3, 'attempts_exhausted', 'recuo gave up after 3 attempts (attempts_exhausted): HTTP 500'],
            $thrown(self::$nginx->base . '/broken', $quick),
        );
        $this->assertSame(
            [500, 1, 'permanent', 'recuo gave up after 1 attempt (permanent): HTTP 500'],
            $thrown(self::$nginx->base . '/broken', $quick + ['metodo' => 'POST', 'dados' => 'x']),
        );
        // ... unless the caller sends a key of its own.
        $this->assertSame(
            [500, 3, 'attempts_exhausted', 'recuo gave up after 3 attempts (attempts_exhausted): HTTP 500'],
            $thrown(self::$nginx->base . '/broken', $quick + ['metodo' => 'POST', 'dados' => 'x', 'cabecalhos' => ['Idempotency-Key' => 'order-7']]),
        );
        $slept = [];
        $port = RedisServer::freePort();
        try {
            \Recuo\buscarComRetry("http://127.0.0.1:$port/", $quick + ['sleep' => function (int $ms) use (&$slept): void {
                $slept[] = $ms;
            }]);
            $this->fail('nothing listens there');
        } catch (\Recuo\CurlError $e) {
            $this->assertSame('connect', $e->kind);
            $this->assertSame(7, $e->getCode());
            $this->assertCount(2, $slept, 'the refused connection was tried three times');
        }
    }

    /**
     * Guzzle, the same rules: a POST's 500 is not retried with recuo's own key — unless the
     * policy says the server honours keys — a GET's is; the key is the same on every attempt.
     */
    public function testGuzzleClassifiesByMethodAndKey(): void
    {
        $records = new Records();
        $client = self::guzzle(self::$nginx->base, 'rules', $records, new Policy(3, 1, 2, 'full', 30_000));
        $status = static function (callable $call): int {
            try {
                return $call()->getStatusCode();
            } catch (\GuzzleHttp\Exception\RequestException $e) {
                return (int) $e->getResponse()?->getStatusCode();
            }
        };
        $mark = count(self::$nginx->log());
        $this->assertSame(404, $status(fn () => $client->get('/gone')));
        $this->assertSame(500, $status(fn () => $client->get('/broken')));
        $this->assertSame(500, $status(fn () => $client->post('/broken', ['body' => 'x'])));
        $this->assertSame(500, $status(fn () => $client->post('/broken', ['body' => 'x', 'headers' => ['Idempotency-Key' => 'mine']])));
        $entries = array_slice(self::$nginx->log(), $mark);
        $this->assertSame(
            ['GET /gone', 'GET /broken', 'GET /broken', 'GET /broken', 'POST /broken', 'POST /broken', 'POST /broken', 'POST /broken'],
            array_map(static fn (array $e): string => "{$e['method']} {$e['path']}", $entries),
        );
        $this->assertSame('-', $entries[1]['key']);
        $this->assertMatchesRegularExpression('/^[0-9a-f-]{36}$/', $entries[4]['key']);
        $this->assertSame(['mine', 'mine', 'mine'], array_column(array_slice($entries, 5), 'key'));

        // A server that honours keys: recuo's own key makes the POST's 500 worth another attempt.
        $honours = self::guzzle(self::$nginx->base, 'rules', $records, new Policy(3, 1, 2, 'full', 30_000, serverHonoursKeys: true));
        $mark = count(self::$nginx->log());
        $this->assertSame(500, $status(fn () => $honours->post('/broken', ['body' => 'x'])));
        $entries = array_slice(self::$nginx->log(), $mark);
        $this->assertSame(['POST', 'POST', 'POST'], array_column($entries, 'method'));
        $this->assertMatchesRegularExpression('/^[0-9a-f-]{36}$/', $entries[0]['key']);
        $this->assertSame(array_fill(0, 3, $entries[0]['key']), array_column($entries, 'key'));

        // Symfony's client: the same machine, the same answers; a key of your own makes the
        // POST idempotent, recuo's own does not.
        $symfony = RetryStrategy::client(HttpClient::create(), new Policy(3, 1, 2, 'full', 30_000));
        $mark = count(self::$nginx->log());
        $this->assertSame(404, $symfony->request('GET', self::$nginx->base . '/gone')->getStatusCode());
        $this->assertSame(500, $symfony->request('GET', self::$nginx->base . '/broken')->getStatusCode());
        $this->assertSame(500, $symfony->request('POST', self::$nginx->base . '/broken', ['body' => 'x'])->getStatusCode());
        $this->assertSame(500, $symfony->request('POST', self::$nginx->base . '/broken', RetryStrategy::withIdempotencyKey(['body' => 'x']))->getStatusCode());
        $entries = array_slice(self::$nginx->log(), $mark);
        $this->assertSame(
            ['GET /gone', 'GET /broken', 'GET /broken', 'GET /broken', 'POST /broken', 'POST /broken', 'POST /broken', 'POST /broken'],
            array_map(static fn (array $e): string => "{$e['method']} {$e['path']}", $entries),
        );
        $this->assertMatchesRegularExpression('/^[0-9a-f-]{36}$/', $entries[4]['key'], "recuo's key");
        $this->assertNotSame($entries[4]['key'], $entries[5]['key'], 'yours');
        $this->assertSame(array_fill(0, 3, $entries[5]['key']), array_column(array_slice($entries, 5), 'key'));
    }

    /** `Retry-After: 3600` does not fit the default 30 s deadline: every adapter gives up at once. */
    public function testAnHourLongWaitGivesUpAtOnceWithRetryAt(): void
    {
        $url = self::$nginx->base . '/spent';
        $inAnHour = time() + 3600;
        $started = microtime(true);
        $records = new Records();
        try {
            self::guzzle(self::$nginx->base, 'spent', $records)->get('/spent');
            $this->fail('no give-up');
        } catch (GuzzleException $e) {
            $this->assertInstanceOf(\Recuo\Guzzle\GiveUpException::class, $e);
            $this->assertInstanceOf(GiveUpException::class, $e);
            $this->assertSame('wait_exceeds_deadline', $e->reason);
            $this->assertSame(429, $e->getResponse()?->getStatusCode());
            $this->assertEqualsWithDelta($inAnHour, $e->retryAt?->getTimestamp(), 5);
            $this->assertSame('/spent', $e->getRequest()->getUri()->getPath());
            $this->assertSame(1, $e->report?->attempts);
        }
        try {
            \Recuo\buscarComRetry($url);
            $this->fail('no give-up');
        } catch (GiveUpException $e) {
            $this->assertSame('wait_exceeds_deadline', $e->reason);
            $this->assertSame(429, $e->response?->status);
            $this->assertEqualsWithDelta($inAnHour, $e->retryAt?->getTimestamp(), 5);
        }
        try {
            RetryStrategy::client(HttpClient::create())->request('GET', $url)->getStatusCode();
            $this->fail('no give-up');
        } catch (\Symfony\Contracts\HttpClient\Exception\TransportExceptionInterface $e) {
            $giveUp = $e instanceof GiveUpException ? $e : $e->getPrevious();
            $this->assertInstanceOf(\Recuo\Symfony\GiveUpException::class, $giveUp);
            $this->assertSame('wait_exceeds_deadline', $giveUp->reason);
            $this->assertEqualsWithDelta($inAnHour, $giveUp->retryAt?->getTimestamp(), 5);
        }
        $this->assertLessThan(2.0, microtime(true) - $started, 'nobody slept');
        $spent = array_filter(self::$nginx->log(), static fn (array $e): bool => $e['path'] === '/spent');
        $this->assertCount(3, $spent, 'one attempt each');
    }

    /** A real nginx `limit_req` (20 r/s, a burst of 10): every client ends 200, every retry waited. */
    public function testNginxLimitReq(): void
    {
        $records = new Records();
        $guzzle = self::guzzle(self::$nginx->base, 'nginx', $records);
        $symfony = RetryStrategy::client(HttpClient::create(), logger: $records);
        $calls = [
            fn (string $path) => $guzzle->get($path)->getStatusCode(),
            fn (string $path) => $symfony->request('GET', self::$nginx->base . $path)->getStatusCode(),
            fn (string $path) => \Recuo\buscarComRetry(self::$nginx->base . $path)->status,
        ];
        $posts = [
            fn (string $path) => $guzzle->post($path, ['body' => 'x'])->getStatusCode(),
            fn (string $path) => $symfony->request('POST', self::$nginx->base . $path, RetryStrategy::withIdempotencyKey(['body' => 'x']))->getStatusCode(),
            fn (string $path) => \Recuo\buscarComRetry(self::$nginx->base . $path, ['metodo' => 'POST', 'dados' => 'x'])->status,
        ];
        foreach ($calls as $c => $call) {
            for ($i = 0; $i < self::GETS; $i++) {
                $this->assertSame(200, $call("/items/ngx-$c-$i"));
            }
            for ($i = 0; $i < self::POSTS; $i++) {
                $this->assertSame(200, $posts[$c]("/orders/ngx-$c-$i"));
            }
        }
        $log = array_values(array_filter(self::$nginx->log(), static fn (array $e): bool => str_contains($e['path'], 'ngx-')));
        $refused = array_filter($log, static fn (array $e): bool => $e['status'] === 429);
        $this->assertNotEmpty($refused, 'nginx refused some');
        $served = array_column(array_filter($log, static fn (array $e): bool => $e['status'] === 200), 'path');
        $this->assertCount(3 * (self::GETS + self::POSTS), array_unique($served), implode(' ', $served));
        $this->assertCount(3 * (self::GETS + self::POSTS), $served, 'each served once');
        // Every request after a 429 for the same path came at least the Retry-After later.
        $lastRefusal = [];
        foreach ($log as $entry) {
            if (isset($lastRefusal[$entry['path']])) {
                $this->assertGreaterThanOrEqual(0.999, $entry['time'] - $lastRefusal[$entry['path']], $entry['path']);
            }
            if ($entry['status'] === 429) {
                $lastRefusal[$entry['path']] = $entry['time'];
            }
        }
        // One key per POST, the same on every attempt; GETs send none.
        $keys = [];
        foreach ($log as $entry) {
            if ($entry['method'] === 'POST') {
                $this->assertMatchesRegularExpression('/^[0-9a-f-]{36}$/', $entry['key']);
                $keys[$entry['path']][$entry['key']] = true;
            } else {
                $this->assertSame('-', $entry['key']);
            }
        }
        $this->assertCount(3 * self::POSTS, $keys);
        foreach ($keys as $perPath) {
            $this->assertCount(1, $perPath);
        }
        $this->assertWaitsHonoured($records);
    }

    /** Three `php` processes share one regulator (a file) at 8/s, well under nginx's 20 r/s with no burst (room for a start delayed in transit on a busy machine): no 429 at all. */
    public function testASharedRegulatorKeepsProcessesUnderNginxsRate(): void
    {
        $dir = sys_get_temp_dir() . '/recuo-shared-' . bin2hex(random_bytes(4));
        mkdir($dir, 0700);
        $mark = count(self::$nginx->log());
        $children = [];
        foreach (range(1, 3) as $n) {
            $pipes = [];
            $children[] = [proc_open(
                [PHP_BINARY, '-d', 'extension=' . RECUO_EXTENSION, __DIR__ . '/support/guzzle_child.php', self::$nginx->base . '/strict', "$dir/regulator", '8', '10'],
                [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
                $pipes,
            ), $pipes];
        }
        $statuses = [];
        foreach ($children as [$process, $pipes]) {
            $out = stream_get_contents($pipes[1]);
            $err = stream_get_contents($pipes[2]);
            $this->assertSame(0, proc_close($process), $err);
            $statuses = [...$statuses, ...array_map('intval', preg_split('/\n/', trim((string) $out)))];
        }
        @unlink("$dir/regulator");
        @rmdir($dir);
        $this->assertSame(array_fill(0, 30, 200), $statuses);
        $theirs = array_slice(self::$nginx->log(), $mark);
        $this->assertCount(30, $theirs);
        $this->assertSame([], array_values(array_filter($theirs, static fn (array $e): bool => $e['status'] === 429)), '0 x 429');
    }
}
