<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;

/**
 * docs/recipes.md, run as written: its PHP code is taken from the page verbatim (only the
 * API's address, https://api.example.com, is replaced by a local server's) and run in a PHP of
 * its own, with the extension under test and the PHP library on the include path as `Recuo/`
 * (as `make install-php` puts it), against `recuo serve`: scripted to answer 500, then 429 with
 * `Retry-After: 1`, then 201 (or 503 every time), logging each request's Idempotency-Key; or,
 * for guide B's four workers, the simulated API. The Laravel recipe runs on Debian's Laravel
 * framework (php-laravel-framework: /usr/share/php/Illuminate), its `Http` facade set up on a
 * bare container as a Laravel app's would be.
 */
final class RecipesTest extends TestCase
{
    private const DOC = RECUO_ROOT . '/docs/recipes.md';
    private const PLACEHOLDER = 'https://api.example.com';
    private const PAYMENT = 'A payment, retried safely';
    private const WORKERS = '600 calls from four workers against 120 a minute';
    private const LARAVEL = 'Guzzle in a Laravel app';
    private const SCRIPT = ['requests' => [
        ['id' => 'payments', 'script' => [['status' => 500], ['status' => 429, 'headers' => ['Retry-After' => '1']], ['status' => 201]]],
        ['id' => 'daily', 'script' => [['status' => 503, 'headers' => ['Retry-After' => '0']]]],
    ]];
    /** What a Laravel app has loaded before its code runs: the framework, Guzzle and recuo, and the Http facade. */
    private const LARAVEL_BOOT = <<<'PHP'
        <?php
        require 'Illuminate/autoload.php';
        require 'GuzzleHttp/autoload.php';
        require 'Recuo/autoload.php';
        $app = new Illuminate\Container\Container();
        Illuminate\Container\Container::setInstance($app);
        Illuminate\Support\Facades\Facade::setFacadeApplication($app);
        $app->singleton(Illuminate\Http\Client\Factory::class);

        PHP;

    /** @var resource|null */
    private static mixed $server = null;
    private static string $base = '';
    /** A directory holding `Recuo` (the repository's php/lib) and the examples' files. */
    private static string $dir = '';

    public static function setUpBeforeClass(): void
    {
        require_once __DIR__ . '/support/HttpServers.php';
        self::$dir = sys_get_temp_dir() . '/recuo-recipes-' . bin2hex(random_bytes(4));
        mkdir(self::$dir, 0700);
        symlink((string) realpath(RECUO_ROOT . '/php/lib'), self::$dir . '/Recuo');
        file_put_contents(self::$dir . '/script.json', json_encode(self::SCRIPT, JSON_THROW_ON_ERROR));
        [self::$base, self::$server] = HttpServers::serve(['--script', self::$dir . '/script.json']);
    }

    public static function tearDownAfterClass(): void
    {
        HttpServers::stop(self::$server);
        self::$server = null;
        exec('rm -rf ' . escapeshellarg(self::$dir));
    }

    /** The text of docs/recipes.md under `## $title`, up to the next `## ` heading. */
    private static function section(string $title): string
    {
        $doc = (string) file_get_contents(self::DOC);
        $parts = explode("\n## $title\n", $doc, 2);
        self::assertCount(2, $parts, "docs/recipes.md has no section $title");
        return explode("\n## ", $parts[1], 2)[0];
    }

    /** The one `$language` block of `$text` that contains `$containing`. */
    private static function only(string $text, string $language, string $containing): string
    {
        preg_match_all('/^```' . $language . '\n(.*?)^```\n/ms', $text, $blocks);
        $found = array_values(array_filter($blocks[1], static fn (string $code): bool => str_contains($code, $containing)));
        self::assertCount(1, $found, "$language blocks with $containing");
        return $found[0];
    }

    private static function addressed(string $code, string $base): string
    {
        self::assertSame(1, substr_count($code, self::PLACEHOLDER));
        return str_replace(self::PLACEHOLDER, $base, $code);
    }

