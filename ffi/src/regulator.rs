//! The regulator for C: request starts limited to a rate with a burst, in this
//! process, in a file shared by every process that opens it, or on a Redis server shared by
//! every machine that uses it. Blocking and non-blocking acquire; the GCRA itself is the
//! core's (`recuo::Regulator`).
// The blocking waits are not in the WebAssembly build; what only they use is unused there.
#![cfg_attr(target_family = "wasm", allow(unused_imports))]

use std::time::Duration;

use recuo::Regulator;

use crate::js_support::{recuo_regulator_reserve, recuo_regulator_reserve_at};
use crate::prelude::*;

/// Limits request *starts* to a rate with a burst: after a quiet spell up to
/// `burst` starts may go at once, then one per interval (1 / rate); in any window of time
/// `W`, at most `burst + rate · W` starts. Backed by a `recuo::Regulator` (GCRA: one
/// "theoretical arrival time" moved with a compare-and-swap — no lock, no timer thread).
///
/// Every function takes a `const` pointer: one handle may be used by any number of threads
/// at once. A regulator from `recuo_regulator_new_shared` lives in a file, and every handle
/// on that file — in this process or another — shares one allowance; one from
/// `recuo_regulator_new_redis` lives on a Redis server, shared by every handle on the same
/// server and key, on any machine. A gate given this regulator keeps its own reference, so
/// the handle may be freed before the gate.
///
/// Instants are nanoseconds on the regulator's own clock: `recuo_monotonic_ns()`
/// (`CLOCK_MONOTONIC`, the same clock in every process on the machine), or the Redis
/// server's clock; the `_at` function takes them from you instead (a fake clock in tests).
#[derive(Debug, Clone)]
pub struct recuo_regulator(pub(crate) Regulator);

/// How many starts, at the configured rate, a regulator queues ahead of now beyond its
/// burst: a start that would wait longer is answered `RECUO_QUEUE_FULL` (nothing reserved).
pub const RECUO_MAX_QUEUED_STARTS: u64 = 4096;

const _: () = assert!(RECUO_MAX_QUEUED_STARTS == recuo::regulator::MAX_QUEUED_STARTS);

/// Creates a regulator for this process — `per_second` starts per second on average
/// (`recuo_rate_parse` reads `"90/min"` as 1.5), up to `burst` at once — and stores it in
/// `*out`. Free it with `recuo_regulator_free`.
///
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_RATE` (not finite, not above zero, or so slow that
/// the starts the regulator queues cannot be counted: below one start every 12 days with a
/// burst of 1);
/// `RECUO_ERR_ZERO_BURST`; `RECUO_ERR_NULL_ARGUMENT` for `out`. On an error `*out` is
/// untouched.
///
/// # Safety
/// `out` must be NULL or a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_new(
    per_second: f64,
    burst: u32,
    out: *mut *mut recuo_regulator,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::make(out, || {
            Ok(recuo_regulator(Regulator::new(rate(per_second)?, burst)?))
        })
    }
}

/// Opens the regulator in the file at `path` (created if missing), shared by every process
/// and thread that opens the same file — one allowance for C programs, PHP-FPM workers and
/// Python processes alike — and stores a handle to it in `*out`. The state in the file is
/// only atomics once set up, so a process that dies mid-call leaves nothing locked.
///
/// * `path`, `path_len`: the file's path, exactly `path_len` bytes (any bytes: a path need
///   not be UTF-8).
/// * `per_second`, `burst`: as `recuo_regulator_new`. The first opener sets them; every later
///   opener must ask for the same ones.
/// * `detail`, `detail_len` (may be NULL, 0): on an error, the reason in English,
///   NUL-terminated and truncated to fit — for a mismatch it names the file's settings and
///   those asked for, for an I/O error the system's reason; on success, an empty string.
///   256 bytes are plenty.
///
/// The file is opened without following a symbolic link and created `0600` with its space
/// reserved (a full disk fails here, not with SIGBUS later); every value read from it is
/// clamped to this handle's settings.
///
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_RATE`; `RECUO_ERR_ZERO_BURST`;
/// `RECUO_ERR_SHARED_MISMATCH` when the file was set up with another rate, burst or adaptive
/// setting, or holds something else (another kind of recuo state, a file of the wrong size,
/// contents that are no recuo state — refused, never set up again) — two processes must not
/// believe in two different allowances; `RECUO_ERR_IO` when the file cannot be opened,
/// sized, locked or mapped, or is refused as unsafe (a symbolic link, not a regular file,
/// another user's, or writable by its group or others); `RECUO_ERR_NULL_ARGUMENT` (`out`, or
/// `path` with a non-zero length); `RECUO_ERR_LENGTH_TOO_LARGE`. On an error `*out` is untouched.
///
/// # Safety
/// `path` must point to `path_len` readable bytes; `out` NULL or a writable pointer;
/// `detail` NULL or `detail_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_new_shared(
    path: *const c_char,
    path_len: usize,
    per_second: f64,
    burst: u32,
    out: *mut *mut recuo_regulator,
    detail: *mut c_char,
    detail_len: usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        recuo_regulator_new_shared_with(
            path, path_len, per_second, burst, false, out, detail, detail_len,
        )
    }
}

