<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\WhoAnswered;

use function Recuo\redactHeaders;
use function Recuo\redactUrl;
use function Recuo\redactUrlDetailed;
use function Recuo\whoAnswered;

/**
 * `redactUrl()`, `redactUrlDetailed()`, `redactHeaders()` and `whoAnswered()` as PHP code
 * holds its data: every header shape, any casing, bytes that are not UTF-8. (Every case of
 * tests/vectors/redaction.json and origin.json runs in VectorsTest.)
 */
final class RedactionTest extends TestCase
{
    use Throws;

    public function testAUrl(): void
    {
        $this->assertSame(
            'https://api.example.com/v1/users/[email]/orders?cpf=[number]&api_key=[redacted]&page=2',
            redactUrl('https://alice:hunter2@api.example.com/v1/users/ana@example.com/orders?cpf=123.456.789-09&api_key=AK1&page=2'),
        );
        $this->assertSame(['url' => 'https://h.example.com/ok', 'malformed' => false], redactUrlDetailed('https://h.example.com/ok'));
        $this->assertSame(['url' => '', 'malformed' => false], redactUrlDetailed(''));
        $this->assertSame(['url' => 'http://', 'malformed' => true], redactUrlDetailed('http://'));
        // Redacting twice changes nothing more.
        $once = redactUrl('https://u:p@h.example.com/a?token=t&to=bob%40mail.example.org');
        $this->assertSame($once, redactUrl($once));
    }

    /** @return array<string, array{array<mixed>, list<array{string, string}>}> */
    public static function headerShapes(): array
    {
        return [
            'name => value' => [
                ['Authorization' => 'Bearer abc', 'Content-Type' => 'application/json'],
                [['Authorization', '[redacted]'], ['Content-Type', 'application/json']],
            ],
            'PSR-7: name => list of values' => [
                ['Set-Cookie' => ['sid=1', 'theme=dark'], 'Link' => ['<https://u:p@h.example.com/next?token=z>; rel="next"']],
                [['Set-Cookie', '[redacted]'], ['Set-Cookie', '[redacted]'], ['Link', '<https://h.example.com/next?token=[redacted]>; rel="next"']],
            ],
            '[name, value] pairs, a name twice' => [
                [['Cookie', 'a=1'], ['cookie', 'b=2'], ['X-Request-Id', 'r-1']],
                [['Cookie', '[redacted]'], ['cookie', '[redacted]'], ['X-Request-Id', 'r-1']],
            ],
            'odd casing' => [
                ['AUTHORIZATION' => 'Basic dXNlcjpwdw==', 'x-API-key' => 'k', 'X-Amz-Security-TOKEN' => 't', 'proxy-authorization' => 'p'],
                [['AUTHORIZATION', '[redacted]'], ['x-API-key', '[redacted]'], ['X-Amz-Security-TOKEN', '[redacted]'], ['proxy-authorization', '[redacted]']],
            ],
            'int values' => [
                ['Retry-After' => 120, 'X-Session-Id' => 42],
                [['Retry-After', '120'], ['X-Session-Id', '[redacted]']],
            ],
            'a name with spaces around it' => [
                [[' Cookie ', 'sid=1']],
                [[' Cookie ', '[redacted]']],
            ],
            'a URL and an e-mail in a harmless header' => [
                ['Location' => 'https://u:p@api.example.com/users/ana@example.com?page=2'],
                [['Location', 'https://api.example.com/users/[email]?page=2']],
            ],
            'a numeric name, as a pair (PHP makes an int of a numeric key)' => [
                [['123', 'x'], ['X-Key', 'v']],
                [['123', 'x'], ['X-Key', '[redacted]']],
            ],
            'nothing' => [[], []],
        ];
    }

    /**
     * @dataProvider headerShapes
     * @param array<mixed> $headers
     * @param list<array{string, string}> $expected
     */
    public function testHeaders(array $headers, array $expected): void
    {
        $this->assertSame($expected, redactHeaders($headers));
    }

    /** @return array<string, array{mixed}> */
    public static function badHeaders(): array
    {
        return [
            'a float value' => [['X' => 1.5]],
            'a pair of one' => [[['X']]],
            'a pair of three' => [[['X', 'a', 'b']]],
            'a pair whose name is an int' => [[[1, 'a']]],
            'a list with an array' => [['X' => [['a']]]],
            'null' => [['X' => null]],
        ];
    }

