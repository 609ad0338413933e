<?php

/*
 * recuo's PHP library without Composer: `require 'Recuo/autoload.php';` (installed by
 * `make install-php` in /usr/share/php/Recuo, which is on PHP's default include_path on
 * Debian). It registers a PSR-4 autoloader for the classes in src/ and loads the functions.
 * With Composer, use composer.json (a path repository) instead.
 */

declare(strict_types=1);

spl_autoload_register(static function (string $class): void {
    if (str_starts_with($class, 'Recuo\\')) {
        $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, 6)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});

require_once __DIR__ . '/src/functions.php';
