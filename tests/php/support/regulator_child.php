<?php

declare(strict_types=1);

// One of the processes of SharedRegulatorTest (and RedisRegulatorTest): opens the shared
// regulator in `$dir` (or, given a URL and a key, the one on that Redis server), waits for
// the parent to start the fake clock, then makes `$tries` tries. Each try moves the fake
// clock (a counter in `$dir/clock`, advanced under `flock`) by `$step` ns and asks the
// regulator at the time it read; the starts allowed are printed, one per line.
//
// Usage: php -n -d extension=... regulator_child.php DIR RATE BURST TRIES STEP_NS [URL KEY]

[, $dir, $rate, $burst, $tries, $step] = $argv;
[$burst, $tries, $step] = [(int) $burst, (int) $tries, (int) $step];

$regulator = isset($argv[7])
    ? Recuo\Regulator::redis($argv[6], $argv[7], $rate, $burst)
    : Recuo\Regulator::shared("$dir/regulator", $rate, $burst);
$clock = fopen("$dir/clock", 'c+b');
if ($clock === false) {
    fwrite(STDERR, "cannot open $dir/clock\n");
    exit(2);
}
stream_set_read_buffer($clock, 0);
stream_set_write_buffer($clock, 0);

/** The clock's reading, under the lock; 0 until the parent starts it. */
function read_clock($clock): int
{
    fseek($clock, 0);
    $bytes = fread($clock, 8);
    return is_string($bytes) && strlen($bytes) === 8 ? unpack('P', $bytes)[1] : 0;
}

// Wait (at most 10 s) for the parent to start the clock, so that the processes run together.
$giveUp = hrtime(true) + 10_000_000_000;
while (true) {
    flock($clock, LOCK_SH);
    $started = read_clock($clock) !== 0;
    flock($clock, LOCK_UN);
    if ($started) {
        break;
    }
    if (hrtime(true) > $giveUp) {
        fwrite(STDERR, "the clock never started\n");
        exit(3);
    }
    usleep(1000);
}

$starts = [];
for ($i = 0; $i < $tries; $i++) {
    flock($clock, LOCK_EX);
    $now = read_clock($clock);
    fseek($clock, 0);
    fwrite($clock, pack('P', $now + $step));
    flock($clock, LOCK_UN);
    if ($regulator->tryAcquireAt($now) === 0) {
        $starts[] = $now;
    }
}
echo implode("\n", $starts), "\n";
