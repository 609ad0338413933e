//! The retry budget for C: retries at most a ratio of recent requests plus a floor
//! per second, in this process or in a shared file. The counting is the core's
//! (`recuo::RetryBudget`).

use recuo::RetryBudget;

use crate::prelude::*;

/// Allows a retry only while the retries of the last `window_s` seconds stay within
/// `ratio × requests + floor_per_s × window_s` (as Finagle's RetryBudget, gRPC
/// retry throttling and the AWS retry quota). Backed by a `recuo::RetryBudget`: lock-free
/// per-second counters, in this process or in a file (`recuo_retry_budget_new_shared`).
///
/// Every function takes a `const` pointer: one handle may be used by any number of threads
/// at once (threads that withdraw at the very same instant may overshoot the budget by at
/// most one retry each). Gates keep their own reference, so the handle may be freed before
/// them. Instants are nanoseconds on `recuo_monotonic_ns()`; the `_at` functions take them
/// from you (a fake clock in tests).
#[derive(Debug, Clone)]
pub struct recuo_retry_budget(pub(crate) RetryBudget);

/// Creates a retry budget for this process and stores it in `*out`: retries may be at most
/// `ratio` (0 to 1000; 0.1 is 10%) of the first attempts counted in the last `window_s`
/// seconds (1 to 60), plus `floor_per_s` retries per second (0 or more). Free it with
/// `recuo_retry_budget_free`.
///
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_BUDGET` (a ratio outside 0–1000, a negative or NaN
/// floor, a window outside 1–60 s); `RECUO_ERR_NULL_ARGUMENT` for `out`. On an error `*out`
/// is untouched.
///
/// # Safety
/// `out` must be NULL or a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_budget_new(
    ratio: f64,
    floor_per_s: f64,
    window_s: u32,
    out: *mut *mut recuo_retry_budget,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::make(out, || {
            let budget = RetryBudget::new(ratio, floor_per_s, window_s)?;
            Ok(recuo_retry_budget(budget))
        })
    }
}

/// Creates a retry budget with the defaults — ratio 0.1 (10%), a floor of 1 retry per
/// second, a window of 10 s — and stores it in `*out`. Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `out` must be NULL or a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_budget_new_default(
    out: *mut *mut recuo_retry_budget,
) -> recuo_status {
    // SAFETY: a checked output.
    unsafe { ptr::make(out, || Ok(recuo_retry_budget(RetryBudget::default()))) }
}

/// Opens the retry budget in the file at `path` (created if missing), shared by every
/// process that opens it, and stores a handle in `*out`. The first opener sets `ratio`,
/// `floor_per_s` and `window_s` (as `recuo_retry_budget_new`); every later opener must ask
/// for the same.
///
/// * `detail`, `detail_len` (may be NULL, 0): on an error, the reason in English,
///   NUL-terminated and truncated to fit (a mismatch names the file's settings and those
///   asked for); on success, an empty string. 256 bytes are plenty.
///
/// The file is checked as `recuo_regulator_new_shared` checks its own, and its counts
/// saturate instead of wrapping.
///
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_BUDGET`; `RECUO_ERR_SHARED_MISMATCH` (the file holds
/// other settings, or something else); `RECUO_ERR_IO` (also for a file refused as unsafe);
/// `RECUO_ERR_NULL_ARGUMENT` (`out`, or
/// `path` with a non-zero length); `RECUO_ERR_LENGTH_TOO_LARGE`. On an error `*out` is
/// untouched.
///
/// # Safety
/// `path` must point to `path_len` readable bytes; `out` NULL or a writable pointer;
/// `detail` NULL or `detail_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_budget_new_shared(
    path: *const c_char,
    path_len: usize,
    ratio: f64,
    floor_per_s: f64,
    window_s: u32,
    out: *mut *mut recuo_retry_budget,
    detail: *mut c_char,
    detail_len: usize,
) -> recuo_status {
    // SAFETY: the caller vouches for the path, the output and the detail buffer.
    unsafe {
        open_with_detail(detail, detail_len, out, || {
            let path = ptr::path(path, path_len)?;
            Ok(RetryBudget::shared(path, ratio, floor_per_s, window_s).map(recuo_retry_budget))
        })
    }
}

