<?php

declare(strict_types=1);

namespace RecuoTests;

require_once __DIR__ . '/support/HttpServers.php';

use PHPUnit\Framework\TestCase;
use Recuo\ConcurrencyLimit;
use Recuo\Exception\SharedFileError;
use Recuo\Gate;
use Recuo\Permit;
use Recuo\Policy;
use Recuo\Regulator;
use Recuo\RetryBudget;

use function Recuo\retry;

/**
 * The Redis limits on a Redis Cluster (`redis+cluster://host:port,…/`): a real cluster of 3
 * masters and 3 replicas on 127.0.0.1 (scripts/redis-cluster), started before the first test
 * and stopped after the last. The regulator, the limit and the budget answer by their rules on
 * keys of several masters, from one seed too, and through a gate in `Recuo\retry`; a TLS
 * cluster with an ACL user serves them to a PHP of its own. Then a fleet of 4 `php` processes
 * runs `Recuo\retry` against `recuo serve` behind one gate whose three limits live on the
 * master that is killed (SIGKILL) 2 s in: no operation outlives its deadline, the operations
 * that fail while the slot has no master fail with the gate's error and no attempt, and once
 * the replica took over the starts stay within the regulator's allowance and the requests in
 * flight within the limit (plus what asynchronous replication may lose: docs/limits.md).
 * The figures go to stderr. The rules themselves are held by redis-store/tests/cluster.rs
 * and failover.rs.
 */
final class RedisClusterTest extends TestCase
{
    use Throws;

    private const S = 1_000_000_000;
    private const RATE = 30;
    private const BURST = 3;
    private const LIMIT = 2;
    private const DEADLINE_MS = 2_000;
    private const PROCESSES = 4;
    /** How long the fleet runs, and when the master is killed after it started. */
    private const RUN_MS = 8_000;
    private const KILL_AFTER_MS = 2_000;

    private static ?RedisCluster $cluster = null;

    public static function setUpBeforeClass(): void
    {
        self::$cluster = RedisCluster::start();
    }

    public static function tearDownAfterClass(): void
    {
        self::$cluster?->stop();
        self::$cluster = null;
    }

    private static function cluster(): RedisCluster
    {
        return self::$cluster ?? throw new \LogicException('no Redis Cluster');
    }

    /**
     * Names `$prefix0`, `$prefix1`, … whose keys live on two different masters: each name
     * with its master's port.
     *
     * @return list<array{string, int}>
     */
    private static function onTwoMasters(string $prefix): array
    {
        $found = [];
        for ($i = 0; $i < 40 && count($found) < 2; $i++) {
            [$port] = self::cluster()->masterOf("{{$prefix}$i}:x");
            if (!in_array($port, array_column($found, 1), true)) {
                $found[] = ["$prefix$i", $port];
            }
        }
        self::assertCount(2, $found, "no names of $prefix on two masters");
        return $found;
    }

