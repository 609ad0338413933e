<?php

declare(strict_types=1);

// One of the processes of HttpAdaptersTest's shared-regulator test: sends `$count` GETs to
// `$base` through Guzzle with recuo's middleware, every start taken from the regulator shared
// in `$file` at `$rate`; prints each final status, one per line.
//
// Usage: php -d extension=... guzzle_child.php BASE FILE RATE COUNT

require __DIR__ . '/http.php';

[, $base, $file, $rate, $count] = $argv;
$gate = new Recuo\Gate(Recuo\Regulator::shared($file, $rate, 1));
$stack = GuzzleHttp\HandlerStack::create();
$stack->push(Recuo\Guzzle\retry(null, $gate));
$client = new GuzzleHttp\Client(['handler' => $stack, 'http_errors' => false]);
for ($i = 0; $i < (int) $count; $i++) {
    echo $client->get("$base/items/" . getmypid() . "-$i")->getStatusCode(), "\n";
}
