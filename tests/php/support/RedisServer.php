<?php

declare(strict_types=1);

namespace RecuoTests;

/**
 * A `redis-server` of the tests' own: on a free port of 127.0.0.1, without persistence
 * (`--save "" --appendonly no`), started with `proc_open` and stopped by {@see stop()} (a
 * test class calls it from `tearDownAfterClass`). Every wait is bounded.
 */
final class RedisServer
{
    /** @param resource $process */
    private function __construct(private mixed $process, public readonly int $port)
    {
    }

    /** The URL to give `Recuo\Regulator::redis()`. */
    public function url(): string
    {
        return "redis://127.0.0.1:{$this->port}";
    }

    /** A port of 127.0.0.1 nothing listens on now (the kernel's choice). */
    public static function freePort(): int
    {
        $socket = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
        if ($socket === false) {
            throw new \RuntimeException("no free port: $error");
        }
        $name = (string) stream_socket_get_name($socket, false);
        fclose($socket);
        return (int) substr($name, strrpos($name, ':') + 1);
    }

    /** Whether a Redis server answers PING on the port (asked by redis-cli: no protocol spoken here). */
    private static function answers(int $port): bool
    {
        $reply = shell_exec('timeout 2 redis-cli -h 127.0.0.1 -p ' . $port . ' ping 2>/dev/null');
        return is_string($reply) && trim($reply) === 'PONG';
    }

    /** Starts a server and waits (at most 10 s) until it answers. */
    public static function start(): self
    {
        for ($try = 0; $try < 5; $try++) { // the port may be taken between choice and start
            $port = self::freePort();
            $pipes = [];
            $process = proc_open(
                ['redis-server', '--port', (string) $port, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
                [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
                $pipes,
            );
            if (!is_resource($process)) {
                throw new \RuntimeException('cannot start redis-server (make deps installs it)');
            }
            $server = new self($process, $port);
            $giveUp = hrtime(true) + 10_000_000_000;
            while ($server->running() && !self::answers($port) && hrtime(true) < $giveUp) {
                usleep(20_000);
            }
            if ($server->running() && self::answers($port)) {
                return $server;
            }
            $server->stop();
        }
        throw new \RuntimeException('redis-server did not start on 127.0.0.1 (make deps installs it)');
    }

    private function running(): bool
    {
        return is_resource($this->process) && proc_get_status($this->process)['running'];
    }

    /** Stops the server: SIGTERM, then SIGKILL if it has not gone within 5 s. Idempotent. */
    public function stop(): void
    {
        if (!is_resource($this->process)) {
            return;
        }
        proc_terminate($this->process, 15);
        $giveUp = hrtime(true) + 5_000_000_000;
        while ($this->running() && hrtime(true) < $giveUp) {
            usleep(10_000);
        }
        if ($this->running()) {
            proc_terminate($this->process, 9);
        }
        proc_close($this->process);
    }
}

/**
 * A test class's own `redis-server`: started before its first test, stopped after its last;
 * {@see url()} names it.
 */
trait WithRedisServer
{
    private static ?RedisServer $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$server = RedisServer::start();
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    private static function url(): string
    {
        if (self::$server === null) {
            throw new \LogicException('no Redis server');
        }
        return self::$server->url();
    }
}
