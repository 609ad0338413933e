//! `recuo_attempt_pool_*`: the shared count of attempts of nested loops (SPEC §6).

use recuo::AttemptPool;

use crate::panic::boundary;

/// A shared count of attempts, so that nested retry loops share one limit: in C
/// this is explicit — create one pool for the outermost operation, sized by its policy's
/// attempts, and hand the same pool to the inner ones (`recuo_attempts_set_pool`,
/// `recuo_retry_options_set_pool`). Backed by a `recuo::AttemptPool` (an atomic count).
///
/// Safe to use from several threads at once. Free it with `recuo_attempt_pool_free`; the
/// state machines and options it was given to keep their own reference, so it may be freed
/// before them.
#[derive(Debug, Clone)]
pub struct recuo_attempt_pool(pub(crate) AttemptPool);

/// A new pool of `attempts` attempts (0 is allowed: every draw fails). Free it with
/// `recuo_attempt_pool_free`. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_attempt_pool_new(attempts: u32) -> *mut recuo_attempt_pool {
    boundary(|| Box::into_raw(Box::new(recuo_attempt_pool(AttemptPool::new(attempts)))))
}

/// Releases a pool handle (the count lives on while a state machine or options use it).
/// NULL is accepted and ignored.
///
/// # Safety
/// `pool` must be NULL or come from `recuo_attempt_pool_new` and not have been freed.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempt_pool_free(pool: *mut recuo_attempt_pool) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { crate::ptr::free(pool) })
}

/// Attempts left in the pool. 0 when `pool` is NULL.
///
/// # Safety
/// `pool` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_attempt_pool_remaining(pool: *const recuo_attempt_pool) -> u32 {
    // SAFETY: the caller vouches for NULL or a live handle.
    boundary(|| unsafe { pool.as_ref() }.map_or(0, |p| p.0.remaining()))
}
