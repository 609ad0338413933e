<?php

declare(strict_types=1);

// The HTTP clients of the adapters' tests: Debian's autoloaders (php-guzzlehttp-guzzle,
// php-symfony-http-client, php-psr-log; no Composer registry here) and recuo's own PHP library
// from the repository (php/lib, as `make install-php` installs it).
foreach ([
    '/usr/share/php/GuzzleHttp/autoload.php',
    '/usr/share/php/Symfony/Component/HttpClient/autoload.php',
    '/usr/share/php/Psr/Log/autoload.php',
] as $autoload) {
    if (!is_file($autoload)) {
        fwrite(STDERR, "recuo: $autoload is missing: run `make deps` (scripts/install-deps.sh)\n");
        exit(1);
    }
    require_once $autoload;
}
require_once __DIR__ . '/../../../php/lib/autoload.php';