/// `recuo_regulator_new_shared` with the adaptive setting: `adaptive` true sets the file up
/// adaptive — a 429 reported by any process on it (`recuo_regulator_on_throttled`) halves
/// the rate for every process, and each success reported by any of them
/// (`recuo_regulator_on_success`) gives back 1/16 of the configured rate, up to it. The
/// setting is recorded in the file with the rate and burst when the file is set up; every
/// later opener must ask for the same one (`RECUO_ERR_SHARED_MISMATCH` otherwise, the detail
/// naming both). `recuo_regulator_new_shared` opens a file that is not adaptive.
///
/// # Safety
/// As `recuo_regulator_new_shared`.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_new_shared_with(
    path: *const c_char,
    path_len: usize,
    per_second: f64,
    burst: u32,
    adaptive: bool,
    out: *mut *mut recuo_regulator,
    detail: *mut c_char,
    detail_len: usize,
) -> recuo_status {
    // SAFETY: the caller vouches for the path, the output and the detail buffer.
    unsafe {
        open_with_detail(detail, detail_len, out, || {
            let (path, rate) = (ptr::path(path, path_len)?, rate(per_second)?);
            Ok(Regulator::shared_with(path, rate, burst, adaptive).map(recuo_regulator))
        })
    }
}

/// Opens the regulator kept on the Redis server at `url` under `key`, shared by every process
/// on every machine that uses the same server and key, and stores a handle to it in `*out`.
/// Each check is one atomic script on the server, timed by the server's clock, so the
/// machines' own clocks do not matter. The handle keeps one connection (reopened when a kept
/// one turns out lost); each call — connecting, authenticating, the command and its reply —
/// ends within 5 s, however slowly the server trickles bytes, and a reply is bounded in size
/// (4 MiB at most).
///
/// * `url`, `url_len`: `redis://[[user]:password@]host[:port][/db]` or `host:port`, exactly
///   `url_len` bytes of UTF-8 (the port defaults to 6379, the database to 0; with a user,
///   `AUTH user password` is sent, as Redis 6 ACLs expect), or `rediss://…` for TLS — TLS
///   or an error, never a silent downgrade: rustls verifies the server's certificate and
///   name against the system's roots, or those `SSL_CERT_FILE` / `SSL_CERT_DIR` name.
///   For a Redis Cluster, `redis+cluster://[user:password@]host:port[,host:port…]/` names
///   some of its nodes (seeds; `rediss+cluster://` for TLS): recuo finds the others and runs
///   each check on the master of the key's slot; while that slot has no master (a
///   failover) a call asks again until its 5 s are up (docs/limits.md says what a failover
///   may cost). A cluster node named by a plain `redis://` URL is refused, the detail
///   naming the cluster form.
/// * `key`, `key_len`: the key, UTF-8; the state lives in `{KEY}:tat` and the settings in
///   `{KEY}:settings` (one cluster slot; on a Redis Cluster the key may not be empty).
/// * `per_second`, `burst`: as `recuo_regulator_new`. The first user of the key sets them;
///   every later one must ask for the same ones.
/// * `detail`, `detail_len` (may be NULL, 0): on an error, the reason in English,
///   NUL-terminated and truncated to fit — for a mismatch it names the key's settings and
///   those asked for, for an I/O error the server's address and the system's reason (never
///   the password); on success, an empty string. 256 bytes are plenty.
///
/// Returns `RECUO_OK`; `RECUO_ERR_INVALID_RATE`; `RECUO_ERR_ZERO_BURST`;
/// `RECUO_ERR_SHARED_MISMATCH` when the key was set up with another rate, burst or adaptive
/// setting; `RECUO_ERR_IO` when the server cannot be reached or used (a bad URL, a refused
/// connection, a timeout, an error reply); `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_NULL_ARGUMENT`
/// (`out`, or `url` or `key` with a non-zero length); `RECUO_ERR_LENGTH_TOO_LARGE`. On an
/// error `*out` is untouched.
///
/// Then `recuo_regulator_try_acquire` and the blocking acquires ask the server, and answer
/// `RECUO_ERR_IO` when it cannot be used (nothing is taken: fewer starts, never more).
/// The key is not adaptive: `recuo_regulator_new_redis_with` sets one up adaptive.
///
/// # Safety
/// `url` must point to `url_len` readable bytes and `key` to `key_len`; `out` NULL or a
/// writable pointer; `detail` NULL or `detail_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_new_redis(
    url: *const c_char,
    url_len: usize,
    key: *const c_char,
    key_len: usize,
    per_second: f64,
    burst: u32,
    out: *mut *mut recuo_regulator,
    detail: *mut c_char,
    detail_len: usize,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        recuo_regulator_new_redis_with(
            url, url_len, key, key_len, per_second, burst, false, out, detail, detail_len,
        )
    }
}