/// Opens the retry budget kept on the Redis server at `url` under `key`, shared by every
/// process on every machine that uses the same server and key, and stores a handle in
/// `*out`: the local budget's rule (retries in the last `window_s` seconds stay within
/// `ratio × requests + floor_per_s × window_s`), counted per second on the server by its
/// own clock. The settings are checked as `recuo_retry_budget_new` checks them; the first
/// user of the key sets them, every later one must ask for the same.
///
/// * `url`, `url_len`, `key`, `key_len`: as `recuo_regulator_new_redis`, a Redis Cluster's
///   `redis+cluster://host:port,host:port/` (seed nodes; `rediss+cluster://` for TLS)
///   included; the counts live in `{KEY}:budget`, the settings in `{KEY}:settings`.
/// * `detail`, `detail_len` (may be NULL, 0): on an error, the reason in English,
///   NUL-terminated and truncated to fit (a mismatch names both settings, an I/O error the
///   server and what went wrong, never the password); on success, an empty string.
///
/// It fails closed: while the server cannot be used, `recuo_retry_budget_try_withdraw`,
/// `_record_request` and `_counts` answer `RECUO_ERR_IO` (no retry without the server's word,
/// a request not counted earns nothing), and in a gate no retry is allowed
/// (`budget_exhausted`). The `_at` functions' instants are a clock every user of the key
/// shares (the server counts whole seconds); the others count on the server's clock.
///
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_BUDGET`; `RECUO_ERR_SHARED_MISMATCH` (the key holds
/// other settings); `RECUO_ERR_IO` (the server cannot be reached or used, or a build without
/// Redis support); `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_NULL_ARGUMENT` (`out`, or `url` or `key`
/// with a non-zero length); `RECUO_ERR_LENGTH_TOO_LARGE`. On an error `*out` is untouched.
///
/// # Safety
/// `url` must point to `url_len` readable bytes and `key` to `key_len`; `out` NULL or a
/// writable pointer; `detail` NULL or `detail_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_budget_new_redis(
    url: *const c_char,
    url_len: usize,
    key: *const c_char,
    key_len: usize,
    ratio: f64,
    floor_per_s: f64,
    window_s: u32,
    out: *mut *mut recuo_retry_budget,
    detail: *mut c_char,
    detail_len: usize,
) -> recuo_status {
    // SAFETY: the caller vouches for the URL, the key, the output and the detail buffer.
    unsafe {
        open_with_detail(detail, detail_len, out, || {
            let (url, key) = (ptr::text(url, url_len)?, ptr::text(key, key_len)?);
            Ok(redis_budget(url, key, ratio, floor_per_s, window_s).map(recuo_retry_budget))
        })
    }
}

/// Releases a budget handle (a shared budget's file stays, and a Redis budget's key; a gate
/// holding the budget keeps it alive). NULL is accepted and ignored.
///
/// # Safety
/// `budget` must be NULL or come from `recuo_retry_budget_new*`, not have been freed, and
/// not be in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_budget_free(budget: *mut recuo_retry_budget) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(budget) })
}

/// Counts a first attempt now: it earns `ratio` retries. (A gate counts attempt 0 for you.)
/// Returns `RECUO_OK`, `RECUO_ERR_NULL_ARGUMENT`, or `RECUO_ERR_IO` for a Redis budget whose
/// server cannot be used (nothing counted).
///
/// # Safety
/// `budget` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_budget_record_request(
    budget: *const recuo_retry_budget,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with_ref(budget, |b| b.0.record_request_checked(None)) }
}

/// `recuo_retry_budget_record_request` at the instant `now_ns` (nanoseconds on
/// `recuo_monotonic_ns()`, or on a fake clock; for a Redis budget, a clock every user of the
/// key shares — the server counts whole seconds).
///
/// # Safety
/// `budget` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_budget_record_request_at(
    budget: *const recuo_retry_budget,
    now_ns: u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with_ref(budget, |b| b.0.record_request_checked(Some(now_ns))) }
}

/// Takes one retry from the budget now, if it allows one.
///
/// Returns `RECUO_OK` (retry: it is counted); `RECUO_BUDGET_EXHAUSTED` (not an error: no
/// retry left — give up with `RECUO_GIVE_UP_BUDGET_EXHAUSTED` rather than add load);
/// `RECUO_ERR_NULL_ARGUMENT`; `RECUO_ERR_IO` for a Redis budget whose server cannot be used
/// (no retry taken: give up as for an exhausted budget).
///
/// # Safety
/// `budget` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_budget_try_withdraw(
    budget: *const recuo_retry_budget,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { try_withdraw(budget, None) }
}

/// `recuo_retry_budget_try_withdraw` at the instant `now_ns` (as
/// `recuo_retry_budget_record_request_at` takes it).
///
/// # Safety
/// `budget` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_budget_try_withdraw_at(
    budget: *const recuo_retry_budget,
    now_ns: u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { try_withdraw(budget, Some(now_ns)) }
}

