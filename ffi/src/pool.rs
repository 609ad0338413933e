//! `recuo_attempt_pool_*`: the shared count of attempts of nested loops.

use recuo::{AttemptPool, LoopPool};

use crate::prelude::*;

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

/// The pool a loop that starts now draws its attempts from, by the one rule every language
/// follows; your program only keeps the answer where it keeps per-context state (a
/// thread-local, the request).
///
/// * `enclosing` (NULL: none): the pool of the context — that of the outermost loop running
///   on this thread (or in this request), if any.
/// * `max_attempts`: the loop's policy's attempts.
/// * `batch_operation`: the loop is one operation of a batch: it owns a pool of its own
///   even inside another loop.
/// * `after_first`: the loop's first attempt was made before its machine
///   (`recuo_attempts_start_after_first`): that attempt counts as drawn.
///
/// Stores in `*pool_out` a new handle (free it with `recuo_attempt_pool_free`): the
/// enclosing pool itself (the same count) when the loop joins it, else a pool of its own
/// of `max_attempts` (`max_attempts - 1` after a first attempt). `*nested` (pass it to
/// `recuo_attempts_set_pool`) says whether the loop's first attempt is already drawn.
/// `*owned` says whether the pool is the loop's own: then make it the context's pool for
/// the loops nested inside, until this loop ends (and put back the one before).
///
/// Returns `RECUO_OK`; `RECUO_ERR_NULL_ARGUMENT` (an output); nothing is written on an
/// error.
///
/// # Safety
/// `enclosing` must be NULL or a live handle; `pool_out`, `nested` and `owned` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn recuo_loop_pool_choose(
    enclosing: *const recuo_attempt_pool,
    max_attempts: u32,
    batch_operation: bool,
    after_first: bool,
    pool_out: *mut *mut recuo_attempt_pool,
    nested: *mut bool,
    owned: *mut bool,
) -> recuo_status {
    checked(|| {
        let (pool_out, nested, owned) = (ptr::out(pool_out)?, ptr::out(nested)?, ptr::out(owned)?);
        // SAFETY: the caller vouches for NULL or a live pool.
        let enclosing = unsafe { enclosing.as_ref() }.map(|p| &p.0);
        let chosen = if after_first {
            LoopPool::after_first(enclosing, max_attempts, batch_operation)
        } else {
            LoopPool::choose(enclosing, max_attempts, batch_operation)
        };
        // SAFETY: checked outputs.
        unsafe {
            nested.write(chosen.nested);
            owned.write(chosen.owned);
            pool_out.write(Box::into_raw(Box::new(recuo_attempt_pool(chosen.pool))));
        }
        Ok(RECUO_OK)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::recuo_status::RECUO_ERR_NULL_ARGUMENT;

    #[test]
    fn a_nested_loop_joins_the_enclosing_pool() {
        let outer = recuo_attempt_pool_new(3);
        let (mut pool, mut nested, mut owned) = (std::ptr::null_mut(), false, false);
        // SAFETY: live handles and outputs.
        unsafe {
            let rc =
                recuo_loop_pool_choose(outer, 5, false, false, &mut pool, &mut nested, &mut owned);
            assert_eq!(rc, RECUO_OK);
            assert!(nested && !owned);
            assert!((*outer).0.try_take());
            assert_eq!(recuo_attempt_pool_remaining(pool), 2, "the same count");
            recuo_attempt_pool_free(pool);
            let rc =
                recuo_loop_pool_choose(outer, 5, true, true, &mut pool, &mut nested, &mut owned);
            assert_eq!(rc, RECUO_OK);
            assert!(nested && owned);
            assert_eq!(recuo_attempt_pool_remaining(pool), 4);
            recuo_attempt_pool_free(pool);
            let rc = recuo_loop_pool_choose(
                outer,
                5,
                false,
                false,
                &mut pool,
                std::ptr::null_mut(),
                &mut owned,
            );
            assert_eq!(rc, RECUO_ERR_NULL_ARGUMENT);
            recuo_attempt_pool_free(outer);
        }
    }
}