/// `recuo_regulator_new_redis` with the adaptive setting: `adaptive` true sets the key up
/// adaptive. The setting is recorded on the server with the rate and burst when the key is
/// set up, and every later user of the key must ask for the same one
/// (`RECUO_ERR_SHARED_MISMATCH` otherwise). On an adaptive key the interval in force lives
/// on the server, under `{KEY}:interval`: a 429 reported by any holder on any machine
/// (`recuo_regulator_on_throttled`, one round trip) halves the rate for all of them, and
/// successes (`recuo_regulator_on_success`) give back 1/16 of the configured rate each, by
/// the same rule as in one process, applied atomically by a script on the server. A
/// handle reports a success only while the interval in force it last heard of (from a
/// reservation or a report) is slower than the configured one, so a regulator at full
/// speed costs no round trip per success. A report the server cannot take is lost (the
/// regulator keeps its last interval; nothing else changes).
///
/// # Safety
/// As `recuo_regulator_new_redis`.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_new_redis_with(
    url: *const c_char,
    url_len: usize,
    key: *const c_char,
    key_len: usize,
    per_second: f64,
    burst: u32,
    adaptive: bool,
    out: *mut *mut recuo_regulator,
    detail: *mut c_char,
    detail_len: usize,
) -> recuo_status {
    // SAFETY: the caller vouches for the URL, the key, the output and the detail buffer.
    unsafe {
        open_with_detail(detail, detail_len, out, || {
            let (url, key) = (ptr::text(url, url_len)?, ptr::text(key, key_len)?);
            let rate = rate(per_second)?;
            Ok(redis_regulator(url, key, rate, burst, adaptive).map(recuo_regulator))
        })
    }
}

/// Releases a regulator handle (a shared regulator's file stays, with its state, and so does
/// a Redis regulator's key; a gate holding this regulator keeps it alive). NULL is accepted and ignored.
///
/// # Safety
/// `regulator` must be NULL or come from `recuo_regulator_new*`, not have been freed, and not
/// be in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_free(regulator: *mut recuo_regulator) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(regulator) })
}

