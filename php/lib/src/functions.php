<?php

declare(strict_types=1);

namespace Recuo\Guzzle {

    use Psr\Log\LoggerInterface;
    use Recuo\Gate;
    use Recuo\Policy;

    /**
     * The Guzzle middleware of {@see RetryMiddleware}, for `$stack->push(Recuo\Guzzle\retry())`.
     * Without `$policy`, the adapters' default (`Policy::adapters()`: 5 attempts, 1 s to 8 s of
     * full jitter, a 30 s deadline, HTTP-dates measured from the response's `Date`). `$idempotencyKeys`: whether
     * recuo adds its own key to a request that has none — null for methods that are not
     * idempotent, true for every request, false for none. `$metrics`: called with each metric
     * point as the records are made — its Prometheus name (`recuo_attempts_total`, …), its
     * value (a count to add, or seconds to observe) and its labels.
     *
     * @param null|callable(string, float, array<string, string>): void $metrics
     * @return callable(callable): RetryMiddleware
     */
    function retry(?Policy $policy = null, ?Gate $gate = null, ?LoggerInterface $logger = null, ?int $seed = null, ?bool $idempotencyKeys = null, ?callable $metrics = null): callable
    {
        return static fn (callable $handler): RetryMiddleware => new RetryMiddleware($handler, $policy, $gate, $logger, $seed, $idempotencyKeys, $metrics);
    }
}

namespace Recuo {

    use Recuo\Internal\Http;

    /**
     * The `buscarComRetry($url)` of guide A,
     * “Como repetir requisições com backoff exponencial (retry)”
     * (https://pradev.com.br/guias/como-repetir-requisicoes-com-backoff), over
     * ext-curl, with recuo's rules for every attempt: 429 and 5xx are temporary (a 500, 502 or
     * 504 on a method that is not idempotent only when you send your own `Idempotency-Key` in
     * `cabecalhos`), network failures are retried (a body cut short after its headers is a
     * dropped connection), every other 4xx is answered at once, `Retry-After` (seconds or an
     * HTTP-date, measured from the response's `Date`) is honoured and never shortened.
     *
     * It ends as the guide's function does: a success, or a 4xx other than 429, is answered;
     * after the last attempt on a 429 or a 5xx it throws {@see GiveUpException} carrying that
     * response (a {@see Resposta}), the reason and the report; a wait that does not fit `prazoMs`
     * throws it at once, with `retryAt`; a network failure on the last attempt throws
     * {@see CurlError}. A method that is not idempotent sends one `Idempotency-Key` on every
     * attempt. `logger` (a PSR-3 logger) receives the records, `metrics` each metric point
     * (its Prometheus name, value and labels), as the Guzzle middleware's do.
     *
     * @param array{tentativas?: int, baseMs?: int, maxMs?: int, prazoMs?: int|null, metodo?: string, dados?: string|null,
     *              cabecalhos?: array<string, string>, timeoutMs?: int|null, gate?: Gate|null, seed?: int|null,
     *              sleep?: callable(int): mixed, logger?: \Psr\Log\LoggerInterface|null,
     *              metrics?: (callable(string, float, array<string, string>): void)|null} $opcoes
     * @throws GiveUpException after the last attempt on a 429 or 5xx, or when a wait does not fit the deadline
     * @throws CurlError when the last attempt failed on the network
     */
    function buscarComRetry(string $url, array $opcoes = []): Resposta
    {
        $known = ['tentativas', 'baseMs', 'maxMs', 'prazoMs', 'metodo', 'dados', 'cabecalhos', 'timeoutMs', 'gate', 'seed', 'sleep', 'logger', 'metrics'];
        foreach (array_keys($opcoes) as $name) {
            if (!in_array($name, $known, true)) {
                throw new \ValueError(sprintf('Recuo\buscarComRetry(): Argument #2 ($opcoes) has an unknown option "%s"; the options are %s', $name, implode(', ', $known)));
            }
        }
        // Guide A's attempts and backoff (the Policy's own defaults, the core's), the adapters'
        // deadline unless `prazoMs` says otherwise, HTTP-dates measured from the response's `Date`.
        static $adapters = null;
        $adapters ??= Policy::adapters();
        $settings = ['deadlineMs' => array_key_exists('prazoMs', $opcoes) ? $opcoes['prazoMs'] : $adapters->deadlineMs, 'useDateHeader' => true];
        foreach (['tentativas' => 'maxAttempts', 'baseMs' => 'baseMs', 'maxMs' => 'capMs'] as $option => $setting) {
            if (isset($opcoes[$option])) {
                $settings[$setting] = (int) $opcoes[$option];
            }
        }
        $policy = new Policy(...$settings);
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
        $logger = $opcoes['logger'] ?? null;
        $metrics = $opcoes['metrics'] ?? null;
        $op = new Operation($policy, seed: $opcoes['seed'] ?? null, gate: $gate, method: $method, url: $url, keyGiven: isset($headers[$keyHeader]), records: Http::records($logger, $metrics));
        if ($op->keySent === 'recuo') {
            $headers[$keyHeader] = "{$policy->idempotencyHeader}: {$op->key()}";
        }

        $last = null;
        $error = null;
        $late = false;
        $step = $op->start(Http::now(), Http::unixMs());
        while (true) {
            Http::flush($op, $logger, $metrics);
            switch ($step->kind) {
                case 'enter':
                    // The machine's gate step; its waits are `sleep`'s.
                    $step = Http::pass($op, $sleep);
                    break;
                case 'call':
                    // Bounded by what is left of the deadline when that is shorter than `timeoutMs`.
                    $clipped = $step->timeoutMs !== null && ($timeoutMs === null || $step->timeoutMs <= $timeoutMs);
                    [$last, $error] = curlAttempt($url, $method, $opcoes['dados'] ?? null, array_values($headers), $clipped ? $step->timeoutMs : $timeoutMs);
                    // A timeout of an attempt the deadline bounded is the deadline's cut.
                    $late = $error !== null && $error->kind === 'timeout' && $clipped;
                    $step = $error === null
                        ? $op->responded(Http::now(), $last['status'], null, $last['headers'])
                        : $op->responded(Http::now(), null, $error->kind);
                    break;
                case 'sleep':
                    $sleep((int) $step->delayMs);
                    $step = $op->slept(Http::now());
                    break;
                case 'done':
                    // A success: its response.
                    Http::flush($op, $logger, $metrics);
                    return new Resposta($last['status'], $last['headers'], $last['body'], $url, $step->report ?? $op->report());
                case 'gave_up':
                    Http::flush($op, $logger, $metrics);
                    $report = $step->report ?? $op->report();
                    $resposta = $last === null ? null : new Resposta($last['status'], $last['headers'], $last['body'], $url, $report);
                    switch ($op->ending('guide', $late)) {
                        case 'give_up':
                            [$message, $reason, $retryAtMs, $retryAt] = Http::giveUp($op, $late);
                            throw new GiveUpException($message, $reason, $resposta, $retryAtMs, $retryAt, $report, $error);
                        case 'error':
                            throw $error;
                        default:
                            return $resposta;
                    }
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
