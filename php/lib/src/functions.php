<?php

declare(strict_types=1);

namespace Recuo\Guzzle {

    use Psr\Log\LoggerInterface;
    use Recuo\Gate;
    use Recuo\Policy;

    /**
     * The Guzzle middleware of {@see RetryMiddleware}, for `$stack->push(Recuo\Guzzle\retry())`.
     * Without `$policy`, guide B's with a 30 s deadline measured from the response's `Date`.
     *
     * @return callable(callable): RetryMiddleware
     */
    function retry(?Policy $policy = null, ?Gate $gate = null, ?LoggerInterface $logger = null, ?int $seed = null): callable
    {
        return static fn (callable $handler): RetryMiddleware => new RetryMiddleware($handler, $policy, $gate, $logger, $seed);
    }
}

namespace Recuo {

    use Recuo\Internal\Http;

    /**
     * Guide A's `buscarComRetry($url)` over ext-curl, on the core's operation machine: 429 and
     * 5xx are temporary (a 500, 502 or 504 on a method that is not idempotent only when you
     * send your own `Idempotency-Key` in `cabecalhos`), network failures are retried, every
     * other 4xx is answered at once, `Retry-After` (seconds or an HTTP-date, measured from the
     * response's `Date`) is honoured and never shortened; a wait that does not fit `prazoMs`
     * throws {@see GiveUpException} at once, with the last response and `retryAt`.
     *
     * Answers the last response, whatever its status, once the attempts are spent or the
     * status is not worth another; throws {@see CurlError} when the last attempt failed on
     * the network. A method that is not idempotent sends one `Idempotency-Key` on every
     * attempt.
     *
     * @param array{tentativas?: int, baseMs?: int, maxMs?: int, prazoMs?: int|null, metodo?: string, dados?: string|null,
     *              cabecalhos?: array<string, string>, timeoutMs?: int|null, gate?: Gate|null, seed?: int|null,
     *              sleep?: callable(int): mixed} $opcoes
     */
    function buscarComRetry(string $url, array $opcoes = []): Resposta
    {
        $known = ['tentativas', 'baseMs', 'maxMs', 'prazoMs', 'metodo', 'dados', 'cabecalhos', 'timeoutMs', 'gate', 'seed', 'sleep'];
        foreach (array_keys($opcoes) as $name) {
            if (!in_array($name, $known, true)) {
                throw new \ValueError(sprintf('Recuo\buscarComRetry(): Argument #2 ($opcoes) has an unknown option "%s"; the options are %s', $name, implode(', ', $known)));
            }
        }
        $policy = new Policy(
            (int) ($opcoes['tentativas'] ?? 5),
            (int) ($opcoes['baseMs'] ?? 200),
            (int) ($opcoes['maxMs'] ?? 5000),
            'full',
            array_key_exists('prazoMs', $opcoes) ? $opcoes['prazoMs'] : 30_000,
            null,
            'Idempotency-Key',
            true,
        );
        $method = strtoupper((string) ($opcoes['metodo'] ?? 'GET'));
        $gate = $opcoes['gate'] ?? null;
        $sleep = $opcoes['sleep'] ?? static function (int $ms): void {
            usleep($ms * 1000);
        };
        $timeoutMs = array_key_exists('timeoutMs', $opcoes) ? $opcoes['timeoutMs'] : 10_000;
        $headers = [];
        foreach ($opcoes['cabecalhos'] ?? [] as $name => $value) {
            $headers[strtolower((string) $name)] = "$name: $value";
        }
        $keyHeader = strtolower($policy->idempotencyHeader);
        $keyGiven = isset($headers[$keyHeader]);
        $op = new Operation($policy, seed: $opcoes['seed'] ?? null, gate: $gate, method: $method, url: $url, keyGiven: $keyGiven);
        if (!isset($headers[$keyHeader]) && !$policy->isMethodIdempotent($method)) {
            $headers[$keyHeader] = "{$policy->idempotencyHeader}: {$op->key()}";
        }

        $last = null;
        $error = null;
        $waitMs = 0;
        $permit = null;
        $step = $op->start(Http::now(), Http::unixMs());
        while (true) {
            switch ($step->kind) {
                case 'enter':
                    [$passed, $gateWait, $permit] = Http::enter($gate, $step, 0);
                    if ($gateWait > 0) {
                        $sleep($gateWait);
                    }
                    $step = $op->entered($passed ? Http::now() : max(Http::now(), ($step->untilMs ?? 0) + 1), $passed);
                    break;
                case 'call':
                    $attemptTimeout = $timeoutMs;
                    if ($step->timeoutMs !== null) {
                        $attemptTimeout = $attemptTimeout === null ? $step->timeoutMs : min($attemptTimeout, $step->timeoutMs);
                    }
                    [$last, $error] = curlAttempt($url, $method, $opcoes['dados'] ?? null, array_values($headers), $attemptTimeout);
                    $permit?->release();
                    $permit = null;
                    $step = $error === null
                        ? $op->responded(Http::now(), $last['status'], null, $last['headers'])
                        : $op->responded(Http::now(), null, $error->kind);
                    break;
                case 'sleep':
                    $sleep((int) $step->delayMs);
                    $step = $op->slept(Http::now());
                    break;
                case 'gave_up':
                    if ($step->reason === 'wait_exceeds_deadline') {
                        throw new GiveUpException(
                            Http::giveUpMessage($step, $method, $url),
                            (string) $step->reason,
                            $last === null ? null : new Resposta($last['status'], $last['headers'], $last['body'], $url, $step->report),
                            $step->retryAtMs,
                            Http::wallClock($step->retryAtMs),
                            $step->report,
                            $error,
                        );
                    }
                    // Fall through: the last answer, as without recuo.
                case 'done':
                    if ($error !== null) {
                        throw $error;
                    }
                    return new Resposta($last['status'], $last['headers'], $last['body'], $url, $step->report ?? $op->report());
                default:
                    throw new \LogicException("recuo: unexpected step {$step->kind}");
            }
        }
    }

