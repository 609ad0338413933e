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
use PHPUnit\Framework\TestCase;
use Recuo\GiveUpException;
use Recuo\Policy;
use Recuo\Symfony\RetryStrategy;
use Symfony\Component\HttpClient\HttpClient;

/**
 * The deadline bounds the whole attempt: against a server that trickles a 503's body, or its
 * head, one byte every 100 ms (`recuo serve --trickle`), Guzzle's middleware, Symfony's
 * retry strategy and `Recuo\buscarComRetry` each end within the deadline (2 s) plus 1 s with
 * recuo's give-up, as an exception of the client's own kind.
 */
final class DeadlineTest extends TestCase
{
    use DebianDeprecations;

    private const DEADLINE_MS = 2000;

    /** @return array<string, array{string}> */
    public static function trickles(): array
    {
        return ['a trickled body' => ['body'], 'a trickled head' => ['headers']];
    }

    private static function policy(): Policy
    {
        return new Policy(5, 1000, 8000, 'full', self::DEADLINE_MS, useDateHeader: true);
    }

    /** @param callable(): mixed $call */
    private function endsInTime(callable $call, string $what): \Throwable
    {
        $started = microtime(true);
        try {
            $call();
        } catch (\Throwable $e) {
            $took = microtime(true) - $started;
            $this->assertLessThan(self::DEADLINE_MS / 1000 + 1.0, $took, "$what took $took s");
            fwrite(STDERR, sprintf("%s: gave up after %.2f s\n", $what, $took));
            return $e;
        }
        $this->fail("$what: no give-up");
    }

    /** @dataProvider trickles */
    public function testEverySurfaceEndsAtTheDeadlineWithRecuosGiveUp(string $trickle): void
    {
        [$url, $server] = HttpServers::serve(['--trickle', $trickle, '--trickle-every', '100ms']);
        try {
            $stack = HandlerStack::create();
            $stack->push(\Recuo\Guzzle\retry(self::policy(), null, new Records()));
            $guzzle = new Client(['handler' => $stack, 'timeout' => 30]);
            $e = $this->endsInTime(fn () => $guzzle->get("$url/"), "Guzzle, $trickle");
            $this->assertInstanceOf(GuzzleException::class, $e);
            $this->assertInstanceOf(\Recuo\Guzzle\GiveUpException::class, $e);
            $this->assertInstanceOf(GiveUpException::class, $e);

            $symfony = RetryStrategy::client(HttpClient::create(['timeout' => 30]), self::policy());
            $e = $this->endsInTime(fn () => $symfony->request('GET', "$url/")->getContent(false), "Symfony, $trickle");
            $this->assertInstanceOf(\Symfony\Contracts\HttpClient\Exception\TransportExceptionInterface::class, $e);
            $giveUp = $e instanceof GiveUpException ? $e : $e->getPrevious();
            $this->assertInstanceOf(GiveUpException::class, $giveUp);

            $e = $this->endsInTime(fn () => \Recuo\buscarComRetry("$url/", ['prazoMs' => self::DEADLINE_MS, 'timeoutMs' => 30_000]), "buscarComRetry, $trickle");
            $this->assertInstanceOf(GiveUpException::class, $e);
        } finally {
            HttpServers::stop($server);
        }
    }
}