    public function testTheLimitsAnswerByTheirRulesOnEveryMasterTheyLiveOn(): void
    {
        $cluster = self::cluster();
        $url = $cluster->url;
        $this->assertMatchesRegularExpression('#^redis\+cluster://127\.0\.0\.1:\d+(,127\.0\.0\.1:\d+){2}/$#', $url);

        foreach (self::onTwoMasters('php-reg') as [$name, $port]) {
            $regulator = Regulator::redis($url, $name, '1/s', 2);
            $this->assertSame([0.0, 0.0], [$regulator->tryAcquire(), $regulator->tryAcquire()], $name);
            $this->assertGreaterThan(0.0, $regulator->tryAcquire(), $name);
            $this->assertSame('1', $cluster->cli($port, 'EXISTS', "{{$name}}:tat"), $name);
        }

        foreach (self::onTwoMasters('php-lim') as [$name, $port]) {
            $limit = ConcurrencyLimit::redis($url, $name, 2, 10.0);
            $one = $limit->tryAcquire();
            $two = $limit->tryAcquire();
            $this->assertInstanceOf(Permit::class, $one, $name);
            $this->assertInstanceOf(Permit::class, $two, $name);
            $this->assertNull($limit->tryAcquire(), $name);
            $this->assertSame('2', $cluster->cli($port, 'ZCARD', "{{$name}}:leases"), $name);
            $one->release();
            $this->assertInstanceOf(Permit::class, $limit->tryAcquire(), $name);
        }

        $t = 1_000 * self::S;
        foreach (self::onTwoMasters('php-bud') as [$name, $port]) {
            $budget = RetryBudget::redis($url, $name, 0.1, 0.5, 10);
            for ($i = 0; $i < 20; $i++) {
                $budget->recordRequestAt($t);
            }
            $granted = array_sum(array_map(static fn (): int => (int) $budget->tryWithdrawAt($t), range(1, 10)));
            // 10% of 20 requests and 0.5 a second over 10 s: 7 retries.
            $this->assertSame(7, $granted, $name);
            $this->assertSame(['requests' => 20, 'retries' => 7], $budget->counts($t));
            $this->assertSame('1', $cluster->cli($port, 'EXISTS', "{{$name}}:budget"), $name);
        }

        // One seed is enough: the other masters are found from its slot map.
        $seed = 'redis+cluster://127.0.0.1:' . $cluster->nodes[0] . '/';
        $seeded = Regulator::redis($seed, 'php-seeded', '1/s', 1);
        $this->assertSame(0.0, $seeded->tryAcquire());
        $this->assertGreaterThan(0.0, $seeded->tryAcquire());

        // A cluster has one database: a URL naming another is refused, by every constructor.
        foreach ([
            'Recuo\Regulator::redis' => static fn () => Regulator::redis('redis+cluster://h:1/2', 'k', '1/s'),
            'Recuo\ConcurrencyLimit::redis' => static fn () => ConcurrencyLimit::redis('redis+cluster://h:1/2', 'k', 1, 1.0),
            'Recuo\RetryBudget::redis' => static fn () => RetryBudget::redis('redis+cluster://h:1/2', 'k'),
        ] as $function => $call) {
            $e = $this->thrownBy($call);
            $this->assertInstanceOf(SharedFileError::class, $e, $function);
            $this->assertSame("$function(): shared state: a Redis Cluster has one database (0): the URL names database 2", $e->getMessage());
        }

        // A loop through a gate whose three limits live on three slots: one failure, one retry.
        $gate = new Gate(
            Regulator::redis($url, 'php-gate-reg', '100/s', 5),
            ConcurrencyLimit::redis($url, 'php-gate-lim', 2, 10.0),
            RetryBudget::redis($url, 'php-gate-bud', 0.1, 1.0, 10),
        );
        $calls = 0;
        $result = retry(static function () use (&$calls): string {
            if (++$calls === 1) {
                throw new \RuntimeException('once');
            }
            return 'sent';
        }, new Policy(baseMs: 0, capMs: 0), gate: $gate);
        $this->assertSame(['sent', 2], [$result, $calls]);
        $this->assertSame(['requests' => 1, 'retries' => 1], $gate->budget?->counts());
        $this->assertSame([0, 5], [$gate->limit?->inFlight, $gate->regulator?->burst]);
    }

    public function testATlsClusterWithAnAclUserServesTheLimits(): void
    {
        $tls = RedisCluster::start(tls: true);
        try {
            $this->assertStringStartsWith('rediss+cluster://app:apppw@127.0.0.1:', $tls->url);
            // A PHP of its own: SSL_CERT_FILE is read at a process's first TLS connection.
            [$status, $out, $err] = ClusterChild::start(
                [PHP_BINARY, '-n', '-d', 'extension=' . RECUO_EXTENSION, __DIR__ . '/support/cluster_child.php', 'tls', $tls->url],
                ['SSL_CERT_FILE' => (string) $tls->cert],
            )->finish();
        } finally {
            $tls->stop();
        }
        $this->assertSame([0, ''], [$status, $err], $out);
        $seen = json_decode($out, true, 8, JSON_THROW_ON_ERROR);
        $this->assertSame([true, true, false], $seen['starts']);
        $this->assertSame([true, true, false], $seen['places']);
        $this->assertSame(7, $seen['granted']);
        $this->assertSame('sent', $seen['sent']);
        $this->assertStringStartsWith('Recuo\ConcurrencyLimit::redis(): shared state: Redis at 127.0.0.1:', $seen['wrong']);
        $this->assertStringNotContainsString('nope', $seen['wrong']);
    }

    /** A name `$prefix0`, `$prefix1`, … whose keys live on the master at `$port`. */
    private static function nameOn(string $prefix, int $port): string
    {
        for ($i = 0; $i < 100; $i++) {
            if (self::cluster()->masterOf("{{$prefix}$i}:x")[0] === $port) {
                return "$prefix$i";
            }
        }
        throw new \RuntimeException("no name of $prefix on the master at $port");
    }

