<?php

declare(strict_types=1);

namespace Recuo\Symfony;

use Psr\Log\LoggerInterface;
use Recuo\Internal\Http;
use Recuo\Operation;
use Recuo\Policy;
use Recuo\Step;
use Symfony\Component\HttpClient\AsyncDecoratorTrait;
use Symfony\Component\HttpClient\Response\AsyncContext;
use Symfony\Component\HttpClient\Response\AsyncResponse;
use Symfony\Contracts\HttpClient\ChunkInterface;
use Symfony\Contracts\HttpClient\Exception\TransportExceptionInterface;
use Symfony\Contracts\HttpClient\HttpClientInterface;
use Symfony\Contracts\HttpClient\ResponseInterface;

/**
 * A Symfony HttpClient that retries on the core's operation machine: each request is one
 * `Recuo\Operation`, which decides everything — the key the request carries and whether it
 * counts as idempotent, what is retried, the delays and the server's waits (its `Retry-After`
 * measured as the machine measures it, with its spread), the deadline, a body that cannot be
 * sent twice, how the end reaches you and the give-up's message. The client only sends the
 * attempts (each bounded by what is left of the deadline, through `max_duration`), reads each
 * response's body before telling the machine (so that a body cut short counts as a dropped
 * connection), and passes on what the machine says. Made by {@see RetryStrategy::client()}.
 */
final class RetryClient implements HttpClientInterface
{
    use AsyncDecoratorTrait;

    public readonly Policy $policy;

    public function __construct(
        HttpClientInterface $client,
        ?Policy $policy = null,
        private readonly ?LoggerInterface $logger = null,
        private readonly ?int $seed = null,
        /** Whether recuo adds its own key: null for methods that are not idempotent. */
        private readonly ?bool $idempotencyKeys = null,
        /**
         * Each metric point, as the records are made: its Prometheus name, its value (a count
         * to add, or seconds to observe) and its labels.
         *
         * @var null|callable(string, float, array<string, string>): void
         */
        private readonly mixed $metrics = null,
    ) {
        $this->client = $client;
        $this->policy = $policy ?? Policy::adapters();
    }

    /** @param array<string, mixed> $options */
    public function request(string $method, string $url, array $options = []): ResponseInterface
    {
        $header = $this->policy->idempotencyHeader;
        $body = $options['body'] ?? '';
        $op = new Operation(
            $this->policy,
            seed: $this->seed,
            method: $method,
            url: $url,
            records: Http::records($this->logger, $this->metrics),
            keyGiven: self::carries($options['headers'] ?? [], $header),
            sendKeys: $this->idempotencyKeys,
            // A resource, a closure or a generator is read once.
            replayable: is_string($body) || is_array($body),
        );
        if ($op->keySent === 'recuo') {
            $options['headers'][$header] = $op->key();
        }
        // No gate: the first step is the first attempt's `call`.
        $step = $op->start(Http::now(), Http::unixMs());
        [$attempt, $clipped] = self::bounded($options, $step);
        /** @var list<ChunkInterface> $read the attempt's chunks, held until the machine decides */
        $read = [];
        $logger = $this->logger;
        $metrics = $this->metrics;

        return new AsyncResponse($this->client, $method, $url, $attempt, static function (ChunkInterface $chunk, AsyncContext $context) use ($op, $method, $url, $options, $logger, $metrics, &$clipped, &$read) {
            $error = null;
            try {
                if ($context->getInfo('canceled') || $chunk->isTimeout() || $chunk->getInformationalStatus() !== null) {
                    yield $chunk;
                    return;
                }
                // The machine hears of the response once its body is in: a body that fails
                // after the headers is the transport's failure, not a response.
                if (!$chunk->isLast()) {
                    $read[] = $chunk;
                    return;
                }
            } catch (TransportExceptionInterface $error) {
                // told to the machine below
            }
            $late = false;
            if ($error !== null) {
                $kind = RetryStrategy::transportKind($error);
                // A timeout of an attempt the deadline bounded is the deadline's cut.
                $late = $kind === 'timeout' && $clipped;
                $step = $op->responded(Http::now(), null, $kind);
            } else {
                $step = $op->responded(Http::now(), $context->getStatusCode(), null, $context->getHeaders());
            }
            if ($step->kind === 'sleep') {
                // The wait is Symfony's (`pause()`): the machine is told when it ends.
                $delayMs = (int) $step->delayMs;
                $step = $op->slept(Http::now() + $delayMs);
                if ($step->kind === 'call') {
                    Http::flush($op, $logger, $metrics);
                    $context->getResponse()->cancel();
                    [$attempt, $clipped] = self::bounded($options, $step);
                    $read = [];
                    $context->replaceRequest($method, $url, $attempt);
                    $context->pause($delayMs / 1000);
                    return;
                }
            }
            Http::flush($op, $logger, $metrics);
            if ($step->kind === 'gave_up' && $op->ending('client', $late) === 'give_up') {
                [$message, $reason, $retryAtMs, $retryAt, $report] = Http::giveUp($op, $late);
                throw new GiveUpException(
                    $message,
                    $reason,
                    $error === null ? ['status' => $context->getStatusCode(), 'headers' => $context->getHeaders()] : null,
                    $retryAtMs,
                    $retryAt,
                    $report,
                    $error,
                );
            }
            // The last response, or the transport error, as Symfony gives it without recuo.
            $context->passthru();
            yield from $read;
            yield $chunk;
        });
    }

    /**
     * The attempt's options: `max_duration` is what is left of the deadline, or yours when
     * shorter (Symfony's `timeout` is an idle timeout that each byte resets). Answers them and
     * whether the deadline is the bound.
     *
     * @param array<string, mixed> $options
     * @return array{array<string, mixed>, bool}
     */
    private static function bounded(array $options, Step $step): array
    {
        if ($step->timeoutMs === null) {
            return [$options, false];
        }
        // At least a millisecond: curl reads a max_duration below it as 0, no limit at all.
        $left = max(0.001, $step->timeoutMs / 1000);
        $own = (float) ($options['max_duration'] ?? 0);
        $clipped = $own <= 0 || $left <= $own;
        $options['max_duration'] = $clipped ? $left : $own;
        return [$options, $clipped];
    }

    /**
     * Whether the request's headers (`name => value` or `"Name: value"` lines) carry `$name`.
     *
     * @param array<int|string, mixed> $headers
     */
    private static function carries(array $headers, string $name): bool
    {
        foreach ($headers as $key => $value) {
            $header = is_int($key) ? strstr((string) $value, ':', true) : $key;
            if (is_string($header) && strcasecmp(trim($header), $name) === 0) {
                return true;
            }
        }
        return false;
    }
}