    /**
     * Runs `$command` in `$cwd`: its exit status, stdout and stderr.
     *
     * @param list<string> $command
     * @param array<string, string> $env
     * @return array{int, string, string}
     */
    private static function execute(array $command, string $cwd, array $env = []): array
    {
        $pipes = [];
        $process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $cwd, $env + getenv());
        self::assertIsResource($process);
        $out = (string) stream_get_contents($pipes[1]);
        $err = (string) stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        return [proc_close($process), $out, $err];
    }

    /** Runs `$file` in a PHP with the extension under test, `Recuo/` on the include path: its output. */
    private static function runPhp(string $file): string
    {
        [$status, $out, $err] = self::execute([
            PHP_BINARY, '-d', 'extension=' . (string) realpath(RECUO_EXTENSION),
            '-d', 'include_path=.:/usr/share/php:' . self::$dir,
            '-d', 'error_reporting=' . (E_ALL & ~E_DEPRECATED), '-d', 'display_errors=stderr',
            $file,
        ], self::$dir);
        self::assertSame([0, ''], [$status, $err], $out);
        return $out;
    }

    /** @return list<array{method: string, key: ?string}> what the scripted server saw on `$path` */
    private static function scriptLog(string $path): array
    {
        return json_decode((string) file_get_contents(self::$base . "/__script/log/$path"), true, 512, JSON_THROW_ON_ERROR);
    }

    public function testThePaymentSendsTheOrdersKeyOnEveryAttempt(): void
    {
        $code = self::only(self::section(self::PAYMENT), 'php', 'function payOrder');
        file_put_contents(self::$dir . '/payment.php', self::addressed($code, self::$base . '/php'));
        file_put_contents(self::$dir . '/pay.php', <<<'PHP'
            <?php
            require __DIR__ . '/payment.php';
            $started = microtime(true);
            $answer = payOrder(['id' => 42, 'amount' => 1990]);
            echo json_encode(['answer' => $answer, 'took' => microtime(true) - $started]);
            PHP);
        ['answer' => $answer, 'took' => $took] = json_decode(self::runPhp(self::$dir . '/pay.php'), true, 512, JSON_THROW_ON_ERROR);
        $this->assertSame(['request' => 2, 'status' => 201], $answer);
        // 500 (retried: the key is the caller's), 429 (its Retry-After: 1 waited out), 201.
        $this->assertSame(array_fill(0, 3, ['method' => 'POST', 'key' => 'pedido-42']), self::scriptLog('php/payments'));
        $this->assertGreaterThanOrEqual(1.0, $took);
        $this->assertLessThan(6.0, $took);
    }

    public function testTheLaravelServiceRetriesWithTheOrdersKeyAndWaitsOutRetryAfter(): void
    {
        $code = self::only(self::section(self::LARAVEL), 'php', 'class PaymentGateway');
        $this->assertStringStartsWith("<?php\n\nnamespace App\\Services;", $code);
        file_put_contents(self::$dir . '/PaymentGateway.php', self::addressed($code, self::$base . '/laravel'));
        file_put_contents(self::$dir . '/charge.php', self::LARAVEL_BOOT . <<<'PHP'
            require __DIR__ . '/PaymentGateway.php';
            $started = microtime(true);
            $response = $app->make(App\Services\PaymentGateway::class)->charge(['id' => 42, 'amount' => 1990]);
            echo json_encode(['status' => $response->status(), 'body' => $response->json(), 'took' => microtime(true) - $started]);
            PHP);
        $seen = json_decode(self::runPhp(self::$dir . '/charge.php'), true, 512, JSON_THROW_ON_ERROR);
        $this->assertSame([201, ['request' => 2, 'status' => 201]], [$seen['status'], $seen['body']]);
        // The 500 retried (the key is the caller's), the 429's Retry-After: 1 waited out: one key.
        $this->assertSame(array_fill(0, 3, ['method' => 'POST', 'key' => 'pedido-42']), self::scriptLog('laravel/payments'));
        $this->assertGreaterThanOrEqual(1.0, $seen['took']);
        $this->assertLessThan(8.0, $seen['took']);
    }

    public function testHttpRetryOverRecuoMultipliesTheAttempts(): void
    {
        // The warning's code, against a server that answers 503 (Retry-After: 0) every time.
        $code = self::only(self::section(self::LARAVEL), 'php', 'Http::retry(3');
        $this->assertStringContainsString('15 requests', self::section(self::LARAVEL));
        file_put_contents(self::$dir . '/retry.php', self::LARAVEL_BOOT . "use Illuminate\\Support\\Facades\\Http;\n\ntry {\n"
            . self::addressed($code, self::$base . '/laravel-retry')
            . "} catch (Illuminate\\Http\\Client\\RequestException \$e) {\n    echo \$e->response->status();\n}\n");
        $this->assertSame('503', self::runPhp(self::$dir . '/retry.php'));
        $this->assertSame(array_fill(0, 15, ['method' => 'GET', 'key' => null]), self::scriptLog('laravel-retry/reports/daily'));
    }

    public function testThePhpWorkersLaunchAsThePageSays(): void
    {
        // The page's worker (the file tests/guide_b runs) started by the page's launch lines
        // through a `php` that records its arguments, then runs the worker with one id of its share.
        $text = self::section(self::WORKERS);
        $worker = self::only($text, 'php', 'Recuo\runBatch(');
        $launch = self::only($text, 'sh', 'php worker.php');
        $dir = self::$dir . '/launch';
        mkdir("$dir/bin", 0700, true);
        file_put_contents("$dir/worker.php", $worker);
        $php = escapeshellarg(PHP_BINARY);
        // One write per line (`.`, not `,`): the four launches append to one file at once.
        $record = "$php -r 'echo json_encode(array_slice(\$argv, 1)) . \"\\n\";' -- \"\$@\" >> \"\$LAUNCHES\"";
        $real = "$php -d extension=" . escapeshellarg((string) realpath(RECUO_EXTENSION));
        file_put_contents("$dir/bin/php", "#!/bin/bash\n$record\nexec $real \"\${@:1:7}\" \"\${@:8:1}\"\n");
        chmod("$dir/bin/php", 0700);
        [$api, $process] = HttpServers::serve(['--allowance', '100000/min', '--burst', '1000', '--latency', '1ms', '--fail-rate', '0']);
        try {
            [$status, $out, $err] = self::execute(['bash', '-euo', 'pipefail', '-c', self::addressed($launch, $api)], $dir, [
                'PATH' => "$dir/bin:" . getenv('PATH'),
                'LAUNCHES' => "$dir/launches",
            ]);
            $this->assertSame(0, $status, $err . $out);
            $seen = HttpServers::stats($api);
        } finally {
            HttpServers::stop($process);
        }
        $args = array_map(
            static fn (string $line): array => json_decode($line, true, 512, JSON_THROW_ON_ERROR),
            file("$dir/launches", FILE_IGNORE_NEW_LINES) ?: [],
        );
        foreach (array_unique(array_column($args, 5)) as $state) {
            exec('rm -rf ' . escapeshellarg((string) $state)); // the launch's mktemp -d
        }
        $this->assertCount(4, $args);
        $this->assertCount(1, array_unique(array_column($args, 5)), 'one folder for the four');
        $ids = [];
        foreach ($args as $a) {
            $this->assertSame(['worker.php', $api, '90/min', '600', '0'], array_slice($a, 0, 5));
            $this->assertSame('steady', $a[6]);
            array_push($ids, ...array_map('intval', array_slice($a, 7)));
        }
        sort($ids);
        $this->assertSame(range(0, 599), $ids);
        $printed = array_map(
            static fn (string $line): array => json_decode($line, true, 512, JSON_THROW_ON_ERROR),
            explode("\n", trim($out)),
        );
        $this->assertSame(array_fill(0, 4, [1, 0]), array_map(static fn (array $s): array => [$s['successes'], $s['failures']], $printed));
        $this->assertSame(4, $seen['requests']);
    }
}
