<?php

declare(strict_types=1);

namespace Recuo\Symfony;

use Psr\Log\LoggerInterface;
use Recuo\Internal\Http;
use Recuo\LoopPool;
use Recuo\Operation;
use Recuo\Policy;
use Recuo\Step;
use Symfony\Component\HttpClient\Response\AsyncContext;
use Symfony\Contracts\HttpClient\Exception\TransportExceptionInterface;
use Symfony\Contracts\HttpClient\HttpClientInterface;

/**
 * recuo for Symfony HttpClient. {@see self::client()} wraps your client in a
 * {@see RetryClient}, which runs each request on the core's operation machine — use it.
 *
 * The class is also a `RetryStrategyInterface`, for a `RetryableHttpClient` you build
 * yourself: each request is one `Recuo\Operation` (kept in the response's info as
 * `recuo_operation`), which classifies the status or the transport failure by the request's
 * method, computes the delay and gives up when the server's wait does not fit the deadline
 * (throwing {@see GiveUpException} instead of sleeping). What that interface cannot do — add
 * a key, see your own, read `Retry-After` as recuo does, see a body cut short — is in
 * docs/php.md, under "Symfony HttpClient".
 */
final class RetryStrategy implements \Symfony\Component\HttpClient\Retry\RetryStrategyInterface
{
    private const INFO = 'recuo_operation';
    private const DELAY = 'recuo_delay_ms';

    public readonly Policy $policy;

    /** @param null|callable(string, float, array<string, string>): void $metrics each metric point: its Prometheus name, value and labels */
    public function __construct(?Policy $policy = null, private readonly ?LoggerInterface $logger = null, private readonly ?int $seed = null, private readonly mixed $metrics = null)
    {
        $this->policy = $policy ?? Policy::adapters();
    }

    /**
     * `$client` wrapped in a {@see RetryClient}: each request one operation of the machine,
     * recuo's key added to a request that is not idempotent (`$idempotencyKeys`: null for
     * those, true for every request, false for none), every attempt — its head and its body —
     * bounded by what is left of the deadline (`max_duration`), not only by the idle `timeout`.
     */
    /** @param null|callable(string, float, array<string, string>): void $metrics each metric point: its Prometheus name, value and labels */
    public static function client(HttpClientInterface $client, ?Policy $policy = null, ?LoggerInterface $logger = null, ?int $seed = null, ?bool $idempotencyKeys = null, ?callable $metrics = null): HttpClientInterface
    {
        return new RetryClient($client, $policy, $logger, $seed, $idempotencyKeys, $metrics);
    }

    /**
     * `$options` with an `Idempotency-Key` header (the policy's name), a UUID v4 from the
     * operating system's random source, unless it has one: a key of your own, sent as it is on
     * every attempt — the request then counts as idempotent. The client of
     * {@see self::client()} adds recuo's own key to requests that are not idempotent without it.
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
                records: Http::records($this->logger, $this->metrics),
                loopPool: LoopPool::afterFirst(null, $this->policy->maxAttempts),
            );
            $context->setInfo(self::INFO, $op);
            // The first attempt was sent before the strategy hears of the request: the
            // operation (and its deadline) starts after it, begun when it was sent.
            $since = max(0, (int) round((microtime(true) - (float) $context->getInfo('start_time')) * 1000));
            $op->startAfterFirst(max(0, Http::now() - $since), Http::unixMs() - $since);
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
        Http::flush($op, $this->logger, $this->metrics);
        switch ($step->kind) {
            case 'sleep':
                $context->setInfo(self::DELAY, (int) $step->delayMs);
                return true;
            case 'gave_up':
                if ($op->ending('client') === 'give_up') {
                    [$message, $reason, $retryAtMs, $retryAt, $report] = Http::giveUp($op, false);
                    throw new GiveUpException(
                        $message,
                        $reason,
                        $exception === null ? ['status' => $context->getStatusCode(), 'headers' => $context->getHeaders()] : null,
                        $retryAtMs,
                        $retryAt,
                        $report,
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

    /** The attempt's `enter`, answered (no gate: a retry passes none, as the first attempt could not); the step is `call`. */
    private static function pass(Operation $op, Step $step): Step
    {
        return $step->kind === 'enter' ? $op->entered(Http::now(), true) : $step;
    }

    /**
     * @internal What Symfony's transport error means: its curl message is all it says (a body
     * cut short — "transfer closed with N bytes remaining" — is a dropped connection).
     *
     * @return 'connect'|'tls'|'timeout'|'reset'|'other'
     */
    public static function transportKind(TransportExceptionInterface $e): string
    {
        $message = $e->getMessage();
        return match (true) {
            (bool) preg_match('/Could not resolve|Failed to connect|Connection refused|Couldn\'t connect|resolve host/i', $message) => 'connect',
            (bool) preg_match('/SSL certificate|certificate verify|unable to get local issuer|self.signed/i', $message) => 'tls',
            (bool) preg_match('/timed? ?out|Idle timeout|Timeout was reached|Max duration was reached/i', $message) => 'timeout',
            (bool) preg_match('/reset|Empty reply|Recv failure|Send failure|transfer closed/i', $message) => 'reset',
            default => 'other',
        };
    }
}
