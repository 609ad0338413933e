<?php

declare(strict_types=1);

namespace RecuoTests;

use PHPUnit\Framework\TestCase;
use Recuo\Policy;
use Recuo\Stats;
use Recuo\StatsRecorder;

use function Recuo\classify;
use function Recuo\monotonicNs;
use function Recuo\runBatch;

/** `Recuo\Stats` and `Recuo\StatsRecorder`: the core's stats, for batches and loops of one's own. */
final class StatsTest extends TestCase
{
    use Throws;

    private const EMPTY = [
        'initial' => 0, 'retries' => 0, 'starts' => 0, 'successes' => 0, 'failures' => 0, 'notStarted' => 0,
        'throttled' => 0, 'unavailable' => 0, 'minSpacingMs' => null, 'meanSpacingMs' => null,
        'firstStartNs' => null, 'lastStartNs' => null, 'maxInFlight' => 0,
    ];

    /** The core's own recorder test, on a fake clock in nanoseconds. */
    public function testTheRecorderCountsSpacingAndInFlight(): void
    {
        $r = new StatsRecorder();
        $r->start(0, 1_000_000);
        $r->start(0, 1_500_000);
        $r->end();
        $r->start(1, 4_000_000);
        $r->saw('rate_limited');
        $r->saw('unavailable');
        $r->saw('server_error');
        $r->end();
        $r->end();
        $r->finished(true);
        $r->finished(false);
        $r->notStarted();
        $s = $r->snapshot();
        $this->assertSame(
            [
                'initial' => 2, 'retries' => 1, 'starts' => 3, 'successes' => 1, 'failures' => 1, 'notStarted' => 1,
                'throttled' => 1, 'unavailable' => 1, 'minSpacingMs' => 0.5, 'meanSpacingMs' => 1.5,
                'firstStartNs' => 1_000_000, 'lastStartNs' => 4_000_000, 'maxInFlight' => 2,
            ],
            $s->toArray(),
        );
        // The properties are the array's.
        foreach ($s->toArray() as $name => $value) {
            $this->assertSame($value, $s->$name, $name);
        }
        // A snapshot does not move with the recorder.
        $r->start(1, 5_000_000);
        $this->assertSame(3, $s->starts);
        $this->assertSame(4, $r->snapshot()->starts);
    }

    public function testTheRecorderReadsTheMonotonicClockByDefault(): void
    {
        $r = new StatsRecorder();
        $before = monotonicNs();
        $r->start(0);
        $r->end();
        $after = monotonicNs();
        $s = $r->snapshot();
        $this->assertGreaterThanOrEqual($before, $s->firstStartNs);
        $this->assertLessThanOrEqual($after, $s->firstStartNs);
        $this->assertNull($s->minSpacingMs);
        $this->assertSame(1, $s->maxInFlight);
    }

    /** The core's merge: counts add up, the shortest spacing, the span of both, in flight adds up. */
    public function testMerge(): void
    {
        $a = new StatsRecorder();
        $a->start(0, 5);
        $a->start(0, 15);
        $a->end();
        $a->end();
        $b = new StatsRecorder();
        $b->start(0, 1);
        $b->start(1, 8);
        $b->end();
        $b->start(0, 31);
        $b->saw('rate_limited');
        $b->finished(false);
        $m = $a->snapshot()->merge($b->snapshot());
        $this->assertInstanceOf(Stats::class, $m);
        $this->assertSame(
            ['initial' => 4, 'retries' => 1, 'starts' => 5, 'successes' => 0, 'failures' => 1, 'notStarted' => 0,
                'throttled' => 1, 'unavailable' => 0, 'minSpacingMs' => 7e-6, 'meanSpacingMs' => 7.5e-6,
                'firstStartNs' => 1, 'lastStartNs' => 31, 'maxInFlight' => 4],
            $m->toArray(),
        );
        $this->assertSame($m->toArray(), $b->snapshot()->merge($a->snapshot())->toArray(), 'merge is symmetric');
        // Neither side changes; an empty Stats changes nothing.
        $this->assertSame(2, $a->snapshot()->initial);
        $this->assertSame($m->toArray(), $m->merge(new Stats())->toArray());
        $this->assertSame(self::EMPTY, (new Stats())->toArray());
        $this->assertSame(self::EMPTY, (new Stats())->merge(new Stats())->toArray());
    }