/// Answers at once whether a start of weight `cost` may go now (on the regulator's own
/// clock: `recuo_monotonic_ns()`, or a Redis regulator's server's), and if so takes it:
///
/// * `RECUO_OK`: go now (the start is counted); `*wait_ns_out` receives 0.
/// * `RECUO_WOULD_WAIT` (not an error): not now; nothing is taken, and `*wait_ns_out`
///   receives the nanoseconds until such a start would be allowed (sleep that long and try
///   again, or use `recuo_regulator_acquire`).
/// * `RECUO_ERR_COST_ABOVE_BURST`: the cost exceeds the burst and could never go;
///   `RECUO_ERR_ZERO_COST`: a cost of 0 would take nothing;
///   `RECUO_ERR_IO`: a Redis regulator's server could not be used (nothing is taken);
///   `RECUO_ERR_NULL_ARGUMENT` for `regulator`. Then `*wait_ns_out` is untouched.
///
/// A cost of 1 is one request; a larger cost weighs as many (allowances counted in tokens).
/// `wait_ns_out` may be NULL.
///
/// # Safety
/// `regulator` must be NULL or a live handle; `wait_ns_out` NULL or a writable `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_try_acquire(
    regulator: *const recuo_regulator,
    cost: u32,
    wait_ns_out: *mut u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller (a reservation that may not wait is a try).
    unsafe { recuo_regulator_reserve(regulator, cost, 0, wait_ns_out) }
}

/// `recuo_regulator_try_acquire` at the instant `now_ns` of your choosing: nanoseconds on
/// `recuo_monotonic_ns()`, or on a fake clock (the regulator reads no clock here, so a test
/// can assert exact sequences; every user of one regulator must use the same clock — for a
/// Redis regulator shared between machines, a clock they all share, which
/// `recuo_monotonic_ns()` is not: use `recuo_regulator_try_acquire` there). The answers are
/// the same as `recuo_regulator_try_acquire`'s; a Redis server counts in whole
/// microseconds.
///
/// # Safety
/// As `recuo_regulator_try_acquire`.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_try_acquire_at(
    regulator: *const recuo_regulator,
    now_ns: u64,
    cost: u32,
    wait_ns_out: *mut u64,
) -> recuo_status {
    // SAFETY: forwarded from the caller (a reservation that may not wait is a try).
    unsafe { recuo_regulator_reserve_at(regulator, now_ns, cost, 0, wait_ns_out) }
}

/// Waits for a start slot of weight `cost` and takes it, blocking the calling thread.
/// Slots are handed out in the order they are asked for, so no caller starves.
///
/// * `cancel` (may be NULL): cancelling it wakes the wait at once.
///
/// Returns `RECUO_OK` (start now); `RECUO_CANCELLED` (not an error: the token was cancelled
/// before or during the wait; the slot that had been reserved is spent unused — the
/// regulator errs on the side of fewer starts, never more); `RECUO_QUEUE_FULL` (not an
/// error: the start would wait beyond the `RECUO_MAX_QUEUED_STARTS` queued ahead; nothing
/// was reserved or waited for: ask again later); `RECUO_ERR_COST_ABOVE_BURST`;
/// `RECUO_ERR_ZERO_COST`;
/// `RECUO_ERR_IO` (a Redis regulator's server could not be used; nothing was waited for);
/// `RECUO_ERR_NULL_ARGUMENT` for `regulator`.
///
/// # Safety
/// `regulator` and `cancel` must each be NULL or a live handle.
// Blocks the calling thread: not in the WebAssembly build, whose host waits with timers.
#[cfg(not(target_family = "wasm"))]
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_acquire(
    regulator: *const recuo_regulator,
    cost: u32,
    cancel: *const recuo_cancel_token,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or live handles.
    unsafe {
        ptr::with_ref(regulator, |r| {
            match r.0.acquire(cost, &cancel_token(cancel)) {
                Ok(true) => RECUO_OK,
                Ok(false) => RECUO_CANCELLED,
                Err(e) => e.into(),
            }
        })
    }
}

