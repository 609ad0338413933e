<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Exception\ConfigError;

/** The extension's surface: its version, its exception class, and the IDE stub. */
final class ApiTest extends TestCase
{
    private const STUB = RECUO_ROOT . '/php/recuo.stub.php';

    /** The workspace version, read from `[workspace.package]` in the root Cargo.toml. */
    private static function cargoVersion(): string
    {
        $toml = (string) file_get_contents(RECUO_ROOT . '/Cargo.toml');
        if (!preg_match('/^\[workspace\.package\]\s*$(.*?)(?=^\[|\z)/ms', $toml, $section)
            || !preg_match('/^version\s*=\s*"([^"]+)"\s*$/m', $section[1], $version)) {
            throw new \RuntimeException('no [workspace.package] version in Cargo.toml');
        }
        return $version[1];
    }

    public function testVersionIsTheWorkspaceVersion(): void
    {
        $this->assertMatchesRegularExpression('/^\d+\.\d+\.\d+/', self::cargoVersion());
        $this->assertSame(self::cargoVersion(), \Recuo\VERSION);
        $this->assertSame(self::cargoVersion(), phpversion('recuo'));
    }

    public function testConfigErrorIsAValueErrorWithTheCoresCodes(): void
    {
        $class = new \ReflectionClass(ConfigError::class);
        $this->assertSame(\ValueError::class, $class->getParentClass()->getName());
        $this->assertSame(
            [
                'ZERO_ATTEMPTS' => 1,
                'NEGATIVE_DURATION' => 2,
                'NOT_A_NUMBER' => 3,
                'DURATION_TOO_LARGE' => 4,
                'CAP_BELOW_BASE' => 5,
            ],
            $class->getConstants(),
        );
        // A plain exception class: PHP code may create one (in its own tests, say).
        $e = new ConfigError('made in PHP', ConfigError::CAP_BELOW_BASE);
        $this->assertSame('made in PHP', $e->getMessage());
        $this->assertSame(5, $e->getCode());
        $this->assertSame(__LINE__ - 3, $e->getLine());
    }

    /** The defaults PHP reports are guide A's, taken from the core. */
    public function testDefaultsAreGuideAs(): void
    {
        $defaults = [];
        foreach ((new \ReflectionFunction('Recuo\comRetry'))->getParameters() as $p) {
            $defaults[$p->getName()] = $p->isDefaultValueAvailable() ? $p->getDefaultValue() : 'required';
        }
        $this->assertSame(
            ['tarefa' => 'required', 'tentativas' => 5, 'baseMs' => 200, 'maxMs' => 5000, 'repetirSe' => null, 'seed' => null, 'sleep' => null],
            $defaults,
        );
    }

    /**
     * The stub, loaded in a PHP without the extension, declares exactly what the extension
     * exports: the same functions, parameter names, order, types and defaults, return types,
     * classes, class constants, properties and constants.
     */
    public function testTheStubMatchesTheExtension(): void
    {
        [$status, $out, $err] = Process::run([PHP_BINARY, '-n', __DIR__ . '/support/describe_stub.php', self::STUB]);
        $this->assertSame(0, $status, $err);
        $this->assertSame('', $err);
        $stub = json_decode($out, true, 512, JSON_THROW_ON_ERROR);
        $extension = json_decode(
            json_encode(ApiDescription::ofExtension('recuo'), JSON_THROW_ON_ERROR),
            true,
            512,
            JSON_THROW_ON_ERROR,
        );
        $this->assertSame(
            ['Recuo\backoffWindowMs', 'Recuo\comRetry', 'Recuo\parseRetryAfter', 'Recuo\retryDelayMs'],
            array_keys($extension['functions']),
        );
        $this->assertSame(['Recuo\Exception\ConfigError', 'Recuo\RetryAfter'], array_keys($extension['classes']));
        $this->assertSame(['Recuo\VERSION'], array_keys($extension['constants']));
        $this->assertSame($extension, $stub);
    }
}