/// # Safety
/// `budget` must be NULL or a live handle.
unsafe fn try_withdraw(budget: *const recuo_retry_budget, now_ns: Option<u64>) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with_ref(budget, |b| match b.0.withdraw_checked(now_ns) {
            Ok(true) => RECUO_OK,
            Ok(false) => RECUO_BUDGET_EXHAUSTED,
            Err(e) => e.into(),
        })
    }
}

/// The first attempts and the retries counted in the window ending now, stored in
/// `*requests_out` and `*retries_out` (each may be NULL). Returns `RECUO_OK`,
/// `RECUO_ERR_NULL_ARGUMENT` (for `budget`), or `RECUO_ERR_IO` for a Redis budget whose server
/// cannot be used (unless `RECUO_OK`, nothing is written).
///
/// # Safety
/// `budget` must be NULL or a live handle; the outputs NULL or writable `uint64_t`s.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_budget_counts(
    budget: *const recuo_retry_budget,
    requests_out: *mut u64,
    retries_out: *mut u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { counts(budget, None, requests_out, retries_out) }
}

/// `recuo_retry_budget_counts` for the window ending at the instant `now_ns`.
///
/// # Safety
/// As `recuo_retry_budget_counts`.
#[no_mangle]
pub unsafe extern "C" fn recuo_retry_budget_counts_at(
    budget: *const recuo_retry_budget,
    now_ns: u64,
    requests_out: *mut u64,
    retries_out: *mut u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { counts(budget, Some(now_ns), requests_out, retries_out) }
}

/// # Safety
/// As `recuo_retry_budget_counts`.
unsafe fn counts(
    budget: *const recuo_retry_budget,
    now_ns: Option<u64>,
    requests_out: *mut u64,
    retries_out: *mut u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with_ref(budget, |b| {
            b.0.counts_checked(now_ns).map(|(requests, retries)| {
                ptr::put(requests_out, requests);
                ptr::put(retries_out, retries);
            })
        })
    }
}

/// The retry budget on Redis, through `recuo-redis` (without the `redis` feature: the error
/// of a build without Redis support, after the local budget's checks).
use recuo_redis::budget as redis_budget;

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn a_ratio_of_requests_plus_a_floor() {
        let mut b = std::ptr::null_mut();
        let (mut requests, mut retries) = (0, 0);
        // SAFETY: live handles and outputs.
        unsafe {
            assert_eq!(
                recuo_retry_budget_new(-1.0, 0.5, 10, &mut b),
                RECUO_ERR_INVALID_BUDGET
            );
            assert_eq!(recuo_retry_budget_new(0.1, 0.5, 10, &mut b), RECUO_OK);
            for _ in 0..5 {
                assert_eq!(recuo_retry_budget_try_withdraw_at(b, 100 * S), RECUO_OK);
            }
            assert_eq!(
                recuo_retry_budget_try_withdraw_at(b, 100 * S),
                RECUO_BUDGET_EXHAUSTED
            );
            for _ in 0..10 {
                assert_eq!(recuo_retry_budget_record_request_at(b, 100 * S), RECUO_OK);
            }
            assert_eq!(recuo_retry_budget_try_withdraw_at(b, 100 * S), RECUO_OK);
            let rc = recuo_retry_budget_counts_at(b, 100 * S, &mut requests, &mut retries);
            assert_eq!((rc, requests, retries), (RECUO_OK, 10, 6));
            recuo_retry_budget_free(b);
        }
    }

    #[test]
    fn a_redis_budget_checks_its_settings_then_reaches_for_the_server() {
        let url = crate::regulator::tests::closed_port_url();
        let mut b = std::ptr::null_mut();
        let open = |ratio: f64, b: &mut *mut recuo_retry_budget| {
            // SAFETY: live buffers and outputs of the lengths given.
            unsafe {
                recuo_retry_budget_new_redis(
                    url.as_ptr().cast(),
                    url.len(),
                    c"k".as_ptr(),
                    1,
                    ratio,
                    1.0,
                    10,
                    b,
                    std::ptr::null_mut(),
                    0,
                )
            }
        };
        assert_eq!(open(0.1, &mut b), recuo_status::RECUO_ERR_IO);
        assert_eq!(open(-1.0, &mut b), RECUO_ERR_INVALID_BUDGET);
        assert_eq!(open(f64::NAN, &mut b), RECUO_ERR_INVALID_BUDGET);
        assert!(b.is_null());
    }
}
