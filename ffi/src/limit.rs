//! The concurrency limit for C: a semaphore on requests in flight, whose permits
//! are handles released with `recuo_permit_release` — in this process, in a file shared by
//! the processes of one machine (each place a lock the kernel releases when its holder
//! dies), or on a Redis server shared by every machine that uses it, each place a lease.
//! The semaphore and the file's places are the core's (`recuo::ConcurrencyLimit`), the
//! leases recuo-redis's.
// The blocking waits are not in the WebAssembly build; what only they use is unused there.
#![cfg_attr(target_family = "wasm", allow(unused_imports))]

use std::time::{Duration, Instant};

use recuo::{ConcurrencyLimit, Permit};

use crate::prelude::*;

/// At most `limit` requests in flight at once: a semaphore, backed by a
/// `recuo::ConcurrencyLimit` (a mutex-guarded count and a condition variable), or — from
/// `recuo_concurrency_limit_new_redis` — a limit kept on a Redis server, shared by every
/// handle on the same server and key, on any machine, each place a lease.
///
/// Every function takes a `const` pointer: one handle may be used by any number of threads
/// at once. Permits and gates keep their own reference, so the handle may be freed before
/// them.
#[derive(Debug, Clone)]
pub struct recuo_concurrency_limit(pub(crate) ConcurrencyLimit);

/// One place in flight, taken from a `recuo_concurrency_limit`, given back by
/// `recuo_permit_release` (its `_free`). Backed by a `recuo::Permit`. Release it as soon as
/// the request is over — before any backoff sleep — from any thread. A place on Redis is a
/// lease: `recuo_permit_renew` extends it.
#[derive(Debug)]
pub struct recuo_permit {
    /// Renewed by `recuo_permit_renew`; its drop gives the place back.
    permit: Permit,
}

/// Creates a concurrency limit of `limit` places and stores it in `*out`. Free it with
/// `recuo_concurrency_limit_free`.
///
/// Returns `RECUO_OK`; `RECUO_ERR_ZERO_LIMIT` for a limit of 0 (nothing could ever run);
/// `RECUO_ERR_NULL_ARGUMENT` for `out`. On an error `*out` is untouched.
///
/// # Safety
/// `out` must be NULL or a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn recuo_concurrency_limit_new(
    limit: u32,
    out: *mut *mut recuo_concurrency_limit,
) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::make(out, || {
            let limit = ConcurrencyLimit::new(limit).ok_or(RECUO_ERR_ZERO_LIMIT)?;
            Ok(recuo_concurrency_limit(limit))
        })
    }
}

