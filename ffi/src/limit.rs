//! The concurrency limit (SPEC §9) for C: a semaphore on requests in flight, whose permits
//! are handles released with `recuo_permit_release`. The semaphore is the core's
//! (`recuo::ConcurrencyLimit`).

use std::time::{Duration, Instant};

use recuo::{ConcurrencyLimit, Permit};

use crate::cancel::cancel_token;
use crate::cancel::recuo_cancel_token;
use crate::panic::boundary;
use crate::ptr;
use crate::ptr::store;
use crate::status::recuo_status::{
    self, RECUO_CANCELLED, RECUO_ERR_ZERO_LIMIT, RECUO_TIMED_OUT, RECUO_WOULD_WAIT,
};

/// At most `limit` requests in flight at once: a semaphore, backed by a
/// `recuo::ConcurrencyLimit` (a mutex-guarded count and a condition variable).
///
/// Every function takes a `const` pointer: one handle may be used by any number of threads
/// at once. Permits and gates keep their own reference, so the handle may be freed before
/// them.
#[derive(Debug, Clone)]
pub struct recuo_concurrency_limit(pub(crate) ConcurrencyLimit);

/// One place in flight, taken from a `recuo_concurrency_limit`, given back by
/// `recuo_permit_release` (its `_free`). Backed by a `recuo::Permit`. Release it as soon as
/// the request is over — before any backoff sleep — from any thread.
#[derive(Debug)]
pub struct recuo_permit {
    /// Held for its drop, which gives the place back.
    _permit: Permit,
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
    boundary(|| {
        let made = ptr::out(out).and_then(|out| {
            let limit = ConcurrencyLimit::new(limit).ok_or(RECUO_ERR_ZERO_LIMIT)?;
            Ok((out, limit))
        });
        match made {
            // SAFETY: a checked output.
            Ok((out, limit)) => unsafe { store(out, recuo_concurrency_limit(limit)) },
            Err(status) => status,
        }
    })
}

/// Releases a concurrency-limit handle (the permits taken from it, and the gates holding
/// it, keep the semaphore alive). NULL is accepted and ignored.
///
/// # Safety
/// `limit` must be NULL or come from `recuo_concurrency_limit_new`, not have been freed, and
/// not be in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_concurrency_limit_free(limit: *mut recuo_concurrency_limit) {
    boundary(|| {
        if !limit.is_null() {
            // SAFETY: the caller vouches that it came from Box::into_raw and is freed once.
            drop(unsafe { Box::from_raw(limit) });
        }
    })
}

/// Takes a place now if one is free, and stores the permit in `*out`.
///
/// Returns `RECUO_OK` (release the permit with `recuo_permit_release`); `RECUO_WOULD_WAIT`
/// (not an error: every place is taken; `*out` untouched); `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `limit` must be NULL or a live handle; `out` NULL or a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn recuo_concurrency_limit_try_acquire(
    limit: *const recuo_concurrency_limit,
    out: *mut *mut recuo_permit,
) -> recuo_status {
    boundary(|| {
        // SAFETY: the caller vouches for NULL or a live handle.
        let (l, out) = match unsafe { (ptr::input(limit), ptr::out(out)) } {
            (Ok(l), Ok(out)) => (l, out),
            _ => return recuo_status::RECUO_ERR_NULL_ARGUMENT,
        };
        match l.0.try_acquire() {
            // SAFETY: a checked output.
            Ok(Some(permit)) => unsafe { store(out, recuo_permit { _permit: permit }) },
            Ok(None) => RECUO_WOULD_WAIT,
            Err(e) => e.into(),
        }
    })
}

/// Waits for a place, blocking the calling thread, at most `timeout_ms` milliseconds
/// (`UINT64_MAX`: as long as it takes), and stores the permit in `*out`.
///
/// * `cancel` (may be NULL): cancelling it ends the wait within a few milliseconds.
///
/// Returns `RECUO_OK`; `RECUO_TIMED_OUT` (not an error: no place came in time);
/// `RECUO_CANCELLED` (not an error); `RECUO_ERR_NULL_ARGUMENT`. Unless `RECUO_OK`, `*out` is
/// untouched.
///
/// # Safety
/// `limit` and `cancel` must each be NULL or a live handle; `out` NULL or a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn recuo_concurrency_limit_acquire(
    limit: *const recuo_concurrency_limit,
    timeout_ms: u64,
    cancel: *const recuo_cancel_token,
    out: *mut *mut recuo_permit,
) -> recuo_status {
    boundary(|| {
        // SAFETY: the caller vouches for NULL or live handles.
        let (l, out) = match unsafe { (ptr::input(limit), ptr::out(out)) } {
            (Ok(l), Ok(out)) => (l, out),
            _ => return recuo_status::RECUO_ERR_NULL_ARGUMENT,
        };
        // SAFETY: the caller vouches for NULL or a live token.
        let cancel = unsafe { cancel_token(cancel) };
        // A timeout too long to be an instant is no timeout.
        let timeout = Some(Duration::from_millis(timeout_ms))
            .filter(|t| timeout_ms != u64::MAX && Instant::now().checked_add(*t).is_some());
        match l.0.acquire(timeout, &cancel) {
            // SAFETY: a checked output.
            Ok(Some(permit)) => unsafe { store(out, recuo_permit { _permit: permit }) },
            Ok(None) if cancel.is_cancelled() => RECUO_CANCELLED,
            Ok(None) => RECUO_TIMED_OUT,
            Err(e) => e.into(),
        }
    })
}

/// Gives the place back (the permit's `_free`). NULL is accepted and ignored. May be called
/// from any thread, also after the limit's handle was freed.
///
/// # Safety
/// `permit` must be NULL or come from a `recuo_concurrency_limit_*acquire` and not have been
/// released.
#[no_mangle]
pub unsafe extern "C" fn recuo_permit_release(permit: *mut recuo_permit) {
    boundary(|| {
        if !permit.is_null() {
            // SAFETY: the caller vouches that it came from Box::into_raw and is freed once.
            drop(unsafe { Box::from_raw(permit) });
        }
    })
}

/// Requests in flight now (permits held). 0 when `limit` is NULL.
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

/// The most requests that were ever in flight at once. 0 when `limit` is NULL.
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
}
