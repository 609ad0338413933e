<?php

declare(strict_types=1);

namespace Recuo\Symfony;

use Recuo\Internal\Http;
use Symfony\Component\HttpClient\DecoratorTrait;
use Symfony\Contracts\HttpClient\HttpClientInterface;
use Symfony\Contracts\HttpClient\ResponseInterface;

/**
 * The policy's deadline over every attempt of a request made through
 * {@see RetryStrategy::client()}: Symfony's `timeout` is an idle timeout that each byte
 * resets, so a server that trickles its head or a body would hold an attempt for ever. Placed
 * outside `RetryableHttpClient`, this client stamps the request's start in its options (which
 * `RetryableHttpClient` resends on every retry); placed inside, it gives each attempt a
 * `max_duration` of what is left of the deadline (or the caller's own, when shorter). When it
 * runs out, the strategy gives up with {@see GiveUpException}.
 *
 * @internal made by {@see RetryStrategy::client()}
 */
final class DeadlineClient implements HttpClientInterface
{
    use DecoratorTrait;

    private const STARTED = 'recuo_started_ms';

    private int $deadlineMs = 0;
    private bool $stamps = false;

    /** The outer client: stamps each request's start. */
    public static function stamping(HttpClientInterface $client): self
    {
        $decorated = new self($client);
        $decorated->stamps = true;
        return $decorated;
    }

    /** The inner client: bounds each attempt by what is left of `$deadlineMs`. */
    public static function bounding(HttpClientInterface $client, int $deadlineMs): self
    {
        $decorated = new self($client);
        $decorated->deadlineMs = $deadlineMs;
        return $decorated;
    }

    /** @param array<string, mixed> $options */
    public function request(string $method, string $url, array $options = []): ResponseInterface
    {
        $now = Http::now();
        $started = $options['extra'][self::STARTED] ?? null;
        if ($this->stamps) {
            if (!is_int($started)) {
                $options['extra'][self::STARTED] = $now;
            }
            return $this->client->request($method, $url, $options);
        }
        $left = max(1, $this->deadlineMs - ($now - (is_int($started) ? $started : $now))) / 1000;
        $own = (float) ($options['max_duration'] ?? 0);
        // At least a millisecond: curl reads a max_duration below it as 0, no limit at all.
        $options['max_duration'] = max(0.001, $own > 0 ? min($own, $left) : $left);
        return $this->client->request($method, $url, $options);
    }
}