/// Opens the concurrency limit kept in the file at `path` — at most `limit` requests in
/// flight for every process of this machine that opens the same file — and stores a handle
/// to it in `*out`. Free it with `recuo_concurrency_limit_free`.
///
/// Each place is a lock on one byte of the file (an open-file-description lock: Linux 3.15 or
/// later), which the kernel releases when its holder's process ends — `kill -9` included:
/// a dead holder's place comes back at once, and a waiter in another process takes it
/// within 10 ms (waiters look again every 1 ms, then less often, at least every 10 ms).
/// `recuo_concurrency_limit_in_flight` counts the places held by every process;
/// `recuo_concurrency_limit_max_in_flight` only this handle's. A child made by `fork()`
/// while this process holds places shares those locks until it exits or first uses the
/// handle (it then opens the file again for itself): open the limit in each worker.
///
/// * `path`, `path_len`: the file, exactly `path_len` bytes (no NUL needed). It is created
///   with mode 0600 if missing; it is never opened through a symbolic link and must be a
///   regular file of this process's user that nobody else may write. The first opener sets
///   the limit; every later one must ask for the same.
/// * `limit`: the places, as `recuo_concurrency_limit_new`.
/// * `detail`, `detail_len` (may be NULL, 0): on an error, the reason in English,
///   NUL-terminated and truncated to fit; on success, an empty string. 256 bytes are plenty.
///
/// Returns `RECUO_OK`; `RECUO_ERR_ZERO_LIMIT`; `RECUO_ERR_SHARED_MISMATCH` when the file
/// holds a limit of another number of places, another kind of state, or is not a recuo
/// state (never set up again over what it holds); `RECUO_ERR_IO` when the file cannot be
/// opened, is refused (a symbolic link, another user's, writable by others), or the kernel
/// has no such locks; `RECUO_ERR_NULL_ARGUMENT` (`out`, or `path` with a non-zero length);
/// `RECUO_ERR_LENGTH_TOO_LARGE`. On an error `*out` is untouched.
///
/// # Safety
/// `path` must point to `path_len` readable bytes; `out` NULL or a writable pointer;
/// `detail` NULL or `detail_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn recuo_concurrency_limit_new_shared(
    path: *const c_char,
    path_len: usize,
    limit: u32,
    out: *mut *mut recuo_concurrency_limit,
    detail: *mut c_char,
    detail_len: usize,
) -> recuo_status {
    // SAFETY: the caller vouches for the path, the output and the detail buffer.
    unsafe {
        open_with_detail(detail, detail_len, out, || {
            let path = ptr::path(path, path_len)?;
            Ok(ConcurrencyLimit::shared(path, limit).map(recuo_concurrency_limit))
        })
    }
}

/// The lease of a limit of `limit` places on Redis, checked: the local limit's rule first
/// (`RECUO_ERR_ZERO_LIMIT`), then the lease's, the core's (`RECUO_ERR_INVALID_LEASE`).
pub(crate) fn lease(limit: u32, lease_ms: u64) -> Result<Duration, recuo_status> {
    ConcurrencyLimit::new(limit).ok_or(RECUO_ERR_ZERO_LIMIT)?;
    recuo::limit::lease_of_ms(lease_ms).ok_or(RECUO_ERR_INVALID_LEASE)
}

/// Opens the concurrency limit kept on the Redis server at `url` under `key` — at most
/// `limit` requests in flight for every process on every machine that uses the same server
/// and key — and stores a handle to it in `*out`. Each place is a lease of `lease_ms`
/// milliseconds, an owner token with an expiry kept in one sorted set on the server (timed
/// by the server's clock): a holder that dies — `kill -9`, a lost machine — frees its place
/// when its lease ends, never later. A request that may outlast its lease renews it
/// (`recuo_permit_renew`); a gate does not, so give a gate's limit a lease longer than its
/// longest attempt. Releasing twice or after the lease expired is harmless.
///
/// The handle keeps one connection (reopened when a kept one turns out lost); each call ends
/// within 5 s, however slowly the server answers, as `recuo_regulator_new_redis` says.
///
/// * `url`, `url_len`: as `recuo_regulator_new_redis`: `redis://[[user]:password@]host[:port][/db]`,
///   `rediss://…` for TLS, or `host:port`, exactly `url_len` bytes of UTF-8 — or
///   `redis+cluster://host:port,host:port/` for a Redis Cluster (seed nodes;
///   `rediss+cluster://` for TLS).
/// * `key`, `key_len`: the key, UTF-8; the leases live in `{KEY}:leases` and the settings in
///   `{KEY}:settings`.
/// * `limit`: the places, as `recuo_concurrency_limit_new`; `lease_ms`: 1 ms to 1 day. The
///   first user of the key sets them; every later one must ask for the same ones.
/// * `detail`, `detail_len` (may be NULL, 0): on an error, the reason in English,
///   NUL-terminated and truncated to fit — for a mismatch both settings, for an I/O error the
///   server's address and what went wrong (never the password); on success, an empty
///   string. 256 bytes are plenty.
///
/// Returns `RECUO_OK`; `RECUO_ERR_ZERO_LIMIT`; `RECUO_ERR_INVALID_LEASE`;
/// `RECUO_ERR_SHARED_MISMATCH` when the key was set up with another limit or lease;
/// `RECUO_ERR_IO` when the server cannot be reached or used (a bad URL, a refused
/// connection, a timeout, an error reply, a build without Redis support);
/// `RECUO_ERR_NOT_UTF8`; `RECUO_ERR_NULL_ARGUMENT` (`out`, or `url` or `key` with a non-zero
/// length); `RECUO_ERR_LENGTH_TOO_LARGE`. On an error `*out` is untouched.
///
/// Then the acquires ask the server, and answer `RECUO_ERR_IO` when it cannot be used (no
/// place is given without the server's word); `recuo_concurrency_limit_in_flight` and
/// `_max_in_flight` count this process's places only.
///
/// # Safety
/// `url` must point to `url_len` readable bytes and `key` to `key_len`; `out` NULL or a
/// writable pointer; `detail` NULL or `detail_len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn recuo_concurrency_limit_new_redis(
    url: *const c_char,
    url_len: usize,
    key: *const c_char,
    key_len: usize,
    limit: u32,
    lease_ms: u64,
    out: *mut *mut recuo_concurrency_limit,
    detail: *mut c_char,
    detail_len: usize,
) -> recuo_status {
    // SAFETY: the caller vouches for the URL, the key, the output and the detail buffer.
    unsafe {
        open_with_detail(detail, detail_len, out, || {
            let (url, key) = (ptr::text(url, url_len)?, ptr::text(key, key_len)?);
            let lease = lease(limit, lease_ms)?;
            Ok(redis_limit(url, key, limit, lease).map(recuo_concurrency_limit))
        })
    }
}

