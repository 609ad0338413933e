//! `recuo_cancel_token_*`: a cancellation flag shared across threads.

use recuo::CancelToken;

use crate::prelude::*;

/// A flag that cancels operations, from any thread: a `recuo::CancelToken` (a mutex-guarded
/// flag and a condition variable). Cancelling wakes a `recuo_retry` sleeping between attempts
/// at once; a `recuo_retry` whose operation is running stops before the next attempt. It stays
/// cancelled.
///
/// Create it with `recuo_cancel_token_new`, hand it to `recuo_retry_options_set_cancel_token`
/// (or to a wait of the shared limits: `recuo_regulator_acquire`, `_acquire_until`,
/// `recuo_concurrency_limit_acquire`, `recuo_gate_wait`, which it wakes at once or within a
/// few milliseconds), call `recuo_cancel_token_cancel` from any thread, free it with
/// `recuo_cancel_token_free` once no thread calls it any more (options keep their own
/// reference to the flag).
#[derive(Debug, Clone, Default)]
pub struct recuo_cancel_token(pub(crate) CancelToken);

/// A new token, not cancelled. Free it with `recuo_cancel_token_free`. NULL only if recuo
/// panicked.
#[no_mangle]
pub extern "C" fn recuo_cancel_token_new() -> *mut recuo_cancel_token {
    boundary(|| Box::into_raw(Box::default()))
}

/// Releases a token handle. NULL is accepted and ignored.
///
/// # Safety
/// `token` must be NULL or come from `recuo_cancel_token_new`, not have been freed, and not
/// be in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_cancel_token_free(token: *mut recuo_cancel_token) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(token) })
}

/// Cancels: every `recuo_retry` using this token stops (a sleeping one wakes at once, and
/// gives up with `RECUO_GIVE_UP_CANCELLED`). Callable from any thread, any number of times.
/// Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `token` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_cancel_token_cancel(
    token: *const recuo_cancel_token,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or a live handle.
    unsafe { ptr::with_ref(token, |t| t.0.cancel()) }
}

/// Whether the token was cancelled. False when `token` is NULL.
///
/// # Safety
/// `token` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_cancel_token_is_cancelled(token: *const recuo_cancel_token) -> bool {
    // SAFETY: the caller vouches for NULL or a live handle.
    boundary(|| unsafe { token.as_ref() }.is_some_and(|t| t.0.is_cancelled()))
}

/// The token behind `cancel`, or one that is never cancelled when `cancel` is NULL.
///
/// # Safety
/// `cancel` must be NULL or a live handle.
#[cfg_attr(
    target_family = "wasm",
    allow(dead_code, reason = "only the blocking waits use it")
)]
pub(crate) unsafe fn cancel_token(cancel: *const recuo_cancel_token) -> CancelToken {
    // SAFETY: forwarded from the caller.
    unsafe { cancel.as_ref() }.map_or_else(CancelToken::new, |t| t.0.clone())
}
