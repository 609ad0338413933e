<?php

declare(strict_types=1);

namespace Recuo\Guzzle;

use GuzzleHttp\Exception\ConnectException;
use GuzzleHttp\Exception\RequestException;
use GuzzleHttp\Exception\TransferException;
use GuzzleHttp\Promise\Create;
use GuzzleHttp\Promise\PromiseInterface;
use Psr\Http\Message\RequestInterface;
use Psr\Http\Message\ResponseInterface;
use Psr\Log\LoggerInterface;
use Recuo\Gate;
use Recuo\Internal\Http;
use Recuo\Operation;
use Recuo\Policy;
use Recuo\Step;

/**
 * Guzzle middleware: each request is one operation of the core's machine
 * (`Recuo\Operation`), which decides everything — what is retried (by method and key,
 * SPEC §5), the delays and the server's waits (§3, §4), the deadline, when to give up. The
 * middleware sends the attempts, each through the handler's `delay` option (so a `Pool` and
 * promises stay asynchronous), with one `Idempotency-Key` per request on every attempt (for
 * a method that is not idempotent, when the request has none), its `timeout` clipped to the
 * deadline, and each retried response's body closed before the wait. Push it with
 * `$stack->push(Recuo\Guzzle\retry($policy, $gate, $logger))`.
 */
final class RetryMiddleware
{
    private readonly Policy $policy;

    /** @param callable(RequestInterface, array): PromiseInterface $nextHandler */
    public function __construct(
        private readonly mixed $nextHandler,
        ?Policy $policy = null,
        private readonly ?Gate $gate = null,
        private readonly ?LoggerInterface $logger = null,
        private readonly ?int $seed = null,
    ) {
        $this->policy = $policy ?? Http::defaultPolicy();
    }

    /** @param array<string, mixed> $options */
    public function __invoke(RequestInterface $request, array $options): PromiseInterface
    {
        $header = $this->policy->idempotencyHeader;
        $method = $request->getMethod();
        $keyGiven = $request->hasHeader($header);
        $op = new Operation(
            $this->policy,
            seed: $this->seed,
            gate: $this->gate,
            method: $method,
            url: (string) $request->getUri(),
            records: $this->logger === null ? null : 'debug',
            keyGiven: $keyGiven,
        );
        if (!$keyGiven && !$this->policy->isMethodIdempotent($method)) {
            $request = $request->withHeader($header, $op->key());
        }
        $call = new Call($op, $request, $options, (int) ($options['delay'] ?? 0));
        return $this->advance($call, $op->start(Http::now(), Http::unixMs()));
    }

    /** Answers the machine's steps until an attempt is to be sent (or the operation ends). */
    private function advance(Call $call, Step $step): PromiseInterface
    {
        $op = $call->op;
        while (true) {
            Http::flush($op, $this->logger);
            switch ($step->kind) {
                case 'enter':
                    [$passed, $wait, $call->permit] = Http::enter($this->gate, $step, $call->delayMs);
                    $call->delayMs += $wait;
                    $at = Http::now() + $call->delayMs;
                    $step = $op->entered($passed ? $at : max($at, ($step->untilMs ?? $at) + 1), $passed);
                    break;
                case 'call':
                    return $this->send($call, $step);
                case 'sleep':
                    $call->delayMs += (int) $step->delayMs;
                    // The wait is Guzzle's (the next attempt's `delay`): the machine is told
                    // when it ends.
                    $step = $op->slept(Http::now() + $call->delayMs);
                    break;
                case 'done':
                    return $this->settle($call);
                case 'gave_up':
                    return $this->giveUp($call, $step);
                default:
                    // `classify` never follows `responded()`.
                    throw new \LogicException("recuo: unexpected step {$step->kind}");
            }
        }
    }

    private function send(Call $call, Step $step): PromiseInterface
    {
        $options = $call->options;
        $options['delay'] = $call->delayMs;
        $call->delayMs = 0;
        if ($step->timeoutMs !== null) {
            $left = max(0.001, $step->timeoutMs / 1000);
            $options['timeout'] = isset($options['timeout']) && $options['timeout'] > 0
                ? min((float) $options['timeout'], $left) : $left;
        }
        $request = $call->request;
        if ($step->attempt > 0) {
            $body = $request->getBody();
            if ($body->isSeekable()) {
                $body->rewind();
            }
        }
        $handler = $this->nextHandler;
        return $handler($request, $options)->then(
            function (ResponseInterface $response) use ($call): PromiseInterface {
                return $this->answered($call, $response, null);
            },
            function (mixed $reason) use ($call): PromiseInterface {
                if ($reason instanceof RequestException && $reason->getResponse() !== null) {
                    return $this->answered($call, $reason->getResponse(), $reason);
                }
                if ($reason instanceof TransferException) {
                    return $this->failed($call, $reason);
                }
                // Not the transport's: the operation ends with it, as it would without recuo.
                $call->permit?->release();
                return Create::rejectionFor($reason);
            },
        );
    }

    /** A response (fulfilled, or inside Guzzle's `RequestException` from `http_errors`). */
    private function answered(Call $call, ResponseInterface $response, ?RequestException $error): PromiseInterface
    {
        $call->permit?->release();
        $call->permit = null;
        $call->last = $error ?? $response;
        $call->response = $response;
        $step = $call->op->responded(Http::now(), $response->getStatusCode(), null, $response->getHeaders());
        if ($step->kind === 'sleep' && !$this->replayable($call)) {
            return $this->settle($call);
        }
        if ($step->kind === 'sleep') {
            // Released before the wait.
            $response->getBody()->close();
        }
        return $this->advance($call, $step);
    }

    /** A transport failure, with what curl said of it. */
    private function failed(Call $call, TransferException $error): PromiseInterface
    {
        $call->permit?->release();
        $call->permit = null;
        $call->last = $error;
        $call->response = null;
        $context = $error instanceof ConnectException || $error instanceof RequestException
            ? $error->getHandlerContext() : [];
        $kind = isset($context['errno'])
            ? Http::curlKind((int) $context['errno'], $context)
            : ($error instanceof ConnectException ? 'connect' : 'other');
        $step = $call->op->responded(Http::now(), null, $kind);
        if ($step->kind === 'sleep' && !$this->replayable($call)) {
            return $this->settle($call);
        }
        return $this->advance($call, $step);
    }

    /** A body that cannot be rewound is never sent again (SPEC §12). */
    private function replayable(Call $call): bool
    {
        $body = $call->request->getBody();
        return $body->isSeekable() || $body->getSize() === 0;
    }

    /** The operation ended: the last answer, as Guzzle would have given it without recuo. */
    private function settle(Call $call): PromiseInterface
    {
        Http::flush($call->op, $this->logger);
        return $call->last instanceof \Throwable
            ? Create::rejectionFor($call->last)
            : Create::promiseFor($call->last);
    }

    private function giveUp(Call $call, Step $step): PromiseInterface
    {
        if ($step->reason !== 'wait_exceeds_deadline') {
            return $this->settle($call);
        }
        $request = $call->request;
        return Create::rejectionFor(new GiveUpException(
            Http::giveUpMessage($step, $request->getMethod(), (string) $request->getUri()),
            (string) $step->reason,
            $request,
            $call->response,
            $step->retryAtMs,
            Http::wallClock($step->retryAtMs),
            $step->report,
            $call->last instanceof \Throwable ? $call->last : null,
        ));
    }
}