/// Releases a concurrency-limit handle (the permits taken from it, and the gates holding
/// it, keep the semaphore alive; a Redis limit's key stays). NULL is accepted and ignored.
///
/// # Safety
/// `limit` must be NULL or come from `recuo_concurrency_limit_new*`, not have been freed, and
/// not be in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_concurrency_limit_free(limit: *mut recuo_concurrency_limit) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(limit) })
}

/// Takes a place now if one is free, and stores the permit in `*out`.
///
/// Returns `RECUO_OK` (release the permit with `recuo_permit_release`); `RECUO_WOULD_WAIT`
/// (not an error: every place is taken; `*out` untouched); `RECUO_ERR_IO` (a Redis limit's
/// server, or a shared file's locks, could not be used: no place); `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `limit` must be NULL or a live handle; `out` NULL or a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn recuo_concurrency_limit_try_acquire(
    limit: *const recuo_concurrency_limit,
    out: *mut *mut recuo_permit,
) -> recuo_status {
    checked(|| {
        // SAFETY: the caller vouches for NULL or a live handle.
        let (l, out) = unsafe { (ptr::input(limit)?, ptr::out(out)?) };
        Ok(match l.0.try_acquire()? {
            // SAFETY: a checked output.
            Some(permit) => unsafe { ptr::store(out, recuo_permit { permit }) },
            None => RECUO_WOULD_WAIT,
        })
    })
}

