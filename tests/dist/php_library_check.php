<?php

/*
 * php_library_check.php PROJECT — the Composer archive of php/lib (recuo/recuo), installed in
 * PROJECT by tests/dist/php.sh, used as a Debian user has the rest: Guzzle and Symfony
 * HttpClient from Debian's packages through their own autoloaders (/usr/share/php is on PHP's
 * default include_path). Each adapter meets a 503, retries and gets the 200; the transports
 * are the clients' own mocks, so no network is needed.
 */

declare(strict_types=1);

require $argv[1] . '/vendor/autoload.php';
require 'GuzzleHttp/autoload.php';
require 'Symfony/Component/HttpClient/autoload.php';

use GuzzleHttp\Handler\MockHandler;
use GuzzleHttp\Psr7\Response;
use Symfony\Component\HttpClient\MockHttpClient;
use Symfony\Component\HttpClient\Response\MockResponse;

$policy = new Recuo\Policy(baseMs: 1, capMs: 5);

$mock = new MockHandler([new Response(503), new Response(200)]);
$stack = GuzzleHttp\HandlerStack::create($mock);
$stack->push(Recuo\Guzzle\retry($policy));
$client = new GuzzleHttp\Client(['handler' => $stack]);
$status = $client->get('https://api.example.com/items/7')->getStatusCode();
echo 'guzzle: ', $status, ' after ', 2 - $mock->count(), " attempts\n";

$calls = 0;
$answers = [503, 200];
$transport = new MockHttpClient(function () use (&$calls, $answers): MockResponse {
    return new MockResponse('', ['http_code' => $answers[$calls++]]);
});
$client = Recuo\Symfony\RetryStrategy::client($transport, $policy);
$status = $client->request('GET', 'https://api.example.com/items/7')->getStatusCode();
echo 'symfony: ', $status, ' after ', $calls, " attempts\n";
