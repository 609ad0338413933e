//! What a host with its own timers needs (the JavaScript package, js/): a start slot reserved
//! without waiting, so that an event loop waits for it with a timer instead of a blocked
//! thread, in the same first-come order as the blocking acquires of every other process.

use crate::prelude::*;
use recuo::RegulatorError;

/// Reserves a start slot of weight `cost` if it comes within `max_wait_ns`, without waiting
/// for it (on the regulator's own clock: `recuo_monotonic_ns()`, or a Redis regulator's
/// server's): the non-blocking half of `recuo_regulator_acquire`, for a caller that waits
/// with its own timer.
///
/// * `RECUO_OK`: the slot is reserved; `*wait_ns_out` receives the nanoseconds until it may
///   start (0: now). A caller that then gives up waiting spends the slot unused (fewer
///   starts, never more).
/// * `RECUO_WOULD_WAIT` (not an error): the slot would come later than `max_wait_ns`;
///   nothing is reserved, and `*wait_ns_out` receives the wait it would need.
/// * `RECUO_QUEUE_FULL` (not an error): the start would wait beyond the
///   `RECUO_MAX_QUEUED_STARTS` queued ahead, though within `max_wait_ns`: nothing is
///   reserved, `*wait_ns_out` receives the wait it would need; ask again when that wait,
///   less the queue's longest, has passed.
/// * `RECUO_ERR_COST_ABOVE_BURST`, `RECUO_ERR_ZERO_COST`, `RECUO_ERR_IO` (a Redis server could not be used;
///   nothing is reserved), `RECUO_ERR_NULL_ARGUMENT` for `regulator`: `*wait_ns_out` is
///   untouched.
///
/// `wait_ns_out` may be NULL; `max_wait_ns` `UINT64_MAX` is no limit.
///
/// # Safety
/// `regulator` must be NULL or a live handle; `wait_ns_out` NULL or a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_reserve(
    regulator: *const recuo_regulator,
    cost: u32,
    max_wait_ns: u64,
    wait_ns_out: *mut u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with_ref(regulator, |r| {
            reserved(r.0.reserve_now(cost, max_wait_ns), wait_ns_out)
        })
    }
}

/// `recuo_regulator_reserve` at the instant `now_ns` of your choosing, on a time base every
/// user of the regulator shares (a fake clock in tests, the vectors of `gcra.json`): the same
/// answers. A Redis server counts in whole microseconds.
///
/// # Safety
/// As `recuo_regulator_reserve`.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_reserve_at(
    regulator: *const recuo_regulator,
    now_ns: u64,
    cost: u32,
    max_wait_ns: u64,
    wait_ns_out: *mut u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with_ref(regulator, |r| {
            reserved(r.0.reserve_at(now_ns, cost, max_wait_ns), wait_ns_out)
        })
    }
}

/// The status and the wait of a reservation, the wait written to the optional `wait_ns_out`.
///
/// # Safety
/// `wait_ns_out` NULL or a writable `uint64_t`.
unsafe fn reserved(
    answer: Result<u64, Result<u64, RegulatorError>>,
    wait_ns_out: *mut u64,
) -> recuo_status {
    let (status, wait) = match answer {
        Ok(wait) => (RECUO_OK, wait),
        Err(Ok(needed)) => (RECUO_WOULD_WAIT, needed),
        Err(Err(RegulatorError::QueueFull { wait_ns, .. })) => (RECUO_QUEUE_FULL, wait_ns),
        Err(Err(e)) => return e.into(),
    };
    // SAFETY: the caller vouches for a writable uint64_t.
    unsafe { ptr::put(wait_ns_out, wait) };
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::regulator::{recuo_regulator_free, recuo_regulator_new};

    #[test]
    fn reserves_in_order_without_waiting() {
        let mut r = std::ptr::null_mut();
        // SAFETY: valid pointers throughout.
        unsafe {
            assert_eq!(recuo_regulator_new(10.0, 1, &mut r), RECUO_OK);
            let mut wait = 7;
            assert_eq!(recuo_regulator_reserve(r, 1, 0, &mut wait), RECUO_OK);
            assert_eq!(wait, 0);
            // The next slot is about 100 ms away: refused within 1 ms, reserved within 1 s.
            assert_eq!(
                recuo_regulator_reserve(r, 1, 1_000_000, &mut wait),
                RECUO_WOULD_WAIT
            );
            assert!(wait > 0 && wait <= 100_000_000, "{wait}");
            assert_eq!(recuo_regulator_reserve(r, 1, u64::MAX, &mut wait), RECUO_OK);
            assert!(wait > 0 && wait <= 100_000_000, "{wait}");
            // Reserved: the one after it is about 200 ms away.
            assert_eq!(
                recuo_regulator_reserve(r, 1, 0, &mut wait),
                RECUO_WOULD_WAIT
            );
            assert!(wait > 190_000_000, "{wait}");
            assert_eq!(
                recuo_regulator_reserve(r, 2, 0, &mut wait),
                recuo_status::RECUO_ERR_COST_ABOVE_BURST
            );
            assert_eq!(
                recuo_regulator_reserve(std::ptr::null(), 1, 0, std::ptr::null_mut()),
                recuo_status::RECUO_ERR_NULL_ARGUMENT
            );
            recuo_regulator_free(r);
        }
    }
}