/// Waits for a place, blocking the calling thread, at most `timeout_ms` milliseconds
/// (`UINT64_MAX`: as long as it takes), and stores the permit in `*out`.
///
/// * `cancel` (may be NULL): cancelling it ends the wait within a few milliseconds.
///
/// A Redis limit asks the server every 5–50 ms while it waits.
///
/// Returns `RECUO_OK`; `RECUO_TIMED_OUT` (not an error: no place came in time);
/// `RECUO_CANCELLED` (not an error); `RECUO_ERR_IO` (a Redis limit's server could not be
/// used, within its deadline per call: no place); `RECUO_ERR_NULL_ARGUMENT`. Unless
/// `RECUO_OK`, `*out` is untouched.
///
/// # Safety
/// `limit` and `cancel` must each be NULL or a live handle; `out` NULL or a writable pointer.
// Blocks the calling thread: not in the WebAssembly build, whose host waits with timers.
#[cfg(not(target_family = "wasm"))]
#[no_mangle]
pub unsafe extern "C" fn recuo_concurrency_limit_acquire(
    limit: *const recuo_concurrency_limit,
    timeout_ms: u64,
    cancel: *const recuo_cancel_token,
    out: *mut *mut recuo_permit,
) -> recuo_status {
    checked(|| {
        // SAFETY: the caller vouches for NULL or live handles.
        let (l, out, cancel) =
            unsafe { (ptr::input(limit)?, ptr::out(out)?, cancel_token(cancel)) };
        // A timeout too long to be an instant is no timeout.
        let timeout = Some(Duration::from_millis(timeout_ms))
            .filter(|t| timeout_ms != u64::MAX && Instant::now().checked_add(*t).is_some());
        Ok(match l.0.acquire(timeout, &cancel)? {
            // SAFETY: a checked output.
            Some(permit) => unsafe { ptr::store(out, recuo_permit { permit }) },
            None if cancel.is_cancelled() => RECUO_CANCELLED,
            None => RECUO_TIMED_OUT,
        })
    })
}

/// Gives the place back (the permit's `_free`; for a Redis limit, its lease is released on
/// the server — a lease already expired, or a server out of reach, is no error: the lease
/// ends by itself). NULL is accepted and ignored. May be called from any thread, also after
/// the limit's handle was freed.
///
/// # Safety
/// `permit` must be NULL or come from a `recuo_concurrency_limit_*acquire` and not have been
/// released.
#[no_mangle]
pub unsafe extern "C" fn recuo_permit_release(permit: *mut recuo_permit) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(permit) })
}

/// Extends the permit's lease from now, by the limit's `lease_ms` (a long request does this
/// before its lease ends), and stores in `*renewed_out` whether it was renewed: `false` when
/// the lease had already expired — the place is not taken back, it may be someone else's by
/// now. A permit of a limit in this process has no lease: `true`. May be called from any
/// thread while the request runs.
///
/// Returns `RECUO_OK`; `RECUO_ERR_IO` (the Redis server could not be used; `*renewed_out`
/// untouched); `RECUO_ERR_NULL_ARGUMENT` (`permit` or `renewed_out`).
///
/// # Safety
/// `permit` must be NULL or a live permit; `renewed_out` NULL or a writable `bool`.
#[no_mangle]
pub unsafe extern "C" fn recuo_permit_renew(
    permit: *const recuo_permit,
    renewed_out: *mut bool,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or a live permit and a writable output (both NULL
    // checks answer `RECUO_ERR_NULL_ARGUMENT`, before the renewal's own error).
    unsafe { ptr::fill(renewed_out, || Ok(ptr::input(permit)?.permit.renew()?)) }
}

/// Requests in flight now (permits held; for a Redis limit, this process's; for a shared
/// file, every process's, as the kernel counts the locks). 0 when `limit` is NULL.
///
/// # Safety
/// `limit` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_concurrency_limit_in_flight(
    limit: *const recuo_concurrency_limit,
) -> u32 {
    // SAFETY: the caller vouches for NULL or a live handle.
    boundary(|| unsafe { limit.as_ref() }.map_or(0, |l| l.0.in_flight()))
}

/// The most requests that were ever in flight at once (for a Redis limit or a shared file,
/// this process's).
/// 0 when `limit` is NULL.
///
/// # Safety
/// `limit` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_concurrency_limit_max_in_flight(
    limit: *const recuo_concurrency_limit,
) -> u32 {
    // SAFETY: the caller vouches for NULL or a live handle.
    boundary(|| unsafe { limit.as_ref() }.map_or(0, |l| l.0.max_in_flight()))
}

/// The number of places. 0 when `limit` is NULL.
///
/// # Safety
/// `limit` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_concurrency_limit_limit(
    limit: *const recuo_concurrency_limit,
) -> u32 {
    // SAFETY: the caller vouches for NULL or a live handle.
    boundary(|| unsafe { limit.as_ref() }.map_or(0, |l| l.0.limit()))
}

