<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;

/**
 * `make install-php DESTDIR=...`: a release build as `recuo.so` in PHP's extension
 * directory, its ini file where the distribution keeps them, the PHP library with its
 * composer.json; PHP loads the staged copy with only `extension_dir` and the installed ini,
 * and `make uninstall-php` takes everything away again.
 */
final class InstallTest extends TestCase
{
    private static function command(array $command, array $env = []): array
    {
        $pipes = [];
        $process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, RECUO_ROOT, $env + getenv());
        $out = (string) stream_get_contents($pipes[1]);
        $err = (string) stream_get_contents($pipes[2]);
        return [proc_close($process), $out, $err];
    }

    private static function config(string $option): string
    {
        return trim((string) shell_exec('php-config ' . escapeshellarg($option)));
    }

    public function testMakeInstallPhpIntoADestdir(): void
    {
        $dest = sys_get_temp_dir() . '/recuo-install-' . bin2hex(random_bytes(4));
        mkdir($dest, 0700);
        try {
            [$status, $out, $err] = self::command(['make', '--no-print-directory', 'install-php', "DESTDIR=$dest"]);
            $this->assertSame(0, $status, $out . $err);

            $extDir = $dest . self::config('--extension-dir');
            $this->assertFileExists("$extDir/recuo.so");
            $debian = is_dir('/etc/php/' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION . '/mods-available');
            $iniDir = $debian
                ? $dest . '/etc/php/' . PHP_MAJOR_VERSION . '.' . PHP_MINOR_VERSION . '/mods-available'
                : $dest . self::config('--ini-dir');
            $ini = $iniDir . ($debian ? '/recuo.ini' : '/20-recuo.ini');
            $this->assertFileExists($ini);
            $this->assertStringContainsString("extension=recuo\n", (string) file_get_contents($ini));
            if ($debian) {
                $this->assertStringContainsString('; priority=', (string) file_get_contents($ini), 'phpenmod reads it');
            }

            // The installed ini and extension_dir, nothing else (no php.ini, no other scan dir).
            $php = [PHP_BINARY, '-c', '/dev/null', '-d', "extension_dir=$extDir"];
            $env = ['PHP_INI_SCAN_DIR' => $iniDir];
            [$status, $out, $err] = self::command([...$php, '--ri', 'recuo'], $env);
            $this->assertSame(0, $status, $out . $err);
            $this->assertStringContainsString('recuo', $out);
            $this->assertStringContainsString(\Recuo\VERSION, $out);

            // The PHP library, on the include path it was installed to.
            $lib = $dest . self::config('--prefix') . '/share/php';
            $this->assertFileExists("$lib/Recuo/autoload.php");
            $composer = json_decode((string) file_get_contents("$lib/Recuo/composer.json"), true, 512, JSON_THROW_ON_ERROR);
            $this->assertSame('*', $composer['require']['ext-recuo']);
            $this->assertSame(['Recuo\\' => 'src/'], $composer['autoload']['psr-4']);
            foreach ($composer['autoload']['files'] as $file) {
                $this->assertFileExists("$lib/Recuo/$file");
            }
            $code = <<<'PHP'
                require 'Recuo/autoload.php';
                echo implode(' ', [
                    class_exists(Recuo\GiveUpException::class),
                    function_exists('Recuo\buscarComRetry'),
                    function_exists('Recuo\Guzzle\retry'),
                    Recuo\VERSION,
                ]);
                PHP;
            [$status, $out, $err] = self::command([...$php, '-d', "include_path=.:$lib", '-r', $code], $env);
            $this->assertSame(0, $status, $out . $err);
            $this->assertSame('1 1 1 ' . \Recuo\VERSION, $out);

            [$status, $out, $err] = self::command(['make', '--no-print-directory', 'uninstall-php', "DESTDIR=$dest"]);
            $this->assertSame(0, $status, $out . $err);
            $left = trim((string) shell_exec('find ' . escapeshellarg($dest) . ' -mindepth 1'));
            $this->assertSame('', $left, 'uninstall-php removes every file and directory it installed');
            $this->assertDirectoryExists($dest);
        } finally {
            shell_exec('rm -rf ' . escapeshellarg($dest));
        }
    }
}
