<?php

declare(strict_types=1);

namespace RecuoTests;

require_once __DIR__ . '/support/http.php';
require_once __DIR__ . '/support/HttpServers.php';
require_once __DIR__ . '/support/DebianDeprecations.php';
require_once __DIR__ . '/support/Records.php';

use GuzzleHttp\Client;
use GuzzleHttp\Exception\ConnectException;
use GuzzleHttp\Exception\RequestException;
use GuzzleHttp\HandlerStack;
use GuzzleHttp\Psr7\NoSeekStream;
use GuzzleHttp\Psr7\Utils;
use PHPUnit\Framework\TestCase;
use Recuo\CurlError;
use Recuo\GiveUpException;
use Recuo\Operation;
use Recuo\Policy;
use Recuo\Resposta;
use Recuo\Symfony\RetryStrategy;
use Symfony\Component\HttpClient\HttpClient;
use Symfony\Contracts\HttpClient\Exception\TransportExceptionInterface;

/**
 * tests/vectors/http.json through PHP: the request plans, the endings and the give-up
 * messages through the extension; every scripted request through Guzzle's middleware and
 * Symfony's client (the `client` cases) and `Recuo\buscarComRetry` (the `guide` cases), each
 * against one `recuo serve --script` under a path prefix of its own. The server's log says the
 * attempts it saw and the key each carried; the adapter's records say each attempt's decision;
 * the result says how the request ended.
 */
final class HttpVectorsTest extends TestCase
{
    use DebianDeprecations;

    private const UUID_V4 = '/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/';

    private static string $base;
    /** @var resource */
    private static mixed $server;

    public static function setUpBeforeClass(): void
    {
        [self::$base, self::$server] = HttpServers::serve(['--script', RECUO_ROOT . '/tests/vectors/http.json']);
    }