    /** Last: it kills a master of the class's cluster. */
    public function testAFleetKeepsItsLimitsThroughAFailover(): void
    {
        $cluster = self::cluster();
        [$port, $pid] = $cluster->masterOf('{php-failover-reg}:x');
        $names = ['php-failover-reg', self::nameOn('php-failover-lim', $port), self::nameOn('php-failover-bud', $port)];
        [$api, $serve] = HttpServers::serve(['--allowance', '100000/s', '--burst', '10000', '--fail-rate', '0', '--latency', '50ms']);
        $children = [];
        try {
            $startedMs = self::unixMs();
            $endMs = $startedMs + self::RUN_MS;
            for ($i = 0; $i < self::PROCESSES; $i++) {
                $children[] = ClusterChild::start([
                    PHP_BINARY, '-n', '-d', 'extension=' . RECUO_EXTENSION, __DIR__ . '/support/cluster_child.php',
                    'failover', $cluster->url, $api, (string) $endMs, ...$names,
                ]);
            }
            usleep(max(0, $startedMs + self::KILL_AFTER_MS - self::unixMs()) * 1000);
            $killedMs = self::unixMs();
            [$killed] = Process::run(['kill', '-9', (string) $pid]);
            $this->assertSame(0, $killed, "kill -9 $pid");
            $tookOverS = $cluster->waitOk();
            $recoveredMs = self::unixMs();
            $ops = [];
            foreach ($children as $i => $child) {
                [$status, $out, $err] = $child->finish();
                $this->assertSame([0, ''], [$status, $err], "process $i: $out");
                array_push($ops, ...json_decode($out, true, 8, JSON_THROW_ON_ERROR));
            }
            $stats = HttpServers::stats($api);
        } finally {
            array_map(static fn (ClusterChild $child) => $child->kill(), $children);
            HttpServers::stop($serve);
        }

        $ends = array_count_values(array_column($ops, 2));
        $others = array_diff_key($ends, ['ok' => 0, 'gate_error' => 0, 'waited' => 0]);
        $longest = max(array_column($ops, 1));
        $failed = array_values(array_filter($ops, static fn (array $op): bool => $op[2] === 'gate_error'));
        $firstFailed = $failed === [] ? null : min(array_column($failed, 0));
        $lastFailed = $failed === [] ? null : max(array_map(static fn (array $op): int => $op[0] + $op[1], $failed));
        // The starts the regulator allowed from the takeover to the last one.
        $after = array_values(array_filter(array_merge(...array_column($ops, 3)), static fn (int $at): bool => $at >= $recoveredMs));
        $lastStart = $after === [] ? $recoveredMs : max($after);
        $allowance = self::BURST + intdiv(($lastStart - $recoveredMs) * self::RATE, 1000) + 1;
        $mostInFlight = $stats['max_in_flight'];
        fwrite(STDERR, sprintf(
            "php failover figures: %d operations, longest %d ms (deadline %d ms); %d ended by the gate's error, "
            . "from %s ms to %s ms after the kill; %d gave up waiting for the gate; the replica took over after %.2f s; "
            . "after that %d starts for an allowance of %d; at most %d in flight (limit %d); %d requests in all\n",
            count($ops),
            $longest,
            self::DEADLINE_MS,
            count($failed),
            $firstFailed === null ? '-' : (string) ($firstFailed - $killedMs),
            $lastFailed === null ? '-' : (string) ($lastFailed - $killedMs),
            $ends['waited'] ?? 0,
            $tookOverS,
            count($after),
            $allowance,
            $mostInFlight,
            self::LIMIT,
            $stats['requests'],
        ));

        // Every operation ended as an operation behind a gate may: nothing else was thrown.
        $this->assertSame([], $others);
        // No operation outlives its deadline (a call is given 100 ms to hear the server's word).
        $this->assertLessThanOrEqual(self::DEADLINE_MS + 400, $longest);
        // While the slot has no master, operations end with the gate's error and no attempt —
        // and only then.
        $this->assertNotEmpty($failed, 'the kill was not seen');
        $this->assertGreaterThanOrEqual($killedMs - 2_500, $firstFailed);
        $this->assertLessThanOrEqual($recoveredMs + 2_500, $lastFailed);
        // Once the replica took over, the limits hold again (replication may lose what the
        // master granted in its last moment: at most one grant per process here).
        $this->assertNotEmpty($after, 'nothing started after the failover');
        $this->assertLessThanOrEqual($allowance + self::PROCESSES, count($after));
        $this->assertLessThanOrEqual(self::LIMIT + self::PROCESSES, $mostInFlight, json_encode($stats, JSON_THROW_ON_ERROR));
    }