    /** @dataProvider badHeaders */
    public function testHeadersOfAnotherShapeAreATypeError(mixed $headers): void
    {
        $e = $this->thrownBy(static fn () => redactHeaders($headers));
        $this->assertInstanceOf(\TypeError::class, $e);
        $this->assertStringStartsWith('Recuo\redactHeaders(): Argument #1 ($headers) must map header names to strings', $e->getMessage());
        $e = $this->thrownBy(static fn () => whoAnswered($headers));
        $this->assertInstanceOf(\TypeError::class, $e);
        $this->assertStringStartsWith('Recuo\whoAnswered(): Argument #1 ($headers)', $e->getMessage());
    }

    public function testWrongArgumentTypes(): void
    {
        $this->assertInstanceOf(\TypeError::class, $this->thrownBy(static fn () => redactUrl(null)));
        $this->assertInstanceOf(\TypeError::class, $this->thrownBy(static fn () => redactUrl(['https://h'])));
        $this->assertInstanceOf(\TypeError::class, $this->thrownBy(static fn () => redactHeaders('Authorization: x')));
        $this->assertInstanceOf(\TypeError::class, $this->thrownBy(static fn () => whoAnswered([], 5)));
    }

    /**
     * Bytes that are not UTF-8 are never an error and never come back raw: in a URL they are
     * percent-encoded (so a secret or an e-mail address with such a byte is still found),
     * in a header they become U+FFFD.
     */
    public function testBytesThatAreNotUtf8(): void
    {
        $this->assertSame(
            'https://api.example.com/users/[email]/x%FE?token=[redacted]&q=%C3',
            redactUrl("https://api.example.com/users/\xe9mile@example.com/x\xfe?token=\xff\xfe&q=\xc3"),
        );
        $this->assertSame(
            ['url' => "https://h.example.com/caf\u{e9}/%E9", 'malformed' => false],
            redactUrlDetailed("https://h.example.com/caf\u{e9}/\xe9"),
        );
        $this->assertSame(
            [["X-Api-Key\u{FFFD}", '[redacted]'], ['Location', "https://h.example.com/\u{FFFD}?token=[redacted]"], ["X-Note", "caf\u{FFFD}"]],
            redactHeaders([["X-Api-Key\xff", "v\xff"], ['Location', "https://u:p@h.example.com/\xff?token=a"], ['X-Note', "caf\xe9"]]),
        );
        $who = whoAnswered([["CF-Ray\xff", 'x'], ['Server', "cloud\xffflare"]], "application/json\xff");
        $this->assertInstanceOf(WhoAnswered::class, $who);
        foreach ([redactUrl("\xff\xfe\xfd"), redactUrl("http://\xff@h/\x80"), ...$who->evidence] as $text) {
            $this->assertTrue(mb_check_encoding($text, 'UTF-8'), bin2hex($text));
        }
        $this->assertSame('%FF%FE%FD', redactUrl("\xff\xfe\xfd"));
    }

    /** NUL bytes, control characters, huge and hostile inputs: an answer, never a crash. */
    public function testHostileInputs(): void
    {
        $inputs = [
            "\0", "http://\0@h/\0?token=\0", str_repeat('a@b.', 1000), str_repeat('%', 5000), str_repeat('1-', 50_000),
            '://', '?', '#', '@', '%4', 'http://@', "https://h/\u{2028}?x=\u{2029}", str_repeat('?token=x&', 500),
        ];
        foreach ($inputs as $input) {
            $detailed = redactUrlDetailed($input);
            $this->assertSame($detailed['url'], redactUrl($input));
            $this->assertIsBool($detailed['malformed']);
            $this->assertCount(1, redactHeaders([['Location', $input]]));
            $this->assertSame('unknown', whoAnswered([['Date', $input]])->origin);
        }
        $this->assertStringNotContainsString('token=x', redactUrl(str_repeat('?token=x&', 500)));
    }

    /** @return array<string, array{array<mixed>, string}> */
    public static function cdns(): array
    {
        return [
            'Cloudflare: cf-ray' => [['CF-Ray' => '8a1b2c3d4e5f-GRU'], 'Cloudflare'],
            'Cloudflare: cf-cache-status' => [['cf-cache-status' => 'MISS'], 'Cloudflare'],
            'CloudFront: x-amz-cf-id' => [['X-Amz-Cf-Id' => 'abc=='], 'CloudFront'],
            'CloudFront: x-amz-cf-pop' => [['X-Amz-Cf-Pop' => 'GRU1-C1'], 'CloudFront'],
            'Fastly: x-fastly-request-id' => [['X-Fastly-Request-ID' => 'f00'], 'Fastly'],
            'Fastly: fastly-debug-digest' => [['Fastly-Debug-Digest' => 'd1'], 'Fastly'],
            'Akamai: akamai-grn' => [['Akamai-GRN' => '0.1.2'], 'Akamai'],
            'Akamai: x-akamai-transformed' => [['X-Akamai-Transformed' => '9 - 0 pmb=mRUM,1'], 'Akamai'],
            'Akamai: x-akamai-request-id' => [['x-akamai-request-id' => 'a1'], 'Akamai'],
            'Azure Front Door: x-azure-ref' => [['X-Azure-Ref' => '0abc'], 'Azure Front Door'],
            'Azure CDN: x-msedge-ref' => [['X-MSEdge-Ref' => 'Ref A: 1'], 'Azure CDN'],
        ];
    }