/// The concurrency limit on Redis, through `recuo-redis` (without the `redis` feature: the
/// error of a build without Redis support, after the settings' checks).
use recuo_redis::limit as redis_limit;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::recuo_status::RECUO_OK;

    #[test]
    fn permits_come_back() {
        let mut l = std::ptr::null_mut();
        let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: live handles and outputs.
        unsafe {
            assert_eq!(recuo_concurrency_limit_new(0, &mut l), RECUO_ERR_ZERO_LIMIT);
            assert_eq!(recuo_concurrency_limit_new(1, &mut l), RECUO_OK);
            assert_eq!(recuo_concurrency_limit_try_acquire(l, &mut a), RECUO_OK);
            assert_eq!(
                recuo_concurrency_limit_try_acquire(l, &mut b),
                RECUO_WOULD_WAIT
            );
            assert_eq!(
                recuo_concurrency_limit_acquire(l, 5, std::ptr::null(), &mut b),
                RECUO_TIMED_OUT
            );
            assert!(b.is_null());
            recuo_concurrency_limit_free(l);
            recuo_permit_release(a);
        }
    }

    #[test]
    fn a_redis_limit_checks_its_settings_then_reaches_for_the_server() {
        let url = crate::regulator::tests::closed_port_url();
        let mut l = std::ptr::null_mut();
        let mut detail = [0 as c_char; 256];
        let open =
            |limit: u32, lease_ms: u64, l: &mut *mut recuo_concurrency_limit, d: &mut [c_char]| {
                // SAFETY: live buffers and outputs of the lengths given.
                unsafe {
                    recuo_concurrency_limit_new_redis(
                        url.as_ptr().cast(),
                        url.len(),
                        c"k".as_ptr(),
                        1,
                        limit,
                        lease_ms,
                        l,
                        d.as_mut_ptr(),
                        d.len(),
                    )
                }
            };
        assert_eq!(
            open(2, 500, &mut l, &mut detail),
            recuo_status::RECUO_ERR_IO
        );
        // SAFETY: NUL-terminated by write_detail.
        let text = unsafe { std::ffi::CStr::from_ptr(detail.as_ptr()) };
        assert!(
            text.to_str()
                .unwrap()
                .contains(&crate::regulator::tests::out_of_reach(&url)),
            "{text:?}"
        );
        assert_eq!(open(0, 500, &mut l, &mut detail), RECUO_ERR_ZERO_LIMIT);
        assert_eq!(open(2, 0, &mut l, &mut detail), RECUO_ERR_INVALID_LEASE);
        assert_eq!(
            open(2, 86_400_001, &mut l, &mut detail),
            RECUO_ERR_INVALID_LEASE
        );
        assert!(l.is_null());
    }

    #[test]
    fn a_local_permit_renews_as_a_lease_that_never_ends() {
        let mut l = std::ptr::null_mut();
        let mut p = std::ptr::null_mut();
        let mut renewed = false;
        // SAFETY: live handles and outputs.
        unsafe {
            assert_eq!(recuo_concurrency_limit_new(1, &mut l), RECUO_OK);
            assert_eq!(recuo_concurrency_limit_try_acquire(l, &mut p), RECUO_OK);
            assert_eq!(recuo_permit_renew(p, &mut renewed), RECUO_OK);
            assert!(renewed);
            assert_eq!(
                recuo_permit_renew(p, std::ptr::null_mut()),
                recuo_status::RECUO_ERR_NULL_ARGUMENT
            );
            assert_eq!(
                recuo_permit_renew(std::ptr::null(), &mut renewed),
                recuo_status::RECUO_ERR_NULL_ARGUMENT
            );
            recuo_permit_release(p);
            recuo_concurrency_limit_free(l);
        }
    }
}
