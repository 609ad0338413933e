//! The clocks, read at the edge (the core never reads a clock itself): the wall clock for
//! HTTP-dates and rate-limit resets, a monotonic clock for the state machine, and the
//! system's monotonic clock in nanoseconds that the shared limits use.

use crate::panic::boundary;

/// The system clock now, in milliseconds since the Unix epoch: the `now_ms` the Retry-After
/// functions expect when the response carries no `Date` header (the core's
/// `recuo::unix_now_ms`).
///
/// Negative before 1970; saturates at the ends of `int64_t`. 0 only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_now_ms() -> i64 {
    boundary(recuo::unix_now_ms)
}

/// A monotonic clock in milliseconds: never goes back, unaffected by changes of the wall
/// clock — `recuo_monotonic_ns` rounded down to whole milliseconds, the one reading every
/// language gives the operation machine. Only differences mean something: it is the
/// `now_ms` the `recuo_attempts_*` functions expect.
///
/// 0 if the clock cannot be read, or if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_monotonic_ms() -> u64 {
    boundary(recuo::monotonic_ms)
}

/// A wait of `ns` nanoseconds in whole milliseconds, rounded up (a wait never ends before
/// what it was asked to wait): 1 ns is 1 ms, 1 000 000 ns is 1 ms, 1 000 001 ns is 2 ms.
/// 0 also if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_wait_ms_from_ns(ns: u64) -> u64 {
    boundary(|| recuo::wait_ms_from_ns(ns))
}

/// The system's monotonic clock (`CLOCK_MONOTONIC`) in nanoseconds: the clock of the
/// regulator and the retry budget. Unlike `recuo_monotonic_ms` it has the system's origin
/// (usually the boot), so every process on the machine reads the same clock — which is what
/// lets processes share a regulator or a budget in a file. The `_at` functions
/// (`recuo_regulator_try_acquire_at`, `recuo_retry_budget_try_withdraw_at`, …) take instants
/// on it, or on a fake clock of yours in tests.
///
/// 0 if the clock cannot be read, or if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_monotonic_ns() -> u64 {
    boundary(recuo::monotonic_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_monotonic_clock_moves_forward() {
        let a = recuo_monotonic_ms();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let b = recuo_monotonic_ms();
        assert!(b >= a + 5, "{a} then {b}");
    }

    #[test]
    fn the_shared_monotonic_clock_is_the_core_clock() {
        let a = recuo_monotonic_ns();
        let core = recuo::monotonic_ns();
        let b = recuo_monotonic_ns();
        assert!(a > 0 && a <= core && core <= b, "{a} {core} {b}");
    }

    #[test]
    fn now_is_after_this_code_was_written() {
        // 2026-01-01T00:00:00Z
        assert!(recuo_now_ms() > 1_767_225_600_000);
    }
}