    private static function unixMs(): int
    {
        return (int) (microtime(true) * 1000);
    }
}

/**
 * A Redis Cluster of 3 masters and 3 replicas on 127.0.0.1, through scripts/redis-cluster
 * (in a directory of its own under the temporary directory); {@see stop()} kills its nodes,
 * and so does the end of the PHP process if no test did.
 */
final class RedisCluster
{
    private const SCRIPT = RECUO_ROOT . '/scripts/redis-cluster';

    private bool $stopped = false;

    /**
     * @param string $url `redis+cluster://…` (`rediss+cluster://app:apppw@…` with TLS): the masters as seeds
     * @param list<int> $nodes every node's port
     * @param ?string $cert the certificate to trust (TLS clusters)
     */
    private function __construct(
        private readonly string $dir,
        public readonly string $url,
        public readonly array $nodes,
        public readonly ?string $cert,
    ) {
    }

    /** Starts a cluster (TLS, with the ACL user `app`, when `$tls`), ready: every slot served, every replica linked. */
    public static function start(bool $tls = false): self
    {
        $dir = sys_get_temp_dir() . '/recuo-cluster-php-' . getmypid() . '-' . bin2hex(random_bytes(4));
        [$status, $out, $err] = Process::run([self::SCRIPT, 'start', $dir, ...($tls ? ['--tls'] : [])]);
        if ($status !== 0) {
            Process::run([self::SCRIPT, 'stop', $dir]);
            throw new \RuntimeException("the cluster did not start: $err");
        }
        preg_match_all('/^(URL|NODES|CERT)=(.*)$/m', $out, $m);
        $env = array_combine($m[1], $m[2]);
        $cluster = new self($dir, $env['URL'], array_map('intval', explode(',', $env['NODES'])), $env['CERT'] ?? null);
        register_shutdown_function([$cluster, 'stop']);
        return $cluster;
    }

    /** The script's answer to `$command` on this cluster. */
    private function script(string $command, string ...$args): string
    {
        [$status, $out, $err] = Process::run([self::SCRIPT, $command, $this->dir, ...$args]);
        if ($status !== 0) {
            throw new \RuntimeException("redis-cluster $command failed: $err");
        }
        return trim($out);
    }

    /** @return array{int, int} the port and pid of the master serving `$key`'s slot */
    public function masterOf(string $key): array
    {
        return array_map('intval', explode(' ', $this->script('master-of', $key)));
    }

    /** Waits until every slot is served again; the seconds it took. */
    public function waitOk(): float
    {
        return (float) $this->script('wait-ok', '30');
    }

    /** `redis-cli` against the node at `$port` (plain clusters): its answer. */
    public function cli(int $port, string ...$args): string
    {
        return trim(Process::run(['redis-cli', '-h', '127.0.0.1', '-p', (string) $port, ...$args])[1]);
    }

    /** Kills this cluster's nodes (only those) and removes its directory. Idempotent. */
    public function stop(): void
    {
        if (!$this->stopped) {
            $this->stopped = true;
            Process::run([self::SCRIPT, 'stop', $this->dir]);
        }
    }
}

/** A child process whose stdout and stderr go to files (no pipe fills while it runs). */
final class ClusterChild
{
    /** @param resource $process */
    private function __construct(private mixed $process, private readonly string $out, private readonly string $err)
    {
    }

    /**
     * @param list<string> $command
     * @param array<string, string> $env added to this process's environment
     */
    public static function start(array $command, array $env = []): self
    {
        $out = (string) tempnam(sys_get_temp_dir(), 'recuo-child-out-');
        $err = (string) tempnam(sys_get_temp_dir(), 'recuo-child-err-');
        $pipes = [];
        $process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['file', $out, 'w'], 2 => ['file', $err, 'w']], $pipes, null, $env + getenv());
        if (!is_resource($process)) {
            throw new \RuntimeException('cannot start ' . implode(' ', $command));
        }
        return new self($process, $out, $err);
    }

    /** @return array{int, string, string} its exit status, stdout and stderr, once it ended */
    public function finish(): array
    {
        $status = proc_close($this->process);
        $seen = [$status, (string) file_get_contents($this->out), (string) file_get_contents($this->err)];
        $this->kill();
        return $seen;
    }

    /** Kills it if it still runs, and removes its files. */
    public function kill(): void
    {
        if (is_resource($this->process)) {
            proc_terminate($this->process, 9);
            proc_close($this->process);
        }
        @unlink($this->out);
        @unlink($this->err);
    }
}
