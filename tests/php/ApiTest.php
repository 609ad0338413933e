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
                'INVALID_HEADER_NAME' => 6,
                'STATUS_OUT_OF_RANGE' => 7,
                'UNKNOWN_NAME' => 8,
                'INVALID_VALUE' => 9,
            ],
            $class->getConstants(),
        );
        // A plain exception class: PHP code may create one (in its own tests, say).
        $e = new ConfigError('made in PHP', ConfigError::CAP_BELOW_BASE);
        $this->assertSame('made in PHP', $e->getMessage());
        $this->assertSame(5, $e->getCode());
        $this->assertSame(__LINE__ - 3, $e->getLine());
    }

    /** The exceptions of the shared limits: one class per error of the core that is not a bad argument. */
    public function testPlanAndSharedFileErrorsExtendWhatTheySay(): void
    {
        $plan = new \ReflectionClass(\Recuo\Exception\PlanError::class);
        $this->assertSame(\ValueError::class, $plan->getParentClass()->getName());
        $this->assertSame([], $plan->getConstants());
        $shared = new \ReflectionClass(\Recuo\Exception\SharedFileError::class);
        $this->assertSame(\RuntimeException::class, $shared->getParentClass()->getName());
        $this->assertSame([], $shared->getConstants());
        $e = new \Recuo\Exception\SharedFileError('made in PHP');
        $this->assertSame('made in PHP', $e->getMessage());
    }

    /** A panic inside recuo is an ordinary exception (SPEC §10, §12): never an \Error. */
    public function testAPanicArrivesAsAnInternalErrorException(): void
    {
        $internal = new \ReflectionClass(\Recuo\Exception\InternalError::class);
        $this->assertSame(\RuntimeException::class, $internal->getParentClass()->getName());
        try {
            \Recuo\Testing\forcePanic();
            $this->fail('no exception');
        } catch (\Exception $e) {
            $this->assertSame(\Recuo\Exception\InternalError::class, $e::class);
            $this->assertSame(900, $e->getCode());
            $this->assertSame(
                'Recuo\Testing\forcePanic(): internal error in recuo (Rust panic: a deliberate panic at the boundary, for a test); please report it',
                $e->getMessage(),
            );
        }
    }

    /** The rate parameters are declared `string|float`, which ext-php-rs cannot say alone. */
    public function testRateParametersAreStringOrFloat(): void
    {
        $type = static fn (\ReflectionFunctionAbstract $f, int $i): string => (string) $f->getParameters()[$i]->getType();
        $plan = new \ReflectionFunction('Recuo\plan');
        $this->assertSame(['string|float', 'string|float'], [$type($plan, 1), $type($plan, 2)]);
        $this->assertSame('string|float', $type(new \ReflectionMethod(\Recuo\Regulator::class, '__construct'), 0));
        $this->assertSame('string|float', $type(new \ReflectionMethod(\Recuo\Regulator::class, 'shared'), 1));
        // Everything else keeps its own type.
        $this->assertSame('int', $type($plan, 0));
        $this->assertSame('float', $type($plan, 3));
    }

    /** The defaults PHP reports are guide A's, taken from the core. */
    /** A concurrency limit is made in this process, in a shared file, or on Redis. */
    public function testConcurrencyLimitIsMadeHereInAFileOrOnRedis(): void
    {
        $class = new \ReflectionClass(\Recuo\ConcurrencyLimit::class);
        $static = array_map(
            static fn (\ReflectionMethod $m): string => $m->getName(),
            $class->getMethods(\ReflectionMethod::IS_STATIC),
        );
        sort($static);
        $this->assertSame(['redis', 'shared'], $static);
        $params = array_map(
            static fn (\ReflectionParameter $p): string => $p->getName() . ': ' . $p->getType(),
            $class->getMethod('shared')->getParameters(),
        );
        $this->assertSame(['path: string', 'limit: int'], $params);
    }

    public function testDefaultsAreGuideAs(): void
    {
        $defaults = [];
        foreach ((new \ReflectionFunction('Recuo\comRetry'))->getParameters() as $p) {
            $defaults[$p->getName()] = $p->isDefaultValueAvailable() ? $p->getDefaultValue() : 'required';
        }
        $this->assertSame(
            [
                'tarefa' => 'required', 'tentativas' => 5, 'baseMs' => 200, 'maxMs' => 5000, 'repetirSe' => null,
                'seed' => null, 'sleep' => null, 'prazoMs' => null, 'aoRepetir' => null, 'gate' => null,
                'records' => null, 'method' => '', 'url' => '', 'metrics' => null,
            ],
            $defaults,
        );
    }

    /** The Policy constructor's defaults are the core's guide A, as Policy::guideA() reads it. */
    public function testPolicyDefaultsAreGuideAs(): void
    {
        $defaults = [];
        foreach ((new \ReflectionMethod(\Recuo\Policy::class, '__construct'))->getParameters() as $p) {
            $this->assertTrue($p->isDefaultValueAvailable(), $p->getName());
            $defaults[$p->getName()] = $p->getDefaultValue();
        }
        $a = \Recuo\Policy::guideA();
        $this->assertSame(
            [
                'maxAttempts' => $a->maxAttempts,
                'baseMs' => $a->baseMs,
                'capMs' => $a->capMs,
                'jitter' => $a->jitter,
                'deadlineMs' => $a->deadlineMs,
                'spreadMs' => $a->spreadMs,
                'idempotencyHeader' => $a->idempotencyHeader,
                'useDateHeader' => $a->useDateHeader,
                'serverHonoursKeys' => $a->serverHonoursKeys,
            ],
            $defaults,
        );
        $this->assertSame([5, 200, 5000, 'full', null], [$a->maxAttempts, $a->baseMs, $a->capMs, $a->jitter, $a->deadlineMs]);
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
            [
                'Recuo\Testing\forcePanic', 'Recuo\Testing\fullStats', 'Recuo\backoffWindowMs', 'Recuo\classify', 'Recuo\comRetry', 'Recuo\curlTransport', 'Recuo\giveUpMessage', 'Recuo\httpEnding', 'Recuo\monotonicMs', 'Recuo\monotonicNs',
                'Recuo\parseRetryAfter', 'Recuo\plan', 'Recuo\redactHeaders', 'Recuo\redactUrl',
                'Recuo\redactUrlDetailed', 'Recuo\retry', 'Recuo\retryDelayMs', 'Recuo\runBatch',
                'Recuo\telemetryOf', 'Recuo\waitMsFromNs', 'Recuo\whoAnswered',
            ],
            array_keys($extension['functions']),
        );
        $this->assertSame(
            [
                'Recuo\Attempt', 'Recuo\BatchProgress', 'Recuo\BatchQueue', 'Recuo\BatchReport', 'Recuo\BatchResult',
                'Recuo\ConcurrencyLimit', 'Recuo\Exception\ConfigError',
                'Recuo\Exception\InternalError', 'Recuo\Exception\PlanError', 'Recuo\Exception\SharedFileError', 'Recuo\Gate', 'Recuo\LoopPool', 'Recuo\Next',
                'Recuo\Operation', 'Recuo\Permit', 'Recuo\Plan', 'Recuo\Policy', 'Recuo\Record', 'Recuo\Regulator',
                'Recuo\Report', 'Recuo\RetryAfter', 'Recuo\RetryBudget', 'Recuo\Stats', 'Recuo\StatsRecorder', 'Recuo\Step', 'Recuo\Verdict',
                'Recuo\WhoAnswered',
            ],
            array_keys($extension['classes']),
        );
        $this->assertSame(['Recuo\VERSION'], array_keys($extension['constants']));
        $this->assertSame($extension, $stub);
    }
}