    /** A merge whose counts would pass 2**64 - 1 is refused, never rounded to a wrong figure. */
    public function testAMergeThatWouldOverflowIsRefused(): void
    {
        $full = \Recuo\Testing\fullStats();
        $this->assertSame(PHP_INT_MAX, $full->retries);
        $one = new StatsRecorder();
        $one->start(1, 5);
        $e = $this->thrownBy(static fn () => $full->merge($one->snapshot()));
        $this->assertInstanceOf(\OverflowException::class, $e);
        $this->assertSame('these stats cannot be merged: a count would pass 2**64 - 1', $e->getMessage());
        $first = new StatsRecorder();
        $first->start(0, 5);
        $this->assertInstanceOf(\OverflowException::class, $this->thrownBy(static fn () => $full->merge($first->snapshot())), 'the starts would not fit');
        $this->assertSame($full->toArray(), $full->merge(new Stats())->toArray());
    }

    /** Two batches' stats add up to what both did; `BatchReport::$stats` is a `Stats`. */
    public function testBatchStatsMerge(): void
    {
        $answers = [503, 429, 200, 200];
        $op = static function () use (&$answers): string {
            $status = array_shift($answers);
            if ($status >= 400) {
                throw new \RuntimeException('HTTP', $status);
            }
            return 'ok';
        };
        $options = [
            'policy' => new Policy(maxAttempts: 3),
            'classify' => static fn (\Throwable $e) => classify($e->getCode()),
            'seed' => 1,
            'sleep' => static fn (int $ms) => null,
        ];
        $first = runBatch(['a' => $op], ...$options)->stats;
        $second = runBatch(['b' => $op], ...$options)->stats;
        $this->assertInstanceOf(Stats::class, $first);
        $total = array_reduce([$first, $second], static fn (Stats $sum, Stats $s): Stats => $sum->merge($s), new Stats());
        $this->assertSame(
            [2, 2, 4, 2, 0, 1, 1],
            [$total->initial, $total->retries, $total->starts, $total->successes, $total->failures, $total->throttled, $total->unavailable],
        );
        $this->assertSame(2, $total->maxInFlight, 'an upper bound: the batches ran one after the other');
        $this->assertGreaterThan(0.0, $total->meanSpacingMs);
    }

    /** @return array<string, array{\Closure, string}> */
    public static function badInput(): array
    {
        return [
            'unknown cause' => [static fn () => (new StatsRecorder())->saw('throttled'), 'Recuo\StatsRecorder::saw(): Argument #1 ($cause) must be a verdict\'s reason'],
            'a give-up reason is no cause' => [static fn () => (new StatsRecorder())->saw('attempts_exhausted'), 'Recuo\StatsRecorder::saw(): Argument #1 ($cause)'],
            'negative attempt' => [static fn () => (new StatsRecorder())->start(-1), 'Recuo\StatsRecorder::start(): Argument #1 ($attempt) must be between 0 and 4294967295'],
            'negative clock' => [static fn () => (new StatsRecorder())->start(0, -5), 'Recuo\StatsRecorder::start(): Argument #2 ($nowNs) must be null or greater than or equal to 0'],
        ];
    }

    /** @dataProvider badInput */
    public function testBadInput(\Closure $call, string $message): void
    {
        $e = $this->thrownBy($call);
        $this->assertInstanceOf(\ValueError::class, $e);
        $this->assertStringStartsWith($message, $e->getMessage());
    }

    public function testStatsAreReadOnly(): void
    {
        $s = new Stats();
        $this->assertTrue((new \ReflectionClass(Stats::class))->isFinal());
        $this->assertInstanceOf(\Throwable::class, $this->thrownBy(static function () use ($s): void {
            $s->initial = 5;
        }));
        $this->assertSame(0, $s->initial);
        $this->assertInstanceOf(\TypeError::class, $this->thrownBy(static fn () => $s->merge(null)));
        $this->assertInstanceOf(\TypeError::class, $this->thrownBy(static fn () => (new StatsRecorder())->start('0')));
        // An end without a start, a stray finish: counted as the core counts them, never an error.
        $r = new StatsRecorder();
        $r->end();
        $r->finished(true);
        $this->assertSame([0, 1], [$r->snapshot()->maxInFlight, $r->snapshot()->successes]);
    }
}
