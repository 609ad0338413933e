<?php

declare(strict_types=1);

namespace RecuoTests;

/**
 * The HTTP servers of the adapters' tests, each started by the test and stopped at its end:
 * `recuo serve` (the simulated rate-limited API, its `/stats`) and a real nginx `limit_req`
 * in front of one — both on 127.0.0.1 only, nginx with its own temporary configuration, pid
 * and logs. Every wait is bounded.
 */
final class HttpServers
{
    /** The `recuo` command, built by `cargo build -p recuo-cli`. */
    public static function recuo(): string
    {
        $binary = RECUO_ROOT . '/target/debug/recuo';
        if (!is_executable($binary)) {
            $cargo = getenv('CARGO') ?: 'cargo';
            exec('cd ' . escapeshellarg(RECUO_ROOT) . ' && ' . escapeshellarg($cargo) . ' build --quiet -p recuo-cli 2>&1', $out, $status);
            if ($status !== 0) {
                throw new \RuntimeException("cargo build -p recuo-cli failed:\n" . implode("\n", $out));
            }
        }
        return $binary;
    }

    /**
     * Starts `recuo serve` with `$arguments` on a free port and answers its base URL and the
     * process (for {@see stop()}).
     *
     * @param list<string> $arguments
     * @return array{string, resource}
     */
    public static function serve(array $arguments): array
    {
        // Its output goes to a file: a pipe nobody reads would fill and stop the server.
        $out = tempnam(sys_get_temp_dir(), 'recuo-serve-');
        $pipes = [];
        $process = proc_open(
            [self::recuo(), 'serve', '--port', '0', '--stop-after', '300s', ...$arguments],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $out, 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes,
        );
        if (!is_resource($process)) {
            throw new \RuntimeException('recuo serve did not start');
        }
        $until = microtime(true) + 10;
        $line = '';
        while (microtime(true) < $until && !str_contains($line, "\n")) {
            usleep(10_000);
            $line = (string) file_get_contents($out);
        }
        unlink($out);
        if (!preg_match('#^listening on (http://127\.0\.0\.1:\d+)#', $line, $m)) {
            proc_terminate($process);
            throw new \RuntimeException("recuo serve said: $line");
        }
        return [$m[1], $process];
    }

    /** @param resource $process */
    public static function stop(mixed $process): void
    {
        if (is_resource($process)) {
            proc_terminate($process, 15);
            proc_close($process);
        }
    }

    /** @return array<string, mixed> what `recuo serve` saw */
    public static function stats(string $base): array
    {
        $json = file_get_contents("$base/stats", false, stream_context_create(['http' => ['timeout' => 5]]));
        return (array) json_decode((string) $json, true, 512, JSON_THROW_ON_ERROR);
    }
}

/**
 * nginx with `limit_req` at `$rate` requests a second for every client together (a burst of
 * `$rate / 2`, `nodelay`; under `/strict/`, a zone of its own with no burst), refusals 429
 * with `Retry-After: 1`, proxying to `$backend`; `/spent` answers 429 with
 * `Retry-After: 3600`. The access log says, per request, its time, status, method, path
 * and `Idempotency-Key`.
 */
final class Nginx
{
    /** @param resource $process */
    private function __construct(private mixed $process, public readonly string $dir, public readonly string $base)
    {
    }

    public static function start(string $backend, int $rate): self
    {
        $burst = intdiv($rate, 2);
        $dir = sys_get_temp_dir() . '/recuo-nginx-' . bin2hex(random_bytes(4));
        mkdir($dir, 0700);
        for ($try = 0; $try < 5; $try++) {
            $port = RedisServer::freePort();
            $config = <<<CONF
                daemon off;
                worker_processes 1;
                pid $dir/nginx.pid;
                error_log $dir/error.log warn;
                events { worker_connections 256; }
                http {
                    access_log off;
                    client_body_temp_path $dir/body;
                    proxy_temp_path $dir/proxy;
                    fastcgi_temp_path $dir/fastcgi;
                    uwsgi_temp_path $dir/uwsgi;
                    scgi_temp_path $dir/scgi;
                    limit_req_zone \$binary_remote_addr zone=api:1m rate={$rate}r/s;
                    limit_req_zone \$binary_remote_addr zone=strict:1m rate={$rate}r/s;
                    log_format recuo '\$msec \$status \$request_method \$uri \$http_idempotency_key';
                    server {
                        listen 127.0.0.1:$port;
                        access_log $dir/access.log recuo;
                        location /spent { add_header Retry-After 3600 always; return 429; }
                        location /gone { return 404; }
                        location /broken { return 500; }
                        location /strict/ {
                            limit_req zone=strict nodelay;
                            limit_req_status 429;
                            add_header Retry-After 1 always;
                            proxy_pass $backend;
                        }
                        location / {
                            limit_req zone=api burst=$burst nodelay;
                            limit_req_status 429;
                            add_header Retry-After 1 always;
                            proxy_pass $backend;
                        }
                    }
                }
                CONF;
            file_put_contents("$dir/nginx.conf", $config);
            $pipes = [];
            $process = proc_open(
                ['nginx', '-p', $dir, '-c', "$dir/nginx.conf", '-e', "$dir/error.log"],
                [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', "$dir/stderr.log", 'w']],
                $pipes,
            );
            $until = microtime(true) + 10;
            while (microtime(true) < $until && proc_get_status($process)['running']) {
                $socket = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 0.2);
                if ($socket !== false) {
                    fclose($socket);
                    return new self($process, $dir, "http://127.0.0.1:$port");
                }
                usleep(20_000);
            }
            proc_terminate($process);
            proc_close($process);
        }
        throw new \RuntimeException('nginx did not start: ' . @file_get_contents("$dir/stderr.log") . @file_get_contents("$dir/error.log"));
    }

    /**
     * The access log, one entry per request.
     *
     * @return list<array{time: float, status: int, method: string, path: string, key: string}>
     */
    public function log(): array
    {
        // nginx writes an entry once the response is sent: the client may read it first.
        usleep(100_000);
        $entries = [];
        foreach (file("$this->dir/access.log", FILE_IGNORE_NEW_LINES) ?: [] as $line) {
            [$time, $status, $method, $path, $key] = explode(' ', $line) + [4 => '-'];
            $entries[] = ['time' => (float) $time, 'status' => (int) $status, 'method' => $method, 'path' => $path, 'key' => $key];
        }
        return $entries;
    }

    public function stop(): void
    {
        if (is_resource($this->process)) {
            proc_terminate($this->process, 3); // SIGQUIT: a graceful stop
            $until = microtime(true) + 5;
            while (microtime(true) < $until && proc_get_status($this->process)['running']) {
                usleep(20_000);
            }
            if (proc_get_status($this->process)['running']) {
                proc_terminate($this->process, 9);
            }
            proc_close($this->process);
        }
        foreach (['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'] as $sub) {
            @rmdir("$this->dir/$sub");
        }
        array_map('unlink', glob("$this->dir/*") ?: []);
        @rmdir($this->dir);
    }
}