    public static function tearDownAfterClass(): void
    {
        HttpServers::stop(self::$server);
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function plans(): array
    {
        return Vectors::cases('http.json', 'plans', static fn (array $c): string => sprintf(
            '%s key=%s send=%s honours=%s',
            $c['method'],
            json_encode($c['callers_key']),
            json_encode($c['send_keys']),
            json_encode($c['server_honours_keys']),
        ));
    }

    /**
     * @dataProvider plans
     * @param array<string, mixed> $c
     */
    public function testPlans(array $c): void
    {
        $policy = Policy::adapters()->withServerHonoursKeys($c['server_honours_keys']);
        $op = new Operation($policy, method: $c['method'], keyGiven: $c['callers_key'], sendKeys: $c['send_keys']);
        $this->assertSame([$c['key'], $c['idempotent']], [$op->keySent, $op->idempotent]);
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function endings(): array
    {
        return Vectors::cases('http.json', 'endings', static fn (array $c): string => sprintf('%s %s %s', $c['style'], $c['reason'] ?? 'success', json_encode($c['last'])));
    }

    /**
     * @dataProvider endings
     * @param array<string, mixed> $c
     */
    public function testEndings(array $c): void
    {
        $last = $c['last'];
        $this->assertSame(
            $c['ending'],
            \Recuo\httpEnding($c['style'], $c['reason'], $last['status'] ?? null, $last['transport'] ?? null, isset($last['late'])),
        );
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function messages(): array
    {
        return Vectors::cases('http.json', 'messages', static fn (array $c): string => $c['message']);
    }

    /**
     * @dataProvider messages
     * @param array<string, mixed> $c
     */
    public function testMessages(array $c): void
    {
        $last = $c['last'];
        $this->assertSame(
            $c['message'],
            \Recuo\giveUpMessage($c['reason'], $c['attempts'], $last['status'] ?? null, $last['transport'] ?? null, isset($last['late']), $c['retry_in_ms']),
        );
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function clientRequests(): array
    {
        return self::requests('client');
    }

    /** @return array<string, array{array<string, mixed>}> */
    public static function guideRequests(): array
    {
        return self::requests('guide');
    }

    /** @return array<string, array{array<string, mixed>}> */
    private static function requests(string $style): array
    {
        $cases = array_filter(
            Vectors::cases('http.json', 'requests', static fn (array $c): string => $c['id']),
            static fn (array $c): bool => $c[0]['style'] === $style,
        );
        if ($cases === []) {
            throw new \RuntimeException("http.json: no $style requests");
        }
        return $cases;
    }

    /**
     * The case's policy over the adapters' default (the response's `Date` as now).
     *
     * @param array<string, mixed> $p
     */
    private static function policy(array $p): Policy
    {
        return new Policy(
            maxAttempts: $p['max_attempts'],
            baseMs: $p['base_ms'],
            capMs: $p['cap_ms'],
            deadlineMs: $p['deadline_ms'],
            useDateHeader: Policy::adapters()->useDateHeader,
            serverHonoursKeys: $p['server_honours_keys'],
        );
    }

    /**
     * @dataProvider clientRequests
     * @param array<string, mixed> $c
     */
    public function testGuzzle(array $c): void
    {
        $records = new Records();
        $stack = HandlerStack::create();
        $stack->push(\Recuo\Guzzle\retry(self::policy($c['policy']), null, $records, 1, $c['send_keys']));
        $client = new Client(['handler' => $stack, 'http_errors' => false, 'timeout' => 10]);
        $options = [
            'headers' => $c['callers_key'] === null ? [] : ['Idempotency-Key' => $c['callers_key']],
            'body' => $c['replayable'] ? 'order' : new NoSeekStream(Utils::streamFor('order')),
        ];
        $path = '/php-guzzle/' . $c['id'];
        $e = $c['expect'];
        try {
            $response = $client->request($c['method'], self::$base . $path, $options);
            $this->assertSame('response', $e['ending'], 'a response');
            $this->assertSame($e['status'], $response->getStatusCode());
        } catch (\Recuo\Guzzle\GiveUpException $giveUp) {
            $this->assertSame('give_up', $e['ending'], $giveUp->getMessage());
            $this->assertGiveUp($e, $giveUp, $giveUp->getResponse()?->getStatusCode());
        } catch (ConnectException | RequestException $error) {
            $this->assertSame('error', $e['ending'], $error->getMessage());
            $context = $error->getHandlerContext();
            $this->assertSame($e['error'], \Recuo\curlTransport((int) $context['errno'], (int) ($context['request_size'] ?? 0) > 0));
        }
        $this->assertSeen($c, $path, $records);
    }

    /**
     * @dataProvider clientRequests
     * @param array<string, mixed> $c
     */
    public function testSymfony(array $c): void
    {
        $records = new Records();
        $client = RetryStrategy::client(HttpClient::create(['timeout' => 10]), self::policy($c['policy']), $records, 1, $c['send_keys']);
        $options = [
            'headers' => $c['callers_key'] === null ? [] : ['Idempotency-Key' => $c['callers_key']],
            'body' => $c['replayable'] ? 'order' : (static function (): \Generator {
                yield 'order';
            })(),
        ];
        $path = '/php-symfony/' . $c['id'];
        $e = $c['expect'];
        try {
            $response = $client->request($c['method'], self::$base . $path, $options);
            $status = $response->getStatusCode();
            $response->getContent(false);
            $this->assertSame('response', $e['ending'], 'a response');
            $this->assertSame($e['status'], $status);
        } catch (TransportExceptionInterface $error) {
            // Symfony wraps what its retrying code throws: recuo's give-up is the previous one.
            $giveUp = $error instanceof GiveUpException ? $error : $error->getPrevious();
            if ($giveUp instanceof \Recuo\Symfony\GiveUpException) {
                $this->assertSame('give_up', $e['ending'], $giveUp->getMessage());
                $this->assertGiveUp($e, $giveUp, $giveUp->response['status'] ?? null);
            } else {
                $this->assertSame('error', $e['ending'], $error->getMessage());
                $this->assertSame($e['error'], RetryStrategy::transportKind($error));
            }
        }
        $this->assertSeen($c, $path, $records);
    }

    /**
     * @dataProvider guideRequests
     * @param array<string, mixed> $c
     */
    public function testBuscarComRetry(array $c): void
    {
        $p = $c['policy'];
        $opcoes = ['tentativas' => $p['max_attempts'], 'baseMs' => $p['base_ms'], 'maxMs' => $p['cap_ms'], 'metodo' => $c['method'], 'seed' => 1];
        if ($p['deadline_ms'] !== null) {
            $opcoes['prazoMs'] = $p['deadline_ms'];
        }
        if ($c['callers_key'] !== null) {
            $opcoes['cabecalhos'] = ['Idempotency-Key' => $c['callers_key']];
        }
        $path = '/php-buscar/' . $c['id'];
        $e = $c['expect'];
        try {
            $resposta = \Recuo\buscarComRetry(self::$base . $path, $opcoes);
            $this->assertSame('response', $e['ending'], 'a response');
            $this->assertSame($e['status'], $resposta->status);
            $this->assertSame($e['reason'], $resposta->report->reason);
            $this->assertSame($e['attempts'], $resposta->report->attempts);
        } catch (GiveUpException $giveUp) {
            $this->assertSame('give_up', $e['ending'], $giveUp->getMessage());
            $this->assertInstanceOf(Resposta::class, $giveUp->response);
            $this->assertGiveUp($e, $giveUp, $giveUp->response->status);
            $this->assertSame($e['attempts'], $giveUp->report?->attempts);
        } catch (CurlError $error) {
            $this->assertSame('error', $e['ending'], $error->getMessage());
            $this->assertSame($e['error'], $error->kind);
        }
        $this->assertSeen($c, $path, null);
    }

    /**
     * recuo's give-up: the reason, a retry instant or none, the one message, the last
     * response's status.
     *
     * @param array<string, mixed> $e
     */
    private function assertGiveUp(array $e, GiveUpException $giveUp, ?int $status): void
    {
        $this->assertSame(
            [$e['reason'], $e['retry_at'], $e['retry_at'], $e['message'], $e['status']],
            [$giveUp->reason, $giveUp->retryAt !== null, $giveUp->retryAtMs !== null, $giveUp->getMessage(), $status],
        );
    }

    /**
     * What the server saw on `$path` — the attempts, the key each carried — and, with
     * `$records`, each attempt's decision.
     *
     * @param array<string, mixed> $c
     */
    private function assertSeen(array $c, string $path, ?Records $records): void
    {
        $e = $c['expect'];
        $log = json_decode((string) file_get_contents(self::$base . '/__script/log' . $path), true, 512, JSON_THROW_ON_ERROR);
        $this->assertCount($e['attempts'], $log, 'the attempts the server saw');
        $keys = array_column($log, 'key');
        $this->assertSame(array_fill(0, count($log), strtoupper($c['method'])), array_column($log, 'method'));
        switch ($e['key']) {
            case 'none':
                $this->assertSame(array_fill(0, count($log), null), $keys);
                break;
            case 'caller':
                $this->assertSame(array_fill(0, count($log), $c['callers_key']), $keys);
                break;
            case 'recuo':
                $this->assertMatchesRegularExpression(self::UUID_V4, (string) $keys[0]);
                $this->assertSame(array_fill(0, count($log), $keys[0]), $keys, 'one key, on every attempt');
                break;
            default:
                $this->fail("key {$e['key']}");
        }
        if ($records !== null) {
            $decisions = [];
            foreach (array_column($records->seen, 2) as $record) {
                if (($record['type'] ?? '') === 'attempt') {
                    $decisions[] = $record['decision'];
                }
            }
            $this->assertSame($e['decisions'], $decisions, 'each attempt\'s decision');
        }
        // The request's plan, as the machine the adapter drove made it.
        $op = new Operation(
            self::policy($c['policy']),
            method: $c['method'],
            keyGiven: $c['callers_key'] !== null,
            sendKeys: $c['send_keys'],
        );
        $this->assertSame([$e['key'], $e['idempotent']], [$op->keySent, $op->idempotent]);
    }
}
