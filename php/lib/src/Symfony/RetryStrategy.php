<?php

declare(strict_types=1);

namespace Recuo\Symfony;

use Psr\Log\LoggerInterface;
use Recuo\Internal\Http;
use Recuo\Operation;
use Recuo\Policy;
use Recuo\Step;
use Symfony\Component\HttpClient\Response\AsyncContext;
use Symfony\Component\HttpClient\RetryableHttpClient;
use Symfony\Contracts\HttpClient\Exception\TransportExceptionInterface;
use Symfony\Contracts\HttpClient\HttpClientInterface;

/**
 * Symfony HttpClient's retry strategy on the core's operation machine: each request is one
 * `Recuo\Operation` (kept in the response's info as `recuo_operation`), which classifies the
 * status or the transport failure by the request's method (SPEC §5), computes the delay,
 * honours the server's wait and gives up when the wait does not fit the deadline — by
 * throwing {@see GiveUpException} instead of sleeping. Use {@see self::client()}, which sets
 * `RetryableHttpClient`'s `maxRetries` to what the policy allows. What the interface cannot
 * do is in docs/php.md ("Symfony HttpClient").
 */
final class RetryStrategy implements \Symfony\Component\HttpClient\Retry\RetryStrategyInterface
{
    private const INFO = 'recuo_operation';
    private const DELAY = 'recuo_delay_ms';

    public readonly Policy $policy;

    public function __construct(?Policy $policy = null, private readonly ?LoggerInterface $logger = null, private readonly ?int $seed = null)
    {
        $this->policy = $policy ?? Http::defaultPolicy();
    }

    /**
     * `$client` wrapped in a `RetryableHttpClient` driven by this strategy, `maxRetries` the
     * policy's; with a deadline, every attempt — its head and the body Symfony reads — is
     * bounded by what is left of it (`max_duration`), not only by the idle `timeout`.
     */
    public static function client(HttpClientInterface $client, ?Policy $policy = null, ?LoggerInterface $logger = null, ?int $seed = null): HttpClientInterface
    {
        $strategy = new self($policy, $logger, $seed);
        $deadline = $strategy->policy->deadlineMs;
        if ($deadline === null) {
            return new RetryableHttpClient($client, $strategy, $strategy->policy->maxAttempts - 1, $logger);
        }
        // The deadline bounds every attempt (its head and body), not an idle timeout alone.
        $retrying = new RetryableHttpClient(DeadlineClient::bounding($client, $deadline), $strategy, $strategy->policy->maxAttempts - 1, $logger);
        return DeadlineClient::stamping($retrying);
    }

    /**
     * `$options` with an `Idempotency-Key` header (the policy's name), a UUID v4 from the
     * operating system's random source, unless it has one: send a request that is not
     * idempotent with it, and every retry carries the same key. A strategy cannot add it
     * itself (`RetryableHttpClient` resends the request's own options).
     *
     * @param array<string, mixed> $options
     * @return array<string, mixed>
     */
    public static function withIdempotencyKey(array $options = [], string $header = 'Idempotency-Key'): array
    {
        foreach (array_keys($options['headers'] ?? []) as $name) {
            if (is_string($name) && strcasecmp($name, $header) === 0) {
                return $options;
            }
        }
        $options['headers'][$header] = (new Operation(Policy::guideA()))->key();
        return $options;
    }

    public function shouldRetry(AsyncContext $context, ?string $responseContent, ?TransportExceptionInterface $exception): ?bool
    {
        $op = $context->getInfo(self::INFO);
        if (!$op instanceof Operation) {
            $op = new Operation(
                $this->policy,
                seed: $this->seed,
                method: (string) $context->getInfo('http_method'),
                url: (string) $context->getInfo('url'),
                records: $this->logger === null ? null : 'debug',
            );
            $context->setInfo(self::INFO, $op);
            // The first attempt was sent before the strategy hears of the request: the
            // operation (and its deadline) started when it was sent.
            $since = max(0, (int) round((microtime(true) - (float) $context->getInfo('start_time')) * 1000));
            self::pass($op, $op->start(max(0, Http::now() - $since), Http::unixMs() - $since));
        } elseif ($context->getInfo(self::DELAY) !== null) {
            // The wait of the last `sleep` is over, and this attempt was made.
            $context->setInfo(self::DELAY, null);
            self::pass($op, $op->slept(Http::now()));
        }
        if ($exception !== null) {
            $step = $op->responded(Http::now(), null, self::transportKind($exception));
        } else {
            $step = $op->responded(Http::now(), $context->getStatusCode(), null, $context->getHeaders());
        }
        Http::flush($op, $this->logger);
        switch ($step->kind) {
            case 'sleep':
                $context->setInfo(self::DELAY, (int) $step->delayMs);
                return true;
            case 'gave_up':
                if ($step->reason === 'wait_exceeds_deadline') {
                    throw new GiveUpException(
                        Http::giveUpMessage($step, (string) $context->getInfo('http_method'), (string) $context->getInfo('url')),
                        (string) $step->reason,
                        $exception === null ? ['status' => $context->getStatusCode(), 'headers' => $context->getHeaders()] : null,
                        $step->retryAtMs,
                        Http::wallClock($step->retryAtMs),
                        $step->report,
                        $exception,
                    );
                }
                return false;
            default:
                return false;
        }
    }

    public function getDelay(AsyncContext $context, ?string $responseContent, ?TransportExceptionInterface $exception): int
    {
        // Paused by RetryableHttpClient, which takes `Retry-After` itself when there is one
        // (exactly, without the spread); the machine hears when the wait ended at the next
        // attempt's answer (`shouldRetry`).
        return (int) $context->getInfo(self::DELAY);
    }

    /** The attempt's `enter`, answered (no gate: the first attempt could not pass one); the step is `call`. */
    private static function pass(Operation $op, Step $step): Step
    {
        return $step->kind === 'enter' ? $op->entered(Http::now(), true) : $step;
    }

    /** What Symfony's transport error means (SPEC §5): its curl message is all it says. */
    private static function transportKind(TransportExceptionInterface $e): string
    {
        $message = $e->getMessage();
        return match (true) {
            (bool) preg_match('/Could not resolve|Failed to connect|Connection refused|Couldn\'t connect|resolve host/i', $message) => 'connect',
            (bool) preg_match('/SSL certificate|certificate verify|unable to get local issuer|self.signed/i', $message) => 'tls',
            (bool) preg_match('/timed? ?out|Idle timeout|Timeout was reached/i', $message) => 'timeout',
            (bool) preg_match('/reset|Empty reply|Recv failure|Send failure|transfer closed/i', $message) => 'reset',
            default => 'other',
        };
    }
}
