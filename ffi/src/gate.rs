//! The gate for C: a regulator, a concurrency limit and a retry budget
//! that every attempt passes — in `recuo_retry` (`recuo_retry_options_set_gate`), in the
//! batch runner, or held by the machine of a program driving it (`recuo_attempts_set_gate`,
//! `recuo_gate_wait`). The gate is the core's (`recuo::Gate`).
// The blocking waits are not in the WebAssembly build; what only they use is unused there.
#![cfg_attr(target_family = "wasm", allow(unused_imports))]

use recuo::{ConcurrencyLimit, Gate, Pass, Regulator, RetryBudget};

use crate::prelude::*;

/// What every attempt passes: a place among the requests in flight (a concurrency limit),
/// **then** a start slot (a regulator) — in that order, so starts stay spaced as the
/// regulator says — and a retry budget that every retry draws on (a first attempt is
/// counted by it). Each part is optional. Backed by a `recuo::Gate`.
///
/// The gate keeps its own references to the parts it is given (`recuo_gate_set_*`): the
/// caller may free its regulator, limit and budget handles right after. Options and batch
/// runs given the gate keep their own reference to the gate as it is then (a later setter
/// does not change them). Functions taking a `const` pointer may run on any number of
/// threads at once; the setters must not run concurrently with another use of the gate.
#[derive(Debug, Clone, Default)]
pub struct recuo_gate(pub(crate) Gate);

/// A passage through a gate, from `recuo_gate_wait`: holds the place in flight until
/// `recuo_pass_release` (its `_free`). Backed by a `recuo::Pass`. Release it as soon as the
/// attempt is over — before any backoff sleep — from any thread.
#[derive(Debug)]
pub struct recuo_pass {
    /// Held for its drop, which gives the place back.
    _pass: Pass,
}

/// A new gate that lets everything through (no regulator, no limit, no budget). Free it with
/// `recuo_gate_free`. NULL only if recuo panicked.
#[no_mangle]
pub extern "C" fn recuo_gate_new() -> *mut recuo_gate {
    boundary(|| Box::into_raw(Box::default()))
}

/// Releases a gate handle (options and batch runs given it keep their own reference).
/// NULL is accepted and ignored.
///
/// # Safety
/// `gate` must be NULL or come from `recuo_gate_new`, not have been freed, and not be in use
/// by another thread.
#[no_mangle]
pub unsafe extern "C" fn recuo_gate_free(gate: *mut recuo_gate) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(gate) })
}

/// The gate's parts: a regulator, a concurrency limit, a retry budget (`None`: none).
type Parts = (
    Option<Regulator>,
    Option<ConcurrencyLimit>,
    Option<RetryBudget>,
);

/// Rebuilds the gate behind `gate` from its parts as `change` sets them.
///
/// # Safety
/// `gate` must be NULL or a live handle not in use by another thread.
unsafe fn with_gate(gate: *mut recuo_gate, change: impl FnOnce(&mut Parts)) -> recuo_status {
    // SAFETY: forwarded from the caller.
    unsafe {
        ptr::with(gate, |g| {
            let mut parts = (
                g.0.regulator().cloned(),
                g.0.limit().cloned(),
                g.0.budget().cloned(),
            );
            change(&mut parts);
            // Each part present is added to a new gate.
            let (regulator, limit, budget) = parts;
            let gate = regulator
                .into_iter()
                .fold(Gate::new(), Gate::with_regulator);
            let gate = limit.into_iter().fold(gate, Gate::with_limit);
            g.0 = budget.into_iter().fold(gate, Gate::with_budget);
        })
    }
}

/// Limits the starts of every attempt through the gate with `regulator` (the gate keeps its
/// own reference: `regulator` may be freed afterwards); NULL removes the regulator. Returns
/// `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT` (for `gate`).
///
/// # Safety
/// `gate` must be NULL or a live handle not in use by another thread; `regulator` NULL or a
/// live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_gate_set_regulator(
    gate: *mut recuo_gate,
    regulator: *const recuo_regulator,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or live handles.
    unsafe { with_gate(gate, |g| g.0 = ptr::shared(regulator).ok()) }
}

/// Limits the requests in flight through the gate with `limit` (the gate keeps its own
/// reference); NULL removes the limit. Returns `RECUO_OK` or `RECUO_ERR_NULL_ARGUMENT` (for
/// `gate`).
///
/// # Safety
/// `gate` must be NULL or a live handle not in use by another thread; `limit` NULL or a live
/// handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_gate_set_limit(
    gate: *mut recuo_gate,
    limit: *const recuo_concurrency_limit,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or live handles.
    unsafe { with_gate(gate, |g| g.1 = ptr::shared(limit).ok()) }
}

