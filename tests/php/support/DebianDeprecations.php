<?php

declare(strict_types=1);

namespace RecuoTests;

/**
 * Debian's Guzzle 7.4 makes a dynamic property (`CurlMultiHandler::$_mh`), deprecated since
 * PHP 8.2: that deprecation, and only deprecations from Debian's PHP libraries, are not turned
 * into exceptions (which would break Guzzle's event loop) — every other error goes to
 * PHPUnit's handler. For the test classes that drive Guzzle.
 */
trait DebianDeprecations
{
    protected function setUp(): void
    {
        $previous = null;
        $previous = set_error_handler(static function (int $level, string $message, string $file = '', int $line = 0) use (&$previous): bool {
            if ($level === E_DEPRECATED && str_starts_with($file, '/usr/share/php/')) {
                return true;
            }
            return $previous === null ? false : (bool) $previous($level, $message, $file, $line);
        });
    }

    protected function tearDown(): void
    {
        restore_error_handler();
    }
}