/// Waits for a start slot of weight `cost` only if it comes within `timeout_ms`
/// milliseconds, and takes it.
///
/// Returns `RECUO_OK` (start now); `RECUO_TIMED_OUT` (not an error: the slot would come
/// later than the timeout; nothing was reserved and nothing was waited); `RECUO_CANCELLED`
/// (as `recuo_regulator_acquire`); `RECUO_QUEUE_FULL` (as `recuo_regulator_acquire`, when the
/// timeout is longer than the queue); `RECUO_ERR_COST_ABOVE_BURST`; `RECUO_ERR_ZERO_COST`;
/// `RECUO_ERR_IO` (as
/// `recuo_regulator_acquire`); `RECUO_ERR_NULL_ARGUMENT`.
/// A `timeout_ms` of 0 is a try that reserves nothing; `UINT64_MAX` waits as long as it
/// takes.
///
/// # Safety
/// `regulator` and `cancel` must each be NULL or a live handle.
// Blocks the calling thread: not in the WebAssembly build, whose host waits with timers.
#[cfg(not(target_family = "wasm"))]
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_acquire_until(
    regulator: *const recuo_regulator,
    cost: u32,
    timeout_ms: u64,
    cancel: *const recuo_cancel_token,
) -> recuo_status {
    let timeout = Duration::from_millis(timeout_ms);
    // SAFETY: the caller vouches for NULL or live handles.
    unsafe {
        ptr::with_ref(regulator, |r| {
            match r.0.acquire_until(cost, timeout, &cancel_token(cancel)) {
                Ok(Some(true)) => RECUO_OK,
                Ok(Some(false)) => RECUO_CANCELLED,
                Ok(None) => RECUO_TIMED_OUT,
                Err(e) => e.into(),
            }
        })
    }
}

/// Makes a regulator of this process adaptive (or not): told "slow down" by
/// `recuo_regulator_on_throttled` (a 429) it halves its rate, down to 1/64 of the configured
/// one, and each `recuo_regulator_on_success` gives back 1/16 of the configured rate, up to
/// it — as the AWS SDK's adaptive mode does. Every handle and gate sharing the regulator sees
/// the setting.
///
/// A shared file's or a Redis key's setting is made when it is set up
/// (`recuo_regulator_new_shared_with`, `recuo_regulator_new_redis_with`), and every process
/// that opens it must agree: no process switches it for the others. Asking a shared or Redis
/// regulator for its own setting answers `RECUO_OK`; asking for the other one answers
/// `RECUO_ERR_SHARED_MISMATCH` and changes nothing.
/// Safe from any thread. Returns `RECUO_OK`, `RECUO_ERR_SHARED_MISMATCH` or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `regulator` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_set_adaptive(
    regulator: *const recuo_regulator,
    adaptive: bool,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with_ref(regulator, |r| r.0.set_adaptive(adaptive)) }
}

/// A rate-limited answer (429, or a 403 with a spent quota) was seen: an adaptive regulator
/// halves its rate; a fixed one ignores it. `recuo_retry` with a gate, the batch runner and
/// a machine holding the gate (`recuo_attempts_set_gate`) call it for you. Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `regulator` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_on_throttled(
    regulator: *const recuo_regulator,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with_ref(regulator, |r| r.0.on_throttled()) }
}

/// An attempt succeeded: an adaptive regulator gives back 1/16 of its configured rate, up to
/// it; a fixed one ignores it. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `regulator` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_on_success(
    regulator: *const recuo_regulator,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe { ptr::with_ref(regulator, |r| r.0.on_success()) }
}

/// The rate in force, in starts per second (below the configured rate while an adaptive
/// regulator is slowed down). NaN when `regulator` is NULL.
///
/// # Safety
/// `regulator` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_rate_per_s(regulator: *const recuo_regulator) -> f64 {
    // SAFETY: the caller vouches for NULL or a live handle.
    boundary(|| unsafe { regulator.as_ref() }.map_or(f64::NAN, |r| r.0.rate().as_per_second()))
}