/// Makes every retry through the gate draw on `budget`, and counts every first attempt in it
/// (the gate keeps its own reference); NULL removes the budget. Returns `RECUO_OK` or
/// `RECUO_ERR_NULL_ARGUMENT` (for `gate`).
///
/// # Safety
/// `gate` must be NULL or a live handle not in use by another thread; `budget` NULL or a
/// live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_gate_set_budget(
    gate: *mut recuo_gate,
    budget: *const recuo_retry_budget,
) -> recuo_status {
    // SAFETY: the caller vouches for NULL or live handles.
    unsafe { with_gate(gate, |g| g.2 = ptr::shared(budget).ok()) }
}

/// How often, at most, `recuo_attempts_poll_gate` asks a program to look at a full
/// concurrency limit again, in milliseconds.
pub const RECUO_GATE_POLL_MS: u64 = 5;

const _: () = assert!(RECUO_GATE_POLL_MS == recuo::GATE_POLL_MS);

/// Whether passing `gate`, or counting in its budget, asks a remote store (Redis): a
/// program with an event loop then calls `recuo_attempts_poll_gate` (and the other step
/// functions of a machine given this gate) off its loop, on a worker thread. False for NULL.
///
/// # Safety
/// `gate` must be NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn recuo_gate_is_remote(gate: *const recuo_gate) -> bool {
    // SAFETY: the caller vouches for NULL or a live handle.
    boundary(|| unsafe { gate.as_ref() }.is_some_and(|g| g.0.is_remote()))
}

/// Passes the gate for the `RECUO_STEP_ENTER` of a machine that holds it
/// (`recuo_attempts_set_gate`): waits for a place in flight, then for a start slot, at most
/// `timeout_ms` when `has_timeout` (the step's `until_ms` minus now), without touching the
/// budget (the machine counts it). Stores the pass in `*out`; tell the machine with
/// `recuo_attempts_entered(…, true, …)`, make the attempt, then release the pass before any
/// sleep.
///
/// Returns `RECUO_OK`; `RECUO_CANCELLED` (the token was cancelled) or `RECUO_TIMED_OUT` (the
/// time ran out) — nothing held, `*out` untouched: tell the machine
/// `recuo_attempts_entered(…, false, …)`; `RECUO_ERR_IO` (a Redis regulator or limit
/// whose server cannot be used: nothing held; tell the machine `false` too, and report the
/// error); `RECUO_ERR_NULL_ARGUMENT`.
///
/// # Safety
/// `gate` and `cancel` must each be NULL or a live handle; `out` NULL or a writable pointer.
// Blocks the calling thread: not in the WebAssembly build, whose host waits with timers.
#[cfg(not(target_family = "wasm"))]
#[no_mangle]
pub unsafe extern "C" fn recuo_gate_wait(
    gate: *const recuo_gate,
    has_timeout: bool,
    timeout_ms: u64,
    cancel: *const recuo_cancel_token,
    out: *mut *mut recuo_pass,
) -> recuo_status {
    let timeout = has_timeout.then(|| std::time::Duration::from_millis(timeout_ms));
    checked(|| {
        // SAFETY: the caller vouches for NULL or live handles.
        let (g, out, cancel) = unsafe { (ptr::input(gate)?, ptr::out(out)?, cancel_token(cancel)) };
        Ok(match g.0.wait(timeout, &cancel)? {
            // SAFETY: a checked output.
            Some(pass) => unsafe { ptr::store(out, recuo_pass { _pass: pass }) },
            None if cancel.is_cancelled() => RECUO_CANCELLED,
            None => recuo_status::RECUO_TIMED_OUT,
        })
    })
}

/// Leaves the gate: gives the place in flight back (the pass's `_free`). NULL is accepted
/// and ignored. May be called from any thread.
///
/// # Safety
/// `pass` must be NULL or come from `recuo_gate_wait` and not have been released.
#[no_mangle]
pub unsafe extern "C" fn recuo_pass_release(pass: *mut recuo_pass) {
    // SAFETY: forwarded from the caller.
    boundary(|| unsafe { ptr::free(pass) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limit::{
        recuo_concurrency_limit_free, recuo_concurrency_limit_in_flight,
        recuo_concurrency_limit_new,
    };
    use crate::status::recuo_status::RECUO_OK;

    #[test]
    fn the_gate_keeps_its_own_references() {
        let g = recuo_gate_new();
        let mut l = std::ptr::null_mut();
        let mut pass = std::ptr::null_mut();
        // SAFETY: live handles and outputs.
        unsafe {
            assert_eq!(recuo_concurrency_limit_new(1, &mut l), RECUO_OK);
            assert_eq!(recuo_gate_set_limit(g, l), RECUO_OK);
            assert_eq!(
                recuo_gate_wait(g, false, 0, std::ptr::null(), &mut pass),
                RECUO_OK
            );
            assert_eq!(recuo_concurrency_limit_in_flight(l), 1);
            recuo_concurrency_limit_free(l);
            recuo_pass_release(pass);
            recuo_gate_free(g);
        }
    }
}
