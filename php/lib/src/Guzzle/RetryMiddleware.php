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
 * (`Recuo\Operation`), which decides everything — the key the request carries and whether it
 * counts as idempotent, what is retried, the delays and the server's waits, the deadline, a
 * body that cannot be sent twice, when to give up, how the end reaches you and the give-up's
 * message. The middleware sends the attempts, each through the handler's `delay` option (so a
 * `Pool` and promises stay asynchronous), adds recuo's key when the machine says so, clips
 * each attempt's `timeout` to the deadline, closes each retried response's body before the
 * wait, and tells the machine what came back: a response, or a transport failure — a body
 * cut short after its headers included. Push it with
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
        $this->policy = $policy ?? Policy::adapters();
    }

    /** @param array<string, mixed> $options */
    public function __invoke(RequestInterface $request, array $options): PromiseInterface
    {
        $header = $this->policy->idempotencyHeader;
        $body = $request->getBody();
        $op = new Operation(
            $this->policy,
            seed: $this->seed,
            gate: $this->gate,
            method: $request->getMethod(),
            url: (string) $request->getUri(),
            records: Http::records($this->logger, $this->metrics),
            keyGiven: $request->hasHeader($header),
            sendKeys: $this->idempotencyKeys,
            replayable: $body->isSeekable() || $body->getSize() === 0,
        );
        if ($op->keySent === 'recuo') {
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
            Http::flush($op, $this->logger, $this->metrics);
            switch ($step->kind) {
                case 'enter':
                    $step = $this->pass($call);
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
                    // A success: its response, as Guzzle gave it.
                    Http::flush($op, $this->logger, $this->metrics);
                    return $call->last instanceof \Throwable
                        ? Create::rejectionFor($call->last)
                        : Create::promiseFor($call->last);
                case 'gave_up':
                    return $this->end($call);
                default:
                    // `classify` never follows `responded()`.
                    throw new \LogicException("recuo: unexpected step {$step->kind}");
            }
        }
    }

    /**
     * The machine's gate step, looked at as of the end of the wait already decided (Guzzle's
     * `delay` before the attempt): until the step after the gate (`call`, or `gave_up`). A full
     * concurrency limit is looked at again after a real sleep of a few ms (a place frees up only
     * in real time, and the machine holds it once taken); a start slot's wait is added to the
     * attempt's `delay`, as a retry's is, so that a `Pool` stays asynchronous.
     */
    private function pass(Call $call): Step
    {
        $op = $call->op;
        $step = $op->pollGate(Http::now() + $call->delayMs);
        while ($step->kind === 'wait') {
            if ($this->gate?->limit !== null) {
                usleep((int) $step->delayMs * 1000);
            } else {
                $call->delayMs += (int) $step->delayMs;
            }
            $step = $op->pollGate(Http::now() + $call->delayMs);
        }
        return $step;
    }

    private function send(Call $call, Step $step): PromiseInterface
    {
        $options = $call->options;
        $options['delay'] = $call->delayMs;
        $call->delayMs = 0;
        $call->clipped = false;
        if ($step->timeoutMs !== null) {
            $left = max(0.001, $step->timeoutMs / 1000);
            $own = (float) ($options['timeout'] ?? 0);
            $call->clipped = $own <= 0 || $left <= $own;
            $options['timeout'] = $call->clipped ? $left : $own;
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
                $context = $reason instanceof ConnectException || $reason instanceof RequestException
                    ? $reason->getHandlerContext() : [];
                // curl failed — before the headers or in the body after them: the transport's.
                if ($reason instanceof TransferException && !empty($context['errno'])) {
                    return $this->failed($call, $reason, Http::curlKind((int) $context['errno'], $context));
                }
                // A response Guzzle rejects (`http_errors`).
                if ($reason instanceof RequestException && $reason->getResponse() !== null) {
                    return $this->answered($call, $reason->getResponse(), $reason);
                }
                if ($reason instanceof TransferException) {
                    return $this->failed($call, $reason, $reason instanceof ConnectException ? 'connect' : 'other');
                }
                // Not the transport's: the operation ends with it, as it would without recuo
                // (the attempt is over: the machine gives back its place in flight).
                $call->op->failed(Http::now());
                return Create::rejectionFor($reason);
            },
        );
    }

    /** A response (fulfilled, or inside Guzzle's `RequestException` from `http_errors`). */
    private function answered(Call $call, ResponseInterface $response, ?RequestException $error): PromiseInterface
    {
        $call->last = $error ?? $response;
        $call->response = $response;
        $call->late = false;
        $step = $call->op->responded(Http::now(), $response->getStatusCode(), null, $response->getHeaders());
        if ($step->kind === 'sleep') {
            // Released before the wait.
            $response->getBody()->close();
        }
        return $this->advance($call, $step);
    }

    /**
     * A transport failure of `$kind` (what curl's error means, or Guzzle's exception when
     * curl said nothing); a timeout of an attempt bounded by the deadline is the deadline's cut.
     */
    private function failed(Call $call, TransferException $error, string $kind): PromiseInterface
    {
        $call->last = $error;
        $call->response = null;
        $call->late = $kind === 'timeout' && $call->clipped;
        return $this->advance($call, $call->op->responded(Http::now(), null, $kind));
    }

    /** The operation gave up: as the machine says it reaches the caller. */
    private function end(Call $call): PromiseInterface
    {
        $op = $call->op;
        Http::flush($op, $this->logger, $this->metrics);
        $ending = $op->ending('client', $call->late);
        if ($ending === 'give_up') {
            [$message, $reason, $retryAtMs, $retryAt, $report] = Http::giveUp($op, $call->late);
            return Create::rejectionFor(new GiveUpException(
                $message,
                $reason,
                $call->request,
                $call->response,
                $retryAtMs,
                $retryAt,
                $report,
                $call->last instanceof \Throwable ? $call->last : null,
            ));
        }
        // The last response or the transport error, as Guzzle would have given it without recuo.
        return $call->last instanceof \Throwable
            ? Create::rejectionFor($call->last)
            : Create::promiseFor($call->last);
    }
}