    /**
     * @internal One attempt of {@see buscarComRetry()} with ext-curl: the response, or the
     * network failure.
     *
     * @param list<string> $headers
     * @return array{0: array{status: int, headers: array<string, list<string>>, body: string}|null, 1: CurlError|null}
     */
    function curlAttempt(string $url, string $method, ?string $body, array $headers, ?int $timeoutMs): array
    {
        $handle = curl_init($url);
        $received = [];
        curl_setopt_array($handle, [
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $headers,
            CURLOPT_NOSIGNAL => true,
            CURLOPT_HEADERFUNCTION => static function ($h, string $line) use (&$received): int {
                if (preg_match('/^HTTP\/\S+\s+\d+/', $line)) {
                    $received = [];
                } elseif (str_contains($line, ':')) {
                    [$name, $value] = explode(':', $line, 2);
                    $received[strtolower(trim($name))][] = trim($value);
                }
                return strlen($line);
            },
        ]);
        if ($method === 'HEAD') {
            curl_setopt($handle, CURLOPT_NOBODY, true);
        }
        if ($body !== null) {
            curl_setopt($handle, CURLOPT_POSTFIELDS, $body);
        }
        if ($timeoutMs !== null) {
            curl_setopt($handle, CURLOPT_TIMEOUT_MS, max(1, $timeoutMs));
        }
        $content = curl_exec($handle);
        $errno = curl_errno($handle);
        if ($content === false || $errno !== 0) {
            $error = new CurlError(curl_error($handle), $errno, Http::curlKind($errno, curl_getinfo($handle)));
            curl_close($handle);
            return [null, $error];
        }
        $status = (int) curl_getinfo($handle, CURLINFO_RESPONSE_CODE);
        curl_close($handle);
        return [['status' => $status, 'headers' => $received, 'body' => (string) $content], null];
    }
}
