<?php

declare(strict_types=1);

namespace RecuoTests;

/**
 * The shared cases in tests/vectors/, as every surface of recuo reads them. JSON strings
 * decode to the UTF-8 bytes they spell, NUL bytes included, so every value reaches the
 * extension byte for byte.
 */
final class Vectors
{
    /** @return array<string, mixed> */
    public static function load(string $file): array
    {
        $path = RECUO_ROOT . '/tests/vectors/' . $file;
        $text = file_get_contents($path);
        if ($text === false) {
            throw new \RuntimeException("cannot read $path");
        }
        $doc = json_decode($text, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
        if (!is_array($doc)) {
            throw new \RuntimeException("$path: not a JSON object");
        }
        return $doc;
    }

    /**
     * The policy a vector describes (`max_attempts`, `base_ms`, `cap_ms`, `jitter`,
     * `deadline_ms`, `spread_ms`, `use_date_header`).
     *
     * @param array<string, mixed> $p
     */
    public static function policy(array $p): \Recuo\Policy
    {
        return new \Recuo\Policy(
            maxAttempts: $p['max_attempts'],
            baseMs: $p['base_ms'],
            capMs: $p['cap_ms'],
            jitter: $p['jitter'],
            deadlineMs: $p['deadline_ms'],
            spreadMs: $p['spread_ms'],
            useDateHeader: $p['use_date_header'],
        );
    }

    /**
     * The entries of `$list` in `$file`, keyed for data providers by index and a label.
     *
     * @return array<string, array{array<string, mixed>}>
     */
    public static function cases(string $file, string $list, callable $label): array
    {
        $cases = [];
        foreach (self::load($file)[$list] as $i => $case) {
            $cases[sprintf('#%d %s', $i, $label($case))] = [$case];
        }
        if ($cases === []) {
            throw new \RuntimeException("$file: no $list");
        }
        return $cases;
    }
}

/** Runs a command without a shell and gives back its exit status and output. */
final class Process
{
    /**
     * @param list<string> $command
     * @return array{int, string, string} exit status, stdout, stderr
     */
    public static function run(array $command): array
    {
        $pipes = [];
        $process = proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        if (!is_resource($process)) {
            throw new \RuntimeException('cannot start ' . implode(' ', $command));
        }
        $stdout = (string) stream_get_contents($pipes[1]);
        $stderr = (string) stream_get_contents($pipes[2]);
        fclose($pipes[1]);
        fclose($pipes[2]);
        return [proc_close($process), $stdout, $stderr];
    }

    /**
     * Runs `$code` in a fresh `php` with only the extension under test loaded.
     *
     * @return array{int, string, string}
     */
    public static function php(string $code): array
    {
        return self::run([PHP_BINARY, '-n', '-d', 'extension=' . RECUO_EXTENSION, '-r', $code]);
    }
}

/** Throws `$e`: a named function, so that tests can check where traces start. */
function fail_with(\Throwable $e): never
{
    throw $e;
}

/** For tests about what is thrown: the exact object, not only its class. */
trait Throws
{
    /** What `$call` threw; the test fails when it returned instead. */
    private function thrownBy(callable $call): \Throwable
    {
        try {
            $call();
        } catch (\Throwable $e) {
            return $e;
        }
        $this->fail('nothing was thrown');
    }
}

/** What a record (or a list of records) shows, for "this secret is nowhere" checks. */
final class Texts
{
    /** Every key and every value, raw, one a line: no escaping can hide a secret. */
    public static function of(mixed $value): string
    {
        if (is_array($value)) {
            $lines = [];
            foreach ($value as $key => $item) {
                $lines[] = (string) $key;
                $lines[] = self::of($item);
            }
            return implode("\n", $lines);
        }
        return match (true) {
            is_string($value) => $value,
            is_bool($value) => $value ? 'true' : 'false',
            $value === null => 'null',
            default => (string) $value,
        };
    }
}