/// The burst: how many starts may go at once after a quiet spell. 0 when `regulator` is
/// NULL.
///
/// # Safety
/// `regulator` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_regulator_burst(regulator: *const recuo_regulator) -> u32 {
    // SAFETY: the caller vouches for NULL or a live handle.
    boundary(|| unsafe { regulator.as_ref() }.map_or(0, |r| r.0.burst()))
}

/// The regulator on Redis, through `recuo-redis` (without the `redis` feature: the error of a
/// build without Redis support, after the local regulator's checks).
use recuo_redis::regulator_with as redis_regulator;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// What the detail of a server out of reach at `url` says: its address — or, in a build
    /// without the `redis` feature, that there is no Redis support.
    pub(crate) fn out_of_reach(url: &str) -> String {
        if cfg!(feature = "redis") {
            format!("Redis at {url}")
        } else {
            "no Redis support".to_owned()
        }
    }

    /// `127.0.0.1:PORT` of a port nothing listens on now (the kernel's choice).
    pub(crate) fn closed_port_url() -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("127.0.0.1:{}", listener.local_addr().unwrap().port())
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn a_burst_then_one_per_interval() {
        let mut r = std::ptr::null_mut();
        let mut wait = u64::MAX;
        // SAFETY: live handles and outputs.
        unsafe {
            assert_eq!(recuo_regulator_new(2.0, 3, &mut r), RECUO_OK);
            for _ in 0..3 {
                assert_eq!(
                    recuo_regulator_try_acquire_at(r, 10 * S, 1, &mut wait),
                    RECUO_OK
                );
                assert_eq!(wait, 0);
            }
            assert_eq!(
                recuo_regulator_try_acquire_at(r, 10 * S, 1, &mut wait),
                RECUO_WOULD_WAIT
            );
            assert_eq!(wait, S / 2);
            assert_eq!(
                recuo_regulator_try_acquire_at(r, 10 * S, 4, &mut wait),
                RECUO_ERR_COST_ABOVE_BURST
            );
            assert_eq!(recuo_regulator_burst(r), 3);
            assert_eq!(recuo_regulator_rate_per_s(r), 2.0);
            recuo_regulator_free(r);
        }
    }

    #[test]
    fn a_redis_regulator_out_of_reach_is_an_io_error() {
        let url = crate::regulator::tests::closed_port_url();
        let mut r = std::ptr::null_mut();
        let mut detail = [0 as c_char; 256];
        // SAFETY: live buffers and outputs of the lengths given.
        unsafe {
            assert_eq!(
                recuo_regulator_new_redis(
                    url.as_ptr().cast(),
                    url.len(),
                    c"k".as_ptr(),
                    1,
                    1.0,
                    1,
                    &mut r,
                    detail.as_mut_ptr(),
                    detail.len()
                ),
                RECUO_ERR_IO
            );
            let detail = std::ffi::CStr::from_ptr(detail.as_ptr()).to_str().unwrap();
            assert!(detail.contains(&out_of_reach(&url)), "{detail}");
            assert_eq!(
                recuo_regulator_new_redis(
                    url.as_ptr().cast(),
                    url.len(),
                    c"\xff".as_ptr(),
                    1,
                    1.0,
                    1,
                    &mut r,
                    std::ptr::null_mut(),
                    0
                ),
                recuo_status::RECUO_ERR_NOT_UTF8
            );
            assert_eq!(
                recuo_regulator_new_redis(
                    url.as_ptr().cast(),
                    url.len(),
                    c"k".as_ptr(),
                    1,
                    1.0,
                    0,
                    &mut r,
                    std::ptr::null_mut(),
                    0
                ),
                RECUO_ERR_ZERO_BURST
            );
        }
        assert!(r.is_null());
    }

    #[test]
    fn bad_settings_are_refused() {
        let mut r = std::ptr::null_mut();
        // SAFETY: a live output.
        unsafe {
            assert_eq!(
                recuo_regulator_new(0.0, 1, &mut r),
                recuo_status::RECUO_ERR_INVALID_RATE
            );
            assert_eq!(recuo_regulator_new(1.0, 0, &mut r), RECUO_ERR_ZERO_BURST);
        }
        assert!(r.is_null());
    }
}
