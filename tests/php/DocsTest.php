<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;

/**
 * Every PHP example of docs/php.md runs, in a PHP of its own with only the extension under
 * test; when a `text` block follows an example, that is exactly what it must print. The
 * Redis example runs against a `redis-server` this class starts (`REDIS_URL`); the HTTP
 * adapters' examples against three `recuo serve` (`RECUO_API`, `RECUO_SPENT` with a quota of
 * one, and a scripted one: `RECUO_FAILING` answers 503 every time, `RECUO_FLAKY` 503 once,
 * then 200), with the PHP library on the include path as `Recuo/` (as `make install-php`
 * puts it) and ext-curl.
 */
final class DocsTest extends TestCase
{
    private const DOC = RECUO_ROOT . '/docs/php.md';

    /** The Redis example's server: this class's own, named by REDIS_URL for the examples. */
    private static ?RedisServer $redis = null;

    /** @var list<resource> the `recuo serve` processes */
    private static array $servers = [];

    /** A directory holding `Recuo` (the repository's php/lib), for the examples' include_path. */
    private static string $includes = '';

    public static function setUpBeforeClass(): void
    {
        self::$redis = RedisServer::start();
        putenv('REDIS_URL=' . self::$redis->url());
        require_once __DIR__ . '/support/HttpServers.php';
        [$api, self::$servers[]] = HttpServers::serve(['--fail-rate', '0', '--allowance', '100000/min', '--burst', '1000', '--latency', '1ms']);
        [$spent, self::$servers[]] = HttpServers::serve(['--fail-rate', '0', '--quota', '1', '--latency', '1ms']);
        // The scripted server: each path plays a case of tests/vectors/http.json.
        [$script, self::$servers[]] = HttpServers::serve(['--script', RECUO_ROOT . '/tests/vectors/http.json']);
        putenv("RECUO_API=$api");
        putenv("RECUO_SPENT=$spent");
        putenv("RECUO_FAILING=$script/docs/guide-as-buscarcomretry-throws-after-the-last-503");
        // The quick start's server: 503 once, then 200 (one script per path, so once per run).
        putenv("RECUO_FLAKY=$script/docs/quick-start/a-get-retried-after-a-503-then-200");
        self::$includes = sys_get_temp_dir() . '/recuo-doc-include-' . bin2hex(random_bytes(4));
        mkdir(self::$includes, 0700);
        symlink(realpath(RECUO_ROOT . '/php/lib'), self::$includes . '/Recuo');
    }

    public static function tearDownAfterClass(): void
    {
        putenv('REDIS_URL');
        self::$redis?->stop();
        self::$redis = null;
        array_map([HttpServers::class, 'stop'], self::$servers);
        self::$servers = [];
        putenv('RECUO_API');
        putenv('RECUO_SPENT');
        putenv('RECUO_FAILING');
        putenv('RECUO_FLAKY');
        @unlink(self::$includes . '/Recuo');
        @rmdir(self::$includes);
    }

    /** @return array<string, array{string, ?string}> */
    public static function examples(): array
    {
        $doc = (string) file_get_contents(self::DOC);
        preg_match_all('/^```php\n(.*?)^```\n(?:\s*^```text\n(.*?)^```\n)?/ms', $doc, $blocks, PREG_SET_ORDER);
        $examples = [];
        foreach ($blocks as $i => $block) {
            $line = substr_count(substr($doc, 0, (int) strpos($doc, $block[0])), "\n") + 1;
            $examples["example at line $line"] = [$block[1], ($block[2] ?? '') === '' ? null : $block[2]];
        }
        if ($examples === []) {
            throw new \RuntimeException('no PHP example in ' . self::DOC);
        }
        return $examples;
    }

    /** @dataProvider examples */
    public function testTheExampleRuns(string $code, ?string $expected): void
    {
        $this->assertStringStartsWith("<?php\n", $code);
        $file = tempnam(sys_get_temp_dir(), 'recuo-doc-');
        $this->assertIsString($file);
        try {
            file_put_contents($file, $code);
            [$status, $out, $err] = Process::run([
                PHP_BINARY, '-n', '-d', 'extension=' . RECUO_EXTENSION, '-d', 'extension=curl',
                '-d', 'zend.assertions=1', '-d', 'assert.exception=1',
                '-d', 'include_path=.:/usr/share/php:' . self::$includes, $file,
            ]);
        } finally {
            unlink($file);
        }
        $this->assertSame('', $err);
        $this->assertSame(0, $status, $out);
        if ($expected !== null) {
            $this->assertSame($expected, $out);
        } else {
            $this->assertNotSame('', $out);
        }
    }

    /** Every example with output shows it; most do. */
    public function testMostExamplesShowTheirOutput(): void
    {
        $examples = self::examples();
        $shown = array_filter($examples, static fn (array $e): bool => $e[1] !== null);
        $this->assertGreaterThanOrEqual(8, count($examples));
        $this->assertSame(count($examples), count($shown));
    }
}
