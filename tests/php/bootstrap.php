<?php

declare(strict_types=1);

// The tests run against the extension the Makefile just built; they never fall back to an
// installed copy, and they stop at once when it is not loaded.
if (!extension_loaded('recuo')) {
    fwrite(STDERR, "recuo: the extension is not loaded; run the tests with `make test-php`\n");
    exit(1);
}

/** The repository root. */
const RECUO_ROOT = __DIR__ . '/../..';

/** The extension under test, for the tests that start a PHP process of their own. */
define('RECUO_EXTENSION', getenv('RECUO_PHP_EXTENSION') ?: RECUO_ROOT . '/target/debug/librecuo_php.so');

require __DIR__ . '/support/Vectors.php';
require __DIR__ . '/support/ByHand.php';
require __DIR__ . '/support/ApiDescription.php';
require __DIR__ . '/support/RedisServer.php';