    /**
     * Each CDN the core names: its error page (HTML where JSON was expected) is the CDN's,
     * with high confidence; the header alone is a CDN with medium confidence.
     *
     * @dataProvider cdns
     * @param array<string, string> $header
     */
    public function testEachCdn(array $header, string $vendor): void
    {
        $page = whoAnswered($header + ['Content-Type' => 'text/html; charset=utf-8'], 'application/json');
        $this->assertSame(['cdn', 'high'], [$page->origin, $page->confidence]);
        $this->assertNotEmpty(array_filter($page->evidence, static fn (string $e): bool => str_contains($e, $vendor)), implode(' | ', $page->evidence));
        $alone = whoAnswered($header);
        $this->assertSame(['cdn', 'medium'], [$alone->origin, $alone->confidence]);
    }

    public function testFastlyAndCloudFrontByTheirHeadersValues(): void
    {
        $who = whoAnswered(['X-Served-By' => 'cache-gru1234-GRU']);
        $this->assertSame(['cdn', 'medium', ['x-served-by: cache-gru1234-GRU → Fastly']], [$who->origin, $who->confidence, $who->evidence]);
        $who = whoAnswered(['Via' => '1.1 abc.cloudfront.net (CloudFront)']);
        $this->assertSame(['cdn', 'medium'], [$who->origin, $who->confidence]);
    }

    /** @return array<string, array{array<mixed>, ?string, string, string}> */
    public static function notCdns(): array
    {
        return [
            // A brand alone is never certain.
            'server: cloudflare alone' => [['Server' => 'cloudflare'], null, 'cdn', 'low'],
            'a branded error page' => [['Server' => 'cloudflare', 'Content-Type' => 'text/html'], 'application/json', 'cdn', 'medium'],
            // The API's own answer passing through a CDN is the API's.
            'the API through Cloudflare' => [['CF-Ray' => 'x', 'Content-Type' => 'application/json; charset=utf-8', 'X-Request-Id' => 'r-1'], 'application/json', 'api', 'high'],
            'a request id only' => [['X-Request-Id' => 'r-1'], null, 'api', 'low'],
            'rate-limit headers and a request id' => [['X-RateLimit-Remaining' => '0', 'X-Amzn-RequestId' => 'a'], null, 'api', 'medium'],
            'a proxy: server nginx' => [['Server' => 'nginx/1.25'], null, 'proxy', 'low'],
            'a proxy: x-served-by without cache-' => [['X-Served-By' => 'gateway-7'], null, 'proxy', 'low'],
            'a proxy page' => [['Via' => '1.1 squid', 'Content-Type' => 'text/html'], 'application/json', 'proxy', 'medium'],
            'nothing at all' => [[], null, 'unknown', 'low'],
            'only a date' => [['Date' => 'Sun, 06 Nov 1994 08:49:37 GMT'], null, 'unknown', 'low'],
            'HTML from nobody in particular' => [['Content-Type' => 'text/html'], 'application/json', 'unknown', 'low'],
            'no content type, one expected' => [['Server' => 'Apache'], 'application/json', 'unknown', 'low'],
        ];
    }

    /**
     * @dataProvider notCdns
     * @param array<mixed> $headers
     */
    public function testNegativeAndMixedCases(array $headers, ?string $expected, string $origin, string $confidence): void
    {
        $who = whoAnswered($headers, $expected);
        $this->assertSame([$origin, $confidence], [$who->origin, $who->confidence], implode(' | ', $who->evidence));
    }

    public function testWhoAnsweredIsReadOnly(): void
    {
        $who = whoAnswered(['CF-Ray' => 'x']);
        $this->assertSame(['cf-ray → Cloudflare'], $who->evidence);
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static function () use ($who): void {
            $who->origin = 'api';
        }));
        $this->assertTrue((new \ReflectionClass(WhoAnswered::class))->isFinal());
        $this->assertInstanceOf(\Error::class, $this->thrownBy(static fn () => new WhoAnswered()));
    }
}
