<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Attempt;
use Recuo\Exception\SharedFileError;
use Recuo\Operation;
use Recuo\Policy;
use Recuo\Regulator;

use function Recuo\retry;

/**
 * Hostile input through PHP (issue 11): a Redis server answering `é\r\n` is a clear
 * `SharedFileError` (never a panic), `rediss://` is TLS or an error, and idempotency keys made after
 * `pcntl_fork()` and in two loops with one seed are all different.
 */
final class HostileTest extends TestCase
{
    /** A server on 127.0.0.1, in a forked child, that answers one request with `$answer`. */
    private static function fakeRedis(string $answer): array
    {
        $server = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
        self::assertNotFalse($server, $error);
        $address = stream_socket_get_name($server, false);
        $pid = pcntl_fork();
        self::assertGreaterThanOrEqual(0, $pid);
        if ($pid === 0) {
            $conn = stream_socket_accept($server, 5);
            if ($conn !== false) {
                fread($conn, 4096);
                fwrite($conn, $answer);
                stream_set_timeout($conn, 5);
                fread($conn, 4096);
            }
            // Leave without running the parent's shutdown functions or destructors.
            posix_kill(posix_getpid(), SIGKILL);
        }
        fclose($server);
        return [$address, $pid];
    }

    public function testAMultiByteReplyIsAClearError(): void
    {
        [$address, $pid] = self::fakeRedis("é\r\n");
        try {
            Regulator::redis("redis://:hunter2@{$address}", 'k', 1.0);
            $this->fail('no exception');
        } catch (SharedFileError $e) {
            $this->assertStringStartsWith(
                "Recuo\\Regulator::redis(): shared state: Redis at {$address}: bad reply: ",
                $e->getMessage(),
            );
            $this->assertStringNotContainsString('hunter2', $e->getMessage());
        } finally {
            pcntl_waitpid($pid, $status);
        }
    }

    public function testRedissIsTlsOrAnError(): void
    {
        try {
            Regulator::redis('rediss://u:hunter2@127.0.0.1:6380', 'k', 1.0);
            $this->fail('no exception');
        } catch (SharedFileError $e) {
            $this->assertStringContainsString('Redis at 127.0.0.1:6380 (TLS): ', $e->getMessage());
            $this->assertStringNotContainsString('hunter2', $e->getMessage());
        }
    }

    /** @return list<string> a key of the machine and one of a seeded loop */
    private static function keys(): array
    {
        $seen = '';
        retry(static function (Attempt $attempt) use (&$seen): void {
            $seen = $attempt->idempotencyKey;
        }, seed: 7);
        return [(new Operation(Policy::guideA(), 7))->key(), $seen];
    }

    public function testKeysMadeAfterAForkNeverRepeat(): void
    {
        self::keys(); // the parent makes keys before it forks, as a preforking server would
        $pair = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        $pid = pcntl_fork();
        $this->assertGreaterThanOrEqual(0, $pid);
        if ($pid === 0) {
            fwrite($pair[1], implode(',', self::keys()));
            fclose($pair[1]);
            posix_kill(posix_getpid(), SIGKILL);
        }
        fclose($pair[1]);
        $child = explode(',', stream_get_contents($pair[0]));
        pcntl_waitpid($pid, $status);
        $keys = [...self::keys(), ...self::keys(), ...$child];
        $this->assertCount(6, $keys);
        $this->assertCount(6, array_unique($keys), implode(' ', $keys));
        foreach ($keys as $key) {
            $this->assertMatchesRegularExpression('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', $key);
        }
    }
}
