<?php

declare(strict_types=1);

namespace RecuoTests;

use Recuo\Operation;
use Recuo\Step;
use Recuo\Verdict;

/**
 * An operation driven the way PHP code with a loop of its own drives it, one judged attempt
 * at a time, and the step it answers as the scenarios in tests/vectors/scenarios.json write
 * their decisions.
 */
final class ByHand
{
    /** The step after the attempt just made, judged `$verdict` at `$nowMs`: `succeeded()`, or `failed()` and `judged()`. */
    public static function decide(Operation $op, Verdict $verdict, int $nowMs): Step
    {
        if ($verdict->verdict === 'success') {
            return $op->succeeded($nowMs);
        }
        $step = $op->failed($nowMs);
        return $step->kind === 'classify' ? $op->judged($nowMs, $verdict) : $step;
    }

    /**
     * A `done`, `sleep` or `gave_up` step as a decision: `[decision, delay_ms, next_attempt,
     * reason, retry_at_ms]`.
     *
     * @return array{string, ?int, ?int, ?string, ?int}
     */
    public static function decision(Step $step): array
    {
        return match ($step->kind) {
            'done' => ['done', null, null, null, null],
            'sleep' => ['retry', $step->delayMs, $step->attempt + 1, null, null],
            'gave_up' => ['give_up', null, null, $step->reason, $step->retryAtMs],
        };
    }
}
