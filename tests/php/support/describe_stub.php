<?php

declare(strict_types=1);

// Loads the IDE stub given as the first argument in a PHP *without* the extension and prints
// what it declares, as JSON (see ApiDescription). Used by StubTest.
if (extension_loaded('recuo')) {
    fwrite(STDERR, "describe_stub.php must run without the recuo extension\n");
    exit(2);
}
require __DIR__ . '/ApiDescription.php';
require $argv[1];
echo json_encode(\RecuoTests\ApiDescription::ofUserCode('Recuo'), JSON_THROW_ON_ERROR | JSON_PRETTY_PRINT), "\n";
